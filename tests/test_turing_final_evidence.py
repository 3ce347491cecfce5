"""final_without_evidence reads where a SUBMIT's value comes from (issue 53, item 4): a value made only of constants
the step typed is unsupported unless the question's own numbers or earlier tool output hold them; a value that
reads a tool result, the context or an input is supported, however it is computed."""

from rlmlab.executors import run_rlm
from rlmlab.lm import make_lm
from rlmlab.tools import TOOLS
from rlmlab.turing import Step, ToolCall, TuringGuard, TuringProtocol, Turn

TOUR = "Find all async functions in this file. Answer one per line as `line:text`."
KNOWN = [spec.name for spec in TOOLS]


def guarded(query, code, history=(), reasoning="Answer."):
    """One RLM step checked as the RLM executor checks it: a guard whose context is the query, earlier steps
    recorded as the executor records them (``reasoning\\ncode``, the output, the calls made)."""
    guard = TuringGuard(TuringProtocol(), session="t", context=query)
    for n, (step_code, output) in enumerate(history, 1):
        guard.begin_turn(n)
        guard.post_inference("Look.", step_code, KNOWN)
        guard.end_turn(f"Look.\n{step_code}", output)
    guard.begin_turn(len(history) + 1)
    return guard.post_inference(reasoning, code, KNOWN)


def fired(result):
    return result.hooks == ["final_without_evidence"]


def test_tour_step_submitting_one_plus_one_is_rejected_and_named():
    result = guarded(TOUR, "SUBMIT(answer=1 + 1)")
    assert fired(result) and result.kill
    reason = result.violations[0].reason
    assert "SUBMIT(answer=1 + 1)" in reason and "constants typed in the code" in reason
    assert "1 appears in no tool output" in reason and result.correction.startswith("[TURING CORRECTION]")


def test_tour_step_after_a_peek_is_still_rejected():
    # The earlier step read the file, but 1 + 1 reads nothing of it; the peek printed no standalone 1.
    peek = ("print(ctx_peek(context, 200)['preview'])", "//! Types for working with [`File`].\nuse self::State::*;")
    assert fired(guarded(TOUR, "SUBMIT(answer=1 + 1)", [peek]))


def test_constant_only_values_fire_on_a_question_about_a_file():
    for code in ("SUBMIT(answer='42')", "SUBMIT(answer=len('abc'))", "SUBMIT(answer=str(7))",
                 "SUBMIT(answer=['12:pub async fn open()', '40:async fn stop()'])",
                 "n = 3\ntotal = n * 2\nSUBMIT(answer=total)", "FINAL_VAR('total')\ntotal = 5 + 5"):
        assert fired(guarded(TOUR, code)), code


def test_a_literal_string_answer_to_a_question_about_a_file_fires():
    result = guarded("What does the function open in this file take?", "SUBMIT(answer='path: impl AsRef<Path>')")
    assert fired(result) and "AsRef" in result.violations[0].reason


def test_a_value_read_from_a_tool_result_does_not_fire():
    search = ("hits = ctx_find(context, r'async fn', k=50)\nprint(hits['total'])", "12")
    assert guarded(TOUR, "SUBMIT(answer=hits['total'])", [search]).ok  # hits holds an earlier step's result
    assert guarded(TOUR, "hits = ctx_find(context, r'async fn')\nSUBMIT(answer=hits['total'])").ok
    lines = ("out = []\nfor m in ctx_find(context, r'async fn')['matches']:\n"
             "    out.append(f\"{m['line']}:{m['text']}\")\nSUBMIT(answer='\\n'.join(out))")
    assert guarded(TOUR, lines).ok  # a container filled from a tool result
    assert guarded(TOUR, "SUBMIT(answer=len(context))").ok  # the context handle
    assert guarded(TOUR, "SUBMIT(answer=query.upper())").ok  # an input variable


def test_printed_tool_output_supports_a_typed_value_and_other_output_does_not():
    search = ("hits = ctx_find(context, r'async fn', k=50)\nprint(hits['total'])", "12")
    assert guarded(TOUR, "SUBMIT(answer=12)", [search]).ok
    assert guarded(TOUR, "SUBMIT(answer=12 - 2)", [search, ("print(ctx_find(context, 'test')['total'])", "2")]).ok
    # what a step printed from constants, or a rejected step's correction that names the value, is no evidence
    assert fired(guarded(TOUR, "SUBMIT(answer=2)", [("print(1 + 1)", "2")]))
    rejected = ("SUBMIT(answer=1 + 1)", "[Turing] This step was not executed.\n[TURING CORRECTION] Issue: "
                "SUBMIT(answer=1 + 1) ...: 1 appears in no tool output")
    assert fired(guarded(TOUR, "SUBMIT(answer=1 + 1)", [rejected]))


