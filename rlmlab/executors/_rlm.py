"""The RLM executor: dspy.RLM over the rlmlab namespace, metered per iteration, written as a trajectory."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import dspy
from dspy.primitives.prediction import Prediction
from dspy.utils.callback import BaseCallback
from dspy.primitives.sandbox_serializable import SandboxSerializable

from rlmlab.executors._budget import budget_line
from rlmlab.executors._constrain import StepConstraint, output_fields, run_step_grammar
from rlmlab.executors._context_events import TappedFactory
from rlmlab.executors._dspy_adapter import AdaptedRLM, action_signature, set_action_signature
from rlmlab.executors._harness import DEFAULT_SANDBOX, CodeRunOptions, Run, StepScope, execute_keywords
from rlmlab.executors._interpreter import InterpreterFactory
from rlmlab.executors._recursion import child_tools, recursion_docs
from rlmlab.executors._prompt import CompactVariable, GuidedPredict, compact_action_signature, resolve_prompt
from rlmlab.executors._step_grammar import fields_grammar
from rlmlab.executors._trajectory import IterationRecord, Trajectory
from rlmlab.handles import BlobRef
from rlmlab.oracle import says_nothing
from rlmlab.tools import ToolRegistry, Workspace, source_roots
from rlmlab.trace import ContextTrace

__all__ = ["MeteredRLM", "RlmLoop", "run_rlm", "dspy_tools", "RLM_SIGNATURE", "dropped_extract"]

RLM_SIGNATURE = "context, query -> answer"
# the note a run carries when the extract step's answer is dropped: head + why + tail (read by dropped_extract)
_DROPPED = ("extract fallback: ", "; the run ends without an answer")


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


class MeteredRLM(AdaptedRLM):
    """dspy.RLM that records an :class:`IterationRecord` per iteration (code, output, tools, leakage, tokens).

    Each iteration is a :class:`~rlmlab.executors._harness.StepScope` of ``run``; its context events go into
    ``run.trace``. The harness logs the Final event. With ``guidance`` (not None) the action prompt is the
    compact one of :mod:`rlmlab.executors._prompt`, ``guidance`` its per-task input.
    """

    def __init__(self, signature: Any, *, run: Run, factory: InterpreterFactory, guidance: str | None = None,
                 **kwargs: Any):
        self.run_state = run
        factory = TappedFactory(factory, run.tap, run.clock)
        super().__init__(signature, tools=dspy_tools(run.workspace), interpreter_factory=factory, **kwargs)
        self._compact = guidance is not None
        if guidance is not None:
            set_action_signature(self, compact_action_signature(self))
            self.generate_action = GuidedPredict(action_signature(self), guidance)
        self.workspace, self.factory = run.workspace, factory
        self._action = _LastAction()
        self.generate_action.callbacks.append(self._action)
        self._scope: StepScope | None = None
        if run.options.decoding == "grammar":  # every action (and the extract fallback) follows a step grammar
            self.generate_action.callbacks.append(StepConstraint(self._action_grammar))
            self.extract.callbacks.append(StepConstraint(self._extract_grammar))

    @property
    def records(self) -> list[IterationRecord]:
        return self.run_state.records

    @property
    def trace(self) -> ContextTrace:
        return self.run_state.trace

    def _action_grammar(self, instance: Any, inputs: dict[str, Any]) -> str | None:
        """The step grammar for the next action: the workspace's tools, the variables earlier steps assigned,
        the numbers they printed, the injected templates; the last iteration must SUBMIT."""
        sig = inputs.get("signature") or getattr(instance, "signature", None)
        if sig is None:  # a replacement predictor with no signature of its own: leave it free
            return None
        if list(sig.output_fields) != ["reasoning", "code"]:  # a replacement predictor with other fields
            return None
        return run_step_grammar(self.run_state, fmt="rlm", must_submit=len(self.records) + 1 >= self.max_iters)

    def _extract_grammar(self, instance: Any, inputs: dict[str, Any]) -> str | None:
        names = output_fields(instance, inputs)
        return fields_grammar(names) if names else None

    def run_code(self, repl: Any, code: str, input_args: dict[str, Any]) -> Any:
        action = self._action.last
        killed = self.run_state.check_step(str(getattr(action, "reasoning", "") or ""), code)
        if killed is not None:  # the step is discarded: its code does not run, the model answers again
            return killed
        return self.run_state.with_corrections(super().run_code(repl, code, input_args))

    def build_variables(self, **input_args: Any) -> list[Any]:
        variables = super().build_variables(**input_args)
        if not self._compact:
            return variables
        return [CompactVariable.of(v, input_args[v.name].ref.n if isinstance(input_args.get(v.name), _HandleInput)
                                   else None) for v in variables]

    def prepare_inputs(self, input_args: dict[str, Any], repl: Any) -> dict[str, Any]:
        repl.recording_setup = True
        try:
            return super().prepare_inputs(input_args, repl)
        finally:
            repl.recording_setup = False

    def llm_tools(self, budget: Any = None, max_workers: int = 8) -> dict[str, Any]:
        """DSPy's llm_query tools (at most ``max_concurrent`` prompts of a batch at once) and, when the run may
        recurse (``max_depth``), rlm_query / rlm_query_batched."""
        tools = super().llm_tools(budget, max_workers=min(max_workers, self._max_concurrent))
        tools.update(child_tools(self.run_state, RlmLoop()))
        return tools

    @property
    def _max_concurrent(self) -> int:
        return int(getattr(self.run_state.options, "max_concurrent", 8))

    def setup_facade(self, repl: Any, budget: Any, interpreter_factory: Any) -> str:
        """Offer step code no host-side DSPy modules: DSPy's facade builds them on the host from signature strings
        step code wrote, importing and evaluating what their annotations name. Sub-LM calls stay (llm_query)."""
        return ""

    def run_iteration(self, repl, variables, history, iteration, input_args, output_field_names,
                      interpreter_factory, sub_agent_rules):
        scope = self._begin_iteration(iteration, variables)
        try:
            with self.run_state.observing():
                result = super().run_iteration(repl, variables, history, iteration, input_args,
                                               output_field_names, interpreter_factory, sub_agent_rules)
        except Exception as exc:  # not the model's to fix (a tool's cap violation, a bug, the LM failing)
            return self._end_iteration(scope, None, exc)
        return self._end_iteration(scope, result, None)

    async def arun_iteration(self, repl, variables, history, iteration, input_args, output_field_names,
                             interpreter_factory, sub_agent_rules):
        # acall()/aforward(): metered exactly as the sync path (one record and its trace events per iteration).
        scope = self._begin_iteration(iteration, variables)
        try:
            with self.run_state.observing():
                result = await super().arun_iteration(repl, variables, history, iteration, input_args,
                                                      output_field_names, interpreter_factory, sub_agent_rules)
        except Exception as exc:
            return self._end_iteration(scope, None, exc)
        return self._end_iteration(scope, result, None)

    def _begin_iteration(self, iteration: int, variables: list[Any]) -> StepScope:
        self._action.last = None
        return self.run_state.step(iteration + 1, sum(len(v.format()) for v in variables))

    def _end_iteration(self, scope: StepScope, result: Any, fatal: Exception | None) -> Any:
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
        record = scope.record(entry.get("reasoning", ""), entry["code"], entry["output"])
        scope.log_context(record, self._action_instructions())
        if fatal is not None:
            raise fatal
        return result

    def _action_instructions(self) -> str:
        """The action predictor's instructions. DSPy lets a replacement predictor carry no ``signature`` (it
        then uses the RLM's own action signature), so neither may be assumed here."""
        sig = getattr(self.generate_action, "signature", None) or action_signature(self, None)
        return str(getattr(sig, "instructions", "") or "")


