"""The tour notebook in a real browser: JupyterLab on loopback, Debian's Chromium driven by Playwright.

Opens ``notebooks/00_tour.ipynb`` (parameterised for the scripted models) on the rlmlab kernel with the Lab
settings ``rlmlab kernel install`` writes (the widget manager's saveState), runs all cells from the Run menu,
waits for each widget to render as a live ipywidget, clicks the stepper's next button, opens a task row of the
experiment in the run browser and its first LM call's prompt; then saves the notebook, shuts its kernel down,
reloads the page and checks that every widget renders again in its last state (no "model not found").
Screenshots go to ``runs/browser-check/`` (``shots.json`` there says what each one shows).
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rlmlab import PROJECT_ROOT
from rlmlab.jupyter import install_lab_settings

from browser_lab import LabServer, chromium_page, need_chromium

pytestmark = pytest.mark.browser

SHOTS = PROJECT_ROOT / "runs" / "browser-check"
# widget CSS class -> what its screenshot must show
WIDGETS = {
    "rlmlab-explorer": "trajectory explorer of the %%rlm run: iteration list, reasoning, code, output, leakage",
    "rlmlab-budget": "token-budget timeline of that run: stacked bars per iteration, budget line, legend",
    "rlmlab-turing-log": "Turing Protocol interaction log of the run, with filters",
    "rlmlab-oracle": "oracle view: claimed vs actual lines, false positives/negatives marked, verdict",
    "rlmlab-memory": "memory browser over the seed pack, searched for 'counting'",
    "rlmlab-stepper": "teacher-learner stepper",
    "rlmlab-runs": "run browser of the tour's E1 run: pass rate with its 95% Wilson interval, one row per task",
}
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
DISCONNECTED = "kernel not connected — run the cell to reconnect"  # what a widget with no kernel says (issue 28)


@contextmanager
def lab_server(root: Path, home: Path, settings: Path) -> Iterator[LabServer]:
    """JupyterLab serving ``root`` (its Jupyter folders under ``home``) with the Lab settings ``rlmlab kernel
    install`` writes, here into the throwaway folder ``settings``; stopped after."""
    install_lab_settings(settings)
    server = LabServer(root, home, app_settings=settings).start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def lab_page(server: LabServer, notebook: str) -> Iterator:
    """A Chromium page on ``notebook`` in the server's JupyterLab, once the notebook is shown."""
    with chromium_page() as page:
        page.goto(server.url(f"lab/tree/{notebook}"))
        page.wait_for_selector(".jp-Notebook", timeout=90_000)
        yield page


def run_all_cells(page) -> None:
    """Run > Run All Cells, from JupyterLab's menu."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()


@pytest.fixture
def lab(rlmlab_kernel, tmp_path, rust_file):
    need_chromium()
    root = tmp_path / "lab"
    root.mkdir()
    import papermill  # 0.5 s to import: only the tests that run a notebook pay it

    papermill.execute_notebook(str(PROJECT_ROOT / "notebooks" / "00_tour.ipynb"), str(root / "00_tour.ipynb"),
                               parameters={"lm": "scripted:probe", "learner_lm": "scripted:arith",
                                           "rust_source": str(rust_file), "runs_dir": str(tmp_path / "runs")},
                               prepare_only=True, kernel_name="rlmlab", progress_bar=False)
    with lab_server(root, tmp_path / "jupyter-home", tmp_path / "lab-settings") as server:
        yield server


def missing_children(path) -> set[str]:
    """Model ids that a saved widget's state refers to (children, layout, style) but the notebook did not save."""
    nb = json.loads(path.read_text())
    state = nb["metadata"].get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    refs = {v[len("IPY_MODEL_"):] for m in state.values() for value in m.get("state", {}).values()
            for v in (value if isinstance(value, list) else [value])
            if isinstance(v, str) and v.startswith("IPY_MODEL_")}
    return refs - set(state)


def saved_widget_state(path) -> tuple[set[str], set[str]]:
    """(model ids the notebook's outputs show, model ids whose state the notebook saved)."""
    nb = json.loads(path.read_text())
    shown = {o["data"]["application/vnd.jupyter.widget-view+json"]["model_id"] for c in nb["cells"]
             for o in c.get("outputs", []) if "application/vnd.jupyter.widget-view+json" in o.get("data", {})}
    saved = set(nb["metadata"].get("widgets", {}).get(WIDGET_STATE, {}).get("state", {}))
    return shown, saved


