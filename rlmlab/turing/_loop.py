"""The protocol around any chat-and-tools agent loop (not only the RLM executor).

``step(messages)`` returns the model's :class:`AgentReply`; ``execute(call)``
runs one tool call. One ``run(messages)`` is one user turn: the tool calls of
every inference round in it count as made in the turn (seed 003's
``tool_calls_made``); a later ``run`` starts a new turn. Corrections follow the spec's scopes: in ``main`` the
correction is a system message and the model answers again; in a
``sub_session`` it is appended to the worker's messages and the loop goes on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rlmlab.turing._protocol import RoundResult, TuringProtocol
from rlmlab.turing._turn import Step, ToolCall, Turn

__all__ = ["AgentReply", "LoopResult", "TuringAgentLoop"]


@dataclass
class AgentReply:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)


@dataclass
class LoopResult:
    final: str | None  # the last reply without tool calls that passed the protocol, or None
    messages: list[dict[str, Any]]
    rounds: list[RoundResult] = field(default_factory=list)
    turns: int = 0

    @property
    def corrections(self) -> list[str]:
        return [r.correction for r in self.rounds if r.correction]


class TuringAgentLoop:
    def __init__(self, protocol: TuringProtocol, step: Callable[[list[dict[str, Any]]], AgentReply],
                 execute: Callable[[ToolCall], Any], *, scope: str = "main", session: str = "default",
                 objective: str | None = None, tool_schemas: dict[str, dict[str, Any]] | None = None,
                 max_turns: int = 8):
        self.protocol, self.step, self.execute = protocol, step, execute
        self.scope, self.session, self.objective = scope, session, objective
        self.tool_schemas, self.max_turns = dict(tool_schemas or {}), max_turns
        self._context = ""

    def _turn(self, phase: str, index: int, history: list[Step], **kw: Any) -> Turn:
        return Turn(phase=phase, scope=self.scope, history=history, objective=self.objective, session=self.session,
                    turn_id=str(index), tool_schemas=self.tool_schemas, context=self._context, **kw)

    def _inject(self, messages: list[dict[str, Any]], correction: str) -> None:
        role = "system" if self.scope == "main" else "user"
        messages.append({"role": role, "content": correction})

    def run(self, messages: list[dict[str, Any]]) -> LoopResult:
        out = LoopResult(None, messages)
        history: list[Step] = []
        # What the model was given before this turn's first reply (system, user and earlier tool messages): a
        # reply quoting it (a pasted file, the question) narrates nothing it invented.
        self._context = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") != "assistant")
        for index in range(1, self.max_turns + 1):
            out.turns = index
            reply = self.step(messages)
            verdict = self.protocol.run(self._turn("post_inference", index, list(history), response=reply.text,
                                                   tool_calls=list(reply.tool_calls), final=not reply.tool_calls))
            out.rounds.append(verdict)
            if not verdict.kill:
                messages.append({"role": "assistant", "content": reply.text,
                                 **({"tool_calls": [{"name": c.name, "arguments": c.arguments}
                                                    for c in reply.tool_calls]} if reply.tool_calls else {})})
            outputs, made = [], []
            for i, call in enumerate([] if verdict.kill else reply.tool_calls):
                pre = self.protocol.run(self._turn("pre_execution", index, list(history),
                                                   tool_calls=list(reply.tool_calls[:i + 1])))
                out.rounds.append(pre)
                if pre.violations:
                    text = pre.correction or "\n".join(v.reason for v in pre.violations)
                else:
                    made.append(call)
                    try:
                        result = self.execute(call)
                        text = result if isinstance(result, str) else json.dumps(result, default=str)
                    except Exception as exc:  # the model sees the error, as with any tool
                        text = f"{type(exc).__name__}: {exc}"
                    post = self.protocol.run(self._turn("post_execution", index, list(history),
                                                        tool_calls=[*reply.tool_calls[:i], ToolCall(
                                                            call.name, call.arguments, result=text)]))
                    out.rounds.append(post)
                    if post.correction:
                        text += "\n\n" + post.correction
                messages.append({"role": "tool", "name": call.name, "content": text})
                outputs.append(text)
            history.append(Step(reply.text, "\n".join(outputs), made))
            if verdict.correction:
                self._inject(messages, verdict.correction)
                continue  # main: the model answers again; sub_session: the loop goes on inline
            if not reply.tool_calls:
                out.final = reply.text
                return out
        return out
