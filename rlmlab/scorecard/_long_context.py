"""E15, the long-context study: the base model reading the context (cut to its window) against RLM at depth 1 and 2,
at context sizes doubling from half the window, on the generated long-context suites (needle, aggregate, twohop).

:func:`long_context_study` generates each (suite, size) task file (seeded, answers verified when written), runs
E15's conditions on it, and writes ``e15.json``: per suite, size and condition the pass rate with its Wilson
interval, prompt and completion tokens per task (the whole call tree), the largest prompt of one main-model call
(the handle invariant: it should not grow with the context), seconds and cost per task, and the paired
differences of RLM against the base model and of depth 2 against depth 1 (the scorecard's statistics).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from rlmlab.scorecard._stats import paired_binary, wilson
from rlmlab.text import plural

__all__ = ["long_context_study", "LongContextRow", "study_sizes", "plot_long_context", "long_context_markdown", "E15_FILE"]

E15_FILE = "e15.json"
_PAIRS = (("rlm_d1", "direct"), ("rlm_d2", "direct"), ("rlm_d2", "rlm_d1"))


@dataclass
class LongContextRow:
    """One (suite, size, condition) cell of E15."""

    suite: str
    size_tokens: int
    condition: str
    n: int
    passed: int
    undecided: int
    pass_rate: float
    ci_low: float
    ci_high: float
    prompt_tokens: float  # per task, every LM call of the tree
    completion_tokens: float
    max_prompt_tokens: int  # the largest prompt of one call of the run's own model at depth 0
    seconds: float  # per task
    cost: float | None  # dollars per task from litellm's table (0 for local models); None: some call unpriced
    errors: int
    outcomes: list[bool] = field(default_factory=list)  # per task, in task order (for the paired differences)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def study_sizes(window: int, largest: int) -> list[int]:
    """Sizes doubling from half the window up to ``largest`` tokens (``largest`` itself last)."""
    sizes, size = [], max(1000, window // 2)
    while size < largest:
        sizes.append(size)
        size *= 2
    return [*sizes, largest]


def long_context_study(*, lm: str = "local", sizes: Sequence[int] = (4096,), n: int = 5,
                       suites: Sequence[str] = ("needle",), conditions: Sequence[str] | None = None,
                       max_depth: int = 2, seed: int = 0, out: str | Path = "runs/e15", max_iters: int | None = None,
                       lm_options: dict[str, Any] | None = None,
                       progress: Callable[[str], None] | None = print) -> dict[str, Any]:
    """Run E15 and write ``<out>/e15.json`` (returned as a dict): for each suite and size, ``n`` seeded tasks and
    each condition (default: direct, rlm_d1 and, with ``max_depth`` >= 2, rlm_d2)."""
    from rlmlab.experiments import read_results, run_experiment
    from rlmlab.taskgen import generate_tasks, write_tasks

    out = Path(out)
    conds = list(conditions or (["direct", "rlm_d1"] + (["rlm_d2"] if max_depth >= 2 else [])))
    rows: list[LongContextRow] = []
    runs: list[str] = []
    started = time.perf_counter()
    for suite in suites:
        for size in sizes:
            where = out / "tasks" / f"{suite}-{size}"
            made = generate_tasks(suite, n=n, seed=seed, size_tokens=size, context_dir=where)
            task_file = write_tasks(made.train, where / f"{suite}.jsonl") or where / f"{suite}.jsonl"
            if progress:
                progress(f"E15 {suite} at {size:,} tokens: {plural(len(made.train), 'task')}; "
                         f"running {', '.join(conds)}")
            result = run_experiment("E15", suite=str(task_file), tasks=len(made.train), conditions=conds, lm=lm,
                                    lm_options=lm_options, runs_dir=out / "runs", max_iters=max_iters,
                                    progress=False)
            runs.append(str(result.run_dir))
            table = read_results(result.run_dir / "results.jsonl")
            for cond in conds:
                mine = sorted((r for r in table if r["condition"] == cond), key=lambda r: r["task_id"])
                rows.append(_row(suite, size, cond, mine, result.run_dir))
    doc = {"experiment": "E15", "lm": lm, "sizes": list(sizes), "n": n, "suites": list(suites), "seed": seed,
           "conditions": conds, "seconds": round(time.perf_counter() - started, 1), "runs": runs,
           "rows": [r.to_dict() for r in rows], "comparisons": _comparisons(rows)}
    out.mkdir(parents=True, exist_ok=True)
    (out / E15_FILE).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


def _row(suite: str, size: int, cond: str, rows: list[dict[str, Any]], run_dir: Path) -> LongContextRow:
    from rlmlab.experiments import row_trajectory_dir

    n = len(rows)
    passed = sum(bool(r.get("success")) for r in rows)
    low, high = wilson(passed, n) if n else (0.0, 0.0)
    biggest, costs = 0, []
    for r in rows:
        calls = _calls_of(row_trajectory_dir(run_dir, r))
        biggest = max([biggest, *(c.input_tokens for c in calls if c.depth == 0 and c.role == "main")])
        costs.append(_cost(calls))
    per = (lambda key: sum(float(r.get(key) or 0) for r in rows) / n) if n else (lambda key: 0.0)
    return LongContextRow(
        suite, size, cond, n, passed, sum(bool(r.get("undecided")) for r in rows), passed / n if n else 0.0,
        low, high, per("input_tokens"), per("output_tokens"), biggest, per("elapsed_ms") / 1000,
        None if any(c is None for c in costs) else (sum(costs) / n if n else 0.0),
        sum(bool(r.get("error")) for r in rows), [bool(r.get("success")) for r in rows])


def _calls_of(traj_dir: Path | None) -> list[Any]:
    from rlmlab.lm import CALLS_FILE, read_calls

    if traj_dir is None:
        return []
    found = sorted(Path(traj_dir).rglob(CALLS_FILE)) if Path(traj_dir).is_dir() else []
    return [c for f in found for c in read_calls(f)]


def _cost(calls: list[Any]) -> float | None:
    from rlmlab.executors import call_cost

    prices = [call_cost(c) for c in calls]
    return None if any(p is None for p in prices) else sum(prices)


def _comparisons(rows: list[LongContextRow]) -> list[dict[str, Any]]:
    """Paired pass/fail differences per suite and size: each RLM arm against the base model, depth 2 against 1."""
    by = {(r.suite, r.size_tokens, r.condition): r for r in rows}
    out = []
    for suite, size in dict.fromkeys((r.suite, r.size_tokens) for r in rows):
        for a, b in _PAIRS:
            ra, rb = by.get((suite, size, a)), by.get((suite, size, b))
            if ra is None or rb is None or not ra.outcomes or len(ra.outcomes) != len(rb.outcomes):
                continue
            comp = paired_binary(ra.outcomes, rb.outcomes)
            out.append({"suite": suite, "size_tokens": size, "a": a, "b": b, **comp.to_dict()})
    return out


def plot_long_context(doc: dict[str, Any], suite: str | None = None) -> Any:
    """Pass rate (with its Wilson interval) and prompt tokens per task against context size, one line per
    condition, for one suite of an ``e15.json`` (the first by default): a matplotlib Figure."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    suite = suite or doc["suites"][0]
    fig, (acc, cost) = plt.subplots(1, 2, figsize=(10, 3.8))
    for cond in doc["conditions"]:
        rows = sorted((r for r in doc["rows"] if r["suite"] == suite and r["condition"] == cond),
                      key=lambda r: r["size_tokens"])
        xs = [r["size_tokens"] for r in rows]
        acc.errorbar(xs, [r["pass_rate"] for r in rows], marker="o", label=cond, capsize=3,
                     yerr=[[r["pass_rate"] - r["ci_low"] for r in rows], [r["ci_high"] - r["pass_rate"] for r in rows]])
        cost.plot(xs, [r["prompt_tokens"] + r["completion_tokens"] for r in rows], marker="o", label=cond)
    for ax, label in ((acc, "pass rate"), (cost, "tokens per task")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("context size (tokens)")
        ax.set_ylabel(label)
    acc.set_ylim(-0.05, 1.05)
    cost.set_yscale("log")
    acc.legend()
    fig.suptitle(f"E15 on {suite} ({doc['lm']}, n={doc['n']} per size)")
    fig.tight_layout()
    return fig


def long_context_markdown(doc: dict[str, Any]) -> str:
    """The rows and the paired differences of an ``e15.json`` as two Markdown tables."""
    lines = ["| suite | size | condition | pass | 95% interval | prompt tok | completion tok | max prompt | s/task "
             "| cost | errors |", "|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in doc["rows"]:
        cost = "?" if r["cost"] is None else f"{r['cost']:.4g}"
        lines.append(f"| {r['suite']} | {r['size_tokens']:,} | {r['condition']} | {r['passed']}/{r['n']} | "
                     f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}] | {r['prompt_tokens']:,.0f} | "
                     f"{r['completion_tokens']:,.0f} | {r['max_prompt_tokens']:,} | {r['seconds']:.1f} | {cost} | "
                     f"{r['errors']} |")
    lines += ["", "| suite | size | a - b | difference | 95% interval | verdict |", "|---|---:|---|---:|---|---|"]
    for c in doc["comparisons"]:
        lines.append(f"| {c['suite']} | {c['size_tokens']:,} | {c['a']} - {c['b']} | {c['difference']:+.2f} | "
                     f"[{c['ci_low']:+.2f}, {c['ci_high']:+.2f}] | {c['verdict']} |")
    return "\n".join(lines)
