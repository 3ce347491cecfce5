"""What the protocol looks at: one agent turn (the reply, the tool calls it made, the steps before it)."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Phase", "Scope", "ToolCall", "Step", "Turn", "PHASES", "SCOPES", "SUB_SESSION_TOOLS", "tool_calls_in_code",
           "tool_calls_in_text"]

Phase = str  # "post_inference" | "pre_execution" | "post_execution"
Scope = str  # "main" | "sub_session"
PHASES = ("post_inference", "pre_execution", "post_execution")
SCOPES = ("main", "sub_session")

# Calls that start background work: the spec's spawn_sub_session, and the RLM's sub-LLM calls.
SUB_SESSION_TOOLS = frozenset({"spawn_sub_session", "llm_query", "llm_query_batched", "rlm_query"})


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    result: Any = None  # post_execution only
    error: str | None = None


@dataclass
class Step:
    """An earlier inference round: what the model wrote, what came back, and the tool calls it made."""

    response: str
    output: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)


@dataclass
class Turn:
    """One turn as the hooks of one phase see it.

    ``tool_calls`` are the calls made (or, for RLM code, requested) in this
    turn; in ``pre_execution`` the last one is the call about to run, in
    ``post_execution`` the one that just ran (with its result).
    ``tool_schemas`` maps tool names to JSON Schemas (tool_schema_validation).

    The seed's "tool calls made" cover every inference round of the current *user turn*:
    ``history[turn_start:]`` are the earlier rounds of that turn (their calls and outputs count, see
    :attr:`turn_tool_calls`), ``history[:turn_start]`` belong to earlier user turns (context only). Where a
    user turn starts, per executor: an RLM or ReAct task is one user turn (every iteration of the run);
    in :class:`~rlmlab.turing.TuringAgentLoop` each ``run(messages)`` is one; in a labelled eval line,
    ``history`` is the turn's earlier rounds (``turn_start`` 0).
    """

    phase: Phase
    scope: Scope = "main"
    response: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    history: list[Step] = field(default_factory=list)
    objective: str | None = None
    final: bool = False  # a final, text-only reply (sub-session exit)
    session: str = "default"
    turn_id: str = "0"
    tool_schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    turn_start: int = 0  # index in ``history`` of the first round of the current user turn
    # What the model was given to read this turn (the user's message, a pasted file, the task's query): a reply
    # that quotes or restates it narrates nothing it invented (phantom_tool_result's narrated contents).
    context: str = ""

    @property
    def tool_names(self) -> set[str]:
        """Names of this round's calls."""
        return {c.name for c in self.tool_calls}

    @property
    def turn_steps(self) -> list[Step]:
        """The earlier rounds of the current user turn."""
        return self.history[self.turn_start:]

    @property
    def turn_tool_calls(self) -> list[ToolCall]:
        """Every call made in the current user turn: earlier rounds first, then this round's."""
        return [c for step in self.turn_steps for c in step.tool_calls] + list(self.tool_calls)

    @property
    def turn_tool_names(self) -> set[str]:
        return {c.name for c in self.turn_tool_calls}

    @property
    def current_call(self) -> ToolCall | None:
        return self.tool_calls[-1] if self.tool_calls else None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("tool_schemas")
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], **extra: Any) -> "Turn":
        """A turn from a labelled line (its ``user`` message is the turn's ``context``). A ``history`` round
        without ``tool_calls`` gets the calls written in its response: ``TOOL: name({...})`` lines, and calls of
        known tools in its ```python code."""
        calls = [ToolCall(c["name"], dict(c.get("arguments") or {})) for c in d.get("tool_calls") or []]
        known = SUB_SESSION_TOOLS | set(extra.get("tool_schemas") or {}) | {c.name for c in calls}
        history = []
        for h in d.get("history") or []:
            response = h.get("response", "")
            made = ([ToolCall(c["name"], dict(c.get("arguments") or {})) for c in h["tool_calls"]]
                    if "tool_calls" in h else tool_calls_in_text(response, known))
            history.append(Step(response, h.get("output", ""), made))
        return cls(phase=d["phase"], scope=d.get("scope", "main"), response=d.get("response", ""), tool_calls=calls,
                   history=history, objective=d.get("objective"), final=bool(d.get("final", not calls)),
                   context=str(d.get("user") or ""),
                   turn_id=str(d.get("id", "0")), **extra)


_TOOL_LINE = re.compile(r"^\s*TOOL:\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$", re.M)
_CODE_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.S)


def tool_calls_in_text(text: str, known: set[str] | frozenset[str]) -> list[ToolCall]:
    """Calls written in a reply: chat-style ``TOOL: name({json})`` lines (any name), then calls of ``known``
    tools in its ```python fences."""
    calls = []
    for m in _TOOL_LINE.finditer(text):
        try:
            args = json.loads(m.group(2)) if m.group(2).strip() else {}
        except json.JSONDecodeError:
            args = {}
        calls.append(ToolCall(m.group(1), args if isinstance(args, dict) else {}))
    for code in _CODE_FENCE.findall(text):
        calls += tool_calls_in_code(code, known)
    return calls


def tool_calls_in_code(code: str, known: set[str] | frozenset[str]) -> list[ToolCall]:
    """Calls to ``known`` tool names in Python code, with literal keyword/positional arguments where readable."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in known:
            args: dict[str, Any] = {}
            for i, a in enumerate(node.args):
                args[f"_{i}"] = _literal(a)
            for kw in node.keywords:
                if kw.arg:
                    args[kw.arg] = _literal(kw.value)
            calls.append((node.lineno, node.col_offset, ToolCall(node.func.id, args)))
    return [c for _, _, c in sorted(calls, key=lambda t: (t[0], t[1]))]


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return f"<{ast.unparse(node)}>"
