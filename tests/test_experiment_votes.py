"""Voted samples (E13): answer normalisation and majority, per-rollout sampling LMs, the vote in a scripted run,
pass@1 / maj@N / pass@N / golden yield in the summary, and config errors for the new condition keys."""

from __future__ import annotations

import dspy
import pytest

from rlmlab.errors import ConfigError
from rlmlab.experiments import (
    load_experiment, majority, vote_key, read_results, results_table, run_experiment, sample_lm,
    select_rollout, summarise,
)
from rlmlab.experiments._runner import _merge
from rlmlab.lm import CallRecorder, ScriptedEngine, make_lm, recorder_of
from rlmlab.memory import MemoryTask
from rlmlab.learning import TaskOutcome
from helpers import answer_lm, experiment_file


# -- vote_key / majority -------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["514", "514.0", " 514 ", "$514", "514.", "'514'", "514.000"])
def test_numeric_forms_of_one_number_agree(text):
    assert vote_key(text) == "514"


@pytest.mark.parametrize("text, key", [
    ("  Tokio::Spawn \n now ", "tokio::spawn now"), ('"Burst, Delay, Skip."', "burst, delay, skip"),
    ("1,234", "1234"), ("3/4", "0.75"), ("-$5", "-5"), ("about 514 apples", "about 514 apples"),
    ("514 apples", "514 apples"),  # a number inside text stays text: no vote for an unrelated count
])
def test_normalise_answer_text_and_numbers(text, key):
    assert vote_key(text) == key


@pytest.mark.parametrize("text", [None, "", "   ", '""', "."])
def test_no_answer_normalises_to_none(text):
    assert vote_key(text) is None


@pytest.mark.parametrize("answers, picked", [
    (["7", "9", "7"], 0),                   # the majority, its first rollout
    (["9", "7", "7"], 1),
    (["9", "7", "7", "9"], 0),              # tie: the first rollout with one of the tied answers
    (["7", "9", "9", "7"], 0),
    ([None, "9", "7"], 1),                  # no answer does not vote; tie between 9 and 7 -> first of them
    ([None, "", "4", None], 2),
    ([None, None, "  "], 0),                # nobody answered: rollout 0
    (["514", "$514", "514.0", "513"], 0),   # numeric forms vote together
    (["x", "513", "514.0", "$514"], 2),
])
def test_majority(answers, picked):
    assert majority(answers) == picked


def test_majority_of_nothing_and_unknown_selection_raise():
    with pytest.raises(ValueError):
        majority([])
    with pytest.raises(ConfigError, match="selection: 'best'"):
        select_rollout("best", ["1"], [1.0])


def test_settled_holds_exactly_when_no_later_answers_can_change_the_pick():
    import itertools

    from rlmlab.learning import settled, settling_size

    seen = ("A", "B", "C", None)
    for total in range(1, 6):
        for k in range(1, total):
            for prefix in itertools.product(seen, repeat=k):
                pick = majority(list(prefix))
                # "D": an answer none of the first k gave
                fixed = all(majority([*prefix, *rest]) == pick
                            for rest in itertools.product((*seen, "D"), repeat=total - k))
                assert settled(list(prefix), total) == fixed, (prefix, total)
        assert settled(["A"] * total, total) and not settled([None] * (total - 1), total)
    assert settled(["7", "7.0", "$7"], 5)  # normalised answers agree
    assert [settling_size(n) for n in (2, 3, 4, 5, 6)] == [2, 2, 3, 3, 4]
    with pytest.raises(ValueError, match="3 answers of a vote of 2"):
        settled(["A", "A", "A"], 2)


def test_select_rollout_by_score_and_by_vote_differ_on_the_same_rollouts():
    answers, scores = ["7", "9", "7"], [0.0, 1.0, 0.0]
    assert select_rollout("score", answers, scores) == 1
    assert select_rollout("vote", answers, scores) == 0
    assert select_rollout("score", ["1", "2"], [0.5, 0.5]) == 0  # equal scores: the first


