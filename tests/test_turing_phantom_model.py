"""The learned phantom_tool_result model: it scores as scikit-learn does, the shipped file is what the trainer makes
from the committed labelled files, and it adds detections only where no call, earlier round or given text could
hold the data."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rlmlab.cli import main
from rlmlab.provenance import file_sha256
from rlmlab.turing import (
    PHANTOM_MODEL_PATH, PHANTOM_TRAIN_FILES, PhantomModel, Step, ToolCall, TuringProtocol, Turn, cross_validate_phantom,
    default_phantom_model, fit_phantom_model, load_eval_cases, phantom_features, phantom_rows, pick_threshold,
)
from rlmlab.turing._phantom_hook import model_may_fire, phantom_rules_verdict, turn_features

PHANTOM = "phantom_tool_result"
# A real SmolLM2 reply of the fourth narrated split (narr-p10_t0.0_s0) that no hand-written rule catches.
ASKED = "How many replicas does k8s/deployment.yaml ask for?"
SAID = "The k8s/deployment.yaml deployment configuration requires 2 replicas."


def _turn(response: str, context: str = "", calls=(), history=()) -> Turn:
    return Turn("post_inference", response=response, context=context, tool_calls=list(calls), history=list(history))


@pytest.fixture(scope="module")
def rows():
    return phantom_rows(PHANTOM_TRAIN_FILES)


def test_the_model_catches_a_real_reply_the_rules_miss_and_says_so():
    turn = _turn(SAID, ASKED)
    assert phantom_rules_verdict(turn) is None
    result = TuringProtocol().run(turn)
    assert result.hooks == [PHANTOM]
    reason = result.violations[0].reason
    assert "learned model" in reason and "no tool was called" in reason and result.correction


def test_the_model_stays_silent_where_the_turn_could_hold_the_data():
    read = ToolCall("read_file", {"path": "k8s/deployment.yaml"})
    other = ToolCall("read_file", {"path": "README.md"})
    # any call of the turn (the seed's Stage 2), even of another file: the rules judge that case, not the model
    assert not model_may_fire(_turn(SAID, ASKED, calls=[other]))
    assert TuringProtocol().run(_turn(SAID, ASKED, calls=[read])).hooks == []
    # an earlier round, of this user turn or an earlier one
    step = Step("TOOL: read_file({\"path\": \"k8s/deployment.yaml\"})", "replicas: 2\n", [read])
    assert TuringProtocol().run(_turn(SAID, ASKED, history=[step])).hooks == []
    # the user gave the number: the reply restates it
    given = "k8s/deployment.yaml sets replicas: 2. " + ASKED
    assert not model_may_fire(_turn(SAID, given))
    assert TuringProtocol().run(_turn(SAID, given)).hooks == []
    # nothing specific beyond the question's own words
    assert not model_may_fire(_turn("The k8s/deployment.yaml deployment asks for replicas.", ASKED))


def test_without_the_model_file_the_rules_decide_alone(monkeypatch):
    import rlmlab.turing._phantom_hook as phantom_hook

    monkeypatch.setattr(phantom_hook, "default_phantom_model", lambda: None)
    assert TuringProtocol().run(_turn(SAID, ASKED)).hooks == []
    # a rule's detection is untouched
    assert TuringProtocol().run(_turn("The config.toml file contains port = 8080 and workers = 4.",
                                      "What is in config.toml?")).hooks == [PHANTOM]


@pytest.mark.slow
def test_scoring_without_sklearn_equals_sklearn_predict_proba(rows):
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
    from sklearn.linear_model import LogisticRegression

    train = rows[:400]
    model = fit_phantom_model(train, c=3.0, min_df=2)
    counts = CountVectorizer(analyzer=lambda f: list(f), min_df=2, lowercase=False)
    tfidf = TfidfTransformer(sublinear_tf=True)
    x = tfidf.fit_transform(counts.fit_transform([r.features for r in train]))
    fitted = LogisticRegression(C=3.0, max_iter=5000, class_weight="balanced").fit(x, [r.expected for r in train])
    test = rows[400:460]
    expected = fitted.predict_proba(tfidf.transform(counts.transform([r.features for r in test])))[:, 1]
    got = [model.score(list(r.features)) for r in test]
    assert max(abs(a - b) for a, b in zip(got, expected)) < 1e-6
    assert len({round(p, 3) for p in got}) > 10  # real scores, not a constant


@pytest.mark.slow
def test_the_shipped_model_is_what_the_trainer_makes_from_the_committed_files(rows):
    shipped = default_phantom_model()
    assert shipped is not None and PHANTOM_MODEL_PATH.is_file()
    assert shipped.meta["trained_on"] == {p.name: file_sha256(p)["sha256"] for p in PHANTOM_TRAIN_FILES}, \
        "a training file changed: rerun `rlmlab turing train-phantom` and commit rlmlab/turing/phantom_model.json"
    refit = fit_phantom_model(rows, c=shipped.meta["c"], min_df=shipped.meta["min_df"], threshold=shipped.threshold)
    assert refit.weights.keys() == shipped.weights.keys()
    sample = [r for r in rows if not r.rules][:200]
    diffs = [abs(refit.score(list(r.features)) - shipped.score(list(r.features))) for r in sample]
    assert max(diffs) < 1e-4


@pytest.mark.slow
def test_cross_validation_leaves_one_file_out_and_the_threshold_rule_reads_it(rows):
    small = [r for r in rows if r.file in {"turing_narrated_dev.jsonl", "turing_narrated_heldout.jsonl",
                                           "turing_narrated_heldout4.jsonl"}]
    cv = cross_validate_phantom(small, thresholds=(0.3, 0.5, 0.7))
    assert cv["files"] == ["turing_narrated_dev.jsonl", "turing_narrated_heldout.jsonl",
                           "turing_narrated_heldout4.jsonl"]
    pooled = cv["model"]["pooled"]
    assert pooled["0.3"]["tp"] >= pooled["0.5"]["tp"] >= pooled["0.7"]["tp"]
    # the model only adds detections: never fewer true positives than the rules alone
    assert pooled["0.7"]["tp"] >= cv["rules"]["pooled"]["tp"]
    # on the split the rules were never tuned to, the model adds recall
    h4 = "turing_narrated_heldout4.jsonl"
    assert cv["model"][h4]["0.5"]["tp"] > cv["rules"][h4]["tp"]
    assert pick_threshold(cv, 1.0) == 0.3  # any precision will do: the most recall
    floor = cv["rules"]["pooled"]["precision"] - 0.01
    picked = pick_threshold(cv, 0.01)
    assert picked is None or cv["model"]["pooled"][str(picked)]["precision"] >= floor - 1e-9
    assert all(cv["model"]["pooled"][str(t)]["precision"] < floor for t in (0.3, 0.5, 0.7) if picked and t < picked)
    with pytest.raises(ValueError, match="at least two labelled files"):
        cross_validate_phantom([r for r in rows if r.file == "turing_narrated_dev.jsonl"])


def test_features_and_the_model_file_round_trip(tmp_path):
    f = phantom_features("The file has 3 lines: `a_b`.", "What is in notes.txt?", calls=1, rounds=0, fired=False)
    assert "r:<num>" in f and "u:<file>" in f and "G|tools:1" in f and "rule:0" in f
    assert f.count("rule:0") == 3
    grounded = _turn(SAID, ASKED, calls=[ToolCall("read_file", {"path": "k8s/deployment.yaml"})])
    assert turn_features(grounded, fired=True) == phantom_features(SAID, ASKED, calls=1, fired=True, narrated=0,
                                                                   ungrounded=0)
    model = PhantomModel({"r:a": (1.5, 2.0), "r:b": (1.0, -1.0)}, -0.5, 0.4, {"c": 1.0})
    path = model.save(tmp_path / "m.json")
    back = PhantomModel.load(path)
    assert back == model and back.score(["r:a", "r:a", "zzz"]) == pytest.approx(model.score(["r:a", "r:a"]))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="bad.json: format 'other', expected 'rlmlab.phantom_model/1'"):
        PhantomModel.load(bad)
    bad.write_text("{\n  nope")
    with pytest.raises(ValueError, match=r"bad.json:2: not JSON"):
        PhantomModel.load(bad)


@pytest.mark.slow
def test_cli_train_phantom_cross_validates_and_writes_a_model_that_loads(tmp_path):
    files = ["--data", str(PHANTOM_TRAIN_FILES[0]), "--data", str(PHANTOM_TRAIN_FILES[4])]
    out = tmp_path / "m.json"
    result = CliRunner().invoke(main, ["turing", "train-phantom", *files, "--threshold", "0.5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "heldout4" in result.output and "pooled" in result.output
    model = PhantomModel.load(out)
    assert model.threshold == 0.5
    assert set(model.meta["trained_on"]) == {PHANTOM_TRAIN_FILES[0].name, PHANTOM_TRAIN_FILES[4].name}
    cv = CliRunner().invoke(main, ["turing", "train-phantom", *files, "--cv", "--json"])
    assert cv.exit_code == 0 and json.loads(cv.stdout[cv.stdout.index("{"):])["threshold"] == \
        pick_threshold(json.loads(cv.stdout[cv.stdout.index("{"):]), 0.01)
    one = CliRunner().invoke(main, ["turing", "train-phantom", "--data", str(PHANTOM_TRAIN_FILES[0]), "--cv"])
    assert one.exit_code != 0 and "at least two labelled files" in one.output


@pytest.mark.slow
def test_labelled_files_score_with_the_shipped_model_as_the_protocol_does():
    cases = load_eval_cases(PHANTOM_TRAIN_FILES[4])
    protocol, model = TuringProtocol(), default_phantom_model()
    added = [c for c in cases if PHANTOM in protocol.run(c.turn).hooks and phantom_rules_verdict(c.turn) is None]
    assert added, "the model adds no detection on a file it was trained on"
    assert all(model.score(turn_features(c.turn, False)) >= model.threshold for c in added)
