"""The step space reads what a question asks, not how it is worded (issue 53): the same question in three
phrasings gets the same offer (tools, argument vocabularies, result keys, generic operations); only the echoed
question in the step's plan differs. Real Rust sources (Debian's librust-*-dev) and a real document of the
paraphrase dev split; the step grammar as run_step_grammar builds it for a run without memory."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from rlmlab.executors import CodeRunOptions
from rlmlab.executors._constrain import run_step_grammar
from rlmlab.tools import TOOLS, Workspace

BYTES = Path("/usr/share/cargo/registry/bytes-1.2.1/src/bytes.rs")
BUF_DIR = Path("/usr/share/cargo/registry/bytes-1.2.1/src/buf")
LOG = Path("data/paraphrase/text/A/docs/service.log")

PHRASINGS = {
    "traits_of": ["Which traits does Bytes implement in bytes.rs?",
                  "What traits are implemented for the `Bytes` type?",
                  "Name every trait that Bytes implements in this file."],
    "implementors": ["Which types implement Buf in this file?",
                     "List the implementors of the `Buf` trait.",
                     "What types in bytes.rs implement Buf?"],
    "count": ["How many unsafe impl blocks are there in this file? Answer with a number.",
              "Count the unsafe impl blocks in bytes.rs.",
              "What is the number of `unsafe impl` blocks in this file?"],
    "return_type": ["What does the function slice_ref return?",
                    "What is the return type of `slice_ref`?",
                    "Give the return type of fn slice_ref in bytes.rs."],
}
MODULE_PHRASINGS = ["Which file of the buf module has the most unsafe blocks?",
                    "In the buf module, which source file contains the largest number of unsafe blocks?",
                    "Across buf/, what file holds the most `unsafe` blocks?"]
TEXT_PHRASINGS = ["How many ERROR lines mention disk?",
                  "Count the lines at level ERROR that mention disk.",
                  "What is the number of ERROR entries mentioning disk?"]


def _offer(query: str, text: str) -> str:
    """The step grammar without its plan's echo of the question (the only place the wording may appear)."""
    run = SimpleNamespace(workspace=Workspace(registry=TOOLS), options=CodeRunOptions(decoding="grammar"),
                          records=[], query=query, context_text=text)
    grammar = run_step_grammar(run, fmt="rlm", must_submit=False)
    return "\n".join(line for line in grammar.splitlines() if not line.startswith("thought ::="))


def _module(path: Path) -> str:
    return "".join(f"// file: {p.relative_to(path.parent)}\n{p.read_text()}\n" for p in sorted(path.rglob("*.rs")))


@pytest.mark.parametrize("kind", sorted(PHRASINGS))
def test_three_phrasings_of_a_question_about_a_file_get_the_same_offer(kind):
    text = BYTES.read_text()
    first, *others = (_offer(q, text) for q in PHRASINGS[kind])
    for query, offer in zip(PHRASINGS[kind][1:], others):
        assert offer == first, query


def test_three_phrasings_of_an_argmax_over_a_module_get_the_same_offer_with_the_group_by_file_operation():
    text = _module(BUF_DIR)
    offers = [_offer(q, text) for q in MODULE_PHRASINGS]
    assert offers[1] == offers[0] and offers[2] == offers[0]
    assert 'max(sorted({m[\\"file\\"] for m in' in offers[0]  # the generic group-by-file argmax is offered


@pytest.mark.slow  # three step grammars over a log (about 1 s)
def test_three_phrasings_of_a_question_about_a_log_get_the_same_offer():
    text = LOG.read_text()
    offers = [_offer(q, text) for q in TEXT_PHRASINGS]
    assert offers[1] == offers[0] and offers[2] == offers[0]


def test_the_generic_operations_do_not_depend_on_the_question_words():
    """The same generic operations for a question that names none of them ("distinct", "most", "file") as for
    one that does: they come with a whole result in scope, not with the words."""
    text = _module(BUF_DIR)
    plain = _offer("Which file of the buf module has the most unsafe blocks?", text)
    ops = [line for line in plain.splitlines() if line.startswith("ops-")]
    assert ops
    other = _offer("Show me the unsafe blocks of the buf module, one per line.", text)
    assert all(op.split(" ::= ", 1)[1] in other for op in ops)
