"""The one run sequence every executor shares, and the step scope that turns one step into an IterationRecord.

An executor is a small step loop (:class:`StepLoop`): given a :class:`Run` it drives the model step by step,
opening a :class:`StepScope` per step, and sets the answer on ``run.traj``. Everything around it is here:
:func:`execute` checks the options, makes the trace, workspace, recorder, meter and guard, stores the context,
catches the run's error into the trajectory, totals the LM calls and writes the JSONL. A run without the Turing
Protocol gets a :class:`NullGuard`, so no step checks for ``None``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterator, NamedTuple, Protocol

from rlmlab._files import write_atomic
from rlmlab._interrupt import check_stop, noting_sigint
from rlmlab.errors import RunInterrupted
from rlmlab.executors._budget import Budget, BudgetReached, budget_line, cost_note, spent_so_far
from rlmlab.executors._constrain import check_decoding, decoding_note
from rlmlab.executors._context_events import ToolTap, call_events
from rlmlab.executors._dspy_log import dspy_warnings
from rlmlab.executors._timing import RunClock, time_breakdown
from rlmlab.executors._trajectory import TRAJECTORY_FILE, IterationRecord, Trajectory, clip_output
from rlmlab.handles import BlobRef
from rlmlab.lm import CALLS_FILE, CallRecorder, LMCall, call_scope, current_scope, recorder_of, write_calls
from rlmlab.provenance import PROVENANCE_FILE, provenance, recording, recording_active
from rlmlab.sandbox import check_sandbox, default_sandbox
from rlmlab.text import plural
from rlmlab.tools import ToolRegistry, Workspace
from rlmlab.trace import ContextEvent, ContextTrace, LeakageMeter

__all__ = ["RunOptions", "CodeRunOptions", "RunEnv", "Run", "StepScope", "StepLoop", "NullGuard", "execute",
           "execute_keywords", "start_run", "RunStart", "close_trajectory", "make_guard", "new_run_id",
           "CONTEXT_MODES", "KILLED"]

CONTEXT_MODES = ("handle", "string")
DEFAULT_SANDBOX = default_sandbox()  # confined on Linux
KILLED = "[Turing] This step was not executed."


@dataclass(frozen=True)
class RunOptions:
    """What every executor takes: limits, how the context is passed, the trace budget, instructions, decoding.

    ``max_output_chars`` clips each step's output where the model reads it and where it is stored (the full size
    is kept in ``IterationRecord.output_chars``).
    """

    context_mode: str = "handle"
    max_iters: int = 10
    max_output_chars: int = 10_000
    trace_budget: int = 8000
    instructions: str | None = None
    # grammar wherever the LM can be constrained (the embedded model); other LMs run free and the run's notes say so
    decoding: str = "grammar"
    # budgets over the whole run (every LM call, sub-calls included), checked at each step boundary; None: no limit
    max_tokens: int | None = None  # LM tokens, prompt + completion
    max_seconds: float | None = None  # wall seconds since the run started
    max_cost: float | None = None  # dollars, from litellm's price table (local models cost 0)
    max_errors: int | None = None  # failed steps in a row
    show_budget: bool = False  # tell the model, in each prompt, what is left of each budget

    def __post_init__(self) -> None:
        if self.context_mode not in CONTEXT_MODES:
            raise ValueError(f"context_mode: {self.context_mode!r}; use 'handle' or 'string'")
        check_decoding(self.decoding)
        self.budget  # an invalid limit fails here, before anything runs
        for name in ("max_iters", "max_output_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name}: {value!r}; expected an integer > 0")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def budget(self) -> Budget:
        return Budget(self.max_tokens, self.max_seconds, self.max_cost, self.max_errors)


@dataclass(frozen=True)
class CodeRunOptions(RunOptions):
    """Options of the executors whose steps are Python run in the REPL worker (rlm, scratchpad)."""

    max_llm_calls: int = 20  # llm_query prompts per run
    step_timeout: float = 30.0  # seconds per step; a step over it restarts the worker
    max_statements: int = 3  # statements per step under decoding="grammar"
    prompt: str = "auto"  # the rlm executor's action prompt: auto, full or compact (see executors._prompt)
    # under decoding="grammar": tree-sitter and SPARQL query arguments from closed vocabularies (see _vocab)
    vocab: bool = True
    # where the step code runs (rlmlab.sandbox): confined | pyodide | none, or the shorthands required / best_effort
    sandbox: str = DEFAULT_SANDBOX
    sandbox_policy: str = "best_effort"  # required: refuse when the sandbox is unavailable; best_effort: warn, fall back
    # recursion (rlm executor): at max_depth >= 2 step code has rlm_query / rlm_query_batched, each starting a
    # sub-run with its own REPL on a handle it is given; 1: llm_query only (sub-calls are plain LM calls)
    max_depth: int = 1
    max_concurrent: int = 4  # sub-runs (or sub-calls) one batched call runs at once

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("max_depth", "max_concurrent"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name}: {value!r}; expected an integer > 0")
        check_sandbox(self.sandbox, self.sandbox_policy)  # an unknown name fails here, before anything runs
        from rlmlab.executors._prompt import resolve_prompt

        resolve_prompt(self.prompt, self.decoding)  # an unknown name fails here, before anything runs


@dataclass(frozen=True)
class RunEnv:
    """What a run acts on and where it writes: not options of the method, the same for every executor."""

    lm: Any
    workspace: Workspace | None = None
    tools: ToolRegistry | None = None  # limit the agent to these tools (default: the workspace's registry)
    turing: Any = None  # a rlmlab.turing.TuringProtocol checking every step and tool call
    trace: ContextTrace | None = None  # a caller's trace to follow the run live (its own budget applies)
    runs_dir: str | Path | None = None  # where <run-id>/trajectory.jsonl is written
    run_id: str | None = None
    source_path: str | None = None
    parent: Any = None  # the Run whose step code started this one (rlm_query); None for a run a caller started


class _Pass(NamedTuple):
    kill: bool = False
    correction: str | None = None


class NullGuard:
    """The guard of a run without the Turing Protocol: every check passes, nothing is recorded."""

    def begin_turn(self, turn_id: int | str) -> None:
        pass

    def post_inference(self, reasoning: str, code: str, known_tools: Any) -> _Pass:
        return _Pass()

    def take_pending_corrections(self) -> list[str]:
        return []

    def end_turn(self, response: str, output: str) -> list[dict[str, Any]]:
        return []


def make_guard(turing: Any, workspace: Workspace, run_id: str, query: str = "") -> Any:
    """A :class:`rlmlab.turing.TuringGuard` running ``turing`` over the workspace's tools, or a NullGuard.
    ``query`` is what the model was given to read (a reply restating it narrates nothing invented)."""
    if turing is None:
        return NullGuard()
    from rlmlab.turing import TuringGuard

    schemas = {spec.name: spec.schema_for_caps(workspace.caps) for spec in workspace.registry}
    return TuringGuard(turing, session=run_id, scope="main", tool_schemas=schemas, context=query)


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
    """Make the trace (its budget is checked before anything runs), the workspace (limited to ``tools`` if
    given), the LM's recorder and the leakage meter, and store the context as a handle ("handle") or resolve it
    to its text ("string"). A given ``trace`` is used as it is and the run appends to it."""
    if context_mode not in CONTEXT_MODES:
        raise ValueError(f"context_mode: {context_mode!r}; use 'handle' or 'string'")
    if trace is None:
        trace = ContextTrace(budget_tokens=trace_budget)
    workspace = workspace or Workspace()
    if tools is not None:
        workspace = dataclasses.replace(workspace, registry=tools)
    # the run's own quotas (ToolCaps), and its own keys where a person's namespace sees its whole store: the
    # model reads its context and what it makes
    store = workspace.store.child() if workspace.store.open else workspace.store
    workspace = dataclasses.replace(workspace, store=store, usage={})
    meter = LeakageMeter(workspace.caps.large_return_chars)
    if context_mode == "handle":
        if isinstance(context, BlobRef):
            workspace.store.grant(context)  # the caller hands the run this blob
            ref = context
        else:
            ref = workspace.store.put(context, "context")
        return RunStart(trace, workspace, recorder_of(lm), meter, ref, None)
    text = workspace.store.get(context) if isinstance(context, BlobRef) else context
    return RunStart(trace, workspace, recorder_of(lm), meter, None, text)


@dataclass
class Run:
    """One run's state, shared by the harness and the executor's step loop."""

    options: RunOptions
    env: RunEnv
    query: str
    trace: ContextTrace
    workspace: Workspace
    recorder: CallRecorder
    meter: LeakageMeter
    ref: BlobRef | None
    text: str | None
    guard: Any
    traj: Trajectory
    tap: ToolTap = field(default_factory=ToolTap)
    clock: RunClock = field(default_factory=RunClock)  # REPL-side time for the run's time breakdown
    records: list[IterationRecord] = field(default_factory=list)
    _verdict: Any = None
    started: float = field(default_factory=time.perf_counter)  # for max_seconds
    call_mark: int = 0  # the recorder's position when the run started: its calls are the ones after it
    scope: Any = None  # the run's CallScope: its LM calls and its sub-runs'
    current_step: int = 0  # the step in progress (a sub-run started now belongs to it)
    children: list[Trajectory] = field(default_factory=list)  # sub-runs (rlm_query), as they end

    @property
    def lm(self) -> Any:
        return self.env.lm

    @property
    def depth(self) -> int:
        return 0 if self.env.parent is None else self.env.parent.depth + 1

    @property
    def root(self) -> "Run":
        return self if self.env.parent is None else self.env.parent.root

    @property
    def context_text(self) -> str:
        """The context's text, whichever way it is passed."""
        return self.text if self.text is not None else self.workspace.store.get(self.ref)

    def step(self, n: int, shown_chars: int) -> StepScope:
        """Open step ``n``; ``shown_chars`` is what the prompt shows of the run's variables or inputs."""
        return StepScope(self, n, shown_chars)

    @contextlib.contextmanager
    def observing(self) -> Iterator[None]:
        """Tool calls in this block are metered, tapped for the trace and checked by the guard."""
        observers = [self.meter, self.tap, self.guard]
        self.workspace.observers.extend(observers)
        try:
            yield
        finally:
            for obs in observers:
                self.workspace.observers.remove(obs)

    def call_dspy(self, module: Any, **inputs: Any) -> Any:
        """``module(**inputs)`` with the run's LM (its grammar wrapper under ``decoding="grammar"``) and the lenient
        chat adapter; the replies it salvaged are counted in the trajectory even when the call fails."""
        import dspy

        from rlmlab.executors._constrain import grammar_lm
        from rlmlab.lm import LenientChatAdapter

        lm = grammar_lm(self.lm) if self.options.decoding == "grammar" else self.lm
        adapter = LenientChatAdapter()
        try:
            with dspy.context(lm=lm, adapter=adapter):
                return module(**inputs)
        finally:
            self.traj.salvaged_replies = adapter.salvaged

    def spent(self) -> Any:
        """What the run has used so far (:class:`~rlmlab.executors._budget.Spent`)."""
        return spent_so_far(self.recorder.since(self.call_mark, scope=self.scope), self.started,
                            [r.output for r in self.records], price=self.options.max_cost is not None)

    def check_budget(self) -> None:
        """BudgetReached when a budget of the run, or of a run above it in a recursive tree (whose totals hold
        this one's), is reached (called before each step)."""
        run: Run | None = self
        while run is not None:
            if run.options.budget.any:
                reached = run.options.budget.reached(run.spent())
                if reached is not None:
                    raise BudgetReached(*reached)
            run = run.env.parent

    def check_step(self, reasoning: str, code: str) -> str | None:
        """The guard's look at a step before it runs: the output to give the model if it kills the step."""
        self._verdict = self.guard.post_inference(reasoning, code, self.workspace.registry.names())
        if self._verdict.kill:
            return f"{KILLED}\n{self._verdict.correction or ''}".rstrip()
        return None

    def with_corrections(self, output: Any) -> Any:
        """A text output with the guard's corrections for this step appended (other results as they are)."""
        notes = [self._verdict.correction] if self._verdict is not None and self._verdict.correction else []
        notes += self.guard.take_pending_corrections()
        self._verdict = None
        if self.options.show_budget and self.options.budget.any:
            notes.append(budget_line(self.root.options.budget, self.root.spent()))
        if notes and isinstance(output, str):
            return "\n\n".join([output, *notes]) if output else "\n\n".join(notes)
        return output


