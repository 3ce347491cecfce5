"""Teacher heuristics, confidence buckets, every row of the RTS policy tables, templates and STOP rules."""

import json

import pytest

from rlmlab.errors import ConfigError
from rlmlab.teach import (
    BIASES, ExpectedGain, StopRules, TemplateNotFound, bucket, combine_confidence, detect_bias, load_stop_rules,
    load_templates, select_template,
)

Q = "A shop sells 12 apples a day for 30 days. How many apples does it sell?"  # reference 360


# -- bias heuristics: a positive and a negative case each ---------------------------------------------

def test_none_when_the_answer_matches_the_reference():
    assert detect_bias(Q, "It sells 360 apples.", "360").bias == "None"
    assert detect_bias(Q, "It sells 360 apples.", "360").teacher_conf == 0.95
    assert detect_bias(Q, "It sells 361 apples.", "360").bias != "None"


def test_anchoring():
    r = detect_bias(Q, "The answer is 30.", "360")
    assert (r.bias, r.teacher_conf) == ("Anchoring", 0.7)
    assert detect_bias(Q, "The answer is 42.", "360").bias != "Anchoring"


def test_availability_bandwagon():
    r = detect_bias(Q, "Everyone knows shops sell about 300.", "360")
    assert (r.bias, r.teacher_conf) == ("Availability/Bandwagon", 0.7)
    assert detect_bias(Q, "I multiplied and got 300.", "360").bias != "Availability/Bandwagon"


def test_hindsight():
    r = detect_bias(Q, "It is 350, obvious because shops round numbers.", "360")
    assert (r.bias, r.teacher_conf) == ("Hindsight", 0.65)
    assert detect_bias(Q, "It is 350.", "360").bias != "Hindsight"


def test_overgeneralization_only_when_wrong():
    r = detect_bias(Q, "Shops always sell 100 a week, so 400.", "360")
    assert (r.bias, r.teacher_conf) == ("Overgeneralization", 0.65)
    assert detect_bias(Q, "Shops always count carefully: 360.", "360").bias == "None"  # right: no bias


def test_confirmation_default_for_wrong_and_repeats_without_reference():
    r = detect_bias(Q, "I get 350.", "360")
    assert (r.bias, r.teacher_conf) == ("Confirmation", 0.6)
    # reference_free: no reference, so a repeat of an earlier answer is the cue
    assert detect_bias(Q, "Still 350.", None, previous_answers=["350"]).bias == "Confirmation"
    free = detect_bias(Q, "I get 350.", None)
    assert (free.bias, free.teacher_conf) == ("None", 0.5)  # no cue is not evidence of a right answer
    assert set(BIASES) == {"Anchoring", "Availability/Bandwagon", "Hindsight", "Overgeneralization",
                           "Confirmation", "None"}


# -- confidence ------------------------------------------------------------------------------------------

def test_combine_and_bucket_edges():
    assert combine_confidence() == 0.5 and combine_confidence(None, None) == 0.5
    assert combine_confidence(0.9, 0.6, None) == pytest.approx(0.75)
    assert combine_confidence(0.2, 0.7, 0.6) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="outside"):
        combine_confidence(1.2)
    assert bucket(0.39999) == "low" and bucket(0.4) == "mid" and bucket(0.7) == "mid" and bucket(0.70001) == "high"


# -- RTS policy: every row of both tables -------------------------------------------------------------

@pytest.mark.parametrize("bias, level, template", [
    # bias-specific rules
    ("Anchoring", "high", "counter_anchor_v1"),
    ("Confirmation", "mid", "devils_advocate_v1"), ("Confirmation", "high", "devils_advocate_v1"),
    ("Availability/Bandwagon", "mid", "evidence_only_v1"),
    ("Hindsight", "low", "recompute_no_story_v1"), ("Hindsight", "mid", "recompute_no_story_v1"),
    ("Hindsight", "high", "recompute_no_story_v1"),
    ("Overgeneralization", "low", "quantify_uncertainty_v1"), ("Overgeneralization", "mid", "quantify_uncertainty_v1"),
    # general fallbacks: high (wrong), low, default
    ("Anchoring", "low", "think_step_by_step"), ("Anchoring", "mid", "try_again_concise"),
    ("Confirmation", "low", "think_step_by_step"),
    ("Availability/Bandwagon", "high", "are_you_sure_recheck"), ("Availability/Bandwagon", "low", "think_step_by_step"),
    ("Overgeneralization", "high", "are_you_sure_recheck"),
])
def test_policy_rows(bias, level, template):
    decision = select_template(bias, level)
    assert decision.reprompt and decision.template == template
    assert template in load_templates()


