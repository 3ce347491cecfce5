"""The RLM executor: dspy.RLM over the rlmlab namespace, metered per iteration, written as a trajectory."""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from pathlib import Path
from typing import Any, NamedTuple

import dspy
from dspy.primitives.prediction import Prediction
from dspy.utils.callback import BaseCallback
from dspy.primitives.sandbox_serializable import SandboxSerializable

from rlmlab.executors._constrain import StepConstraint, check_decoding, decoding_note, grammar_lm, output_fields
from rlmlab.executors._context_events import TappedCall, TappedFactory, ToolTap, call_events
from rlmlab.executors._interpreter import InterpreterFactory
from rlmlab.executors._step_grammar import assigned_names, fields_grammar, output_numbers, step_grammar
from rlmlab.executors._trajectory import TRAJECTORY_FILE, IterationRecord, Trajectory, clip_output
from rlmlab.handles import BlobRef
from rlmlab.lm import CALLS_FILE, CallRecorder, LenientChatAdapter, LMCall, recorder_of, write_calls
from rlmlab.tools import ToolRegistry, Workspace
from rlmlab.trace import ContextEvent, ContextTrace, LeakageMeter

__all__ = ["MeteredRLM", "run_rlm", "new_run_id", "dspy_tools", "make_guard", "close_trajectory", "start_run",
           "RunStart"]

RLM_SIGNATURE = "context, query -> answer"


class _HandleInput(SandboxSerializable):
    """A BlobRef passed as an RLM input: the REPL gets the handle, the prompt a one-line preview."""

    def __init__(self, ref: BlobRef):
        self.ref = ref

    def sandbox_setup(self) -> str:
        return ""

    def to_sandbox(self) -> bytes:
        return json.dumps({"key": self.ref.key, "n": self.ref.n}).encode()

    def sandbox_assignment(self, var_name: str, data_expr: str) -> str:
        return f"{var_name} = BlobRef(**__import__('json').loads({data_expr}))"

    def rlm_preview(self, max_chars: int = 500) -> str:
        return (f"{self.ref!r}: a handle to {self.ref.n:,} characters. "
                "Inspect with ctx_stats(ref), ctx_peek(ref, n), ctx_slice(ref, start, end), ctx_find(ref, pattern).")


_HandleInput.__name__ = "BlobRef"


def dspy_tools(workspace: Workspace) -> list[dspy.Tool]:
    """The workspace's registered tools as dspy.Tool objects (name, description, JSON schema of arguments)."""
    tools = []
    for spec in workspace.registry:
        props = spec.schema_for_caps(workspace.caps)["properties"]
        tools.append(dspy.Tool(workspace.bound(spec.name), name=spec.name, desc=spec.description,
                               args={k: dict(v) for k, v in props.items()}))
    return tools


class _LastAction(BaseCallback):
    """Keeps the last output of the action predictor (reasoning and code) for the post_inference check."""

    def __init__(self) -> None:
        self.last: Any = None

    def on_module_end(self, call_id: str, outputs: Any, exception: Exception | None = None) -> None:
        if exception is None:
            self.last = outputs


