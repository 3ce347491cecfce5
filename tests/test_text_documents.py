"""Plain text documents (a log, a table, a README) get a step space of their own (issue 53, item 3): line searches
built from the question's words that the document holds (all of them in any order, pairs, each alone; quoted
terms exactly), the context tools only, and an answer a tool computed."""

from __future__ import annotations

import json
import random
import re
from types import SimpleNamespace

import pytest

from grammar_check import accepts as grammar_accepts

from rlmlab.executors import CodeRunOptions
from rlmlab.executors._constrain import run_step_grammar
from rlmlab.executors._offer import context_kind, text_patterns, text_rules, text_search_terms
from rlmlab.tools import TOOLS, Workspace


def _log(n: int = 300, seed: int = 7) -> str:
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        level = rng.choice(["INFO", "INFO", "WARN", "ERROR", "DEBUG"])
        what = rng.choice(["disk /dev/sda1 usage 91%", "connection reset by peer", "job 42 finished",
                           "disk quota exceeded for user bob", "cache miss ratio high", "auth failure for admin"])
        lines.append(f"2026-12-06T10:{i // 60:02d}:{i % 60:02d} host-{rng.randint(1, 4)} {level} "
                     f"svc[{rng.randint(100, 999)}]: {what}")
    return "\n".join(lines) + "\n"


LOG = _log()
TRUTH = sum(1 for line in LOG.splitlines() if " ERROR " in line and "disk" in line)
PHRASINGS = ("How many ERROR lines mention disk?",
             "Count the ERROR lines that contain disk.",
             "disk + ERROR: how many lines have both? Answer with a number.")


def test_a_log_is_a_text_context():
    assert context_kind(LOG) == "text"


@pytest.mark.parametrize("query", PHRASINGS)
def test_the_search_holds_every_term_in_any_order_and_counts_right(query):
    pats = text_patterns(query, LOG)
    assert sorted(t for t, _ in text_search_terms(query, LOG)) == ["ERROR", "disk"]
    assert len(re.findall(pats[0], LOG)) == TRUTH  # the all-terms search is the first offered


def test_the_same_question_three_ways_gets_the_same_offer():
    offers = {frozenset(text_patterns(q, LOG)) for q in PHRASINGS}
    assert len(offers) == 1


def test_a_word_the_document_lacks_is_never_searched_for():
    terms = [t for t, _ in text_search_terms("How many ERROR lines mention the kraken in the log?", LOG)]
    assert terms == ["ERROR"]
    assert text_patterns("Which planet is largest?", LOG) == []


def test_quoted_terms_are_exact_unless_the_question_ignores_case():
    text = "Timeout here\ntimeout there\nno match\n"
    assert [len(re.findall(p, text)) for p in text_patterns("How many lines contain 'timeout'?", text)] == [1]
    assert [len(re.findall(p, text)) for p in
            text_patterns("How many lines contain 'timeout' (case-insensitive)?", text)] == [2]


def _run(query: str, text: str) -> SimpleNamespace:
    return SimpleNamespace(workspace=Workspace(registry=TOOLS), options=CodeRunOptions(decoding="grammar"),
                           records=[], query=query, context_text=text, traj=SimpleNamespace(notes=[]))


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_step_grammar_offers_the_searches_and_the_context_tools_only():
    query = PHRASINGS[0]
    grammar = run_step_grammar(_run(query, LOG), fmt="rlm", must_submit=False)
    pattern = text_patterns(query, LOG)[0]
    step = (f"[[ ## reasoning ## ]]\nQuestion: {query} Plan: count it\n\n[[ ## code ## ]]\n"
            f"hits = ctx_find(context, r\"{pattern}\")\nprint(hits[\"total\"])\n\n[[ ## completed ## ]]")
    assert grammar_accepts(grammar, step)
    assert not grammar_accepts(grammar, step.replace("ctx_find(context", "ast_query(context"))
    assert not grammar_accepts(grammar, step.replace(pattern, "(?m)^.*kraken.*$"))


@pytest.mark.local_model
def test_the_embedded_model_counts_error_lines_that_mention_disk():
    """The issue's own case: on a 300-line service log the run answered the literal '{answer}'."""
    from rlmlab.executors import run_rlm
    from rlmlab.lm import make_lm

    traj = run_rlm(PHRASINGS[0], LOG, lm=make_lm("local", max_tokens=256, n_threads=2), decoding="grammar",
                   max_iters=4)
    assert traj.answer.strip() == str(TRUTH), [(it.code, it.output[:100]) for it in traj.iterations]


