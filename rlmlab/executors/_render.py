"""Terminal rendering of a trajectory (rich)."""

from __future__ import annotations

from typing import Any

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
    for col, justify in [("#", "right"), ("code (first line)", "left"), ("stdout chars", "right"),
                         ("vars chars", "right"), ("tools", "right"), ("large", "right"), ("sub-LLM", "right"),
                         ("prompt chars", "right"), ("tokens in/out", "right"), ("ms", "right")]:
        table.add_column(col, justify=justify)
    for it in traj.iterations:
        lk = it.leakage
        table.add_row(str(it.index), _first_line(it.code) or "[dim](no code)[/]", f"{lk.stdout_chars:,}",
                      f"{lk.variables_info_chars:,}", str(lk.tool_calls), str(lk.large_returns),
                      str(lk.sub_llm_calls), f"{lk.prompt_chars:,}", f"{it.input_tokens:,}/{it.output_tokens:,}",
                      f"{it.elapsed_ms:,}")
    return table


def trajectory_summary(traj: Trajectory) -> Any:
    """Iteration table, context-trace table (when the run has one) and a result panel, as one rich Group."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    how = "SUBMIT" if traj.submitted else ("error" if traj.error else "extract fallback after max iterations")
    lines = [
        f"query: {traj.query}",
        f"answer ({how}): {_clip(traj.answer)}" if traj.answer is not None else "answer: (none)",
        f"iterations {len(traj.iterations)} · LM calls {traj.lm_calls} · sub-LLM calls {traj.subcalls} · "
        f"tokens {traj.input_tokens:,} in / {traj.output_tokens:,} out · {traj.elapsed_ms / 1000:.1f}s",
        f"off-format model replies salvaged: {traj.salvaged_replies}",
    ]
    if traj.error:
        lines.append(f"error: {traj.error}")
    trace = [traj.context_trace] if traj.context_trace is not None else []
    return Group(trajectory_table(traj), *trace, Panel(Text("\n".join(lines)), title="result"))
