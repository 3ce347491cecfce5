"""From results to traces: an experiment run (scripted LM: one task passes, one fails, one errors, under two
conditions) in the run browser, the explorer opened on one task with the exact prompts, and `experiment show`."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from rlmlab.experiments import run_experiment
from rlmlab.lm import CALLS_FILE, make_lm, read_calls
from rlmlab.lm._scripts import output_fields
from rlmlab.memory import MemoryTask

BROKEN = "the model server went away"


def _script(messages):
    """Step 1 prints the context's length, step 2 SUBMITs "2"; the "breaks" task's first call raises."""
    fields = output_fields(messages)
    text = "\n".join(m["content"] for m in messages[1:])
    if not fields:
        return "[]"
    if "Which number breaks" in text:
        raise RuntimeError(BROKEN)
    step = "print(len(str(context)))"
    return {name: (step if step not in text else "SUBMIT(answer='2')") if name == "code" else "counting"
            for name in fields}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    meta = {"suite": "arith", "level": 1}
    tasks = [MemoryTask("two", "What is 1 + 1?", "one plus one", None, 2, "numeric", dict(meta)),
             MemoryTask("three", "What is 1 + 2?", "one plus two", None, 3, "numeric", dict(meta)),
             MemoryTask("broken", "Which number breaks the model?", "none", None, 1, "numeric", dict(meta))]
    run = run_experiment("E7", lm=make_lm("scripted", script=_script), task_list=tasks,
                         runs_dir=tmp_path_factory.mktemp("runs"), progress=False)
    return run.run_dir


@pytest.mark.slow
def test_every_agent_run_keeps_its_lm_calls_with_prompt_completion_and_step(run_dir):
    from rlmlab.executors import TRAJECTORY_FILE, Trajectory
    from rlmlab.experiments._runs import find_row, row_trajectory_dir

    where = row_trajectory_dir(run_dir, find_row(run_dir, "two", "handle"))
    traj = Trajectory.read_jsonl(where / TRAJECTORY_FILE)
    calls = read_calls(where / CALLS_FILE)
    assert [c.step for c in calls] == [1, 2] and [c.role for c in calls] == ["main", "main"]
    first, second = calls
    assert first.messages[0]["role"] == "system" and "Your input fields are" in first.messages[0]["content"]
    assert "What is 1 + 1?" in first.messages[-1]["content"]
    assert "print(len(str(context)))" in first.completion and "SUBMIT(answer='2')" in second.completion
    # the history the second call carries holds the first step's code: what "re-sending" means
    assert "print(len(str(context)))" in second.messages[-1]["content"]
    # the trajectory's per-step figures are these calls' own counts
    assert [it.input_tokens for it in traj.iterations] == [c.input_tokens for c in calls]
    assert sum(c.prompt_chars for c in calls) == sum(it.leakage.prompt_chars for it in traj.iterations)
    broken = read_calls(row_trajectory_dir(run_dir, find_row(run_dir, "broken", "naive")) / CALLS_FILE)
    assert len(broken) == 1 and broken[0].step is None and BROKEN in broken[0].error
    assert broken[0].completion is None and broken[0].messages  # what was sent is kept even when the call failed


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_explorer_opens_a_task_of_an_experiment_run_and_shows_its_prompts(run_dir):
    from rlmlab.jupyter import TrajectoryExplorer

    with pytest.raises(ValueError, match="experiment run .*give a task id.*RunBrowser"):
        TrajectoryExplorer(run_dir)
    with pytest.raises(ValueError, match=r"ran under 2 conditions \(naive, handle\)"):
        TrajectoryExplorer(run_dir, "two")
    with pytest.raises(ValueError, match="no task 'four'.*two, three, broken"):
        TrajectoryExplorer(run_dir, "four", condition="naive")
    explorer = TrajectoryExplorer(run_dir, "two", condition="handle")
    assert explorer.row["condition"] == "handle" and explorer.trajectory.answer == "2"
    assert "task <b>two</b>" in explorer.header.value and ">pass</b>" in explorer.header.value
    step = explorer.detail.value
    assert "rlmlab-lm-call" in step and "prompt sent: 2 messages" in step and "Your input fields are" in step
    assert "rlmlab-leakage" in step and "prompt tokens sent" in step  # the figures beside the calls
    explorer.next()
    assert "SUBMIT(answer=&#x27;2&#x27;)" in explorer.detail.value
    # how the figures relate: per iteration, and the run's totals against the trace budget
    assert "how the token figures relate" in explorer.header.value and "/ 8,000 budget" in explorer.header.value
    failed = TrajectoryExplorer(run_dir, "broken", condition="naive")
    assert ">error</b>" in failed.header.value and "LM calls outside any iteration (1)" in failed.final.value
    assert BROKEN in failed.final.value and "Which number breaks the model?" in failed.static_html()


def test_run_browser_filters_sorts_and_opens_a_row(run_dir):
    from rlmlab.experiments._runs import outcome
    from rlmlab.jupyter import RunBrowser

    browser = RunBrowser(run_dir)
    assert len(browser.rows) == 6 and browser.visible() == sorted(range(6), key=lambda i: (
        browser.rows[i]["condition"], browser.rows[i]["task_id"]))
    assert "prompt tokens sent" in browser.head.value and "95% CI (Wilson)" in browser.header.value
    assert "33%" in browser.header.value and "6–79%" in browser.header.value  # 1 of 3: Wilson 6% to 79%
    errors = browser.set_filter(outcome="error")
    assert [browser.rows[i]["task_id"] for i in errors] == ["broken", "broken"]
    assert all(BROKEN in label for label, _ in browser.table.options)
    browser.outcome_filter.value = "all"  # the toggle buttons drive the same filter
    browser.condition_filter.value = "naive"
    assert {browser.rows[i]["condition"] for i in browser.visible()} == {"naive"}
    browser.set_filter(condition="all", text="thr")
    assert [browser.rows[i]["task_id"] for i in browser.visible()] == ["three", "three"]
    browser.set_filter(text="")
    by_tokens = browser.sort("prompt tokens sent", descending=True)
    tokens = [browser.rows[i]["input_tokens"] for i in by_tokens]
    assert tokens == sorted(tokens, reverse=True) and tokens[-1] == 0
    with pytest.raises(ValueError, match="use one of"):
        browser.sort("nonsense")
    # selecting a row in the list opens its trajectory below
    row = next(i for i in browser.visible() if browser.rows[i]["task_id"] == "three")
    browser.table.value = row
    assert browser.selected == row and browser.explorer is not None
    assert browser.trace_box.children == (browser.explorer.view,)
    assert outcome(browser.rows[row]) == "fail" and "What is 1 + 2?" in browser.explorer.header.value
    static = browser.static_html()
    assert "<b>open</b>: " in static and "Your input fields are" in static and "rlmlab-runs-summary" in static
    assert browser.open("broken", "handle").trajectory.error and browser.rows[browser.selected]["task_id"] == "broken"
    browser.select(None)
    assert browser.explorer is None and browser.trace_box.children == ()


def test_a_filter_that_empties_the_list_closes_the_open_trajectory_and_says_so(run_dir):
    from rlmlab.jupyter import RunBrowser

    browser = RunBrowser(run_dir)
    browser.open("three", "handle")
    assert browser.explorer is not None
    assert browser.set_filter(text="no such task") == []
    assert browser.selected is None and browser.explorer is None and browser.table.value is None
    [message] = browser.trace_box.children
    assert "no row matches the filters: nothing is open" in message.value
    static = browser.static_html()
    assert "<b>open</b>" not in static and "What is 1 + 2?" not in static and "nothing is open" in static
    assert browser.open_first_failure() == "nothing open: no row matches the filters"
    # a filter that hides the open row closes it too; one that keeps it leaves it open
    browser.set_filter(text="")
    browser.open("three", "handle")
    browser.set_filter(condition="handle")
    assert browser.rows[browser.selected]["task_id"] == "three"
    browser.set_filter(text="two")
    assert browser.selected is None and browser.trace_box.children == ()


def test_open_first_failure_opens_a_row_that_did_not_pass_or_says_none_failed(run_dir):
    from rlmlab.jupyter import RunBrowser

    browser = RunBrowser(run_dir)
    said = browser.open_first_failure()
    assert said == "open: handle / broken (error)" and browser.explorer.trajectory.error
    browser.select(None)
    browser.set_filter(outcome="pass")
    said = browser.open_first_failure()
    assert said == "open: handle / two (pass); no failed row to pick: all 2 shown row(s) passed"
    assert browser.explorer.trajectory.answer == "2"


def test_the_displayed_static_form_follows_the_widget(run_dir, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display
    from IPython.utils.capture import capture_output

    from rlmlab.jupyter import RunBrowser
    from rlmlab.jupyter import _widget as widget_module

    shell = InteractiveShell.instance()
    try:
        browser = RunBrowser(run_dir)
        with capture_output() as shown:
            display(browser)
            browser.open("two", "naive")
        first, *updates = shown.outputs
        assert "<b>open</b>" not in first.data["text/html"] and not first.update
        assert updates and all(u.update and u.transient == first.transient for u in updates)
        assert "<b>open</b>: naive / two" in updates[-1].data["text/html"]
        assert updates[-1].data["application/vnd.jupyter.widget-view+json"]["model_id"] == browser.view.model_id
        # A click in the live view (a comm message) does not re-render the output at once: its static form
        # follows when the next cell runs.
        monkeypatch.setattr(widget_module, "_in_widget_event", lambda: True)
        with capture_output() as shown:
            browser.table.value = browser.visible()[0]
        assert shown.outputs == [] and browser in widget_module._PENDING
        monkeypatch.setattr(widget_module, "_in_widget_event", lambda: False)
        with capture_output() as shown:
            shell.run_cell("x = 1", store_history=False)
        [update] = shown.outputs
        assert update.update and update.transient == first.transient and "<b>open</b>" in update.data["text/html"]
        assert browser not in widget_module._PENDING
    finally:
        InteractiveShell.clear_instance()


@pytest.mark.slow
def test_experiment_show_prints_the_whole_table_and_a_task_with_its_prompts(run_dir):
    def show(*args):
        proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "experiment", "show", str(run_dir), *args],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    overview = show()
    assert "95% CI (Wilson)" in overview and "6–79%" in overview
    # piped output is laid out 200 columns wide: the error column is not cut to "…"
    assert f"LMUnexpectedError: [rlmlab/scripted] {BROKEN}" in overview and "…" not in overview
    detail = show("--task", "two", "--condition", "handle")
    assert "how the token figures relate" in detail and "prompt tokens sent" in detail
    assert "LM calls of iteration 1 (1)" in detail and "Your input fields are" in detail
    assert "SUBMIT(answer='2')" in detail and "── completion" in detail
    assert "Your input fields are" not in show("--task", "two", "--condition", "handle", "--no-prompts")
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "experiment", "show", str(run_dir), "--task", "two"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "say which with condition" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_tables_and_plots_show_readable_units_intervals_and_task_rows(run_dir):
    import matplotlib

    matplotlib.use("Agg")
    from rlmlab.experiments._report import plot_conditions, plot_tasks, results_table, task_table
    from rlmlab.experiments._runner import read_results, summarise, summary_table

    table = results_table(run_dir)
    text = repr(table)
    # time per task in seconds with one decimal; its value is wall-clock time (0.1 s unconfined, more when the
    # worker starts in the confined sandbox or the machine is loaded), never asserted
    assert "95% CI (Wilson)" in text and "6–79%" in text and "33%" in text and re.search(r"\b\d+\.\d s\b", text)
    assert "prompt tokens sent / task" in text and "mean_" not in text and "e+" not in text
    assert "prompt tokens sent / task" in table._repr_html_()
    tasks = repr(task_table(run_dir))
    assert tasks == repr(table.tasks()) and tasks.count("\n") == 6  # a header and one row per condition x task
    assert "error  0                   0                  0           1" in tasks and BROKEN in tasks
    rich_table = summary_table(summarise(read_results(run_dir / "results.jsonl")))
    assert [c.header for c in rich_table.columns][:3] == ["condition", "tasks", "pass rate"]
    assert "prompt tokens sent / task" in [c.header for c in rich_table.columns]
    fig = plot_conditions(run_dir, save_to=run_dir)
    quality, tokens, leakage, seconds = fig.axes
    assert quality.get_title() == "pass rate (95% Wilson interval)"
    assert any(getattr(c, "has_yerr", False) for c in quality.containers)  # the Wilson error bars
    assert [t.get_text() for t in quality.texts] == ["1/3", "1/3"]
    fig.canvas.draw()
    labels = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    assert "100%" in labels and any(x.endswith(" s") for x in labels) and not any("e+" in x for x in labels)
    assert (run_dir / "plots" / "conditions.png").stat().st_size > 5000
    grid = plot_tasks(run_dir).axes[0]
    assert [t.get_text() for t in grid.get_yticklabels()] == ["two", "three", "broken"]


def test_a_widgets_plain_text_form_is_its_content_not_the_box_repr(run_dir):
    # What `papermill --log-output`, `jupyter nbconvert --to markdown` and a terminal IPython print for a widget:
    # was "_Frame(children=(HTML(value='<style>\n.rlmlab-kernel-status ..." for every widget.
    from rlmlab.jupyter import RunBrowser, TrajectoryExplorer

    text = RunBrowser(run_dir)._repr_mimebundle_()["text/plain"]
    lines = text.splitlines()
    assert lines[0] == "RunBrowser" and not re.search(r"<[a-z/]|_Frame|&#x27;|&lt;", text), text
    assert any(line.startswith("naive 3 1 33%") for line in lines), text  # a table row on a line of its own
    for task in ("two", "three", "broken"):
        assert f"TrajectoryExplorer({str(run_dir)!r}, {task!r}, condition='naive')" in lines, text
    explorer = TrajectoryExplorer(run_dir, "two", condition="naive")._repr_mimebundle_()["text/plain"]
    assert explorer.startswith("TrajectoryExplorer\n") and "print(len(str(context)))" in explorer.splitlines()