class StepScope:
    """One step from its prompt to its :class:`IterationRecord`: meter, tool tap, guard turn, LM-call mark."""

    def __init__(self, run: Run, n: int, shown_chars: int):
        check_stop()  # a thread asked to stop (another thread got Ctrl-C) starts no further step
        run.check_budget()  # a run past a budget starts no further step either
        self.run, self.n = run, n
        run.current_step = n
        run.meter.begin(n, shown_chars)
        run.tap.drain()
        run.guard.begin_turn(n)
        self.mark, self.t0 = run.recorder.mark(), time.perf_counter()
        self.main_calls: list[LMCall] = []
        self.sub_calls: list[LMCall] = []
        self.tapped: list[Any] = []

    def record(self, reasoning: str, code: str, output: str) -> IterationRecord:
        """Close the step: its LM calls and tool calls, leakage, the clipped output, the guard's rounds."""
        run = self.run
        # its own calls: a sub-run's (deeper) are in its own trajectory, and in this run's totals
        lm_calls = [c for c in run.recorder.since(self.mark, step=self.n, scope=run.scope) if c.depth == run.depth]
        self.main_calls = [c for c in lm_calls if c.role == "main"]
        self.sub_calls = [c for c in lm_calls if c.role == "sub"]
        leak = run.meter.end(stdout_chars=len(output), prompt_chars=sum(c.prompt_chars for c in self.main_calls),
                             prompt_tokens=sum(c.input_tokens for c in self.main_calls),
                             completion_tokens=sum(c.output_tokens for c in self.main_calls))
        tool_records, self.tapped = run.tap.drain()
        record = IterationRecord(
            index=self.n, reasoning=reasoning, code=code, output=clip_output(output, run.options.max_output_chars),
            tool_calls=[r.to_dict() for r in tool_records], leakage=leak, input_tokens=leak.prompt_tokens,
            output_tokens=leak.completion_tokens, elapsed_ms=int((time.perf_counter() - self.t0) * 1000),
            output_chars=len(output),
            children=[c.run_id for c in run.children if c.parent_step == self.n],
        )
        record.turing = run.guard.end_turn(f"{reasoning}\n{code}", output)  # the guard sees the whole output
        run.records.append(record)
        return record

    def log_context(self, record: IterationRecord, system_text: str, *, tool_results_are_output: bool = False) -> None:
        """The step's context events: the system prompt (first step), the model's code, tool results and
        sub-LLM calls, and the output that enters the next prompt. With ``tool_results_are_output`` (ReAct) a
        tool's result is the output, so the output is logged only for a step that called no tool."""
        trace, n = self.run.trace, record.index
        if n == 1:
            first = self.main_calls[0].input_tokens if self.main_calls else 0
            trace.log_event(ContextEvent.system_prompt(system_text, first or None, iteration=0))
        trace.log_event(ContextEvent.assistant_code(record.code, record.output_tokens or None, iteration=n))
        for event in call_events(self.tapped, self.sub_calls, n):
            trace.log_event(event)
        if not (tool_results_are_output and self.tapped):
            trace.log_event(ContextEvent.execution_output(record.output, iteration=n))