class RlmLoop:
    """dspy.RLM's loop: the model writes Python against the context handle and the tools until it SUBMITs."""

    name = "rlm"
    options = CodeRunOptions

    def run(self, run: Run) -> None:
        opts, ws = run.options, run.workspace
        factory = InterpreterFactory(ws, step_timeout=opts.step_timeout, sub_call_counter=run.meter.record_sub_calls,
                                     sandbox=opts.sandbox, sandbox_policy=opts.sandbox_policy, notes=run.traj.notes,
                                     path_roots=source_roots(run.env.source_path))
        run.traj.sandbox = factory.sandbox_used
        run.traj.prompt = resolve_prompt(opts.prompt, opts.decoding)
        guidance = None
        instructions = _with_budget(opts.instructions, run)
        recursion = recursion_docs(run.depth, opts.max_depth)
        if recursion:
            instructions = "\n".join(x for x in (instructions, "You may also call:\n" + recursion) if x)
        if run.traj.prompt == "compact":  # the task's instructions go after the shared part (see _prompt)
            signature, guidance = RLM_SIGNATURE, instructions or ""
        else:
            signature = dspy.Signature(RLM_SIGNATURE, instructions) if instructions else RLM_SIGNATURE
        rlm = MeteredRLM(signature, run=run, factory=factory, max_iters=opts.max_iters, guidance=guidance,
                         max_llm_calls=opts.max_llm_calls, max_output_chars=opts.max_output_chars)
        context_value: Any = _HandleInput(run.ref) if run.ref is not None else run.text
        pred = run.call_dspy(rlm, context=context_value, query=run.query)
        run.traj.answer = str(pred.answer)
        run.traj.final_reasoning = str(getattr(pred, "final_reasoning", ""))
        run.traj.submitted = run.traj.final_reasoning != "Extract forced final output"
        if not run.traj.submitted:
            kept, why = supported_fallback(run.traj.answer, [r.output for r in run.records], run.query)
            if not kept:
                run.traj.notes.append(_DROPPED[0] + why + _DROPPED[1])
                run.traj.answer = ""


def dropped_extract(notes: list[str]) -> str | None:
    """Why a run's extract-step answer was dropped (:func:`supported_fallback`'s reason), from its notes; None if
    it was not."""
    note = next((n for n in notes if n.startswith(_DROPPED[0])), None)
    return note.removeprefix(_DROPPED[0]).removesuffix(_DROPPED[1]) if note else None


