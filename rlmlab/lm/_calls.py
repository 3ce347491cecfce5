"""LMCall records and the CallRecorder that fills them for any DSPy LM.

A call keeps the exact messages sent and the completion received, so a run's reader can see the prompt the
model actually got; executors write a run's calls to ``lm_calls.jsonl`` beside its trajectory
(:func:`write_calls`, :func:`read_calls`).
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator

from dspy.utils.callback import BaseCallback
from rlmlab.records import Record

__all__ = ["LMCall", "CallTiming", "Completion",
           "note_timing", "CallRecorder", "call_role", "call_scope", "CallScope", "current_scope", "current_role",
           "write_calls", "read_calls", "CALLS_FILE"]

CALLS_FILE = "lm_calls.jsonl"  # beside trajectory.jsonl in a run directory

_ROLE: contextvars.ContextVar[str] = contextvars.ContextVar("rlmlab_lm_role", default="main")
# The engine's timing of the call in progress: set by the engine, read by the CallRecorder's on_lm_end, which
# DSPy runs in the same thread and context as the call (a contextvar, so concurrent calls do not mix).
_TIMING: contextvars.ContextVar["CallTiming | None"] = contextvars.ContextVar("rlmlab_lm_timing", default=None)
# The run a call belongs to: runs on worker threads share one LM and so one recorder, and a run must not count
# another's calls. DSPy runs a call's callbacks in the caller's context, and copies the context into the threads
# of its batched sub-queries, so the scope follows every call a run makes.
_SCOPE: contextvars.ContextVar["CallScope | None"] = contextvars.ContextVar("rlmlab_call_scope", default=None)


class CallScope:
    """A run's scope of LM calls. A scope opened inside another (a recursive sub-run) is its child: the parent's
    ``since`` includes the child's calls, so a run's totals are its whole call tree's. ``run_id`` and ``depth``
    label every call made in the scope (set by the run once it has an id)."""

    __slots__ = ("parent", "run_id", "depth")

    def __init__(self, parent: "CallScope | None" = None) -> None:
        self.parent = parent
        self.run_id: str | None = None
        self.depth = 0 if parent is None else parent.depth + 1

    def within(self, other: "CallScope") -> bool:
        """Whether this scope is ``other`` or one opened inside it."""
        scope: CallScope | None = self
        while scope is not None:
            if scope is other:
                return True
            scope = scope.parent
        return False


@contextmanager
def call_scope() -> Iterator[CallScope]:
    """Attribute LM calls made inside the block (in this context) to it: ``CallRecorder.since`` called inside
    returns only them and those of scopes opened inside it. Outside any scope, ``since`` returns every call."""
    scope = CallScope(_SCOPE.get())
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def current_scope() -> CallScope | None:
    return _SCOPE.get()


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
class CallTiming(Record):
    """Where one LM call's time went inside the engine, in milliseconds, from llama.cpp's perf counters.

    ``engine_ms``: the engine's wall time for the call; ``prefill_ms`` over ``prefill_tokens`` prompt tokens
    evaluated (the rest of the prompt, ``cached_tokens``, came from the KV cache of the previous call);
    ``decode_ms`` over ``decode_tokens`` completion tokens the model sampled, and ``forced_tokens`` completion
    tokens the grammar forced, fast-forwarded (evaluated in batches with the sampled ones, or with the prompt).
    ``engine_ms - prefill_ms - decode_ms`` is sampling (with grammar masking under a constraint) and the binding's
    per-token Python.
    """

    engine_ms: float
    prefill_ms: float
    decode_ms: float
    prefill_tokens: int
    decode_tokens: int
    cached_tokens: int
    forced_tokens: int = 0

    @property
    def sampling_ms(self) -> float:
        return max(0.0, self.engine_ms - self.prefill_ms - self.decode_ms)


def note_timing(timing: CallTiming | None) -> None:
    """Called by an engine at the end of a call: the CallRecorder attaches ``timing`` to the call's record."""
    _TIMING.set(timing)


@dataclass(frozen=True)
class LMCall(Record):
    """One LM call: who made it, how big the prompt was, tokens in and out (the LM's own counts), latency in
    seconds; ``messages`` (chat messages as sent, ``{"role", "content"}``) and ``completion`` (the reply text,
    None when the call failed); ``step`` is the executor iteration that made it (None: outside any iteration,
    e.g. the extract fallback or a judge)."""

    model: str
    role: str
    prompt_chars: int
    input_tokens: int
    output_tokens: int
    latency_s: float
    error: str | None = None
    messages: list[dict[str, str]] | None = None
    completion: str | None = None
    step: int | None = None
    timing: dict[str, Any] | None = None  # CallTiming.to_dict() when the engine measured it (llama.cpp), else None
    cached: bool = False  # answered from DSPy's cache (opt-in, cache=True): nothing was sent, tokens are not counted
    run_id: str | None = None  # the run (of a recursive run's tree) that made the call; None outside a run
    depth: int = 0  # that run's depth: 0 for the run started by the caller, 1 for its rlm_query children, ...
    parent_id: str | None = None  # that run's parent run, None at depth 0


