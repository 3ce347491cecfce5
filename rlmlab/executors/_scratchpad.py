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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dspy.primitives.code_interpreter import CodeExecutionError, FinalOutput

from rlmlab.executors._constrain import grammar_lm, run_step_grammar
from rlmlab.executors._context_events import TappedFactory
from rlmlab.executors._harness import DEFAULT_SANDBOX, CodeRunOptions, Run, execute_keywords
from rlmlab.executors._interpreter import InterpreterFactory, RLMLabInterpreter
from rlmlab.executors._trajectory import Trajectory, clip_output
from rlmlab.lm import constrained
from rlmlab.tools import ToolRegistry, Workspace, source_roots
from rlmlab.trace import ContextTrace

__all__ = ["run_scratchpad", "ScratchpadLoop", "ScratchpadOptions", "scratchpad_prompt", "parse_reply", "ScratchStep"]

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


@dataclass(frozen=True)
class ScratchpadOptions(CodeRunOptions):
    """The scratchpad's options: ``history_k`` past steps are shown in each prompt, each output clipped to
    ``max_output_chars``. That default is 2,000 (not 10,000 as elsewhere) because an output is shown again in
    up to ``history_k`` later prompts."""

    max_output_chars: int = 2000
    history_k: int = 3

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.history_k, bool) or not isinstance(self.history_k, int) or self.history_k < 0:
            raise ValueError(f"history_k: {self.history_k!r}; expected an integer >= 0")


class ScratchpadLoop:
    """The "original RLM" loop: a persistent namespace, a plain-text prompt with the last steps, SUBMIT."""

    name = "scratchpad"
    options = ScratchpadOptions

    def run(self, run: Run) -> None:
        opts, ws = run.options, run.workspace
        factory = TappedFactory(InterpreterFactory(ws, step_timeout=opts.step_timeout,
                                                   sub_call_counter=run.meter.record_sub_calls, sandbox=opts.sandbox,
                                                   sandbox_policy=opts.sandbox_policy, notes=run.traj.notes,
                                                   path_roots=source_roots(run.env.source_path)),
                                run.tap, run.clock)
        run.traj.sandbox = factory.sandbox_used
        if run.ref is not None:
            setup = ("context = BlobRef(**__import__('json').loads(_raw_context))",
                     json.dumps({"key": run.ref.key, "n": run.ref.n}))
        else:
            setup = ("context = _raw_context", run.text)
        header = "\n\n".join(([opts.instructions] if opts.instructions else []) + [
            _RULES.format(history_k=opts.history_k, max_output_chars=opts.max_output_chars),
            f"Tools (Python functions in the REPL):\n{_tool_docs(ws)}",
        ])
        loop = _Loop(run, header)
        repl = factory()
        try:
            repl.tools.update({name: ws.bound(name) for name in ws.registry.names()})
            repl.tools.update(_sub_llm_tools(run.lm, opts.max_llm_calls))
            repl.output_fields = [{"name": "answer", "type": "str"}]
            repl.recording_setup = True  # replayed if a step times out and the worker restarts
            try:
                repl.execute(setup[0], variables={"_raw_context": setup[1]})
                repl.execute(_LISTING_SETUP)
            finally:
                repl.recording_setup = False
            for n in range(1, opts.max_iters + 1):
                final = loop.step(n, repl)
                if final is not None:
                    run.traj.answer, run.traj.submitted = str(final["answer"]), True
                    run.traj.final_reasoning = loop.history[-1].thought
                    break
        finally:
            repl.shutdown()


