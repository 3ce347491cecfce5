"""BudgetTimeline: a ContextTrace's tokens per iteration as stacked bars by event kind, against the budget.

The trace's budget is for the whole run (``budget_used_percent = 100 * total_tokens / budget_tokens``), so the
default "cumulative" view is a waterfall: iteration i's bar starts where the run total stood before it and rises
by that iteration's tokens, its top is the run total after it, and the dashed horizontal line is the budget.
The "per iteration" view stands every bar on zero to compare iterations; it has no budget line, because the
trace defines no per-iteration budget.

Tokens of events the ring buffer dropped still count in the trace's per-iteration totals, but their kinds are
gone; they fill a grey hatched "dropped" segment so every bar keeps its exact height.

A recursive run (its trajectory has sub-runs, from rlm_query) is stacked by depth instead: one series per depth,
depth 0 this run's tokens, depth d those of its sub-runs d levels down, each sub-run's whole trace standing in the
iteration of this run that started its branch. Each run has its own trace budget, so that chart has no budget line.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import ipywidgets as W

from rlmlab._figures import FIGURES
from rlmlab.jupyter._widget import RLMLabWidget, esc, html_table
from rlmlab.trace import ContextEvent, ContextTrace, ContextTraceSummary, EventKind

if TYPE_CHECKING:
    from rlmlab.executors import Trajectory

__all__ = ["BudgetTimeline", "IterationBar", "BarSegment", "timeline_bars", "timeline_svg", "KIND_COLOURS",
           "DROPPED", "MODES", "depth_bars", "depth_kind"]

DROPPED = "dropped"  # the segment kind for tokens of events the ring buffer no longer holds
MODES = ("cumulative", "per_iteration")

# Okabe-Ito colours (distinguishable with the common colour-vision deficiencies), one per EventKind.
KIND_COLOURS: dict[str, str] = {
    EventKind.SystemPrompt.value: "#0072B2",
    EventKind.GrepResult.value: "#E69F00",
    EventKind.LlmQueryResult.value: "#CC79A7",
    EventKind.AssistantCode.value: "#009E73",
    EventKind.ExecutionOutput.value: "#56B4E9",
    EventKind.Final.value: "#D55E00",
    EventKind.ToolCall.value: "#F0E442",
    EventKind.ToolResult.value: "#8C6D31",
    DROPPED: "#BBBBBB",
}
_HATCH_ID = "rlmlab-budget-dropped"
# A recursive run's series, one per depth (depth_kind): Okabe-Ito again, in this order, then round again.
DEPTH_COLOURS = ("#0072B2", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#D55E00")


def depth_kind(depth: int) -> str:
    """The segment kind of a depth's series: "depth_0" (the run itself), "depth_1" (its sub-runs), ..."""
    return f"depth_{depth}"


def _colour(kind: str) -> str:
    if kind in KIND_COLOURS:
        return KIND_COLOURS[kind]
    return DEPTH_COLOURS[int(kind.removeprefix("depth_")) % len(DEPTH_COLOURS)]

# Chart geometry, in SVG user units (px at 100% zoom).
_WIDTH, _HEIGHT = 720, 260
_LEFT, _RIGHT, _TOP, _BOTTOM = 60, 12, 12, 30
_MAX_X_LABELS = 20


@dataclass(frozen=True)
class BarSegment:
    """One kind's share of one iteration. ``kind`` is an EventKind value or DROPPED (then ``events`` is 0:
    how many events were dropped per iteration is not recorded, only their tokens)."""

    kind: str
    tokens: int
    events: int


@dataclass(frozen=True)
class IterationBar:
    """One iteration's bar. ``tokens`` is exact (dropped events included); ``run_total_before`` is the run's
    tokens in all earlier iterations. Segments are in EventKind order, DROPPED last, zero-token kinds left out."""

    iteration: int
    tokens: int
    run_total_before: int
    segments: tuple[BarSegment, ...]

    @property
    def run_total_after(self) -> int:
        return self.run_total_before + self.tokens


