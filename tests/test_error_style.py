"""One error style however rlmlab is loaded, DSPy's warnings in the run record, public names in notebooks
(issue 28, item 8)."""

import ast
import json

import pytest

from rlmlab import PROJECT_ROOT
from rlmlab.executors import TRAJECTORY_FILE, Trajectory, run_rlm
from rlmlab.lm import make_lm

ONE_LINE = "ToolError: n: 99999 is out of range; allowed 0 to 2000"


@pytest.fixture
def plain_shell():
    """A plain IPython shell: no rlmlab extension loaded, no custom exception handler."""
    from IPython.core.interactiveshell import InteractiveShell

    instance = InteractiveShell.instance()
    assert instance.custom_exceptions == ()
    yield instance
    InteractiveShell.clear_instance()


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_tool_error_is_one_line_in_a_plain_ipython_shell(plain_shell):
    from IPython.utils.capture import capture_output

    from rlmlab.errors import ToolError

    plain_shell.run_cell("from rlmlab import blob, ctx_peek\nr = blob('abcdef')", store_history=False)
    with capture_output() as shown:
        result = plain_shell.run_cell("ctx_peek(r, 99999)", store_history=False)
    assert isinstance(result.error_in_exec, ToolError)
    assert shown.stdout.strip() == ONE_LINE
    with capture_output() as shown:  # another error keeps IPython's traceback
        plain_shell.run_cell("1 / 0", store_history=False)
    assert "Traceback" in shown.stdout and "ZeroDivisionError" in shown.stdout
    plain_shell.run_line_magic("xmode", "Verbose")  # asked for: the frames inside rlmlab
    try:
        with capture_output() as shown:
            plain_shell.run_cell("ctx_peek(r, 99999)", store_history=False)
        assert "Traceback" in shown.stdout and "check_range" in shown.stdout
    finally:
        plain_shell.run_line_magic("xmode", "Context")


@pytest.mark.slow
def test_a_tool_error_is_one_line_in_a_plain_python_jupyter_kernel():
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")  # ipykernel's own kernel, not the rlmlab one
    try:
        got = []
        reply = kc.execute_interactive("from rlmlab import blob, ctx_peek\nctx_peek(blob('abcdef'), 99999)",
                                       timeout=120, output_hook=got.append)
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "ToolError"
        (error,) = [m["content"] for m in got if m["msg_type"] == "error"]
        assert error["traceback"] == [ONE_LINE]
        assert not [m for m in got if m["msg_type"] == "stream" and m["content"]["name"] == "stderr"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_dspy_warnings_go_into_the_run_record_not_onto_stderr(tmp_path, capfd):
    lm = make_lm("scripted", script=[{"reasoning": "look", "code": "print(7)"}, {"reasoning": "x", "answer": "7"}])
    traj = run_rlm("q", "ctx", lm=lm, runs_dir=tmp_path, max_iters=1)  # DSPy warns: max iterations, extract
    assert "RLM reached max iterations" not in capfd.readouterr().err
    warning = "dspy WARNING dspy.predict.rlm: RLM reached max iterations, using extract to get final output"
    assert traj.answer == "7" and warning in traj.notes
    assert warning in Trajectory.read_jsonl(tmp_path / traj.run_id / TRAJECTORY_FILE).notes  # written with the run


def _private_imports(source: str) -> list[str]:
    """``from rlmlab.x._y import z``, ``import rlmlab._y`` and ``from rlmlab.x import _z`` in a code cell."""
    found = []
    if source.lstrip().startswith("%%"):  # a cell magic's body is not Python
        return found
    try:
        tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return [f"unparsable cell: {source[:60]!r}"]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rlmlab":
            names = [a.name for a in node.names]
            if any(p.startswith("_") for p in node.module.split(".")) or any(n.startswith("_") for n in names):
                found.append(f"from {node.module} import {', '.join(names)}")
        elif isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names
                      if a.name.split(".")[0] == "rlmlab" and any(p.startswith("_") for p in a.name.split("."))]
    return found


def test_notebooks_import_only_public_names():
    notebooks = sorted((PROJECT_ROOT / "notebooks").glob("*.ipynb"))
    assert len(notebooks) >= 3
    bad = {}
    for path in notebooks:
        cells = json.loads(path.read_text())["cells"]
        for i, cell in enumerate(cells):
            if cell["cell_type"] == "code":
                hits = _private_imports("".join(cell["source"]))
                if hits:
                    bad[f"{path.name} cell {i}"] = hits
    assert not bad, bad
    assert _private_imports("from rlmlab.experiments._runs import outcome\nimport rlmlab._figures")  # it can fail


def test_concurrent_runs_each_keep_their_own_dspy_warnings_and_nothing_is_lost(capfd):
    import logging
    import threading

    from rlmlab.executors._dspy_log import dspy_warnings

    import dspy  # noqa: F401  (DSPy's stderr handler is installed on import)

    log = logging.getLogger("dspy.predict.rlm")
    inside, done, got = threading.Barrier(3), threading.Barrier(3), {}

    def run(name: str) -> None:
        with dspy_warnings() as notes:
            inside.wait()
            log.warning("from %s", name)
            done.wait()
        got[name] = notes

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    inside.wait()
    log.warning("from no run")  # two runs going, neither on this thread: printed as without rlmlab
    done.wait()
    for t in threads:
        t.join()
    assert got == {n: [f"dspy WARNING dspy.predict.rlm: from {n}"] for n in ("a", "b")}
    err = capfd.readouterr().err
    assert "from no run" in err and "from a" not in err and "from b" not in err