def test_right_answers_are_not_reprompted_and_reference_free_calms():
    for level in ("low", "mid", "high"):
        assert select_template("None", level).reprompt is False
    assert select_template("None", "mid", reference_free=True).template == "calming_focus_v1"
    assert select_template("None", "high", reference_free=True).reprompt is False
    with pytest.raises(ValueError, match="level"):
        select_template("Anchoring", "medium")


def test_templates_file_and_unknown_id(tmp_path):
    templates = load_templates()
    assert templates["calming_focus_v1"].text == "Your prior steps look correct. Keep the answer."
    assert {t.style for t in templates.values()} == {"supportive", "neutral", "adversarial"}
    with pytest.raises(TemplateNotFound, match=r"template 'no_such_v1' is not in \S*/data/rts_templates.json"):
        templates["no_such_v1"]
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps([{"id": "x", "text": "t", "style": "rude", "cognitive_load": "low", "length": "short",
                                "bias": "None"}]))
    with pytest.raises(ConfigError, match=r"template 0 \(x\): field style"):
        load_templates(bad)


# -- STOP rules -----------------------------------------------------------------------------------------

def test_stop_rules_each_condition(tmp_path):
    rules = load_stop_rules("configs/stop_rules.yaml")
    assert rules == StopRules(3, True, True, 0.0)
    go = dict(turns=1, matched=False, scores=[0.0], expected_gain=0.0)
    assert rules.reason_to_stop(**go) is None
    assert rules.reason_to_stop(**{**go, "matched": True}) == "match"
    assert rules.reason_to_stop(**{**go, "turns": 3}) == "max_turns"
    assert StopRules(max_turns=5).reason_to_stop(turns=3, matched=False, scores=[0.5, 0.4, 0.4],
                                                 expected_gain=0.0) == "two_non_improvements"
    assert StopRules(max_turns=5).reason_to_stop(turns=3, matched=False, scores=[0.4, 0.3, 0.5],
                                                 expected_gain=0.0) is None
    assert rules.reason_to_stop(**{**go, "expected_gain": -0.1}) == "negative_expected_gain"
    cfg = tmp_path / "stop.yaml"
    cfg.write_text("stop_rules:\n  max_turn: 2\n")
    with pytest.raises(ConfigError, match="unknown keys \\['max_turn'\\]"):
        load_stop_rules(cfg)
    assert load_stop_rules(tmp_path / "missing.yaml", max_turns=2).max_turns == 2


def test_expected_gain_from_earlier_traces(tmp_path):
    assert ExpectedGain().gain("Anchoring", "high", "counter_anchor_v1") == 0.0  # no history: neutral
    turn = {"answer": "30", "self_conf": 0.9, "teacher_bias": "Anchoring", "teacher_conf": 0.7,
            "template": "counter_anchor_v1", "accuracy": 0}
    fixed = {**turn, "answer": "360", "teacher_bias": "None", "template": None, "accuracy": 1}
    broke = {**turn, "accuracy": 1}
    doc = {"summary": {"items": 3}, "traces": [{"turns": [turn, fixed]}, {"turns": [turn, fixed]},
                                               {"turns": [broke, {**turn, "accuracy": 0}]}]}
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(doc))
    gains = ExpectedGain.from_traces([path])
    level = bucket(combine_confidence(0.9, 0.7))
    assert gains.gain("Anchoring", level, "counter_anchor_v1") == pytest.approx((2 - 1) / 3)
