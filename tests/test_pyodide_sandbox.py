"""The pyodide sandbox (issue 27): step code runs as Pyodide in a Deno process without permissions, with the
workspace's tools and BlobRef handles, and cannot reach the host's environment, files, network or processes.

Each attempt to leave is also checked from the host's side (the file is not there, the listener accepted
nothing, the canary is not in the Deno process's environment), not only by the error the code sees.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from dspy.primitives.code_interpreter import CodeExecutionError, FinalOutput

from rlmlab.executors import PyodideInterpreter, pyodide_unavailable, run_rlm
from rlmlab.experiments import run_experiment
from rlmlab.lm import make_lm
from rlmlab.memory import MemoryTask
from rlmlab.tools import Workspace

UNAVAILABLE = pyodide_unavailable(fetch=False)  # no download while tests are collected: `make test` warms the cache
pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(UNAVAILABLE is not None, reason=f"pyodide sandbox unavailable: {UNAVAILABLE}")]

CANARY = "sk-canary-27-do-not-leak"
TOOLS = ("blob", "ctx_peek", "ctx_slice", "ctx_stats")


def _attempt(repl: PyodideInterpreter, code: str) -> str:
    """What the code got: its output, or the error the model would read."""
    try:
        return str(repl.execute(code))
    except (CodeExecutionError, SyntaxError) as exc:
        return f"raised {exc}"


@pytest.fixture(scope="module")
def repl():
    saved = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = CANARY  # in the host's environment when Deno starts
    ws = Workspace()
    interp = PyodideInterpreter(ws, tools={name: ws.bound(name) for name in TOOLS}, step_timeout=60)
    try:
        interp.start()
        yield interp
    finally:
        interp.shutdown()
        if saved is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = saved


def test_a_step_prints_and_variables_persist_between_steps(repl):
    assert repl.sandbox_used == "pyodide" and repl.scratch_dir is None
    assert repl.execute("kept = 6\nprint('from', 'pyodide')") == "from pyodide"
    assert repl.execute("kept * 7") == 42
    assert repl.execute("import sys\nsys.platform") == "emscripten"  # really Pyodide, not a CPython worker


def test_a_workspace_tool_round_trips_a_blobref_handle(repl):
    out = repl.execute("ref = blob('hello world, hello sandbox')\n"
                       "print(type(ref).__name__, isinstance(ref, BlobRef), ref.n)\n"
                       "print(ctx_peek(ref, 5)['preview'], ctx_stats(ref)['length'])")
    assert out.splitlines() == ["BlobRef True 26", "hello 26"]
    key = repl.execute("ref.key")
    assert repl.workspace.store.get(key) == "hello world, hello sandbox"  # the host holds the payload


def test_a_tool_error_reaches_the_code_as_an_exception(repl):
    out = repl.execute("ref = blob('abcdef')\n"
                       "try:\n    ctx_slice(ref, 5, 2)\nexcept RuntimeError as exc:\n    print('caught', exc)")
    assert out.startswith("caught ToolError: start: 5 is after end 2")


def test_the_hosts_secrets_are_not_visible(repl):
    attempts = [
        "import os\nprint(dict(os.environ))",
        "import js\nprint(js.Deno.env.get('OPENAI_API_KEY'))",
        "import js\nprint(js.Deno.env.toObject())",
        "print(open('/proc/self/environ').read())",
        "import js\nprint(js.Deno.readTextFileSync('/proc/self/environ'))",
    ]
    outputs = [_attempt(repl, code) for code in attempts]
    assert all(CANARY not in out for out in outputs), outputs
    assert "NotCapable" in outputs[1] and "NotCapable" in outputs[4]
    environ = Path(f"/proc/{repl._started.pid}/environ").read_bytes()  # the Deno process's own environment
    assert CANARY.encode() not in environ and b"OPENAI_API_KEY" not in environ


def test_a_host_file_outside_scratch_cannot_be_read(repl, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("host-secret-27")
    for code in (f"print(open({str(secret)!r}).read())",
                 f"import js\nprint(js.Deno.readTextFileSync({str(secret)!r}))",
                 "import js\nprint(js.Deno.readTextFileSync('/etc/passwd'))"):
        out = _attempt(repl, code)
        assert out.startswith("raised") and "host-secret-27" not in out and "root:" not in out, out


def test_a_write_outside_scratch_fails(repl, tmp_path):
    target = tmp_path / "written.txt"
    denied = _attempt(repl, f"import js\njs.Deno.writeTextFileSync({str(target)!r}, 'x')")
    assert "NotCapable" in denied
    # Pyodide's own file system is in memory: even where the code can write, nothing reaches the host
    _attempt(repl, f"import os\nos.makedirs({str(tmp_path)!r}, exist_ok=True)\nopen({str(target)!r}, 'w').write('x')")
    assert repl.execute(f"import os\nos.path.exists({str(target)!r})") is True
    assert not target.exists() and list(tmp_path.iterdir()) == []
    # Deno keeps localStorage on disk without asking for a permission; the sandbox leaves it no directory
    storage = _attempt(repl, "import js\njs.localStorage.setItem('planted', 'x')")
    assert storage.startswith("raised") and "Not a directory" in storage


def test_a_tcp_connection_to_a_host_listener_is_refused(repl):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        python = _attempt(repl, f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)")
        deno = _attempt(repl, f"import js\nfrom pyodide.ffi import to_js\n"
                              f"js.Deno.connect(to_js({{'hostname': '127.0.0.1', 'port': {port}}}))")
        fetch = _attempt(repl, f"import js\njs.fetch('http://127.0.0.1:{port}/')")
        server.settimeout(1.0)
        with pytest.raises(TimeoutError):
            server.accept()  # nothing ever connected
    assert python.startswith("raised OSError"), python
    assert all("raised" in out or "pending" in out for out in (deno, fetch)), (deno, fetch)


def test_processes_cannot_be_started(repl):
    out = _attempt(repl, "import subprocess\nsubprocess.run(['id'])")
    assert out.startswith("raised OSError") and "does not support processes" in out
    out = _attempt(repl, "import js\njs.Deno.Command.new('id').outputSync()")
    assert "NotCapable" in out or "raised" in out
    assert "uid=" not in out


def test_dspy_interpreter_contract_holds_with_llm_query_counted():
    async def mul(*, a, b):  # an async host tool, as dspy's interpreters accept
        return a * b

    counted = []
    fields = [{"name": "answer", "type": "str"}, {"name": "n", "type": "int"}]
    repl = PyodideInterpreter(Workspace(), tools={"mul": mul, "llm_query": lambda prompt: f"echo {prompt}"},
                              output_fields=fields, sub_call_counter=counted.append)
    try:
        assert repl.execute("mul(a=6, b=7)") == 42
        assert repl.execute("llm_query('hi')") == "echo hi" and counted == [1]
        with pytest.raises(SyntaxError):
            repl.execute("def")
        with pytest.raises(CodeExecutionError, match="ZeroDivisionError"):
            repl.execute("1 // 0")
        repl.execute("__builtins__['len'] = None\nSUBMIT = 'x'\nmul = None")
        assert repl.execute("len('abc')") == 3 and repl.execute("mul(a=2, b=3)") == 6
        final = repl.execute("SUBMIT(answer='ok', n=mul(a=2, b=3))", variables={"given": [1, 2]})
        assert isinstance(final, FinalOutput) and final.output == {"answer": "ok", "n": 6}
        assert repl.execute("given") == [1, 2]
        with pytest.raises(CodeExecutionError, match="thread"):  # no threads in WebAssembly
            repl.execute("import threading\nthreading.Thread(target=print).start()")
    finally:
        repl.shutdown()


def test_a_timeout_restarts_the_repl_and_replays_the_setup():
    repl = PyodideInterpreter(Workspace(), step_timeout=5)
    try:
        repl.recording_setup = True
        repl.execute("context = 'kept'")
        repl.recording_setup = False
        repl.execute("mine = 1")
        out = repl.execute("while True:\n    pass")
        assert out.startswith("[Error] TimeoutError: the step ran over 5s") and repl.restarts == 1
        assert repl.execute("print(context)") == "kept"
        with pytest.raises(CodeExecutionError, match="NameError"):
            repl.execute("mine")
        out = repl.execute("import js\njs.Deno.exit(3)")  # a REPL that dies is restarted the same way
        assert out.startswith("[Error] WorkerCrash:") and "status 3" in out and repl.crashes == 1
        assert repl.execute("context") == "kept"
    finally:
        repl.shutdown()


def test_the_memory_limit_is_a_memory_error_and_the_repl_goes_on():
    repl = PyodideInterpreter(Workspace(), step_timeout=60, memory_limit_mb=256)
    try:
        assert repl.execute("len(bytearray(100 * 1024 * 1024))") == 100 * 1024 * 1024
        with pytest.raises(CodeExecutionError, match="MemoryError"):
            repl.execute("x = bytearray(512 * 1024 * 1024)")
        assert repl.execute("print('alive')") == "alive" and repl.crashes == 0
        # memory taken through JavaScript, outside WebAssembly's pages, is capped as well
        out = _attempt(repl, "import js\nbufs = [js.ArrayBuffer.new(256 * 1024 * 1024) for _ in range(4)]\nlen(bufs)")
        assert out != "4" and ("raised" in out or "WorkerCrash" in out), out
        assert repl.execute("print('alive')") == "alive"
    finally:
        repl.shutdown()


def _pyodide_rlm_runs(monkeypatch) -> list[PyodideInterpreter]:
    """Until the executors take a sandbox option: the RLM's interpreter factory makes Pyodide REPLs."""
    from rlmlab.executors import _context_events

    class TappedPyodide(_context_events._TappedInterpreter, PyodideInterpreter):
        pass

    made: list[PyodideInterpreter] = []
    monkeypatch.setattr(_context_events, "_TappedInterpreter",
                        lambda *a, **kw: made.append(TappedPyodide(*a, **kw)) or made[-1])
    return made


