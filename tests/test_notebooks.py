"""Every experiment notebook executed through papermill on the rlmlab kernel, with the scripted probe agent
and tiny parameters; each must leave its results file, the table and the plots behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlmlab.errors import ConfigError
from rlmlab.experiments import load_experiment, read_results
from rlmlab.experiments._notebooks import (
    FAMILIES, MAIN_JOB, NOTEBOOKS_DIR, NotebookFailed, notebook_for, notebook_parameters, run_notebook,
)

pytestmark = pytest.mark.notebook


@pytest.fixture
def kernel(rlmlab_kernel):
    return rlmlab_kernel


def outputs(nb_path: Path) -> list[dict]:
    nb = json.loads(nb_path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "rlmlab"
    return [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]


def test_every_notebook_has_a_literal_parameters_cell_and_every_experiment_a_notebook():
    files = sorted(p.name for p in [*NOTEBOOKS_DIR.glob("exp_*.ipynb"), NOTEBOOKS_DIR / MAIN_JOB])
    assert files == sorted([*FAMILIES, MAIN_JOB])
    for name in files:
        params = notebook_parameters(NOTEBOOKS_DIR / name)
        assert {"lm", "suite", "tasks", "run_dir"} <= params.keys(), name
    assert {e for ids in FAMILIES.values() for e in ids} == {f"E{i}" for i in range(1, 16)}
    for ids in FAMILIES.values():
        for e in ids:
            load_experiment(e)
    assert notebook_for("e7").name == "exp_prompt_leakage.ipynb"
    with pytest.raises(ConfigError, match="no notebook; known: E1"):
        notebook_for("E99")


# E14 runs a stream and a test split per suite from task files, E15 generates its tasks per size: their own tests
@pytest.mark.parametrize("experiment", [ids[-1] for ids in FAMILIES.values() if ids not in (("E14",), ("E15",))])
def test_family_notebook_runs_with_the_scripted_agent_and_writes_results_table_and_plots(kernel, tmp_path, experiment):
    done = run_notebook(experiment, {"lm": "scripted:probe", "tasks": 2}, runs_dir=tmp_path, progress=False)
    assert done.notebook.parent == done.run_dir and done.notebook.exists()
    config = load_experiment(experiment)
    rows = read_results(done.run_dir / "results.jsonl")
    suites = len(notebook_parameters(notebook_for(experiment))["suite"].split(","))
    expected = sum(2 * suites * c.runs_per_task for c in config.conditions)
    assert len(rows) == expected and {r["experiment"] for r in rows} == {experiment}
    assert {r["condition"] for r in rows} == {c.name for c in config.conditions}
    assert all(r["lm"] == "scripted:probe" and r["input_tokens"] > 0 for r in rows)
    outs = outputs(done.notebook)
    html = "".join("".join(o["data"]["text/html"]) for o in outs if "text/html" in o.get("data", {}))
    assert "rlmlab-results" in html and all(c.name in html for c in config.conditions)
    assert sum("image/png" in o.get("data", {}) for o in outs) >= 1
    assert (done.run_dir / "plots" / "conditions.png").stat().st_size > 5000
    assert not [o for o in outs if o["output_type"] == "error"]


def test_the_learning_notebook_runs_e14_stream_and_frozen_test_and_plots_the_curves(kernel, tmp_path):
    data = tmp_path / "tasks"
    data.mkdir()
    for split, pairs in (("train", [(2, 3), (40, 2), (7, 7), (15, 4)]), ("test", [(9, 9), (12, 30)])):
        lines = [{"id": f"{split}-{a}-{b}", "suite": "arith", "level": 1, "query": f"What is {a} + {b}?",
                  "checker": "numeric", "expected": str(a + b), "kind": "bare_add"} for a, b in pairs]
        (data / f"arith_{split}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = run_notebook("E14", {"lm": "scripted:solver", "suite": "arith", "tasks": 4, "data_dir": str(data),
                                "conditions": ["no_memory", "learned"]}, runs_dir=tmp_path, progress=False)
    rows = read_results(done.run_dir / "arith" / "results.jsonl")
    assert {(r["condition"], r["phase"]) for r in rows} == {(c, p) for c in ("no_memory", "learned")
                                                           for p in ("stream", "test")}
    assert [r["task_id"] for r in rows if r["phase"] == "test" and r["condition"] == "learned"] == [
        "test-9-9", "test-12-30"]
    summary = json.loads((done.run_dir / "arith" / "summary.json").read_text())
    assert summary["learned"]["bank"]["templates"] >= 1 and summary["learned"]["test"]["tasks"] == 2
    assert (done.run_dir / "plots" / "learning.png").stat().st_size > 5000
    outs = outputs(done.notebook)
    assert not [o for o in outs if o["output_type"] == "error"]
    text = "".join("".join(o.get("text", "")) for o in outs)
    assert "arith learned: curve 100" in text and "test 2/2" in text


def test_the_long_context_notebook_generates_tasks_per_size_and_plots_accuracy_and_cost(kernel, tmp_path):
    done = run_notebook("E15", {"lm": "scripted:probe", "tasks": 1, "sizes": [1000, 2000], "max_depth": 2},
                        runs_dir=tmp_path, progress=False)
    doc = json.loads((done.run_dir / "e15.json").read_text())
    assert [(r["size_tokens"], r["condition"]) for r in doc["rows"]] == [
        (s, c) for s in (1000, 2000) for c in ("direct", "rlm_d1", "rlm_d2")]
    assert all(r["n"] == 1 and r["prompt_tokens"] > 0 and r["cost"] == 0 for r in doc["rows"])
    assert {(c["a"], c["b"]) for c in doc["comparisons"]} == {("rlm_d1", "direct"), ("rlm_d2", "direct"),
                                                              ("rlm_d2", "rlm_d1")}
    assert (done.run_dir / "plots" / "e15_needle.png").stat().st_size > 5000
    assert len(list((done.run_dir / "tasks" / "needle-2000" / "docs").glob("*.txt"))) == 1
    assert not [o for o in outputs(done.notebook) if o["output_type"] == "error"]


def test_main_job_notebook_runs_every_experiment_over_both_suites(kernel, tmp_path):
    done = run_notebook(MAIN_JOB, {"lm": "scripted:probe", "tasks": 1, "experiments": ["E1", "E7"],
                                   "suite": "code,ontology", "levels": None, "parity": None, "learn_tasks": 0},
                        runs_dir=tmp_path, progress=False)
    e1 = read_results(done.run_dir / "E1" / "results.jsonl")
    e7 = read_results(done.run_dir / "E7" / "results.jsonl")
    assert [r["suite"] for r in e1] == ["code", "ontology"] and len(e7) == 4
    html = "".join("".join(o["data"]["text/html"]) for o in outputs(done.notebook) if "text/html" in o.get("data", {}))
    assert "E7 / naive · ontology" in html and "E1 / main · code" in html
    assert (done.run_dir / "plots" / "main_job.png").exists()


def test_cli_notebook_command_and_its_errors(kernel, tmp_path):
    cmd = [sys.executable, "-m", "rlmlab.cli", "experiment", "notebook", "E1", "-p", "lm", "scripted:probe",
           "-p", "tasks", "1", "-p", "suite", "ontology", "--runs-dir", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    run_dir = Path(proc.stdout.split("results:")[1].split()[0])
    assert (run_dir / "exp_layer_ablation.ipynb").exists()
    assert [r["suite"] for r in read_results(run_dir / "results.jsonl")] == ["ontology"]
    bad = subprocess.run(cmd[:6] + ["-p", "lmm", "x", "--runs-dir", str(tmp_path)], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode != 0 and "unknown parameter(s) ['lmm']" in bad.stderr and "'lm'" in bad.stderr


def test_a_failing_cell_names_the_error_and_keeps_the_executed_notebook(kernel, tmp_path):
    with pytest.raises(NotebookFailed, match=r"suite: unknown 'nope'") as err:
        run_notebook("E1", {"lm": "scripted:probe", "suite": "nope"}, runs_dir=tmp_path, progress=False)
    kept = Path(str(err.value).rsplit(" is ", 1)[1])
    assert kept.exists() and any(o["output_type"] == "error" for o in outputs(kept))


def test_demo_command_runs_the_main_job_notebook_and_prints_where_it_is(kernel, tmp_path):
    """`make demo` runs `rlmlab demo` on the local model; here the same path with the scripted agent."""
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "demo", "--lm", "scripted:probe", "--tasks", "1",
                           "--learn-tasks", "2", "--runs-dir", str(tmp_path)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    # the notebook's progress lines stream to the terminal: held-out (even-numbered) level-1 tasks, 3 suites
    assert "[3/3] E13 grammar_templates arith-math20-q3" in out and "E13 free code-l1-02" in out
    assert "E13 free onto-l1-02" not in out
    notebook = Path(out.split("executed notebook: ")[1].split()[0])
    assert notebook.name == "main_job.ipynb" and notebook.exists()
    # the free baseline runs on --free-tasks (default 1) of the first --free-suites (default 1), in a run of its own
    rows = read_results(notebook.parent / "E13" / "results.jsonl")
    free = read_results(notebook.parent / "E13-free" / "results.jsonl")
    assert {r["condition"] for r in rows} == {"grammar_templates"} and {r["condition"] for r in free} == {"free"}
    assert {r["task_id"] for r in rows} == {"code-l1-02", "onto-l1-02", "arith-math20-q3"}
    assert {r["task_id"] for r in free} == {"code-l1-02"}
    assert str(notebook.parent / "E13" / "results.jsonl") in out and str(notebook.parent / "E13-free") in out
    table = out.split("executed notebook:")[0]
    # the summary, a line per run and condition
    assert "\nE13-free / free " in table and "\nE13 / grammar_templates " in table and "off-format" in table
    html = "".join("".join(o["data"]["text/html"]) for o in outputs(notebook) if "text/html" in o.get("data", {}))
    assert "rlmlab-per-task" in html and "arith-math20-q3" in html
    # learning from scratch: the held-out test before (empty bank) and after a 2-task stream, bank frozen both times
    before = read_results(notebook.parent / "E14-before" / "results.jsonl")
    after = read_results(notebook.parent / "E14" / "results.jsonl")
    assert [r["phase"] for r in before] == ["test"] * 3
    assert [r["phase"] for r in after if r["best"]] == ["stream"] * 2 + ["test"] * 3
    assert [r["task_id"] for r in before] == [r["task_id"] for r in after if r["phase"] == "test"]
    assert "E14-before: learned: curve" in out and "E14: learned: curve" in out
    assert (notebook.parent / "plots" / "learning_demo.png").exists()
