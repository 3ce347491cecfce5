"""One vocabulary for the numbers rlmlab shows: each figure defined once, with its label, unit and meaning.

Widgets, the CLI, results tables and the docs use :data:`FIGURES` labels, so "prompt tokens sent" means the
same thing in the explorer, ``rlmlab experiment show`` and a results table. How the token figures relate:

- **prompt tokens sent** counts every message of every LM call, by the model's own count. Each call re-sends the
  system prompt and the history so far, so a run's total grows roughly with the square of its iterations.
- **completion tokens** counts what the model wrote back.
- **LM tokens** of a step is the two added up (what the step cost).
- **context-trace tokens** counts each piece of context once, when it entered (the first prompt, each step's
  code, its output, tool results, sub-LLM replies); their running total is what the trace budget bounds.

So for any run, prompt tokens sent >= context-trace tokens (minus the completions logged as code), and the gap is
the re-sending. A leaf module: nothing here imports the rest of rlmlab.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["Figure", "FIGURES", "figure", "label", "fmt", "fmt_tokens", "fmt_seconds", "wilson_interval", "token_rows",
           "resend_note", "RELATION_KEYS", "summary_label", "fmt_delta", "own_calls", "run_ending", "node_outcome",
           "node_figures", "sub_runs_of"]


@dataclass(frozen=True)
class Figure:
    """A number as shown: ``label`` (the one name used everywhere), ``unit``, ``means`` (one sentence).

    ``unit`` decides the format: "tokens" and "chars" (thousands as "12.3k" from 10,000), "s" (given in
    milliseconds, shown in seconds), "share" (0..1 as a percentage), "count" (an integer, or a mean with one
    decimal), "text".
    """

    key: str
    label: str
    unit: str
    means: str

    def format(self, value: Any) -> str:
        return fmt(value, self.unit)

    @property
    def heading(self) -> str:
        """A column heading: the label (formatted values carry their unit: "4.2 s", "12.3k", "50%")."""
        return self.label


_LIST = [
    # tokens
    Figure("prompt_tokens", "prompt tokens sent", "tokens",
           "tokens of every message sent to the LM, summed over calls (the LM's own count); each call re-sends "
           "the system prompt and the history so far"),
    Figure("completion_tokens", "completion tokens", "tokens", "tokens the LM wrote back, summed over calls"),
    Figure("lm_tokens", "LM tokens", "tokens", "prompt tokens sent plus completion tokens: what the calls cost"),
    Figure("trace_tokens", "context-trace tokens", "tokens",
           "tokens that entered the agent's context, each piece counted once when it entered (first prompt, "
           "code, outputs, tool results, sub-LLM replies); the trace budget bounds their running total"),
    Figure("trace_budget", "trace budget", "tokens", "the context trace's budget for the whole run"),
    # characters and leakage counters
    Figure("prompt_chars", "prompt chars", "chars", "characters of every message sent in the step's LM call(s)"),
    Figure("prompt_chars_mean", "prompt chars / iteration", "chars",
           "characters sent to the LM per iteration, averaged over the run's iterations"),
    Figure("stdout_chars", "stdout chars", "chars", "what the step's code printed, before the history cut"),
    Figure("variables_info_chars", "variables listing chars", "chars",
           "the variable listing shown to the model (the largest of the run)"),
    Figure("context_chars", "memory context chars", "chars", "characters of memory injected into the instructions"),
    Figure("tool_calls", "tool calls", "count", "tool calls the step's code made"),
    Figure("large_returns", "large returns", "count", "tool results over the large-return threshold"),
    Figure("sub_llm_calls", "sub-LLM calls", "count", "llm_query prompts the step's code sent"),
    Figure("lm_calls", "LM calls", "count", "calls to the LM (every step, the extract fallback, retries)"),
    Figure("iterations", "iterations", "count", "executor steps (model writes, code runs)"),
    # time and outcome
    Figure("elapsed_ms", "time", "s", "wall-clock time of the run"),
    Figure("latency_s", "latency", "s", "wall-clock time of one LM call"),
    Figure("pass_rate", "pass rate", "share", "tasks whose selected answer the judge passed"),
    Figure("undecided_share", "undecided", "share",
           "tasks whose judge could not decide (neither passed nor failed; not in the pass rate)"),
    Figure("convergence", "converged", "share", "runs whose answer the model SUBMITted, with no error"),
    Figure("fallback", "extract fallback", "share",
           "runs answered only by DSPy's extract fallback (no SUBMIT by the iteration limit)"),
    Figure("success", "pass", "text", "the judge's verdict on the task's selected answer"),
    Figure("tasks", "tasks", "count", "tasks run"),
    Figure("errors", "errors", "count", "runs that ended in an error"),
    Figure("rollouts_per_task", "rollouts / task", "count", "runs per task (N)"),
    Figure("pass_at_1", "pass@1", "share", "mean success over all rollouts"),
    Figure("maj_at_n", "maj@N", "share", "success of the majority answer per task"),
    Figure("pass_at_n", "pass@N", "share", "tasks with any rollout right (an upper bound)"),
    Figure("salvaged", "off-format replies", "count", "replies off DSPy's format that were salvaged"),
    Figure("golden_yield", "golden yield (code)", "share",
           "code-suite rollouts the oracles accept as golden records (other suites have none)"),
]
FIGURES: dict[str, Figure] = {f.key: f for f in _LIST}

# Record fields that hold a figure under another name (trajectories and results rows say input/output tokens).
_ALIASES = {"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens", "mean_salvaged": "salvaged",
            "golden": "golden_yield"}


def figure(key: str) -> Figure:
    """The figure for a record field or summary key: ``"input_tokens"``, ``"mean_input_tokens"`` (the per-task
    mean of it) or a figure key. KeyError for an unknown key."""
    base = key.removeprefix("mean_") if key.startswith("mean_") and key not in _ALIASES else key
    base = _ALIASES.get(base, base)
    if base not in FIGURES:
        raise KeyError(f"no figure {key!r}; known: {', '.join(FIGURES)}")
    return FIGURES[base]


def label(key: str) -> str:
    """The label of a record field or summary key ("mean_input_tokens" -> "prompt tokens sent"); the key itself
    when it names no figure."""
    try:
        return figure(key).label
    except KeyError:
        return key


def fmt_tokens(value: float) -> str:
    """1,234 below 10,000; 12.3k and 1.2M above. Never scientific notation."""
    v = float(value)
    if abs(v) >= 1_000_000:
        return f"{v / 1_000_000:.1f}M"
    if abs(v) >= 10_000:
        return f"{v / 1000:.1f}k"
    return f"{v:,.0f}" if v == int(v) or abs(v) >= 100 else f"{v:,.1f}"


def fmt_seconds(ms: float) -> str:
    """Milliseconds as seconds: "0.4 s", "12.3 s", "6 min 40 s"."""
    s = float(ms) / 1000
    if s >= 600:
        return f"{int(s // 60)} min {int(s % 60)} s"
    return f"{s:.1f} s" if s < 100 else f"{s:.0f} s"


def fmt(value: Any, unit: str = "count") -> str:
    """``value`` formatted for ``unit`` (see :class:`Figure`); None and NaN as "-"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, (int, float)):
        return str(value)
    if unit in ("tokens", "chars"):
        return fmt_tokens(value)
    if unit == "s":
        return fmt_seconds(value)
    if unit == "share":
        return f"{100 * value:.0f}%"
    if float(value) == int(value):
        return f"{int(value):,}"
    return f"{value:,.1f}"


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (95% by default) of a pass rate ``successes / n``; (0, 1) when n is 0.

    Unlike the normal approximation it stays inside [0, 1] and is not zero-width at 0 or n successes.
    """
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def token_rows(traj: Any, calls: list[Any] | None = None) -> tuple[list[str], list[list[str]]]:
    """How a run's token figures relate, per iteration: header and rows of iteration, LM calls, prompt tokens
    sent, completion tokens, LM tokens, context-trace tokens added and so far; then calls outside any iteration
    (extract fallback, sub-LLM calls, a call that failed before its step) and the run's totals.

    ``traj`` is an ``rlmlab.executors.Trajectory`` and ``calls`` its ``LMCall`` list (None: not known); they are
    read by attribute, so this module stays a leaf.
    """
    summary = traj.context_trace.summary() if traj.context_trace is not None else None
    by_it = summary.tokens_by_iteration if summary is not None else {}
    per_step: dict[Any, int] = {}
    for c in own_calls(calls or [], traj):
        per_step[c.step] = per_step.get(c.step, 0) + 1

    def n_calls(step: Any) -> str:
        return "-" if calls is None else f"{per_step.get(step, 0):,}"

    rows, running = [], 0
    if by_it.get(0):
        running += by_it[0]
        rows.append(["before 1 (first prompt)", "-", "-", "-", "-", f"{by_it[0]:,}", f"{running:,}"])
    for it in traj.iterations:
        added = by_it.get(it.index, 0)
        running += added
        rows.append([str(it.index), n_calls(it.index), f"{it.input_tokens:,}", f"{it.output_tokens:,}",
                     f"{it.input_tokens + it.output_tokens:,}", f"{added:,}" if summary else "-",
                     f"{running:,}" if summary else "-"])
    children = getattr(traj, "children", None) or []
    sub_in, sub_out = sum(c.input_tokens for c in children), sum(c.output_tokens for c in children)
    rest_in = traj.input_tokens - sum(it.input_tokens for it in traj.iterations) - sub_in
    rest_out = traj.output_tokens - sum(it.output_tokens for it in traj.iterations) - sub_out
    rest_trace = summary.total_tokens - running if summary else 0
    if rest_in or rest_out or rest_trace or per_step.get(None):
        rows.append(["outside iterations", n_calls(None), f"{rest_in:,}", f"{rest_out:,}", f"{rest_in + rest_out:,}",
                     f"{rest_trace:,}" if summary else "-", f"{summary.total_tokens:,}" if summary else "-"])
    if children:  # their calls and tokens are in the run's totals; their context traces are their own
        n = sum(1 for c in children for _ in c.walk())
        rows.append([f"sub-runs ({n}, rlm_query)", f"{sum(c.lm_calls for c in children):,}", f"{sub_in:,}",
                     f"{sub_out:,}", f"{sub_in + sub_out:,}", "-", "-"])
    rows.append(["run", f"{traj.lm_calls:,}", f"{traj.input_tokens:,}", f"{traj.output_tokens:,}",
                 f"{traj.input_tokens + traj.output_tokens:,}", f"{summary.total_tokens:,}" if summary else "-",
                 f"{summary.total_tokens:,} / {summary.budget_tokens:,} budget" if summary else "-"])
    header = ["iteration", FIGURES["lm_calls"].label, FIGURES["prompt_tokens"].label,
              FIGURES["completion_tokens"].label, FIGURES["lm_tokens"].label,
              f"{FIGURES['trace_tokens'].label} added", f"{FIGURES['trace_tokens'].label} so far"]
    return header, rows


def resend_note(traj: Any) -> str:
    """One sentence comparing the run's prompt tokens sent with its context-trace tokens ("" without a trace). A
    run with sub-runs (rlm_query) compares its whole tree's: each run's prompts, each run's own trace."""
    if traj.context_trace is None or not traj.input_tokens:
        return ""
    runs = traj.walk() if getattr(traj, "children", None) else [traj]
    total = sum(t.context_trace.summary().total_tokens for t in runs if t.context_trace is not None)
    ratio = traj.input_tokens / max(1, total)
    # the explanation holds only when more was sent than traced; below 1 the numbers stand alone
    why = " (every call re-sends the system prompt and the history)" if ratio > 1 else ""
    who = "This run" if len(runs) == 1 else f"This run and its {len(runs) - 1} sub-run{'s' if len(runs) > 2 else ''}"
    return (f"{who} sent {traj.input_tokens:,} prompt tokens for {total:,} context-trace tokens: "
            f"{ratio:.1f}×{why}.")