def test_an_rlm_run_with_the_scripted_lm_goes_through_the_sandbox(tmp_path):
    lm = make_lm("scripted", script=[
        {"reasoning": "1", "code": "import sys\nprint(sys.platform, ctx_stats(context)['lines'])"},
        {"reasoning": "2", "code": "SUBMIT(answer=str(ctx_stats(context)['lines']))"},
    ])
    traj = run_rlm("How many lines?", "line one\nline two\nline three\n", lm=lm, runs_dir=tmp_path,
                   sandbox="pyodide", sandbox_policy="required")
    assert traj.sandbox == "pyodide" and traj.error is None and traj.answer == "3"
    assert traj.iterations[0].output.strip() == "emscripten 3"


def test_e13s_grammar_condition_passes_the_same_tasks_in_the_sandbox(tmp_path, monkeypatch):
    from test_speed import _constrainable  # a scripted LM that takes the grammar path

    tasks = [MemoryTask(f"t{n}", "How many lines does the context have?", "x\n" * n, None, n, "numeric",
                        {"suite": "arith", "level": 1}) for n in (2, 3)]

    def successes(runs_dir):
        run = run_experiment("E13", lm=_constrainable(), task_list=tasks, conditions=["grammar"],
                             runs_dir=runs_dir, progress=False)
        rows = [json.loads(x) for x in (run.run_dir / "results.jsonl").read_text().splitlines()]
        return sorted((r["task_id"], r["success"]) for r in rows)

    plain = successes(tmp_path / "plain")
    made = _pyodide_rlm_runs(monkeypatch)
    assert successes(tmp_path / "pyodide") == plain == [("t2", True), ("t3", True)]
    assert len(made) == 2


def test_without_deno_the_reason_is_one_line_and_start_refuses(monkeypatch):
    from rlmlab.executors import _pyodide

    monkeypatch.setattr(_pyodide, "_deno", lambda: None)
    reason = pyodide_unavailable()
    assert reason is not None and "\n" not in reason and "rlmlab[sandbox]" in reason
    repl = PyodideInterpreter(Workspace())
    with pytest.raises(Exception, match=r"Pyodide sandbox unavailable: Deno is not installed"):
        repl.execute("1")
