"""TrajectoryExplorer: one executor run (rlm, react, scratchpad) step by step.

A list of iterations ("1 · 3 tool calls · 1,234 LM tokens") with prev/next buttons; for the selected step its
reasoning, its code (highlighted with pygments when importable), output, tool calls, the exact prompt and
completion of each LM call it made (from the run's ``lm_calls.jsonl``) with the step's leakage figures beside
them, and the Turing Protocol rounds that found violations, with their correction; below, the run's final answer.
The header says how the run's token figures relate (see :mod:`rlmlab._figures`). The static form holds every
iteration, each in a collapsed ``<details>``, so nothing is lost without a kernel. A recursive run (rlm_query)
shows its call tree in the header, and each sub-run as a collapsed ``<details>`` in the step that started it
(run id, depth, answer, steps, tokens, seconds), holding its own steps in the same view, nested to any depth.

A run is given as a Trajectory, an agent-run directory (or its trajectory.jsonl), or an *experiment* run
directory with a task id: ``TrajectoryExplorer("runs/E7-...", "code-003", condition="handle")``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from rlmlab._figures import (
    FIGURES, RELATION_KEYS, fmt, fmt_seconds, node_figures, node_outcome, own_calls, resend_note, sub_runs_of,
    token_rows,
)
from rlmlab.jupyter._widget import RLMLabWidget, esc, html_table

if TYPE_CHECKING:  # rlmlab.executors imports dspy; loaded only when a trajectory is read
    from rlmlab.executors import IterationRecord, Trajectory
    from rlmlab.lm import LMCall

__all__ = ["TrajectoryExplorer", "load_trajectory", "trajectory_file", "highlight_code", "step_label",
           "step_html", "calls_html", "figures_html", "resolve_run", "sub_runs_html", "tree_html"]

_PRE = ("margin:2px 0 6px;padding:6px 8px;background:#f6f6f6;border-radius:3px;white-space:pre-wrap;"
        "word-break:break-word;max-height:24em;overflow:auto;font-family:ui-monospace,monospace;font-size:12px")
_H = "margin:8px 0 2px;font-size:13px;font-weight:600"

# IterationLeakage fields in display order; labels come from the one vocabulary (rlmlab._figures).
_LEAKAGE_FIELDS = ["prompt_tokens", "completion_tokens", "prompt_chars", "stdout_chars", "variables_info_chars",
                   "tool_calls", "large_returns", "sub_llm_calls"]


def trajectory_file(path: str | Path) -> Path:
    """The trajectory.jsonl of a run directory, or ``path`` itself if it is a file; FileNotFoundError if
    neither exists."""
    from rlmlab.executors import TRAJECTORY_FILE

    path = Path(path)
    file = path / TRAJECTORY_FILE if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(f"{file}: no trajectory file (give a run directory or its {TRAJECTORY_FILE})")
    return file


def resolve_run(path: str | Path, task: str | None = None, condition: str | None = None,
                rollout: int | None = None) -> tuple[Path, dict[str, Any] | None]:
    """The agent-run directory (or trajectory file) that ``path`` names, and the experiment results row when
    ``path`` is an experiment run directory (then ``task`` is needed; see ``experiments._runs.find_row``).
    ValueError for an experiment run without a task id, or a task id that fits no row or several."""
    path = Path(path)
    if path.is_dir() and (path / "results.jsonl").is_file():
        from rlmlab.experiments import find_row, row_trajectory_dir, run_rows

        if task is None:
            tasks = list(dict.fromkeys(r["task_id"] for r in run_rows(path)))
            example = tasks[0] if tasks else "TASK"
            raise ValueError(f"{path} is an experiment run ({len(tasks)} tasks: {', '.join(tasks[:6])}"
                             f"{', ...' if len(tasks) > 6 else ''}); give a task id, e.g. "
                             f"TrajectoryExplorer(run_dir, {example!r}), or browse it with RunBrowser(run_dir)")
        row = find_row(path, task, condition, rollout)
        return row_trajectory_dir(path, row), row
    if task is not None:
        raise ValueError(f"{path} is not an experiment run directory (no results.jsonl), so a task id means nothing")
    return path, None


def load_trajectory(source: "Trajectory | str | Path", task: str | None = None, *, condition: str | None = None,
                    rollout: int | None = None) -> "Trajectory":
    """A Trajectory as given, or read from a run directory / trajectory.jsonl (``Trajectory.read_jsonl``), or
    the trajectory of ``task`` in an experiment run directory."""
    from rlmlab.executors import Trajectory

    if isinstance(source, Trajectory):
        return source
    if isinstance(source, (str, Path)):
        path, _ = resolve_run(source, task, condition, rollout)
        return Trajectory.read_jsonl(trajectory_file(path))
    raise TypeError(f"expected a Trajectory, a run directory or a trajectory.jsonl path, got {type(source).__name__}")


def load_calls(path: str | Path) -> "list[LMCall]":
    """The LM calls stored beside a trajectory ([] for runs written before calls were kept)."""
    from rlmlab.lm import CALLS_FILE, read_calls

    path = Path(path)
    return read_calls((path if path.is_dir() else path.parent) / CALLS_FILE)


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
    """The iteration list's entry: "3 · 2 tool calls · 1,234 LM tokens", plus "· Turing ×n" if rounds found
    violations. LM tokens: the step's prompt tokens sent plus completion tokens."""
    n = len(it.tool_calls)
    turing = f" · Turing ×{len(it.turing)}" if it.turing else ""
    subs = f" · {len(it.children)} sub-run{'s' if len(it.children) != 1 else ''}" if it.children else ""
    return (f"{it.index} · {n} tool call{'s' if n != 1 else ''} · {step_tokens(it):,} {FIGURES['lm_tokens'].label}"
            f"{subs}{turing}")


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
    rows = [[FIGURES[name].label, f"{getattr(it.leakage, name):,}"] for name in _LEAKAGE_FIELDS]
    rows.append([FIGURES["lm_tokens"].label, f"{step_tokens(it):,}"])
    if context_tokens is not None:
        rows.append([f"{FIGURES['trace_tokens'].label} added", f"{context_tokens:,}"])
    rows.append([FIGURES["elapsed_ms"].label, fmt_seconds(it.elapsed_ms)])
    return html_table(["figure", "value"], rows, css_class="rlmlab-leakage")


