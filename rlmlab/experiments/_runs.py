"""Reading a finished experiment run: its task rows, and the trajectory behind each row.

"Run directory" means two things in rlmlab: an *experiment* run (``runs/<run-id>/`` with ``results.jsonl`` and
``trajectories/``) and an *agent* run (``<dir>/<trajectory-id>/`` with ``trajectory.jsonl`` and
``lm_calls.jsonl``). These functions go from the first to the second: a task id (and a condition and rollout,
when a run has several) names one row, and the row names its trajectory directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlmlab.experiments._runner import RESULTS, read_results

__all__ = ["is_experiment_run", "run_rows", "find_row", "row_trajectory_dir", "task_runs_table", "outcome",
           "TASK_COLUMNS", "condition_stats", "time_table"]


def is_experiment_run(path: str | Path) -> bool:
    """True for a directory holding an experiment's ``results.jsonl``."""
    return (Path(path) / RESULTS).is_file()


def run_rows(run_dir: str | Path) -> list[dict[str, Any]]:
    """The rows of an experiment run (one per condition x task x rollout); FileNotFoundError when ``run_dir``
    has no results file."""
    path = Path(run_dir) / RESULTS
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no results (is {run_dir} an experiment run directory?)")
    return read_results(path)


def find_row(run_dir: str | Path, task: str, condition: str | None = None,
             rollout: int | None = None) -> dict[str, Any]:
    """The row of ``task`` in an experiment run: under ``condition`` (needed when several conditions ran the
    task), rollout ``rollout`` (default: the selected one). ValueError names what is there when no row, or more
    than one, fits."""
    rows = run_rows(run_dir)
    mine = [r for r in rows if r["task_id"] == task]
    if not mine:
        tasks = list(dict.fromkeys(r["task_id"] for r in rows))
        shown = ", ".join(tasks[:8]) + (f", ... ({len(tasks)} tasks)" if len(tasks) > 8 else "")
        raise ValueError(f"no task {task!r} in {run_dir}; its tasks: {shown or 'none yet'}")
    conditions = list(dict.fromkeys(r["condition"] for r in mine))
    if condition is not None:
        mine = [r for r in mine if r["condition"] == condition]
        if not mine:
            raise ValueError(f"task {task!r} did not run under condition {condition!r}; it ran under "
                             f"{', '.join(conditions)}")
    elif len(conditions) > 1:
        raise ValueError(f"task {task!r} ran under {len(conditions)} conditions ({', '.join(conditions)}); "
                         "say which with condition=")
    if rollout is None:
        return next((r for r in mine if r.get("best")), mine[0])
    for r in mine:
        if r.get("rollout") == rollout:
            return r
    raise ValueError(f"task {task!r} has rollouts {sorted(r.get('rollout') for r in mine)}, not {rollout}")


def row_trajectory_dir(run_dir: str | Path, row: dict[str, Any]) -> Path:
    """The agent-run directory of a results row: ``<run_dir>/trajectories/<trajectory_id>``."""
    return Path(run_dir) / "trajectories" / row["trajectory_id"]


# (row field, figure key) of the per-task table: what a run browser and `rlmlab experiment show` list per row.
TASK_COLUMNS = [("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens"),
                ("iterations", "iterations"), ("lm_calls", "lm_calls"), ("elapsed_ms", "elapsed_ms")]


def task_runs_table(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Header and formatted cells of the per-task table (condition, task, rollout, pass, figures, error)."""
    from rlmlab._figures import FIGURES

    header = ["condition", "task", "rollout", "pass"] + [FIGURES[k].heading for _, k in TASK_COLUMNS] + ["error"]
    cells = []
    for r in rows:
        cells.append([r["condition"], r["task_id"], str(r.get("rollout", 0)) + ("*" if r.get("best") else ""),
                      outcome(r)] + [FIGURES[k].format(r.get(field)) for field, k in TASK_COLUMNS]
                     + [r.get("error") or ""])
    return header, cells


def outcome(row: dict[str, Any]) -> str:
    """"pass", "fail" or "error" (the run ended in an error) for a results row."""
    if row.get("error") and not row.get("success"):
        return "error"
    return "pass" if row.get("success") else "fail"


def condition_stats(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per condition, over its selected rows (one per task): ``tasks``, ``passed``, ``errors``, ``pass_rate``
    and its 95% Wilson interval ``ci`` (low, high), mean prompt and completion tokens sent and mean time (ms)."""
    from rlmlab._figures import wilson_interval

    out: dict[str, dict[str, Any]] = {}
    for cond in dict.fromkeys(r["condition"] for r in rows):
        best = [r for r in rows if r["condition"] == cond and r.get("best", True)]
        n, k = len(best), sum(1 for r in best if r.get("success"))

        def mean(key: str) -> float | None:
            values = [float(r[key]) for r in best if r.get(key) is not None]
            return sum(values) / len(values) if values else None

        out[cond] = {"tasks": n, "passed": k, "errors": sum(1 for r in best if outcome(r) == "error"),
                     "pass_rate": k / n if n else None, "ci": wilson_interval(k, n),
                     "input_tokens": mean("input_tokens"), "output_tokens": mean("output_tokens"),
                     "elapsed_ms": mean("elapsed_ms")}
    return out


def time_table(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Where each condition's time went, per task (its rollouts summed), in seconds: the parts of
    :class:`rlmlab.executors.TimeBreakdown`, then the prompt tokens served from llama.cpp's prefix cache / sent.
    Rows written before the breakdown was kept are left out; ([], []) when none has one."""
    from collections import defaultdict

    from rlmlab.executors import TIME_PARTS

    per_task: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    for r in rows:
        t = r.get("timing")
        if not t:
            continue
        acc = per_task[r["condition"]].setdefault(r["task_id"], defaultdict(float))
        for k in ("wall_ms", *TIME_PARTS, "prompt_tokens", "cached_tokens"):
            acc[k] += float(t.get(k) or 0)
    if not per_task:
        return [], []
    header = ["condition", "tasks", "wall s / task", *[f"{label} s" for label in TIME_PARTS.values()], "cached share"]
    out = []
    for cond, tasks in per_task.items():
        n = len(tasks)

        def mean_s(key: str) -> str:
            return f"{sum(t[key] for t in tasks.values()) / n / 1000:.2f}"

        sent = sum(t["prompt_tokens"] for t in tasks.values())
        share = f"{100 * sum(t['cached_tokens'] for t in tasks.values()) / sent:.0f}%" if sent else "-"
        out.append([cond, str(n), mean_s("wall_ms"), *[mean_s(k) for k in TIME_PARTS], share])
    return header, out
