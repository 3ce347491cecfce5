"""TrajectoryExplorer: one executor run (rlm, react, scratchpad) step by step.

A list of iterations ("1 · 3 tool calls · 1,234 tok") with prev/next buttons; for the selected step its
reasoning, its code (highlighted with pygments when importable), output, tool calls, leakage counters and the
Turing Protocol rounds that found violations, with their correction; below, the run's final answer. The
static form holds every iteration, each in a collapsed ``<details>``, so nothing is lost without a kernel.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from rlmlab.jupyter._widget import RLMLabWidget, esc, html_table

if TYPE_CHECKING:  # rlmlab.executors imports dspy; loaded only when a trajectory is read
    from rlmlab.executors import IterationRecord, Trajectory

__all__ = ["TrajectoryExplorer", "load_trajectory", "trajectory_file", "highlight_code", "step_label",
           "step_html"]

_PRE = ("margin:2px 0 6px;padding:6px 8px;background:#f6f6f6;border-radius:3px;white-space:pre-wrap;"
        "word-break:break-word;max-height:24em;overflow:auto;font-family:ui-monospace,monospace;font-size:12px")
_H = "margin:8px 0 2px;font-size:13px;font-weight:600"

# IterationLeakage fields in display order, with the unit in the label.
_LEAKAGE_LABELS = [
    ("prompt_chars", "prompt chars (all model messages of the step)"),
    ("prompt_tokens", "prompt tokens"),
    ("completion_tokens", "completion tokens"),
    ("stdout_chars", "stdout chars (before the history cut)"),
    ("variables_info_chars", "variables listing chars"),
    ("tool_calls", "tool calls"),
    ("large_returns", "large returns (tool results over the large-return threshold)"),
    ("sub_llm_calls", "sub-LLM calls"),
]


def trajectory_file(path: str | Path) -> Path:
    """The trajectory.jsonl of a run directory, or ``path`` itself if it is a file; FileNotFoundError if
    neither exists."""
    from rlmlab.executors import TRAJECTORY_FILE

    path = Path(path)
    file = path / TRAJECTORY_FILE if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(f"{file}: no trajectory file (give a run directory or its {TRAJECTORY_FILE})")
    return file


def load_trajectory(source: "Trajectory | str | Path") -> "Trajectory":
    """A Trajectory as given, or read from a run directory / trajectory.jsonl (``Trajectory.read_jsonl``)."""
    from rlmlab.executors import Trajectory

    if isinstance(source, Trajectory):
        return source
    if isinstance(source, (str, Path)):
        return Trajectory.read_jsonl(trajectory_file(source))
    raise TypeError(f"expected a Trajectory, a run directory or a trajectory.jsonl path, got {type(source).__name__}")


def highlight_code(code: str) -> str:
    """Python source as inline-styled HTML (pygments, no CSS classes needed), or escaped in a <pre> without it."""
    if not code.strip():
        return f"<pre style='{_PRE};color:#888'>(no code)</pre>"
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return f"<pre class='rlmlab-code' style='{_PRE}'>{esc(code)}</pre>"
    body = highlight(code, PythonLexer(), HtmlFormatter(noclasses=True, nobackground=True))
    return f"<div class='rlmlab-code' style='{_PRE}'>{body}</div>"


def step_tokens(it: "IterationRecord") -> int:
    """Tokens the step's model call(s) consumed: prompt plus completion."""
    return it.input_tokens + it.output_tokens


def step_label(it: "IterationRecord") -> str:
    """The iteration list's entry: "3 · 2 tool calls · 1,234 tok", plus "· Turing" if a round found violations."""
    n = len(it.tool_calls)
    turing = f" · Turing ×{len(it.turing)}" if it.turing else ""
    return f"{it.index} · {n} tool call{'s' if n != 1 else ''} · {step_tokens(it):,} tok{turing}"


def _section(title: str, body: str) -> str:
    return f"<div style='{_H}'>{esc(title)}</div>{body}"


def _pre(text: str, empty: str = "(empty)") -> str:
    if not text:
        return f"<pre style='{_PRE};color:#888'>{esc(empty)}</pre>"
    return f"<pre style='{_PRE}'>{esc(text)}</pre>"


def _arguments(arguments: Any) -> str:
    try:
        return json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(arguments)


