"""LMCall records and the CallRecorder that fills them for any DSPy LM."""

from __future__ import annotations

import contextvars
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from dspy.utils.callback import BaseCallback
from rlmlab.records import Record

__all__ = ["LMCall", "CallRecorder", "call_role", "current_role"]

_ROLE: contextvars.ContextVar[str] = contextvars.ContextVar("rlmlab_lm_role", default="main")


@contextmanager
def call_role(role: str) -> Iterator[None]:
    """Label LM calls made inside the block (for example ``"sub"`` for llm_query sub-calls)."""
    token = _ROLE.set(role)
    try:
        yield
    finally:
        _ROLE.reset(token)


def current_role() -> str:
    return _ROLE.get()


@dataclass(frozen=True)
class LMCall(Record):
    """One LM call: who made it, how big the prompt was, tokens in and out, latency in seconds."""

    model: str
    role: str
    prompt_chars: int
    input_tokens: int
    output_tokens: int
    latency_s: float
    error: str | None = None


def _prompt_chars(inputs: dict[str, Any]) -> int:
    messages = inputs.get("messages") or []
    chars = sum(len(str(m.get("content", ""))) if isinstance(m, dict) else len(str(m)) for m in messages)
    prompt = inputs.get("prompt")
    return chars + (len(prompt) if isinstance(prompt, str) else 0)


class CallRecorder(BaseCallback):
    """Records every call of the LMs it is attached to, in order, thread-safely."""

    def __init__(self) -> None:
        self.calls: list[LMCall] = []
        self._pending: dict[str, tuple[float, Any, int, str]] = {}
        self._lock = threading.Lock()

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        with self._lock:
            self._pending[call_id] = (time.perf_counter(), instance, _prompt_chars(inputs), current_role())

    def on_lm_end(self, call_id: str, outputs: Any, exception: Exception | None = None) -> None:
        with self._lock:
            started = self._pending.pop(call_id, None)
        if started is None:
            return
        t0, instance, chars, role = started
        usage: dict[str, Any] = {}
        history = getattr(instance, "history", None)
        if exception is None and history:
            usage = history[-1].get("usage") or {}
        call = LMCall(
            model=str(getattr(instance, "model", "?")),
            role=role,
            prompt_chars=chars,
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            latency_s=time.perf_counter() - t0,
            error=None if exception is None else f"{type(exception).__name__}: {exception}",
        )
        with self._lock:
            self.calls.append(call)

    def mark(self) -> int:
        """Current position; pass it to :meth:`since` to get the calls made after it."""
        with self._lock:
            return len(self.calls)

    def since(self, mark: int) -> list[LMCall]:
        with self._lock:
            return list(self.calls[mark:])

    def totals(self) -> dict[str, float]:
        with self._lock:
            calls = list(self.calls)
        return {
            "calls": len(calls),
            "input_tokens": sum(c.input_tokens for c in calls),
            "output_tokens": sum(c.output_tokens for c in calls),
            "latency_s": round(sum(c.latency_s for c in calls), 4),
        }
