"""The experiment runner end to end with the scripted probe agent: files, metrics, resume, conditions."""

from __future__ import annotations

import json

import pytest

from rlmlab.errors import ConfigError
from rlmlab.experiments._runner import read_results, run_experiment
from rlmlab.memory import MemoryStore, MemoryTask
from rlmlab.ontology import PROV_TTL


@pytest.fixture
def code_tasks(rust_file):
    text = rust_file.read_text()
    meta = {"source_path": str(rust_file), "suite": "code", "level": 2}
    return [MemoryTask("async", "How many pub async fn are in file.rs?", text, "crate:tokio",
                       text.count("pub async fn"), "numeric", dict(meta)),
            MemoryTask("structs", "How many pub structs are in file.rs?", text, "crate:tokio",
                       text.count("pub struct"), "numeric", dict(meta))]


@pytest.mark.slow
def test_e7_writes_every_reproducibility_file_and_shows_the_leakage_gap(tmp_path, code_tasks):
    run = run_experiment("E7", lm="scripted:probe", task_list=code_tasks, runs_dir=tmp_path, progress=False)
    d = run.run_dir
    for name in ("config.json", "env.json", "results.jsonl", "summary.json", "memory.naive.sqlite",
                 "memory.handle.sqlite"):
        assert (d / name).exists(), name
    env = json.loads((d / "env.json").read_text())
    assert len(env["git_commit"]) == 40 and env["libraries"]["dspy"] and env["model"] == "rlmlab/scripted"
    config = json.loads((d / "config.json").read_text())
    assert config["params"]["lm"] == "scripted:probe" and config["experiment"]["id"] == "E7"
    rows = read_results(d / "results.jsonl")
    assert [(r["condition"], r["task_id"]) for r in rows] == [
        ("naive", "async"), ("naive", "structs"), ("handle", "async"), ("handle", "structs")]
    assert all(r["answer"] == "unknown" and r["success"] is False and r["judge"] == "numeric" for r in rows)
    assert all(r["iterations"] == 2 and r["input_tokens"] > 0 and r["level"] == 2 for r in rows)
    # Naive: the context is a string variable (DSPy previews its head in the variable listing) and there are no
    # bounded tools; handle: a one-line BlobRef listing. The probe agent prints little, so the prompts differ
    # mainly by the listing and the tool docs; agents that print payloads make the gap (benchmarks/leakage.py).
    naive, handle = run.summary["naive"], run.summary["handle"]
    assert naive["mean_variables_info_chars"] > 2 * handle["mean_variables_info_chars"]
    first_prompt = {r["condition"]: r for r in rows if r["task_id"] == "async"}
    traj = {c: (d / "trajectories" / r["trajectory_id"] / "trajectory.jsonl").read_text() for c, r in first_prompt.items()}
    assert '"context_mode": "handle"' in traj["handle"] and '"context_mode": "string"' in traj["naive"]
    assert "ctx_find" in traj["handle"] and "ctx_find" not in traj["naive"] and "BlobRef" not in traj["naive"]
    assert naive["pass_rate"] == handle["pass_rate"] == 0.0 and run.rows == 4
    assert len(list((d / "trajectories").glob("*/trajectory.jsonl"))) == 4


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_killed_run_resumes_without_redoing_finished_tasks(tmp_path, code_tasks):
    first = run_experiment("E1", lm="scripted:probe", task_list=code_tasks, runs_dir=tmp_path, progress=False)
    results = first.run_dir / "results.jsonl"
    kept = results.read_text().splitlines()[0]
    results.write_text(kept + "\n" + '{"experiment": "E1", "condi')  # killed while writing the second row
    again = run_experiment("E1", lm="scripted:probe", task_list=code_tasks, runs_dir=tmp_path, progress=False,
                           resume=first.run_id)
    rows = read_results(results)
    assert [r["task_id"] for r in rows] == ["async", "structs"] and again.rows == 2
    assert json.dumps(rows[0], ensure_ascii=False) == kept  # the finished row was not redone
    with pytest.raises(ConfigError, match="parameters differ"):
        run_experiment("E1", lm="scripted:probe", task_list=code_tasks, runs_dir=tmp_path, progress=False,
                       resume=first.run_id, workers=3)
    with pytest.raises(ConfigError, match="no run 'nope'"):
        run_experiment("E1", lm="scripted:probe", task_list=code_tasks, runs_dir=tmp_path, resume="nope")


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_e12_rollouts_and_parallel_workers(tmp_path, code_tasks):
    run = run_experiment("E12", lm="scripted:probe", task_list=code_tasks[:1], runs_dir=tmp_path, progress=False,
                         rollouts=2, conditions=["contrastive"])
    rows = read_results(run.run_dir / "results.jsonl")
    assert [(r["rollout"], r["best"]) for r in rows] == [(0, True), (1, False)]
    par = run_experiment("E1", lm="scripted:probe", task_list=code_tasks, runs_dir=tmp_path, progress=False,
                         workers=2)
    assert sorted(r["task_id"] for r in read_results(par.run_dir / "results.jsonl")) == ["async", "structs"]


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_e4_materialises_the_guide_once_and_injects_its_summary(tmp_path):
    ttl = PROV_TTL.read_text()
    tasks = [MemoryTask(f"q{i}", "Which class is the domain of prov:wasGeneratedBy?", ttl, "prov",
                        "SELECT ?d WHERE { prov:wasGeneratedBy rdfs:domain ?d }", "sparql",
                        {"ontology": str(PROV_TTL), "suite": "ontology", "level": 2}) for i in range(2)]
    run = run_experiment("E4", lm="scripted:probe", task_list=tasks, runs_dir=tmp_path, progress=False)
    rows = read_results(run.run_dir / "results.jsonl")
    assert all(1000 < r["context_chars"] <= 1000 + 400 for r in rows)  # base instructions + the <=1000 summary
    with MemoryStore(run.run_dir / "memory.main.sqlite") as store:
        [guide] = store.artifacts(domain="prov")
        assert len(guide.content) > 3000 and len(store.events(kind="guide")) == 1
        context = store.events(kind="context")[0].payload
        assert context["layers"][3]["injected"] and context["layers"][3]["chars"] <= 1000


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_cli_compare_two_runs(tmp_path, code_tasks):
    from click.testing import CliRunner

    from rlmlab.cli import main

    a = run_experiment("E1", lm="scripted:probe", task_list=code_tasks[:1], runs_dir=tmp_path, progress=False)
    b = run_experiment("E7", lm="scripted:probe", task_list=code_tasks[:1], runs_dir=tmp_path, progress=False)
    out = CliRunner().invoke(main, ["experiment", "compare", str(a.run_dir), str(b.run_dir)], terminal_width=200)
    assert out.exit_code == 0, out.output
    assert "pass rate" in out.output and "naive" in out.output and "handle" in out.output and "main" in out.output
    # readable names, short run labels, and a delta and a ratio per paired condition (main against each of E7's)
    assert "mean_prompt_chars_mean" not in out.output and "prompt chars / iteration" in out.output
    assert f"A = {a.run_dir.name}" in out.output and "main → handle Δ (B − A)" in out.output
    assert "main → naive ratio B/A" in out.output and "×" in out.output
    bad = CliRunner().invoke(main, ["experiment", "compare", str(tmp_path), str(a.run_dir)])
    assert bad.exit_code == 2 and "no results.jsonl" in bad.output


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_rollouts_of_a_condition_that_does_not_learn_run_as_separate_units(tmp_path, code_tasks):
    run = run_experiment("E1", lm="scripted:probe", task_list=code_tasks, runs_dir=tmp_path, progress=False,
                         rollouts=2, workers=2)
    rows = read_results(run.run_dir / "results.jsonl")
    by_task = {t: sorted((r["rollout"], r["best"], r["trajectory_id"]) for r in rows if r["task_id"] == t)
               for t in ("async", "structs")}
    for task, units in by_task.items():  # equal scores: the first rollout is the best, as in one loop run
        assert [(i, b) for i, b, _ in units] == [(0, True), (1, False)], task
        assert [tid.rsplit("-", 1)[1] for _, _, tid in units] == ["r0", "r1"]
    with MemoryStore(run.run_dir / "memory.main.sqlite") as store:
        judged = {e.trajectory_id for e in store.events(kind="judge")}
    assert judged == {tid for units in by_task.values() for *_, tid in units}


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_run_dir_names_the_run_and_continues_it(tmp_path, code_tasks):
    target = tmp_path / "nb-run"
    first = run_experiment("E1", lm="scripted:probe", task_list=code_tasks[:1], run_dir=target, progress=False)
    assert first.run_id == "nb-run" and first.run_dir == target and first.rows == 1
    again = run_experiment("E1", lm="scripted:probe", task_list=code_tasks[:1], run_dir=target, progress=False)
    assert again.rows == 1  # nothing redone
    with pytest.raises(ConfigError, match="parameters differ"):
        run_experiment("E1", lm="scripted:probe", task_list=code_tasks[:1], run_dir=target, progress=False, workers=4)