def own_calls(calls: list[Any], traj: Any) -> list[Any]:
    """The calls ``traj`` made itself. A recursive run's ``lm_calls.jsonl`` holds every call of its tree, each
    with the ``run_id`` of the run that made it; a call without one (written before recursion) is the top run's."""
    mine = traj.run_id
    top = not getattr(traj, "depth", 0)
    return [c for c in calls if getattr(c, "run_id", None) == mine or (top and getattr(c, "run_id", None) is None)]


def sub_runs_of(traj: Any, step: int | None) -> list[Any]:
    """The sub-runs (rlm_query) that step ``step`` of ``traj`` started, in the order the step records them. With
    ``step`` None: those of a step that has no record (a run interrupted, or stopped, while that step ran)."""
    children = getattr(traj, "children", None) or []
    if step is None:
        steps = {it.index for it in traj.iterations}
        listed = {rid for it in traj.iterations for rid in it.children}
        return [c for c in children if c.parent_step not in steps and c.run_id not in listed]
    order = {rid: n for it in traj.iterations if it.index == step for n, rid in enumerate(it.children)}
    mine = [c for c in children if c.parent_step == step or c.run_id in order]
    return sorted(mine, key=lambda c: order.get(c.run_id, len(order)))


def run_ending(traj: Any) -> str:
    """How a run ended, in a few words: "SUBMIT", "extract fallback", "interrupted", "stopped: budget (...)",
    or "error: ..."."""
    if traj.error:
        return f"error: {traj.error}"
    if traj.stopped:
        return f"stopped: {traj.stopped}"
    if traj.interrupted:
        return "interrupted"
    return "SUBMIT" if traj.submitted else "extract fallback"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: max(n - 1, 0)] + "…"


