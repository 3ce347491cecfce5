"""The scorecard's E10-E13 rows, its cost model and plan (shared arms run once, the projection printed before a
run), and the n that would decide a "cannot tell" (issue 29), on scripted LMs."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rlmlab.cli import main
from rlmlab.lm import make_lm
from rlmlab.scorecard import (
    DEFAULT_N, VERDICTS, ScoreContext, newcombe_paired, paired_binary, read_scorecard, run_scorecard, select_claims,
    verdict,
)
from rlmlab.scorecard._context import suite_size


def plan_scorecard(*args, **kwargs):
    from rlmlab.scorecard import plan_scorecard as plan  # imported here so each test fails on its own without it

    return plan(*args, **kwargs)


def measured() -> dict:
    from rlmlab.scorecard import MEASURED

    return MEASURED

LOOP_ROWS = ["s004.E10", "s004.E11", "s004.E12-rollouts", "s004.E12-contrastive", "s004.E13-grammar",
             "s004.E13-templates", "s004.E13-vote5"]


@pytest.mark.slow
def test_the_loop_and_decoding_rows_pair_each_experiment_with_the_condition_it_adds_to(tmp_path):
    lines: list[str] = []
    card = run_scorecard("scripted:probe", n=2, claims=LOOP_ROWS, out=tmp_path, progress=lines.append)
    rows = {r.name: r for r in card.rows}
    assert sorted(rows) == sorted(LOOP_ROWS)
    for row in rows.values():
        assert row.seed == "004" and row.n == 2 and row.verdict in VERDICTS, (row.name, row.reason)
        assert row.ci_low <= row.difference <= row.ci_high and len(row.runs) == 2
    # the arm E10 adds consolidation to, and the one E11 adds forgetting to, are the same runs: each arm runs once
    assert rows["s004.E10"].direction == "no_worse" and rows["s004.E11"].direction == "no_worse"
    e10_run = set(rows["s004.E10"].runs) & set(rows["s004.E11"].runs)
    assert len(e10_run) == 1 and e10_run <= set(rows["s004.E12-rollouts"].runs)
    labels = list(card.arms)
    assert len(labels) == len(set(labels)) == 9  # E9 E10 E11 E12x2 E13x4: each shared arm once
    assert all(a["items"] == 2 and a["seconds"] is not None for a in card.arms.values())
    assert read_scorecard(tmp_path).arms == card.arms  # the measured seconds feed the next plan
    # the loop rows carry the banks' health beside the comparison
    assert any(k.endswith("duplicate_rate") or k.endswith("active") for k in rows["s004.E10"].extra)
    assert lines[0].startswith("plan: 7 rows, 9 arms (5 arm runs saved by sharing), 18 items, projected")


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_full_plan_runs_every_row_at_60_items_and_each_shared_arm_once(tmp_path):
    entries = select_claims()
    ctx = ScoreContext(make_lm("scripted:probe"), "probe", DEFAULT_N, tmp_path)
    plan = plan_scorecard(entries, ctx)
    assert not any(tmp_path.iterdir())  # planning runs nothing
    # the built-in suites hold 30 tasks, so past 30 the rows take the generated held-out sets: 60 items each
    # the paraphrase twins take their suite's blind questions, all of them (fewer than 60)
    para = [a for a in plan.arms if "-paraphrase-test/" in a.label]
    assert {a.label.split("@")[1].split("/")[0] for a in para} == {"code-paraphrase-test", "ontology-paraphrase-test"}
    assert all(a.items == suite_size(a.label.split("@")[1].split("/")[0]) < DEFAULT_N for a in para)
    plan_arms = [a for a in plan.arms if a not in para]
    assert DEFAULT_N >= 60 and all(a.items == DEFAULT_N for a in plan_arms)
    assert plan.shared["experiment:E1/main@code_test/max6"] == ["s001.oracle", "s004.E5", "s004.E6", "s004.E9"]
    assert plan.shared["experiment:E1/main@ontology_test/max6"] == ["s004.E2", "s004.E3", "s004.E4",
                                                                    "s004.E4-breakeven"]
    assert {a.label.split("@")[1].split("/")[0] for a in plan_arms if not a.label.startswith("teach:")} == {
        "code_test", "ontology_test", "arith_test"}
    # the Turing agent arms stop at E13's 3 steps; experiment arms keep each condition's own unless capped
    assert {a.label for a in plan.arms if a.label.startswith("agent:")} == {
        f"agent:{d}.{t}@arith_test/max3" for d in ("free", "grammar") for t in ("turing", "plain")}
    capped = plan_scorecard(entries, ScoreContext(make_lm("scripted:probe"), "probe", DEFAULT_N, tmp_path, steps=2))
    assert all(a.label.endswith("/max2") for a in capped.arms if a.label.startswith("experiment:"))
    assert all(a.label.endswith("/max3") for a in plan.arms if a.label.startswith("experiment:E13/"))
    assert len(plan.arms) == len(plan.shared) and plan.items == sum(a.items for a in plan.arms)
    measured_rows = {r for rows in plan.shared.values() for r in rows}
    # every row but the ones that are not paired comparisons has arms to run
    assert {e.name for e in entries} - measured_rows == {"s001.yield"}
    assert plan.seconds == sum(a.items * a.s_per_item for a in plan.arms)


@pytest.mark.slow
def test_each_code_and_ontology_experiment_row_has_a_twin_on_the_blind_paraphrase_split(tmp_path):
    twins = {e.name for e in select_claims(claims=["s004.*"]) if e.name.endswith(".paraphrase")}
    assert twins == {f"s004.{x}.paraphrase" for x in ("E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "E10", "E11",
                                                        "E12-rollouts", "E12-contrastive")}
    card = run_scorecard("scripted:probe", n=2, claims=["s004.E5", "s004.E5.paraphrase"], out=tmp_path,
                         progress=None)
    rows = {r.name: r for r in card.rows}
    assert [r.name for r in card.rows] == ["s004.E5", "s004.E5.paraphrase"]  # side by side in the table
    assert rows["s004.E5.paraphrase"].comparison == rows["s004.E5"].comparison + ", paraphrase test split"
    assert all(r.n == 2 and r.verdict in VERDICTS for r in rows.values())
    assert not set(rows["s004.E5"].runs) & set(rows["s004.E5.paraphrase"].runs)  # their own runs
    assert sorted(card.arms) == ["experiment:E1/main@code-paraphrase-test/max6", "experiment:E1/main@code/max6",
                                 "experiment:E5/main@code-paraphrase-test/max6", "experiment:E5/main@code/max6"]
    from rlmlab.experiments import run_rows

    ids = {r: {row["task_id"] for run in (tmp_path / "runs").rglob("results*.jsonl") if r in str(run)
               for row in run_rows(run.parent)} for r in rows["s004.E5.paraphrase"].runs}
    assert all(t and all(i.startswith("pc-B-") for i in t) for t in ids.values()), ids  # the blind writer's questions
    # with --suite every arm runs on that suite: there is no paraphrase split, and the row says so
    other = run_scorecard("scripted:probe", n=2, suite="code", claims=["s004.E5.paraphrase"], out=tmp_path / "s",
                          progress=None)
    assert other.rows[0].verdict == "not measured" and "no paraphrase split" in other.rows[0].reason


def test_a_previous_scorecard_in_the_folder_prices_the_next_plan(tmp_path):
    doc = {"params": {}, "rows": [], "arms": {"experiment:E7/handle@code_test/max6": {"items": 4, "seconds": 30.0}}}
    (tmp_path / "scorecard.json").write_text(json.dumps(doc))
    ctx = ScoreContext(make_lm("scripted:probe"), "probe", 60, tmp_path)
    plan = plan_scorecard(select_claims(claims=["s004.E7"]), ctx, previous=tmp_path)
    priced = {a.label: a for a in plan.arms}
    handle = priced["experiment:E7/handle@code_test/max6"]
    assert (handle.s_per_item, handle.source, handle.seconds) == (7.5, "previous", 450.0)
    # no figure at 6 steps for the naive arm: its 3-step figure, scaled by the steps
    naive = priced["experiment:E7/naive@code_test/max6"]
    assert naive.source == "scaled from /max3" and naive.s_per_item == 2 * measured()["experiment:E7/naive@code/max3"]


def test_an_arm_on_the_paraphrase_split_is_priced_as_the_same_arm_on_its_suite(tmp_path):
    """E12's arms on the paraphrase split were priced at the median of every arm (9.5 s), a third of what three
    rollouts per item take: the same arm on the generated suite is the nearer figure."""
    ctx = ScoreContext(make_lm("scripted:probe"), "probe", 20, tmp_path, steps=3)
    plan = plan_scorecard(select_claims(claims=["s004.E12*"]), ctx)
    priced = {a.label: a for a in plan.arms}
    para = priced["experiment:E12/contrastive@code-paraphrase-test/max3"]
    assert para.s_per_item == measured()["experiment:E12/contrastive@code/max3"]
    assert para.source == "the same arm on code"
    assert all(a.source != "guess" for a in plan.arms), [(a.label, a.source) for a in plan.arms]


def test_cli_plan_prints_the_projection_and_runs_nothing(tmp_path):
    result = CliRunner().invoke(main, ["scorecard", "--plan", "--claims", "s004.E2,s004.E3", "--out",
                                       str(tmp_path / "card")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("plan: 2 rows, 3 arms (1 arm run saved by sharing), 180 items, projected")
    assert any(line.startswith("  experiment:E1/main@ontology_test/max6: 60 items x ") and "rows s004.E2, s004.E3" in line
               for line in lines)
    assert not (tmp_path / "card").exists()


def test_the_n_that_would_decide_is_where_the_rows_own_interval_decides():
    # a passes 3 of 4, b 1 of 4, b's pass inside a's: the normal approximation says 6 items, but Newcombe's
    # interval of those proportions still spans 0 at 6; the n given must be the n the row's interval decides at
    a, b = [1, 1, 1, 0], [1, 0, 0, 0]
    cmp = paired_binary(a, b)
    assert cmp.verdict == "cannot tell" and cmp.n_to_decide == 8
    assert paired_binary(a * 2, b * 2).verdict == "holds"  # the same proportions at n = 8 decide
    _, low, high = newcombe_paired(*(c * 7 / 4 for c in (1, 2, 0, 1)))
    assert verdict(low, high) == "cannot tell"  # and at 7 they do not
    # a zero effect: no n decides "greater", but a non-inferiority claim is decided by enough items
    assert paired_binary([1, 0] * 5, [1, 0] * 5).n_to_decide is None
    no_worse = paired_binary([1, 0] * 5, [1, 0] * 5, direction="no_worse", margin=0.05)
    assert no_worse.n_to_decide and paired_binary([1, 0] * no_worse.n_to_decide, [1, 0] * no_worse.n_to_decide,
                                                  direction="no_worse", margin=0.05).verdict == "holds"


@pytest.mark.slow
def test_a_cannot_tell_row_says_the_n_that_would_decide_it(tmp_path):
    lines: list[str] = []
    run_scorecard("scripted:probe", n=2, claims=["s004.E7"], out=tmp_path, progress=lines.append)
    row = read_scorecard(tmp_path).rows[0]
    assert row.verdict == "cannot tell"
    said = lines[-1]
    assert (f"n={row.n_to_decide} would decide it" in said if row.n_to_decide
            else "no n decides it: no effect observed" in said)
    assert any(line.startswith("  arm 1/2 experiment:E7/") and "projected" in line for line in lines)
