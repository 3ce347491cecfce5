"""The RLM action prompt for grammar decoding: compact, with the part every task shares first.

DSPy's RLM instructions (about 6,000 characters) explain a free format the step grammar already enforces
(fields, fences, llm_query, sub-agents, iterating); a 135M model pays for every one of those tokens on every
step. Under ``prompt="compact"`` the action prompt is

- system message, the same for every task and sample of a run: DSPy's field listing, :data:`COMPACT_INSTRUCTIONS`
  and the workspace's tool listing;
- user message: the task's own part: ``guidance`` (the run's instructions: base text and what memory injected,
  different per task), then the REPL variables (the query's preview), the history and the iteration.

llama.cpp reuses the KV cache of the previous call's longest common prefix, so with the shared part first every
task after the first prefills only its own part (see :class:`rlmlab.lm.CallTiming` ``cached_tokens``).
"""

from __future__ import annotations

from typing import Any

import dspy

__all__ = ["PROMPTS", "COMPACT_INSTRUCTIONS", "GUIDANCE_FIELD", "resolve_prompt", "compact_action_signature",
           "GuidedPredict"]

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
    instructions = COMPACT_INSTRUCTIONS.format(inputs=inputs) + rlm._format_tool_docs(rlm._user_tools)
    return (
        dspy.Signature({}, instructions)
        .append(GUIDANCE_FIELD, dspy.InputField(desc="Instructions and strategies for this task"), type_=str)
        .append("variables_info", dspy.InputField(desc="The REPL variables"), type_=str)
        .append("repl_history", dspy.InputField(desc="Earlier steps and their output"),
                type_=rlm._action_signature.input_fields["repl_history"].annotation)
        .append("iteration", dspy.InputField(desc="This step's number out of the maximum"), type_=str)
        .append("reasoning", dspy.OutputField(desc="The question, then a short plan"), type_=str)
        .append("code", dspy.OutputField(desc="The step's Python lines"), type_=str)
    )


class GuidedPredict(dspy.Predict):
    """dspy.Predict that fills the ``guidance`` input with a fixed text (the run's instructions) on every call,
    so DSPy's RLM loop, which passes only its own inputs, need not know the field exists."""

    def __init__(self, signature: Any, guidance: str, **kwargs: Any):
        super().__init__(signature, **kwargs)
        self.guidance = guidance

    def forward(self, **kwargs: Any) -> Any:
        kwargs.setdefault(GUIDANCE_FIELD, self.guidance)
        return super().forward(**kwargs)

    async def aforward(self, **kwargs: Any) -> Any:
        kwargs.setdefault(GUIDANCE_FIELD, self.guidance)
        return await super().aforward(**kwargs)