def _with_budget(instructions: str | None, run: Run) -> str | None:
    """The task's instructions, and with ``show_budget`` the run's budgets (each step's output then says what is
    left of them)."""
    if not (run.options.show_budget and run.options.budget.any):
        return instructions
    line = budget_line(run.root.options.budget, run.root.spent(), lead="Budget for this run:")
    return "\n".join(x for x in (instructions, line) if x)


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def supported_fallback(answer: str, outputs: list[str], query: str = "") -> tuple[bool, str]:
    """Whether an answer DSPy's extract step wrote after the last iteration (the model never SUBMITted) may stand:
    not a placeholder (``{answer}``, ``<answer>``, ``...``), and everything it states (each number, or the text
    itself) shown by a step's output, or, for a number, given in the question. (False, why) otherwise."""
    text = " ".join(str(answer or "").split())
    # the oracle's placeholders, and Python's None that an extract step copies from a variable's repr
    if says_nothing(text) or text.strip("'\"` .").casefold() == "none":
        return False, f"the extract step wrote a placeholder ({text[:40]!r}), not a value the run computed"
    seen = " ".join(" ".join(o.split()) for o in outputs)
    numbers = _NUMBER.findall(text)
    if numbers:
        shown = set(_NUMBER.findall(seen)) | set(_NUMBER.findall(query))
        missing = [n for n in numbers if n not in shown]
        return (not missing, f"the extract step's answer {text[:40]!r} states {', '.join(missing[:3])}, which no "
                             "step output shows")
    ok = text.casefold() in seen.casefold()
    return ok, f"the extract step's answer {text[:40]!r} appears in no step's output"


def run_rlm(query: str, context: Any, *,
            # what the run acts on and where it writes (RunEnv)
            lm: Any, workspace: Workspace | None = None, tools: ToolRegistry | None = None, turing: Any = None,
            trace: ContextTrace | None = None, runs_dir: str | Path | None = None, run_id: str | None = None,
            source_path: str | None = None, parent: Any = None,
            # every executor's options (RunOptions)
            context_mode: str = "handle", max_iters: int = 10, max_output_chars: int = 10_000,
            trace_budget: int = 8000, instructions: str | None = None, decoding: str = "grammar",
            max_tokens: int | None = None, max_seconds: float | None = None, max_cost: float | None = None,
            max_errors: int | None = None, show_budget: bool = False,
            # the code executors' options (CodeRunOptions)
            max_llm_calls: int = 20, step_timeout: float = 30.0, max_statements: int = 3, prompt: str = "auto",
            vocab: bool = True, sandbox: str = DEFAULT_SANDBOX, sandbox_policy: str = "best_effort",
            max_depth: int = 1, max_concurrent: int = 4) -> Trajectory:
    """Run one RLM task and return its trajectory (also written to ``runs_dir/<run-id>/trajectory.jsonl``).

    ``context_mode="handle"`` (default) stores the context in the workspace and passes a BlobRef; ``"string"``
    passes the plain string, DSPy's default. ``tools`` limits the agent to a registry (default: all registered
    tools; ``ToolRegistry()`` gives DSPy's plain RLM with no rlmlab tools). An exception inside the run is recorded
    in ``Trajectory.error`` and the iterations done so far are kept and written; it is not re-raised.
    ``trace_budget`` is the token budget of the run's :class:`ContextTrace` (``Trajectory.context_trace``).
    ``trace`` gives that trace instead, so a caller can follow the run as it goes (``ContextTrace.subscribe``, a
    live :class:`rlmlab.jupyter.BudgetTimeline`); its own budget then applies. Events are appended to it, so give a
    fresh trace per run. ``turing`` (a :class:`rlmlab.turing.TuringProtocol`) checks every model step and tool
    call; its corrections reach the model as the step's output and are kept in ``IterationRecord.turing``.
    ``instructions`` become the task instructions at the top of every action prompt (DSPy's signature
    instructions): this is where a :class:`rlmlab.memory.ContextBuilder`'s context is injected.
    ``decoding="grammar"`` constrains every step to the step grammar of the workspace's tools (at most
    ``max_statements`` statements; templates in ``workspace.extras["step_templates"]``; see
    :mod:`rlmlab.executors._step_grammar`); a model that cannot constrain runs free and the trajectory's ``notes``
    say so. ``prompt`` picks the action prompt: ``"auto"`` (default) is ``"compact"`` under grammar decoding (short
    instructions, the shared part first and the task's ``instructions`` after it: :mod:`rlmlab.executors._prompt`)
    and ``"full"`` (DSPy's RLM instructions, the task's on top) otherwise; the trajectory records which.

    Each keyword is the field of the same name and default in :class:`RunEnv` or :class:`CodeRunOptions`
    (``tests/test_public_surface.py`` checks that they stay the same); invalid options raise ValueError before
    anything runs.
    """
    return execute_keywords(_LOOP, CodeRunOptions, **locals())  # first statement: locals() is the parameters


_LOOP = RlmLoop()