def timeline_bars(trace: ContextTrace, summary: ContextTraceSummary | None = None) -> list[IterationBar]:
    """The bars of ``trace``, oldest iteration first. Kinds come from the kept events; each iteration's
    height comes from the summary's exact counters, and the difference is the DROPPED segment."""
    summary = summary or trace.summary()
    events = list(trace)  # a copy: safe while another thread logs
    tokens: dict[tuple[int, str], int] = {}
    counts: dict[tuple[int, str], int] = {}
    for e in events:
        key = (e.iteration, e.kind.value)
        tokens[key] = tokens.get(key, 0) + e.tokens
        counts[key] = counts.get(key, 0) + 1
    bars, before = [], 0
    for iteration, exact in sorted(summary.tokens_by_iteration.items()):
        segments = [BarSegment(kind.value, tokens[(iteration, kind.value)], counts[(iteration, kind.value)])
                    for kind in EventKind if tokens.get((iteration, kind.value))]
        # Negative only for an event logged between the summary and the copy above; the next render is exact.
        missing = exact - sum(s.tokens for s in segments)
        if missing > 0:
            segments.append(BarSegment(DROPPED, missing, 0))
        bars.append(IterationBar(iteration, exact, before, tuple(segments)))
        before += exact
    return bars


def depth_bars(trace: ContextTrace, children: "Sequence[Trajectory]",
               summary: ContextTraceSummary | None = None) -> list[IterationBar]:
    """The bars of a recursive run stacked by depth: per iteration of the run, a ``depth_kind(0)`` segment (its
    own context-trace tokens in that iteration) and one per deeper level (the context-trace tokens of every sub-run
    whose branch that iteration started, however deep; ``events`` counts those runs). ``children``: the run's
    sub-runs (``Trajectory.children``)."""
    summary = summary or trace.summary()
    tokens: dict[int, dict[int, int]] = {i: {0: t} for i, t in summary.tokens_by_iteration.items()}
    runs: dict[tuple[int, int], int] = {}
    for child in children:
        step = child.parent_step if child.parent_step is not None else 0
        for sub in child.walk():
            depth = sub.depth - child.depth + 1
            if sub.context_trace is not None:
                level = tokens.setdefault(step, {})
                level[depth] = level.get(depth, 0) + sub.context_trace.summary().total_tokens
            runs[(step, depth)] = runs.get((step, depth), 0) + 1
    bars, before = [], 0
    for iteration in sorted(tokens):
        levels = tokens[iteration]
        segments = tuple(BarSegment(depth_kind(d), levels[d], runs.get((iteration, d), 1))
                         for d in sorted(levels) if levels[d])
        total = sum(seg.tokens for seg in segments)
        bars.append(IterationBar(iteration, total, before, segments))
        before += total
    return bars


def _nice_step(span: float, ticks: int = 4) -> float:
    """A 1, 2 or 5 times a power of ten step giving about ``ticks`` gridlines over ``span``."""
    raw = max(span, 1) / ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _segment_title(bar: IterationBar, seg: BarSegment, budget: int | None) -> str:
    if budget is None:  # stacked by depth: each run has its own budget
        depth = int(seg.kind.removeprefix("depth_"))
        runs = f"{seg.events:,} sub-run{'s' if seg.events != 1 else ''}"
        who = ("this run" if depth == 0 else f"{runs} this iteration started" if depth == 1
               else f"{runs} {depth} levels down from this iteration")
        return (f"depth {depth} · iteration {bar.iteration} · {seg.tokens:,} tokens · {who}\niteration total "
                f"{bar.tokens:,} tokens · tree total after it {bar.run_total_after:,}")
    if seg.kind == DROPPED:
        what = f"dropped events (kinds unknown) · iteration {bar.iteration} · {seg.tokens:,} tokens"
    else:
        what = (f"{seg.kind} · iteration {bar.iteration} · {seg.tokens:,} tokens · "
                f"{seg.events:,} event{'s' if seg.events != 1 else ''}")
    return (f"{what}\niteration total {bar.tokens:,} tokens · run total after it {bar.run_total_after:,} "
            f"({100.0 * bar.run_total_after / budget:.1f}% of budget)")


