"""TeacherStepper on the real teach loop (seeded demo learner) and OracleView on real oracle results over tokio."""

import re

import pytest

from rlmlab.jupyter._oracle_view import FALSE_NEGATIVE, FALSE_POSITIVE, MATCH, OracleView
from rlmlab.jupyter._stepper import LiveTeachLoop, StepTurn, TeacherStepper
from rlmlab.oracle import (
    AnalysisResult, GrepOracle, TraceValidator, TreeSitterOracle, pattern_for_query, verify_structural,
)
from rlmlab.teach import (
    ARMS, TEACHER_MODES, DemoLearner, ExpectedGain, RunConfig, StopRules, load_csv, load_templates, read_traces, run_arm,
    run_teach, write_traces,
)

ITEMS = load_csv("data/math20.csv")
SOLVE = {i.question: i.reference for i in ITEMS}.get
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def demo(error_rate=0.5, seed=2):
    return DemoLearner(SOLVE, error_rate=error_rate, seed=seed)


class Recording:
    """A learner that records every reply of the learner it wraps; ``fail`` makes the next call raise once."""

    def __init__(self, base):
        self.base, self.replies, self.fail = base, [], False

    def answer(self, ex, sample=0):
        if self.fail:
            self.fail = False
            raise ConnectionError("model server went away")
        reply = self.base.answer(ex, sample)
        self.replies.append(reply)
        return reply


def tbody_rows(html, css_class):
    table = re.search(rf"<table class='{css_class}'.*?<tbody>(.*?)</tbody>", html, re.S).group(1)
    return re.findall(r"<tr[^>]*>.*?</tr>", table, re.S)


# -- TeacherStepper ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("max_turns", [3, 5])  # beyond 3, "two non-improvements" can fire before max_turns
@pytest.mark.parametrize("mode", TEACHER_MODES)
@pytest.mark.parametrize("arm", ARMS)
def test_live_loop_takes_exactly_the_turns_run_arm_takes(arm, mode, max_turns):
    rules = StopRules(max_turns=max_turns)
    expected, _ = run_arm(ITEMS, demo(), arm=arm, mode=mode, rules=rules)
    loop = LiveTeachLoop(ITEMS, demo(), arm=arm, mode=mode, rules=rules)
    steps = []
    while not loop.why_done:
        steps.append(loop.step())
    assert loop.traces == expected  # turn records, stop reasons, tokens: the adapter has not drifted from run_item
    assert len(steps) == sum(len(t.turns) for t in expected)
    assert [s.stop_reason for s in steps if s.stop_reason] == [t.stop_reason for t in expected]
    assert expected[-1].stop_reason in loop.why_done
    with pytest.raises(RuntimeError, match="answered"):
        loop.step()


def test_live_loop_uses_the_expected_gain_learned_from_history(tmp_path):
    # a churny earlier run: some reprompts turned right answers wrong, so their expected gain is negative
    history, _ = run_arm(ITEMS, DemoLearner(SOLVE, error_rate=0.5, seed=0, churn=0.6), arm="rts",
                         mode="reference_free")
    gains = ExpectedGain.from_traces([write_traces(tmp_path / "history.json", history)])
    expected, _ = run_arm(ITEMS, demo(), arm="rts", mode="reference", gains=gains)
    assert "negative_expected_gain" in [t.stop_reason for t in expected]
    loop = LiveTeachLoop(ITEMS, demo(), arm="rts", mode="reference", gains=gains)
    while not loop.why_done:
        loop.step()
    assert loop.traces == expected


def test_stepper_steps_through_finished_turns_and_disables_at_the_ends():
    traces, _ = run_arm(ITEMS[:6], demo(), arm="rts", mode="reference")
    records = [(t, rec) for t in traces for rec in t.turns]
    assert len(records) > len(traces)  # some item was reprompted, so there is a turn 2 to step to
    s = TeacherStepper(traces)
    assert s.index == 0 and len(s.turns) == len(records)
    assert s.prev_button.disabled and not s.next_button.disabled
    assert s.run_button.disabled and "no live loop" in s.why_run_disabled and "no live loop" in s.status.value
    with pytest.raises(RuntimeError, match="no live loop"):
        s.run_turn()
    s.prev()
    assert s.index == 0
    templates = load_templates()
    for i, (trace, rec) in enumerate(records):
        assert s.index == i and f"turn <b>{i + 1}</b> of {len(records)}" == s.turn_index.value
        cur = s.current
        assert (cur.qid, cur.question, cur.answer, cur.teacher_bias, cur.template) == (
            trace.qid, trace.question, rec.answer, rec.teacher_bias, rec.template)
        if rec.template:
            assert templates[rec.template].text in s.detail.value
        right = sum(r.accuracy for _, r in records[: i + 1])
        assert f"{right}/{i + 1} = " in s.detail.value
        s.next()
    assert s.index == len(records) - 1 and s.next_button.disabled and not s.prev_button.disabled
    s.next()
    assert s.index == len(records) - 1
    s.prev()
    assert s.index == len(records) - 2 and not s.next_button.disabled
    for cls, button in [("rlmlab-prev", s.prev_button), ("rlmlab-next", s.next_button),
                        ("rlmlab-run-turn", s.run_button)]:
        assert cls in button._dom_classes
    assert "rlmlab-turn-index" in s.turn_index._dom_classes and "rlmlab-stepper" in s.view._dom_classes


