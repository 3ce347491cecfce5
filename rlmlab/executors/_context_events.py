"""Tool calls seen from both sides, and the context events they become (for the executor's ContextTrace)."""

from __future__ import annotations

import contextlib
import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from rlmlab.executors._interpreter import InterpreterFactory, RLMLabInterpreter
from rlmlab.executors._pyodide import PyodideInterpreter
from rlmlab.executors._timing import RunClock
from rlmlab.lm import LMCall
from rlmlab.tools import ToolCallRecord, Workspace
from rlmlab.trace import ContextEvent

__all__ = ["TappedCall", "ToolTap", "TappedFactory", "call_events"]

_SUB_LLM_TOOLS = ("llm_query", "llm_query_batched")


@dataclass
class TappedCall:
    """One tool call of an iteration: its workspace record (registry tools only) and its result or error."""

    name: str
    record: ToolCallRecord | None = None
    result: Any = None
    error: str | None = None


class ToolTap:
    """Sees each tool call from both sides: the record from the Workspace, the result from the interpreter.

    The workspace's ToolCallRecord has the result's size, not the result;
    the context trace needs the result (ctx_find's total, the sub-LLM's text).
    Tool requests run on worker threads, so the call in progress is per thread.
    """

    def __init__(self) -> None:
        self.records: list[ToolCallRecord] = []
        self.calls: list[TappedCall] = []
        self._lock = threading.Lock()
        self._current = threading.local()

    def after_tool(self, record: ToolCallRecord) -> None:
        with self._lock:
            self.records.append(record)
        call = getattr(self._current, "call", None)
        if call is not None:
            call.record = record  # a tool that calls another tool notifies twice; the outer call comes last

    @contextmanager
    def watching(self, name: str) -> Iterator[TappedCall]:
        call = TappedCall(name)
        self._current.call = call
        try:
            yield call
        except Exception as exc:
            call.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self._current.call = None
            with self._lock:
                self.calls.append(call)

    def drain(self) -> tuple[list[ToolCallRecord], list[TappedCall]]:
        with self._lock:
            out = (self.records, self.calls)
            self.records, self.calls = [], []
        return out


class _TappedInterpreter(RLMLabInterpreter):
    """Reports tool results to ``tap`` and its time to ``clock`` (worker start, step code, registered tools)."""

    def __init__(self, workspace: Workspace, *, tap: ToolTap, clock: RunClock | None = None, **kwargs: Any):
        super().__init__(workspace, **kwargs)
        self.tap, self.clock = tap, clock or RunClock()

    def start(self) -> None:
        with self.clock.timing("worker_start"):
            super().start()

    def execute(self, code: str, variables: dict[str, Any] | None = None) -> Any:
        # the setup DSPy replays into a fresh worker is part of starting it; a restart inside a step is too
        with self.clock.timing("worker_start" if self.recording_setup else "code", exclude=("worker_start",)):
            return super().execute(code, variables)

    def invoke_tool(self, tool_name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        timed = self.clock.timing("tools") if tool_name in self.workspace.registry else contextlib.nullcontext()
        with self.tap.watching(tool_name) as call, timed:
            call.result = super().invoke_tool(tool_name, args, kwargs)
        return call.result


class _TappedPyodide(_TappedInterpreter, PyodideInterpreter):
    """A tapped interpreter whose REPL is Pyodide in Deno (``sandbox: pyodide``)."""


class TappedFactory(InterpreterFactory):
    """The given factory's settings, making interpreters that report tool results to ``tap``."""

    def __init__(self, base: InterpreterFactory, tap: ToolTap, clock: RunClock | None = None):
        super().__init__(base.workspace, step_timeout=base.step_timeout, sub_call_counter=base.sub_call_counter,
                         sandbox=base.sandbox, sandbox_policy=base.sandbox_policy, notes=base.notes)
        self.execution_instructions = base.execution_instructions
        self.sandbox_used = base.sandbox_used
        self.tap, self.clock = tap, clock

    def __call__(self) -> RLMLabInterpreter:
        cls = _TappedPyodide if self.sandbox_used == "pyodide" else _TappedInterpreter
        self.last = cls(self.workspace, tap=self.tap, clock=self.clock, step_timeout=self.step_timeout,
                        sub_call_counter=self.sub_call_counter, **self.sandbox_options())
        return self.last


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def call_events(calls: list[TappedCall], sub_calls: list[LMCall], iteration: int) -> list[ContextEvent]:
    """Context events of one iteration's tool calls, in call order.

    A successful ctx_find is a GrepResult, each sub-LLM response an
    LlmQueryResult (tokens as the LM reported them, else counted), any other
    call a ToolCall and a ToolResult. Responses of one llm_query_batched are
    paired with the recorded sub-calls by order, which is completion order,
    so per-response tokens within a batch may be swapped; the totals are exact.
    """
    events: list[ContextEvent] = []
    subs = iter(sub_calls)
    for call in calls:
        if call.error is None and call.name == "ctx_find" and isinstance(call.result, dict):
            events.append(ContextEvent.grep_result(call.result.get("pattern", ""), int(call.result.get("total", 0)),
                                                   content=_as_text(call.result), iteration=iteration))
        elif call.error is None and call.name in _SUB_LLM_TOOLS:
            responses = [call.result] if isinstance(call.result, str) else list(call.result or [])
            for response in responses:
                sub = next(subs, None)
                events.append(ContextEvent.llm_query_result(
                    _as_text(response), sub.output_tokens if sub and sub.output_tokens else None, iteration=iteration))
        else:
            arguments = call.record.arguments if call.record else {}
            error = (call.record.error if call.record else None) or call.error
            events.append(ContextEvent.tool_call(call.name, _as_text(arguments), iteration=iteration))
            events.append(ContextEvent.tool_result(call.name, error if error else _as_text(call.result), error=error,
                                                   iteration=iteration))
    return events
