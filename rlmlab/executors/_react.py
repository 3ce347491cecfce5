"""The ReAct executor: dspy.ReAct over the workspace's tools (a tool loop, no code), metered per step."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy
from dspy.utils.exceptions import ContextWindowExceededError

from rlmlab.errors import ToolError
from rlmlab.executors._constrain import StepConstraint, output_fields
from rlmlab.executors._harness import Run, RunOptions, execute_keywords
from rlmlab.executors._rlm import RLM_SIGNATURE, dspy_tools
from rlmlab.executors._step_grammar import fields_grammar, step_grammar
from rlmlab.executors._trajectory import IterationRecord, Trajectory
from rlmlab.handles import BlobRef, decode_handles, encode_handles
from rlmlab.tools import DEADLINE_KEY, ToolRegistry, Workspace
from rlmlab.trace import ContextTrace

__all__ = ["MeteredReAct", "ReactLoop", "ReactOptions", "run_react", "handle_description", "call_text"]

FINISH = "finish"  # dspy.ReAct's own tool for "I have what I need"; the answer is then extracted


def handle_description(ref: BlobRef) -> str:
    """What a tool-calling model is told about a context handle: it passes the key, it never holds the object."""
    return (f"{ref!r}: a handle to {ref.n:,} characters stored under the key {ref.key!r}. "
            f"Pass ref={ref.key!r} to ctx_stats, ctx_peek, ctx_slice or ctx_find to inspect it.")


def _as_text(value: Any) -> str:
    value = encode_handles(value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def call_text(name: str, args: Any) -> str:
    """A tool call as one line of Python (``ctx_find(ref='context', pattern='fn')``): the step's ``code``.

    Being Python, the Turing Protocol's post_inference check reads its tool calls the way it reads RLM code.
    """
    if not isinstance(args, dict):
        return f"{name}({args!r})"
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


@dataclass(frozen=True)
class ReactOptions(RunOptions):
    """ReAct's options: each step is one tool call, run in the host; ``step_timeout`` bounds that call
    (the long-running tools stop at it; see :mod:`rlmlab.tools._bounded`)."""

    step_timeout: float = 30.0


class MeteredReAct(dspy.ReAct):
    """dspy.ReAct whose every step is an :class:`IterationRecord`: thought, tool call, observation, cost.

    Tool calls go through :meth:`Workspace.call` (caps, observers, the Turing
    Protocol's pre/post-execution hooks). A :class:`ToolError` (bad arguments, a
    blocked call) is the step's observation and the loop goes on; any other
    exception (a tool breaking its cap, a bug) is recorded as the step's output
    and ends the run, as in the RLM executor; an LM failure ends the run. Observations are clipped to
    ``max_output_chars`` in the prompt and in the record (``output_chars`` keeps the full size).
    """

    def __init__(self, signature: Any, *, run: Run):
        super().__init__(signature, tools=dspy_tools(run.workspace), max_iters=run.options.max_iters)
        if run.options.decoding == "grammar":  # each step is one typed tool call (or finish)
            self.react.callbacks.append(StepConstraint(self._step_grammar))
            extract = getattr(self.extract, "predict", self.extract)  # dspy.ReAct's extract is a ChainOfThought
            extract.callbacks.append(StepConstraint(
                lambda inst, inputs: fields_grammar(output_fields(inst, inputs) or ["reasoning", "answer"])))
        self.run_state, self.workspace = run, run.workspace
        self.finished = False  # the model called finish (False: max_iters ran out, or the context overflowed)

    @property
    def records(self) -> list[IterationRecord]:
        return self.run_state.records

    def _step_grammar(self, instance: Any, inputs: dict[str, Any]) -> str | None:
        names = output_fields(instance, inputs)
        if names != ["next_thought", "next_tool_name", "next_tool_args"]:
            return None
        return step_grammar(self.workspace.registry, self.workspace.caps, fmt="react", query=self.run_state.query)

    def forward(self, **input_args: Any) -> dspy.Prediction:
        trajectory: dict[str, Any] = {}
        max_iters = input_args.pop("max_iters", self.max_iters)
        # The inputs are re-sent every step: they are this loop's "variable listing".
        shown = sum(len(str(v)) for v in input_args.values())
        for idx in range(max_iters):
            try:
                if self._step(idx, trajectory, input_args, shown):
                    self.finished = True
                    break
            except ContextWindowExceededError:
                break  # as dspy.ReAct: answer from what the trajectory has
        extract = self._call_with_potential_trajectory_truncation(self.extract, trajectory, **input_args)
        return dspy.Prediction(trajectory=trajectory, **extract)

    def _step(self, idx: int, trajectory: dict[str, Any], input_args: dict[str, Any], shown: int) -> bool:
        scope = self.run_state.step(idx + 1, shown)
        pred = self._call_with_potential_trajectory_truncation(self.react, trajectory, **input_args)
        thought = str(pred.next_thought or "")
        name = str(pred.next_tool_name or "").strip()
        args = pred.next_tool_args if pred.next_tool_args is not None else {}
        code = call_text(name, args)
        fatal: Exception | None = None
        try:
            done, observation = self._act(thought, name, args, code)
        except Exception as exc:  # not a ToolError: the step is recorded, then the run ends
            fatal, done = exc, False
            observation = f"[Error] {type(exc).__name__}: {exc} (the run ended)"
        record = scope.record(thought, code, observation)
        trajectory.update({f"thought_{idx}": thought, f"tool_name_{idx}": name, f"tool_args_{idx}": args,
                           f"observation_{idx}": record.output})
        scope.log_context(record, self.react.signature.instructions, tool_results_are_output=True)
        if fatal is not None:
            raise fatal
        return done

    def _act(self, thought: str, name: str, args: Any, code: str) -> tuple[bool, str]:
        """Run the chosen tool (or finish) under the Turing guard; (finished, observation)."""
        killed = self.run_state.check_step(thought, code)
        if killed is not None:  # the step is discarded: the tool does not run, the model acts again
            return False, killed
        if name == FINISH:
            done, observation = True, "Completed."
        else:
            done, observation = False, self._call_tool(name, args)
        return done, self.run_state.with_corrections(observation)

    def _call_tool(self, name: str, args: Any) -> str:
        if name not in self.tools:  # an off-format reply salvaged by the adapter lands here
            return f"[Error] ToolError: unknown tool {name[:100]!r}; next_tool_name is one of {', '.join(self.tools)}"
        if not isinstance(args, dict):
            return f"[Error] ToolError: next_tool_args must be a JSON object of arguments, got {args!r}"
        ws, tap = self.workspace, self.run_state.tap
        ws.extras[DEADLINE_KEY] = time.monotonic() + self.run_state.options.step_timeout
        try:
            with self.run_state.observing(), tap.watching(name) as call:
                call.result = ws.call(name, **decode_handles(dict(args)))
            return _as_text(call.result)
        except ToolError as exc:  # the model's to fix: reported back, the loop goes on
            return f"[Error] ToolError: {exc}"
        finally:
            ws.extras.pop(DEADLINE_KEY, None)


class ReactLoop:
    """dspy.ReAct's loop over the workspace's tools: one tool call per step, then an extract of the answer."""

    name = "react"
    options = ReactOptions

    def run(self, run: Run) -> None:
        opts = run.options
        signature = dspy.Signature(RLM_SIGNATURE, opts.instructions) if opts.instructions else RLM_SIGNATURE
        agent = MeteredReAct(signature, run=run)
        context_value = handle_description(run.ref) if run.ref is not None else run.text
        pred = run.call_dspy(agent, context=context_value, query=run.query)
        run.traj.answer = str(pred.answer)
        run.traj.final_reasoning = str(getattr(pred, "reasoning", "") or "")
        run.traj.submitted = agent.finished


def run_react(query: str, context: Any, *,
              # what the run acts on and where it writes (RunEnv)
              lm: Any, workspace: Workspace | None = None, tools: ToolRegistry | None = None, turing: Any = None,
              trace: ContextTrace | None = None, runs_dir: str | Path | None = None, run_id: str | None = None,
              source_path: str | None = None, parent: Any = None,
              # every executor's options (RunOptions)
              context_mode: str = "handle", max_iters: int = 10, max_output_chars: int = 10_000,
              trace_budget: int = 8000, instructions: str | None = None, decoding: str = "grammar",
              max_tokens: int | None = None, max_seconds: float | None = None, max_cost: float | None = None,
              max_errors: int | None = None, show_budget: bool = False,
              # ReAct's own (ReactOptions)
              step_timeout: float = 30.0) -> Trajectory:
    """Run one task with dspy.ReAct over the workspace's tools; the trajectory is
    :func:`run_rlm`'s shape.

    Each step is one tool call chosen by the model (``next_thought``, ``next_tool_name``, ``next_tool_args``);
    ``finish`` ends the loop and one more LM call extracts ``answer`` from the trajectory, as in dspy.ReAct
    (``submitted`` is True when the model called finish, False when ``max_iters`` ran out).
    ``context_mode="handle"`` stores the context in the workspace and shows the model its key (tools take the key);
    ``"string"`` puts the whole text in every prompt. ``max_output_chars`` clips each observation. ``step_timeout``
    bounds each tool call (tools run in this process). ``turing``: post_inference checks each step's thought and
    tool call before the tool runs (a kill discards the step), the tool-call phases run as workspace observers.
    Errors are recorded in ``Trajectory.error``. ``trace_budget`` and ``trace`` as in :func:`run_rlm`.
    ``decoding="grammar"`` makes each step one tool call typed by the tool's schema, or finish.

    Each keyword is the field of the same name and default in :class:`RunEnv` or :class:`ReactOptions`
    (``tests/test_public_surface.py`` checks that they stay the same); invalid options raise ValueError before
    anything runs.
    """
    return execute_keywords(_LOOP, ReactOptions, **locals())  # first statement: locals() is the parameters


_LOOP = ReactLoop()