def _outcome(i: int, answer: str | None, success: bool) -> TaskOutcome:
    return TaskOutcome("run", "t", None, "auto_inject", [f"run-t-r{i}"], [answer],
                       [{"success": success, "score": float(success)}], 0, 0, [], rollouts=[{}])


def test_merge_of_separate_units_uses_the_same_rule_as_the_loop():
    parts = [_outcome(0, "7", False), _outcome(1, "9", True), _outcome(2, "7.0", False)]
    assert _merge(parts, "score").best == 1
    voted = _merge(parts, "vote")
    assert voted.best == 0 and voted.answers == ["7", "9", "7.0"] and not voted.success


# -- the sampling LM of a rollout --------------------------------------------------------------------------

def test_sample_lm_copies_temperature_and_seed_and_keeps_the_recorder():
    lm = make_lm("scripted", script=["one", "two"])
    recorder = recorder_of(lm)
    sampled = sample_lm(lm, 0.9, 3)
    assert sampled is not lm and sampled.kwargs["temperature"] == 0.9 and sampled.kwargs["seed"] == 3
    assert lm.kwargs["temperature"] == 0.0 and "seed" not in lm.kwargs  # the run's LM is untouched
    before = len(recorder.calls)
    sampled("hello")
    assert len(recorder.calls) == before + 1 and recorder.calls[-1].input_tokens > 0  # where trajectories look


def test_sample_lm_reattaches_a_recorder_a_copy_lost(monkeypatch):
    lm = make_lm("scripted", script=["one"])
    recorder = recorder_of(lm)
    real_copy = dspy.LM.copy

    def forgetful(self, **kwargs):
        out = real_copy(self, **kwargs)
        out.callbacks = []
        return out

    monkeypatch.setattr(dspy.LM, "copy", forgetful)
    sampled = sample_lm(lm, 0.5, 1)
    assert [cb for cb in sampled.callbacks if isinstance(cb, CallRecorder)] == [recorder]


def test_sample_lm_returns_other_lm_objects_as_they_are():
    other = object()
    assert sample_lm(other, 0.7, 1) is other


# -- a voted run with the scripted LM -------------------------------------------------------------------------

def _arith(task_id: str, query: str, expected: str) -> MemoryTask:
    return MemoryTask(task_id, query, "no context needed", None, expected, "numeric", {"suite": "arith", "level": 1})


@pytest.mark.slow
def test_three_samples_vote_without_a_reference_and_pass_at_1_maj_and_pass_at_n_differ(tmp_path):
    config = experiment_file(tmp_path, "base: {layers: {}, max_iters: 2, samples: 3, temperature: 0.7}\n")
    lm, engine = answer_lm(["7", "9", "7",        # expected 9: only rollout 1 is right, the vote picks 7
                      "5", "5.0", "$5"])    # expected 5: every rollout right, in three forms
    tasks = [_arith("nine", "What is 4 + 5?", "9"), _arith("five", "What is 2 + 3?", "5")]
    run = run_experiment(config, lm=lm, task_list=tasks, runs_dir=tmp_path, progress=False)
    rows = read_results(run.run_dir / "results.jsonl")
    assert [(r["task_id"], r["rollout"], r["answer"], r["success"], r["best"]) for r in rows] == [
        ("nine", 0, "7", False, True), ("nine", 1, "9", True, False), ("nine", 2, "7", False, False),
        ("five", 0, "5", True, True), ("five", 1, "5.0", True, False), ("five", 2, "$5", True, False)]
    assert {(r["selected_by"], r["samples"], r["decoding"], r["templates"], r["salvaged"]) for r in rows} == {
        ("vote", 3, "free", False, 0)}  # grammar asked (the default), but the scripted LM cannot follow one
    assert {r["decoding_asked"] for r in rows} == {"grammar"}
    s = run.summary["main"]
    assert (s["pass_at_1"], s["maj_at_n"], s["pass_at_n"]) == (0.667, 0.5, 1.0)
    assert s["pass_rate"] == s["maj_at_n"] and s["rollouts_per_task"] == 3 and s["golden_yield"] is None
    assert (s["decoding"], s["decoding_asked"]) == ("free", "grammar")
    # time / task is what a task cost: its three rollouts added, not the mean of one rollout
    per_task = [sum(r["elapsed_ms"] for r in rows if r["task_id"] == t) for t in ("nine", "five")]
    assert s["mean_elapsed_ms"] == pytest.approx(sum(per_task) / 2, abs=1)
    assert s["mean_elapsed_ms"] > sum(r["elapsed_ms"] for r in rows) / len(rows) or not any(per_task)
    # rollout i sampled at the condition's temperature with seed i + 1: what the engine was asked for
    assert engine.configs == [(0.7, 1), (0.7, 2), (0.7, 3)] * 2
    table = repr(results_table(run.run_dir))
    assert "pass@1" in table and "maj@N" in table and "pass@N" in table and "off-format" in table