def test_tour_runs_in_jupyterlab_and_its_widgets_render_respond_and_survive_reopening(lab):
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    shots: dict[str, str] = {}

    def shoot(locator, name: str, what: str) -> None:
        path = SHOTS / f"{name}.png"
        locator.screenshot(path=str(path))
        assert path.stat().st_size > 5_000, f"{name}: screenshot is (nearly) blank"
        shots[path.name] = what

    with lab_page(lab, "00_tour.ipynb") as page:
        page.wait_for_selector("text=rlmlab | Idle", timeout=90_000)  # the notebook's kernel, started
        shoot(page, "00_opened", "the tour opened in JupyterLab on the rlmlab kernel, before running")
        run_all_cells(page)
        for css in WIDGETS:
            # .widget-vbox: the live ipywidget, not the static HTML form beside it in the bundle
            page.locator(f".jp-OutputArea .widget-vbox.{css}").first.wait_for(state="visible", timeout=240_000)
        page.wait_for_selector("text=rlmlab | Idle", timeout=120_000)
        errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")
        assert errors.count() == 0, errors.all_inner_texts()

        stepper = page.locator(".jp-OutputArea .widget-vbox.rlmlab-stepper").first
        stepper.scroll_into_view_if_needed()
        index = stepper.locator(".rlmlab-turn-index")
        before = index.inner_text()
        assert before.startswith("turn 1 of ")
        shoot(stepper, "stepper_turn1", WIDGETS["rlmlab-stepper"] + ": the first turn (q1, 2 + 2, right)")
        stepper.locator(".rlmlab-next").click()
        page.wait_for_function("([el, was]) => el.innerText !== was", arg=[index.element_handle(), before],
                               timeout=15_000)
        assert index.inner_text().startswith("turn 2 of ")
        assert "Answer: 401" in stepper.inner_text()  # the scripted learner's wrong first product
        shoot(stepper, "stepper_turn2", WIDGETS["rlmlab-stepper"] + ": after next ▶, turn 2 (q2, 401, wrong, "
              "devils_advocate_v1 sent)")

        explorer = page.locator(".jp-OutputArea .widget-vbox.rlmlab-explorer").first
        explorer.scroll_into_view_if_needed()
        assert "Find all async functions in this file" in explorer.inner_text()
        for css, what in WIDGETS.items():
            if css != "rlmlab-stepper":
                widget = page.locator(f".jp-OutputArea .widget-vbox.{css}").first
                widget.scroll_into_view_if_needed()
                shoot(widget, css.removeprefix("rlmlab-"), what)
        oracle = page.locator(".jp-OutputArea .widget-vbox.rlmlab-oracle").nth(1)  # the hand-written answer
        oracle.scroll_into_view_if_needed()
        assert "invented" in oracle.inner_text() and "HasFalsePositives" in oracle.inner_text()
        shoot(oracle, "oracle_by_hand", "oracle view of the hand-written answer: one invented line (FP), "
              "one missed (FN), verdict HasFalsePositives")

        # From results to traces: a task row of the run browser opens its trajectory, and a prompt in it.
        runs = page.locator(".jp-OutputArea .widget-vbox.rlmlab-runs").first
        runs.scroll_into_view_if_needed()
        assert "95% CI (Wilson)" in runs.inner_text() and "prompt tokens sent" in runs.inner_text()
        runs.locator(".rlmlab-runs-rows select").select_option(index=0)
        opened = runs.locator(".widget-vbox.rlmlab-explorer").first
        opened.wait_for(state="visible", timeout=60_000)
        assert "task " in opened.inner_text() and "condition main" in opened.inner_text()
        prompt = opened.locator("details.rlmlab-prompt").first
        prompt.locator("summary").click()
        message = prompt.locator("pre").first
        message.wait_for(state="visible", timeout=15_000)
        assert "Your input fields are" in message.inner_text()
        message.scroll_into_view_if_needed()
        shoot(runs, "run_browser_prompt", "run browser: the first task row selected, its trajectory opened "
              "below, and the exact prompt of its first LM call expanded beside the step's figures")

        # Save, shut the kernel down, reload: every widget comes back from the saved state in its last state.
        page.get_by_role("menuitem", name="File", exact=True).click()
        page.get_by_role("menuitem", name=re.compile(r"^Save Notebook(?! As)")).first.click()
        saved = lab.root / "00_tour.ipynb"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            shown, kept = saved_widget_state(saved)
            if kept and shown <= kept:
                break
            time.sleep(0.5)
        assert shown and shown <= kept, f"saved without the state of {len(shown - kept)} displayed widget(s)"
        assert not missing_children(saved), "saved widgets refer to models whose state was not saved"
        assert lab.shutdown_kernels() >= 1
        page.reload()
        page.wait_for_selector(".jp-Notebook", timeout=90_000)
        for css in WIDGETS:
            page.locator(f".jp-OutputArea .widget-vbox.{css}").first.wait_for(state="visible", timeout=120_000)
        assert page.get_by_text("model not found").count() == 0
        shoot(page, "reopened", "the saved tour reopened after its kernel was shut down: widgets render from "
              "the state saved in the notebook")
        stepper = page.locator(".jp-OutputArea .widget-vbox.rlmlab-stepper").first
        assert stepper.locator(".rlmlab-turn-index").inner_text().startswith("turn 2 of ")  # where it was left
        # ... and none of them pretends to be live: each says its kernel is gone (the cells have not run again)
        stepper.locator(".rlmlab-kernel-status").wait_for(state="visible", timeout=15_000)
        assert DISCONNECTED in stepper.inner_text()
        runs = page.locator(".jp-OutputArea .widget-vbox.rlmlab-runs").first
        opened = runs.locator(".widget-vbox.rlmlab-explorer").first
        opened.wait_for(state="visible", timeout=30_000)  # the row opened before saving is still open
        for css, what in WIDGETS.items():
            widget = page.locator(f".jp-OutputArea .widget-vbox.{css}").first
            widget.scroll_into_view_if_needed()
            assert widget.inner_text().strip()
            shoot(widget, f"reopened_{css.removeprefix('rlmlab-')}", f"after reopening: {what}"
                  + (" (turn 2, where the stepper was left)" if css == "rlmlab-stepper" else "")
                  + (" (the task row opened before saving is still open)" if css == "rlmlab-runs" else ""))
    (SHOTS / "shots.json").write_text(json.dumps({"taken": time.strftime("%Y-%m-%d %H:%M:%S"), "shots": shots},
                                                 indent=2, ensure_ascii=False))
    assert len(shots) == 2 * len(WIDGETS) + 5