def _message_html(m: dict[str, str]) -> str:
    content = m.get("content", "")
    return (f"<div class='rlmlab-message' data-role='{esc(m.get('role'))}' style='color:#555;margin-top:4px'>"
            f"{esc(m.get('role'))} ({len(content):,} chars)</div>{_pre(content)}")


def calls_html(calls: "list[LMCall]") -> str:
    """Each LM call: its figures, the exact messages sent (a collapsed ``<details>``) and the completion."""
    if not calls:
        return "<div style='color:#888'>no LM calls recorded (runs written before calls were kept have none)</div>"
    out = []
    for n, c in enumerate(calls, 1):
        figures = (f"{c.input_tokens:,} {FIGURES['prompt_tokens'].label} · {c.output_tokens:,} "
                   f"{FIGURES['completion_tokens'].label} · {c.prompt_chars:,} {FIGURES['prompt_chars'].label} · "
                   f"{c.latency_s:.1f} s")
        error = f"<div style='color:#C00'><b>failed</b>: {esc(c.error)}</div>" if c.error else ""
        messages = c.messages or []
        prompt = ("".join(_message_html(m) for m in messages) if messages
                  else "<div style='color:#888'>prompt not recorded</div>")
        completion = "" if c.error else _section("completion", _pre(c.completion or "", "(not recorded)"))
        out.append(f"<div class='rlmlab-lm-call' data-role='{esc(c.role)}' style='border-left:3px solid #0072B2;"
                   f"padding-left:8px;margin:4px 0'><div><b>call {n}</b> · {esc(c.role)} · {esc(figures)}</div>"
                   f"{error}<details class='rlmlab-prompt'><summary style='cursor:pointer'>prompt sent: "
                   f"{len(messages)} message{'s' if len(messages) != 1 else ''}, {c.prompt_chars:,} chars</summary>"
                   f"{prompt}</details>{completion}</div>")
    return "".join(out)