def _tool_calls_html(calls: list[dict[str, Any]]) -> str:
    if not calls:
        return "<div style='color:#888'>none</div>"
    rows = [[c.get("name"), _arguments(c.get("arguments", {})), f"{c.get('result_chars', 0):,}",
             c.get("error") or ""] for c in calls]
    return html_table(["tool", "arguments", "result chars", "error"], rows, css_class="rlmlab-tool-calls")


def _turing_html(rounds: list[dict[str, Any]]) -> str:
    if not rounds:
        return "<div style='color:#888'>no violations</div>"
    out = []
    for r in rounds:
        verdict = ("<b style='color:#C00'>step discarded: its code did not run</b>" if r.get("kill")
                   else "step kept, correction sent to the model")
        reasons = "".join(f"<li>{esc(reason)}</li>" for reason in r.get("reasons", []))
        correction = (_section("correction", _pre(r["correction"])) if r.get("correction")
                      else "<div style='color:#888'>no correction (already sent this round)</div>")
        out.append(f"<div class='rlmlab-turing-round' style='border-left:3px solid #D55E00;padding-left:8px;"
                   f"margin:4px 0'><div><b>{esc(r.get('phase'))}</b> · hooks: "
                   f"{esc(', '.join(r.get('hooks', [])))} · {verdict}</div><ul style='margin:2px 0'>{reasons}</ul>"
                   f"{correction}</div>")
    return "".join(out)


def _counters_html(it: "IterationRecord", context_tokens: int | None) -> str:
    rows = [[label, f"{getattr(it.leakage, name):,}"] for name, label in _LEAKAGE_LABELS]
    rows.append(["elapsed ms", f"{it.elapsed_ms:,}"])
    if context_tokens is not None:
        rows.append(["context-trace tokens logged for this iteration", f"{context_tokens:,}"])
    return html_table(["counter", "value"], rows, css_class="rlmlab-leakage")


def step_html(it: "IterationRecord", context_tokens: int | None = None) -> str:
    """Everything recorded for one step: reasoning, code, output, tool calls, counters, Turing rounds."""
    return (f"<div class='rlmlab-step' data-iteration='{it.index}'>"
            + _section("reasoning", _pre(it.reasoning))
            + _section("code", highlight_code(it.code))
            + _section(f"output ({len(it.output):,} chars)", _pre(it.output))
            + _section(f"tool calls ({len(it.tool_calls)})", _tool_calls_html(it.tool_calls))
            + _section("leakage counters", _counters_html(it, context_tokens))
            + _section(f"Turing Protocol ({len(it.turing)} round{'s' if len(it.turing) != 1 else ''} with "
                       "violations)", _turing_html(it.turing))
            + "</div>")


def run_header_html(traj: "Trajectory") -> str:
    return (f"<div class='rlmlab-explorer-header'><b>{esc(traj.run_id)}</b> · {esc(traj.executor)} · "
            f"{esc(traj.lm)} · context as {esc(traj.context_mode)}<br>query: {esc(traj.query)}<br>"
            f"{len(traj.iterations)} iterations · {traj.lm_calls} LM calls · {traj.subcalls} sub-LLM calls · "
            f"{traj.input_tokens:,} tokens in / {traj.output_tokens:,} out · {traj.elapsed_ms / 1000:.1f}s</div>")


def final_html(traj: "Trajectory") -> str:
    """The answer and how the run ended (SUBMIT, extract fallback, or error)."""
    if traj.error:
        how = f"<b style='color:#C00'>error</b>: {esc(traj.error)}"
    else:
        how = "SUBMIT" if traj.submitted else "extract fallback (no SUBMIT)"
    answer = _pre("", "(no answer)") if traj.answer is None else _pre(traj.answer)
    reasoning = _section("final reasoning", _pre(traj.final_reasoning)) if traj.final_reasoning else ""
    return ("<div class='rlmlab-final'>" + _section("final answer", f"<div>ended by {how}</div>{answer}")
            + reasoning + "</div>")


