"""BudgetTimeline: a ContextTrace's tokens per iteration as stacked bars by event kind, against the budget.

The trace's budget is for the whole run (``budget_used_percent = 100 * total_tokens / budget_tokens``), so the
default "cumulative" view is a waterfall: iteration i's bar starts where the run total stood before it and rises
by that iteration's tokens, its top is the run total after it, and the dashed horizontal line is the budget.
The "per iteration" view stands every bar on zero to compare iterations; it has no budget line, because the
trace defines no per-iteration budget.

Tokens of events the ring buffer dropped still count in the trace's per-iteration totals, but their kinds are
gone; they fill a grey hatched "dropped" segment so every bar keeps its exact height.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import ipywidgets as W

from rlmlab._figures import FIGURES
from rlmlab.jupyter._widget import RLMLabWidget, esc, html_table
from rlmlab.trace import ContextEvent, ContextTrace, ContextTraceSummary, EventKind

__all__ = ["BudgetTimeline", "IterationBar", "BarSegment", "timeline_bars", "timeline_svg", "KIND_COLOURS",
           "DROPPED", "MODES"]

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


def _nice_step(span: float, ticks: int = 4) -> float:
    """A 1, 2 or 5 times a power of ten step giving about ``ticks`` gridlines over ``span``."""
    raw = max(span, 1) / ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _segment_title(bar: IterationBar, seg: BarSegment, budget: int) -> str:
    if seg.kind == DROPPED:
        what = f"dropped events (kinds unknown) · iteration {bar.iteration} · {seg.tokens:,} tokens"
    else:
        what = (f"{seg.kind} · iteration {bar.iteration} · {seg.tokens:,} tokens · "
                f"{seg.events:,} event{'s' if seg.events != 1 else ''}")
    return (f"{what}\niteration total {bar.tokens:,} tokens · run total after it {bar.run_total_after:,} "
            f"({100.0 * bar.run_total_after / budget:.1f}% of budget)")


def timeline_svg(bars: list[IterationBar], budget_tokens: int, mode: str = "cumulative") -> str:
    """Inline SVG of the bars; hovering a segment shows its ``<title>``. ``mode`` is one of MODES."""
    if mode not in MODES:
        raise ValueError(f"mode: {mode!r}; use one of {', '.join(MODES)}")
    cumulative = mode == "cumulative"
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM
    if cumulative:
        top = max([budget_tokens] + [b.run_total_after for b in bars])
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
            fill = f"url(#{_HATCH_ID})" if seg.kind == DROPPED else KIND_COLOURS[seg.kind]
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
    if cumulative:
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


def _trace_from_file(path: Path) -> ContextTrace:
    import json

    from rlmlab.jupyter._explorer import load_trajectory, trajectory_file

    if path.is_dir() or path.suffix == ".jsonl":
        file = trajectory_file(path)
        trace = load_trajectory(file).context_trace
        if trace is None:
            raise ValueError(f"{file}: no context_trace line (the run was written before the context tracer)")
        return trace
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    d = json.loads(path.read_text(encoding="utf-8"))
    try:
        return ContextTrace.from_dict({k: v for k, v in d.items() if k != "type"})
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{path}: not a ContextTrace.to_dict() JSON ({exc!r})") from None


class BudgetTimeline(RLMLabWidget):
    """Stacked token bars per iteration of a :class:`ContextTrace`, by event kind, against its budget.

    ``live=True`` subscribes to the trace: each logged event re-renders the view, at most once per
    ``throttle_ms`` milliseconds; an event inside that window is shown by a trailing render when the window
    ends (a timer thread), so the view is never more than ``throttle_ms`` behind. :meth:`close` unsubscribes
    and renders once more. ``renders`` counts renders, for tests and benchmarks.
    """

    css_name = "rlmlab-budget"

    def __init__(self, trace: ContextTrace, *, live: bool = False, throttle_ms: float = 200.0,
                 mode: str = "cumulative"):
        super().__init__()
        if throttle_ms < 0:
            raise ValueError(f"throttle_ms: {throttle_ms}; must be 0 or more milliseconds")
        if mode not in MODES:
            raise ValueError(f"mode: {mode!r}; use one of {', '.join(MODES)}")
        self.trace, self.mode, self.throttle_ms = trace, mode, throttle_ms
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
        return cls(_trace_from_file(Path(path)), **kwargs)

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
            summary = self.trace.summary()
            bars = timeline_bars(self.trace, summary)
            self.header.value = header_html(summary)
            self.chart.value = timeline_svg(bars, summary.budget_tokens, self.mode)
            self.legend.value = legend_html(summary, bars)
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
        bars = timeline_bars(self.trace, summary)
        rows = [[kind, f"{summary.events_by_kind[kind]:,}", f"{tokens:,}",
                 f"{100.0 * tokens / summary.budget_tokens:.1f}%"]
                for kind, tokens in summary.tokens_by_kind.items() if summary.events_by_kind[kind]]
        view = "cumulative: run total against the budget" if self.mode == "cumulative" else "per iteration"
        return (header_html(summary) + f"<div style='color:#777'>{esc(view)}</div>"
                + timeline_svg(bars, summary.budget_tokens, self.mode) + legend_html(summary, bars)
                + html_table(["kind", "events", FIGURES["trace_tokens"].label, "% of budget"], rows,
                             css_class="rlmlab-budget-kinds"))

    def __repr__(self) -> str:
        return f"<BudgetTimeline {self.trace!r}{' live' if self.live else ''}>"
