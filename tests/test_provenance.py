"""Issue 30: a run directory says exactly what ran (provenance.json): every plug-in with its options, the LM
and its weights, the data files by sha256, the grammars sent, rlmlab's commit and the libraries' versions."""

from __future__ import annotations

import json
import subprocess
from types import SimpleNamespace

import pytest

from rlmlab import PROJECT_ROOT
from rlmlab.executors import TRAJECTORY_FILE, run_rlm
from rlmlab.experiments import run_experiment
from rlmlab.lm import make_lm
from rlmlab.provenance import PROVENANCE_FILE, file_sha256, lm_provenance
from helpers import sha256_of


def _constrainable():
    """A scripted LM that says it applies grammars, so the run takes the grammar path and sends them."""
    lm = make_lm("scripted:probe")
    lm.rlmlab_engine.supports_constraints = True
    return lm


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_an_experiment_run_directory_says_what_ran(tmp_path):
    run = run_experiment("E13", lm=_constrainable(), suite="arith", tasks=2, conditions=["grammar_templates"],
                         runs_dir=tmp_path, progress=False)
    prov = json.loads((run.run_dir / PROVENANCE_FILE).read_text())
    made = {(p["kind"], p["name"]) for p in prov["plugins"]}
    assert {("executor", "rlm"), ("backend", "threads"), ("judge", "numeric")} <= made
    assert all(isinstance(p["options"], dict) for p in prov["plugins"])
    files = {f["path"]: f for f in prov["files"]}
    tasks = PROJECT_ROOT / "data" / "tasks" / "arith.jsonl"
    pack = PROJECT_ROOT / "data" / "packs" / "step_templates.jsonl"
    assert files[str(tasks)]["sha256"] == sha256_of(tasks) and files[str(tasks)]["role"] == "tasks"
    assert files[str(pack)]["sha256"] == sha256_of(pack) and files[str(pack)]["role"] == "pack"
    assert prov["grammars"] and all(len(h) == 64 and n >= 1 for h, n in prov["grammars"].items())
    assert prov["lm"]["sampling"]["temperature"] == 0.0 and prov["lm"]["engine"]["class"] == "ScriptedEngine"
    assert prov["params"]["suite"] == "arith" and [c["name"] for c in prov["conditions"]] == ["grammar_templates"]
    assert prov["conditions"][0]["decoding"] == "grammar"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True)
    if head.returncode == 0:  # a checkout (an installed copy has no git)
        assert prov["environment"]["git_commit"] == head.stdout.strip()
        assert isinstance(prov["environment"]["git_dirty"], bool)
    assert prov["environment"]["libraries"]["dspy"]
    # one record per run: the tasks' trajectories inside it do not each carry one
    assert not list((run.run_dir / "trajectories").rglob(PROVENANCE_FILE))


def test_a_standalone_run_writes_its_own_provenance_beside_the_trajectory(tmp_path):
    traj = run_rlm("How many lines?", "a\nb\n", lm=_constrainable(), runs_dir=tmp_path, max_iters=2)
    where = tmp_path / traj.run_id
    prov = json.loads((where / PROVENANCE_FILE).read_text())
    assert (where / TRAJECTORY_FILE).is_file() and prov["run_id"] == traj.run_id
    assert prov["command"] == "run_rlm" and prov["options"]["max_iters"] == 2
    assert {(p["kind"], p["name"]) for p in prov["plugins"]} == {("sandbox", "confined")}  # the worker's confinement
    assert prov["grammars"] and prov["lm"]["model"] == "rlmlab/scripted"


def test_a_gguf_is_recorded_by_its_sha256_and_an_unreadable_file_by_its_error(tmp_path):
    weights = tmp_path / "tiny.gguf"
    weights.write_bytes(b"GGUF" + bytes(range(256)) * 4000)
    engine = SimpleNamespace(model_path=weights, n_ctx=8192, n_threads=2, seed=7, constraint_engine="llguidance")
    lm = SimpleNamespace(model="rlmlab/local/tiny", kwargs={"temperature": 0.7, "max_tokens": 256,
                                                          "api_key": "sk-secret"}, cache=False,
                         rlmlab_engine=engine)
    rec = lm_provenance(lm)
    assert rec["engine"]["gguf"] == {"path": str(weights), "bytes": weights.stat().st_size,
                                     "sha256": sha256_of(weights)}
    assert rec["engine"]["seed"] == 7 and rec["engine"]["constraint_engine"] == "llguidance"
    assert "api_key" not in rec["sampling"] and "sk-secret" not in json.dumps(rec)
    missing = file_sha256(tmp_path / "gone.gguf")
    assert "sha256" not in missing and missing["error"].startswith("FileNotFoundError")