@pytest.fixture
def executed_guide(rlmlab_kernel, tmp_path):
    """01_explore_traces executed by papermill (scripted model): its outputs and widget state saved, no kernel."""
    need_chromium()
    root = tmp_path / "lab"
    root.mkdir()
    import papermill  # 0.5 s to import: only the tests that run a notebook pay it

    papermill.execute_notebook(str(PROJECT_ROOT / "notebooks" / "01_explore_traces.ipynb"),
                               str(root / "01_explore_traces.ipynb"),
                               parameters={"lm": "scripted:probe", "runs_dir": str(tmp_path / "runs")},
                               kernel_name="rlmlab", cwd=str(tmp_path), progress_bar=False)
    shown, saved = saved_widget_state(root / "01_explore_traces.ipynb")
    assert shown and shown <= saved  # nbclient stores the widget state, as Lab's save does
    # Trusted, as a notebook the user saved in Lab is: an untrusted one shows the static HTML forms instead.
    import nbformat
    from nbformat.sign import NotebookNotary

    home = tmp_path / "jupyter-home"
    (home / "data").mkdir(parents=True)  # the server's JUPYTER_DATA_DIR (browser_lab), where trust is kept
    NotebookNotary(data_dir=str(home / "data")).sign(nbformat.read(str(root / "01_explore_traces.ipynb"), 4))
    with lab_server(root, home, tmp_path / "lab-settings") as server:
        yield server


def test_a_reopened_notebook_says_its_widgets_have_no_kernel_until_the_cell_runs_again(executed_guide):
    with lab_page(executed_guide, "01_explore_traces.ipynb") as page:
        runs = page.locator(".jp-OutputArea .widget-vbox.rlmlab-runs").first
        runs.wait_for(state="visible", timeout=120_000)  # drawn from the saved state
        status = runs.locator(".rlmlab-kernel-status")
        status.wait_for(state="visible", timeout=15_000)
        assert status.inner_text() == DISCONNECTED
        frames = page.locator(".jp-OutputArea .widget-vbox.rlmlab-frame")
        gone = page.locator(".rlmlab-frame.jupyter-widgets-disconnected")  # ipywidgets' class: no live comm
        assert frames.count() >= 4 and gone.count() == frames.count()
        greyed = runs.evaluate("el => [...el.children].map(c => [c.classList.contains('rlmlab-kernel-status'),"
                               " getComputedStyle(c).opacity])")
        assert all(float(o) < 1 for is_line, o in greyed if not is_line), greyed  # greyed, the line itself not
        status.scroll_into_view_if_needed()
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "reopened_disconnected_runs.png"))  # the line and the greyed browser

        # Running the cells again gives live widgets: no line, not greyed.
        page.wait_for_selector("text=rlmlab | Idle", timeout=90_000)
        run_all_cells(page)
        page.wait_for_function(
            "() => { const f = [...document.querySelectorAll('.jp-OutputArea .widget-vbox.rlmlab-frame')];"
            " return f.length >= 4 && f.every(e => !e.classList.contains('jupyter-widgets-disconnected')); }",
            timeout=180_000)
        page.wait_for_selector("text=rlmlab | Idle", timeout=120_000)
        assert page.locator(".rlmlab-kernel-status:visible").count() == 0
        live = page.locator(".jp-OutputArea .widget-vbox.rlmlab-runs").first
        live.locator(".rlmlab-runs-rows select").select_option(index=1)
        live.locator(".widget-vbox.rlmlab-explorer").first.wait_for(state="visible", timeout=60_000)


