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

from rlmlab._figures import FIGURES, figure, fmt, fmt_delta, fmt_tokens, summary_label, wilson_interval
from rlmlab.experiments._summary import read_results, summarise, summary_columns

__all__ = ["ResultsTable", "results_table", "plot_conditions", "plot_learning_curve", "plot_rollouts",
           "load_runs", "TABLE_COLUMNS", "TaskTable", "task_table", "compare_table", "COMPARE_METRICS", "plot_tasks"]

# Summary keys: quality, efficiency, then leakage. Labels and units come from rlmlab._figures.
TABLE_COLUMNS = ["tasks", "pass_rate", "undecided_share", "convergence", "fallback", "mean_input_tokens", "mean_output_tokens",
                 "mean_lm_calls", "mean_iterations", "mean_tool_calls", "mean_elapsed_ms", "mean_prompt_chars_mean",
                 "mean_variables_info_chars", "mean_stdout_chars", "mean_large_returns", "mean_sub_llm_calls",
                 "mean_context_chars"]


TEXT_WIDTH = 100  # the results table's text form keeps to this many characters a line (ResultsTable.text)


def _cell(key: str, value: Any) -> str:
    """A summary value in its figure's unit (33%, 12.3k, 4.2 s); "-" for None."""
    try:
        return figure(key).format(value)
    except KeyError:
        return fmt(value)


def _ci(s: dict[str, Any]) -> str:
    """The 95% Wilson interval of a condition's pass rate over its tasks."""
    if s.get("pass_rate") is None or not s.get("tasks"):
        return "-"
    low, high = wilson_interval(round(s["pass_rate"] * s["tasks"]), s["tasks"])
    return f"{100 * low:.0f}–{100 * high:.0f}%"


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
    """Per-condition summary of one or more runs: the pass rate with its 95% Wilson interval, then tokens, time
    and leakage in readable units; HTML in a notebook, aligned text elsewhere. ``tasks()`` is the per-task table.
    """

    def __init__(self, summaries: dict[str, dict[str, dict[str, Any]]], rows: dict[str, list[dict]] | None = None):
        self.summaries = summaries  # run label -> condition -> summary
        self.results = rows or {}  # run label -> results rows, for the per-task table
        self.rows = [(run, cond, s) for run, by_cond in summaries.items() for cond, s in by_cond.items()]
        # TABLE_COLUMNS, with pass@1/maj@N/pass@N, off-format and golden yield after the pass rate when a run has them
        optional = [k for k, _ in summary_columns(s for *_, s in self.rows)]
        self.columns = [*TABLE_COLUMNS[:2], "ci", "errors", *optional, *TABLE_COLUMNS[2:]]

    def heading(self, key: str) -> str:
        return "95% CI (Wilson)" if key == "ci" else summary_label(key)

    def cell(self, key: str, s: dict[str, Any]) -> str:
        return _ci(s) if key == "ci" else _cell(key, s.get(key))

    def _label(self, run: str, cond: str) -> str:
        name = cond if len(self.summaries) == 1 else f"{run} / {cond}"
        failed = self.summaries[run][cond].get("all_failed")
        return f"{name} (every run failed)" if failed else name

    def tasks(self) -> "TaskTable":
        """One row per condition x task x rollout of the same runs."""
        return TaskTable(self.results)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(self.heading(k))}</th>" for k in self.columns)
        body = "".join(
            f"<tr><td style='text-align:left'>{html.escape(self._label(run, cond))}</td>"
            + "".join(f"<td>{html.escape(self.cell(k, s))}</td>" for k in self.columns) + "</tr>"
            for run, cond, s in self.rows)
        return (f"<table class='rlmlab-results'><thead><tr><th>condition</th>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table>")

    def __repr__(self) -> str:
        return self.text()

    def text(self, width: int | None = TEXT_WIDTH) -> str:
        """Aligned text in lines of at most ``width`` characters: blocks of columns, each led by the condition
        column, a blank line between blocks (a cell is never cut: one column wider than that gets a block as wide
        as it needs). ``width=None``: one table, as wide as its cells."""
        header = ["condition"] + [self.heading(k) for k in self.columns]
        lines = [[self._label(run, cond)] + [self.cell(k, s) for k in self.columns] for run, cond, s in self.rows]
        widths = [max(len(r[i]) for r in [header, *lines]) for i in range(len(header))]
        blocks: list[list[int]] = [[]]
        for i in range(1, len(header)):
            if width is not None and blocks[-1] and widths[0] + sum(widths[j] + 2 for j in [*blocks[-1], i]) > width:
                blocks.append([])
            blocks[-1].append(i)
        return "\n\n".join("\n".join("  ".join([r[0].ljust(widths[0]), *(r[j].rjust(widths[j]) for j in block)])
                                      for r in [header, *lines]) for block in blocks)