class MeteredRLM(dspy.RLM):
    """dspy.RLM that records an :class:`IterationRecord` per iteration (code, output, tools, leakage, tokens).

    It also logs each iteration's context events into ``trace`` (a fresh
    :class:`ContextTrace` unless one is given); the caller logs the Final event.
    """

    def __init__(self, signature: Any, *, workspace: Workspace, recorder: CallRecorder, meter: LeakageMeter,
                 factory: InterpreterFactory, trace: ContextTrace | None = None, guard: Any = None,
                 decoding: str = "free", max_statements: int = 3, query: str | None = None,
                 context_text: str | None = None, **kwargs: Any):
        self._tap = ToolTap()
        factory = TappedFactory(factory, self._tap)
        super().__init__(signature, tools=dspy_tools(workspace), interpreter_factory=factory, **kwargs)
        self.workspace, self.recorder, self.meter, self.factory = workspace, recorder, meter, factory
        self.trace = trace if trace is not None else ContextTrace()
        self.records: list[IterationRecord] = []
        # The Turing Protocol (rlmlab.turing.TuringGuard), if any: it needs each action before its code runs.
        self.guard = guard
        self._action = _LastAction()
        self.generate_action.callbacks.append(self._action)
        self.max_statements, self.query, self.context_text = max_statements, query, context_text
        if decoding == "grammar":  # every action (and the extract fallback) follows a grammar made for its step
            self.generate_action.callbacks.append(StepConstraint(self._action_grammar))
            self.extract.callbacks.append(StepConstraint(self._extract_grammar))

    def _action_grammar(self, instance: Any, inputs: dict[str, Any]) -> str | None:
        """The step grammar for the next action: the workspace's tools, the variables earlier steps assigned,
        the numbers they printed, the injected templates; the last iteration must SUBMIT."""
        sig = inputs.get("signature") or getattr(instance, "signature", None)
        if sig is None:  # a replacement predictor with no signature of its own: leave it free
            return None
        names = list(sig.output_fields)
        if names != ["reasoning", "code"]:  # a replacement predictor with other fields: leave it free
            return None
        scope = ["context"] + [n for it in self.records for n in assigned_names(it.code)]
        numbers = [n for it in self.records for n in output_numbers(it.output)]
        templates = [t["template"] for t in self.workspace.extras.get("step_templates", []) if t.get("template")]
        return step_grammar(self.workspace.registry, self.workspace.caps, fmt="rlm", scope=scope,
                            max_statements=self.max_statements, query=self.query, templates=templates,
                            numbers=numbers, must_submit=len(self.records) + 1 >= self.max_iters,
                            templates_first=not self.records, context=self.context_text)

    def _extract_grammar(self, instance: Any, inputs: dict[str, Any]) -> str | None:
        names = output_fields(instance, inputs)
        return fields_grammar(names) if names else None

    def _execute_code(self, repl: Any, code: str, input_args: dict[str, Any]) -> Any:
        if self.guard is None:
            return super()._execute_code(repl, code, input_args)
        action = self._action.last
        reasoning = str(getattr(action, "reasoning", "") or "")
        verdict = self.guard.post_inference(reasoning, code, self.workspace.registry.names())
        if verdict.kill:  # the step is discarded: its code does not run, the model answers again
            return f"[Turing] This step was not executed.\n{verdict.correction or ''}".rstrip()
        result = super()._execute_code(repl, code, input_args)
        notes = [verdict.correction] if verdict.correction else []
        notes += self.guard.take_pending_corrections()
        if notes and isinstance(result, str):
            result = "\n\n".join([result, *notes]) if result else "\n\n".join(notes)
        return result

    def _prepare_serializable_vars(self, input_args: dict[str, Any], repl: Any) -> dict[str, Any]:
        repl.recording_setup = True
        try:
            return super()._prepare_serializable_vars(input_args, repl)
        finally:
            repl.recording_setup = False

    def _setup_facade(self, repl: Any, budget: Any, interpreter_factory: Any) -> str:
        repl.recording_setup = True
        try:
            return super()._setup_facade(repl, budget, interpreter_factory)
        finally:
            repl.recording_setup = False

    def _execute_iteration(self, repl, variables, history, iteration, input_args, output_field_names,
                           interpreter_factory, sub_agent_rules):
        state = self._begin_iteration(iteration, variables)
        try:
            result = super()._execute_iteration(repl, variables, history, iteration, input_args,
                                                output_field_names, interpreter_factory, sub_agent_rules)
        except Exception as exc:  # not the model's to fix (a tool's cap violation, a bug, the LM failing)
            return self._end_iteration(state, None, exc)
        finally:
            self._drop_observers(state)
        return self._end_iteration(state, result, None)

    async def _aexecute_iteration(self, repl, variables, history, iteration, input_args, output_field_names,
                                  interpreter_factory, sub_agent_rules):
        # acall()/aforward(): metered exactly as the sync path (one record and its trace events per iteration).
        state = self._begin_iteration(iteration, variables)
        try:
            result = await super()._aexecute_iteration(repl, variables, history, iteration, input_args,
                                                       output_field_names, interpreter_factory, sub_agent_rules)
        except Exception as exc:
            return self._end_iteration(state, None, exc)
        finally:
            self._drop_observers(state)
        return self._end_iteration(state, result, None)

    def _begin_iteration(self, iteration: int, variables: list[Any]) -> dict[str, Any]:
        self.meter.begin(iteration + 1, sum(len(v.format()) for v in variables))
        self._tap.drain()
        observers = [self.meter, self._tap] + ([self.guard] if self.guard is not None else [])
        if self.guard is not None:
            self.guard.begin_turn(iteration + 1)
        self.workspace.observers.extend(observers)
        self._action.last = None
        return {"iteration": iteration, "observers": observers, "mark": self.recorder.mark(),
                "t0": time.perf_counter()}

    def _drop_observers(self, state: dict[str, Any]) -> None:
        for obs in state.pop("observers", []):
            self.workspace.observers.remove(obs)

    def _end_iteration(self, state: dict[str, Any], result: Any, fatal: Exception | None) -> Any:
        """Record the iteration; with ``fatal`` (an exception of the step) record it too, then re-raise it."""
        if fatal is not None:
            if self._action.last is None:
                raise fatal  # no action was produced this iteration (the LM failed): nothing to record
            action = self._action.last  # the action ran and a tool raised: the step is recorded, the run ends
            entry = {"reasoning": str(getattr(action, "reasoning", "") or ""),
                     "code": str(getattr(action, "code", "") or ""),
                     "output": f"[Error] {type(fatal).__name__}: {fatal} (the run ended)"}
        else:
            entry = result.trajectory[-1] if isinstance(result, Prediction) else result.entries[-1].model_dump()
        lm_calls = self.recorder.since(state["mark"], step=state["iteration"] + 1)
        calls = [c for c in lm_calls if c.role == "main"]
        leak = self.meter.end(
            stdout_chars=len(entry["output"]),
            prompt_chars=sum(c.prompt_chars for c in calls),
            prompt_tokens=sum(c.input_tokens for c in calls),
            completion_tokens=sum(c.output_tokens for c in calls),
        )
        records, tapped = self._tap.drain()
        record = IterationRecord(
            index=state["iteration"] + 1, reasoning=entry.get("reasoning", ""), code=entry["code"],
            output=clip_output(entry["output"], self.max_output_chars), tool_calls=[r.to_dict() for r in records],
            leakage=leak, input_tokens=leak.prompt_tokens, output_tokens=leak.completion_tokens,
            elapsed_ms=int((time.perf_counter() - state["t0"]) * 1000), output_chars=len(entry["output"]),
        )
        if self.guard is not None:  # the guard sees the whole output (grounding may need its tail)
            record.turing = self.guard.end_turn(f"{record.reasoning}\n{record.code}", entry["output"])
        self.records.append(record)
        self._log_context(record, calls, tapped, [c for c in lm_calls if c.role == "sub"])
        if fatal is not None:
            raise fatal
        return result

    def _action_instructions(self) -> str:
        """The action predictor's instructions. DSPy lets a replacement predictor carry no ``signature`` (it
        then uses the RLM's own action signature), so neither may be assumed here."""
        sig = getattr(self.generate_action, "signature", None) or getattr(self, "_action_signature", None)
        return str(getattr(sig, "instructions", "") or "")

    def _log_context(self, record: IterationRecord, main_calls: list[LMCall], tapped: list[TappedCall],
                     sub_calls: list[LMCall]) -> None:
        n = record.index
        if n == 1:
            # The whole first prompt (instructions, variable listing, query), before any history.
            instructions = self._action_instructions()
            first = main_calls[0].input_tokens if main_calls else 0
            self.trace.log_event(ContextEvent.system_prompt(instructions, first or None, iteration=0))
        # The model's whole completion (reasoning and code) goes into the history the next prompt carries.
        self.trace.log_event(ContextEvent.assistant_code(record.code, record.output_tokens or None, iteration=n))
        for event in call_events(tapped, sub_calls, n):
            self.trace.log_event(event)
        self.trace.log_event(ContextEvent.execution_output(record.output, iteration=n))


