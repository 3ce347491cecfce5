"""The user-guide notebooks (00_tour, 01_explore_traces, 02_teacher_learner) executed through papermill on the
rlmlab kernel with the scripted models, from a working directory outside the checkout."""

from __future__ import annotations

import json
import re
from pathlib import Path

import papermill
import pytest

from rlmlab import PROJECT_ROOT
from rlmlab.experiments import read_results
from rlmlab.experiments._notebooks import notebook_parameters
from rlmlab.teach import read_traces

pytestmark = pytest.mark.notebook

GUIDES = PROJECT_ROOT / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def execute(name: str, tmp_path: Path, **parameters) -> list[dict]:
    """Run one guide with ``parameters`` in ``tmp_path``; the executed cells (no cell may have failed)."""
    out = tmp_path / f"{name}.out.ipynb"
    papermill.execute_notebook(str(GUIDES / f"{name}.ipynb"), str(out), parameters=parameters, kernel_name="rlmlab",
                               cwd=str(tmp_path), progress_bar=False)
    cells = [c for c in json.loads(out.read_text())["cells"] if c["cell_type"] == "code"]
    assert not [o for c in cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    return cells


def html_of(cell: dict) -> str:
    return "".join("".join(o["data"]["text/html"]) for o in cell.get("outputs", [])
                   if "text/html" in o.get("data", {}))


def text_of(cell: dict) -> str:
    parts = []
    for o in cell.get("outputs", []):
        parts.append("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", "")))
    return "".join(parts)


def widgets(cells: list[dict]) -> dict[str, str]:
    """The static HTML of every widget output, by its CSS class (the widget's and the static form's)."""
    found: dict[str, str] = {}
    for c in cells:
        for o in c.get("outputs", []):
            data = o.get("data", {})
            if WIDGET_VIEW in data:
                html = "".join(data["text/html"])
                css = html.split("class='", 1)[1].split("'", 1)[0]
                found[css] = found.get(css, "") + html
    return found


def test_every_guide_has_a_literal_parameters_cell():
    for name, wanted in [("00_tour", {"lm", "learner_lm", "rust_source", "runs_dir"}),
                         ("01_explore_traces", {"lm", "experiment", "conditions", "suite", "tasks", "parity",
                                                "run_dir", "runs_dir", "fresh"}),
                         ("02_teacher_learner", {"learner_lm", "items", "mode", "max_turns", "run_dir"})]:
        params = notebook_parameters(GUIDES / f"{name}.ipynb")
        assert wanted <= params.keys(), name
        nb = json.loads((GUIDES / f"{name}.ipynb").read_text())
        assert nb["metadata"]["kernelspec"]["name"] == "rlmlab"


def test_tour_shows_handles_ast_query_a_checked_rlm_step_memory_and_the_stepper(rlmlab_kernel, tmp_path, rust_file):
    runs = tmp_path / "runs"
    cells = execute("00_tour", tmp_path, lm="scripted:probe", learner_lm="scripted:arith", runs_dir=str(runs),
                    rust_source=str(rust_file), teach_items=3)
    text = "\n".join(text_of(c) for c in cells)
    assert "ast_query(ref_or_path, query, k=20)" in text  # %rlmlab_tools
    assert "BlobRef(key='file.rs'" in text and "'total':" in text
    assert "'captures': {'name': 'open'}" in text  # %%ast_query: pub async fn open(...) is the first match
    found = widgets(cells)
    assert set(found) == {"rlmlab-explorer", "rlmlab-budget", "rlmlab-turing-log", "rlmlab-oracle", "rlmlab-memory",
                          "rlmlab-stepper", "rlmlab-runs"}
    assert "Find all async functions in this file" in found["rlmlab-explorer"]
    assert "rlmlab-lm-call" in found["rlmlab-explorer"]  # the %%rlm run's prompts, read from its lm_calls.jsonl
    # section 8: an experiment in the run browser
    assert "rlmlab-runs" in found and "95% CI (Wilson)" in found["rlmlab-runs"]
    [trajectory] = runs.glob("*/trajectory.jsonl")
    assert trajectory.parent.name in found["rlmlab-explorer"]
    assert "tokens" in found["rlmlab-budget"]
    assert (runs / "interaction_log.sqlite").is_file() and "post_inference" in found["rlmlab-turing-log"]
    # the agent's answer ("unknown") and the hand-written one with an invented line and a missed one
    assert found["rlmlab-oracle"].count("verdict:") == 2 and "async fn invented()" in found["rlmlab-oracle"]
    assert "✗ FP" in found["rlmlab-oracle"] and "○ FN" in found["rlmlab-oracle"]
    assert (runs / "memory.sqlite").is_file() and "rlmlab-memory" in found
    assert "turn 1 of 4" in found["rlmlab-stepper"] and "Answer: 401" in found["rlmlab-stepper"]