def test_a_teach_run_folder_says_what_ran(tmp_path):
    from rlmlab.teach import RunConfig, run_teach

    config = RunConfig(demo_mode=False, provider="scripted:arith", limit=2, max_turns=1, modes=("reference",),
                       dataset=str(PROJECT_ROOT / "data" / "math20.csv"), traces_out=str(tmp_path / "t" / "traces.json"))
    run_teach(config)
    prov = json.loads((tmp_path / "t" / PROVENANCE_FILE).read_text())
    files = {f["path"]: f for f in prov["files"]}
    dataset = PROJECT_ROOT / "data" / "math20.csv"
    assert files[str(dataset)]["sha256"] == sha256_of(dataset) and files[str(dataset)]["role"] == "dataset"
    assert prov["command"] == "teach run" and prov["config"]["limit"] == 2
    assert prov["lm"]["model"] and prov["environment"]["python"]


@pytest.mark.slow
def test_experiment_rerun_runs_a_run_again_from_its_files_and_names_what_differs(tmp_path):
    """Issue 30: ``rlmlab experiment rerun RUN`` re-executes a run from config.json and provenance.json alone
    and compares per task; a differing environment (another commit, another data file) is named."""
    from click.testing import CliRunner

    from rlmlab.cli import main
    from rlmlab.errors import ConfigError
    from rlmlab.experiments import compare_runs, rerun_experiment

    first = run_experiment("E13", lm="scripted:probe", suite="arith", tasks=2, conditions=["grammar_templates"],
                           runs_dir=tmp_path / "a", progress=False)
    res = CliRunner().invoke(main, ["experiment", "rerun", str(first.run_dir), "--runs-dir", str(tmp_path / "b"),
                                    "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output[res.output.index("{"):])
    assert report["identical"] and len(report["rows"]) == 2 and report["differences"] == []
    assert {r["task_id"] for r in report["rows"]} == {r["task_id"] for r in
                                                     map(json.loads, (first.run_dir / "results.jsonl").open())}
    # the original recorded another commit and another tasks file: the comparison says so
    prov_path = first.run_dir / PROVENANCE_FILE
    prov = json.loads(prov_path.read_text())
    prov["environment"]["git_commit"] = "0" * 40
    prov["files"][-1]["sha256"] = "f" * 64
    prov_path.write_text(json.dumps(prov))
    [rerun_dir] = list((tmp_path / "b").iterdir())
    again = compare_runs(first.run_dir, rerun_dir)
    assert any(d.startswith("rlmlab commit: " + "0" * 40) for d in again.differences)
    assert any(prov["files"][-1]["path"] in d and "f" * 64 in d for d in again.differences)
    # a run whose tasks were passed in code cannot be rerun from its files, and says why in one line
    from rlmlab.memory import MemoryTask

    task = MemoryTask("t0", "What is 2 + 2?", "", None, 4, "numeric", {"suite": "arith", "level": 1})
    coded = run_experiment("E1", lm="scripted:probe", task_list=[task], runs_dir=tmp_path / "c", progress=False)
    with pytest.raises(ConfigError, match="passed in code"):
        rerun_experiment(coded.run_dir)


@pytest.mark.local_model
def test_a_seeded_embedded_model_run_reruns_to_identical_answers_and_records_its_gguf(tmp_path):
    """Issue 30's goal on the real model: temperature 0, the same seed, a run directory alone reproduces every
    answer and verdict; provenance.json names the GGUF by its sha256 and the grammars the steps sent."""
    from rlmlab.experiments import rerun_experiment
    from rlmlab.lm import default_gguf_path

    first = run_experiment("E13", lm="local", suite="arith", tasks=1, conditions=["grammar_templates"], max_iters=2,
                           runs_dir=tmp_path, progress=False)
    prov = json.loads((first.run_dir / PROVENANCE_FILE).read_text())
    assert prov["lm"]["engine"]["gguf"]["sha256"] == sha256_of(default_gguf_path())
    assert prov["grammars"] and prov["lm"]["engine"]["seed"] == 0
    report = rerun_experiment(first.run_dir, progress=False)
    assert report.rows and report.identical, report.rows
    assert report.differences == []


def test_a_runs_own_output_folder_does_not_make_the_tree_dirty(monkeypatch):
    """A scorecard writes scorecard.json inside the checkout; every row after the first was marked "+dirty" for
    the table's own file. Changes under the caller's output folders no longer count; any other change does."""
    import rlmlab.provenance as prov

    status = {"status": ' M studies/scorecard/scorecard.json\n?? "studies/scorecard/runs/E1 x/"'}
    monkeypatch.setattr(prov, "_git", lambda *args: status["status"] if args[0] == "status" else "abc123")
    out = prov.PROJECT_ROOT / "studies" / "scorecard"
    assert prov.environment()["git_dirty"] is True
    assert prov.environment(outputs=[out])["git_dirty"] is False
    assert prov.environment(outputs=["/somewhere/else"])["git_dirty"] is True
    status["status"] += "\n M rlmlab/provenance.py"
    assert prov.environment(outputs=[out])["git_dirty"] is True