def timeline_svg(bars: list[IterationBar], budget_tokens: int | None, mode: str = "cumulative") -> str:
    """Inline SVG of the bars; hovering a segment shows its ``<title>``. ``mode`` is one of MODES.
    ``budget_tokens`` None: bars stacked by depth (:func:`depth_bars`), no budget line."""
    if mode not in MODES:
        raise ValueError(f"mode: {mode!r}; use one of {', '.join(MODES)}")
    cumulative = mode == "cumulative"
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM
    if cumulative:
        top = max([budget_tokens or 1] + [b.run_total_after for b in bars])
    else:
        top = max([1] + [b.tokens for b in bars])
    step = _nice_step(top)
    y_max = step * math.ceil(top * 1.05 / step)

    def y(tokens: float) -> float:
        return _TOP + plot_h * (1 - tokens / y_max)

    parts = [f"<svg class='rlmlab-budget-chart' xmlns='http://www.w3.org/2000/svg' width='{_WIDTH}' "
             f"height='{_HEIGHT}' viewBox='0 0 {_WIDTH} {_HEIGHT}' style='max-width:100%;height:auto' "
             f"font-family='ui-sans-serif, system-ui, sans-serif' font-size='11'>",
             f"<defs><pattern id='{_HATCH_ID}' width='6' height='6' patternUnits='userSpaceOnUse' "
             f"patternTransform='rotate(45)'><rect width='6' height='6' fill='{KIND_COLOURS[DROPPED]}'/>"
             "<line x1='0' y1='0' x2='0' y2='6' stroke='#888' stroke-width='2'/></pattern></defs>"]
    for i in range(int(round(y_max / step)) + 1):
        ty = y(i * step)
        parts.append(f"<line x1='{_LEFT}' y1='{ty:.1f}' x2='{_WIDTH - _RIGHT}' y2='{ty:.1f}' stroke='#e5e5e5'/>"
                     f"<text x='{_LEFT - 6}' y='{ty + 4:.1f}' text-anchor='end' fill='#555'>{i * step:,.0f}</text>")
    slot = plot_w / max(len(bars), 1)
    bar_w = max(slot * 0.8, 0.5)
    label_every = max(1, math.ceil(len(bars) / _MAX_X_LABELS))
    for n, bar in enumerate(bars):
        x = _LEFT + n * slot + (slot - bar_w) / 2
        level = bar.run_total_before if cumulative else 0
        parts.append(f"<g class='rlmlab-bar' data-iteration='{bar.iteration}'>")
        for seg in bar.segments:
            y0, y1 = y(level), y(level + seg.tokens)
            fill = f"url(#{_HATCH_ID})" if seg.kind == DROPPED else _colour(seg.kind)
            parts.append(f"<rect class='rlmlab-seg' data-kind='{seg.kind}' data-tokens='{seg.tokens}' "
                         f"x='{x:.2f}' y='{y1:.2f}' width='{bar_w:.2f}' height='{max(y0 - y1, 0):.2f}' "
                         f"fill='{fill}'><title>{esc(_segment_title(bar, seg, budget_tokens))}</title></rect>")
            level += seg.tokens
        parts.append("</g>")
        if n % label_every == 0:
            parts.append(f"<text x='{x + bar_w / 2:.1f}' y='{_HEIGHT - _BOTTOM + 14}' text-anchor='middle' "
                         f"fill='#555'>{bar.iteration}</text>")
    parts.append(f"<line x1='{_LEFT}' y1='{_TOP + plot_h}' x2='{_WIDTH - _RIGHT}' y2='{_TOP + plot_h}' "
                 "stroke='#888'/>"
                 f"<text x='{_LEFT + plot_w / 2:.1f}' y='{_HEIGHT - 2}' text-anchor='middle' fill='#555'>"
                 "iteration (0 = before the first)</text>")
    if cumulative and budget_tokens is not None:
        by = y(budget_tokens)
        parts.append(f"<g class='rlmlab-budget-line'><line x1='{_LEFT}' y1='{by:.1f}' x2='{_WIDTH - _RIGHT}' "
                     f"y2='{by:.1f}' stroke='#C00' stroke-width='1.5' stroke-dasharray='6 3'/>"
                     f"<text x='{_WIDTH - _RIGHT - 4}' y='{by - 4:.1f}' text-anchor='end' fill='#C00'>"
                     f"budget {budget_tokens:,}</text><title>run budget: {budget_tokens:,} tokens</title></g>")
    if not bars:
        parts.append(f"<text x='{_LEFT + plot_w / 2:.1f}' y='{_TOP + plot_h / 2:.1f}' text-anchor='middle' "
                     "fill='#888'>no events logged yet</text>")
    parts.append("</svg>")
    return "".join(parts)


