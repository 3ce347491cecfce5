"""The teacher-learner loop with the seeded demo learner on data/math20.csv (a simulator, see _learner.py)."""

import json
import statistics

import jsonschema
import pytest

from rlmlab.teach import TRACES_SCHEMA, Item, RunConfig, StopRules, bucket, load_csv, load_templates, run_teach
from rlmlab.teach._learner import DemoLearner, Exchange, LearnerAnswer, VotingLearner
from rlmlab.teach import ItemTrace, apply_turn, judge_turn, run_arm, run_item, write_traces

ITEMS = load_csv("data/math20.csv")
SOLVE = {i.question: i.reference for i in ITEMS}.get


def demo(**kw):
    return DemoLearner(SOLVE, seed=0, **kw)


def test_reference_mode_never_reprompts_a_right_answer_and_rts_fixes_what_it_targets():
    _, single = run_arm(ITEMS, demo(error_rate=0.15), arm="single", mode="reference")
    rts_traces, rts = run_arm(ITEMS, demo(error_rate=0.15), arm="rts", mode="reference")
    assert rts.accuracy > single.accuracy and rts.right_to_wrong == 0 and rts.wrong_to_right >= 1
    for t in rts_traces:
        for turn in t.turns:
            assert not (turn.accuracy == 1 and turn.template), "a right answer was reprompted"
    wrong = next(t for t in rts_traces if t.turns[0].accuracy == 0)
    assert wrong.turns[0].teacher_bias != "None" and wrong.turns[0].template


def test_reference_free_teacher_cannot_see_rightness_so_right_answers_get_reprompted():
    traces, free = run_arm(ITEMS, demo(error_rate=0.15), arm="try_again", mode="reference_free")
    assert free.avg_turns == 3.0
    assert sum(t.turns[0].accuracy == 1 and t.turns[0].template == "try_again_concise" for t in traces) >= 15


def test_full_demo_run_matches_the_expected_summary(tmp_path):
    """configs/run.yaml's demo defaults (error rate 0.1, seed 0): the spec's ~90% single pass, ~95%+ with RTS."""
    cfg = RunConfig(traces_out=str(tmp_path / "traces.json"))
    report = run_teach(cfg)
    got = {(r.mode, r.arm): (r.accuracy, r.right_to_wrong, r.wrong_to_right, r.avg_turns) for r in report.rows}
    assert got == {
        ("reference", "single"): (0.85, 0, 0, 1.0),
        ("reference", "try_again"): (0.9, 0, 1, 1.25),
        ("reference", "rts"): (1.0, 0, 3, 1.2),
        ("reference_free", "single"): (0.85, 0, 0, 1.0),
        ("reference_free", "try_again"): (0.85, 1, 1, 3.0),
        ("reference_free", "rts"): (0.9, 1, 2, 2.2),
    }
    doc = json.loads((tmp_path / "traces.json").read_text())
    jsonschema.validate(doc, TRACES_SCHEMA)
    assert doc["summary"] == {"items": 20, "final_accuracy_mean": 1.0}  # traces.json: RTS arm of the first mode
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["traces.json", "summary.json", "run.lock", "provenance.json"]
        + [f"traces.{m}.{a}.json" for m in ("reference", "reference_free")
                                           for a in ("single", "try_again", "rts")])


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_over_many_seeds_the_simulator_gives_the_spec_figures_and_the_gate_matters():
    acc: dict = {}
    for seed in range(20):
        for r in run_teach(RunConfig(seed=seed), write=False).rows:
            acc.setdefault((r.mode, r.arm), []).append(r)
    mean = {k: statistics.mean(r.accuracy for r in v) for k, v in acc.items()}
    assert 0.83 <= mean[("reference", "single")] <= 0.92  # spec: ~90% single pass
    assert mean[("reference", "rts")] >= 0.95  # spec: ~95% with reprompting
    assert mean[("reference", "rts")] > mean[("reference", "try_again")] > mean[("reference", "single")]
    # without the reference gate a generic retry loses right answers: worse than not reprompting at all
    assert mean[("reference_free", "try_again")] < mean[("reference_free", "single")]
    assert all(r.right_to_wrong == 0 for r in acc[("reference", "rts")])


def test_stop_at_max_turns_and_traces_json_schema(tmp_path):
    learner = DemoLearner(SOLVE, error_rate=1.0, fix_targeted=0.0, fix_generic=0.0, seed=3)
    trace = run_item(ITEMS[1], learner, arm="rts", mode="reference", rules=StopRules(max_turns=2))
    assert len(trace.turns) == 2 and trace.stop_reason == "max_turns" and trace.final_accuracy == 0
    path = write_traces(tmp_path / "out" / "traces.json", [trace])
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, TRACES_SCHEMA)
    assert list(doc) == ["summary", "traces"] and doc["summary"] == {"items": 1, "final_accuracy_mean": 0.0}
    [rec] = doc["traces"]
    assert list(rec) == ["qid", "question", "reference", "turns", "final_accuracy"]
    assert list(rec["turns"][0]) == ["answer", "self_conf", "teacher_bias", "teacher_conf", "template", "accuracy"]
    assert rec["turns"][0]["template"] is not None and rec["turns"][-1]["template"] is None


