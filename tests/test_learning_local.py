"""On the embedded model: a template learnt from one task is retrieved by its query's shape and used on a sibling
task (E14's loop on the smallest input that proves the path: two arithmetic queries with no content word)."""

from __future__ import annotations

import pytest

from rlmlab.executors import TRAJECTORY_FILE, Trajectory
from rlmlab.experiments import read_results, run_experiment
from rlmlab.memory import MemoryStore, MemoryTask

pytestmark = pytest.mark.local_model

CONFIG = """id: E92
title: learn one template, reuse it
base:
  decoding: grammar
  max_iters: 2
  layers: {L2: true}
  budgets: {L2: 1500}
  templates: on
  retrieval: {policy: templates, k_success: 1}
  explore: 3
  temperature: 0.8
  learning: {extractor: template, consolidator: consolidate}
"""


def _task(task_id: str, a: int, b: int) -> MemoryTask:
    return MemoryTask(task_id, f"What is {a} + {b}?", "", None, str(a + b), "numeric", {"suite": "arith", "level": 1})


def test_a_template_learnt_from_one_task_is_retrieved_by_shape_and_used_on_a_sibling(tmp_path):
    config = tmp_path / "E92.yaml"
    config.write_text(CONFIG)
    run = run_experiment(str(config), lm="local", lm_options={"max_tokens": 256}, runs_dir=tmp_path, progress=False,
                         task_list=[_task("first", 125, 389), _task("sibling", 207, 416)])
    rows = read_results(run.run_dir / "results.jsonl")
    first = [r for r in rows if r["task_id"] == "first"]
    assert any(r["success"] for r in first), [r["answer"] for r in first]  # exploration found a right run
    sibling = next(r for r in rows if r["task_id"] == "sibling" and r["rollout"] == 0)
    with MemoryStore(run.run_dir / "memory.main.sqlite") as store:
        # what the first task taught (the sibling's own success may since have merged it into a new item)
        injected = store.get_many(sibling["injected"])
    assert len(injected) == 1  # no content word in the query: found by its shape
    learnt = injected[0]
    assert learnt.source == "extract" and learnt.polarity == "success" and learnt.shape == "What is {number} + {number}?"
    assert "{{" in learnt.template and "125" not in learnt.template and "389" not in learnt.template
    traj = Trajectory.read_jsonl(run.run_dir / "trajectories" / sibling["trajectory_id"] / TRAJECTORY_FILE)
    step = traj.iterations[0].code
    assert "207" in step and "416" in step  # the template, its slots filled from the sibling's query
    assert sibling["success"] and sibling["answer"].strip() in ("623", "623.0")