def step_html(it: "IterationRecord", context_tokens: int | None = None, calls: "list[LMCall] | None" = None,
              sub_runs: str = "") -> str:
    """Everything recorded for one step: reasoning, code, output, tool calls, the sub-runs it started
    (``sub_runs``, see :func:`sub_runs_html`), the LM calls (prompt and completion) with the step's figures beside
    them, Turing rounds. ``calls`` None: not known (no section)."""
    figures = _section("figures of this step", _counters_html(it, context_tokens))
    if calls is not None:
        lm = (f"<div style='display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap'>"
              f"<div style='flex:1 1 320px;min-width:0'>{_section(f'LM calls ({len(calls)})', calls_html(calls))}"
              f"</div><div style='flex:0 0 auto'>{figures}</div></div>")
    else:
        lm = figures
    return (f"<div class='rlmlab-step' data-iteration='{it.index}'>"
            + _section("reasoning", _pre(it.reasoning))
            + _section("code", highlight_code(it.code))
            + _section(f"output ({len(it.output):,} chars)", _pre(it.output))
            + _section(f"tool calls ({len(it.tool_calls)})", _tool_calls_html(it.tool_calls))
            + sub_runs + lm
            + _section(f"Turing Protocol ({len(it.turing)} round{'s' if len(it.turing) != 1 else ''} with "
                       "violations)", _turing_html(it.turing))
            + "</div>")


def _node(traj: "Trajectory") -> str:
    return f"{traj.run_id} · depth {traj.depth} · {node_outcome(traj)} · {node_figures(traj)}"


def _run_steps_html(run: "Trajectory", calls: "list[LMCall] | None") -> str:
    """A sub-run's body: its query, each step (collapsed; the same view as a top step, its own sub-runs nested)
    and its final answer."""
    trace = run.context_trace.summary().tokens_by_iteration if run.context_trace is not None else None
    mine = None if calls is None else own_calls(calls, run)
    steps = "".join(
        f"<details class='rlmlab-child-step' data-iteration='{it.index}' style='margin:4px 0'>"
        f"<summary style='cursor:pointer'>step {esc(step_label(it))} · {fmt_seconds(it.elapsed_ms)}</summary>"
        + step_html(it, None if trace is None else trace.get(it.index, 0),
                    None if mine is None else [c for c in mine if c.step == it.index],
                    sub_runs_html(run, it.index, calls)) + "</details>" for it in run.iterations)
    return (f"<div style='color:#555'>query: {esc(run.query)}</div>"
            + (steps or "<div style='color:#888'>no iterations</div>") + sub_runs_html(run, None, calls)
            + final_html(run, mine, title=f"final answer of sub-run {run.run_id}"))


def sub_runs_html(run: "Trajectory", step: int | None, calls: "list[LMCall] | None" = None) -> str:
    """The sub-runs (rlm_query) that ``run``'s step ``step`` started, each a collapsed ``<details>``: its run id,
    depth, answer or why it stopped, steps, tokens (prompt + completion, its sub-runs' included) and seconds;
    open, its steps ("" when the step started none). ``calls``: the whole tree's, each run shows its own. ``step``
    None: those started by a step the run has no record of (it was interrupted or stopped during that step)."""
    subs = sub_runs_of(run, step)
    if not subs:
        return ""
    body = "".join(
        f"<details class='rlmlab-child' data-run-id='{esc(sub.run_id)}' data-depth='{sub.depth}' "
        f"data-parent-step='{step if step is not None else sub.parent_step}' "
        f"style='margin:4px 0;border-left:3px solid #009E73;padding-left:8px'><summary style='cursor:pointer'>"
        f"sub-run {esc(_node(sub))}</summary>{_run_steps_html(sub, calls)}</details>" for sub in subs)
    title = "sub-runs started by this step" if step is not None else "sub-runs of a step with no record"
    return _section(f"{title} ({len(subs)})", body)


def tree_html(traj: "Trajectory") -> str:
    """The call tree of a recursive run as nested lists: each sub-run under the step that started it, with its
    figures ("" for a run without sub-runs)."""
    if not traj.children:
        return ""

    def branch(run: "Trajectory") -> str:
        items = "".join(
            f"<li>{'step ' + str(step) if step is not None else 'a step with no record'}<ul>" + "".join(
                f"<li class='rlmlab-tree-node' data-run-id='{esc(s.run_id)}'>{esc(_node(s))}{branch(s)}</li>"
                for s in subs) + "</ul></li>"
            for step in [*(it.index for it in run.iterations), None] if (subs := sub_runs_of(run, step)))
        return f"<ul style='margin:0;padding-left:18px'>{items}</ul>" if items else ""

    runs = traj.walk()
    return (f"<details class='rlmlab-call-tree' open style='margin:4px 0'><summary style='cursor:pointer'>call "
            f"tree: {len(runs)} runs, each sub-run under the step that started it (tokens: prompt + completion, "
            f"sub-runs' included)</summary><div class='rlmlab-tree-node' data-run-id='{esc(traj.run_id)}'>"
            f"{esc(_node(traj))}</div>{branch(traj)}</details>")


