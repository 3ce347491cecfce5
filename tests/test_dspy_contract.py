"""DSPy's contract for interpreters and RLM, checked on rlmlab's implementations (issue 18, defect 6).

The first group runs the behaviours DSPy's own LocalInterpreter tests check (a persistent separate worker,
host tools and typed SUBMIT, name validation, protected globals, recoverable errors, async host tools,
callbacks, use from dspy.RLM) against both ``dspy.LocalInterpreter`` and ``RLMLabInterpreter``. The installed
dspy package ships no tests, so these are written here from those behaviours. Where the two differ on
purpose, the test names the entry of :data:`rlmlab.executors._interpreter.LOCAL_INTERPRETER_DIFFERENCES`,
the one place the differences are listed.

The second group covers MeteredRLM: a replacement action predictor without ``.signature`` and the async path
(``acall``), which is metered like the sync one.
"""

import asyncio
import os

import dspy
import pytest
from dspy.primitives.code_interpreter import CodeExecutionError, CodeInterpreterError, FinalOutput
from dspy.primitives.local_interpreter import LocalInterpreter
from dspy.utils.callback import BaseCallback

from rlmlab.executors import RLM_SIGNATURE, InterpreterFactory, MeteredRLM, RLMLabInterpreter
from rlmlab.executors._interpreter import LOCAL_INTERPRETER_DIFFERENCES
from rlmlab.executors import CodeRunOptions, RunEnv
from rlmlab.executors._harness import Run, make_guard, start_run
from rlmlab.executors._trajectory import Trajectory
from rlmlab.lm import LenientChatAdapter, make_lm
from rlmlab.tools import ToolRegistry, Workspace
from rlmlab.trace import EventKind

KINDS = ["dspy", "rlmlab"]


def make(kind, tools=None, output_fields=None, timeout=None, callbacks=None):
    if kind == "dspy":
        return LocalInterpreter(tools=tools, output_fields=output_fields, execution_timeout=timeout,
                                callbacks=callbacks)
    return RLMLabInterpreter(Workspace(registry=ToolRegistry()), tools=tools, output_fields=output_fields,
                             step_timeout=timeout or 30.0, callbacks=callbacks)


def differs(name):
    assert name in LOCAL_INTERPRETER_DIFFERENCES, f"undocumented difference {name!r}"
    return True


# -- LocalInterpreter behaviours, on both -------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_worker_is_another_process_keeps_state_and_captures_stdout(kind, capsys):
    with make(kind) as repl:
        assert repl.execute("import os\nos.getpid()") != os.getpid()
        repl.execute("kept = 6")
        assert repl.execute("kept * 7") == 42
        assert repl.execute("print('only in the worker')") == "only in the worker"
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("kind", KINDS)
def test_host_tools_and_typed_submit(kind):
    fields = [{"name": "answer", "type": "str"}, {"name": "n", "type": "int"}]
    with make(kind, tools={"mul": lambda *, a, b: a * b}, output_fields=fields) as repl:
        assert repl.execute("mul(a=6, b=7)") == 42
        final = repl.execute("SUBMIT(answer='ok', n=mul(a=2, b=3))")
        assert isinstance(final, FinalOutput) and final.output == {"answer": "ok", "n": 6}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["has-dash", "def", "SUBMIT"])
def test_bad_tool_names_are_refused_before_the_worker_starts(kind, name):
    repl = make(kind)
    repl.tools[name] = lambda: 1
    with pytest.raises(ValueError, match="invalid names"):
        repl.execute("1")
    assert repl._process is None
    repl.tools.clear()
    assert repl.execute("2 + 2") == 4
    repl.shutdown()


@pytest.mark.parametrize("kind", KINDS)
def test_reserved_variable_names_are_refused_and_the_session_stays_usable(kind):
    repl = make(kind, tools={"mul": lambda a, b: a * b})
    for bad in ({"def": 1}, {"SUBMIT": 0}, {"mul": 2}):
        with pytest.raises(CodeInterpreterError, match="invalid names"):
            repl.execute("1", variables=bad)
        assert repl._process is None
    assert repl.execute("mul(6, 7)", variables={"x": 1}) == 42
    repl.shutdown()