def test_the_questions_own_numbers_support_a_computation():
    assert guarded("What is 125 + 389?", "SUBMIT(answer=125 + 389)").ok
    assert guarded("What is 125 + 389?", "answer = 125 + 389\nSUBMIT(answer=answer)").ok
    assert guarded("What is 15% of 240?", "SUBMIT(answer=240 * 15 / 100)").ok  # 100: percent, said in a sign
    assert guarded("Tom has 48 apples. He gives 15 to Ann and 9 to Ben. How many are left?",
                   "left = 48 - 15\nleft = left - 9\nSUBMIT(answer=left)").ok
    assert guarded("A train travels for two hours at 60 km per hour. How far does it go?",
                   "SUBMIT(answer=2 * 60)").ok  # "two": a number the question spells
    # a typed result is no computation over the question's numbers
    result = guarded("What is 125 + 389?", "SUBMIT(answer=514)")
    assert fired(result) and "514" in result.violations[0].reason


def test_turns_written_as_the_labelled_lines_write_them():
    # Turn.context is the question; history steps with fenced code, as data/turing_eval.jsonl writes them.
    seen = Step("Search.\n```python\nhits = ctx_find(context, 'async fn')\nprint(hits['total'])\n```", "10")
    turn = Turn("post_inference", response="Submit.\n```python\nSUBMIT(answer=1 + 1)\n```", history=[seen],
                context=TOUR)
    assert TuringProtocol().run(turn).hooks == ["final_without_evidence"]
    ok = Turn("post_inference", response="Submit.\n```python\nSUBMIT(answer=str(hits['total']))\n```",
              history=[seen], context=TOUR)
    assert TuringProtocol().run(ok).ok
    # code that does not parse never runs its SUBMIT; unknown names and calls count as read, not typed
    for code in ("SUBMIT(answer=1 +", "SUBMIT(answer=sorted(set(ids)))", "SUBMIT(answer=helper(2))"):
        assert TuringProtocol().run(Turn("post_inference", response=f"```python\n{code}\n```",
                                         context=TOUR)).ok, code
    called = Turn("post_inference", response="```python\nx = 7\nrun_check(x)\nSUBMIT(answer=x)\n```",
                  tool_calls=[ToolCall("run_check", {})], context=TOUR)
    assert TuringProtocol().run(called).ok  # x was passed to a call that may have filled it


def test_rlm_run_rejects_the_tour_step_then_accepts_the_computed_answer(rust_file):
    text = rust_file.read_text()
    steps = [{"reasoning": "Two.", "code": "SUBMIT(answer=1 + 1)"},
             {"reasoning": "Search.", "code": "hits = ctx_find(context, r'async fn', k=50)\nprint(hits['total'])"},
             {"reasoning": "Submit.", "code": "SUBMIT(answer=str(hits['total']))"}]
    traj = run_rlm(TOUR, text, lm=make_lm("scripted", script=steps), turing=TuringProtocol())
    first = traj.iterations[0]
    assert first.turing[0]["hooks"] == ["final_without_evidence"] and first.turing[0]["kill"]
    assert "not executed" in first.output and "SUBMIT(answer=1 + 1)" in first.output
    assert [it.turing for it in traj.iterations[1:]] == [[], []]
    assert traj.submitted and traj.answer == str(text.count("async fn"))


def test_a_value_decided_by_a_tool_result_is_supported():
    # constants assigned or submitted under a loop over, or a condition on, a result count that result
    count = "n = 0\nfor m in ctx_find(context, r'async fn')['matches']:\n    n += 1\nSUBMIT(answer=n)"
    assert guarded(TOUR, count).ok
    branch = ("hits = ctx_find(context, r'async fn')\nif hits['total'] == 0:\n    SUBMIT(answer='no match in source')\n"
              "else:\n    SUBMIT(answer=hits['total'])")
    assert guarded(TOUR, branch).ok
    assert fired(guarded(TOUR, "SUBMIT(answer='no match in source')"))  # the same words, decided by nothing
    assert fired(guarded(TOUR, "n = 0\nfor i in range(3):\n    n += 2\nSUBMIT(answer=n)"))  # a loop over constants