def test_a_reprompted_turn_shows_bucket_template_text_and_what_it_replied_to():
    traces, _ = run_arm(ITEMS, demo(error_rate=1.0), arm="rts", mode="reference")
    s = TeacherStepper(traces)
    while s.current.template is None:
        s.next()
    first = s.current
    assert first.bucket in ("low", "mid", "high") and first.template_text
    assert f"→ <b>{first.bucket}</b>" in s.detail.value and first.template_text in s.detail.value
    s.next()
    assert s.current.qid == first.qid and s.current.turn == 2 and s.current.replied_to == first.template
    assert f"replying to <code>{first.template}</code>" in s.detail.value


def test_run_turn_asks_the_learner_and_moves_to_the_new_turn_until_the_stop_rule_fires():
    loaded, _ = run_arm(ITEMS[:2], demo(), arm="rts", mode="reference")
    learner = Recording(demo(error_rate=1.0, seed=5))
    loop = LiveTeachLoop(ITEMS[2:4], learner, arm="rts", mode="reference")
    s = TeacherStepper(loaded, loop)
    before = len(s.turns)
    assert s.index == 0 and not s.run_button.disabled
    turn = s.run_turn()
    assert len(s.turns) == before + 1 and s.index == before and s.current is turn
    assert len(learner.replies) == 1 and turn.answer == learner.replies[-1].answer and turn.live
    assert turn.qid == ITEMS[2].qid and turn.turn == 1 and turn.answer in s.detail.value
    # error_rate=1.0: the first answer is wrong, so the teacher reprompts and the item goes on
    assert turn.accuracy == 0 and turn.template is not None
    runs = 1
    while not s.run_button.disabled:
        s._on_run()  # what a click does
        runs += 1
        assert len(learner.replies) == runs and s.current.answer == learner.replies[-1].answer
        assert s.index == len(s.turns) - 1 and s.next_button.disabled
    assert [t.qid for t in loop.traces] == [ITEMS[2].qid, ITEMS[3].qid]
    assert s.current.stop_reason and s.current.stop_reason in s.why_run_disabled
    assert "run disabled: all 2 item(s) answered" in s.status.value
    with pytest.raises(RuntimeError, match="answered"):
        s.run_turn()
    assert len(learner.replies) == runs


def test_a_failing_learner_is_reported_in_the_widget_and_the_turn_can_be_retried():
    learner = Recording(demo())
    s = TeacherStepper(loop=LiveTeachLoop(ITEMS[:1], learner))
    assert s.index is None and s.current is None and "No turns yet" in s.detail.value
    assert s.prev_button.disabled and s.next_button.disabled and not s.run_button.disabled
    learner.fail = True
    s._on_run()
    assert s.turns == () and "ConnectionError: model server went away" in s.status.value
    assert not s.run_button.disabled and s.run_button.description == "run next turn"
    s._on_run()
    assert len(s.turns) == 1 and s.index == 0 and "run failed" not in s.status.value


def test_static_html_lists_every_turn_and_the_bundle_has_both_forms():
    traces, _ = run_arm(ITEMS[:5], demo(), arm="rts", mode="reference")
    s = TeacherStepper(traces)
    s.next()
    html = s.static_html()
    rows = tbody_rows(html, "rlmlab-turns")
    assert len(rows) == len(s.turns) == sum(len(t.turns) for t in traces)
    for row, turn in zip(rows, s.turns):
        assert turn.qid in row and ("✓" if turn.accuracy else "✗") in row
    assert "▶" in rows[1] and "▶" not in rows[0] and "<script" not in html
    bundle = s._repr_mimebundle_()
    assert WIDGET_VIEW in bundle and "rlmlab-turns" in bundle["text/html"]
    assert bundle["text/html"].startswith("<div class='rlmlab-stepper'")


def test_stepper_reads_the_traces_json_that_teach_run_writes(tmp_path):
    out = tmp_path / "traces.json"
    run_teach(RunConfig(limit=6, error_rate=0.5, traces_out=str(out)))
    s = TeacherStepper(out)
    assert len(s.turns) == sum(len(t.turns) for t in read_traces(out)) and s.turns[0].qid == "q1"
    assert not s.turns[0].exact_combined and "vote share not kept" in s.detail.value
    s2 = TeacherStepper(str(out), LiveTeachLoop.from_config(RunConfig(limit=1)))
    assert s2.run_turn().qid == "q1" and len(s2.turns) == len(s.turns) + 1


