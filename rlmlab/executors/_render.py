"""Terminal rendering of a trajectory (rich)."""

from __future__ import annotations

from typing import Any

from rlmlab._figures import FIGURES, fmt_seconds, label
from rlmlab.executors._trajectory import Trajectory

__all__ = ["trajectory_table", "trajectory_summary"]


def _first_line(text: str, width: int = 60) -> str:
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def _clip(text: str, limit: int = 300) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f" … ({len(text):,} chars)"


def trajectory_table(traj: Trajectory) -> Any:
    """One row per iteration: code, output size, tool calls, leakage counters and tokens."""
    from rich.table import Table

    table = Table(title=f"RLM run {traj.run_id}  ({traj.lm}, context as {traj.context_mode})")
    for col, justify in [("#", "right"), ("code (first line)", "left"), (label("stdout_chars"), "right"),
                         (label("variables_info_chars"), "right"), (label("tool_calls"), "right"),
                         (label("large_returns"), "right"), (label("sub_llm_calls"), "right"),
                         (label("prompt_chars"), "right"), (label("prompt_tokens"), "right"),
                         (label("completion_tokens"), "right"), (FIGURES["elapsed_ms"].heading, "right")]:
        table.add_column(col, justify=justify, overflow="fold")
    for it in traj.iterations:
        lk = it.leakage
        table.add_row(str(it.index), _first_line(it.code) or "[dim](no code)[/]", f"{lk.stdout_chars:,}",
                      f"{lk.variables_info_chars:,}", str(lk.tool_calls), str(lk.large_returns),
                      str(lk.sub_llm_calls), f"{lk.prompt_chars:,}", f"{it.input_tokens:,}", f"{it.output_tokens:,}",
                      fmt_seconds(it.elapsed_ms))
    return table


def trajectory_summary(traj: Trajectory) -> Any:
    """Iteration table, context-trace table (when the run has one) and a result panel, as one rich Group."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    how = "SUBMIT" if traj.submitted else ("error" if traj.error else "interrupted" if traj.interrupted
                                           else "extract fallback after max iterations")
    lines = [
        f"query: {traj.query}",
        f"answer ({how}): {_clip(traj.answer)}" if traj.answer is not None else "answer: (none)",
        f"iterations {len(traj.iterations)} · LM calls {traj.lm_calls} · sub-LLM calls {traj.subcalls} · "
        f"{label('prompt_tokens')} {traj.input_tokens:,} · {label('completion_tokens')} {traj.output_tokens:,} · "
        f"{label('elapsed_ms')} {fmt_seconds(traj.elapsed_ms)}",
        f"off-format model replies salvaged: {traj.salvaged_replies}",
    ]
    if traj.error:
        lines.append(f"error: {traj.error}")
    if traj.interrupted:
        lines.append("interrupted (Ctrl-C): the iterations above are those finished before it")
    if traj.stopped:
        lines.append(f"stopped: {traj.stopped}: the iterations above are those finished before it")
    trace = [traj.context_trace] if traj.context_trace is not None else []
    return Group(trajectory_table(traj), *trace, Panel(Text("\n".join(lines)), title="result"))