class StepLoop(Protocol):
    """An executor: ``name``, its options dataclass, and ``run(run)``, which sets ``run.traj``'s answer,
    ``final_reasoning`` and ``submitted`` (an exception it raises is recorded by the harness)."""

    name: ClassVar[str]
    options: ClassVar[type[RunOptions]]

    def run(self, run: Run) -> None: ...


def execute_keywords(loop: StepLoop, options_type: type, query: str, context: str | BlobRef,
                     **keywords: Any) -> Trajectory:
    """:func:`execute` for a ``run_*`` entry point's keywords: :class:`RunEnv`'s fields make the env, every other
    keyword ``options_type`` (a keyword neither takes is a TypeError)."""
    env_names = {f.name for f in dataclasses.fields(RunEnv)}
    env = RunEnv(**{k: v for k, v in keywords.items() if k in env_names})
    options = options_type(**{k: v for k, v in keywords.items() if k not in env_names})
    return execute(loop, query, context, options, env)


def execute(loop: StepLoop, query: str, context: str | BlobRef, options: RunOptions, env: RunEnv) -> Trajectory:
    """Run one task with ``loop`` and return its trajectory (written to ``runs_dir/<run-id>/trajectory.jsonl``).

    An exception inside the run is recorded in ``Trajectory.error`` and the steps done so far are kept and
    written; it is not re-raised. A KeyboardInterrupt (Ctrl-C, Kernel -> Interrupt) writes the steps finished so
    far with ``interrupted`` set and raises :class:`~rlmlab.errors.RunInterrupted`. Bad options raise before
    anything runs.
    """
    with call_scope():  # the run counts its own LM calls (and its sub-runs') only, whatever other runs share its LM
        if env.runs_dir is None or recording_active():  # inside an experiment: its provenance.json covers the run
            return _execute(loop, query, context, options, env)
        env = dataclasses.replace(env, run_id=env.run_id or new_run_id(loop.name))
        where = Path(env.runs_dir) / env.run_id
        with recording() as collected:
            try:
                return _execute(loop, query, context, options, env)
            finally:  # also for an interrupted run, whose steps so far are saved
                if where.is_dir():
                    write_atomic(where / PROVENANCE_FILE, json.dumps(provenance(
                        collected, lm=env.lm, command=f"run_{loop.name}", run_id=env.run_id,
                        options=dataclasses.asdict(options)), indent=2, default=str))


