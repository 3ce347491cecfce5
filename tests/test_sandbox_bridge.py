"""Step code cannot reach the host through the bridge (issue 52): everything the host does for it takes plain data.

A third red team found that the sandbox held and the host-side code step code may call did not: DSPy's facade
built modules on the host from signature strings the step wrote (imports, attribute walks, host callables,
SystemExit out of run_rlm), ``ast_query`` read any .rs path on the host, through a symlink or by a swap race, and
the worker's reply pipe took forged and unbounded lines. Each is judged here on the host side.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import threading
import time
from pathlib import Path

import pytest

from redteam_host import Host, execute

pytestmark = pytest.mark.sandbox

SECRET = "RTCBRIDGE-" + "5f1e0c2a9b7d4e3f"


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    h = Host(tmp_path_factory.mktemp("bridge"))
    yield h
    h.close()


@pytest.fixture(scope="module")
def interp(host):
    from rlmlab.executors import RLMLabInterpreter

    ws = host.workspace()
    tools = {spec.name: ws.bound(spec.name) for spec in ws.registry}

    def host_exit(code: int = 0) -> None:  # a host tool that raises what ends a process
        raise SystemExit(code)

    def host_interrupt() -> None:
        raise KeyboardInterrupt

    tools.update(host_exit=host_exit, host_interrupt=host_interrupt, llm_query=lambda prompt: f"echo {prompt}")
    it = RLMLabInterpreter(ws, tools=tools, step_timeout=30.0, sandbox="confined", sandbox_policy="required")
    it.start()
    assert it.sandbox_used == "confined"
    yield it
    it.shutdown()


def _alive(interp) -> bool:
    return execute(interp, "print(6 * 7)", {}).strip() == "42"


# -- DSPy modules are not built on the host from step code's strings ----------------------------------------------

_DSPY_STEPS = [
    "r = dspy.Predict('a: os.environ.zz -> b')(a=1)\nprint(r)",
    "r = dspy.Predict('a: __main__.__dict__.zz -> b')(a=1)\nprint(r)",
    "r = dspy.Predict('a: this -> b')(a=1)\nprint(r)",
    "r = dspy.Predict(\"a: Annotated[str, Field(json_schema_extra=os.environ.update)] -> b\")(a=1)\nprint(r)",
    "r = dspy.Predict(\"a: Annotated[str, Field(json_schema_extra=sys.exit)] -> b\")(a=1)\nprint(r)",
    "print(__dspy_construct__('Predict', 'a: os.environ.zz -> b', 'p'))",
]


def test_step_code_builds_no_dspy_module_on_the_host(tmp_path):
    """Run in a child process with a canary key: the host's environment never shows, the host imports nothing
    the step named, and run_rlm returns (before: the host's environ came back, `this` was imported, and
    ``json_schema_extra=sys.exit`` ended the caller's process)."""
    script = tmp_path / "run.py"
    script.write_text(f"""
import json, os, sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
os.environ['OPENAI_API_KEY'] = {SECRET!r}
from rlmlab.executors import run_rlm
from rlmlab.lm import make_lm
steps = json.loads(sys.argv[1])
lm = make_lm('scripted', script=[{{'reasoning': 'r', 'code': c}} for c in steps] + [{{'reasoning': 'r', 'code': "SUBMIT(answer='x')"}}])
t = run_rlm('q', 'some context', lm=lm, runs_dir=sys.argv[2], sandbox='confined', sandbox_policy='required',
            max_iters=len(steps) + 1)
print(json.dumps({{'error': t.error, 'outputs': [i.output for i in t.iterations], 'this': 'this' in sys.modules}}))
""")
    import subprocess

    proc = subprocess.run([sys.executable, str(script), json.dumps(_DSPY_STEPS), str(tmp_path / "runs")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["error"] is None and not result["this"], result
    assert len(result["outputs"]) == len(_DSPY_STEPS) + 1
    written = "".join(p.read_text(errors="replace") for p in (tmp_path / "runs").rglob("*") if p.is_file())
    assert SECRET not in json.dumps(result) and SECRET not in written
    assert "__main__" not in json.dumps(result["outputs"][1])  # no host globals either
    assert "no tool named" in result["outputs"][-2] or "not defined" in result["outputs"][-2]


# -- a base exception raised by host code for a step is the step's error ------------------------------------------

@pytest.mark.parametrize("call", ["host_exit(3)", "host_interrupt()"])
def test_a_host_base_exception_is_the_steps_error(interp, call):
    out = execute(interp, f"try:\n    {call}\nexcept Exception as e:\n    print('step saw', e)", {})
    assert "step saw" in out and "HostError" in out and "refused" in out, out
    assert _alive(interp)


def test_sub_lm_arguments_are_plain_data(interp):
    out = execute(interp, "try:\n    llm_query({'messages': [1]})\nexcept Exception as e:\n    print(e)", {})
    assert "llm_query: prompt: expected a non-empty string" in out, out
    assert execute(interp, "print(llm_query('hi'))", {}).strip() == "echo hi"


# -- paths: only beneath the run's roots, no link followed, no race ----------------------------------------------

def _secret_rs(host) -> Path:
    path = host.outside / "secret.rs"
    path.write_text(f"pub fn leaked() -> &'static str {{ \"{host.canaries['FILE']}\" }}\n")
    return path


def test_ast_query_refuses_an_absolute_path_outside_the_roots(host, interp):
    out = execute(interp, "print(ast_query(P, '(string_literal) @s'))", {"P": str(_secret_rs(host))})
    assert host.canaries["FILE"] not in out and "outside the directories this run may read" in out, out
    assert _alive(interp)


def test_ast_query_follows_no_link_in_scratch(host, interp):
    secret = _secret_rs(host)
    link = Path(interp.scratch_dir) / "innocent.rs"
    link.unlink(missing_ok=True)
    os.symlink(secret, link)
    out = execute(interp, "print(ast_query('innocent.rs', '(string_literal) @s'))", {})
    assert host.canaries["FILE"] not in out and "symbolic link" in out, out
    sub = Path(interp.scratch_dir) / "d"
    sub.unlink(missing_ok=True)
    os.symlink(host.outside, sub)  # a link to a directory on the way
    out = execute(interp, "print(ast_query(P, '(string_literal) @s'))", {"P": str(sub / "secret.rs")})
    assert host.canaries["FILE"] not in out and "symbolic link" in out, out
    out = execute(interp, "open('mine.rs', 'w').write('pub fn visible() {}')\n"
                          "print(ast_query('mine.rs', '(function_item name: (identifier) @n)')['matches'])", {})
    assert "visible" in out, out  # a file the step wrote in scratch is read


def test_ast_query_reads_the_runs_source_tree_by_path(host, tmp_path):
    from rlmlab.executors import RLMLabInterpreter

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text("pub fn inside() -> u8 { 1 }\n")
    ws = host.workspace()
    it = RLMLabInterpreter(ws, tools={s.name: ws.bound(s.name) for s in ws.registry}, sandbox="confined",
                           sandbox_policy="required", path_roots=(str(tmp_path),))
    try:
        out = execute(it, "print(ast_query(P, '(function_item name: (identifier) @n)')['matches'])",
                      {"P": str(tmp_path / "src" / "lib.rs")})
        assert "inside" in out, out
        out = execute(it, "print(ast_query(P, '(_) @s'))", {"P": str(tmp_path / "src" / ".." / ".." / "x.rs")})
        assert "outside the directories" in out, out
    finally:
        it.shutdown()


def test_ast_query_swap_race_reads_nothing_outside(host, interp):
    """A thread in the step swaps scratch/x.rs between a real file and a link to a host .rs canary while the step
    calls ast_query in a loop (before: the host's check-then-read lost the race within a second)."""
    secret = _secret_rs(host)
    code = f"""
import os, threading
stop = False
def swap():
    while not stop:
        try:
            os.unlink('x.rs')
        except OSError:
            pass
        try:
            os.symlink({str(secret)!r}, 'x.rs')
        except OSError:
            pass
        try:
            os.unlink('x.rs')
        except OSError:
            pass
        open('x.rs', 'w').write('pub fn decoy() {{}}')
t = threading.Thread(target=swap)
t.start()
seen = []
for i in range(150):
    try:
        seen.append(str(ast_query('x.rs', '(_) @s', k=5)))
    except Exception as e:
        seen.append(type(e).__name__ + str(e)[:80])
stop = True
t.join()
print('\\n'.join(seen))
"""
    out = execute(interp, code, {})
    assert host.canaries["FILE"] not in out, "the race read the host file"
    assert "decoy" in out or "symbolic link" in out, out[:500]
    assert _alive(interp)


# -- the reply pipe: forged lines refused, floods bounded ---------------------------------------------------------

_FIND_FD = """
import os, json, fcntl
def _reply_fd():
    for name in os.listdir('/proc/self/fd'):
        fd = int(name)
        try:
            if fd > 2 and os.readlink(f'/proc/self/fd/{fd}').startswith('pipe:') and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_WRONLY:
                return fd
        except OSError:
            pass
fd = _reply_fd()
"""


def test_a_forged_reply_is_refused_and_the_next_step_gets_its_own_output(interp):
    forge = _FIND_FD + ("os.write(fd, (json.dumps({'type': 'result', 'value': 'FORGED', 'stdout': 'FORGED'}) + '\\n')"
                        ".encode())\nos.write(fd, b'not json at all\\n')\nprint('the real output')")
    out = execute(interp, forge, {})
    assert out.startswith("the real output") and "FORGED" not in out, out
    assert "[refused]" in out and "reply to no pending request" in out, out
    assert execute(interp, "print('next step')", {}).strip() == "next step"


def _rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.parametrize("what", ["unterminated", "printed"])
def test_what_a_step_writes_holds_the_host_to_its_cap(interp, what):
    """768 MiB written to the reply pipe as one line, or 200 MiB printed: the host's memory grows by less than
    the stated cap (16 MiB) plus 64 MiB (before: +2.25 GiB for the line)."""
    code = (_FIND_FD + "chunk = b'x' * (1 << 20)\nfor i in range(768):\n    os.write(fd, chunk)\n"
                       "os.write(fd, b'\\n')\nprint('flooded')") if what == "unterminated" else \
        "print('y' * (200 << 20))\nprint('printed')"
    peak, stop = [_rss_mib()], threading.Event()
    base = peak[0]

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _rss_mib())
            time.sleep(0.005)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        out = execute(interp, code, {})
    finally:
        stop.set()
        sampler.join()
    assert peak[0] - base < 16 + 64, f"host grew by {peak[0] - base:.0f} MiB"
    if what == "unterminated":
        assert out.startswith("flooded") and "over the 8 MiB a reply may hold" in out, out[:300]
    else:
        assert "output cut" in out and out.endswith("are shown]"), out[-200:]
    assert _alive(interp)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # the process is still here to ask


# -- the worker is not the host's root ----------------------------------------------------------------------------

@pytest.mark.skipif(os.geteuid() != 0, reason="the host is not root: the worker is the host's own user already")
def test_files_the_step_creates_are_not_roots(interp):
    out = execute(interp, "import os\nopen('mine.txt', 'w').write('x')\nos.mkdir('dir1')\n"
                          "print(os.getuid(), os.geteuid(), os.getgid())", {})
    assert out.split() == ["65534"] * 3, out
    for name in ("mine.txt", "dir1"):
        st = (Path(interp.scratch_dir) / name).stat()
        assert st.st_uid != 0 and st.st_gid != 0, (name, st.st_uid)
    out = execute(interp, "import os, shutil\nfor f in (lambda: os.chmod('mine.txt', 0o4755), lambda: os.mkdir('g', 0o2775),\n"
                          "          lambda: os.open('s.bin', os.O_CREAT | os.O_WRONLY, 0o6755)):\n"
                          "    try:\n        f()\n    except OSError as e:\n        print(e)", {})
    assert out.count("Operation not permitted") == 3, out  # no setuid or setgid bit on a file the host holds
    for path in Path(interp.scratch_dir).rglob("*"):
        assert not path.lstat().st_mode & 0o6000, path