class TaskTable:
    """One row per condition x task x rollout (pass, fail or error; tokens; time; the error), per run."""

    def __init__(self, results: dict[str, list[dict]]):
        from rlmlab.experiments._runs import task_runs_table

        self.results = results
        self.header, self.cells = ["run"], []
        for run, rows in results.items():
            header, cells = task_runs_table(rows)
            self.header = ["run", *header]
            self.cells += [[run, *c] for c in cells]
        if len(results) == 1:  # one run: no run column
            self.header, self.cells = self.header[1:], [c[1:] for c in self.cells]

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(c)}</td>" for c in r) + "</tr>"
                       for r in self.cells)
        return f"<table class='rlmlab-tasks'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def __repr__(self) -> str:
        rows = [self.header, *self.cells]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.header) - 1)]
        return "\n".join("  ".join([*(c.ljust(w) for c, w in zip(r, widths)), r[-1]]).rstrip() for r in rows)


def results_table(run_dirs: Any, split_by: str | None = None) -> ResultsTable:
    """The summary table of one run directory, or of several side by side (see :func:`load_runs`).

    ``split_by`` names a row field ("suite", "level") whose values get a line each per condition.
    """
    summaries = {}
    loaded = load_runs(run_dirs)
    for label, rows in loaded.items():
        if split_by is None:
            summaries[label] = summarise(rows)
            continue
        summaries[label] = {}
        for value in dict.fromkeys(r.get(split_by) for r in rows):
            part = summarise([r for r in rows if r.get(split_by) == value])
            summaries[label].update({f"{cond} · {value}": s for cond, s in part.items()})
    return ResultsTable(summaries, loaded)


def task_table(run_dirs: Any) -> TaskTable:
    """One row per condition x task x rollout of one run directory or several (see :func:`load_runs`)."""
    return TaskTable(load_runs(run_dirs))


COMPARE_METRICS = ["tasks", "pass_rate", "convergence", "mean_input_tokens", "mean_output_tokens", "mean_iterations",
                   "mean_tool_calls", "mean_prompt_chars_mean", "mean_variables_info_chars", "mean_large_returns",
                   "mean_context_chars", "mean_elapsed_ms"]


def compare_table(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], label_a: str = "A",
                  label_b: str = "B") -> tuple[list[str], list[list[str]]]:
    """Header and rows comparing two runs' condition summaries: per metric (readable name), each condition's
    value in A and B, then B - A and B / A. Conditions are paired by name; when the runs share no condition
    name and one run has a single condition, it is paired with each condition of the other. Unpaired conditions
    get their value columns only."""
    pairs = [(c, c) for c in a if c in b]
    if not pairs and len(a) == 1:  # a baseline run of one condition against each condition of the other
        pairs = [(next(iter(a)), c) for c in b]
    elif not pairs and len(b) == 1:
        pairs = [(c, next(iter(b))) for c in a]
    lone_a = [c for c in a if c not in {x for x, _ in pairs}]
    lone_b = [c for c in b if c not in {y for _, y in pairs}]
    metrics = list(COMPARE_METRICS)
    # pass@1, maj@N, pass@N, off-format replies and golden yield, for runs that have them (after the pass rate)
    metrics[2:2] = [k for k, _ in summary_columns([*a.values(), *b.values()])]
    header = ["metric"]
    for ca, cb in pairs:
        name = ca if ca == cb else f"{ca} → {cb}"
        header += [f"{name} {label_a}", f"{name} {label_b}", f"{name} Δ ({label_b} − {label_a})",
                   f"{name} ratio {label_b}/{label_a}"]
    header += [f"{c} {label_a}" for c in lone_a] + [f"{c} {label_b}" for c in lone_b]
    rows = []
    for m in metrics:
        try:
            unit = figure(m).unit
        except KeyError:
            unit = "count"
        row = [summary_label(m)]
        for ca, cb in pairs:
            va, vb = a[ca].get(m), b[cb].get(m)
            row += [_cell(m, va), _cell(m, vb), *fmt_delta(va, vb, unit)]
        row += [_cell(m, a[c].get(m)) for c in lone_a] + [_cell(m, b[c].get(m)) for c in lone_b]
        rows.append(row)
    rows.insert(2, ["95% CI (Wilson)"] + [x for ca, cb in pairs for x in (_ci(a[ca]), _ci(b[cb]), "", "")]
                + [_ci(a[c]) for c in lone_a] + [_ci(b[c]) for c in lone_b])
    return header, rows


def _save(fig: Any, run_dir: str | Path | None, name: str) -> Any:
    if run_dir is not None:
        out = Path(run_dir) / "plots"
        out.mkdir(parents=True, exist_ok=True)
        fig.savefig(out / f"{name}.png", dpi=100, bbox_inches="tight")
    return fig


def _readable_axis(ax: Any, unit: str) -> None:
    """Tick labels in the figure's unit ("12k", "4.2 s", "50%"), never scientific notation."""
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt(v, unit) if unit != "s" else f"{v / 1000:g} s"))


