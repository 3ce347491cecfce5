"""RunBrowser: an experiment run's rows (condition x task x rollout), sortable and filterable, each opening its
trajectory in a :class:`TrajectoryExplorer`.

Above the rows, each condition's pass rate with its 95% Wilson interval. A row says pass, fail or error, the
prompt and completion tokens sent, iterations, LM calls, time and the error. Selecting a row (click, or the
arrow keys in the list) opens that task's trajectory below, with the exact prompt of every LM call. The static
form is the summary, the rows as filtered and sorted now, and the open trajectory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ipywidgets as W

from rlmlab._figures import FIGURES, fmt
from rlmlab.jupyter._widget import RLMLabWidget, esc, html_table

__all__ = ["RunBrowser", "SORT_KEYS", "OUTCOMES"]

OUTCOMES = ("all", "pass", "fail", "error")

# sort label -> key of a results row (the labels are the figure labels, as in the table's header)
SORT_KEYS = {
    "condition": lambda r: (r["condition"], r["task_id"], r.get("rollout", 0)),
    "task": lambda r: (r["task_id"], r["condition"], r.get("rollout", 0)),
    "pass": lambda r: ({"pass": 0, "fail": 1, "error": 2}[_outcome(r)], r["condition"], r["task_id"]),
    FIGURES["prompt_tokens"].label: lambda r: r.get("input_tokens") or 0,
    FIGURES["completion_tokens"].label: lambda r: r.get("output_tokens") or 0,
    FIGURES["iterations"].label: lambda r: r.get("iterations") or 0,
    FIGURES["elapsed_ms"].label: lambda r: r.get("elapsed_ms") or 0,
    "error": lambda r: r.get("error") or "",
}

_NO_ROWS = "no row matches the filters"
_NOTHING_OPEN = f"<div class='rlmlab-runs-none' style='color:#555'>{_NO_ROWS}: nothing is open</div>"

_STYLE = ("<style>.rlmlab-runs-rows select{font-family:ui-monospace,monospace;font-size:12px}"
          ".rlmlab-runs-head{font-family:ui-monospace,monospace;font-size:12px;white-space:pre;color:#555;"
          "padding-left:4px}</style>")


def _outcome(row: dict[str, Any]) -> str:
    from rlmlab.experiments import outcome

    return outcome(row)


def summary_html(run_dir: Path, rows: list[dict[str, Any]]) -> str:
    """The run's id and each condition's pass rate with its 95% Wilson interval, tasks, errors, mean figures."""
    from rlmlab.experiments import condition_stats

    stats = condition_stats(rows)
    table = [[cond, s["tasks"], s["passed"], fmt(s["pass_rate"], "share"),
              f"{100 * s['ci'][0]:.0f}–{100 * s['ci'][1]:.0f}%", s["errors"],
              fmt(s["input_tokens"], "tokens"), fmt(s["output_tokens"], "tokens"), fmt(s["elapsed_ms"], "s")]
             for cond, s in stats.items()]
    header = ["condition", "tasks", "passed", FIGURES["pass_rate"].label, "95% CI (Wilson)", FIGURES["errors"].label,
              f"{FIGURES['prompt_tokens'].label} / task", f"{FIGURES['completion_tokens'].label} / task",
              f"{FIGURES['elapsed_ms'].label} / task"]
    from rlmlab.experiments import time_table

    time_header, times = time_table(rows)
    timing = ("<div>where the time went, per task (mean s; cached share: prompt tokens from llama.cpp's prefix "
              "cache / sent)</div>" + html_table(time_header, times, css_class="rlmlab-runs-timing")) if times else ""
    return (f"<div class='rlmlab-runs-header'><b>{esc(run_dir.name)}</b> · {len(rows)} rows · "
            f"{esc(run_dir)}</div>" + html_table(header, table, css_class="rlmlab-runs-summary") + timing)


class RunBrowser(RLMLabWidget):
    """Browse an experiment run directory: ``RunBrowser("runs/E7-...")``.

    State: ``condition`` ("all" or a condition), ``outcome`` (one of :data:`OUTCOMES`), ``text`` (a substring
    of the task id or the error), ``sort_key`` (a :data:`SORT_KEYS` label) and ``descending``; ``selected``
    is the index into ``rows`` of the open row (None: none), ``explorer`` its TrajectoryExplorer; a filter that
    hides the open row closes it. :meth:`visible` lists the row indices shown, in order. FileNotFoundError if
    ``run_dir`` has no results.
    """

    css_name = "rlmlab-runs"

    def __init__(self, run_dir: str | Path, *, sort: str = "condition", descending: bool = False):
        from rlmlab.experiments import run_rows

        super().__init__()
        # absolute, so the static form's "how to open" lines work from wherever the saved notebook is opened
        self.run_dir = Path(run_dir).resolve()
        self.rows = run_rows(self.run_dir)
        if sort not in SORT_KEYS:
            raise ValueError(f"sort: {sort!r}; use one of {', '.join(SORT_KEYS)}")
        self.condition, self.outcome, self.text = "all", "all", ""
        self.sort_key, self.descending = sort, descending
        self.selected: int | None = None
        self.explorer: Any = None
        self.problem: str | None = None  # why the selected row's trajectory could not be opened
        self._setting_list = False

        conditions = list(dict.fromkeys(r["condition"] for r in self.rows))
        self.header = W.HTML(_STYLE + summary_html(self.run_dir, self.rows))
        self.condition_filter = W.Dropdown(options=["all", *conditions], value="all", description="condition",
                                           layout=W.Layout(width="220px"))
        self.outcome_filter = W.ToggleButtons(options=list(OUTCOMES), value="all")
        self.outcome_filter.style.button_width = "56px"
        self.text_filter = W.Text(value="", placeholder="task id or error contains", layout=W.Layout(width="220px"))
        self.sort_by = W.Dropdown(options=list(SORT_KEYS), value=sort, description="sort by",
                                  layout=W.Layout(width="240px"))
        self.descending_box = W.Checkbox(value=descending, description="descending", indent=False,
                                         layout=W.Layout(width="110px"))
        for control, handler in ((self.condition_filter, lambda v: self.set_filter(condition=v)),
                                 (self.outcome_filter, lambda v: self.set_filter(outcome=v)),
                                 (self.text_filter, lambda v: self.set_filter(text=v)),
                                 (self.sort_by, lambda v: self.sort(v, self.descending)),
                                 (self.descending_box, lambda v: self.sort(self.sort_key, v))):
            control.observe(lambda change, h=handler: h(change["new"]), names="value")
        self.head = W.HTML()
        self.head.add_class("rlmlab-runs-head")
        self.table = W.Select(options=[], rows=min(max(len(self.rows), 3), 14), layout=W.Layout(width="100%"))
        self.table.add_class("rlmlab-runs-rows")
        self.table.observe(self._on_pick, names="value")
        self.count = W.HTML()
        self.trace_box = W.VBox()
        controls = W.HBox([self.condition_filter, self.outcome_filter, self.text_filter, self.sort_by,
                           self.descending_box], layout=W.Layout(flex_flow="row wrap"))
        self.view.children = [self.header, controls, self.count, self.head, self.table, self.trace_box]
        self.refresh()

    # -- state -------------------------------------------------------------------------------------------

    def visible(self) -> list[int]:
        """Indices into ``rows`` that pass the filters, in the current sort order."""
        text = self.text.lower()
        keep = [i for i, r in enumerate(self.rows)
                if (self.condition == "all" or r["condition"] == self.condition)
                and (self.outcome == "all" or _outcome(r) == self.outcome)
                and (not text or text in r["task_id"].lower() or text in (r.get("error") or "").lower())]
        key = SORT_KEYS[self.sort_key]
        return sorted(keep, key=lambda i: key(self.rows[i]), reverse=self.descending)

    def set_filter(self, *, condition: str | None = None, outcome: str | None = None,
                   text: str | None = None) -> list[int]:
        """Change the filters given (ValueError for an unknown condition or outcome); returns :meth:`visible`.
        The open row, when the new filters hide it, is closed (nothing is open)."""
        if condition is not None:
            if condition != "all" and condition not in {r["condition"] for r in self.rows}:
                raise ValueError(f"condition: {condition!r} is not in this run")
            self.condition = condition
        if outcome is not None:
            if outcome not in OUTCOMES:
                raise ValueError(f"outcome: {outcome!r}; use one of {', '.join(OUTCOMES)}")
            self.outcome = outcome
        if text is not None:
            self.text = text
        if self.selected is not None and self.selected not in self.visible():
            self.selected, self.explorer, self.problem = None, None, None
        self.refresh()
        return self.visible()

    def sort(self, key: str, descending: bool = False) -> list[int]:
        """Sort by a :data:`SORT_KEYS` label (ValueError otherwise); returns :meth:`visible`."""
        if key not in SORT_KEYS:
            raise ValueError(f"sort: {key!r}; use one of {', '.join(SORT_KEYS)}")
        self.sort_key, self.descending = key, bool(descending)
        self.refresh()
        return self.visible()

    def select(self, index: int | None) -> Any:
        """Open row ``index`` (into ``rows``) in a TrajectoryExplorer, or close it with None; returns the
        explorer (None when closed, or when the trajectory could not be read: ``problem`` says why)."""
        from rlmlab.jupyter._explorer import TrajectoryExplorer

        if index is not None and not 0 <= index < len(self.rows):
            raise IndexError(f"row {index}; this run has {len(self.rows)} rows")
        self.selected, self.explorer, self.problem = index, None, None
        if index is not None:
            r = self.rows[index]
            try:
                self.explorer = TrajectoryExplorer(self.run_dir, r["task_id"], condition=r["condition"],
                                                   rollout=r.get("rollout"))
            except (FileNotFoundError, ValueError) as exc:
                self.problem = str(exc)
        self.refresh()
        return self.explorer

    def open_first_failure(self) -> str:
        """Open the first shown row that did not pass (fail or error), or the first shown row when every shown
        row passed; returns one line saying what is open and, when it passed, that no shown row failed. Opens
        nothing when no row is shown (the line says so)."""
        shown = self.visible()
        if not shown:
            self.select(None)
            return f"nothing open: {_NO_ROWS}"
        failed = [i for i in shown if _outcome(self.rows[i]) != "pass"]
        self.select((failed or shown)[0])
        r = self.rows[self.selected]
        why = "" if failed else f"; no failed row to pick: all {len(shown)} shown row(s) passed"
        return f"open: {r['condition']} / {r['task_id']} ({_outcome(r)}){why}"

    def open(self, task: str, condition: str | None = None, rollout: int | None = None) -> Any:
        """Open the row of ``task`` (see ``experiments._runs.find_row`` for condition and rollout)."""
        from rlmlab.experiments import find_row

        row = find_row(self.run_dir, task, condition, rollout)
        return self.select(self.rows.index(row))

    def _on_pick(self, change: dict[str, Any]) -> None:
        # refresh's new options move the list's value to their first row: that is no pick
        if self._setting_list:
            return
        if change["new"] is not None and change["new"] != self.selected:
            self.select(change["new"])

    # -- rendering ---------------------------------------------------------------------------------------

    def _cells(self, i: int) -> list[str]:
        from rlmlab.experiments import TASK_COLUMNS

        r = self.rows[i]
        return ([r["condition"], r["task_id"], str(r.get("rollout", 0)), _outcome(r)]
                + [FIGURES[k].format(r.get(field)) for field, k in TASK_COLUMNS] + [r.get("error") or ""])

    def _header(self) -> list[str]:
        from rlmlab.experiments import TASK_COLUMNS

        return ["condition", "task", "rollout", "pass"] + [FIGURES[k].heading for _, k in TASK_COLUMNS] + ["error"]

    def _lines(self, shown: list[int]) -> tuple[str, list[str]]:
        """The list's header and one fixed-width line per shown row (the error cut to 80 characters)."""
        header = self._header()
        cells = [self._cells(i) for i in shown]
        for c in cells:
            c[-1] = c[-1][:80] + ("…" if len(c[-1]) > 80 else "")
        widths = [max(len(x[j]) for x in [header, *cells]) for j in range(len(header) - 1)]

        def line(c: list[str]) -> str:
            return "  ".join([c[j].ljust(widths[j]) if j < 2 else c[j].rjust(widths[j]) for j in range(len(widths))]
                             + [c[-1]])

        return line(header), [line(c) for c in cells]

    def refresh(self) -> None:
        # Controls follow the state, so a method call (set_filter, sort) shows in them too; setting a control to
        # the value it has fires no observer, so this does not loop.
        for control, value in ((self.condition_filter, self.condition), (self.outcome_filter, self.outcome),
                               (self.text_filter, self.text), (self.sort_by, self.sort_key),
                               (self.descending_box, self.descending)):
            if control.value != value:
                control.value = value
        shown = self.visible()
        head, lines = self._lines(shown)
        self.head.value = esc(head)
        options = list(zip(lines, shown))
        value = self.selected if self.selected in shown else None
        self._setting_list = True
        try:
            if list(self.table.options) != options:
                self.table.options = options
            if self.table.value != value:
                self.table.value = value
        finally:
            self._setting_list = False
        self.count.value = (f"<span style='color:#555'>{len(shown)} of {len(self.rows)} rows · select a row to open "
                            "its trajectory</span>")
        if self.explorer is not None:
            if list(self.trace_box.children) != [self.explorer.view]:
                self.trace_box.children = [self.explorer.view]
        elif self.problem is not None:
            self.trace_box.children = [W.HTML(f"<div style='color:#C00'>{esc(self.problem)}</div>")]
        elif not shown:
            self.trace_box.children = [W.HTML(_NOTHING_OPEN)]
        else:
            self.trace_box.children = []

    def static_html(self) -> str:
        shown = self.visible()
        rows = []
        for i in shown:
            cells = self._cells(i)
            rows.append(cells)
        table = html_table(self._header(), rows, css_class="rlmlab-runs-rows")
        filters = (f"<div style='color:#555'>{len(shown)} of {len(self.rows)} rows · condition {esc(self.condition)}"
                   f" · outcome {esc(self.outcome)}{' · text ' + esc(self.text) if self.text else ''} · sorted by "
                   f"{esc(self.sort_key)}{' (descending)' if self.descending else ''}</div>")
        opened = ""
        if self.selected is not None:
            r = self.rows[self.selected]
            what = (f"<div class='rlmlab-runs-open'><b>open</b>: {esc(r['condition'])} / {esc(r['task_id'])} / "
                    f"rollout {esc(r.get('rollout', 0))}</div>")
            body = (self.explorer.static_html() if self.explorer is not None
                    else f"<div style='color:#C00'>{esc(self.problem)}</div>")
            opened = what + f"<div class='rlmlab-explorer'>{body}</div>"
        elif not shown:
            opened = _NOTHING_OPEN
        return summary_html(self.run_dir, self.rows) + filters + table + self._open_hint(shown) + opened

    def open_code(self, index: int) -> str:
        """The Python that opens row ``index``'s trajectory in a kernel (what the static form prints per row)."""
        r = self.rows[index]
        several = sum(o["condition"] == r["condition"] and o["task_id"] == r["task_id"] for o in self.rows) > 1
        extra = f", rollout={r.get('rollout', 0)}" if several else ""
        return f"TrajectoryExplorer({str(self.run_dir)!r}, {r['task_id']!r}, condition={r['condition']!r}{extra})"

    def _open_hint(self, shown: list[int]) -> str:
        # Rows cannot be clicked in a saved or static notebook; say how to open each one from code instead.
        lines = "\n".join(self.open_code(i) for i in shown)
        return ("<div class='rlmlab-runs-hint' style='color:#555'>To open a row's trajectory, run in a cell "
                "(<code>from rlmlab.jupyter import TrajectoryExplorer</code>):</div>"
                f"<pre class='rlmlab-runs-open-code' style='font-size:12px;margin:2px 0'>{esc(lines)}</pre>")

    def __repr__(self) -> str:
        return (f"<RunBrowser {self.run_dir.name}: {len(self.rows)} rows, {len(self.visible())} shown"
                f"{'' if self.selected is None else f', row {self.selected} open'}>")
