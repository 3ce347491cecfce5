"""The teacher-learner loop with the seeded demo learner on data/math20.csv (a simulator, see _learner.py)."""

import json

from rlmlab.teach import StopRules, load_csv
from rlmlab.teach._learner import DemoLearner, Exchange
from rlmlab.teach._loop import run_arm, run_item, write_traces

ITEMS = load_csv("data/math20.csv")
SOLVE = {i.question: i.reference for i in ITEMS}.__getitem__


def demo(**kw):
    return lambda: DemoLearner(SOLVE, seed=0, **kw)


def test_reference_mode_never_reprompts_a_right_answer_and_rts_fixes_what_it_targets():
    traces, single = run_arm(ITEMS, demo(error_rate=0.15), arm="single", mode="reference")
    _, rts = run_arm(ITEMS, demo(error_rate=0.15), arm="rts", mode="reference")
    assert single.accuracy == 0.95 and rts.accuracy == 1.0 and rts.wrong_to_right == 1 and rts.right_to_wrong == 0
    rts_traces, _ = run_arm(ITEMS, demo(error_rate=0.15), arm="rts", mode="reference")
    for t in rts_traces:
        for turn in t.turns:
            assert not (turn.accuracy == 1 and turn.template), "a right answer was reprompted"
    wrong = next(t for t in rts_traces if t.turns[0].accuracy == 0)
    assert wrong.turns[0].teacher_bias != "None" and wrong.turns[0].template and wrong.stop_reason == "match"


def test_reference_free_reprompting_can_hurt_and_is_reported():
    _, free = run_arm(ITEMS, demo(error_rate=0.15), arm="try_again", mode="reference_free")
    assert free.avg_turns == 3.0 and free.right_to_wrong > 0  # without the reference gate, retries churn


def test_stop_at_max_turns_and_traces_json_schema(tmp_path):
    learner = DemoLearner(SOLVE, error_rate=1.0, fix_targeted=0.0, fix_generic=0.0, seed=3)
    trace = run_item(ITEMS[1], learner, arm="rts", mode="reference", rules=StopRules(max_turns=2))
    assert len(trace.turns) == 2 and trace.stop_reason == "max_turns" and trace.final_accuracy == 0
    path = write_traces(tmp_path / "out" / "traces.json", [trace])
    doc = json.loads(path.read_text())
    assert list(doc) == ["summary", "traces"] and doc["summary"] == {"items": 1, "final_accuracy_mean": 0.0}
    [rec] = doc["traces"]
    assert list(rec) == ["qid", "question", "reference", "turns", "final_accuracy"]
    assert list(rec["turns"][0]) == ["answer", "self_conf", "teacher_bias", "teacher_conf", "template", "accuracy"]
    assert rec["turns"][0]["template"] is not None and rec["turns"][-1]["template"] is None


def test_demo_learner_is_seeded():
    a = DemoLearner(SOLVE, error_rate=0.5, seed=7).answer(Exchange(ITEMS[0].question, "q1"))
    b = DemoLearner(SOLVE, error_rate=0.5, seed=7).answer(Exchange(ITEMS[0].question, "q1"))
    assert a == b
