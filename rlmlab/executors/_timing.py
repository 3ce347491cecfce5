"""Where a run's wall time went: the per-task time breakdown written in every trajectory.

The LM parts come from each call's :class:`rlmlab.lm.CallTiming` (llama.cpp's own perf counters: prefill and
decode; sampling with grammar masking is the rest of the engine's time); the REPL parts from a
:class:`RunClock` the interpreter and the executor feed; DSPy's and the harness's share is what is left.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any, Iterator

from rlmlab.lm import LMCall
from rlmlab.records import Record

__all__ = ["RunClock", "TimeBreakdown", "time_breakdown", "TIME_PARTS"]

# The parts of TimeBreakdown that add up to its wall time, in the order they are shown, with a short label.
TIME_PARTS = {
    "prefill_ms": "prefill", "decode_ms": "decode", "sampling_ms": "sampling + grammar",
    "lm_other_ms": "LM call overhead", "tools_ms": "tools", "repl_ms": "REPL code",
    "worker_start_ms": "worker start", "overhead_ms": "DSPy + harness",
}


class RunClock:
    """Milliseconds spent per kind of work during a run, added to from any thread.

    Kinds: ``tools`` (registered tools the code called), ``code`` (step code in the worker, tools and sub-LLM
    calls included), ``worker_start`` (starting the worker and replaying its setup).
    """

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self._lock = threading.Lock()

    def add(self, kind: str, ms: float) -> None:
        with self._lock:
            self.ms[kind] = self.ms.get(kind, 0.0) + ms

    def get(self, kind: str) -> float:
        with self._lock:
            return self.ms.get(kind, 0.0)

    @contextmanager
    def timing(self, kind: str, exclude: tuple[str, ...] = ()) -> Iterator[None]:
        """Time the block as ``kind``, less what was added to the ``exclude`` kinds inside it (nested work
        that is counted under its own kind)."""
        before = sum(self.get(k) for k in exclude)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            nested = sum(self.get(k) for k in exclude) - before
            self.add(kind, max(0.0, (time.perf_counter() - t0) * 1000 - nested))


@dataclass(frozen=True)
class TimeBreakdown(Record):
    """One run's wall time in parts, milliseconds; the parts of :data:`TIME_PARTS` add up to ``wall_ms``.

    ``prefill_ms``/``decode_ms``: llama.cpp's prompt and generation evaluation (perf counters);
    ``sampling_ms``: the rest of the engine's time (sampling, grammar masking, the binding's per-token Python);
    ``lm_other_ms``: LM call time outside the engine (DSPy's LM wrapper; all of a call's time for engines
    without perf counters, such as API models); ``tools_ms``: registered tools; ``repl_ms``: the rest of the
    step code's time in the worker (sub-LLM calls, counted under the LM parts, excluded); ``worker_start_ms``;
    ``overhead_ms``: the remainder (DSPy's adapter formatting and parsing, the harness), never below 0.
    Token counts cover the run's LM calls (main and sub): ``cached_tokens`` of ``prompt_tokens`` came from
    llama.cpp's prefix cache; ``forced_tokens`` of the completion tokens were forced by the grammar and
    fast-forwarded (evaluated in batches), the other ``decode_tokens`` sampled.
    """

    wall_ms: float
    prefill_ms: float = 0.0
    decode_ms: float = 0.0
    sampling_ms: float = 0.0
    lm_other_ms: float = 0.0
    tools_ms: float = 0.0
    repl_ms: float = 0.0
    worker_start_ms: float = 0.0
    overhead_ms: float = 0.0
    lm_calls: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    prefill_tokens: int = 0
    decode_tokens: int = 0
    forced_tokens: int = 0
    timed_calls: int = 0  # calls with the engine's perf counters (the rest count whole under lm_other_ms)

    @property
    def cached_share(self) -> float | None:
        """Prompt tokens served from the prefix cache / prompt tokens sent (None when none were sent)."""
        return round(self.cached_tokens / self.prompt_tokens, 4) if self.prompt_tokens else None

    def parts(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in TIME_PARTS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TimeBreakdown":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def time_breakdown(wall_ms: float, calls: list[LMCall], clock: RunClock | None) -> TimeBreakdown:
    """The breakdown of a run that took ``wall_ms`` and made ``calls``, with what ``clock`` measured."""
    timed = [c.timing for c in calls if c.timing]
    lm_ms = sum(c.latency_s for c in calls) * 1000
    engine = sum(t["engine_ms"] for t in timed)
    prefill, decode = sum(t["prefill_ms"] for t in timed), sum(t["decode_ms"] for t in timed)
    sub_ms = sum(c.latency_s for c in calls if c.role == "sub") * 1000
    clock = clock or RunClock()
    tools, worker = clock.get("tools"), clock.get("worker_start")
    repl = max(0.0, clock.get("code") - tools - sub_ms)
    parts = {"prefill_ms": prefill, "decode_ms": decode, "sampling_ms": max(0.0, engine - prefill - decode),
             "lm_other_ms": max(0.0, lm_ms - engine), "tools_ms": tools, "repl_ms": repl, "worker_start_ms": worker}
    parts["overhead_ms"] = max(0.0, wall_ms - sum(parts.values()))
    return TimeBreakdown(wall_ms=round(wall_ms, 1), **{k: round(v, 1) for k, v in parts.items()},
                         lm_calls=len(calls), prompt_tokens=sum(c.input_tokens for c in calls),
                         cached_tokens=sum(t["cached_tokens"] for t in timed),
                         prefill_tokens=sum(t["prefill_tokens"] for t in timed),
                         decode_tokens=sum(t["decode_tokens"] for t in timed),
                         forced_tokens=sum(t.get("forced_tokens", 0) for t in timed), timed_calls=len(timed))