def figures_html(traj: "Trajectory", calls: "list[LMCall] | None" = None) -> str:
    """How the run's token figures relate (``rlmlab._figures.token_rows``), with what each one counts."""
    header, rows = token_rows(traj, calls)
    notes = "".join(f"<li><b>{esc(FIGURES[k].label)}</b>: {esc(FIGURES[k].means)}</li>" for k in RELATION_KEYS)
    note = resend_note(traj)
    return (f"<details class='rlmlab-figures' style='margin:4px 0'><summary style='cursor:pointer'>how the token "
            f"figures relate</summary><ul style='margin:2px 0'>{notes}</ul>"
            + (f"<div>{esc(note)}</div>" if note else "")
            + html_table(header, rows, css_class="rlmlab-figures-table") + "</details>")


def run_header_html(traj: "Trajectory", row: dict[str, Any] | None = None) -> str:
    """The run in three lines: id, executor, model; the query; its figures (with the experiment row's task,
    condition and verdict when it came from an experiment run)."""
    trace = traj.context_trace.summary() if traj.context_trace is not None else None
    budget = (f" · {FIGURES['trace_tokens'].label} {trace.total_tokens:,} / {trace.budget_tokens:,} "
              f"{FIGURES['trace_budget'].label}") if trace else ""
    task = ""
    if row is not None:
        from rlmlab.experiments import outcome

        verdict = outcome(row)
        colour = {"pass": "#080", "fail": "#C60", "error": "#C00"}[verdict]
        task = (f"<div class='rlmlab-explorer-task'>task <b>{esc(row['task_id'])}</b> · condition "
                f"<b>{esc(row['condition'])}</b> · rollout {esc(row.get('rollout', 0))} · "
                f"<b style='color:{colour}'>{verdict}</b> · judge: {esc((row.get('rationale') or '')[:200])}</div>")
    return (f"<div class='rlmlab-explorer-header'>{task}<b>{esc(traj.run_id)}</b> · {esc(traj.executor)} · "
            f"{esc(traj.lm)} · context as {esc(traj.context_mode)}<br>query: {esc(traj.query)}<br>"
            f"{FIGURES['iterations'].label} {len(traj.iterations)} · {FIGURES['lm_calls'].label} {traj.lm_calls} · "
            f"{FIGURES['sub_llm_calls'].label} {traj.subcalls} · {FIGURES['prompt_tokens'].label} {traj.input_tokens:,} · "
            f"{FIGURES['completion_tokens'].label} {traj.output_tokens:,}{budget} · "
            f"{FIGURES['elapsed_ms'].label} {fmt(traj.elapsed_ms, 's')}{_tree_figures(traj)}</div>")


def _tree_figures(traj: "Trajectory") -> str:
    runs = traj.walk()
    if len(runs) == 1:
        return ""
    return (f" · sub-runs {len(runs) - 1} (depth {max(t.depth for t in runs)} the deepest; their tokens are in "
            "the figures above)")


def final_html(traj: "Trajectory", calls: "list[LMCall] | None" = None, title: str = "final answer") -> str:
    """The answer and how the run ended (SUBMIT, extract fallback, or error); LM calls made outside any
    iteration (the extract fallback, a call that failed before its step produced anything) below it."""
    if traj.error:
        how = f"<b style='color:#C00'>error</b>: {esc(traj.error)}"
    elif traj.depth and traj.stopped:  # a sub-run a budget ended
        how = f"stopped: {esc(traj.stopped)}"
    else:
        how = "SUBMIT" if traj.submitted else ("interrupted (Ctrl-C)" if traj.interrupted
                                               else "extract fallback (no SUBMIT)")
    answer = _pre("", "(no answer)") if traj.answer is None else _pre(traj.answer)
    reasoning = _section("final reasoning", _pre(traj.final_reasoning)) if traj.final_reasoning else ""
    outside = [c for c in own_calls(calls or [], traj) if c.step is None]
    extra = _section(f"LM calls outside any iteration ({len(outside)})", calls_html(outside)) if outside else ""
    return ("<div class='rlmlab-final'>" + _section(title, f"<div>ended by {how}</div>{answer}")
            + reasoning + extra + "</div>")