def header_html(summary: ContextTraceSummary) -> str:
    """One line: tokens against the budget, percent used, and what the ring buffer dropped."""
    over = " · <b style='color:#C00'>over budget</b>" if summary.over_budget else ""
    colour = "#C00" if summary.dropped else "#555"
    return (f"<div class='rlmlab-budget-header'>{FIGURES['trace_tokens'].label} <b>{summary.total_tokens:,}</b> / "
            f"{summary.budget_tokens:,} {FIGURES['trace_budget'].label} · <b>{summary.budget_used_percent:.1f}%</b> "
            f"of budget used{over} · "
            f"<span style='color:{colour}'>{summary.dropped:,} event{'s' if summary.dropped != 1 else ''} "
            f"dropped by the ring buffer</span> ({summary.events_logged:,} logged, {summary.events_kept:,} kept)"
            "</div>")


def legend_html(summary: ContextTraceSummary, bars: list[IterationBar]) -> str:
    """A colour swatch per kind with its run total (exact), plus DROPPED when any bar has that segment."""
    items = [(kind, f"{summary.tokens_by_kind[kind]:,} tokens · {summary.events_by_kind[kind]:,} events")
             for kind in summary.tokens_by_kind if summary.events_by_kind[kind]]
    dropped = sum(s.tokens for b in bars for s in b.segments if s.kind == DROPPED)
    if dropped:
        items.append((DROPPED, f"{dropped:,} tokens, kinds unknown"))
    swatches = "".join(
        f"<span class='rlmlab-legend-item' data-kind='{kind}' style='margin-right:12px;white-space:nowrap'>"
        f"<span style='display:inline-block;width:10px;height:10px;background:{KIND_COLOURS[kind]};"
        f"margin-right:4px;vertical-align:middle'></span>{esc(kind)} <span style='color:#777'>{esc(what)}</span>"
        "</span>" for kind, what in items)
    return f"<div class='rlmlab-budget-legend'>{swatches}</div>"


def _depths(bars: list[IterationBar]) -> dict[int, tuple[int, int]]:
    """depth -> (tokens, runs) over the bars of :func:`depth_bars`."""
    out: dict[int, tuple[int, int]] = {}
    for bar in bars:
        for seg in bar.segments:
            d = int(seg.kind.removeprefix("depth_"))
            tokens, runs = out.get(d, (0, 0))
            out[d] = (tokens + seg.tokens, runs + (seg.events if d else 0))
    return dict(sorted(out.items()))


def depth_header_html(bars: list[IterationBar]) -> str:
    """The line under the header of a chart stacked by depth: the tree's tokens, and each depth's."""
    depths = _depths(bars)
    parts = " · ".join(f"depth {d} {tokens:,}"
                       + (" (this run)" if not d else f" in {runs:,} run{'s' if runs != 1 else ''}")
                       for d, (tokens, runs) in depths.items())
    return (f"<div class='rlmlab-budget-depths'>stacked by depth: the tree's {FIGURES['trace_tokens'].label} "
            f"<b>{sum(t for t, _ in depths.values()):,}</b> ({parts}); a sub-run's stand in the iteration that "
            "started its branch; each run has its own trace budget, so no budget line</div>")