@pytest.mark.slow
def test_judged_rollouts_keep_the_best_score_and_report_the_vote_they_did_not_take(tmp_path):
    config = experiment_file(tmp_path, "base: {layers: {}, max_iters: 2, rollouts: 3}\n")
    lm, engine = answer_lm(["7", "9", "7"])
    run = run_experiment(config, lm=lm, task_list=[_arith("nine", "What is 4 + 5?", "9")], runs_dir=tmp_path,
                         progress=False)
    rows = read_results(run.run_dir / "results.jsonl")
    assert [r["best"] for r in rows] == [False, True, False] and {r["selected_by"] for r in rows} == {"score"}
    s = run.summary["main"]
    assert (s["pass_rate"], s["pass_at_1"], s["maj_at_n"], s["pass_at_n"]) == (1.0, 0.333, 0.0, 1.0)
    assert engine.configs == [(0.0, None)] * 3  # judged rollouts are not re-sampled


class _SeededEngine(ScriptedEngine):
    """Answers by the request's seed, so rollouts give the same answers in whatever order threads run them."""

    def __init__(self, answers: dict[int | None, str]):
        super().__init__([])
        self.answers = answers

    def generate(self, messages, config):
        from rlmlab.lm import Completion, format_fields

        answer = self.answers[getattr(config, "seed", None)]
        return Completion(format_fields({"reasoning": "r", "code": f"SUBMIT(answer={answer!r})"}), 10, 5)


@pytest.mark.slow
def test_samples_run_as_separate_units_vote_the_same_way(tmp_path):
    config = experiment_file(tmp_path, "base: {layers: {}, max_iters: 2, samples: 3}\n")
    lm = dspy.LM("rlmlab/scripted", engine=_SeededEngine({1: "9", 2: "7", 3: "7.0"}), cache=False,
                 callbacks=[CallRecorder()], temperature=0.0, max_tokens=512, num_retries=0)
    tasks = [_arith("nine", "What is 4 + 5?", "9"), _arith("seven", "What is 3 + 4?", "7")]
    run = run_experiment(config, lm=lm, task_list=tasks, runs_dir=tmp_path, progress=False, workers=2)
    rows = sorted(read_results(run.run_dir / "results.jsonl"), key=lambda r: (r["task_id"], r["rollout"]))
    assert [(r["task_id"], r["answer"], r["success"], r["best"]) for r in rows] == [
        ("nine", "9", True, False), ("nine", "7", False, True), ("nine", "7.0", False, False),
        ("seven", "9", False, False), ("seven", "7", True, True), ("seven", "7.0", True, False)]
    s = run.summary["main"]
    assert (s["pass_at_1"], s["maj_at_n"], s["pass_at_n"]) == (0.5, 0.5, 1.0) and s["pass_rate"] == 0.5