def _execute(loop: StepLoop, query: str, context: str | BlobRef, options: RunOptions, env: RunEnv) -> Trajectory:
    if not isinstance(options, loop.options):
        raise TypeError(f"{loop.name}: options must be {loop.options.__name__}, got {type(options).__name__}")
    trace, workspace, recorder, meter, ref, text = start_run(
        context, options.context_mode, lm=env.lm, workspace=env.workspace, tools=env.tools,
        trace_budget=options.trace_budget, trace=env.trace)
    depth = 0 if env.parent is None else env.parent.depth + 1
    if depth + 1 >= getattr(options, "max_depth", 1):  # tools for starting sub-runs only where a run may start them
        kept = {n for n in workspace.registry.names() if workspace.registry.get(n).group != "recursion"}
        workspace = dataclasses.replace(workspace, registry=workspace.registry.select(names=kept))
    run_id = env.run_id or new_run_id(loop.name)
    scope = current_scope()
    if scope is not None:
        scope.run_id = run_id  # every LM call of the run carries its id and depth
    decoding, note = decoding_note(options.decoding, env.lm)
    if decoding != options.decoding:
        options = dataclasses.replace(options, decoding=decoding)
    traj = Trajectory(run_id=run_id, query=query, lm=str(getattr(env.lm, "model", env.lm)),
                      context_mode=options.context_mode, context_ref=ref.key if ref is not None else None,
                      source_path=env.source_path, started=time.time(), executor=loop.name, decoding=decoding,
                      notes=[note] if note else [])
    run = Run(options, env, query, trace, workspace, recorder, meter, ref, text,
              make_guard(env.turing, workspace, run_id, query), traj, scope=scope)
    if env.parent is not None:
        traj.depth, traj.parent_id, traj.parent_step = run.depth, env.parent.traj.run_id, env.parent.current_step
    mark, t0 = recorder.mark(), time.perf_counter()
    run.call_mark, run.started = mark, t0
    with dspy_warnings() as dspy_notes:  # DSPy's WARNING lines belong to this run's record, not to stderr
        try:
            with noting_sigint():
                loop.run(run)
        except BudgetReached as stop:  # the steps so far are kept; no answer is made up
            traj.stopped = f"budget ({stop.which})"
            traj.notes.append(str(stop))
        except Exception as exc:  # recorded, not lost: the steps so far are kept
            traj.error = f"{type(exc).__name__}: {exc}"
        except KeyboardInterrupt:  # Ctrl-C: the steps finished so far are written, marked, then the caller stops too
            traj.interrupted = True
            traj.notes.extend(dspy_notes)
            traj.children = list(run.children)
            close_trajectory(traj, run.records, recorder.since(mark), t0, trace, env.runs_dir, clock=run.clock)
            raise _interrupted(traj, options.max_iters, env.runs_dir) from None
    traj.notes.extend(dspy_notes)
    said = cost_note(run.spent(), options.budget, env.lm) if options.budget.any else None
    if said:
        traj.notes.append(said)
    traj.children = list(run.children)
    return close_trajectory(traj, run.records, recorder.since(mark), t0, trace, env.runs_dir, clock=run.clock)