def _messages(inputs: dict[str, Any]) -> list[dict[str, str]]:
    """The call's prompt as chat messages (a bare ``prompt`` string becomes one user message)."""
    out = [{"role": str(m.get("role", "user")), "content": _text(m.get("content", ""))} if isinstance(m, dict)
           else {"role": "user", "content": _text(m)} for m in inputs.get("messages") or []]
    prompt = inputs.get("prompt")
    if isinstance(prompt, str) and prompt:
        out.append({"role": "user", "content": prompt})
    return out


def _text(content: Any) -> str:
    if isinstance(content, list):  # OpenAI content parts
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _completion(outputs: Any) -> str | None:
    """The first completion's text: DSPy returns a list of strings, or of dicts with a "text" key."""
    first = outputs[0] if isinstance(outputs, list) and outputs else outputs
    if isinstance(first, dict):
        first = first.get("text", first)
    return None if first is None else str(first)


class CallRecorder(BaseCallback):
    """Records every call of the LMs it is attached to, in order, thread-safely."""

    def __init__(self, keep_text: bool = True) -> None:
        self.calls: list[LMCall] = []
        self.keep_text = keep_text  # False: counts only, no messages or completions (long-lived recorders)
        self._pending: dict[str, tuple[float, Any, list[dict[str, str]], str, CallScope | None]] = {}
        self._scopes: list[CallScope | None] = []  # the call_scope of each call in ``calls``
        self._lock = threading.Lock()

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        _TIMING.set(None)  # a previous call's timing must not be attached to this one
        with self._lock:
            self._pending[call_id] = (time.perf_counter(), instance, _messages(inputs), current_role(), _SCOPE.get())

    def on_lm_end(self, call_id: str, outputs: Any, exception: Exception | None = None) -> None:
        with self._lock:
            started = self._pending.pop(call_id, None)
        if started is None:
            return
        t0, instance, messages, role, scope = started
        timing = _TIMING.get()
        usage: dict[str, Any] = {}
        history = getattr(instance, "history", None)
        cached = False
        if exception is None and history:
            usage = history[-1].get("usage") or {}
            # DSPy marks no cache hit in its history; a hit is the one reply of a caching LM without usage
            cached = bool(getattr(instance, "cache", False)) and not usage
        call = LMCall(
            model=str(getattr(instance, "model", "?")),
            role=role,
            prompt_chars=sum(len(m["content"]) for m in messages),
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            latency_s=time.perf_counter() - t0,
            error=None if exception is None else f"{type(exception).__name__}: {exception}",
            messages=messages if self.keep_text else None,
            completion=_completion(outputs) if self.keep_text and exception is None else None,
            timing=timing.to_dict() if timing is not None else None,
            cached=cached,
            run_id=None if scope is None else scope.run_id,
            depth=0 if scope is None else scope.depth,
            parent_id=None if scope is None or scope.parent is None else scope.parent.run_id,
        )
        with self._lock:
            self.calls.append(call)
            self._scopes.append(scope)

    def mark(self) -> int:
        """Current position; pass it to :meth:`since` to get the calls made after it."""
        with self._lock:
            return len(self.calls)

    def since(self, mark: int, step: int | None = None, scope: CallScope | None = None) -> list[LMCall]:
        """The calls made after ``mark`` in ``scope`` (default: the current :func:`call_scope`) and the scopes
        opened inside it; outside any scope, every call. With ``step``, the scope's own calls are first labelled
        as that executor iteration's (a child run labels its own)."""
        scope = scope if scope is not None else _SCOPE.get()
        with self._lock:
            mine = [i for i in range(mark, len(self.calls))
                    if scope is None or (self._scopes[i] is not None and self._scopes[i].within(scope))]
            if step is not None:
                for i in mine:
                    if self.calls[i].step is None and self._scopes[i] is scope:
                        self.calls[i] = replace(self.calls[i], step=step)
            return [self.calls[i] for i in mine]

    def totals(self) -> dict[str, float]:
        with self._lock:
            calls = list(self.calls)
        return {
            "calls": len(calls),
            "input_tokens": sum(c.input_tokens for c in calls),
            "output_tokens": sum(c.output_tokens for c in calls),
            "latency_s": round(sum(c.latency_s for c in calls), 4),
        }


def write_calls(path: str | Path, calls: list[LMCall]) -> Path:
    """A run's LM calls as JSONL, one call per line in the order they were made."""
    from rlmlab._files import write_jsonl

    write_jsonl(path, (c.to_dict() for c in calls))
    return Path(path)


def read_calls(path: str | Path) -> list[LMCall]:
    """The calls of a ``lm_calls.jsonl`` file; [] when the file does not exist (runs written before calls were
    kept). A damaged line raises ValueError naming the file and line."""
    path = Path(path)
    if not path.is_file():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(LMCall.from_dict(json.loads(line)))
            except (json.JSONDecodeError, TypeError) as exc:
                raise ValueError(f"{path}:{n}: not an LM call record ({exc})") from None
    return out


@dataclass
class Completion:
    """What an engine's generator returns: the text and, when known, token counts and log-probabilities."""

    text: str
    input_tokens: int
    output_tokens: int
    token_logprobs: list[float] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)  # the text of each token in token_logprobs, when known
    # Where the call's time went, from llama.cpp's own perf counters (None for engines that have none); see
    # :class:`rlmlab.lm.CallTiming`.
    timing: CallTiming | None = None
    finish_reason: str | None = None  # "stop" or "length" when the engine says (BatchDecoder does)
