"""The RLM action prompt for grammar decoding: compact, with the part every task shares first.

DSPy's RLM instructions (about 6,000 characters) explain a free format the step grammar already enforces
(fields, fences, llm_query, sub-agents, iterating); a 135M model pays for every one of those tokens on every
step. Under ``prompt="compact"`` the action prompt is

- system message, the same for every task and sample of a run: DSPy's field listing, :data:`COMPACT_INSTRUCTIONS`
  and the workspace's tool listing;
- user message: the task's own part: ``guidance`` (the run's instructions: base text and what memory injected,
  different per task), then the REPL variables, one line each (:class:`CompactVariable`: a handle's size, a
  value's preview; DSPy's five-line blocks repeat what the system message says), the history and the iteration.
  Under a grammar the adapter leaves out its closing reminder of the output fields' order: the grammar writes
  the field markers itself (see :class:`rlmlab.lm.LenientChatAdapter`).

llama.cpp reuses the KV cache of the previous call's longest common prefix, so with the shared part first every
task after the first prefills only its own part (see :class:`rlmlab.lm.CallTiming` ``cached_tokens``).
"""

from __future__ import annotations

from typing import Any

import dspy
from dspy.primitives.repl_types import REPLVariable

from rlmlab.executors._dspy_adapter import action_signature, tool_docs

__all__ = ["PROMPTS", "COMPACT_INSTRUCTIONS", "GUIDANCE_FIELD", "resolve_prompt", "compact_action_signature",
           "GuidedPredict", "CompactVariable", "best_last"]

PROMPTS = ("auto", "full", "compact")
GUIDANCE_FIELD = "guidance"

COMPACT_INSTRUCTIONS = """Answer the query by writing Python steps for a REPL. The inputs are the variables {inputs}.
`context` is a handle (BlobRef): read it only through the tools below, never print it whole.
Each reply is one step: in `reasoning`, the question and a short plan; in `code`, a few lines, each a tool call
assigned to a variable, arithmetic on variables, print(...), or SUBMIT(answer=...). You see what the step prints,
then write the next step. When the guidance shows "Code:" with {{{{slots}}}}, copy that code with the slots filled
from the query. Submit a variable or an expression computed from tool output or the query's numbers."""


def resolve_prompt(prompt: str, decoding: str) -> str:
    """The action prompt a run uses: ``auto`` is ``compact`` under grammar decoding, else ``full``."""
    if prompt not in PROMPTS:
        raise ValueError(f"prompt: {prompt!r}; use one of {', '.join(PROMPTS)}")
    if prompt == "auto":
        return "compact" if decoding == "grammar" else "full"
    return prompt


def compact_action_signature(rlm: Any) -> Any:
    """The compact action signature of a dspy.RLM (its inputs, tools and output fields), with the per-task
    ``guidance`` as the first input field, so it is sent after everything every task shares."""
    inputs = ", ".join(f"`{n}`" for n in rlm.signature.input_fields)
    instructions = COMPACT_INSTRUCTIONS.format(inputs=inputs) + tool_docs(rlm)
    return (
        dspy.Signature({}, instructions)
        .append(GUIDANCE_FIELD, dspy.InputField(desc="Instructions and strategies for this task"), type_=str)
        .append("variables_info", dspy.InputField(desc="The REPL variables"), type_=str)
        .append("repl_history", dspy.InputField(desc="Earlier steps and their output"),
                type_=action_signature(rlm).input_fields["repl_history"].annotation)
        .append("iteration", dspy.InputField(desc="This step's number out of the maximum"), type_=str)
        .append("reasoning", dspy.OutputField(desc="The question, then a short plan"), type_=str)
        .append("code", dspy.OutputField(desc="The step's Python lines"), type_=str)
    )


class CompactVariable(REPLVariable):
    """A REPL variable on one line of the compact prompt: a handle's name and size (``handle_chars``: how to read
    it is in the system message), else name, type, length and DSPy's preview of the value (500 characters at most,
    head and tail of a longer one)."""

    handle_chars: int | None = None

    @classmethod
    def of(cls, var: REPLVariable, handle_chars: int | None = None) -> "CompactVariable":
        return cls.model_construct(**{k: getattr(var, k) for k in REPLVariable.model_fields},
                                   handle_chars=handle_chars)

    def format(self) -> str:
        if self.handle_chars is not None:
            return f"`{self.name}`: a handle (BlobRef) to {self.handle_chars:,} characters"
        return f"`{self.name}` ({self.type_name}, {self.total_length:,} characters): {self.preview}"


def best_last(guidance: str) -> str:
    """``guidance`` with each bulleted list (items ``- ...`` with their indented lines) in reverse order.

    Memory lists strategies best-ranked first. A 135M model copies the code template it read last: with the
    task's guidance right before the step (the compact layout) the last-listed template wins near ties whatever
    the ranking, so the best-ranked goes last, nearest the step. Other lines keep their places.
    """
    out: list[str] = []
    items: list[list[str]] = []
    lines = guidance.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("- "):
            items.append([line])
        elif items and (line.startswith(" ") or  # an item's lines; a blank one inside its code block too
                        (not line and i + 1 < len(lines) and lines[i + 1].startswith("    "))):
            items[-1].append(line)
        else:
            out += [x for item in reversed(items) for x in item]
            items = []
            out.append(line)
    out += [x for item in reversed(items) for x in item]
    return "\n".join(out)


class GuidedPredict(dspy.Predict):
    """dspy.Predict that fills the ``guidance`` input with a fixed text (the run's instructions, bulleted lists
    best-ranked last: :func:`best_last`) on every call, so DSPy's RLM loop, which passes only its own inputs, need
    not know the field exists."""

    def __init__(self, signature: Any, guidance: str, **kwargs: Any):
        super().__init__(signature, **kwargs)
        self.guidance = best_last(guidance)

    def forward(self, **kwargs: Any) -> Any:
        return super().forward(**self._inputs(kwargs))

    async def aforward(self, **kwargs: Any) -> Any:
        return await super().aforward(**self._inputs(kwargs))

    def _inputs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        kwargs.setdefault(GUIDANCE_FIELD, self.guidance)
        if isinstance(kwargs.get("variables_info"), list):  # one line per variable, not DSPy's numbered blocks
            kwargs["variables_info"] = "\n".join(str(v) for v in kwargs["variables_info"])
        return kwargs