def _interrupted(traj: Trajectory, max_iters: int, runs_dir: str | Path | None) -> RunInterrupted:
    """The one-line RunInterrupted of a run cut short, saying how far it got and where it is saved."""
    where = Path(runs_dir) / traj.run_id if runs_dir is not None else None
    saved = f"trajectory saved in {where / TRAJECTORY_FILE}" if where is not None else "not saved (no runs_dir)"
    return RunInterrupted(f"interrupted after {len(traj.iterations)} of up to {plural(max_iters, 'iteration')}; "
                          f"{saved}",
                          directory=where, trajectory=traj)


def close_trajectory(traj: Trajectory, records: list[IterationRecord], calls: list[LMCall], t0: float,
                     trace: ContextTrace, runs_dir: str | Path | None, clock: RunClock | None = None) -> Trajectory:
    """Fill the run's totals and time breakdown from its iterations, LM calls and ``clock``, log the Final event,
    write the JSONL if asked (the trajectory, and beside it the LM calls with their prompts and completions)."""
    traj.iterations = records
    wall_ms = (time.perf_counter() - t0) * 1000
    traj.elapsed_ms = round(wall_ms)  # the breakdown's wall_ms rounded to 0.1 ms: both within 0.5 ms of it
    traj.timing = time_breakdown(wall_ms, calls, clock).to_dict()
    traj.input_tokens = sum(c.input_tokens for c in calls)
    traj.output_tokens = sum(c.output_tokens for c in calls)
    traj.lm_calls = len(calls)
    cached = sum(c.cached for c in calls)
    if cached:  # a figure that does not count every call says so
        traj.notes.append(f"{cached} of {len(calls)} LM calls were answered from DSPy's cache (cache=True): nothing "
                          "was sent for them, so their tokens are not counted and their time is a lookup's")
    traj.subcalls = sum(it.leakage.sub_llm_calls for it in records)
    if traj.answer is not None:
        trace.log_event(ContextEvent.final(traj.answer, iteration=len(records)))
    traj.context_trace = trace
    if runs_dir is not None:
        traj.write_jsonl(Path(runs_dir) / traj.run_id / TRAJECTORY_FILE)
        write_calls(Path(runs_dir) / traj.run_id / CALLS_FILE, calls)
    return traj
