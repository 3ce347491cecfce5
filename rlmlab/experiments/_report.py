"""What an experiment notebook ends with: the results table and plots of quality, tokens and leakage.

Every function reads a run directory (``results.jsonl``, ``memory.<condition>.sqlite``), so a notebook
can be re-run on finished results without running the agents again. Plots are matplotlib figures,
also saved as PNG files under ``<run_dir>/plots/``.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlmlab.experiments._summary import read_results, summarise, summary_columns

__all__ = ["ResultsTable", "results_table", "plot_conditions", "plot_learning_curve", "plot_rollouts",
           "load_runs", "TABLE_COLUMNS"]

# (summary key, column label): quality, efficiency, then leakage.
TABLE_COLUMNS = [
    ("tasks", "tasks"), ("pass_rate", "pass rate"), ("convergence", "converged"),
    ("mean_input_tokens", "in tokens"), ("mean_output_tokens", "out tokens"), ("mean_lm_calls", "LM calls"),
    ("mean_iterations", "iterations"), ("mean_tool_calls", "tool calls"), ("mean_elapsed_ms", "ms"),
    ("mean_prompt_chars_mean", "prompt chars/iter"), ("mean_variables_info_chars", "variables listing"),
    ("mean_stdout_chars", "stdout chars"), ("mean_large_returns", "large returns"),
    ("mean_sub_llm_calls", "sub-LLM calls"), ("mean_context_chars", "context chars"),
]


def load_runs(run_dirs: Mapping[str, str | Path] | list[str | Path] | str | Path) -> dict[str, list[dict]]:
    """Results rows by run label: one run directory, a list (labelled by directory name) or a label -> dir map."""
    if isinstance(run_dirs, (str, Path)):
        run_dirs = [run_dirs]
    if not isinstance(run_dirs, Mapping):
        run_dirs = {Path(d).name: d for d in run_dirs}
    out = {}
    for label, d in run_dirs.items():
        path = Path(d) / "results.jsonl"
        if not path.exists():
            raise FileNotFoundError(f"{path}: no results (has the run started?)")
        out[label] = read_results(path)
    return out


class ResultsTable:
    """Per-condition summary of one or more runs; HTML in a notebook, aligned text elsewhere."""

    def __init__(self, summaries: dict[str, dict[str, dict[str, Any]]]):
        self.summaries = summaries  # run label -> condition -> summary
        self.rows = [(run, cond, s) for run, by_cond in summaries.items() for cond, s in by_cond.items()]
        # TABLE_COLUMNS, with pass@1/maj@N/pass@N, off-format and golden yield after the pass rate when a run has them
        self.columns = [*TABLE_COLUMNS[:2], *summary_columns(s for *_, s in self.rows), *TABLE_COLUMNS[2:]]

    def cell(self, value: Any) -> str:
        return "-" if value is None else f"{value:g}" if isinstance(value, (int, float)) else str(value)

    def _label(self, run: str, cond: str) -> str:
        return cond if len(self.summaries) == 1 else f"{run} / {cond}"

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(label)}</th>" for _, label in self.columns)
        body = "".join(
            f"<tr><td style='text-align:left'>{html.escape(self._label(run, cond))}</td>"
            + "".join(f"<td>{self.cell(s.get(k))}</td>" for k, _ in self.columns) + "</tr>"
            for run, cond, s in self.rows)
        return f"<table class='rlmlab-results'><thead><tr><th>condition</th>{head}</tr></thead><tbody>{body}</tbody></table>"

    def __repr__(self) -> str:
        header = ["condition"] + [label for _, label in self.columns]
        lines = [[self._label(run, cond)] + [self.cell(s.get(k)) for k, _ in self.columns] for run, cond, s in self.rows]
        widths = [max(len(r[i]) for r in [header, *lines]) for i in range(len(header))]
        return "\n".join("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
                         for r in [header, *lines])


def results_table(run_dirs: Any, split_by: str | None = None) -> ResultsTable:
    """The summary table of one run directory, or of several side by side (see :func:`load_runs`).

    ``split_by`` names a row field ("suite", "level") whose values get a line each per condition.
    """
    summaries = {}
    for label, rows in load_runs(run_dirs).items():
        if split_by is None:
            summaries[label] = summarise(rows)
            continue
        summaries[label] = {}
        for value in dict.fromkeys(r.get(split_by) for r in rows):
            part = summarise([r for r in rows if r.get(split_by) == value])
            summaries[label].update({f"{cond} · {value}": s for cond, s in part.items()})
    return ResultsTable(summaries)


def _save(fig: Any, run_dir: str | Path | None, name: str) -> Any:
    if run_dir is not None:
        out = Path(run_dir) / "plots"
        out.mkdir(parents=True, exist_ok=True)
        fig.savefig(out / f"{name}.png", dpi=100, bbox_inches="tight")
    return fig


def plot_conditions(run_dirs: Any, save_to: str | Path | None = None, name: str = "conditions") -> Any:
    """Three panels per condition: quality (pass rate), tokens per task (in + out), leakage (prompt chars/iter)."""
    import matplotlib.pyplot as plt

    table = results_table(run_dirs)
    labels = [table._label(run, cond) for run, cond, _ in table.rows]
    panels = [
        ("quality: pass rate", [s["pass_rate"] or 0 for *_, s in table.rows], (0, 1)),
        ("tokens per task (in + out)", [(s["mean_input_tokens"] or 0) + (s["mean_output_tokens"] or 0)
                                        for *_, s in table.rows], None),
        ("leakage: prompt chars per iteration", [s["mean_prompt_chars_mean"] or 0 for *_, s in table.rows], None),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, (title, values, ylim) in zip(axes, panels):
        bars = ax.bar(range(len(values)), values, color=[f"C{i}" for i in range(len(values))])
        ax.bar_label(bars, fmt="%.3g", fontsize=8)
        ax.set_xticks(range(len(values)), labels, rotation=30, ha="right", fontsize=8)
        ax.set_title(title, fontsize=10)
        if ylim:
            ax.set_ylim(*ylim)
    fig.tight_layout()
    return _save(fig, save_to, name)


def plot_learning_curve(run_dir: str | Path, save_to: str | Path | None = None) -> Any:
    """Closed-loop runs: cumulative pass rate over the task sequence, and the active bank size after each task."""
    import matplotlib.pyplot as plt

    from rlmlab.memory import MemoryStore

    rows = [r for r in read_results(Path(run_dir) / "results.jsonl") if r["best"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    by_cond: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_cond[r["condition"]].append(r)
    for cond, mine in by_cond.items():
        passed = 0
        curve = []
        for i, r in enumerate(mine, 1):
            passed += bool(r["success"])
            curve.append(passed / i)
        left.plot(range(1, len(curve) + 1), curve, marker="o", label=cond)
        db = Path(run_dir) / f"memory.{cond}.sqlite"
        if db.exists():
            with MemoryStore(db) as store:
                sizes = [len(e.payload.get("items", [])) for e in store.events(kind="extract")]
            right.plot(range(1, len(sizes) + 1), [sum(sizes[:i]) for i in range(1, len(sizes) + 1)], marker="o",
                       label=cond)
    left.set(title="cumulative pass rate", xlabel="task", ylim=(0, 1))
    right.set(title="items extracted (cumulative)", xlabel="task")
    for ax in (left, right):
        if ax.lines:
            ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, save_to, "learning_curve")


def plot_rollouts(run_dir: str | Path, save_to: str | Path | None = None) -> Any:
    """MaTTS runs: mean judge score of each rollout index and of the best-of-N pick, per condition."""
    import matplotlib.pyplot as plt

    rows = read_results(Path(run_dir) / "results.jsonl")
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for cond in dict.fromkeys(r["condition"] for r in rows):
        mine = [r for r in rows if r["condition"] == cond]
        n = max(r["rollout"] for r in mine) + 1
        means = [sum(r["score"] for r in mine if r["rollout"] == i) / max(1, sum(r["rollout"] == i for r in mine))
                 for i in range(n)]
        best = [r["score"] for r in mine if r["best"]]
        ax.plot([*map(str, range(n)), "best"], [*means, sum(best) / max(1, len(best))], marker="o", label=cond)
    ax.set(title="judge score by rollout", xlabel="rollout", ylim=(0, 1.05))
    if ax.lines:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, save_to, "rollouts")
