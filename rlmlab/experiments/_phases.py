"""What a learning experiment adds to a run: the judge that decides what the bank learns, task kinds, and the
frozen test phase's task file.

A run has a ``stream`` phase (the suite, in order; conditions that learn write memory as they go) and, with a
test suite, a ``test`` phase after it: the test file's tasks run against the bank as the stream left it, with
nothing written (:class:`rlmlab.learning.ReasoningBankLoop` with ``frozen=True``). Rows say which (``phase``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlmlab._paths import PROJECT_ROOT
from rlmlab.errors import ConfigError
from rlmlab.memory import MemoryTask, Verdict

__all__ = ["EXPERIMENT_PHASES", "SuiteJudge", "make_judge", "resolve_task_file", "load_test_suite"]

EXPERIMENT_PHASES = ("stream", "test")


class SuiteJudge:
    """One judge per suite (``{"code": "oracle", "ontology": "constraints", "arith": "vote"}``), by the task's
    ``meta["suite"]``; a suite not named gets ``default``. "reference" is the task's own check (the answer key).
    Judges are built once, when the SuiteJudge is."""

    def __init__(self, names: dict[str, str], default: str = "reference", lm: Any = None):
        from rlmlab.learning import JUDGES

        self.names, self.default, self.lm = dict(names), default, lm
        self._judges = {suite: JUDGES.make(name, **({"lm": lm} if JUDGES.accepts(name, "lm") else {}))
                        for suite, name in {**self.names, "": default}.items() if name != "reference"}

    def for_task(self, task: MemoryTask) -> Any:
        """The judge of ``task``'s suite (the loop resolves it per task: a vote judges a task's rollouts together)."""
        from rlmlab.learning import judge_for

        suite = str(task.meta.get("suite"))
        return self._judges.get(suite if suite in self.names else "") or judge_for(task, lm=self.lm)

    def judge(self, task: MemoryTask, trajectory: Any) -> Verdict:
        return self.for_task(task).judge(task, trajectory)


def make_judge(spec: Any, lm: Any = None) -> SuiteJudge | None:
    """The loop's judge for a condition's ``judge`` key: None for "reference" (each task's own check), else a
    :class:`SuiteJudge` (a single name applies to every suite)."""
    if spec in (None, "reference"):
        return None
    return SuiteJudge(spec, lm=lm) if isinstance(spec, dict) else SuiteJudge({}, default=spec, lm=lm)


def resolve_task_file(path: str | Path) -> Path:
    """A task file named in a config or on the command line: as given if it exists, else under the project root.
    ConfigError naming the path when neither exists."""
    p = Path(path)
    if p.is_file():
        return p
    if not p.is_absolute() and (PROJECT_ROOT / p).is_file():
        return PROJECT_ROOT / p
    raise ConfigError(f"test suite: {path}: no such task file (looked in . and {PROJECT_ROOT})")


def load_test_suite(path: str | Path, limit: int | None = None) -> list[MemoryTask]:
    """The test phase's tasks: every task of the file (or its first ``limit``), in file order, with their ids."""
    from rlmlab.experiments._suites import load_suite

    tasks = load_suite(resolve_task_file(path))  # resolved here so a missing file names the test suite
    return tasks if limit is None else tasks[:limit]
