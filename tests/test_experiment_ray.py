"""The runner's Ray backend on a real local Ray instance (Ray 2.60 removed ``local_mode``; this starts a
two-CPU head node on this machine, ships units to its worker processes and stops it)."""

from __future__ import annotations

import importlib.util

import pytest

from rlmlab.experiments._runner import read_results, run_experiment
from rlmlab.memory import MemoryStore, MemoryTask

# find_spec, not importorskip: importing ray takes about 0.6 s, which every pytest worker would pay while collecting
if importlib.util.find_spec("ray") is None:
    pytest.skip("the ray extra is not installed (make test installs it)", allow_module_level=True)

pytestmark = pytest.mark.ray


def test_ray_backend_runs_task_rollout_units_in_worker_processes_into_the_same_files(tmp_path, rust_file):
    text = rust_file.read_text()
    meta = {"source_path": str(rust_file), "suite": "code", "level": 1}
    tasks = [MemoryTask(f"t{i}", q, text, "crate:tokio", text.count(pat), "numeric", dict(meta))
             for i, (q, pat) in enumerate([("How many pub async fn?", "pub async fn"), ("How many structs?", "struct ")])]
    run = run_experiment("E7", lm="scripted:probe", task_list=tasks, runs_dir=tmp_path, progress=False,
                         rollouts=2, workers=2, backend="ray")
    rows = read_results(run.run_dir / "results.jsonl")
    assert len(rows) == 2 * 2 * 2 and run.summary.keys() == {"naive", "handle"}
    assert sorted({(r["condition"], r["task_id"], r["rollout"]) for r in rows}) == sorted(
        (c, t.id, i) for c in ("naive", "handle") for t in tasks for i in (0, 1))
    assert all(sum(r["best"] for r in rows if (r["condition"], r["task_id"]) == key) == 1
               for key in {(r["condition"], r["task_id"]) for r in rows})
    assert all(r["iterations"] == 2 and r["input_tokens"] > 0 for r in rows)  # the agent really ran in the workers
    for r in rows:
        assert (run.run_dir / "trajectories" / r["trajectory_id"] / "trajectory.jsonl").exists()
    with MemoryStore(run.run_dir / "memory.handle.sqlite") as store:
        assert len(store.events(kind="judge")) == 4
    import ray

    assert not ray.is_initialized()  # the instance the runner started is stopped
