"""The spec's per-run metrics of one trajectory: convergence, efficiency and prompt leakage."""

from __future__ import annotations

from typing import Any

from rlmlab.executors._trajectory import Trajectory

__all__ = ["trajectory_metrics", "METRIC_FIELDS"]

METRIC_FIELDS = ("converged", "submitted", "fallback", "iterations", "input_tokens", "output_tokens", "lm_calls",
                 "tool_calls", "stdout_chars", "variables_info_chars", "large_returns", "sub_llm_calls", "prompt_chars_mean",
                 "prompt_chars_max", "elapsed_ms", "salvaged", "error", "timing", "decoding")


def trajectory_metrics(traj: Trajectory) -> dict[str, Any]:
    """Counters of one run. ``converged``: an answer the model SUBMITted, and no error; ``fallback``: an answer
    only DSPy's extract fallback produced (the iteration limit was hit without SUBMIT);
    ``variables_info_chars``: the largest variable listing shown; ``prompt_chars_mean``/``_max``: characters
    sent to the model per iteration."""
    its = traj.iterations
    leaks = [it.leakage for it in its]
    prompts = [lk.prompt_chars for lk in leaks]
    return {
        "converged": traj.answer is not None and traj.error is None and bool(traj.submitted),
        "submitted": bool(traj.submitted),
        "fallback": traj.answer is not None and traj.error is None and not traj.submitted,
        "iterations": len(its),
        "input_tokens": traj.input_tokens,
        "output_tokens": traj.output_tokens,
        "lm_calls": traj.lm_calls,
        "tool_calls": sum(lk.tool_calls for lk in leaks),
        "stdout_chars": sum(lk.stdout_chars for lk in leaks),
        "variables_info_chars": max((lk.variables_info_chars for lk in leaks), default=0),
        "large_returns": sum(lk.large_returns for lk in leaks),
        "sub_llm_calls": sum(lk.sub_llm_calls for lk in leaks),
        "prompt_chars_mean": round(sum(prompts) / len(prompts), 1) if prompts else 0.0,
        "prompt_chars_max": max(prompts, default=0),
        "elapsed_ms": traj.elapsed_ms,
        "salvaged": traj.salvaged_replies,  # off-format replies the lenient adapter salvaged
        "error": traj.error,
        "timing": traj.timing,  # where elapsed_ms went (see executors._timing.TimeBreakdown); None if not kept
        "decoding": traj.decoding,  # what the run used: "free" when a grammar was asked of an LM that cannot follow one
    }
