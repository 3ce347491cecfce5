"""The scorecard in several processes: claims that share an arm stay together, the groups balance by projected time,
and the merged table is the one a single process writes (real subprocesses, the scripted LM by name)."""

from __future__ import annotations

import json
import re

import pytest

from rlmlab.errors import ConfigError
from rlmlab.lm import make_lm
from rlmlab.scorecard import ArmCost, Plan, auto_procs, partition, read_scorecard, run_scorecard, usable_cores


def _plan(arms: dict[str, tuple[float, list[str]]], rows: list[str]) -> Plan:
    return Plan([ArmCost(label, 1, s, "measured") for label, (s, _) in arms.items()], rows, 1,
                {label: users for label, (_, users) in arms.items()})


def test_claims_sharing_an_arm_stay_in_one_process_and_groups_balance_longest_first():
    plan = _plan({"base": (10.0, ["a", "b", "c"]), "b2": (5.0, ["b"]), "d1": (12.0, ["d"]), "e1": (9.0, ["e"]),
                  "f1": (4.0, ["f"])}, ["a", "b", "c", "d", "e", "f"])
    parts = partition(plan, 2, cores=[0, 1])
    assert [p.claims for p in parts] == [["a", "b", "c", "f"], ["d", "e"]]  # 15 first, then 12, 9 beside it, 4
    assert [p.seconds for p in parts] == [19.0, 21.0]
    assert [p.cores for p in parts] == [[0], [1]]
    assert [p.card_file for p in parts] == ["parts/scorecard.0.json", "parts/scorecard.1.json"]


def test_one_group_gives_one_process_and_more_processes_than_cores_share_them():
    shared = _plan({"base": (10.0, ["a", "b"])}, ["a", "b"])
    assert len(partition(shared, 4, cores=[0, 1])) == 1
    apart = _plan({"x": (1.0, ["a"]), "y": (1.0, ["b"]), "z": (1.0, ["c"])}, ["a", "b", "c"])
    assert [p.cores for p in partition(apart, 3, cores=[5])] == [[5], [5], [5]]
    assert [p.cores for p in partition(apart, 2, cores=[0, 1, 2, 3])] == [[0, 2], [1, 3]]


def test_auto_procs_uses_the_cores_only_for_the_embedded_model_by_name():
    assert auto_procs("scripted:probe") == 1
    assert auto_procs("openai/gpt-4o-mini") == 1
    assert auto_procs(make_lm("scripted:probe")) == 1
    assert auto_procs("local") == max(1, len(usable_cores()) // 2)  # two cores per process: 1 on 2 cores


def test_procs_needs_the_lm_by_name(tmp_path):
    with pytest.raises(ConfigError, match="needs the LM by name"):
        run_scorecard(make_lm("scripted:probe"), n=1, claims=["s004.E7"], out=tmp_path, procs=2, progress=None)


@pytest.mark.slow
def test_two_processes_write_the_table_one_process_writes(tmp_path):
    claims = ["s004.E7", "s004.E8"]  # no arm in common: one claim per process
    one = run_scorecard("scripted:probe", n=2, claims=claims, out=tmp_path / "one", procs=1, progress=None)
    said: list[str] = []
    two = run_scorecard("scripted:probe", n=2, claims=claims, out=tmp_path / "two", procs=2, progress=said.append)
    assert [r.summary() for r in two.rows] == [r.summary() for r in one.rows]
    assert two.params["procs"] == 2 and one.params["procs"] == 1
    assert two.params["environment"]["git_commit"] == one.params["environment"]["git_commit"]
    assert sorted(two.arms) == sorted(one.arms)
    assert any(re.match(r"process p0 on (1 core|\d+ cores) \([\d,]+\): ", line) for line in said)
    assert any(line.startswith("[p1] ") for line in said)  # each process's progress, prefixed
    saved = read_scorecard(tmp_path / "two")
    assert [r.name for r in saved.rows] == claims
    parts = sorted((tmp_path / "two" / "parts").glob("scorecard.*.json"))
    assert len(parts) == 2 and all(len(json.loads(p.read_text())["rows"]) == 1 for p in parts)
    # a second run into the same folder keeps the other process's rows and replaces the ones it measures again
    again = run_scorecard("scripted:probe", n=2, claims=["s004.E8"], out=tmp_path / "two", procs=2, progress=None)
    assert [r.name for r in again.rows] == claims