@pytest.mark.parametrize("kind", KINDS)
def test_guest_code_cannot_break_the_interpreter_globals(kind):
    with make(kind, tools={"mul": lambda a, b: a * b}) as repl:
        repl.execute("__builtins__['len'] = None\nSUBMIT = 'x'\nmul = None")
        assert repl.execute("len('abc')") == 3 and repl.execute("mul(6, 7)") == 42
        assert repl.execute("SUBMIT(1)").output == {"output": 1}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_errors_are_recoverable_and_a_timeout_is_per_implementation(kind):
    repl = make(kind, timeout=0.5)
    with pytest.raises(SyntaxError):
        repl.execute("def")
    with pytest.raises(CodeExecutionError, match="ZeroDivisionError"):
        repl.execute("1 // 0")
    assert repl.execute("40 + 2") == 42
    if kind == "dspy":
        with pytest.raises(CodeInterpreterError, match="exceeded execution timeout"):
            repl.execute("import time\ntime.sleep(5)")
        with pytest.raises(CodeInterpreterError, match="shut down"):
            repl.execute("1")
    else:
        assert differs("timeout_recovery")
        message = repl.execute("import time\ntime.sleep(5)")
        assert message.startswith("[Error] TimeoutError") and repl.restarts == 1
        assert repl.execute("40 + 2") == 42
    repl.shutdown()


@pytest.mark.parametrize("kind", KINDS)
def test_async_host_tool(kind):
    async def mul(*, a, b):
        return a * b

    with make(kind, tools={"mul": mul}) as repl:
        assert repl.execute("mul(a=6, b=7)") == 42


class Recorder(BaseCallback):
    def __init__(self):
        self.events = []

    def on_interpreter_startup_start(self, call_id, instance, inputs):
        self.events.append("startup_start")

    def on_interpreter_startup_end(self, call_id, outputs, exception=None):
        self.events.append("startup_end")

    def on_interpreter_execute_start(self, call_id, instance, inputs):
        self.events.append(("execute", inputs["code"]))

    def on_interpreter_execute_end(self, call_id, outputs, exception=None):
        self.events.append(("executed", outputs))

    def on_interpreter_tool_call_start(self, call_id, instance, inputs):
        self.events.append(("tool", inputs["tool_name"]))

    def on_interpreter_tool_call_end(self, call_id, outputs, exception=None):
        self.events.append(("tool_result", outputs))

    def on_interpreter_shutdown_start(self, call_id, instance, inputs):
        self.events.append("shutdown")


@pytest.mark.parametrize("kind", KINDS)
def test_callbacks_fire_for_startup_execute_tool_calls_and_shutdown(kind):
    # Regression (rlmlab): RLMLabInterpreter.start() overrode DSPy's start() without its callback decorator.
    rec = Recorder()
    with make(kind, tools={"answer": lambda: 42}, callbacks=[rec]) as repl:
        assert repl.execute("answer()") == 42
    assert rec.events == ["startup_start", "startup_end", ("execute", "answer()"), ("tool", "answer"),
                          ("tool_result", 42), ("executed", 42), "shutdown"]


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_startup_callbacks_fire_again_when_a_timeout_restarts_the_worker():
    rec = Recorder()
    repl = make("rlmlab", timeout=0.5, callbacks=[rec])
    repl.execute("1")
    repl.execute("import time\ntime.sleep(5)")
    assert differs("replayed_setup_callbacks")
    assert rec.events.count("startup_start") == 2 and rec.events.count("startup_end") == 2
    assert rec.events[-1][0] == "executed" and rec.events[-1][1].startswith("[Error] TimeoutError")
    repl.shutdown()


def test_workspace_tools_fire_tool_callbacks_once(rust_file):
    rec = Recorder()
    ws = Workspace()
    ref = ws.store.put(rust_file.read_text(), "context")
    repl = RLMLabInterpreter(ws, tools={"ctx_stats": ws.bound("ctx_stats")}, callbacks=[rec])
    stats = repl.execute("ctx_stats('context')")
    assert stats["key"] == "context" and stats["length"] == ref.n  # a workspace tool, through Workspace.call
    assert [e for e in rec.events if isinstance(e, tuple) and e[0] == "tool"] == [("tool", "ctx_stats")]
    repl.shutdown()


class _Scripted(dspy.Predict):
    """An action predictor replaced as DSPy allows: its own forward, no use of the LM."""

    def __init__(self, signature, steps):
        super().__init__(signature)
        self.steps = iter(steps)

    def forward(self, **kwargs):
        return dspy.Prediction(**next(self.steps))

    async def aforward(self, **kwargs):
        return dspy.Prediction(**next(self.steps))