@pytest.mark.parametrize("path", [None, "/usr/share/cargo/registry/tokio-1.24.2/src/fs/file.rs"])
@pytest.mark.slow
def test_an_answer_about_a_context_is_never_constants_the_step_typed(path):
    """Issue 53: the tour's live step answered "Find all async functions in this file" with SUBMIT(answer=1 + 1)
    (the question's "one" gave the grammar a 1). Over a document or code the answer reads a variable."""
    from pathlib import Path

    query = "Find all async functions in this file. Answer one per line as `line:text`"
    text = Path(path).read_text() if path else LOG
    grammar = run_step_grammar(_run(query, text), fmt="rlm", must_submit=True)

    def step(code: str) -> str:
        return f"[[ ## reasoning ## ]]\nQuestion: {query} Plan: count it\n\n[[ ## code ## ]]\n{code}\n\n[[ ## completed ## ]]"

    assert not grammar_accepts(grammar, step("SUBMIT(answer=1 + 1)"))
    assert not grammar_accepts(grammar, step("SUBMIT(answer=1)"))
    assert not grammar_accepts(grammar, step("answer = 1\nSUBMIT(answer=answer)"))  # constants under a name
    # a list question's answer is the matches listed (a generic operation), not their count
    listing = 'SUBMIT(answer="\\n".join(str(m["line"]) + ":" + m["text"].strip() for m in hits["matches"]))'
    assert grammar_accepts(grammar, step('hits = ctx_find(context, r"x")\n' + listing)) or path
    assert not grammar_accepts(grammar, step('hits = ctx_find(context, r"x")\nSUBMIT(answer=hits["total"])'))
    arith = run_step_grammar(_run("What is 125 + 389?", ""), fmt="rlm", must_submit=True)
    assert grammar_accepts(arith, step("SUBMIT(answer=125 + 389)").replace(query, "What is 125 + 389?"))


@pytest.mark.parametrize("path", [None, "/usr/share/cargo/registry/tokio-1.24.2/src/fs/file.rs"])
@pytest.mark.slow
def test_a_question_asking_for_every_item_is_not_answered_by_the_first_match(path):
    """The tour's step, after the step space stopped the ``1 + 1``: the embedded model found the ten async fns of
    tokio's file.rs with ``ctx_find`` and submitted ``answer["matches"][0]["text"]``, the first alone. A question
    asking for items (not one named item) is answered through every match; a question about one value still reads
    the first."""
    from pathlib import Path

    text = Path(path).read_text() if path else LOG

    def step(query: str, code: str) -> str:
        return f"[[ ## reasoning ## ]]\nQuestion: {query} Plan: list them\n\n[[ ## code ## ]]\n{code}\n\n[[ ## completed ## ]]"

    listing = 'SUBMIT(answer="\\n".join(str(m["line"]) + ":" + m["text"].strip() for m in hits["matches"]))'
    for query in ("Find all async functions in this file. Answer one per line as `line:text`.",
                  "Which functions in this file are async? Give each as line:text.",
                  "List every line that mentions `disk`."):
        find = _offered_search(query, text)
        grammar = run_step_grammar(_run(query, text), fmt="rlm", must_submit=True)
        assert not grammar_accepts(grammar, step(query, find + 'SUBMIT(answer=hits["matches"][0]["text"])'))
        assert not grammar_accepts(grammar, step(query, find + 'SUBMIT(answer=hits["matches"][0]["line"])'))
        assert grammar_accepts(grammar, step(query, find + listing)), query
    query = "What is the text of the first line that mentions an error?"
    find = _offered_search(query, text)
    grammar = run_step_grammar(_run(query, text), fmt="rlm", must_submit=True)
    assert grammar_accepts(grammar, step(query, find + 'SUBMIT(answer=hits["matches"][0]["text"])')) or path


def _offered_search(query: str, text: str) -> str:
    """A ``ctx_find`` statement the step space offers for ``query`` over ``text``: the first pattern of its
    closed vocabulary (a document's: the question's words; code's: the grep oracle's intents), else any pattern."""
    from rlmlab.executors._offer import grep_rules
    from rlmlab.memory._literals import query_slots

    kind = context_kind(text, None)
    offered = text_rules(query, text) if kind == "text" else \
        grep_rules(query, query_slots(query, text)["ident"], text) if kind == "rust" else None
    pattern = json.loads(offered["grep-pat"].strip("()").split(" | ")[0]) if offered else 'r"x"'
    return f"hits = ctx_find(context, {pattern})\n"


@pytest.mark.slow  # step grammars over two documents (about 1.5 s)
def test_a_search_result_over_a_document_is_read_as_one_value_it_holds():
    """The embedded model over the text dev split: ``answer = ctx_stats(context)`` then ``answer["total"]`` (a
    KeyError: ctx_stats holds no total), and ``SUBMIT(answer=answer["total"]["text"]["text"])`` after a search. Over
    a document a step searches, and reads a search's result as its total, a match's line or text, or an operation
    over every match, never a chain of keys."""
    query = "Count the lines in the service log that contain the word disk."
    find = _offered_search(query, LOG).replace("hits = ", "answer = ")
    run = _run(query, LOG)
    run.records = [SimpleNamespace(code=find.strip(), output="{'total': 3}")]
    grammar = run_step_grammar(run, fmt="rlm", must_submit=True)

    def step(code: str) -> str:
        return f"[[ ## reasoning ## ]]\nQuestion: {query} Plan: count\n\n[[ ## code ## ]]\n{code}\n\n[[ ## completed ## ]]"

    assert grammar_accepts(grammar, step('SUBMIT(answer=answer["total"])'))
    assert not grammar_accepts(grammar, step('SUBMIT(answer=answer["total"]["text"]["text"])'))
    assert not grammar_accepts(grammar, step('SUBMIT(answer=answer["matches"])'))  # the list of match dicts
    first = run_step_grammar(_run(query, LOG), fmt="rlm", must_submit=False)
    assert not grammar_accepts(first, step("answer = ctx_stats(context)\nprint(answer)"))
    assert grammar_accepts(first, step(find.strip() + "\nprint(answer)"))
