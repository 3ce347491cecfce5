"""Code-first learner answers: the expression grammar built from a question, the bounded evaluator of the model's
expression, the answer the judge reads, and LMLearner(decoding="code") on a scripted engine that follows grammars."""

from __future__ import annotations

import json
from fractions import Fraction
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from grammar_check import accepts
from rlmlab.cli import main
from rlmlab.lm import Completion, active_constraint, make_lm
from rlmlab.numbers import MAX_EXPONENT, ArithmeticRefused, evaluate_arithmetic
from rlmlab.teach import (
    DECODINGS, TURN_SEED_STRIDE, Exchange, LMLearner, RunConfig, answers_match, code_answer, expression_grammar,
    load_run_config, normalise_answer, read_expression, run_teach,
)
from helpers import config_error

# -- the safe evaluator -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, value", [
    ("15 * 240 / 100", Fraction(36)), ("7 - 12", Fraction(-5)), ("(8 + 5) * 3", Fraction(39)),
    ("5 / 2", Fraction(5, 2)), ("12.5 * 64 / 100", Fraction(8)), ("-(3)", Fraction(-3)), ("7 // 2", Fraction(3)),
    ("7 % 3", Fraction(1)), ("2 ** 10", Fraction(1024)), ("2 ** -2", Fraction(1, 4)), ("((((1))))", Fraction(1)),
])
def test_the_evaluator_computes_plain_arithmetic_exactly(text, value):
    assert evaluate_arithmetic(text) == value


@pytest.mark.parametrize("text, why", [
    ("__import__('os').system('true')", "Call"), ("x + 1", "Name"), ("(1).real", "Attribute"), ("'a' * 3", "Constant"),
    ("True + 1", "Constant"), ("[1][0]", "Subscript"), ("1 if 1 else 2", "IfExp"), ("(lambda: 1)()", "Call"),
    ("1 < 2", "Compare"), ("1j * 2", "Constant"), ("1 << 2", "BinOp"),
    ("1 / 0", "division by zero"), ("5 / (2 - 2)", "division by zero"), ("7 % 0", "division by zero"),
    ("0 ** -1", "division by zero"),
    ("9 ** 9 ** 9", "whole exponent"), ("2 ** 0.5", "whole exponent"), (f"2 ** {MAX_EXPONENT + 1}", "whole exponent"),
    ("99 ** 64", "out of bounds"), ("10 ** 13", "out of bounds"), ("1e999", "out of bounds"),
    ("1000000 * 1000000 * 2", "out of bounds"), ("1 / 3 ** 30", "out of bounds"),
    ("1 +" + " 1 +" * 100 + " 1", "longer than"), ("1 +", "not an arithmetic expression"),
])
def test_the_evaluator_refuses_anything_else_without_running_it(text, why):
    with pytest.raises(ArithmeticRefused, match=why):
        evaluate_arithmetic(text)


# -- the grammar built from a question ----------------------------------------------------------------------------

def test_the_expression_grammar_parses_in_llama_cpp_and_allows_only_the_questions_numbers():
    from llama_cpp import LlamaGrammar

    q = "Tom has 48 apples. He gives 15 to Ann and 9 to Ben. How many apples does Tom have left?"
    grammar = expression_grammar(q)
    LlamaGrammar.from_string(grammar, verbose=False)  # llama.cpp's own parser takes it
    for text in ("answer = 48 - 15 - 9", "answer = 48 - (15 + 9)", "answer = (48 - 15) - 9", "answer = 9 + 15"):
        assert accepts(grammar, text), text
    for text in ("answer = 48 - 15 - 10",  # a number the question does not give
                 "answer = 48 - 15 - 9 - 9",  # 9 twice: the question gives it once
                 "answer = 48",  # a number copied alone
                 "answer = len(48)", "answer = x - 15", "answer = 48 ** 2", "answer = ((48 - 15)) - 9",
                 "48 - 15 - 9", "answer = 48 - 15 - 9\nmore"):
        assert not accepts(grammar, text), text


def test_every_form_of_the_grammar_is_bounded_and_parses():
    from llama_cpp import LlamaGrammar

    none = expression_grammar("How many legs does a spider have?")  # no numbers: any integer of up to 7 digits
    many = expression_grammar("Add 1, 2, 3, 4, 5 and 6.")  # 64 multisets: past MAX_STATES, not counted
    for grammar in (none, many):
        LlamaGrammar.from_string(grammar, verbose=False)
    assert accepts(none, "answer = 8") and accepts(none, "answer = (4 + 4) * 2")
    assert not accepts(none, "answer = 12345678") and not accepts(none, "answer = ((4 + 4))")
    assert not accepts(none, "answer = " + " + ".join(["1"] * 6))  # at most 5 terms
    assert accepts(many, "answer = (1 + 2) * 3") and not accepts(many, "answer = 1")
    assert not accepts(many, "answer = ((1 + 2) * 3)")  # one level of parentheses


# -- the answer and what the judge reads from it ------------------------------------------------------------------