def new_run_id(prefix: str = "rlm") -> str:
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"


class RunStart(NamedTuple):
    """What every executor sets up before its first step (see :func:`start_run`)."""

    trace: ContextTrace
    workspace: Workspace
    recorder: CallRecorder
    meter: LeakageMeter
    ref: BlobRef | None  # the stored context in "handle" mode
    text: str | None  # the plain context in "string" mode


def start_run(context: str | BlobRef, context_mode: str, *, lm: Any, workspace: Workspace | None,
              tools: ToolRegistry | None, trace_budget: int, trace: ContextTrace | None = None) -> RunStart:
    """The shared start of a run: check ``context_mode``, make the trace (its budget is checked before anything
    runs), the workspace (limited to ``tools`` if given), the LM's recorder and the leakage meter, and store the
    context as a handle ("handle") or resolve it to its text ("string").

    A given ``trace`` is used as it is (its own budget; ``trace_budget`` is ignored) and the run appends to it.
    """
    if context_mode not in ("handle", "string"):
        raise ValueError(f"context_mode: {context_mode!r}; use 'handle' or 'string'")
    if trace is None:
        trace = ContextTrace(budget_tokens=trace_budget)
    workspace = workspace or Workspace()
    if tools is not None:
        workspace = dataclasses.replace(workspace, registry=tools)
    meter = LeakageMeter(workspace.caps.large_return_chars)
    if context_mode == "handle":
        ref = context if isinstance(context, BlobRef) else workspace.store.put(context, "context")
        return RunStart(trace, workspace, recorder_of(lm), meter, ref, None)
    text = workspace.store.get(context) if isinstance(context, BlobRef) else context
    return RunStart(trace, workspace, recorder_of(lm), meter, None, text)


