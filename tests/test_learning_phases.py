"""Learning runs (E14's plumbing) with the scripted LM: the frozen test phase writes nothing to memory and keeps the
file's task ids; exploration stops at the first accepted sample and reports pass@N per kind; a key-free judge
decides learning while rows are scored by the answer key."""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from rlmlab.cli import main
from rlmlab.errors import ConfigError
from rlmlab.experiments import learning_curve, load_experiment, read_results, run_experiment
from rlmlab.memory import MemoryTask
from helpers import answer_lm, experiment_file


def _arith(task_id: str, query: str, expected: str, kind: str = "add") -> MemoryTask:
    return MemoryTask(task_id, query, "no context needed", None, expected, "numeric",
                      {"suite": "arith", "level": 1, "kind": kind})


def _test_file(tmp_path) -> str:
    path = tmp_path / "test.jsonl"
    lines = [{"id": "held-1", "suite": "arith", "level": 1, "query": "What is 3 + 4?", "checker": "numeric",
              "expected": "7"},
             {"id": "s1", "suite": "arith", "level": 1, "query": "What is 6 + 6?", "checker": "numeric",
              "expected": "12"}]  # "s1" repeats a stream task's id: the phases keep them apart
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(path)


def _counts(db) -> dict[str, int]:
    con = sqlite3.connect(db)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("items", "events", "usage")}
    finally:
        con.close()


LEARNS = "base: {layers: {L2: true}, max_iters: 2, learning: {extractor: heuristic}}\n"
STREAM = [_arith("s1", "What is 2 + 3?", "5"), _arith("s2", "What is 4 + 4?", "8")]


@pytest.mark.slow
def test_the_frozen_test_phase_writes_nothing_to_memory_and_keeps_the_files_task_ids(tmp_path):
    config = experiment_file(tmp_path, LEARNS, "E91")
    alone = run_experiment(config, lm=answer_lm(["5", "8"])[0], task_list=STREAM, runs_dir=tmp_path / "a", progress=False)
    both = run_experiment(config, lm=answer_lm(["5", "8", "7", "11"])[0], task_list=STREAM, runs_dir=tmp_path / "b",
                          progress=False, test_suite=_test_file(tmp_path))
    before, after = (_counts(r.run_dir / "memory.main.sqlite") for r in (alone, both))
    assert before == after and before["items"] > 0  # the stream learnt; the test phase added nothing
    rows = read_results(both.run_dir / "results.jsonl")
    assert [(r["phase"], r["task_id"], r["success"]) for r in rows] == [
        ("stream", "s1", True), ("stream", "s2", True), ("test", "held-1", True), ("test", "s1", False)]
    assert all(r["extracted"] == [] for r in rows if r["phase"] == "test")
    s = both.summary["main"]
    assert s["tasks"] == 2 and s["pass_rate"] == 1.0  # the stream's figures
    assert (s["test"]["tasks"], s["test"]["passed"], s["test"]["pass_at_1"]) == (2, 1, 0.5)
    assert 0 < s["test"]["ci_low"] < 0.5 < s["test"]["ci_high"] < 1
    assert s["bank"]["active"] == before["items"] and s["learning_curve"] == [1.0]
    assert json.loads((both.run_dir / "config.json").read_text())["params"]["test_suite"].endswith("test.jsonl")


@pytest.mark.slow
def test_a_resumed_run_does_not_repeat_finished_test_tasks(tmp_path):
    config = experiment_file(tmp_path, "base: {layers: {}, max_iters: 2}\n", "E91")
    first = run_experiment(config, lm=answer_lm(["5", "8", "7", "12"])[0], task_list=STREAM, runs_dir=tmp_path,
                           progress=False, test_suite=_test_file(tmp_path))
    lm, engine = answer_lm(["0"])
    again = run_experiment(config, lm=lm, task_list=STREAM, runs_dir=tmp_path, progress=False,
                           test_suite=_test_file(tmp_path), resume=first.run_id)
    assert engine.configs == [] and again.rows == 4 and again.summary["main"]["test"]["passed"] == 2


@pytest.mark.slow
def test_exploration_stops_at_the_first_accepted_sample_and_reports_pass_at_n_per_kind(tmp_path):
    config = experiment_file(tmp_path, "base: {layers: {}, max_iters: 2, explore: 3, temperature: 0.9}\n", "E91")
    lm, engine = answer_lm(["7", "9",            # task 1: the second sample is accepted, the third never runs
                      "1", "2", "3",       # task 2: the budget runs out
                      "6"])                # task 3 (another kind): the greedy first run is accepted
    tasks = [_arith("a", "What is 4 + 5?", "9"), _arith("b", "What is 2 + 2?", "4"),
             _arith("c", "What is 3 * 2?", "6", kind="mul")]
    run = run_experiment(config, lm=lm, task_list=tasks, runs_dir=tmp_path, progress=False)
    rows = read_results(run.run_dir / "results.jsonl")
    assert [(r["task_id"], r["rollout"], r["success"], r["best"]) for r in rows] == [
        ("a", 0, False, False), ("a", 1, True, True), ("b", 0, False, True), ("b", 1, False, False),
        ("b", 2, False, False), ("c", 0, True, True)]
    # the first run of a task is greedy, the samples after it are seeded 2, 3 at the condition's temperature
    assert engine.configs == [(0.0, None), (0.9, 2), (0.0, None), (0.9, 2), (0.9, 3), (0.0, None)]
    explore = run.summary["main"]["explore"]
    assert explore["add"] == {"tasks": 2, "budget": 3, "accepted_at_n": 0.5, "pass_at_n": 0.5, "precision": 1.0,
                              "mean_samples": 2.5}
    assert explore["mul"]["pass_at_n"] == 1.0 and explore["mul"]["mean_samples"] == 1.0
    again = run_experiment(config, lm=answer_lm([])[0], task_list=tasks, runs_dir=tmp_path, progress=False,
                           resume=run.run_id)  # a task stopped early is done: nothing reruns
    assert again.rows == 6


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_key_free_judge_decides_learning_while_rows_are_scored_by_the_answer_key(tmp_path):
    # exact (string equality) stands in for a key-free judge: it rejects "9.0", which the reference accepts
    config = experiment_file(tmp_path, "base: {layers: {}, max_iters: 2, judge: {arith: exact}}\n", "E91")
    run = run_experiment(config, lm=answer_lm(["9.0", "4"])[0], progress=False, runs_dir=tmp_path,
                         task_list=[_arith("a", "What is 4 + 5?", "9"), _arith("b", "What is 2 + 2?", "4")])
    rows = read_results(run.run_dir / "results.jsonl")
    assert [(r["success"], r["accepted"], r["judge_used"], r["judge"]) for r in rows] == [
        (True, False, "exact", "numeric"), (True, True, "exact", "numeric")]
    assert run.summary["main"]["judge_agreement"] == {"rollouts": 2, "precision": 1.0, "recall": 0.5}


