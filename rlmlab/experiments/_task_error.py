"""One task of an experiment that raises is that task's failed row, not the end of the experiment."""

from __future__ import annotations

from typing import Any

from rlmlab.errors import ConfigError
from rlmlab.learning import TaskOutcome
from rlmlab.memory import MemoryTask

__all__ = ["task_or_error"]


def task_or_error(loop: Any, task: MemoryTask, cond: Any, run_id: str, rollout: int | None = None) -> TaskOutcome:
    """``loop.run_task(task)``; an exception of this task (its step space, its context, a bug it meets) is its
    failed outcome with the error, so the other tasks still run. A ConfigError (the experiment's set-up) still
    ends the run."""
    try:
        return loop.run_task(task, rollout=rollout)
    except ConfigError:  # the experiment's own set-up is wrong: every task would fail the same way
        raise
    except Exception as exc:  # noqa: BLE001 - recorded in the task's row; Ctrl-C (not an Exception) still stops
        error = f"{type(exc).__name__}: {exc}"
        verdict = {"success": False, "score": 0.0, "judge": "error", "rationale": f"the task failed: {error}",
                   "confidence": 1.0}
        return TaskOutcome(run_id=run_id, task_id=task.id, domain=task.domain, mode=cond.mode,
                           trajectory_ids=[f"{task.id}-error-{rollout or 0}"], answers=[None], verdicts=[verdict], best=0,
                           context_chars=0, injected=[], rollouts=[{"error": error, "iterations": 0,
                                                                    "input_tokens": 0, "output_tokens": 0,
                                                                    "elapsed_ms": 0}], error=error)