class TrajectoryExplorer(RLMLabWidget):
    """Step through a run: ``TrajectoryExplorer(trajectory)``, ``TrajectoryExplorer("runs/<run-id>")`` (an agent
    run), or ``TrajectoryExplorer("runs/E7-...", "task-id", condition=..., rollout=...)`` (one task of an
    experiment run; ``condition`` is needed when several ran the task, ``rollout`` defaults to the selected one).

    ``calls`` are the run's LM calls (read from ``lm_calls.jsonl`` beside a trajectory file; give them for a
    Trajectory object, or they are not shown). ``row`` is the experiment results row, or None.
    ``position`` is the selected iteration's 0-based position in ``trajectory.iterations`` (None for a run
    with no iterations). :meth:`select` raises IndexError out of range; :meth:`next` and :meth:`prev` stop
    at the ends and return whether they moved.
    """

    css_name = "rlmlab-explorer"

    def __init__(self, trajectory: "Trajectory | str | Path", task: str | None = None, *,
                 condition: str | None = None, rollout: int | None = None, calls: "list[LMCall] | None" = None):
        super().__init__()
        self.row: dict[str, Any] | None = None
        if isinstance(trajectory, (str, Path)):
            path, self.row = resolve_run(trajectory, task, condition, rollout)
            self.trajectory = load_trajectory(path)
            self.calls: list[LMCall] | None = calls if calls is not None else load_calls(trajectory_file(path))
        else:
            if task is not None:
                raise ValueError("a task id selects a task of an experiment run directory, not of a Trajectory")
            self.trajectory = load_trajectory(trajectory)
            self.calls = calls
        iterations = self.trajectory.iterations
        self.position: int | None = 0 if iterations else None
        trace = self.trajectory.context_trace
        self._context_tokens = trace.summary().tokens_by_iteration if trace is not None else None
        self._step_cache: dict[int, str] = {}  # position -> step_html; a record is not edited once written

        self.header = W.HTML(run_header_html(self.trajectory, self.row) + figures_html(self.trajectory, self.calls)
                             + tree_html(self.trajectory))
        self.steps = W.Select(options=[(step_label(it), n) for n, it in enumerate(iterations)],
                              value=self.position, rows=min(max(len(iterations), 2), 10),
                              layout=W.Layout(width="340px", min_width="340px"))
        self.steps.observe(self._on_pick, names="value")
        self.prev_button = W.Button(description="◀ prev", layout=W.Layout(width="80px"))
        self.next_button = W.Button(description="next ▶", layout=W.Layout(width="80px"))
        self.prev_button.on_click(lambda _: self.prev())
        self.next_button.on_click(lambda _: self.next())
        self.where = W.HTML()
        self.detail = W.HTML(layout=W.Layout(flex="1 1 auto", min_width="0"))
        self.final = W.HTML(sub_runs_html(self.trajectory, None, self.calls) + final_html(self.trajectory, self.calls))
        # A fixed-width side column: in an HBox the list would otherwise shrink and cut its labels.
        side = W.VBox([self.steps, W.HBox([self.prev_button, self.next_button]), self.where],
                      layout=W.Layout(flex="0 0 350px", min_width="350px"))
        self.view.children = [self.header, W.HBox([side, self.detail]), self.final]
        self.refresh()

    def _step_html(self, position: int) -> str:
        if position not in self._step_cache:
            it = self.trajectory.iterations[position]
            tokens = None if self._context_tokens is None else self._context_tokens.get(it.index, 0)
            calls = None if self.calls is None else [c for c in own_calls(self.calls, self.trajectory)
                                                     if c.step == it.index]
            self._step_cache[position] = step_html(it, tokens, calls,
                                                   sub_runs_html(self.trajectory, it.index, self.calls))
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
        return (run_header_html(self.trajectory, self.row) + figures_html(self.trajectory, self.calls)
                + tree_html(self.trajectory) + (steps or "<div>no iterations</div>") + self.final.value)

    def __repr__(self) -> str:
        t = self.trajectory
        return f"<TrajectoryExplorer {t.run_id}: {len(t.iterations)} iterations, position {self.position}>"
