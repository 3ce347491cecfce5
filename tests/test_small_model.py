"""The embedded SmolLM2-135M on E13's paths: a vote over sampled rollouts, a template from memory filled and run.

Real model calls (marker ``local_model``), on the smallest input that proves each path: one arithmetic task.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

import pytest

from rlmlab.executors import Trajectory
from rlmlab.executors._step_grammar import query_slots
from rlmlab.experiments import ExperimentConfig, load_experiment, load_suite, vote_key, run_experiment
from rlmlab.memory import parse_template

pytestmark = pytest.mark.local_model


def _task(task_id: str):
    return next(t for t in load_suite("arith", levels=[1]) if t.id == task_id)


def _only(exp: ExperimentConfig, name: str, **changes) -> ExperimentConfig:
    cond = dataclasses.replace(exp.condition(name), **changes)
    return dataclasses.replace(exp, conditions=(cond,))


def _trajectory(run_dir, row) -> Trajectory:
    return Trajectory.read_jsonl(run_dir / "trajectories" / row["trajectory_id"] / "trajectory.jsonl")


def test_a_vote_over_three_samples_picks_the_majority(tmp_path):
    exp = _only(load_experiment("E13"), "vote5", samples=3)
    run = run_experiment(exp, task_list=[_task("arith-math20-q5")], lm="local", lm_options={"max_tokens": 160},
                         runs_dir=tmp_path, progress=False)
    rows = [r for r in (run.run_dir / "results.jsonl").read_text().splitlines()]
    import json

    rows = [json.loads(r) for r in rows]
    assert len(rows) == 3 and all(r["selected_by"] == "vote" and r["decoding"] == "grammar" for r in rows)
    answers = [vote_key(r["answer"]) for r in rows]
    voted = [a for a in answers if a is not None]
    counts = Counter(voted)
    top = max(counts.values())
    expected = next(a for a in voted if counts[a] == top)  # the most common; a tie goes to the first given
    best = next(r for r in rows if r["best"])
    assert vote_key(best["answer"]) == expected
    assert all(r["salvaged"] == 0 for r in rows)  # under the grammar no reply is off-format
    s = run.summary["vote5"]
    assert s["pass_at_n"] >= s["maj_at_n"] and s["pass_at_n"] >= s["pass_at_1"]


def test_a_template_from_memory_is_filled_and_run(tmp_path):
    task = _task("arith-math20-q17")  # an odd task: its kind has a seed template ("divide a total by a rate")
    exp = _only(load_experiment("E13"), "grammar_templates")
    run = run_experiment(exp, task_list=[task], lm="local", lm_options={"max_tokens": 160}, runs_dir=tmp_path,
                         progress=False)
    import json

    row = json.loads((run.run_dir / "results.jsonl").read_text().splitlines()[0])
    assert row["injected"], "the ContextBuilder injected no template item"
    traj = _trajectory(run.run_dir, row)
    code = traj.iterations[0].code
    from rlmlab.memory import MemoryStore

    with MemoryStore(run.run_dir / "memory.grammar_templates.sqlite") as store:
        templates = [it.template for it in store.get_many(row["injected"]) if it.template]
    slots = query_slots(task.query)

    def as_regex(template: str) -> str:
        out = []
        for part in parse_template(template):
            if isinstance(part, str):
                out.append(re.escape(part))
            else:
                out.append("(" + "|".join(re.escape(v) for v in slots[part.type]) + ")")
        return "".join(out)

    filled = [t for t in templates if re.fullmatch(as_regex(t), code)]
    assert filled, f"step 1 is not a filled template:\n{code}\ntemplates: {templates}"
    assert traj.answer is not None and traj.iterations[0].output.startswith("FINAL")  # it ran and submitted