def depth_legend_html(bars: list[IterationBar]) -> str:
    """A colour swatch per depth with its tokens and runs."""
    swatches = "".join(
        f"<span class='rlmlab-legend-item' data-kind='{depth_kind(d)}' style='margin-right:12px;white-space:nowrap'>"
        f"<span style='display:inline-block;width:10px;height:10px;background:{_colour(depth_kind(d))};"
        f"margin-right:4px;vertical-align:middle'></span>depth {d} <span style='color:#777'>{tokens:,} tokens · "
        + ("this run" if not d else f"{runs:,} sub-run{'s' if runs != 1 else ''}") + "</span></span>"
        for d, (tokens, runs) in _depths(bars).items())
    return f"<div class='rlmlab-budget-legend'>{swatches}</div>"


def _trace_from_file(path: Path) -> "tuple[ContextTrace, list[Trajectory]]":
    import json

    from rlmlab.jupyter._explorer import load_trajectory, trajectory_file

    if path.is_dir() or path.suffix == ".jsonl":
        file = trajectory_file(path)
        traj = load_trajectory(file)
        if traj.context_trace is None:
            raise ValueError(f"{file}: no context_trace line (the run was written before the context tracer)")
        return traj.context_trace, traj.children
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    d = json.loads(path.read_text(encoding="utf-8"))
    try:
        return ContextTrace.from_dict({k: v for k, v in d.items() if k != "type"}), []
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{path}: not a ContextTrace.to_dict() JSON ({exc!r})") from None