def test_live_loop_from_config_can_skip_the_items_a_run_answered():
    config = RunConfig(limit=5)
    loop = LiveTeachLoop.from_config(config, skip=3)
    assert [i.qid for i in loop.items] == [i.qid for i in ITEMS[3:5]]
    assert loop.step().qid == ITEMS[3].qid
    assert LiveTeachLoop.from_config(config).items == ITEMS[:5]
    with pytest.raises(ValueError, match="skip: -1"):
        LiveTeachLoop.from_config(config, skip=-1)


def test_a_loop_continuing_a_run_runs_turns_until_the_dataset_is_used_up():
    # the guide's loop: after run_teach(config) answered the config's first `limit` items
    config = RunConfig(limit=17, error_rate=0.5)
    s = TeacherStepper(loop=LiveTeachLoop.continuing(config))
    assert [i.qid for i in s.loop.items] == [i.qid for i in ITEMS[17:]]
    runs = 0
    while not s.run_button.disabled:
        s._on_run()
        runs += 1
        assert not s.last_error
    assert runs >= 3 and [t.qid for t in s.loop.traces] == [i.qid for i in ITEMS[17:]]
    assert "run disabled: all 3 item(s) answered" in s.status.value
    # a run over the whole dataset leaves nothing to continue with
    assert LiveTeachLoop.continuing(RunConfig()).why_done == "the loop has no items"


def test_bare_turn_records_are_numbered_as_one_item():
    [trace] = run_arm([ITEMS[1]], demo(error_rate=1.0), arm="rts", mode="reference")[0]
    s = TeacherStepper(trace.turns)
    assert [t.turn for t in s.turns] == list(range(1, len(trace.turns) + 1)) and s.turns[0].qid is None
    assert [t.replied_to for t in s.turns[1:]] == [r.template for r in trace.turns[:-1]]
    with pytest.raises(TypeError, match="ItemTrace, TurnRecord or StepTurn"):
        TeacherStepper([{"answer": "4"}])
    assert isinstance(s.turns[0], StepTurn)


# -- OracleView ----------------------------------------------------------------------------------------------

Q_ASYNC = "Find all async functions"


@pytest.fixture(scope="module")
def source(rust_file):
    return rust_file.read_text()


@pytest.fixture(scope="module")
def async_truth(source):
    found = GrepOracle(source).ground_truth(pattern_for_query(Q_ASYNC))
    assert len(found) >= 5
    return found


def one_wrong_one_missed(truth):
    """Every real line but the first, plus a line that is no async fn (line 7 is in the file's header comment)."""
    return "\n".join(f"{i}:{t.strip()}" for i, t in truth[1:]) + "\n7:async fn invented()"


def marked(html, status):
    return [r for r in tbody_rows(html, "rlmlab-oracle-rows") if f"class='rlmlab-{status.replace('_', '-')}'" in r]


def test_grep_answer_with_a_wrong_and_a_missed_line_marks_both(rust_file, source, async_truth):
    result = TraceValidator().validate(AnalysisResult(Q_ASYNC, one_wrong_one_missed(async_truth)), source,
                                       str(rust_file))
    assert (result.status, result.verdict) == ("Failed", "HasFalsePositives")
    view = OracleView(result)
    missed_line, missed_text = async_truth[0]
    assert [(r.line, r.text) for r in view.rows if r.status == FALSE_POSITIVE] == [(7, "async fn invented()")]
    assert [(r.line, r.text) for r in view.rows if r.status == FALSE_NEGATIVE] == [(missed_line, missed_text.strip())]
    assert view.count(MATCH) == len(async_truth) - 1
    assert [r.line for r in view.rows] == sorted(r.line for r in view.rows)  # one merged list, in line order
    n = len(async_truth)
    assert view.precision == pytest.approx((n - 1) / n) and view.recall == pytest.approx((n - 1) / n)
    html = view.static_html()
    [fp] = marked(html, FALSE_POSITIVE)
    [fn] = marked(html, FALSE_NEGATIVE)
    assert "✗ FP" in fp and "invented" in fp and ">7<" in fp and "not in source" in fp and "#fde2e1" in fp
    assert "○ FN" in fn and f">{missed_line}<" in fn and "not claimed" in fn and "#fff1c2" in fn
    assert len(marked(html, MATCH)) == n - 1 and all("✓ match" in r for r in marked(html, MATCH))
    assert "verdict: <b style='color:#b42318'>HasFalsePositives</b>" in html and "Failed" in html
    assert f"precision {(n - 1) / n:.2f}, recall {(n - 1) / n:.2f}" in html and "<script" not in html
    bundle = view._repr_mimebundle_()
    assert WIDGET_VIEW in bundle and "rlmlab-false-positive" in bundle["text/html"]