def test_the_answer_shows_the_working_and_the_judge_reads_the_value_not_a_number_of_the_expression():
    assert read_expression("answer = 15 * 240 / 100") == "15 * 240 / 100"
    assert read_expression("I think 36") is None
    cases = [("15 * 240 / 100", "15 * 240 / 100 = 36", "36"), ("7 - 12", "7 - 12 = -5", "-5"),
             ("90 / 4", "90 / 4 = 22.5", "22.5"), ("(8 + 5) * 3", "(8 + 5) * 3 = 39", "39"),
             ("1000 - 457", "1000 - 457 = 543", "543")]
    for expression, answer, value in cases:
        assert code_answer(expression) == answer and normalise_answer(answer) == value
    assert answers_match("15 * 240 / 100 = 36", "36") and not answers_match("15 * 240 / 100 = 36", "100")
    assert not answers_match("36 + 64 = 100", "36")
    # no value: no number at all, so the judge cannot read one of the expression's numbers as the answer
    for expression, kind in [("5 / (2 - 2)", "division by zero"), ("99 ** 64", "out of bounds"),
                             (None, "no expression"), ("x", "not computable")]:
        answer = code_answer(expression)
        assert answer == f"no answer ({kind})" and normalise_answer(answer) is None
        assert not answers_match(answer, "2") and not answers_match(answer, "5")


# -- LMLearner(decoding="code") --------------------------------------------------------------------------------------

class _CodeEngine:
    """A scripted engine that says it follows grammars; it checks each reply against the active grammar."""

    supports_constraints = True

    def __init__(self, replies: list[str]) -> None:
        self.replies, self.calls = list(replies), []

    def generate(self, messages, config, logprobs=False):
        grammar = active_constraint().grammar
        text = self.replies.pop(0)
        assert accepts(grammar, text), (grammar, text)
        self.calls.append(SimpleNamespace(messages=messages, grammar=grammar, seed=config.seed))
        tokens = [text[:9], *text[9:].split(" ")]  # "answer = " then the expression's pieces
        tokens = [tokens[0]] + [(" " if i else "") + t for i, t in enumerate(tokens[1:])]
        lps = [-0.01] + [-0.5] * (len(tokens) - 1)
        return Completion(text=text, input_tokens=20, output_tokens=len(tokens), token_logprobs=lps, tokens=tokens)


def test_the_code_learner_answers_expression_equals_value_and_gets_reprompts_as_turns():
    engine = _CodeEngine(["answer = 17 + 23", "answer = 17 * 23"])
    learner = LMLearner(SimpleNamespace(rlmlab_engine=engine), decoding="code", temperature=0.3, seed=5)
    ex = Exchange("What is 17 * 23?")
    first = learner.answer(ex)
    assert first.answer == "17 + 23 = 40" and engine.calls[0].grammar == expression_grammar(ex.question)
    assert first.self_conf == pytest.approx(0.6065, abs=1e-4)  # exp(-0.5): the expression's tokens, not the prefix
    assert learner.answer(ex) is first  # memoised: the arms share the first turn
    ex.answers.append(first.answer)
    ex.reprompts.append(("try_again_concise", "Try again, concisely."))
    second = learner.answer(ex)
    assert second.answer == "17 * 23 = 391" and answers_match(second.answer, "391")
    assert [m["role"] for m in engine.calls[1].messages] == ["system", "user", "assistant", "user"]
    assert engine.calls[1].messages[2]["content"] == "answer = 17 + 23"  # the line it wrote
    assert engine.calls[1].messages[3]["content"] == "Try again, concisely."
    assert [c.seed for c in engine.calls] == [5, 5 + TURN_SEED_STRIDE]  # each turn draws its own seed


def test_decoding_is_one_of_three_and_an_lm_that_cannot_follow_a_grammar_runs_free():
    assert DECODINGS == ("code", "grammar", "free")
    assert LMLearner(make_lm("scripted:arith"), decoding="code").decoding == "free"
    with pytest.raises(ValueError, match="code, grammar, free"):
        LMLearner(make_lm("scripted:arith"), decoding="beam")


def test_a_teach_run_records_the_code_decoding_it_used(tmp_path):
    engine = _CodeEngine(["answer = 2 + 2"] * 1 + ["answer = 17 * 23"])
    cfg = RunConfig(provider="local", demo_mode=False, limit=2, max_turns=1, modes=("reference",), decoding="code",
                    traces_out=str(tmp_path / "traces.json"))
    report = run_teach(cfg, lm=SimpleNamespace(rlmlab_engine=engine))
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["decoding"] == "code" and summary["config"]["decoding"] == "code"
    assert [t.turns[0].answer for t in report.traces[("reference", "single")]] == ["2 + 2 = 4", "17 * 23 = 391"]
    assert report.row("reference", "single").accuracy == 1.0


def test_the_run_config_and_the_cli_choose_the_decoding(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("models:\n  provider: local\n  decoding: free\n")
    assert load_run_config(path).decoding == "free"
    assert load_run_config(path).with_overrides(decoding="code").decoding == "code"
    config_error(load_run_config, path, "models:\n  decoding: beam\n", "models.decoding")
    res = CliRunner().invoke(main, ["teach", "run", "--decoding", "beam"])
    assert res.exit_code == 2 and "--decoding" in res.output
    res = CliRunner().invoke(main, ["teach", "run", "--provider", "scripted:arith", "--decoding", "code", "--limit", "2",
                                    "--mode", "reference", "--out", str(tmp_path / "t" / "traces.json"), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["decoding"] == "free"  # a scripted LM cannot follow a grammar: recorded as free