def test_unknown_backend_is_a_config_error(tmp_path, code_tasks):
    with pytest.raises(ConfigError, match="backend: unknown 'dask'; registered: ray, threads"):
        run_experiment("E1", lm="scripted:probe", task_list=code_tasks, runs_dir=tmp_path, backend="dask")


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_max_iters_and_lm_options_override_every_condition_and_are_recorded(tmp_path, code_tasks):
    run = run_experiment("E7", lm="scripted:probe", task_list=code_tasks[:1], runs_dir=tmp_path, progress=False,
                         max_iters=1, lm_options={"max_tokens": 32})
    config = json.loads((run.run_dir / "config.json").read_text())
    assert config["params"]["max_iters"] == 1 and config["params"]["lm_options"] == {"max_tokens": 32}
    assert {c["max_iters"] for c in config["conditions"]} == {1}
    rows = read_results(run.run_dir / "results.jsonl")
    assert len(rows) == 2 and all(r["iterations"] == 1 for r in rows)  # the probe needs 2 to SUBMIT
    with pytest.raises(ConfigError, match="lm_options apply to an LM spec"):
        from rlmlab.lm import make_lm

        run_experiment("E1", lm=make_lm("scripted:probe"), task_list=code_tasks[:1], runs_dir=tmp_path,
                       progress=False, lm_options={"max_tokens": 32})