class TrajectoryExplorer(RLMLabWidget):
    """Step through a run: ``TrajectoryExplorer(trajectory)`` or ``TrajectoryExplorer("runs/<run-id>")``.

    ``position`` is the selected iteration's 0-based position in ``trajectory.iterations`` (None for a run
    with no iterations). :meth:`select` raises IndexError out of range; :meth:`next` and :meth:`prev` stop
    at the ends and return whether they moved.
    """

    css_name = "rlmlab-explorer"

    def __init__(self, trajectory: "Trajectory | str | Path"):
        super().__init__()
        self.trajectory = load_trajectory(trajectory)
        iterations = self.trajectory.iterations
        self.position: int | None = 0 if iterations else None
        trace = self.trajectory.context_trace
        self._context_tokens = trace.summary().tokens_by_iteration if trace is not None else None
        self._step_cache: dict[int, str] = {}  # position -> step_html; a record is not edited once written

        self.header = W.HTML(run_header_html(self.trajectory))
        self.steps = W.Select(options=[(step_label(it), n) for n, it in enumerate(iterations)],
                              value=self.position, rows=min(max(len(iterations), 2), 10),
                              layout=W.Layout(width="300px"))
        self.steps.observe(self._on_pick, names="value")
        self.prev_button = W.Button(description="◀ prev", layout=W.Layout(width="80px"))
        self.next_button = W.Button(description="next ▶", layout=W.Layout(width="80px"))
        self.prev_button.on_click(lambda _: self.prev())
        self.next_button.on_click(lambda _: self.next())
        self.where = W.HTML()
        self.detail = W.HTML(layout=W.Layout(flex="1 1 auto", min_width="0"))
        self.final = W.HTML(final_html(self.trajectory))
        side = W.VBox([self.steps, W.HBox([self.prev_button, self.next_button]), self.where])
        self.view.children = [self.header, W.HBox([side, self.detail]), self.final]
        self.refresh()

    def _step_html(self, position: int) -> str:
        if position not in self._step_cache:
            it = self.trajectory.iterations[position]
            tokens = None if self._context_tokens is None else self._context_tokens.get(it.index, 0)
            self._step_cache[position] = step_html(it, tokens)
        return self._step_cache[position]

    # -- handlers ----------------------------------------------------------------------------------------

    def _on_pick(self, change: dict[str, Any]) -> None:
        if change["new"] is not None and change["new"] != self.position:
            self.select(change["new"])

    def select(self, i: int) -> None:
        """Show the iteration at 0-based position ``i``; IndexError if there is none."""
        n = len(self.trajectory.iterations)
        if not 0 <= i < n:
            raise IndexError(f"iteration position {i}; this run has {n} (0 to {n - 1})" if n
                             else f"iteration position {i}; this run has no iterations")
        self.position = i
        self.refresh()

    def next(self) -> bool:
        """Select the following iteration; False (and no change) at the last."""
        if self.position is None or self.position + 1 >= len(self.trajectory.iterations):
            return False
        self.select(self.position + 1)
        return True

    def prev(self) -> bool:
        """Select the preceding iteration; False (and no change) at the first."""
        if self.position is None or self.position == 0:
            return False
        self.select(self.position - 1)
        return True

    def refresh(self) -> None:
        n = len(self.trajectory.iterations)
        if self.position is None:
            self.detail.value = "<div style='color:#888'>this run has no iterations</div>"
            self.where.value = ""
        else:
            self.detail.value = self._step_html(self.position)
            self.where.value = f"<span style='color:#555'>iteration {self.position + 1} of {n}</span>"
        if self.steps.value != self.position:
            self.steps.value = self.position  # _on_pick sees no change of position and returns
        self.prev_button.disabled = self.position is None or self.position == 0
        self.next_button.disabled = self.position is None or self.position + 1 >= n

    # -- static form -------------------------------------------------------------------------------------

    def static_html(self) -> str:
        steps = "".join(
            f"<details class='rlmlab-iteration' data-iteration='{it.index}' style='margin:4px 0'>"
            f"<summary style='cursor:pointer'>{esc(step_label(it))}</summary>{self._step_html(n)}</details>"
            for n, it in enumerate(self.trajectory.iterations))
        return run_header_html(self.trajectory) + (steps or "<div>no iterations</div>") + final_html(self.trajectory)

    def __repr__(self) -> str:
        t = self.trajectory
        return f"<TrajectoryExplorer {t.run_id}: {len(t.iterations)} iterations, position {self.position}>"