def test_explore_traces_opens_a_run_its_trajectory_oracle_check_and_memory(rlmlab_kernel, tmp_path):
    run_dir = tmp_path / "E6-guide"
    cells = execute("01_explore_traces", tmp_path, lm="scripted:probe", experiment="E6", conditions="", parity="",
                    tasks=2, run_dir=str(run_dir))
    rows = read_results(run_dir / "results.jsonl")
    assert [r["task_id"] for r in rows] == ["code-l1-01", "code-l2-01"]
    found = widgets(cells)
    assert {"rlmlab-runs", "rlmlab-budget", "rlmlab-oracle", "rlmlab-memory"} <= set(found)
    # The run browser's saved form is its last state: the row the next cell opened (the first that did not
    # pass), with that task's trajectory and the exact prompt of its first LM call.
    assert "<b>open</b>: main / code-l1-01" in found["rlmlab-runs"]
    assert "open: main / code-l1-01 (fail)\n" in "\n".join(text_of(c) for c in cells)
    assert rows[0]["trajectory_id"] in found["rlmlab-runs"]
    assert "What is the signature of set_len" in found["rlmlab-runs"] and "Your input fields are" in found["rlmlab-runs"]
    assert "95% CI (Wilson)" in found["rlmlab-runs"]
    assert "set_len" in found["rlmlab-oracle"] and "Failed" in found["rlmlab-oracle"]  # "unknown" is no signature
    assert (run_dir / "golden.jsonl").exists()
    assert "0 golden trace(s) written" in "\n".join(text_of(c) for c in cells)
    assert "13 items" in found["rlmlab-memory"]  # E6 seeds the bank from both packs


def test_explore_traces_says_so_when_no_row_failed(rlmlab_kernel, tmp_path):
    # scripted:solver computes "What is A op B?": the one arithmetic task passes, so there is no failed row
    run_dir = tmp_path / "E13-solved"
    cells = execute("01_explore_traces", tmp_path, lm="scripted:solver", suite="arith", tasks=1, parity="",
                    run_dir=str(run_dir))
    [row] = read_results(run_dir / "results.jsonl")
    text = "\n".join(text_of(c) for c in cells)
    assert (f"open: grammar_templates / {row['task_id']} (pass); no failed row to pick: all 1 shown row(s) passed"
            in text)
    assert f"<b>open</b>: grammar_templates / {row['task_id']}" in widgets(cells)["rlmlab-runs"]


def test_teacher_learner_guide_compares_arms_and_runs_a_live_turn(rlmlab_kernel, tmp_path):
    run_dir = tmp_path / "teach"
    cells = execute("02_teacher_learner", tmp_path, learner_lm="scripted:arith", items=6, run_dir=str(run_dir))
    rts = read_traces(run_dir / "traces.reference.rts.json")
    assert [t.qid for t in rts] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    # the scripted learner's first answer to 17 * 23 is 401; the teacher's reprompt gets 391
    q2 = rts[1]
    assert [t.answer.splitlines()[-1] for t in q2.turns] == ["Answer: 401", "Answer: 391"]
    assert q2.turns[0].template and q2.final_accuracy == 1
    found = widgets(cells)
    assert "rlmlab-stepper" in found and "401" in found["rlmlab-stepper"]
    text = "\n".join(text_of(c) for c in cells)
    assert "('q7', '" in text  # the live turn answered the first item after the loaded ones
    assert "14 item(s) to run live, q7 to q20" in text  # and more turns can run, to the dataset's end
    assert "single     accuracy 50%" in text and "rts        accuracy 100%" in text


def test_guides_as_shipped_write_their_runs_to_runs_home_from_any_folder(rlmlab_kernel, tmp_path, monkeypatch):
    # JupyterLab runs a guide in notebooks/; with no run_dir it writes where the CLI does (runs_home)
    shared = tmp_path / "shared-runs"
    monkeypatch.setenv("RLMLAB_RUNS_DIR", str(shared))
    (tmp_path / "notebooks").mkdir()
    execute("02_teacher_learner", tmp_path / "notebooks", learner_lm="scripted:arith", items=1)
    assert (shared / "teach-guide" / "traces.json").is_file()
    assert not (tmp_path / "notebooks" / "runs").exists()


PROGRESS = re.compile(r"^\[\d+/\d+\] ")


def progress_outputs(cells: list[dict]) -> list[str]:
    """The stream outputs that are progress lines ("[k/n] ..."), one output per message the kernel sent."""
    return ["".join(o["text"]) for c in cells for o in c.get("outputs", [])
            if o["output_type"] == "stream" and PROGRESS.match("".join(o["text"]))]


def assert_one_line_per_message(lines: list[str], expected: int) -> None:
    # Each line is its own stream message: flushed as its task ended, not held back until the cell's end.
    assert len(lines) == expected, lines
    assert all(text.count("\n") == 1 and text.endswith("\n") for text in lines), lines