@dataclass
class _Loop:
    """The state one scratchpad run carries from step to step."""

    run: Run
    header: str
    history: list[ScratchStep] = dataclasses.field(default_factory=list)

    def step(self, n: int, repl: RLMLabInterpreter) -> dict[str, Any] | None:
        """Prompt, reply, run; record the step. Returns the submitted fields when the code called SUBMIT."""
        run, opts = self.run, self.run.options
        listing = _listing(repl)
        prompt = scratchpad_prompt(header=self.header, query=run.query, listing=listing, history=self.history,
                                   history_k=opts.history_k, max_output_chars=opts.max_output_chars, step=n,
                                   max_iters=opts.max_iters)
        scope = run.step(n, len(listing))
        if opts.decoding == "grammar":
            with constrained(grammar=run_step_grammar(run, fmt="scratchpad", must_submit=n >= opts.max_iters)):
                reply = _text_of(grammar_lm(run.lm)(prompt))
        else:
            reply = _text_of(run.lm(prompt))
        thought, code = parse_reply(reply)
        output, final = self._execute(repl, thought, code)
        record = scope.record(thought, code, output)
        self.history.append(ScratchStep(n, thought, code, output))
        # The static part of every prompt; what enters the next prompts is the clipped output.
        scope.log_context(record, self.header)
        return final

    def _execute(self, repl: RLMLabInterpreter, thought: str, code: str) -> tuple[str, dict[str, Any] | None]:
        """Run the step's code under the Turing guard, as MeteredRLM does: a kill discards the step, a
        correction is appended to a non-final output."""
        killed = self.run.check_step(thought, code)
        if killed is not None:
            return killed, None
        with self.run.observing():
            output, final = _run_code(repl, code)
        return (self.run.with_corrections(output) if final is None else output), final


def run_scratchpad(query: str, context: Any, *,
                   # what the run acts on and where it writes (RunEnv)
                   lm: Any, workspace: Workspace | None = None, tools: ToolRegistry | None = None, turing: Any = None,
                   trace: ContextTrace | None = None, runs_dir: str | Path | None = None, run_id: str | None = None,
                   source_path: str | None = None, parent: Any = None,
                   # every executor's options (RunOptions)
                   context_mode: str = "handle", max_iters: int = 10, max_output_chars: int = 2000,
                   trace_budget: int = 8000, instructions: str | None = None, decoding: str = "grammar",
                   max_tokens: int | None = None, max_seconds: float | None = None, max_cost: float | None = None,
                   max_errors: int | None = None, show_budget: bool = False,
                   # the code executors' options (CodeRunOptions)
                   max_llm_calls: int = 20, step_timeout: float = 30.0, max_statements: int = 3, prompt: str = "auto",
                   vocab: bool = True, sandbox: str = DEFAULT_SANDBOX, sandbox_policy: str = "best_effort",
                   max_depth: int = 1, max_concurrent: int = 4,
                   # the scratchpad's own (ScratchpadOptions)
                   history_k: int = 3) -> Trajectory:
    """Run one task in the scratchpad loop; the trajectory is
    :func:`run_rlm`'s shape.

    ``history_k`` (>= 0): past steps shown in each prompt; ``max_output_chars`` (> 0): characters of each shown
    output. The namespace keeps everything, so the prompt stays bounded however long the run. ``context`` is the
    variable ``context``: a BlobRef (``"handle"``) or the plain string (``"string"``). ``max_llm_calls`` bounds
    llm_query prompts; ``step_timeout`` (seconds) restarts a hung worker as in the RLM executor. ``instructions``
    head every prompt. ``turing`` checks each step before its code runs (a kill discards it) and each tool call. No
    ``SUBMIT`` within ``max_iters`` steps leaves ``answer`` None and ``submitted`` False; an error is recorded in
    ``Trajectory.error`` with the steps so far. ``trace_budget`` and ``trace`` as in :func:`run_rlm`.

    Each keyword is the field of the same name and default in :class:`RunEnv` or :class:`ScratchpadOptions`
    (``tests/test_public_surface.py`` checks that they stay the same); invalid options raise ValueError before
    anything runs.
    """
    return execute_keywords(_LOOP, ScratchpadOptions, **locals())  # first statement: locals() is the parameters


_LOOP = ScratchpadLoop()
