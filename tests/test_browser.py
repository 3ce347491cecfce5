"""The tour notebook in a real browser: JupyterLab on loopback, Debian's Chromium driven by Playwright.

Opens ``notebooks/00_tour.ipynb`` (parameterised for the scripted models) on the rlmlab kernel, runs all cells
from the Run menu, waits for each widget to render as a live ipywidget, clicks the stepper's next button,
and saves screenshots under ``runs/browser-check/`` (``shots.json`` there says what each one shows).
"""

from __future__ import annotations

import json
import shutil
import time

import papermill
import pytest

from rlmlab import PROJECT_ROOT

from browser_lab import CHROMIUM, CHROMIUM_ARGS, LabServer

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
}


@pytest.fixture
def lab(rlmlab_kernel, tmp_path, rust_file):
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium (apt-get install chromium)")
    root = tmp_path / "lab"
    root.mkdir()
    papermill.execute_notebook(str(PROJECT_ROOT / "notebooks" / "00_tour.ipynb"), str(root / "00_tour.ipynb"),
                               parameters={"lm": "scripted:probe", "learner_lm": "scripted:arith",
                                           "rust_source": str(rust_file), "runs_dir": str(tmp_path / "runs")},
                               prepare_only=True, kernel_name="rlmlab", progress_bar=False)
    server = LabServer(root, tmp_path / "jupyter-home").start()
    yield server
    server.stop()


def test_tour_runs_in_jupyterlab_and_its_widgets_render_and_respond(lab):
    from playwright.sync_api import sync_playwright

    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    shots: dict[str, str] = {}

    def shoot(locator, name: str, what: str) -> None:
        path = SHOTS / f"{name}.png"
        locator.screenshot(path=str(path))
        assert path.stat().st_size > 5_000, f"{name}: screenshot is (nearly) blank"
        shots[path.name] = what

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(lab.url("lab/tree/00_tour.ipynb"))
            page.wait_for_selector(".jp-Notebook", timeout=90_000)
            page.wait_for_selector("text=rlmlab | Idle", timeout=90_000)  # the notebook's kernel, started
            shoot(page, "00_opened", "the tour opened in JupyterLab on the rlmlab kernel, before running")
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
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
        finally:
            browser.close()
    (SHOTS / "shots.json").write_text(json.dumps({"taken": time.strftime("%Y-%m-%d %H:%M:%S"), "shots": shots},
                                                 indent=2, ensure_ascii=False))
    assert len(shots) == 9