def test_the_loop_refuses_an_unknown_selection(tmp_path):
    from rlmlab.memory import MemoryStore
    from rlmlab.learning import ReasoningBankLoop

    with MemoryStore(tmp_path / "m.sqlite") as store, pytest.raises(ConfigError, match="selection: 'judge'"):
        ReasoningBankLoop(store, executor=lambda *a: None, selection="judge")


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_golden_yield_counts_code_rollouts_the_oracles_accept(tmp_path, rust_file):
    from rlmlab.oracle import AnalysisResult, TraceValidator

    text, query = rust_file.read_text(), "How many pub async fn are in file.rs?"
    # the count the code oracle accepts (it reads the source its own way; the runner only has to ask it)
    validator = TraceValidator()
    n = next(k for k in range(1, 100)
             if validator.validate(AnalysisResult(query, str(k)), text, str(rust_file)).is_golden)
    task = MemoryTask("async", query, text, "crate:tokio", n, "numeric",
                      {"source_path": str(rust_file), "suite": "code", "level": 2})
    config = experiment_file(tmp_path, "base: {layers: {}, max_iters: 2, samples: 3}\n")
    lm, _ = answer_lm([str(n + 1), str(n), str(n)])
    run = run_experiment(config, lm=lm, task_list=[task], runs_dir=tmp_path, progress=False)
    rows = read_results(run.run_dir / "results.jsonl")
    assert [r["golden"] for r in rows] == [False, True, True] and [r["best"] for r in rows] == [False, True, False]
    assert run.summary["main"]["golden_yield"] == 0.667 and run.summary["main"]["pass_rate"] == 1.0


@pytest.mark.slow
def test_golden_reads_a_yes_no_or_return_type_question_as_that_question_not_as_a_listing(tmp_path, rust_file):
    """The trace validator alone read "Does P define struct X?" as a count of structs (a right "yes" failed) and
    had no oracle for return types; the golden check now asks the oracle judge, narrower question first, and a
    question no oracle decides has no golden verdict (None) instead of a failing one."""
    text = rust_file.read_text()
    meta = {"source_path": str(rust_file), "suite": "code", "level": 1}
    tasks = [MemoryTask("defines", "Does fs/file.rs define a pub struct named File? Answer yes or no.", text,
                        "crate:tokio", "yes", "exact", dict(meta)),
             MemoryTask("returns", "Which type does metadata (fs/file.rs) return? Answer with the type only.", text,
                        "crate:tokio", "io::Result<Metadata>", "exact", dict(meta)),
             MemoryTask("explain", "Explain why File buffers its writes.", text, "crate:tokio", "x", "exact",
                        dict(meta))]
    config = experiment_file(tmp_path, "base: {layers: {}, max_iters: 2, samples: 2}\n")
    lm, _ = answer_lm(["yes", "no", "io::Result<Metadata>", "Metadata", "because", "it is faster"])
    run = run_experiment(config, lm=lm, task_list=tasks, runs_dir=tmp_path, progress=False)
    rows = sorted(read_results(run.run_dir / "results.jsonl"), key=lambda r: (r["task_id"], r["rollout"]))
    assert [(r["task_id"], r["answer"], r["golden"]) for r in rows] == [
        ("defines", "yes", True), ("defines", "no", False), ("explain", "because", None),
        ("explain", "it is faster", None), ("returns", "io::Result<Metadata>", True), ("returns", "Metadata", False)]
    assert run.summary["main"]["golden_yield"] == 0.5  # of the rollouts an oracle could decide


def test_summary_of_rows_written_before_votes_existed_keeps_its_keys_and_table():
    from rlmlab.experiments._report import TABLE_COLUMNS, ResultsTable

    metrics = {k: 1 for k in ("converged", "input_tokens", "output_tokens", "lm_calls", "iterations", "tool_calls",
                              "stdout_chars", "variables_info_chars", "large_returns", "sub_llm_calls",
                              "prompt_chars_mean", "context_chars", "elapsed_ms")}
    old = [{"condition": "main", "task_id": "t", "rollout": 0, "best": True, "success": True, "answer": "4", **metrics}]
    s = summarise(old)["main"]
    assert s["pass_rate"] == s["pass_at_1"] == s["maj_at_n"] == s["pass_at_n"] == 1.0
    assert s["mean_salvaged"] is None and s["golden_yield"] is None and s["selected_by"] is None
    assert (s["decoding"], s["decoding_asked"]) == (None, None)  # rows from before decoding was recorded
    assert ResultsTable({"run": {"main": s}}).columns == [*TABLE_COLUMNS[:2], "ci", "errors", *TABLE_COLUMNS[2:]]


# -- config ----------------------------------------------------------------------------------------------------