def run_rlm(
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
    """Run one RLM task and return its trajectory (also written to ``runs_dir/<run-id>/trajectory.jsonl``).

    ``context_mode="handle"`` (default) stores the context in the workspace and
    passes a BlobRef; ``"string"`` passes the plain string, DSPy's default.
    ``tools`` limits the agent to a registry (default: all registered tools;
    ``ToolRegistry()`` gives DSPy's plain RLM with no rlmlab tools).
    An exception inside the run is recorded in ``Trajectory.error`` and the
    iterations done so far are kept and written; it is not re-raised.
    ``trace_budget`` is the token budget of the run's :class:`ContextTrace`
    (``Trajectory.context_trace``). ``trace`` gives that trace instead, so a caller
    can follow the run as it goes (``ContextTrace.subscribe``, a live
    :class:`rlmlab.jupyter.BudgetTimeline`); its own budget then applies and
    ``trace_budget`` is ignored. Events are appended to it, so give a fresh trace per run.
    ``turing`` (a :class:`rlmlab.turing.TuringProtocol`) checks every model step and tool call; its
    corrections reach the model as the step's output and are kept in ``IterationRecord.turing``.
    ``instructions`` become the task instructions at the top of every action prompt (DSPy's signature
    instructions): this is where a :class:`rlmlab.memory.ContextBuilder`'s context is injected.
    ``decoding="grammar"`` constrains every step to the step grammar of the workspace's tools (at most
    ``max_statements`` statements; templates in ``workspace.extras["step_templates"]``; see
    :mod:`rlmlab.executors._step_grammar`); a model that cannot constrain runs free and the trajectory's
    ``notes`` say so.
    """
    check_decoding(decoding)
    trace, workspace, recorder, meter, ref, text = start_run(context, context_mode, lm=lm, workspace=workspace,
                                                             tools=tools, trace_budget=trace_budget, trace=trace)
    decoding, note = decoding_note(decoding, lm)
    factory = InterpreterFactory(workspace, step_timeout=step_timeout, sub_call_counter=meter.record_sub_calls)
    context_value: Any = _HandleInput(ref) if ref is not None else text
    context_ref = ref.key if ref is not None else None
    run_id = run_id or new_run_id()
    guard = make_guard(turing, workspace, run_id)
    signature = dspy.Signature(RLM_SIGNATURE, instructions) if instructions else RLM_SIGNATURE
    rlm = MeteredRLM(signature, workspace=workspace, recorder=recorder, meter=meter, factory=factory,
                     trace=trace, guard=guard, max_iters=max_iters, max_llm_calls=max_llm_calls,
                     max_output_chars=max_output_chars, decoding=decoding, max_statements=max_statements, query=query,
                     context_text=text if text is not None else workspace.store.get(ref))
    traj = Trajectory(run_id=run_id, query=query, lm=str(getattr(lm, "model", lm)),
                      context_mode=context_mode, context_ref=context_ref, source_path=source_path,
                      started=time.time(), decoding=decoding, notes=[note] if note else [])
    adapter = LenientChatAdapter()
    mark, t0 = recorder.mark(), time.perf_counter()
    try:
        with dspy.context(lm=grammar_lm(lm) if decoding == "grammar" else lm, adapter=adapter):
            pred = rlm(context=context_value, query=query)
        traj.answer = str(pred.answer)
        traj.final_reasoning = str(getattr(pred, "final_reasoning", ""))
        traj.submitted = traj.final_reasoning != "Extract forced final output"
    except Exception as exc:  # recorded, not lost: the iterations so far are kept
        traj.error = f"{type(exc).__name__}: {exc}"
    traj.salvaged_replies = adapter.salvaged
    return close_trajectory(traj, rlm.records, recorder.since(mark), t0, trace, runs_dir)


# -- shared by every executor (rlm, react, scratchpad) -------------------------------------------------


def make_guard(turing: Any, workspace: Workspace, run_id: str) -> Any:
    """A :class:`rlmlab.turing.TuringGuard` running ``turing`` over the workspace's tools, or None without one."""
    if turing is None:
        return None
    from rlmlab.turing import TuringGuard

    schemas = {spec.name: spec.schema_for_caps(workspace.caps) for spec in workspace.registry}
    return TuringGuard(turing, session=run_id, scope="main", tool_schemas=schemas)


def close_trajectory(traj: Trajectory, records: list[IterationRecord], calls: list[LMCall], t0: float,
                     trace: ContextTrace, runs_dir: str | Path | None) -> Trajectory:
    """Fill the run's totals from its iterations and LM calls, log the Final event, write the JSONL if asked
    (the trajectory, and beside it the LM calls with their prompts and completions)."""
    traj.iterations = records
    traj.elapsed_ms = int((time.perf_counter() - t0) * 1000)
    traj.input_tokens = sum(c.input_tokens for c in calls)
    traj.output_tokens = sum(c.output_tokens for c in calls)
    traj.lm_calls = len(calls)
    traj.subcalls = sum(it.leakage.sub_llm_calls for it in records)
    if traj.answer is not None:
        trace.log_event(ContextEvent.final(traj.answer, iteration=len(records)))
    traj.context_trace = trace
    if runs_dir is not None:
        traj.write_jsonl(Path(runs_dir) / traj.run_id / TRAJECTORY_FILE)
        write_calls(Path(runs_dir) / traj.run_id / CALLS_FILE, calls)
    return traj
