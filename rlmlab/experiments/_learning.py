"""The figures of a learning experiment (E14): the online learning curve, the frozen test split's pass@1 with its
Wilson interval, exploration's pass@N per task kind, seconds per task, and what the bank holds after the stream.

All of them are computed from results rows (see the runner's ``_rows``) and the condition's memory file, so a
finished run can be summarised again without running anything.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from rlmlab._figures import wilson_interval
from rlmlab.text import plural

__all__ = ["CURVE_WINDOW", "learning_curve", "test_figures", "explore_figures", "seconds_per_task", "bank_figures",
           "judge_agreement", "learning_figures", "learning_line", "learning_table", "fifths", "plot_learning"]

CURVE_WINDOW = 20  # tasks per point of the learning curve (the "pass rate per 20 tasks of the stream")


def _round(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def _best(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The selected rollout of each task, in stream order."""
    return [r for r in rows if r.get("best")]


def learning_curve(rows: list[dict[str, Any]], window: int = CURVE_WINDOW) -> list[float]:
    """Pass rate of each consecutive ``window`` of stream tasks (the last window may be shorter), in order."""
    best = _best(rows)
    return [round(sum(bool(r["success"]) for r in best[i:i + window]) / len(best[i:i + window]), 3)
            for i in range(0, len(best), window)]


def test_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The frozen test phase: tasks, passes, pass@1 and its 95% Wilson interval, pass rate per kind."""
    best = _best(rows)
    passed = sum(bool(r["success"]) for r in best)
    lo, hi = wilson_interval(passed, len(best))
    kinds: dict[str, list[bool]] = defaultdict(list)
    for r in best:
        kinds[str(r.get("kind") or r.get("suite"))].append(bool(r["success"]))
    return {"tasks": len(best), "passed": passed, "pass_at_1": _round(passed / len(best)) if best else None,
            "ci_low": round(lo, 3), "ci_high": round(hi, 3),
            "by_kind": {k: {"tasks": len(v), "passed": sum(v)} for k, v in sorted(kinds.items())}}


def explore_figures(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Exploration's yield per task kind (None when the condition did not explore): tasks, ``accepted_at_n`` (share
    of tasks where the judge accepted a sample within the budget), ``pass_at_n`` (share where a sample was right by
    the answer key), ``precision`` (accepted samples that were right) and the mean samples run per task."""
    if not rows or max((r.get("explore") or 1) for r in rows) <= 1:
        return None
    tasks: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        tasks[r["task_id"]].append(r)
    kinds: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
    for group in tasks.values():
        kinds[str(group[0].get("kind") or group[0].get("suite"))].append(group)
    out = {}
    for kind, groups in sorted(kinds.items()):
        accepted = [r for g in groups for r in g if r.get("accepted", r["success"])]
        out[kind] = {
            "tasks": len(groups), "budget": max(r.get("explore") or 1 for g in groups for r in g),
            "accepted_at_n": _round(sum(any(r.get("accepted", r["success"]) for r in g) for g in groups) / len(groups)),
            "pass_at_n": _round(sum(any(r["success"] for r in g) for g in groups) / len(groups)),
            "precision": _round(sum(bool(r["success"]) for r in accepted) / len(accepted)) if accepted else None,
            "mean_samples": _round(sum(len(g) for g in groups) / len(groups), 2)}
    return out


def seconds_per_task(rows: list[dict[str, Any]]) -> float | None:
    """Agent seconds per task, every rollout of a task counted (exploration and rollouts cost what they run)."""
    n = len({r["task_id"] for r in rows})
    return round(sum(r.get("elapsed_ms") or 0 for r in rows) / 1000 / n, 2) if n else None