@pytest.mark.parametrize("kind", KINDS)
def test_dspy_rlm_runs_on_the_interpreter_with_a_replaced_predictor(kind):
    used = []

    def mul(*, a: int, b: int) -> int:
        used.append((a, b))
        return a * b

    rlm = dspy.RLM("question: str -> answer: str", max_iters=2, tools=[mul],
                   interpreter_factory=lambda: make(kind))
    rlm.generate_action = _Scripted(rlm.generate_action.signature, [
        {"reasoning": "multiply", "code": "x = mul(a=6, b=7)"},
        {"reasoning": "submit", "code": "SUBMIT(answer=str(x))"}])
    assert rlm(question="6 * 7?").answer == "42" and used == [(6, 7)]


# -- MeteredRLM ---------------------------------------------------------------------------------------------

STEPS = [{"reasoning": "Count.", "code": "hits = ctx_find(context, 'pub async fn', k=50)\nprint(hits['total'])"},
         {"reasoning": "Submit.", "code": "SUBMIT(answer=str(hits['total']))"}]


def _metered(text, lm, max_iters=3):
    query = "How many pub async fn?"
    trace, ws, recorder, meter, ref, _ = start_run(text, "handle", lm=lm, workspace=None, tools=None,
                                                   trace_budget=100_000)
    run = Run(CodeRunOptions(max_iters=max_iters), RunEnv(lm), query, trace, ws, recorder, meter, ref, None,
              make_guard(None, ws, "t"), Trajectory(run_id="t", query=query, lm="scripted", context_mode="handle"))
    factory = InterpreterFactory(ws, sub_call_counter=meter.record_sub_calls)
    rlm = MeteredRLM(RLM_SIGNATURE, run=run, factory=factory, max_iters=max_iters)
    from rlmlab.executors._rlm import _HandleInput

    return rlm, {"context": _HandleInput(ref), "query": query}


class _NoSignature(dspy.Module):
    """A replacement action predictor with no ``signature`` attribute at all (DSPy allows it)."""

    def __init__(self, steps):
        super().__init__()
        self.steps = iter(steps)

    def forward(self, **kwargs):
        return dspy.Prediction(**next(self.steps))

    async def aforward(self, **kwargs):
        return self.forward(**kwargs)


def test_metered_rlm_tolerates_a_predictor_without_signature(rust_file):
    # Regression: MeteredRLM read generate_action.signature after the step ran (AttributeError).
    text = rust_file.read_text()
    lm = make_lm("scripted", script=[])
    rlm, inputs = _metered(text, lm)
    rlm.generate_action = _NoSignature(STEPS)
    assert not hasattr(rlm.generate_action, "signature")
    with dspy.context(lm=lm, adapter=LenientChatAdapter()):
        pred = rlm(**inputs)
    assert pred.answer == str(text.count("pub async fn")) and len(rlm.records) == 2
    assert rlm.trace.events[0].kind is EventKind.SystemPrompt


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_acall_is_metered_like_the_sync_call(rust_file):
    # Regression: acall() ran unmetered (0 iteration records, 0 trace events). The scripted LM has no async
    # engine, so the actions come from a replaced predictor on both paths.
    text = rust_file.read_text()
    n = str(text.count("pub async fn"))
    lm = make_lm("scripted", script=[])
    sync, inputs = _metered(text, lm)
    sync.generate_action = _NoSignature(STEPS)
    with dspy.context(lm=lm, adapter=LenientChatAdapter()):
        assert sync(**inputs).answer == n

    rlm, inputs = _metered(text, lm)
    rlm.generate_action = _NoSignature(STEPS)

    async def go():
        with dspy.context(lm=lm, adapter=LenientChatAdapter()):
            return await rlm.acall(**inputs)

    assert asyncio.run(go()).answer == n
    assert [r.code for r in rlm.records] == [r.code for r in sync.records] and len(rlm.records) == 2
    assert rlm.records[0].tool_calls[0]["name"] == "ctx_find" and rlm.records[0].leakage.tool_calls == 1
    assert [e.kind for e in rlm.trace.events] == [e.kind for e in sync.trace.events]
    assert EventKind.GrepResult in [e.kind for e in rlm.trace.events]
