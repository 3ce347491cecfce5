"""Hook specs (the spec's fields) and the built-in hooks."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

__all__ = ["HookSpec", "BUILTIN_HOOKS", "ALWAYS_ON", "HOOK_ENTRY_SCHEMA", "CORRECTION_FIELDS", "fill_correction",
           "correction_template_problem"]

# The placeholders a correction template may use; any other {name} is left as written.
CORRECTION_FIELDS = ("reason", "tool_name", "tool_schema", "objective")


class _SafeFormat(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def fill_correction(template: str, **values: str) -> str:
    """``template`` with ``{reason}``, ``{tool_name}``, ``{tool_schema}`` and ``{objective}`` filled in."""
    return template.format_map(_SafeFormat(values))


def correction_template_problem(template: str) -> str | None:
    """Why ``template`` cannot be filled (an unbalanced ``{``, ``{0}``, ``{reason.x}``), or None when it can.

    Checked when a hook is loaded, so a bad template is reported once instead of failing the first violation.
    """
    try:
        fill_correction(template, **{name: "x" for name in CORRECTION_FIELDS})
    except (ValueError, IndexError, KeyError, AttributeError, TypeError) as exc:
        return (f"{type(exc).__name__ if isinstance(exc, (IndexError, KeyError)) else ''} {exc}".strip()
                + "; write {{ and }} for literal braces and use only {" + "}, {".join(CORRECTION_FIELDS) + "}")
    return None


@dataclass(frozen=True)
class HookSpec:
    """One hook. ``detection_prompt`` empty means purely programmatic: the hook skips Stage 1."""

    name: str
    phase: str
    scope: tuple[str, ...]
    detection_prompt: str
    validator_type: str  # "programmatic" | "llm"
    validator_fn_name: str | None
    correction_template: str
    halt_inference: bool = False
    kill_on_detect: bool = False
    always_on: bool = False  # not configurable through `validators` (agenda_complete, tool_schema_validation)

    def applies_to(self, phase: str, scope: str) -> bool:
        return self.phase == phase and scope in self.scope

    @property
    def needs_detection(self) -> bool:
        return bool(self.detection_prompt.strip())

    def with_scope(self, scope: str | list[str] | tuple[str, ...]) -> "HookSpec":
        return replace(self, scope=(scope,) if isinstance(scope, str) else tuple(scope))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["scope"] = list(self.scope)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "HookSpec":
        scope = d["scope"]
        return cls(name=d["name"], phase=d["phase"], scope=(scope,) if isinstance(scope, str) else tuple(scope),
                   detection_prompt=d.get("detection_prompt", ""), validator_type=d["validator_type"],
                   validator_fn_name=d.get("validator_fn_name"), correction_template=d["correction_template"],
                   halt_inference=bool(d.get("halt_inference", False)),
                   kill_on_detect=bool(d.get("kill_on_detect", False)))


# JSON Schema of one entry of data/TURING_PROTOCOL_HOOKS.txt (the spec's table of hook fields).
HOOK_ENTRY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "phase", "scope", "validator_type", "correction_template"],
    "properties": {
        "name": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
        "phase": {"enum": ["post_inference", "pre_execution", "post_execution"]},
        "scope": {"anyOf": [{"enum": ["main", "sub_session"]},
                            {"type": "array", "minItems": 1, "uniqueItems": True,
                             "items": {"enum": ["main", "sub_session"]}}]},
        "detection_prompt": {"type": "string"},
        "validator_type": {"enum": ["programmatic", "llm"]},
        "validator_fn_name": {"type": ["string", "null"]},
        "correction_template": {"type": "string", "minLength": 1},
        "halt_inference": {"type": "boolean"},
        "kill_on_detect": {"type": "boolean"},
    },
    "additionalProperties": False,
    "if": {"properties": {"validator_type": {"const": "programmatic"}}},
    "then": {"required": ["validator_fn_name"]},
}

_BOTH = ("main", "sub_session")

BUILTIN_HOOKS: tuple[HookSpec, ...] = (
    HookSpec(
        "workflow_spawn", "post_inference", ("main",),
        "- **workflow_spawn**: The assistant claims a background session, workflow, task or sub-agent was started "
        "in this turn, but no spawn_sub_session (or llm_query) call was made.",
        "programmatic", "validate_workflow_spawn",
        "[TURING CORRECTION] Issue: {reason}\nNo background session was started this turn. Either call "
        "{tool_name} now, or say plainly that nothing was started.\nTool schema: {tool_schema}"),
    HookSpec(
        "phantom_tool_result", "post_inference", ("main",),
        "- **phantom_tool_result**: The assistant presents specific data (file contents, search results, command "
        "output, listings, counts, line numbers) as already obtained from a tool, or states what a named file, "
        "directory, command output or function contains or returns, but no tool call of this turn read it.",
        "programmatic", "validate_phantom_tool_result",
        "[TURING CORRECTION] Issue: {reason}\nNo tool was called this turn that read that data, so it was not "
        "obtained. Call the appropriate tool (for example ctx_find or ctx_slice) and use its real output, or state "
        "clearly that you do not have the information."),
    HookSpec(
        "empty_promise", "post_inference", ("main",),
        "- **empty_promise**: The assistant commits to performing an action (\"I'll check\", \"Let me look\", "
        "\"Ich werde das prüfen\") as its final response without making any tool call.",
        "programmatic", "validate_empty_promise",
        "[TURING CORRECTION] Issue: {reason}\nYou said you would act but made no tool call. Call the appropriate "
        "tool now, or explain why you cannot and ask how to proceed."),
    HookSpec(
        "unverified_completion", "post_inference", ("main",),
        "- **unverified_completion**: The assistant says an action is already done (\"Done.\", \"Task "
        "scheduled.\", \"Skill added.\", \"Erledigt.\") although no tool was called in this turn. Not this "
        "problem: a reply after a real tool call, or one that only acknowledges the user (\"Okay, got it.\").",
        "programmatic", "validate_unverified_completion",
        "[TURING CORRECTION] Issue: {reason}\nNothing was done: no tool was called in this turn. Call the tool "
        "that performs the action now, or tell the user plainly that it has not been done yet."),
    HookSpec(
        "objective_completion", "post_inference", ("sub_session",), "",
        "llm", "validate_objective_completion",
        "[TURING CORRECTION] Issue: {reason}\nThe objective is not met yet: {objective}\nContinue working with "
        "the available tools; do not finish until the objective is satisfied."),
    HookSpec(
        "agenda_complete", "pre_execution", ("sub_session",), "",
        "programmatic", "validate_agenda_complete",
        "[TURING CORRECTION] Issue: {reason}\nBefore completing an agenda item, give concrete, verifiable proof "
        "that it is finished in `reason` (at least 10 characters).", always_on=True),
    HookSpec(
        "tool_schema_validation", "pre_execution", _BOTH, "",
        "programmatic", "validate_tool_schema",
        "[TURING CORRECTION] The call to {tool_name} was blocked; its arguments do not match the tool's schema:\n"
        "{reason}\nSchema of {tool_name}: {tool_schema}\nRetry the call with corrected arguments.", always_on=True),
    HookSpec(
        "repetition_loop", "post_inference", _BOTH, "",
        "programmatic", "validate_repetition_loop",
        "[TURING CORRECTION] Issue: {reason}\nRepeating the same step will give the same result. Try a different "
        "approach: another tool, another pattern, or a smaller piece of the input."),
    HookSpec(
        "final_without_evidence", "post_inference", _BOTH, "",
        "programmatic", "validate_final_without_evidence",
        "[TURING CORRECTION] Issue: {reason}\nThe final answer was not accepted. Compute it in code from tool "
        "results (print them first), then SUBMIT the computed value.", kill_on_detect=True),
)

ALWAYS_ON = frozenset(h.name for h in BUILTIN_HOOKS if h.always_on)
