"""The ReAct executor: dspy.ReAct over the workspace's tools (a tool loop, no code), metered per step."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import dspy
from dspy.utils.exceptions import ContextWindowExceededError

from rlmlab.errors import ToolError
from rlmlab.executors._constrain import StepConstraint, check_decoding, decoding_note, grammar_lm, output_fields
from rlmlab.executors._step_grammar import fields_grammar, step_grammar
from rlmlab.executors._context_events import ToolTap, call_events
from rlmlab.executors._rlm import (
    RLM_SIGNATURE, close_trajectory, dspy_tools, make_guard, new_run_id, start_run,
)
from rlmlab.executors._trajectory import IterationRecord, Trajectory, clip_output
from rlmlab.handles import BlobRef, decode_handles, encode_handles
from rlmlab.lm import CallRecorder, LenientChatAdapter, LMCall
from rlmlab.tools import ToolRegistry, Workspace
from rlmlab.trace import ContextEvent, ContextTrace, LeakageMeter

__all__ = ["MeteredReAct", "run_react", "handle_description", "clip_output"]

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


class MeteredReAct(dspy.ReAct):
    """dspy.ReAct whose every step is an :class:`IterationRecord`: thought, tool call, observation, cost.

    Tool calls go through :meth:`Workspace.call` (caps, observers, the Turing
    Protocol's pre/post-execution hooks). A :class:`ToolError` (bad arguments, a
    blocked call) is the step's observation and the loop goes on; any other
    exception (a tool breaking its cap, a bug) is recorded as the step's output
    and ends the run, as in the RLM executor; an LM failure ends the run. Observations are clipped to ``max_output_chars`` in the prompt; the
    record keeps them whole. The caller logs the Final event.
    """

    def __init__(self, signature: Any, *, workspace: Workspace, recorder: CallRecorder, meter: LeakageMeter,
                 trace: ContextTrace | None = None, guard: Any = None, max_iters: int = 10,
                 max_output_chars: int = 10_000, decoding: str = "free", query: str | None = None):
        super().__init__(signature, tools=dspy_tools(workspace), max_iters=max_iters)
        if decoding == "grammar":  # each step is one typed tool call (or finish); the extract is one line per field
            self.react.callbacks.append(StepConstraint(self._step_grammar))
            extract = getattr(self.extract, "predict", self.extract)  # dspy.ReAct's extract is a ChainOfThought
            extract.callbacks.append(StepConstraint(
                lambda inst, inputs: fields_grammar(output_fields(inst, inputs) or ["reasoning", "answer"])))
        self.query = query
        self.workspace, self.recorder, self.meter, self.guard = workspace, recorder, meter, guard
        self.trace = trace if trace is not None else ContextTrace()
        self.max_output_chars = max_output_chars
        self.records: list[IterationRecord] = []
        self.finished = False  # the model called finish (False: max_iters ran out, or the context overflowed)
        self._tap = ToolTap()

    def _step_grammar(self, instance: Any, inputs: dict[str, Any]) -> str | None:
        names = output_fields(instance, inputs)
        if names != ["next_thought", "next_tool_name", "next_tool_args"]:
            return None
        return step_grammar(self.workspace.registry, self.workspace.caps, fmt="react", query=self.query)

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
        n = idx + 1
        self.meter.begin(n, shown)
        self._tap.drain()
        if self.guard is not None:
            self.guard.begin_turn(n)
        mark, t0 = self.recorder.mark(), time.perf_counter()
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
        lm_calls = self.recorder.since(mark, step=n)
        calls = [c for c in lm_calls if c.role == "main"]
        leak = self.meter.end(stdout_chars=len(observation), prompt_chars=sum(c.prompt_chars for c in calls),
                              prompt_tokens=sum(c.input_tokens for c in calls),
                              completion_tokens=sum(c.output_tokens for c in calls))
        records, tapped = self._tap.drain()
        record = IterationRecord(
            index=n, reasoning=thought, code=code, output=clip_output(observation, self.max_output_chars),
            tool_calls=[r.to_dict() for r in records], leakage=leak, input_tokens=leak.prompt_tokens,
            output_tokens=leak.completion_tokens, elapsed_ms=int((time.perf_counter() - t0) * 1000),
            output_chars=len(observation),
        )
        if self.guard is not None:
            record.turing = self.guard.end_turn(f"{thought}\n{code}", observation)
        self.records.append(record)
        shown_observation = clip_output(observation, self.max_output_chars)
        trajectory.update({f"thought_{idx}": thought, f"tool_name_{idx}": name, f"tool_args_{idx}": args,
                           f"observation_{idx}": shown_observation})
        self._log_context(record, calls, tapped, shown_observation)
        if fatal is not None:
            raise fatal
        return done

    def _act(self, thought: str, name: str, args: Any, code: str) -> tuple[bool, str]:
        """Run the chosen tool (or finish) under the Turing guard; (finished, observation)."""
        verdict = None
        if self.guard is not None:
            verdict = self.guard.post_inference(thought, code, self.workspace.registry.names())
            if verdict.kill:  # the step is discarded: the tool does not run, the model acts again
                return False, f"[Turing] This step was not executed.\n{verdict.correction or ''}".rstrip()
        if name == FINISH:
            done, observation = True, "Completed."
        else:
            done, observation = False, self._call_tool(name, args)
        if self.guard is not None:
            notes = ([verdict.correction] if verdict is not None and verdict.correction else [])
            notes += self.guard.take_pending_corrections()
            if notes:
                observation = "\n\n".join([observation, *notes])
        return done, observation

    def _call_tool(self, name: str, args: Any) -> str:
        if name not in self.tools:  # an off-format reply salvaged by the adapter lands here
            return f"[Error] ToolError: unknown tool {name[:100]!r}; next_tool_name is one of {', '.join(self.tools)}"
        if not isinstance(args, dict):
            return f"[Error] ToolError: next_tool_args must be a JSON object of arguments, got {args!r}"
        observers = [self.meter, self._tap] + ([self.guard] if self.guard is not None else [])
        self.workspace.observers.extend(observers)
        try:
            with self._tap.watching(name) as call:
                call.result = self.workspace.call(name, **decode_handles(dict(args)))
            return _as_text(call.result)
        except ToolError as exc:  # the model's to fix: reported back, the loop goes on
            return f"[Error] ToolError: {exc}"
        finally:
            for obs in observers:
                self.workspace.observers.remove(obs)

    def _log_context(self, record: IterationRecord, main_calls: list[LMCall], tapped: list[Any],
                     observation: str) -> None:
        n = record.index
        if n == 1:
            first = main_calls[0].input_tokens if main_calls else 0
            self.trace.log_event(ContextEvent.system_prompt(self.react.signature.instructions, first or None,
                                                            iteration=0))
        self.trace.log_event(ContextEvent.assistant_code(record.code, record.output_tokens or None, iteration=n))
        if tapped:  # the tool's result is the observation that enters the next prompt
            for event in call_events(tapped, [], n):
                self.trace.log_event(event)
        else:  # finish, a Turing kill, or arguments that were not an object
            self.trace.log_event(ContextEvent.execution_output(observation, iteration=n))


def run_react(
    query: str,
    context: str | BlobRef,
    *,
    lm: Any,
    workspace: Workspace | None = None,
    tools: ToolRegistry | None = None,
    context_mode: str = "handle",
    max_iters: int = 10,
    max_llm_calls: int = 20,
    max_output_chars: int = 10_000,
    step_timeout: float = 30.0,
    runs_dir: str | Path | None = None,
    run_id: str | None = None,
    source_path: str | None = None,
    trace_budget: int = 8000,
    trace: ContextTrace | None = None,
    turing: Any = None,
    instructions: str | None = None,
    decoding: str = "free",
    max_statements: int = 3,
) -> Trajectory:
    """Run one task with dspy.ReAct over the workspace's tools; the trajectory is :func:`run_rlm`'s shape.

    Each step is one tool call chosen by the model (``next_thought``,
    ``next_tool_name``, ``next_tool_args``); ``finish`` ends the loop and one
    more LM call extracts ``answer`` from the trajectory, as in dspy.ReAct
    (``submitted`` is True when the model called finish, False when
    ``max_iters`` ran out). ``context_mode="handle"`` stores the context in the
    workspace and shows the model its key (tools take the key); ``"string"``
    puts the whole text in every prompt. ``max_output_chars`` clips each
    observation in the prompt. ``max_llm_calls`` and ``step_timeout`` are
    accepted so every executor takes the same keywords; ReAct makes no
    sub-LLM calls and runs tools in-process, so they have no effect.
    ``turing``: post_inference checks each step's thought and tool call
    before the tool runs (a kill discards the step), the tool-call phases run
    as workspace observers. Errors are recorded in ``Trajectory.error``.
    ``trace_budget`` and ``trace`` (a caller's trace to follow live) as in :func:`run_rlm`.
    ``decoding="grammar"`` makes each step one tool call typed by the tool's schema, or finish (a ReAct step is
    one call, so ``max_statements`` has no effect here).
    """
    del max_llm_calls, step_timeout, max_statements  # the shared signature; nothing here for them to limit
    check_decoding(decoding)
    trace, workspace, recorder, meter, ref, text = start_run(context, context_mode, lm=lm, workspace=workspace,
                                                             tools=tools, trace_budget=trace_budget, trace=trace)
    context_value = handle_description(ref) if ref is not None else text
    context_ref = ref.key if ref is not None else None
    run_id = run_id or new_run_id("react")
    guard = make_guard(turing, workspace, run_id)
    signature = dspy.Signature(RLM_SIGNATURE, instructions) if instructions else RLM_SIGNATURE
    decoding, note = decoding_note(decoding, lm)
    agent = MeteredReAct(signature, workspace=workspace, recorder=recorder, meter=meter, trace=trace, guard=guard,
                         max_iters=max_iters, max_output_chars=max_output_chars, decoding=decoding, query=query)
    traj = Trajectory(run_id=run_id, query=query, lm=str(getattr(lm, "model", lm)), context_mode=context_mode,
                      context_ref=context_ref, source_path=source_path, started=time.time(), executor="react",
                      decoding=decoding, notes=[note] if note else [])
    adapter = LenientChatAdapter()
    mark, t0 = recorder.mark(), time.perf_counter()
    try:
        with dspy.context(lm=grammar_lm(lm) if decoding == "grammar" else lm, adapter=adapter):
            pred = agent(context=context_value, query=query)
        traj.answer = str(pred.answer)
        traj.final_reasoning = str(getattr(pred, "reasoning", "") or "")
        traj.submitted = agent.finished
    except Exception as exc:  # recorded, not lost: the steps so far are kept
        traj.error = f"{type(exc).__name__}: {exc}"
    traj.salvaged_replies = adapter.salvaged
    return close_trajectory(traj, agent.records, recorder.since(mark), t0, trace, runs_dir)
