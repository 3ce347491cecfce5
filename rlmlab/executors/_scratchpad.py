"""The Scratchpad executor ("original RLM" style): a persistent Python namespace and a truncated history.

Each step the model gets one plain-text prompt: the instructions and tools,
the query, a listing of the namespace's variables, and only the last
``history_k`` steps (code and output, each output clipped). It replies with
a thought and a ```python block; the code runs in the same worker process as
the RLM executor's (tools, BlobRef handles, llm_query). The run ends when the
code calls ``SUBMIT(answer=...)``, the same call the RLM executor uses (there
is no ``FINAL(...)``).
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dspy.primitives.code_interpreter import CodeExecutionError, FinalOutput

from rlmlab.executors._constrain import check_decoding, decoding_note, grammar_lm
from rlmlab.executors._context_events import TappedFactory, ToolTap, call_events
from rlmlab.executors._step_grammar import assigned_names, output_numbers, step_grammar
from rlmlab.executors._interpreter import InterpreterFactory, RLMLabInterpreter
from rlmlab.executors._rlm import close_trajectory, make_guard, new_run_id, start_run
from rlmlab.executors._trajectory import IterationRecord, Trajectory, clip_output
from rlmlab.handles import BlobRef
from rlmlab.lm import constrained
from rlmlab.tools import ToolRegistry, Workspace
from rlmlab.trace import ContextEvent, ContextTrace, LeakageMeter

__all__ = ["run_scratchpad", "scratchpad_prompt", "parse_reply", "ScratchStep"]

_FENCE = re.compile(r"```(?:python|py|python3|repl)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PREVIEW = 100  # characters of each variable's repr in the listing

# Defined once in the worker (and replayed after a timeout restart). Names starting with "_", functions,
# classes and modules are the REPL's machinery, not the model's variables.
_LISTING_SETUP = f'''
def _rlmlab_listing():
    out = []
    for name, value in list(globals().items()):
        if name.startswith("_") or callable(value) or type(value).__name__ == "module":
            continue
        text = repr(value)
        out.append([name, type(value).__name__, len(text), text[:{_PREVIEW}]])
    return out
'''

_RULES = """You are solving a task in a persistent Python REPL. Variables you define persist between steps.
Reply with a short thought, then one ```python block of code to run. Print what you need to see: only the
last {history_k} steps' code and output are shown to you again, each output cut to {max_output_chars:,} characters.
When you know the answer, run SUBMIT(answer=...) in your code; the run ends there."""

_SUB_LLM_DOCS = ("- llm_query(prompt): ask a sub-LLM one question about text you pass it; returns its reply.\n"
                 "- llm_query_batched(prompts): llm_query for a list of prompts; returns the list of replies.")


@dataclass
class ScratchStep:
    """One step as the prompt shows it: the model's thought and code, and what running the code returned."""

    index: int
    thought: str
    code: str
    output: str


def parse_reply(reply: str) -> tuple[str, str]:
    """(thought, code) of a model reply: code is every ```python (or bare ```) block joined; with no fence the
    whole reply is taken as code, so a model that answers with bare code still runs it."""
    blocks = list(_FENCE.finditer(reply))
    if not blocks:
        return "", reply.strip()
    code = "\n".join(m.group(1).strip() for m in blocks)
    thought = _FENCE.sub("", reply).strip()
    return thought, code


def _tool_docs(workspace: Workspace) -> str:
    lines = [f"- {spec.signature_line()}: {spec.description}" for spec in workspace.registry]
    return "\n".join(lines + [_SUB_LLM_DOCS])


def scratchpad_prompt(*, header: str, query: str, listing: str, history: list[ScratchStep], history_k: int,
                      max_output_chars: int, step: int, max_iters: int) -> str:
    """The whole prompt of one step. Only the last ``history_k`` steps appear; each output is clipped to
    ``max_output_chars`` characters (head and tail)."""
    shown = history[-history_k:] if history_k > 0 else []
    parts = [header, f"Query: {query}", f"Variables:\n{listing}"]
    if shown:
        dropped = len(history) - len(shown)
        note = (f" ({dropped} earlier step{'s' if dropped > 1 else ''} not shown; their variables persist)"
                if dropped else "")
        lines = [f"History{note}:"]
        for s in shown:
            thought = f"Thought: {s.thought}\n" if s.thought else ""
            lines.append(f"--- Step {s.index} ---\n{thought}```python\n{s.code}\n```\n"
                         f"Output ({len(s.output):,} chars):\n{clip_output(s.output, max_output_chars)}")
        parts.append("\n".join(lines))
    parts.append(f"Step {step} of {max_iters}. Your reply:")
    return "\n\n".join(parts)


def _text_of(response: Any) -> str:
    """The text of a dspy LM call's result (a list of outputs, or an lm15 Response)."""
    if isinstance(response, list):
        first = response[0] if response else ""
        return str(first.get("text", "") if isinstance(first, dict) else first)
    return str(getattr(response, "text", response))


def _sub_llm_tools(lm: Any, max_llm_calls: int) -> dict[str, Any]:
    """llm_query / llm_query_batched on ``lm``, sharing one budget of ``max_llm_calls`` prompts per run."""
    used = [0]
    lock = threading.Lock()

    def reserve(n: int) -> None:
        with lock:
            if used[0] + n > max_llm_calls:
                raise RuntimeError(f"LLM call limit exceeded: {used[0]} + {n} > {max_llm_calls}. "
                                   "Use Python code for aggregation instead of making more LLM calls.")
            used[0] += n

    def llm_query(prompt: str) -> str:
        if not prompt:
            raise ValueError("prompt cannot be empty")
        reserve(1)
        return _text_of(lm(prompt))

    def llm_query_batched(prompts: list[str]) -> list[str]:
        reserve(len(prompts))
        return [_text_of(lm(p)) for p in prompts]

    return {"llm_query": llm_query, "llm_query_batched": llm_query_batched}


def _listing(repl: RLMLabInterpreter) -> str:
    try:
        rows = repl.execute("_rlmlab_listing()")
    except (CodeExecutionError, SyntaxError) as exc:  # never expected; the model still gets a prompt
        return f"(variable listing failed: {exc})"
    if not isinstance(rows, list) or not rows:
        return "(none)"
    return "\n".join(f"- {name}: {kind}, {size:,} chars = {preview}" + ("…" if size > _PREVIEW else "")
                     for name, kind, size, preview in rows)


def _run_code(repl: RLMLabInterpreter, code: str) -> tuple[str, dict[str, Any] | None]:
    """(output, submitted fields or None). Errors in the code are the output, as in the RLM executor."""
    if not code.strip():
        return "[Error] No code: reply with a ```python block (call SUBMIT(answer=...) to finish).", None
    try:
        result = repl.execute(code)
    except (CodeExecutionError, SyntaxError) as exc:
        return f"[Error] {exc}", None
    if isinstance(result, FinalOutput):
        value = result.output
        if isinstance(value, dict) and "answer" in value:
            return f"FINAL: {value}", value
        return f"[Error] SUBMIT returned {value!r}; call SUBMIT(answer=...)", None
    if isinstance(result, list):
        output = "\n".join(map(str, result))
    else:
        output = "" if result is None else str(result)
    return output or "(no output - did you forget to print?)", None


def run_scratchpad(
    query: str,
    context: str | BlobRef,
    *,
    lm: Any,
    workspace: Workspace | None = None,
    tools: ToolRegistry | None = None,
    context_mode: str = "handle",
    max_iters: int = 10,
    max_llm_calls: int = 20,
    max_output_chars: int = 2000,
    history_k: int = 3,
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
    """Run one task in the scratchpad loop; the trajectory is :func:`run_rlm`'s shape.

    ``history_k`` (>= 0): past steps shown in each prompt; ``max_output_chars``
    (> 0): characters of each shown output. The namespace keeps everything,
    so the prompt stays bounded however long the run. ``context`` is the
    variable ``context``: a BlobRef (``"handle"``) or the plain string
    (``"string"``). ``max_llm_calls`` bounds llm_query prompts;
    ``step_timeout`` (seconds) restarts a hung worker as in the RLM executor.
    ``instructions`` head every prompt. ``turing`` checks each step before its
    code runs (a kill discards it) and each tool call. No ``SUBMIT`` within
    ``max_iters`` steps leaves ``answer`` None and ``submitted`` False; an
    error is recorded in ``Trajectory.error`` with the steps so far.
    ``trace_budget`` and ``trace`` (a caller's trace to follow live) as in :func:`run_rlm`.
    """
    check_decoding(decoding)
    if history_k < 0 or max_output_chars <= 0:
        raise ValueError(f"history_k: {history_k} (>= 0), max_output_chars: {max_output_chars} (> 0)")
    trace, workspace, recorder, meter, ref, text = start_run(context, context_mode, lm=lm, workspace=workspace,
                                                             tools=tools, trace_budget=trace_budget, trace=trace)
    tap = ToolTap()
    factory = TappedFactory(InterpreterFactory(workspace, step_timeout=step_timeout,
                                               sub_call_counter=meter.record_sub_calls), tap)
    if ref is not None:
        setup = ("context = BlobRef(**__import__('json').loads(_raw_context))",
                 json.dumps({"key": ref.key, "n": ref.n}))
        context_ref: str | None = ref.key
    else:
        setup, context_ref = ("context = _raw_context", text), None
    run_id = run_id or new_run_id("scratchpad")
    guard = make_guard(turing, workspace, run_id)
    header = "\n\n".join(([instructions] if instructions else []) + [
        _RULES.format(history_k=history_k, max_output_chars=max_output_chars),
        f"Tools (Python functions in the REPL):\n{_tool_docs(workspace)}",
    ])
    decoding, note = decoding_note(decoding, lm)
    traj = Trajectory(run_id=run_id, query=query, lm=str(getattr(lm, "model", lm)), context_mode=context_mode,
                      context_ref=context_ref, source_path=source_path, started=time.time(), executor="scratchpad",
                      decoding=decoding, notes=[note] if note else [])
    loop = _Loop(lm=lm, recorder=recorder, meter=meter, tap=tap, guard=guard, workspace=workspace, trace=trace,
                 header=header, query=query, history_k=history_k, max_output_chars=max_output_chars,
                 max_iters=max_iters, decoding=decoding, max_statements=max_statements,
                 context_text=text if text is not None else workspace.store.get(ref))
    mark, t0 = recorder.mark(), time.perf_counter()
    repl = factory()
    try:
        repl.tools.update({name: workspace.bound(name) for name in workspace.registry.names()})
        repl.tools.update(_sub_llm_tools(lm, max_llm_calls))
        repl.output_fields = [{"name": "answer", "type": "str"}]
        repl.recording_setup = True  # replayed if a step times out and the worker restarts
        try:
            repl.execute(setup[0], variables={"_raw_context": setup[1]})
            repl.execute(_LISTING_SETUP)
        finally:
            repl.recording_setup = False
        for n in range(1, max_iters + 1):
            final = loop.step(n, repl)
            if final is not None:
                traj.answer, traj.submitted = str(final["answer"]), True
                traj.final_reasoning = loop.history[-1].thought
                break
    except Exception as exc:  # recorded, not lost: the steps so far are kept
        traj.error = f"{type(exc).__name__}: {exc}"
    finally:
        repl.shutdown()
    return close_trajectory(traj, loop.records, recorder.since(mark), t0, trace, runs_dir)


@dataclass
class _Loop:
    """The state one scratchpad run carries from step to step."""

    lm: Any
    recorder: Any
    meter: LeakageMeter
    tap: ToolTap
    guard: Any
    workspace: Workspace
    trace: ContextTrace
    header: str
    query: str
    history_k: int
    max_output_chars: int
    max_iters: int
    decoding: str = "free"
    max_statements: int = 3
    context_text: str | None = None
    history: list[ScratchStep] = dataclasses.field(default_factory=list)
    records: list[IterationRecord] = dataclasses.field(default_factory=list)

    def grammar(self, n: int) -> str:
        """The step grammar of step ``n`` in this executor's format (a thought and a ```python block)."""
        scope = ["context"] + [name for it in self.records for name in assigned_names(it.code)]
        numbers = [x for it in self.records for x in output_numbers(it.output)]
        templates = [t["template"] for t in self.workspace.extras.get("step_templates", []) if t.get("template")]
        return step_grammar(self.workspace.registry, self.workspace.caps, fmt="scratchpad", scope=scope,
                            max_statements=self.max_statements, query=self.query, templates=templates,
                            numbers=numbers, must_submit=n >= self.max_iters, templates_first=not self.records,
                            context=self.context_text)

    def step(self, n: int, repl: RLMLabInterpreter) -> dict[str, Any] | None:
        """Prompt, reply, run; record the step. Returns the submitted fields when the code called SUBMIT."""
        listing = _listing(repl)
        prompt = scratchpad_prompt(header=self.header, query=self.query, listing=listing, history=self.history,
                                   history_k=self.history_k, max_output_chars=self.max_output_chars, step=n,
                                   max_iters=self.max_iters)
        self.meter.begin(n, len(listing))
        self.tap.drain()
        if self.guard is not None:
            self.guard.begin_turn(n)
        mark, t0 = self.recorder.mark(), time.perf_counter()
        if self.decoding == "grammar":
            with constrained(grammar=self.grammar(n)):
                reply = _text_of(grammar_lm(self.lm)(prompt))
        else:
            reply = _text_of(self.lm(prompt))
        thought, code = parse_reply(reply)
        output, final = self._execute(repl, thought, code)
        lm_calls = self.recorder.since(mark, step=n)
        calls = [c for c in lm_calls if c.role == "main"]
        leak = self.meter.end(stdout_chars=len(output), prompt_chars=sum(c.prompt_chars for c in calls),
                              prompt_tokens=sum(c.input_tokens for c in calls),
                              completion_tokens=sum(c.output_tokens for c in calls))
        tool_records, tapped = self.tap.drain()
        record = IterationRecord(
            index=n, reasoning=thought, code=code, output=clip_output(output, self.max_output_chars),
            tool_calls=[r.to_dict() for r in tool_records], leakage=leak, input_tokens=leak.prompt_tokens,
            output_tokens=leak.completion_tokens, elapsed_ms=int((time.perf_counter() - t0) * 1000),
            output_chars=len(output),
        )
        if self.guard is not None:
            record.turing = self.guard.end_turn(f"{thought}\n{code}", output)
        self.records.append(record)
        self.history.append(ScratchStep(n, thought, code, output))
        self._log_context(record, calls, tapped, [c for c in lm_calls if c.role == "sub"])
        return final

    def _execute(self, repl: RLMLabInterpreter, thought: str, code: str) -> tuple[str, dict[str, Any] | None]:
        """Run the step's code under the Turing guard, as MeteredRLM does: a kill discards the step, a
        correction is appended to a non-final output."""
        verdict = None
        if self.guard is not None:
            verdict = self.guard.post_inference(thought, code, self.workspace.registry.names())
            if verdict.kill:
                return f"[Turing] This step was not executed.\n{verdict.correction or ''}".rstrip(), None
        observers = [self.meter, self.tap] + ([self.guard] if self.guard is not None else [])
        self.workspace.observers.extend(observers)
        try:
            output, final = _run_code(repl, code)
        finally:
            for obs in observers:
                self.workspace.observers.remove(obs)
        if self.guard is not None and final is None:
            notes = ([verdict.correction] if verdict is not None and verdict.correction else [])
            notes += self.guard.take_pending_corrections()
            if notes:
                output = "\n\n".join([output, *notes])
        return output, final

    def _log_context(self, record: IterationRecord, main_calls: list[Any], tapped: list[Any],
                     sub_calls: list[Any]) -> None:
        n = record.index
        if n == 1:
            # The static part of every prompt; its tokens are the whole first prompt's, as the RLM executor logs.
            first = main_calls[0].input_tokens if main_calls else 0
            self.trace.log_event(ContextEvent.system_prompt(self.header, first or None, iteration=0))
        self.trace.log_event(ContextEvent.assistant_code(record.code, record.output_tokens or None, iteration=n))
        for event in call_events(tapped, sub_calls, n):
            self.trace.log_event(event)
        # What enters the next prompts is the clipped output (and only for history_k steps).
        self.trace.log_event(ContextEvent.execution_output(record.output, iteration=n))  # stored clipped