def plot_conditions(run_dirs: Any, save_to: str | Path | None = None, name: str = "conditions") -> Any:
    """Four panels per condition: quality (pass rate with its 95% Wilson interval, "k/n" on each bar), tokens
    per task (prompt tokens sent and completion tokens, stacked), leakage (prompt chars per iteration) and time
    per task (s). Labels use ``rlmlab._figures``' names and units; no scientific notation."""
    import matplotlib.pyplot as plt

    table = results_table(run_dirs)
    labels = [table._label(run, cond) for run, cond, _ in table.rows]
    summaries = [s for *_, s in table.rows]
    x = range(len(summaries))
    colours = [f"C{i}" for i in x]
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    quality, tokens, leakage, time_ax = axes

    rates = [s["pass_rate"] or 0 for s in summaries]
    passed = [round((s["pass_rate"] or 0) * s["tasks"]) for s in summaries]
    intervals = [wilson_interval(k, s["tasks"]) for k, s in zip(passed, summaries)]
    errors = [[r - lo for r, (lo, _) in zip(rates, intervals)], [hi - r for r, (_, hi) in zip(rates, intervals)]]
    bars = quality.bar(x, rates, color=colours, yerr=errors, capsize=4, ecolor="#444")
    quality.bar_label(bars, labels=[f"{k}/{s['tasks']}" for k, s in zip(passed, summaries)], fontsize=8,
                      padding=2)
    quality.set_ylim(0, 1.05)
    _readable_axis(quality, "share")
    quality.set_title(f"{FIGURES['pass_rate'].label} (95% Wilson interval)", fontsize=10)
    if not any(passed):
        quality.text(0.5, 0.5, "no task passed yet:\nopen the runs to see why\n(RunBrowser, experiment show)",
                     transform=quality.transAxes, ha="center", va="center", fontsize=8, color="#555")

    prompt = [s["mean_input_tokens"] or 0 for s in summaries]
    completion = [s["mean_output_tokens"] or 0 for s in summaries]
    tokens.bar(x, prompt, color=colours, label=FIGURES["prompt_tokens"].label)
    top = tokens.bar(x, completion, bottom=prompt, color=colours, alpha=0.45, hatch="//",
                     label=FIGURES["completion_tokens"].label)
    tokens.bar_label(top, labels=[fmt_tokens(p + c) for p, c in zip(prompt, completion)], fontsize=8, padding=2)
    _readable_axis(tokens, "tokens")
    tokens.set_title("tokens per task (prompt sent + completion)", fontsize=10)
    tokens.legend(fontsize=7, loc="lower right")

    for ax, key, title in ((leakage, "mean_prompt_chars_mean", f"leakage: {FIGURES['prompt_chars_mean'].label}"),
                           (time_ax, "mean_elapsed_ms", f"{FIGURES['elapsed_ms'].label} per task")):
        values = [s[key] or 0 for s in summaries]
        unit = figure(key).unit
        b = ax.bar(x, values, color=colours)
        ax.bar_label(b, labels=[fmt(v, unit) for v in values], fontsize=8, padding=2)
        _readable_axis(ax, unit)
        ax.set_title(title, fontsize=10)
    for ax in axes:
        ax.set_xticks(list(x), labels, rotation=30, ha="right", fontsize=8)
        ax.margins(y=0.15)
    fig.tight_layout()
    return _save(fig, save_to, name)


def plot_tasks(run_dirs: Any, save_to: str | Path | None = None, name: str = "tasks") -> Any:
    """One row per task, one column per condition: pass (green), fail (orange) or error (red) of the selected
    rollout, so a condition's pass rate can be read back to the tasks behind it."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    from rlmlab.experiments._runs import outcome

    loaded = load_runs(run_dirs)
    columns = [(run, c) for run, rows in loaded.items() for c in dict.fromkeys(r["condition"] for r in rows)]
    tasks = list(dict.fromkeys(r["task_id"] for rows in loaded.values() for r in rows))
    codes = {"pass": 0, "fail": 1, "error": 2}
    grid = [[float("nan")] * len(columns) for _ in tasks]
    for j, (run, cond) in enumerate(columns):
        for r in loaded[run]:
            if r["condition"] == cond and r.get("best", True):
                grid[tasks.index(r["task_id"])][j] = codes[outcome(r)]
    fig, ax = plt.subplots(figsize=(2 + 1.2 * len(columns), 1 + 0.28 * len(tasks)))
    ax.imshow(grid, cmap=ListedColormap(["#2ca02c", "#ff7f0e", "#d62728"]), vmin=0, vmax=2, aspect="auto")
    ax.set_xticks(range(len(columns)), [c if len(loaded) == 1 else f"{run} / {c}" for run, c in columns],
                  rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(tasks)), tasks, fontsize=7)
    ax.set_title("per task: pass (green), fail (orange), error (red)", fontsize=10)
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