def node_outcome(traj: Any, max_chars: int = 60) -> str:
    """A run's answer, or why it has none, in at most about ``max_chars`` characters: "answer '7291'",
    "answer '42' (extract fallback)", "no answer (stopped: budget (max_tokens))"."""
    ending = run_ending(traj)
    if traj.answer is None:
        return _clip(f"no answer ({ending})", max_chars)
    note = "" if ending == "SUBMIT" else f" ({_clip(ending, 24)})"
    answer = repr(traj.answer)
    room = max(max_chars - len("answer ") - len(note), 8)
    if len(answer) > room:  # cut inside the quotes: 'a long answ…'
        answer = answer[: room - 2] + "…" + answer[-1]
    return f"answer {answer}{note}"


def node_figures(traj: Any) -> str:
    """A run's figures as a node of a recursive run's tree: "2 steps · tokens 3,027 + 80 · 0.3 s" (prompt tokens
    sent + completion tokens of the run and its sub-runs; its wall time)."""
    n = len(traj.iterations)
    return (f"{n} step{'s' if n != 1 else ''} · tokens {traj.input_tokens:,} + {traj.output_tokens:,} · "
            f"{fmt_seconds(traj.elapsed_ms)}")


RELATION_KEYS = ("prompt_tokens", "completion_tokens", "lm_tokens", "trace_tokens")  # the figures token_rows relates


def summary_label(key: str) -> str:
    """The label of an experiment-summary key: a per-task mean says so ("mean_input_tokens" -> "prompt tokens sent /
    task"); figures already per iteration or shares keep their label; an unknown key is returned as is."""
    try:
        fig = figure(key)
    except KeyError:
        return key
    if key.startswith("mean_") and fig.unit != "share" and not fig.label.endswith("/ iteration"):
        return f"{fig.label} / task"
    return fig.label


def fmt_delta(a: Any, b: Any, unit: str) -> tuple[str, str]:
    """(b - a, b / a) formatted for ``unit``: shares as percentage points ("+12 pp"), times in seconds, tokens
    and chars with k; the ratio as "1.25×" ("-" when a is 0 or either is missing)."""
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or isinstance(a, bool) or isinstance(b, bool):
        return "-", "-"
    d = b - a
    sign = "+" if d > 0 else "−" if d < 0 else "±"
    if unit == "share":
        delta = f"{sign}{abs(100 * d):.0f} pp"
    else:
        delta = sign + fmt(abs(d), unit)
    ratio = f"{b / a:.2f}×" if a else "-"
    return delta, ratio
