"""What the protocol looks at: one agent turn (the reply, the tool calls it made, the steps before it)."""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Phase", "Scope", "ToolCall", "Step", "Turn", "PHASES", "SCOPES", "SUB_SESSION_TOOLS", "tool_calls_in_code"]

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
    """An earlier step of the same agent run: what the model wrote and what came back."""

    response: str
    output: str = ""


@dataclass
class Turn:
    """One turn as the hooks of one phase see it.

    ``tool_calls`` are the calls made (or, for RLM code, requested) in this
    turn; in ``pre_execution`` the last one is the call about to run, in
    ``post_execution`` the one that just ran (with its result).
    ``tool_schemas`` maps tool names to JSON Schemas (tool_schema_validation).
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

    @property
    def tool_names(self) -> set[str]:
        return {c.name for c in self.tool_calls}

    @property
    def current_call(self) -> ToolCall | None:
        return self.tool_calls[-1] if self.tool_calls else None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("tool_schemas")
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], **extra: Any) -> "Turn":
        calls = [ToolCall(c["name"], dict(c.get("arguments") or {})) for c in d.get("tool_calls") or []]
        history = [Step(h.get("response", ""), h.get("output", "")) for h in d.get("history") or []]
        return cls(phase=d["phase"], scope=d.get("scope", "main"), response=d.get("response", ""), tool_calls=calls,
                   history=history, objective=d.get("objective"), final=bool(d.get("final", not calls)),
                   turn_id=str(d.get("id", "0")), **extra)


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