def test_explore_traces_takes_papermill_strings_stores_run_dir_absolute_and_reuses_a_finished_run(
        rlmlab_kernel, tmp_path):
    # papermill -p conditions '["grammar_templates"]' passes a string; runs_dir is relative to the notebook's cwd
    params = dict(lm="scripted:probe", conditions='["grammar_templates"]', runs_dir="runs")
    cells = execute("01_explore_traces", tmp_path, **params)
    [run_dir] = (tmp_path / "runs").glob("E13-*")
    absolute = str(run_dir.resolve())
    text = "\n".join(text_of(c) for c in cells)
    assert f"run_dir = {absolute!r}" in text and "reusing" not in text
    # every path it prints is absolute: the golden traces' file and the memory bank too
    assert f"golden trace(s) written to {absolute}/golden.jsonl" in text
    assert f"{absolute}/memory.grammar_templates.sqlite" in widgets(cells)["rlmlab-memory"]
    rows = read_results(run_dir / "results.jsonl")
    assert [(r["condition"], r["task_id"]) for r in rows] == [("grammar_templates", "code-l1-02"),
                                                              ("grammar_templates", "code-l2-02")]
    lines = progress_outputs(cells)
    assert_one_line_per_message(lines, 2)
    assert lines[0].startswith("[1/2] E13 grammar_templates code-l1-02: ")
    # the executed notebook's run browser says how to open each row, with the absolute run_dir
    runs = widgets(cells)["rlmlab-runs"]
    for r in rows:
        code = f"TrajectoryExplorer({absolute!r}, {r['task_id']!r}, condition='grammar_templates')"
        assert code.replace("'", "&#x27;") in runs
    assert f"· {absolute}</div>" in runs
    # Run again as shipped (run_dir ""): the finished run is reopened, not run again; fresh=True runs a new one.
    again = execute("01_explore_traces", tmp_path, **params)
    said = "\n".join(text_of(c) for c in again)
    assert f"reusing {absolute}" in said and f"run_dir = {absolute!r}" in said and not progress_outputs(again)
    assert list((tmp_path / "runs").glob("E13-*")) == [run_dir]
    fresh = execute("01_explore_traces", tmp_path, fresh=True, **params)
    assert len(list((tmp_path / "runs").glob("E13-*"))) == 2 and len(progress_outputs(fresh)) == 2


def test_teacher_learner_guide_prints_a_line_per_item_and_arm(rlmlab_kernel, tmp_path):
    cells = execute("02_teacher_learner", tmp_path, learner_lm="scripted:arith", items=2, run_dir="teach")
    lines = progress_outputs(cells)
    assert_one_line_per_message(lines, 2 * 3)  # 2 items x 3 arms, one mode
    assert re.fullmatch(r"\[1/6\] reference/single q1: right after 1 turn, \d+\.\d s elapsed\n", lines[0])
    assert any(line.startswith("[6/6] reference/rts q2: right after 2 turns") for line in lines)  # 401, then 391
    assert (tmp_path / "teach" / "traces.json").is_file()  # a relative run_dir, under the notebook's folder
    again = execute("02_teacher_learner", tmp_path, learner_lm="scripted:arith", items=2, run_dir="teach")
    said = "\n".join(text_of(c) for c in again)
    assert f"reusing {(tmp_path / 'teach').resolve()}" in said and not progress_outputs(again)
    assert "rts        accuracy 100%" in said  # the comparison, read back from the run's files
    fresh = execute("02_teacher_learner", tmp_path, learner_lm="scripted:arith", items=2, run_dir="teach", fresh=True)
    assert len(progress_outputs(fresh)) == 6


# The guides as shipped run for minutes on the embedded model: benchmarks/guides.py runs and times them (make
# test's 15-minute budget); the scripted runs above check what they print, and tests/test_small_model.py
# runs E13's grammar_templates on the embedded model.


def test_experiment_notebooks_take_list_parameters_as_papermill_strings(rlmlab_kernel, tmp_path):
    # `-p conditions '["grammar_templates"]' -p levels 1,2`, as papermill's command line passes them: strings
    from rlmlab.experiments import run_notebook

    done = run_notebook("E13", {"lm": "scripted:probe", "suite": "arith", "tasks": 1,
                                "conditions": '["grammar_templates"]', "levels": "1,2"},
                        runs_dir=tmp_path, progress=False)
    rows = read_results(done.run_dir / "results.jsonl")
    assert {r["condition"] for r in rows} == {"grammar_templates"} and {r["level"] for r in rows} <= {1, 2}
    job = tmp_path / "main_job.out.ipynb"
    papermill.execute_notebook(str(GUIDES / "main_job.ipynb"), str(job), kernel_name="rlmlab", cwd=str(tmp_path),
                               progress_bar=False, parameters={
                                   "lm": "scripted:probe", "suite": "arith", "tasks": 1, "free_tasks": 1,
                                   "experiments": "E13", "conditions": "grammar,free", "learn_tasks": 0,
                                   "run_dir": str(tmp_path / "job")})
    ran = {r["condition"] for p in (tmp_path / "job").rglob("results.jsonl") for r in read_results(p)}
    assert ran == {"grammar", "free"}