def judge_agreement(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Precision and recall of the judge that decided learning (``accepted``) against the answer key (``success``),
    over every rollout; None when the two are the same judge (no row has a separate decision)."""
    pairs = [(bool(r["accepted"]), bool(r["success"])) for r in rows if "accepted" in r and
             r.get("judge_used") != r.get("judge")]
    if not pairs:
        return None
    tp = sum(a and s for a, s in pairs)
    acc, right = sum(a for a, _ in pairs), sum(s for _, s in pairs)
    return {"rollouts": len(pairs), "precision": _round(tp / acc) if acc else None,
            "recall": _round(tp / right) if right else None}


def learning_figures(stream: list[dict[str, Any]], test: list[dict[str, Any]]) -> dict[str, Any]:
    """The learning figures of one condition's stream and test rows (see the module docstring)."""
    out: dict[str, Any] = {"learning_curve": learning_curve(stream), "seconds_per_task": seconds_per_task(stream),
                           "learning_curve_tasks": [bool(r["success"]) for r in _best(stream)]}
    if test:
        out["test"] = test_figures(test)
    explored = explore_figures(stream)
    if explored is not None:
        out["explore"] = explored
    agreement = judge_agreement(stream)
    if agreement is not None:
        out["judge_agreement"] = agreement
    return out


def bank_figures(db: str | Path, top: int = 10) -> dict[str, Any]:
    """What a condition's bank holds: active items, how many carry a code template (and how many of those were
    learnt, not imported from a pack), the share of templates that repeat another (normalised), the
    consolidation's duplicate rate (duplicate or discarded extractions), templates admitted and rejected by
    the extractor's replay check (from its "extract" events; 0 when it logs none), and the ``top`` most used
    templates with their uses and wins."""
    from rlmlab.learning import memory_health
    from rlmlab.memory import MemoryStore, normalise_template

    with MemoryStore(db) as store:
        items = store.items()
        # success templates only: a guardrail (failure item) carries the code that misfired, not one to copy
        templates = [it for it in items if it.template and it.polarity == "success"]
        guardrails = sum(1 for it in items if it.template and it.polarity != "success")
        admitted = rejected = 0
        for event in store.events(kind="extract"):
            for item in event.payload.get("items") or []:
                replay = (item.get("meta") or {}).get("replay") if isinstance(item, dict) else None
                if isinstance(replay, dict) and "admitted" in replay:
                    admitted += bool(replay["admitted"])
                    rejected += not replay["admitted"]
            report = event.payload.get("admission") or {}
            admitted += int(report.get("admitted") or 0)
            rejected += int(report.get("rejected") or 0)
        health = memory_health(store)
    used = sorted(templates, key=lambda it: (-it.uses, -it.wins, it.id))[:top]
    distinct = {normalise_template(it.template) for it in templates}
    learnt = [it for it in templates if not str(it.source or "").startswith("pack")]
    replayed = [bool(((getattr(it, "meta", None) or {}).get("admission") or {}).get("replay")) for it in learnt]
    return {"active": len(items), "templates": len(templates),
            # active templates that repeat another's normalised text: what consolidation should leave at 0
            "duplicate_templates": _round((len(templates) - len(distinct)) / len(templates)) if templates else None,
            "templates_learnt": len(learnt), "guardrails": guardrails,
            # learnt templates whose admission records a passing replay (the extractor admits none without one)
            "replay_passed": _round(sum(replayed) / len(replayed)) if replayed else None,
            "duplicate_rate": _round(health["duplicate_rate"]), "admitted": admitted, "rejected": rejected,
            "top_templates": [{"id": it.id, "title": it.title, "uses": it.uses, "wins": it.wins,
                               "template": it.template} for it in used]}


def learning_line(condition: str, summary: dict[str, Any]) -> str:
    """One condition's learning figures as a line: the curve (pass rate per window of the stream, in %), the test
    split's pass@1 with its interval, the bank, exploration and seconds per task."""
    parts = [f"{condition}: curve " + " ".join(f"{round(100 * x)}" for x in summary.get("learning_curve") or [])
             + f" (% per {CURVE_WINDOW})"]
    test = summary.get("test")
    if test and test.get("tasks"):
        parts.append(f"test {test['passed']}/{test['tasks']} = {round(100 * test['pass_at_1'])}% "
                     f"[{round(100 * test['ci_low'])}-{round(100 * test['ci_high'])}]")
    bank = summary.get("bank")
    if bank:
        parts.append(f"bank {plural(bank['active'], 'item')}, {plural(bank['templates'], 'template')} "
                     f"({bank['admitted']} admitted, {bank['rejected']} rejected), duplicate templates "
                     f"{'-' if bank.get('duplicate_templates') is None else round(100 * bank['duplicate_templates'])}%")
    for kind, e in (summary.get("explore") or {}).items():
        parts.append(f"explore {kind} pass@{e['budget']} {round(100 * e['pass_at_n'])}%")
    if summary.get("seconds_per_task") is not None:
        parts.append(f"{summary['seconds_per_task']} s/task")
    return "; ".join(parts)


def learning_table(summaries: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Header and rows, one per (suite, condition), of the E14 figures: stream pass rate and its first and last
    fifth, test pass@1 with its interval, templates in the bank (admitted/rejected, duplicates) and seconds per
    task. ``summaries`` maps a suite to its run's summary (``summary.json``)."""
    header = ["suite", "condition", "stream", "first 1/5", "last 1/5", "test pass@1", "95% CI", "templates",
              "admitted/rejected", "dup", "s/task"]
    rows = []
    for suite, summary in summaries.items():
        for cond, s in summary.items():
            first, last = fifths(s.get("learning_curve_tasks") or [])
            test, bank = s.get("test") or {}, s.get("bank") or {}
            pct = lambda x: "-" if x is None else f"{round(100 * x)}%"  # noqa: E731
            rows.append([suite, cond, pct(s.get("pass_rate")), pct(first), pct(last),
                         f"{test['passed']}/{test['tasks']} = {pct(test['pass_at_1'])}" if test.get("tasks") else "-",
                         f"{pct(test.get('ci_low'))}-{pct(test.get('ci_high'))}" if test.get("tasks") else "-",
                         str(bank.get("templates", "-")), f"{bank.get('admitted', '-')}/{bank.get('rejected', '-')}",
                         pct(bank.get("duplicate_templates")), str(s.get("seconds_per_task", "-"))])
    return header, rows


def fifths(outcomes: list[bool]) -> tuple[float | None, float | None]:
    """Pass rate of the first and of the last fifth of a stream's outcomes (in order); None for no tasks."""
    n = max(1, len(outcomes) // 5)
    if not outcomes:
        return None, None
    return sum(outcomes[:n]) / n, sum(outcomes[-n:]) / n


def plot_learning(run_dirs: dict[str, str | Path], save_to: str | Path | None = None) -> Any:
    """One panel per suite: each condition's learning curve (pass rate per :data:`CURVE_WINDOW` stream tasks)
    and, right of it, its frozen test pass@1 with the 95% Wilson interval. Saved as plots/learning.png."""
    import json

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(run_dirs), figsize=(5.5 * len(run_dirs), 3.8), squeeze=False)
    for ax, (suite, run_dir) in zip(axes[0], run_dirs.items()):
        summary = json.loads((Path(run_dir) / "summary.json").read_text(encoding="utf-8"))
        for i, (cond, s) in enumerate(summary.items()):
            curve = s.get("learning_curve") or []
            xs = [CURVE_WINDOW * (j + 1) for j in range(len(curve))]
            line, = ax.plot(xs, curve, marker="o", label=cond)
            test = s.get("test")
            if test and test.get("tasks"):
                x = CURVE_WINDOW * (len(curve) + 1) + i * 2
                p = test["pass_at_1"]
                ax.errorbar([x], [p], yerr=[[p - test["ci_low"]], [test["ci_high"] - p]], fmt="s",
                            color=line.get_color(), capsize=3)
        ax.set(title=f"{suite}: stream (per {CURVE_WINDOW} tasks), then test", xlabel="stream tasks", ylim=(-0.02, 1.02),
               ylabel="pass rate")
        if ax.lines:
            ax.legend(fontsize=7)
    fig.tight_layout()
    if save_to is not None:
        out = Path(save_to) / "plots"
        out.mkdir(parents=True, exist_ok=True)
        fig.savefig(out / "learning.png", dpi=100, bbox_inches="tight")
    return fig