def test_new_condition_keys_load_with_their_defaults(tmp_path):
    cond = load_experiment(experiment_file(tmp_path, "base: {}\n")).conditions[0]
    assert (cond.decoding, cond.templates, cond.samples, cond.temperature) == ("grammar", False, 1, 0.7)
    assert (cond.selection, cond.runs_per_task) == ("score", 1)
    assert load_experiment(experiment_file(tmp_path, "base: {decoding: free}\n")).conditions[0].decoding == "free"
    body = "base: {decoding: grammar, templates: on, layers: {L2: true}, samples: 4, temperature: 1}\n"
    cond = load_experiment(experiment_file(tmp_path, body)).conditions[0]
    assert (cond.decoding, cond.templates, cond.samples, cond.temperature) == ("grammar", True, 4, 1.0)
    assert (cond.selection, cond.runs_per_task) == ("vote", 4) and isinstance(cond.temperature, float)
    assert cond.to_dict()["templates"] is True


@pytest.mark.parametrize("body, message", [
    ("base: {samples: 3, rollouts: 2}\n", "base: samples: 3 cannot be combined with rollouts 2"),
    ("base: {rollouts: 2}\nconditions: [{name: a}, {name: b, samples: 2}]\n",
     "conditions.1: samples: 2 cannot be combined with rollouts 2"),
    ("base: {templates: true}\n", "base: templates: on needs the L2 layer"),
    ("base: {templates: on, layers: {L0: true}}\n", "templates: on needs the L2 layer"),
    ("base: {templates: maybe}\n", "base.templates: 'maybe' is not of type 'boolean'"),
    ("base: {decoding: beam}\n", "base.decoding: 'beam' is not one of ['free', 'grammar']"),
    ("base: {samples: 0}\n", "base.samples: 0 is less than the minimum of 1"),
    ("base: {vote_stop: settled}\n", "base: vote_stop: settled stops a vote early; it needs samples > 1"),
    ("base: {samples: 3, vote_stop: soon}\n", "base.vote_stop: 'soon' is not one of ['all', 'settled']"),
    ("base: {samples: 17}\n", "base.samples: 17 is greater than the maximum of 16"),
    ("base: {samples: 2.5}\n", "base.samples: 2.5 is not of type 'integer'"),
    ("base: {temperature: 0}\n", "base.temperature: 0 is less than or equal to the minimum of 0"),
    ("base: {temperature: 2.5}\n", "base.temperature: 2.5 is greater than the maximum of 2"),
    ("base: {retrieval: {policy: success_only, k_failure: 0}}\n",
     "base: retrieval: k_failure does not apply to policy success_only"),
])
def test_bad_new_keys_name_the_file_and_key(tmp_path, body, message):
    path = experiment_file(tmp_path, body)
    with pytest.raises(ConfigError) as err:
        load_experiment(path)
    assert path in str(err.value) and message in str(err.value)


def test_a_rollouts_override_refuses_a_voting_condition(tmp_path):
    config = experiment_file(tmp_path, "base: {samples: 3}\n")
    with pytest.raises(ConfigError, match=r"rollouts 2: condition\(s\) main vote over samples"):
        run_experiment(config, lm="scripted:probe", task_list=[_arith("a", "What is 1 + 1?", "2")],
                       runs_dir=tmp_path, progress=False, rollouts=2)


def test_e13_declares_its_four_conditions():
    e = load_experiment("E13")
    assert [c.name for c in e.conditions] == ["free", "grammar", "grammar_templates", "vote5"]
    assert [(c.decoding, c.templates, c.samples, c.layers.enabled()) for c in e.conditions] == [
        ("free", False, 1, []), ("grammar", False, 1, []), ("grammar", True, 1, ["L2"]), ("grammar", True, 5, ["L2"])]
    vote = e.condition("vote5")
    assert vote.seed_packs == ("data/packs/step_templates.jsonl",) and vote.budgets.L2 == 1500
    assert vote.retrieval == {"policy": "templates"}  # k=1 by query shape and words, no failure items
    assert vote.temperature == 0.7 and {c.max_iters for c in e.conditions} == {3}
    assert e.defaults == {"suite": "arith", "tasks": 10, "lm": "local", "workers": 1}