def test_learning_curve_windows_and_config_errors(tmp_path):
    rows = [{"best": True, "success": i % 4 == 0} for i in range(45)]
    assert learning_curve(rows) == [0.25, 0.25, 0.4]
    with pytest.raises(ConfigError, match="judge: unknown 'oracel'"):
        load_experiment(experiment_file(tmp_path, "base: {judge: oracel}\n", "E91"))
    with pytest.raises(ConfigError, match="explore: 3 cannot be combined"):
        load_experiment(experiment_file(tmp_path, "base: {explore: 3, rollouts: 2}\n", "E91"))
    with pytest.raises(ConfigError, match="no such task file"):
        run_experiment(experiment_file(tmp_path, "base: {}\n", "E91"), lm=answer_lm([])[0], task_list=STREAM,
                       runs_dir=tmp_path, progress=False, test_suite=tmp_path / "missing.jsonl")


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_experiment_run_cli_takes_a_test_suite_and_prints_the_learning_line(tmp_path):
    config = experiment_file(tmp_path, "base: {layers: {}, max_iters: 1}\n", "E91")
    stream = tmp_path / "stream.jsonl"
    stream.write_text(json.dumps({"id": "q1", "suite": "arith", "level": 1, "query": "What is 1 + 1?",
                                  "checker": "numeric", "expected": "2"}) + "\n")
    res = CliRunner().invoke(main, ["experiment", "run", config, "--lm", "scripted:probe", "--suite", str(stream),
                                    "--test-suite", _test_file(tmp_path), "--runs-dir", str(tmp_path / "runs"),
                                    "--decoding", "free"])
    assert res.exit_code == 0, res.output
    assert "main: curve" in res.output and "test 0/2" in res.output
    rows = read_results(next((tmp_path / "runs").glob("E91-*")) / "results.jsonl")
    assert [(r["phase"], r["task_id"], r["decoding_asked"]) for r in rows] == [
        ("stream", "q1", "free"), ("test", "held-1", "free"), ("test", "s1", "free")]


@pytest.mark.slow  # an E14 run under a vote (about 1 s)
def test_learning_under_a_vote_admits_templates_without_the_answer_key(tmp_path):
    # the task's expected answer is wrong on purpose: rows fail by the key, yet the vote (three agreeing samples)
    # accepts, and the template replays by reproducing the voted answer, so learning never reads the key
    config = experiment_file(tmp_path, "base: {layers: {L2: true}, templates: on, max_iters: 2, explore: 3, "
                               "judge: {arith: vote}, learning: {extractor: template, consolidator: consolidate}}\n", "E91")
    task = MemoryTask("a", "What is 4 + 5?", "no context needed", None, "999", "numeric", {"suite": "arith", "level": 1})
    run = run_experiment(config, lm="scripted:solver", task_list=[task], runs_dir=tmp_path, progress=False)
    rows = read_results(run.run_dir / "results.jsonl")
    assert [(r["success"], r["accepted"], r["judge_used"]) for r in rows] == [(False, True, "vote")] * 3
    bank = run.summary["main"]["bank"]
    assert (bank["templates"], bank["admitted"], bank["rejected"]) == (1, 1, 0)
    assert "{{" in bank["top_templates"][0]["template"] and "4 + 5" not in bank["top_templates"][0]["template"]
    assert run.summary["main"]["judge_agreement"] == {"rollouts": 3, "precision": 0.0, "recall": None}


@pytest.mark.slow
def test_the_learning_benchmark_smoke_writes_its_json_and_goals_table(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "learning.json"
    proc = subprocess.run([sys.executable, str(root / "benchmarks" / "learning.py"), "--smoke", "--json", str(out),
                           "--runs-dir", str(tmp_path), "--conditions", "no_memory,learned"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["summaries"]["arith"]["learned"]["test"]["tasks"] == 1  # --smoke: one stream and one test task
    goals = {g["goal"]: g for g in result["goals"]}
    assert goals["arith: learned >= no_memory + 10 pts"]["met"] is False  # the solver solves them all anyway
    assert goals["duplicate templates <= 5%"]["met"] is True and "goal" in proc.stdout