@pytest.fixture
def recursive_lab(rlmlab_kernel, tmp_path):
    """A notebook that makes a scripted depth-2 run (tests/recursive_runs.py: steps 1 and 2 each start a sub-run)
    and shows its explorer and budget timeline, served by JupyterLab, not yet run."""
    import nbformat

    need_chromium()
    root = tmp_path / "lab"
    root.mkdir()
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "rlmlab", "display_name": "rlmlab",
                                                           "language": "python"}})
    tests = PROJECT_ROOT / "tests"
    nb.cells = [nbformat.v4.new_code_cell(f"import sys\nsys.path.insert(0, {str(tests)!r})\n"
                                          "from recursive_runs import recursive_run\n"
                                          "from rlmlab.jupyter import BudgetTimeline, TrajectoryExplorer\n"
                                          f"traj = recursive_run({str(tmp_path / 'runs')!r})\n"
                                          "print('tree:', ' '.join(t.run_id for t in traj.walk()))"),
                nbformat.v4.new_code_cell(f"TrajectoryExplorer({str(tmp_path / 'runs')!r} + '/' + traj.run_id)"),
                nbformat.v4.new_code_cell("BudgetTimeline.from_trajectory(traj)")]
    nbformat.write(nb, root / "recursive.ipynb")
    with lab_server(root, tmp_path / "jupyter-home", tmp_path / "lab-settings") as server:
        yield server


def test_the_explorer_of_a_depth_2_run_shows_each_sub_run_under_the_step_that_started_it(recursive_lab):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with lab_page(recursive_lab, "recursive.ipynb") as page:
        page.wait_for_selector("text=rlmlab | Idle", timeout=90_000)
        run_all_cells(page)
        explorer = page.locator(".jp-OutputArea .widget-vbox.rlmlab-explorer").first
        explorer.wait_for(state="visible", timeout=240_000)
        page.wait_for_selector("text=rlmlab | Idle", timeout=120_000)
        errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")
        assert errors.count() == 0, errors.all_inner_texts()
        tree = page.get_by_text(re.compile(r"^tree: ")).first.inner_text().split()[1:]
        root_id, first, second = tree
        assert (first, second) == (f"{root_id}.1", f"{root_id}.2")
        explorer.scroll_into_view_if_needed()
        # the call tree in the header: each sub-run with its depth, answer, steps, tokens and seconds
        call_tree = explorer.locator("details.rlmlab-call-tree")
        assert re.search(rf"{re.escape(first)} · depth 1 · answer '7291' · 1 step · tokens [\d,]+ \+ [\d,]+ · "
                         r"\d+\.\d s", call_tree.inner_text())
        # step 1 (selected) holds its sub-run, collapsed; opened, the sub-run's own step, collapsed too
        step = explorer.locator(".rlmlab-step[data-iteration='1']").first
        child = step.locator(f"details.rlmlab-child[data-run-id='{first}'][data-parent-step='1']")
        assert child.count() == 1 and step.locator(f"details.rlmlab-child[data-run-id='{second}']").count() == 0
        summary = child.locator(":scope > summary")
        assert summary.inner_text().startswith(f"sub-run {first} · depth 1 · answer '7291'")
        sub_step = child.locator("details.rlmlab-child-step[data-iteration='1']")
        assert not sub_step.is_visible()
        summary.click()
        sub_step.wait_for(state="visible", timeout=15_000)
        sub_step.locator(":scope > summary").click()
        code = sub_step.locator(".rlmlab-code").first
        code.wait_for(state="visible", timeout=15_000)
        assert "ctx_find(context, 'vault code is" in code.inner_text()
        assert sub_step.locator(".rlmlab-lm-call").count() == 1  # the sub-run's own call, inside it
        step.locator("details.rlmlab-child").first.evaluate("el => el.parentElement.scrollIntoView()")
        page.screenshot(path=str(SHOTS / "explorer_depth2_step1.png"))  # step 1, its sub-run opened below
        # next ▶: step 2 holds the other sub-run
        explorer.get_by_role("button", name="next ▶").click()
        explorer.locator(f".rlmlab-step[data-iteration='2'] details.rlmlab-child[data-run-id='{second}']"
                         "[data-parent-step='2']").wait_for(state="attached", timeout=15_000)
        # the budget timeline stacks the tree by depth
        budget = page.locator(".jp-OutputArea .widget-vbox.rlmlab-budget").first
        budget.scroll_into_view_if_needed()
        assert budget.locator("rect.rlmlab-seg[data-kind='depth_1']").count() == 2
        assert "stacked by depth" in budget.inner_text()
        budget.screenshot(path=str(SHOTS / "budget_depth2.png"))