class BudgetTimeline(RLMLabWidget):
    """Stacked token bars per iteration of a :class:`ContextTrace`, by event kind, against its budget.

    ``live=True`` subscribes to the trace: each logged event re-renders the view, at most once per
    ``throttle_ms`` milliseconds; an event inside that window is shown by a trailing render when the window
    ends (a timer thread), so the view is never more than ``throttle_ms`` behind. :meth:`close` unsubscribes
    and renders once more. ``renders`` counts renders, for tests and benchmarks.

    ``children``: the sub-runs of the run the trace belongs to (``Trajectory.children``); given, the bars stack
    by depth (:func:`depth_bars`) instead of by kind. :meth:`from_trajectory` and :meth:`from_file` pass them.
    """

    css_name = "rlmlab-budget"

    def __init__(self, trace: ContextTrace, *, live: bool = False, throttle_ms: float = 200.0,
                 mode: str = "cumulative", children: "Sequence[Trajectory]" = ()):
        super().__init__()
        if throttle_ms < 0:
            raise ValueError(f"throttle_ms: {throttle_ms}; must be 0 or more milliseconds")
        if mode not in MODES:
            raise ValueError(f"mode: {mode!r}; use one of {', '.join(MODES)}")
        self.trace, self.mode, self.throttle_ms = trace, mode, throttle_ms
        self.children = list(children)
        self.renders = 0
        self._render_lock = threading.Lock()  # the logging thread and the trailing timer may both render
        self._state_lock = threading.Lock()
        self._dirty = False
        self._last_render = 0.0  # time.monotonic() of the last render
        self._timer: threading.Timer | None = None
        self._unsubscribe: Callable[[], None] | None = None

        self.header = W.HTML()
        self.modes = W.ToggleButtons(options=[("cumulative", "cumulative"), ("per iteration", "per_iteration")],
                                     value=mode, tooltips=["run total against the budget",
                                                           "each iteration from zero (no budget line)"])
        self.modes.style.button_width = "110px"
        self.modes.observe(lambda change: self.set_mode(change["new"]), names="value")
        self.chart = W.HTML()
        self.legend = W.HTML()
        self.view.children = [self.header, self.modes, self.chart, self.legend]
        self.refresh()
        if live:
            self._unsubscribe = trace.subscribe(self._on_event)

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> "BudgetTimeline":
        """From a run directory or its trajectory.jsonl (the ``context_trace`` line), or a JSON file holding
        :meth:`ContextTrace.to_dict`. FileNotFoundError if missing; ValueError if it holds no trace."""
        trace, children = _trace_from_file(Path(path))
        return cls(trace, children=children, **kwargs)

    @classmethod
    def from_trajectory(cls, traj: "Trajectory", **kwargs: Any) -> "BudgetTimeline":
        """The timeline of a finished run (stacked by depth when it has sub-runs); ValueError without a trace."""
        if traj.context_trace is None:
            raise ValueError(f"run {traj.run_id}: no context trace (written before the context tracer)")
        return cls(traj.context_trace, children=traj.children, **kwargs)

    @property
    def by_depth(self) -> bool:
        """True when the bars stack the run's tree by depth (it has sub-runs)."""
        return bool(self.children)

    def _parts(self, summary: ContextTraceSummary) -> tuple[str, str, str]:
        """(header, chart, legend) HTML as the trace is now."""
        if self.by_depth:
            bars = depth_bars(self.trace, self.children, summary)
            return (header_html(summary) + depth_header_html(bars), timeline_svg(bars, None, self.mode),
                    depth_legend_html(bars))
        bars = timeline_bars(self.trace, summary)
        return (header_html(summary), timeline_svg(bars, summary.budget_tokens, self.mode),
                legend_html(summary, bars))

    @property
    def live(self) -> bool:
        return self._unsubscribe is not None

    def tracks_static(self) -> bool:
        return not self.live  # while following a run the view renders often; close() sends the final state

    # -- state and handlers ------------------------------------------------------------------------------

    def set_mode(self, mode: str) -> None:
        """Switch between "cumulative" (with the budget line) and "per_iteration"; ValueError otherwise."""
        if mode not in MODES:
            raise ValueError(f"mode: {mode!r}; use one of {', '.join(MODES)}")
        self.mode = mode
        if self.modes.value != mode:
            self.modes.value = mode  # its observer calls back here; the render below is the only one
            return
        self.refresh()

    def _on_event(self, event: ContextEvent) -> None:
        now = time.monotonic()
        with self._state_lock:
            self._dirty = True
            wait = self.throttle_ms / 1000 - (now - self._last_render)
            if wait > 0 and self._timer is None:
                self._timer = threading.Timer(wait, self._trailing_render)
                self._timer.daemon = True
                self._timer.start()
        if wait <= 0:
            self.refresh()

    def _trailing_render(self) -> None:
        with self._state_lock:
            self._timer = None
            dirty = self._dirty
        if dirty:
            self.refresh()

    def refresh(self) -> None:
        """Re-render header, chart and legend from the trace as it is now."""
        with self._render_lock:
            with self._state_lock:
                self._dirty = False  # an event logged while rendering sets it again
            self.header.value, self.chart.value, self.legend.value = self._parts(self.trace.summary())
            self.renders += 1
            self._last_render = time.monotonic()

    def close(self) -> None:
        """Stop following the trace (idempotent) and render its final state."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        with self._state_lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self.refresh()

    # -- static form -------------------------------------------------------------------------------------

    def static_html(self) -> str:
        summary = self.trace.summary()
        rows = [[kind, f"{summary.events_by_kind[kind]:,}", f"{tokens:,}",
                 f"{100.0 * tokens / summary.budget_tokens:.1f}%"]
                for kind, tokens in summary.tokens_by_kind.items() if summary.events_by_kind[kind]]
        if self.by_depth:
            view = ("cumulative: the tree's running total" if self.mode == "cumulative" else "per iteration") + (
                ", stacked by depth; the table: this run's own tokens by kind")
        else:
            view = "cumulative: run total against the budget" if self.mode == "cumulative" else "per iteration"
        header, chart, legend = self._parts(summary)
        return (header + f"<div style='color:#777'>{esc(view)}</div>" + chart + legend
                + html_table(["kind", "events", FIGURES["trace_tokens"].label, "% of budget"], rows,
                             css_class="rlmlab-budget-kinds"))

    def __repr__(self) -> str:
        depth = f" by depth over {len(self.children)} sub-run(s)" if self.by_depth else ""
        return f"<BudgetTimeline {self.trace!r}{depth}{' live' if self.live else ''}>"
