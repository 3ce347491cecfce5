"""The namespace everywhere: kernel spec, papermill on the rlmlab kernel, IPython extension, terminal REPL."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rlmlab.jupyter import install_kernel, kernel_spec

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def shell():
    """An IPython shell for one test (cleared after it, so the next test starts fresh)."""
    from IPython.core.interactiveshell import InteractiveShell

    instance = InteractiveShell.instance()
    yield instance
    InteractiveShell.clear_instance()


def test_repo_kernel_json_matches_installed_spec():
    assert json.loads((ROOT / "kernels/rlmlab/kernel.json").read_text()) == kernel_spec("python")


@pytest.fixture
def kernel_prefix(tmp_path, monkeypatch):
    path = install_kernel(prefix=str(tmp_path))
    spec = json.loads((Path(path) / "kernel.json").read_text())
    assert spec["argv"][0] == sys.executable and spec["display_name"] == "rlmlab"
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share" / "jupyter"))
    return tmp_path


@pytest.mark.notebook
def test_papermill_notebook_calls_ctx_peek_without_imports(kernel_prefix, tmp_path):
    import papermill as pm

    out = tmp_path / "out.ipynb"
    text = "pub async fn open() {}\n" * 3
    pm.execute_notebook(str(ROOT / "tests/data/ctx_peek_smoke.ipynb"), str(out), kernel_name="rlmlab",
                        parameters={"text": text, "n": 9}, progress_bar=False, cwd=str(tmp_path))
    nb = json.loads(out.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "rlmlab"
    streams = "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code"
                      for o in c.get("outputs", []) if o.get("output_type") == "stream")
    assert f"BlobRef(key='smoke', n={len(text)})" in streams and "pub async" in streams
    last = nb["cells"][-1]["outputs"][0]["data"]["text/plain"]
    assert "'preview': 'pub async'" in "".join(last)


@pytest.mark.slow
def test_ipython_extension_pushes_namespace_and_magic(shell):

    shell.run_line_magic("load_ext", "rlmlab")
    assert {"ctx_peek", "ctx_find", "blob", "BlobRef", "tools"} <= set(shell.user_ns)
    shell.run_cell("r = blob('abcdef'); p = ctx_peek(r, 3)", store_history=False)
    assert shell.user_ns["p"]["preview"] == "abc"
    listing = shell.run_line_magic("rlmlab_tools", "")
    assert any(line.startswith("ctx_peek(ref, n=200)") for line in repr(listing).splitlines())
    shell.run_line_magic("unload_ext", "rlmlab")
    assert "ctx_peek" not in shell.user_ns


def test_ast_query_magic_line_and_cell_forms(rust_file, shell):

    shell.run_line_magic("load_ext", "rlmlab")
    found = shell.run_line_magic("ast_query", f'"(struct_item name: (type_identifier) @name)" {rust_file}')
    assert [m["captures"]["name"] for m in found["matches"]] == ["File", "Inner"]
    shell.run_cell(f"src = blob(open({str(rust_file)!r}).read())", store_history=False)
    cell = shell.run_cell_magic("ast_query", "src -k 3", "(function_item\n  name: (identifier) @fn)")
    assert cell["total"] == 25 and len(cell["matches"]) == 3 and cell["truncated"]
    with pytest.raises(ValueError, match="usage"):
        shell.run_line_magic("ast_query", "src")


@pytest.mark.slow
def test_terminal_repl_runs_tools_and_lists_them(tmp_path):
    store = tmp_path / "blobs.sqlite"
    code = "r = blob('fn main() {}', name='m')\nctx_peek(r, 7)\ntools()\n"
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "repl", "--store", str(store)], input=code,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"preview\s+fn main\n", proc.stdout)  # the text as text, not a quoted repr
    assert "ctx_find(ref, pattern, k=20, ignore_case=False)" in proc.stdout
    # Handles survive in the SQLite file.
    proc2 = subprocess.run([sys.executable, "-m", "rlmlab.cli", "repl", "--store", str(store)],
                           input="ctx_stats('m')['length']\n", capture_output=True, text=True, timeout=60)
    assert "12" in proc2.stdout


@pytest.mark.slow
def test_kernel_install_cli(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "kernel", "install", "--prefix", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "share/jupyter/kernels/rlmlab/kernel.json").read_text())["argv"][0] == sys.executable


@pytest.mark.slow
def test_rlm_budget_and_turing_magics_run_a_task_and_show_the_widgets(rust_file, tmp_path, monkeypatch, shell):
    from IPython.utils.capture import capture_output

    from rlmlab.jupyter import BudgetTimeline, InteractionLogView, TrajectoryExplorer
    from rlmlab.jupyter._budget import header_html, timeline_bars, timeline_svg

    # Every event a live timeline receives, with whether the %%rlm run had returned by then (rlm_last is set
    # only after it returns): a check on order, not on timing.
    received = []
    on_event = BudgetTimeline._on_event

    def spy(self, event):
        received.append((self, event, shell.user_ns.get("rlm_last")))
        on_event(self, event)

    monkeypatch.setattr(BudgetTimeline, "_on_event", spy)
    shell.run_line_magic("load_ext", "rlmlab")
    assert shell.run_line_magic("turing", "") == "Turing Protocol on for %%rlm"
    assert shell.run_line_magic("turing", "off") == "Turing Protocol off for %%rlm"
    with pytest.raises(ValueError, match="no run yet"):
        shell.run_line_magic("budget", "")
    shell.run_cell(f"src = blob(open({str(rust_file)!r}).read())", store_history=False)
    with capture_output() as shown:
        explorer = shell.run_cell_magic("rlm", f"--lm scripted:probe --context src --runs-dir {tmp_path}",
                                        "How many pub async fn are there?")
    assert isinstance(explorer, TrajectoryExplorer)
    traj = shell.user_ns["rlm_last"]
    assert len(traj.iterations) == 2 and traj.answer == "unknown"
    # The live timeline was displayed before the run (an empty chart), followed the run's own trace while
    # it ran, and was then closed and its output replaced by the final state.
    live, final = shown.outputs
    assert "application/vnd.jupyter.widget-view+json" in live.data and not live.update
    assert "no events logged yet" in live.data["text/html"] and "rlmlab-budget" in live.data["text/html"]
    assert final.update and final.transient == live.transient
    timeline = received[0][0]
    assert timeline.trace is traj.context_trace and not timeline.live
    assert [(t, e, done) for t, e, done in received] == [(timeline, e, None) for e in traj.context_trace]
    summary = traj.context_trace.summary()
    assert summary.events_logged == len(received) and summary.budget_tokens == 8000
    assert timeline.header.value == header_html(summary)
    assert timeline.chart.value == timeline_svg(timeline_bars(traj.context_trace), 8000)
    assert "no events logged yet" not in final.data["text/html"] and "rlmlab-seg" in final.data["text/html"]
    # --no-live displays nothing and subscribes nothing; --trace-budget sizes the run's trace.
    received.clear()
    with capture_output() as shown:
        shell.run_cell_magic("rlm", f"--lm scripted:probe --context src --runs-dir {tmp_path} --no-live "
                             "--trace-budget 500", "How many pub async fn are there?")
    assert shown.outputs == [] and received == []
    assert shell.user_ns["rlm_last"].context_trace.budget_tokens == 500
    traj = shell.user_ns["rlm_last"]
    assert (tmp_path / traj.run_id / "trajectory.jsonl").exists()
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "How many pub async fn" in bundle["text/html"]
    timeline = shell.run_line_magic("budget", "")
    assert isinstance(timeline, BudgetTimeline) and timeline.trace is traj.context_trace
    assert isinstance(shell.run_line_magic("budget", str(tmp_path / traj.run_id)), BudgetTimeline)
    with pytest.raises(ValueError, match="--trace-budget 0; must be a positive"):
        shell.run_cell_magic("rlm", "--lm scripted:probe --trace-budget 0", "q")
    with pytest.raises(ValueError, match="neither a namespace variable nor a file"):
        shell.run_cell_magic("rlm", "--lm scripted:probe --context nope", "q")
    with pytest.raises(ValueError, match="usage: %turing on"):
        shell.run_line_magic("turing", "maybe")
    # %turing log: nothing checked yet; with the protocol on, each round of the run lands in the log
    with pytest.raises(ValueError, match="no checked run yet"):
        shell.run_line_magic("turing", "log")
    shell.run_line_magic("turing", "on")
    shell.run_cell_magic("rlm", f"--lm scripted:probe --context src --runs-dir {tmp_path} --no-live",
                         "How many pub async fn are there?")
    checked = shell.user_ns["rlm_last"]
    view = shell.run_line_magic("turing", "log")
    assert isinstance(view, InteractionLogView) and view.db_path == tmp_path / "interaction_log.sqlite"
    assert view.all_rounds and {r["session"] for r in view.all_rounds} == {checked.run_id}
    assert isinstance(shell.run_line_magic("turing", f"log {view.db_path}"), InteractionLogView)


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_magic_and_tool_errors_show_one_line_and_xmode_verbose_the_traceback(shell):
    from IPython.utils.capture import capture_output

    from rlmlab.errors import ToolError
    from rlmlab.jupyter._extension import MagicError

    shell.run_line_magic("load_ext", "rlmlab")
    shell.run_cell("r = blob('abcdef')", store_history=False)
    with capture_output() as shown:
        result = shell.run_cell("ctx_peek(r, 99999)", store_history=False)
    assert isinstance(result.error_in_exec, ToolError)
    assert shown.stdout.strip() == "ToolError: n: 99999 is out of range; allowed 0 to 2000"
    with capture_output() as shown:
        result = shell.run_cell("%turing maybe", store_history=False)
    assert isinstance(result.error_in_exec, MagicError)
    assert shown.stdout.strip() == "MagicError: %turing: usage: %turing on|off, or %turing log [PATH]"
    with capture_output() as shown:  # a plain Python error keeps IPython's traceback
        shell.run_cell("1 / 0", store_history=False)
    assert "ZeroDivisionError" in shown.stdout and "Traceback" in shown.stdout
    shell.run_line_magic("xmode", "Verbose")
    with capture_output() as shown:
        shell.run_cell("ctx_peek(r, 99999)", store_history=False)
    assert "Traceback" in shown.stdout and "check_range" in shown.stdout  # the frames inside rlmlab
    shell.run_line_magic("xmode", "Context")
    shell.run_line_magic("unload_ext", "rlmlab")
    assert shell.custom_exceptions == ()


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_an_rlm_cell_whose_lm_calls_all_failed_fails_with_one_line(tmp_path, shell):
    from IPython.utils.capture import capture_output

    from rlmlab.jupyter._extension import RunFailed

    shell.run_line_magic("load_ext", "rlmlab")
    shell.run_line_magic("turing", "off")
    with capture_output() as shown:
        result = shell.run_cell(f"%%rlm --lm scripted:fail --runs-dir {tmp_path}\nHow many lines?",
                                store_history=False)
    assert isinstance(result.error_in_exec, RunFailed)
    assert shown.stdout.strip().startswith("RunFailed: %%rlm: every LM call failed (1 of 1): ")
    assert "scripted:fail" in shown.stdout and "Traceback" not in shown.stdout and shown.stdout.count("\n") == 1
    # the live timeline's output is replaced by the failure, not left as an empty chart
    live, *_, final = shown.outputs
    assert final.update and final.transient == live.transient
    assert "rlmlab-failed" in final.data["text/html"] and "application/vnd.jupyter.widget-view+json" not in final.data
    assert shell.user_ns["rlm_last"].error and not shell.user_ns["rlm_last"].iterations
    with capture_output() as shown:
        shell.run_cell(f"%%rlm --lm scripted:fail --runs-dir {tmp_path} --no-live --traceback\nq",
                       store_history=False)
    assert "RunFailed" in shown.stdout and "Traceback" in shown.stdout
    with capture_output() as shown:
        shell.run_cell("%%rlm --lm nosuchprovider\nq", store_history=False)
    assert shown.stdout.strip().startswith("MagicError: %%rlm: --lm nosuchprovider: LM spec 'nosuchprovider'")


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_terminal_repl_shows_a_tool_error_in_one_line(tmp_path):
    code = "r = blob('abc')\nctx_peek(r, 99999)\n1/0\ntraceback()\n"
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "repl"], input=code, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first, _, rest = proc.stderr.partition("ToolError: n: 99999 is out of range; allowed 0 to 2000\n")
    assert _ and "Traceback" not in first  # one line, no frames before it
    assert "ZeroDivisionError" in rest and rest.count("Traceback") == 2  # 1/0 as usual; traceback() shows the last


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_kernel_install_turns_on_lab_widget_state_and_keeps_other_overrides(tmp_path):
    from rlmlab.jupyter import install_lab_settings
    from rlmlab.jupyter._kernelspec import LAB_OVERRIDES, lab_settings_dir

    overrides = lab_settings_dir(str(tmp_path)) / "overrides.json"
    overrides.parent.mkdir(parents=True)
    theirs = {"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"},
              "@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": False, "other": 1}}
    overrides.write_text(json.dumps(theirs))
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "kernel", "install", "--prefix", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "saves widget state" in proc.stdout and str(overrides) in proc.stdout
    assert json.loads(overrides.read_text()) == {
        "@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"},
        "@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": True, "other": 1}}
    fresh = install_lab_settings(tmp_path / "elsewhere")
    assert json.loads(fresh.read_text()) == LAB_OVERRIDES
    overrides.write_text("// a comment\n{}")
    with pytest.raises(ValueError, match="not JSON"):
        install_lab_settings(overrides.parent)
    assert overrides.read_text() == "// a comment\n{}"