def test_filter_shows_one_kind_of_row_in_the_live_view(rust_file, source, async_truth):
    view = OracleView(TraceValidator().validate(AnalysisResult(Q_ASYNC, one_wrong_one_missed(async_truth)),
                                                source, str(rust_file)))
    view.filter.value = "false negatives"
    shown = tbody_rows(view.table.value, "rlmlab-oracle-rows")
    assert len(shown) == 1 and "rlmlab-false-negative" in shown[0]
    view.filter.value = "all"
    assert len(tbody_rows(view.table.value, "rlmlab-oracle-rows")) == len(async_truth) + 1


def test_golden_trace_has_no_marks_and_full_precision_and_recall(rust_file, source, async_truth):
    answer = "\n".join(f"{i}:{t.strip()}" for i, t in async_truth)
    result = TraceValidator().validate(AnalysisResult(Q_ASYNC, answer), source, str(rust_file))
    assert result.is_golden
    view = OracleView(result)
    assert view.count(FALSE_POSITIVE) == view.count(FALSE_NEGATIVE) == 0 and view.count(MATCH) == len(async_truth)
    assert (view.precision, view.recall) == (1.0, 1.0)
    html = view.static_html()
    assert "Golden" in html and ">ExactMatch<" in html and "rlmlab-false-" not in html


def test_grep_detailed_result_without_a_trace(source, async_truth):
    answer = one_wrong_one_missed(async_truth)
    detailed = GrepOracle(source).verify_detailed(answer, Q_ASYNC)
    view = OracleView(detailed, answer=answer, query=Q_ASYNC)
    assert view.verdict == "HasFalsePositives" and view.method == "GrepOracle"
    assert view.count(FALSE_POSITIVE) == 1 and view.count(FALSE_NEGATIVE) == 1
    # without the answer only what the oracle reported wrong can be listed
    bare = OracleView(detailed)
    assert bare.count(MATCH) == 0 and bare.count(FALSE_POSITIVE) == 1 and bare.count(FALSE_NEGATIVE) == 1


def test_tree_sitter_fields_answer_with_a_wrong_and_a_missed_field(rust_file, source):
    query, answer = "List the fields of File", "std: Arc<StdFile>, buffer: Vec<u8>"
    result = TraceValidator().validate(AnalysisResult(query, answer), source, str(rust_file))
    assert (result.method, result.verdict) == ("TreeSitterOracle", "HasFalsePositives")
    view = OracleView(result)
    assert [(r.status, r.text) for r in view.rows] == [
        (MATCH, "std: Arc<StdFile>"), (FALSE_POSITIVE, "buffer: Vec<u8>"), (FALSE_NEGATIVE, "inner: Mutex<Inner>")]
    assert (view.precision, view.recall) == (0.5, 0.5)
    html = view.static_html()
    assert "buffer: Vec&lt;u8&gt;" in marked(html, FALSE_POSITIVE)[0]
    assert "inner: Mutex&lt;Inner&gt;" in marked(html, FALSE_NEGATIVE)[0]
    direct = verify_structural([TreeSitterOracle(source)], answer, query)
    assert [(r.status, r.text) for r in OracleView(direct).rows] == [(r.status, r.text) for r in view.rows]


def test_signature_missing_a_modifier_is_partial_and_names_the_missing_part(rust_file, source):
    result = TraceValidator().validate(
        AnalysisResult("What is the signature of set_len", "pub fn set_len(&self, size: u64) -> io::Result<()>"),
        source, str(rust_file))
    view = OracleView(result)
    assert [r.status for r in view.rows] == ["partial", FALSE_NEGATIVE] and view.rows[1].text == "async"
    assert view.precision is None and view.recall is None  # a signature is not a set of items
    assert "expected: <code>pub async fn set_len" in view.static_html()


def test_count_and_unverified_results_show_the_verdict_and_reason_without_rows(rust_file, source, async_truth):
    count = OracleView(TraceValidator().validate(AnalysisResult("How many async functions are there?",
                                                                str(len(async_truth) + 2)), source, str(rust_file)))
    assert count.rows == [] and count.verdict == "HasFalsePositives"
    assert f"claimed {len(async_truth) + 2}, actual {len(async_truth)}" in count.static_html()
    unverified = OracleView(TraceValidator().validate(AnalysisResult("Explain why File buffers", "because"),
                                                      source, str(rust_file)))
    html = unverified.static_html()
    assert unverified.rows == [] and "Unverified" in html and "semantic query" in html
    assert unverified.filter.layout.display == "none"
    with pytest.raises(TypeError, match="OracleResult"):
        OracleView("ExactMatch")