def test_demo_learner_is_seeded_and_does_arithmetic_itself():
    a = DemoLearner(SOLVE, error_rate=0.5, seed=7).answer(Exchange(ITEMS[0].question, "q1"))
    b = DemoLearner(SOLVE, error_rate=0.5, seed=7).answer(Exchange(ITEMS[0].question, "q1"))
    assert a == b
    no_knowledge = DemoLearner(error_rate=0.0)
    assert no_knowledge.answer(Exchange("What is (8 + 5) * 3?", "x")).answer == "The answer is 39."
    assert no_knowledge.answer(Exchange(ITEMS[13].question, "y")).self_conf < 0.4  # a word problem it cannot parse


def test_voting_learner_reports_the_majority_and_its_share():
    base = DemoLearner(SOLVE, error_rate=0.4, seed=1)
    voter = VotingLearner(base, k=5)
    shares = []
    for item in ITEMS:
        reply = voter.answer(Exchange(item.question, item.qid))
        samples = [base.answer(Exchange(item.question, item.qid), sample=i).answer for i in range(5)]
        assert reply.answer == max(samples, key=samples.count)
        assert reply.vote_share == samples.count(reply.answer) / 5
        shares.append(reply.vote_share)
    assert len(set(shares)) > 1 and min(shares) < 1.0  # the samples really differ


ADD = Item("add", "What is 2 + 3?", "5")


def test_judge_turn_decides_one_turn_and_changes_nothing():
    ex = Exchange(ADD.question, ADD.qid)
    right = judge_turn(ADD, ex, LearnerAnswer("The answer is 5.", 0.9), arm="rts", mode="reference")
    assert right.correct and right.judged.bias == "None" and right.score == 1.0
    assert right.stop == "match" and right.sent is None and right.level == bucket(right.combined)
    anchored = judge_turn(ADD, ex, LearnerAnswer("The answer is 3.", 0.8), arm="rts", mode="reference")
    assert not anchored.correct and anchored.judged.bias == "Anchoring" and anchored.combined == 0.75
    assert anchored.stop is None and anchored.sent == anchored.template is not None and anchored.rule
    single = judge_turn(ADD, ex, LearnerAnswer("The answer is 3.", 0.8), arm="single", mode="reference")
    assert single.stop == "single_pass" and single.template is None
    assert ex.answers == [] and ex.reprompts == []


def test_judge_turn_try_again_retries_past_two_non_improvements_and_rts_stops():
    ex = Exchange(ADD.question, ADD.qid, answers=["The answer is 4.", "The answer is 4."],
                  reprompts=[("try_again_concise", "t"), ("try_again_concise", "t")])
    scores = [0.0, 0.0]
    reply = LearnerAnswer("The answer is 4.", 0.5)
    kw = dict(mode="reference", rules=StopRules(max_turns=5), scores=scores)
    assert judge_turn(ADD, ex, reply, arm="rts", **kw).stop == "two_non_improvements"
    retry = judge_turn(ADD, ex, reply, arm="try_again", **kw)
    assert retry.stop is None and retry.sent == "try_again_concise"
    assert scores == [0.0, 0.0] and len(ex.answers) == 2


def test_judge_turn_keeping_an_answer_on_request_is_not_confirmation():
    reply = LearnerAnswer("The answer is 4.", 0.5)
    asked_to_keep = Exchange(ADD.question, ADD.qid, ["The answer is 4."], [("calming_focus_v1", "keep it")])
    told_to_retry = Exchange(ADD.question, ADD.qid, ["The answer is 4."], [("try_again_concise", "again")])
    assert judge_turn(ADD, asked_to_keep, reply, mode="reference_free").judged.bias == "None"
    assert judge_turn(ADD, told_to_retry, reply, mode="reference_free").judged.bias == "Confirmation"


def test_apply_turn_records_the_turn_and_queues_the_reprompt_or_the_stop():
    templates = load_templates()
    ex, trace, scores = Exchange(ADD.question, ADD.qid), ItemTrace(ADD.qid, ADD.question, ADD.reference), []
    wrong = LearnerAnswer("The answer is 3.", 0.8, input_tokens=7, output_tokens=3)
    turn = judge_turn(ADD, ex, wrong, arm="rts", mode="reference")
    record = apply_turn(turn, wrong, trace=trace, ex=ex, scores=scores, templates=templates)
    assert trace.turns == [record] and record.template == turn.template and record.accuracy == 0
    assert ex.answers == [wrong.answer] and ex.reprompts == [(turn.template, templates[turn.template].text)]
    assert scores == [0.0] and trace.tokens == 10 and trace.stop_reason == ""
    right = LearnerAnswer("The answer is 5.", 0.9)
    turn = judge_turn(ADD, ex, right, arm="rts", mode="reference", scores=scores)
    apply_turn(turn, right, trace=trace, ex=ex, scores=scores, templates=templates)
    assert trace.stop_reason == "match" and trace.final_accuracy == 1 and trace.turns[-1].template is None
    assert len(ex.reprompts) == 1 and scores == [0.0, 1.0]
