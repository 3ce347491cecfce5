"""The protocol attached to an agent run: post_inference per model step, pre/post_execution per tool call.

:class:`TuringGuard` is what the RLM executor uses (and any loop that calls
tools through a Workspace): it is a Workspace observer for the tool phases
and has :meth:`post_inference` for model steps. Rounds with violations are
kept for the step's trajectory record.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rlmlab.errors import ToolError
from rlmlab.turing._protocol import RoundResult, TuringProtocol
from rlmlab.turing._turn import SUB_SESSION_TOOLS, Step, ToolCall, Turn, tool_calls_in_code

__all__ = ["TuringGuard"]


class TuringGuard:
    def __init__(self, protocol: TuringProtocol, *, session: str = "default", scope: str = "main",
                 tool_schemas: dict[str, dict[str, Any]] | None = None, objective: str | None = None,
                 context: str = ""):
        self.protocol, self.session, self.scope, self.objective = protocol, session, scope, objective
        self.context = context  # the user's query: quoting or restating it is not a phantom result
        self.tool_schemas = dict(tool_schemas or {})
        self.turn_id = "0"
        self.history: list[Step] = []
        self._rounds: list[dict[str, Any]] = []
        self._pending: list[str] = []
        self._calls: list[ToolCall] = []  # calls executed in this step
        self._code_calls: list[ToolCall] = []  # calls the step's code makes (sub-LLM calls included)
        self.turn_start = 0  # index in history of the current user turn's first step

    def _turn(self, phase: str, **kw: Any) -> Turn:
        return Turn(phase=phase, scope=self.scope, history=list(self.history), objective=self.objective,
                    session=self.session, turn_id=self.turn_id, tool_schemas=self.tool_schemas,
                    turn_start=self.turn_start, context=self.context, **kw)

    def begin_user_turn(self) -> None:
        """A new user turn starts: tool calls of earlier steps no longer count as made in this turn."""
        self.turn_start = len(self.history)

    def _keep(self, result: RoundResult) -> RoundResult:
        if result.violations:
            self._rounds.append(result.to_dict())
        return result

    def begin_turn(self, turn_id: int | str) -> None:
        self.turn_id = str(turn_id)
        self._calls, self._code_calls = [], []

    def post_inference(self, reasoning: str, code: str, known_tools: Iterable[str]) -> RoundResult:
        """Check a model step (reasoning + code) before its code runs; the code's tool calls are the turn's."""
        known = frozenset(known_tools) | SUB_SESSION_TOOLS
        response = f"{reasoning.strip()}\n```python\n{code.strip()}\n```" if code.strip() else reasoning.strip()
        calls = tool_calls_in_code(code, known)
        result = self._keep(self.protocol.run(self._turn("post_inference", response=response, tool_calls=calls,
                                                         final=not calls)))
        self._code_calls = [] if result.kill else calls  # a killed step's code does not run
        return result

    # -- Workspace observer ---------------------------------------------------------------------------

    def before_tool(self, name: str, arguments: dict[str, Any]) -> None:
        call = ToolCall(name, dict(arguments))
        self._calls.append(call)
        result = self._keep(self.protocol.run(self._turn("pre_execution", tool_calls=list(self._calls))))
        if result.violations:
            self._calls.pop()
            raise ToolError(result.correction or "\n".join(v.reason for v in result.violations))

    def after_tool(self, record: Any) -> None:
        call = ToolCall(record.name, dict(record.arguments), result=record.result_chars, error=record.error)
        result = self._keep(self.protocol.run(self._turn("post_execution", tool_calls=[*self._calls[:-1], call])))
        if result.correction:
            self._pending.append(result.correction)

    # -- what the executor collects ---------------------------------------------------------------------

    def take_pending_corrections(self) -> list[str]:
        out, self._pending = self._pending, []
        return out

    def end_turn(self, response: str, output: str) -> list[dict[str, Any]]:
        """Record the step (with the calls it made) in the history and return its rounds with violations."""
        made = list(self._code_calls)
        made += [c for c in self._calls if c.name not in {m.name for m in made}]
        self.history.append(Step(response, output, made))
        out, self._rounds = self._rounds, []
        return out