@pytest.mark.slow
def test_with_four_worker_threads_each_task_records_only_its_own_lm_calls(tmp_path, rust_file):
    """Issue 30: the runner shares one LM, and so one call recorder, across worker threads; a task's
    lm_calls.jsonl could hold another task's calls. Each run now sees only the calls made in its own context."""
    import threading
    import time

    from rlmlab.lm import make_lm, read_calls
    from rlmlab.lm._scripts import _probe

    text = rust_file.read_text()
    meta = {"source_path": str(rust_file), "suite": "code", "level": 2}
    words = ["async", "struct", "impl", "unsafe", "match", "enum", "trait", "where"]
    tasks = [MemoryTask(w, f"How many times does {w} appear in file.rs?", text, "crate:tokio", text.count(w),
                        "numeric", dict(meta)) for w in words]
    order: list[str] = []  # the task of each call, in the order the LM served them
    lock, second_task = threading.Lock(), threading.Event()

    def slow_probe(messages):  # each call takes a while, as with a real model, so the tasks' calls interleave
        text = " ".join(m["content"] for m in messages)
        with lock:
            order.append(next(w for w in words if f"does {w} appear" in text))
            if len(set(order)) > 1:
                second_task.set()
        # The first task's first call waits for another task's call, so the interleaving does not depend on how
        # fast the pool starts its threads (on a loaded machine one task could finish before the next began).
        second_task.wait(timeout=10)
        time.sleep(0.02)
        return _probe(messages)

    run = run_experiment("E1", lm=make_lm("scripted", script=slow_probe), task_list=tasks, runs_dir=tmp_path,
                         progress=False, workers=4)
    runs_of_calls = [w for i, w in enumerate(order) if i == 0 or order[i - 1] != w]
    assert len(runs_of_calls) > len(set(order))  # some task's calls were not contiguous: the tasks interleaved
    rows = read_results(run.run_dir / "results.jsonl")
    assert sorted(r["task_id"] for r in rows) == sorted(words)
    for row in rows:
        [calls_file] = list((run.run_dir / "trajectories").rglob(f"*-{row['task_id']}-*/lm_calls.jsonl")) or \
            [p for p in (run.run_dir / "trajectories").rglob("lm_calls.jsonl") if f"-{row['task_id']}" in str(p)]
        calls = read_calls(calls_file)
        assert calls and len(calls) == row["lm_calls"]
        for call in calls:
            user = " ".join(m["content"] for m in call.messages if m["role"] == "user")
            assert f"does {row['task_id']} appear" in user, (row["task_id"], user[:300])
