"""What an experiment run's results say: rows read back from results.jsonl and one summary per condition
(success, pass@1, maj@N, pass@N, tokens, time), as a dict and as a rich table."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from rlmlab._files import read_jsonl
from rlmlab.experiments._learning import learning_figures
from rlmlab.learning import majority

__all__ = ["read_results", "summarise", "summary_table", "summary_columns"]


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a results file; a last line cut short by a kill is skipped (its task runs again)."""
    path = Path(path)
    if not path.exists():
        return []
    return [row for _, row in read_jsonl(path, torn_tail=True)]


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def _per_task(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A condition's rows grouped by task (in first-seen order), each group in rollout order."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["task_id"]].append(r)
    return [sorted(g, key=lambda r: r["rollout"]) for g in groups.values()]


def _maj_success(task_rows: list[dict[str, Any]]) -> float:
    """Success of the rollout a vote picks: the recorded pick of a vote condition, else a vote over the answers."""
    if task_rows[0].get("selected_by") == "vote":
        return float(next(r for r in task_rows if r["best"])["success"])
    return float(task_rows[majority([r["answer"] for r in task_rows])]["success"])


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per condition: rows, tasks, pass rate (the selected rollout per task), convergence, mean efficiency/leakage.

    Over rollouts: ``pass_at_1`` (mean success of all rollouts), ``maj_at_n`` (success of the majority answer
    per task, averaged over tasks; the pass rate of a vote condition), ``pass_at_n`` (any rollout right per
    task: an upper bound no selection can beat), ``rollouts_per_task`` (N), ``mean_rollouts_run`` (below N when a
    vote stopped once settled, ``vote_stop``). ``mean_elapsed_ms`` is the time of a
    task, its rollouts' times added; the other ``mean_*`` figures are means over rows (rollouts).
    ``mean_salvaged`` (off-format replies per rollout) and ``golden_yield`` (share of code-suite rollouts the
    oracles accept as golden records) are None for rows written before they were recorded. ``errors`` counts rows whose run ended in an
    error (``first_error`` quotes one); ``all_failed`` is True when every row did (e.g. every LM call failed), so
    the condition's other figures measure nothing. ``undecided`` counts the tasks whose judge could not decide
    (``Cannot judge``: not a pass, and not a failure either) and ``undecided_share`` is their share.

    Rows of a run with phases (``phase`` "stream" or "test") add :func:`learning_figures`: the figures above are
    the stream's, and ``test`` holds the frozen test phase's pass@1 with its Wilson interval.
    """
    out: dict[str, Any] = {}
    for cond in dict.fromkeys(r["condition"] for r in rows):
        everything = [r for r in rows if r["condition"] == cond]
        mine = [r for r in everything if r.get("phase", "stream") == "stream"] or everything
        best = [r for r in mine if r["best"]]
        tasks = _per_task(mine)
        out[cond] = {
            "rows": len(mine), "tasks": len(best),
            "errors": sum(1 for r in mine if r.get("error")),
            "all_failed": bool(mine) and all(r.get("error") and not r.get("converged") for r in mine),
            "first_error": next((r["error"] for r in mine if r.get("error")), None),
            "pass_rate": _mean([float(r["success"]) for r in best]),
            # the judge could not decide (an abstention, never a pass): counted apart from the failures
            "undecided": sum(1 for r in best if r.get("undecided")),
            "undecided_share": _mean([float(bool(r.get("undecided"))) for r in best]),
            "convergence": _mean([float(r["converged"]) for r in mine]),
            "fallback": _mean([float(r["fallback"]) for r in mine if r.get("fallback") is not None]),
            **{f"mean_{k}": _mean([float(r[k]) for r in mine]) for k in (
                "input_tokens", "output_tokens", "lm_calls", "iterations", "tool_calls", "stdout_chars",
                "variables_info_chars", "large_returns", "sub_llm_calls", "prompt_chars_mean", "context_chars")},
            # what a task costs: its rollouts' times added (a vote's five rollouts are one task's time)
            "mean_elapsed_ms": _mean([float(sum(r["elapsed_ms"] for r in g)) for g in tasks]),
            "rollouts_per_task": max(len(g) for g in tasks),
            # fewer than N when a vote stops once settled (vote_stop: settled)
            "mean_rollouts_run": _mean([float(len(g)) for g in tasks]),
            "vote_stop": mine[0].get("vote_stop", "all") if mine[0].get("selected_by") == "vote" else None,
            "selected_by": mine[0].get("selected_by"),
            "pass_at_1": _mean([float(r["success"]) for r in mine]),
            "maj_at_n": _mean([_maj_success(g) for g in tasks]),
            "pass_at_n": _mean([float(any(r["success"] for r in g)) for g in tasks]),
            "mean_salvaged": _mean([float(r["salvaged"]) for r in mine if r.get("salvaged") is not None]),
            "golden_yield": _mean([float(r["golden"]) for r in mine if r.get("golden") is not None]),
            # what the runs used (the metrics' value overrides the condition's): "free" where the LM cannot constrain
            "decoding": ",".join(sorted({str(r["decoding"]) for r in mine if r.get("decoding")})) or None,
            "decoding_asked": mine[0].get("decoding_asked", mine[0].get("decoding")),
        }
        if "phase" in mine[0]:
            out[cond].update(learning_figures(mine, [r for r in everything if r.get("phase") == "test"]))
    return out


# (summary key, label) of the columns a table shows only when its runs have them (see summary_columns).
_ROLLOUT_COLUMNS = [("rollouts_per_task", "N"), ("pass_at_1", "pass@1"), ("maj_at_n", "maj@N"),
                    ("pass_at_n", "pass@N")]
_RECORDED_COLUMNS = [("mean_salvaged", "off-format"), ("golden_yield", "golden (code)")]


def summary_columns(summaries: Any) -> list[tuple[str, str]]:
    """The optional columns for these condition summaries: pass@1/maj@N/pass@N when some condition ran more
    than one rollout per task (with one they all equal the pass rate), and off-format and golden-yield columns
    when some condition recorded them. Runs written before these existed get none, so their tables are as before.
    """
    summaries = list(summaries)
    cols = list(_ROLLOUT_COLUMNS) if any((s.get("rollouts_per_task") or 1) > 1 for s in summaries) else []
    return cols + [(k, label) for k, label in _RECORDED_COLUMNS if any(s.get(k) is not None for s in summaries)]


def summary_table(summary: dict[str, Any], title: str = "") -> Any:
    """The per-condition summary as a rich table, with rlmlab._figures' labels and units (33%, 12.3k, 4.2 s)."""
    from rich.table import Table

    from rlmlab._figures import figure, summary_label

    keys = ["pass_rate", "convergence", "mean_input_tokens", "mean_iterations", "mean_tool_calls",
            "mean_prompt_chars_mean", "mean_large_returns", "mean_context_chars", "mean_elapsed_ms"]
    keys[1:1] = [k for k, _ in summary_columns(summary.values())]
    table = Table(title=title, title_justify="left")
    table.add_column("condition", no_wrap=True)  # never cut to "grammar_te…": the headers fold first
    table.add_column("tasks", justify="right")
    for k in keys:
        table.add_column(summary_label(k), justify="right", overflow="fold")
    for cond, s in summary.items():
        table.add_row(cond, str(s["tasks"]), *(figure(k).format(s.get(k)) for k in keys))
    return table
