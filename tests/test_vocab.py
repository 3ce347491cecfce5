"""Closed vocabularies in the step grammar: tree-sitter queries over tree-sitter-rust's node kinds and SPARQL over
the ontology's terms, instead of free strings; checked by llama.cpp's own parser and, on the local model, its
acceptance of whole steps."""

from __future__ import annotations

import re

import pytest

from rlmlab.executors._step_grammar import query_slots, step_grammar
from rlmlab.executors._vocab import argument_vocabularies, ontology_terms, rust_node_kinds
from rlmlab.lm import make_lm
from rlmlab.ontology import PROV_TTL, load_ontology
from rlmlab.tools import TOOLS, ToolCaps, Workspace, attach_ontology
from helpers import grammar_step


def _parse(grammar: str) -> None:
    from llama_cpp import LlamaGrammar

    LlamaGrammar.from_string(grammar, verbose=False)  # raises on a grammar llama.cpp cannot parse


def test_rust_node_kinds_come_from_tree_sitter_rust():
    kinds, fields = rust_node_kinds()
    assert {"function_item", "struct_item", "impl_item", "enum_variant", "identifier"} <= set(kinds)
    assert {"name", "return_type", "body", "trait", "type"} <= set(fields)


def test_ontology_terms_are_curies_of_the_graphs_prefixes():
    terms = set(ontology_terms(load_ontology(PROV_TTL)))
    assert {"prov:Activity", "prov:wasGeneratedBy", "rdfs:label", "owl:inverseOf"} <= terms
    assert not any(t.startswith("http") for t in terms)


def _grammar(query: str, ontology: bool = False) -> str:
    ws = Workspace(registry=TOOLS)
    if ontology:
        attach_ontology(ws, PROV_TTL)
    vocab = argument_vocabularies(ws, query_slots(query))
    assert ("sparql_query.query" in vocab) is ontology and "ast_query.query" in vocab
    return step_grammar(TOOLS, ToolCaps(), query=query, vocab=vocab)


def test_the_query_arguments_take_closed_vocabularies_and_llama_cpp_parses_the_grammar():
    code = _grammar("What does fn spawn_blocking return?")
    call = next(x for x in code.splitlines() if x.startswith("call-ast-query ::="))
    assert "ts-q" in call and '"spawn_blocking"' in code and '"function_item"' in code
    onto = _grammar("What is the domain of prov:wasGeneratedBy?", ontology=True)
    call = next(x for x in onto.splitlines() if x.startswith("call-sparql-query ::="))
    assert "sq-q" in call and '"prov:wasGeneratedBy"' in onto
    free = step_grammar(TOOLS, ToolCaps(), query="What does fn spawn return?")
    assert "ts-q" not in free  # without vocabularies the argument stays a free string
    for g in (code, onto):
        _parse(g)


@pytest.mark.local_model
def test_the_local_model_accepts_vocabulary_queries_and_rejects_made_up_node_kinds():
    engine = make_lm("local", max_tokens=64).rlmlab_engine
    query = "What does fn spawn_blocking return?"
    grammar = _grammar(query)

    def step(code: str) -> str:
        return grammar_step(query, code, "q")

    good = ("hits = ast_query(context, '(function_item name: (identifier) @name return_type: (_) @type "
            "(#eq? @name \"spawn_blocking\"))')")
    assert engine.accepts(grammar, step(good))
    assert not engine.accepts(grammar, step("hits = ast_query(context, '(function_definition name: (identifier))')"))
    onto = _grammar("What is the domain of prov:wasGeneratedBy?", ontology=True)
    sparql = 'rows = sparql_query("SELECT ?x WHERE { prov:wasGeneratedBy rdfs:domain ?x }")'
    assert engine.accepts(onto, step(sparql).replace(query, "What is the domain of prov:wasGeneratedBy?"))
    assert not engine.accepts(onto, step('rows = sparql_query("SELECT ?x WHERE { prov:madeUp rdfs:domain ?x }")')
                              .replace(query, "What is the domain of prov:wasGeneratedBy?"))


# -- an answer is computed, never typed in ---------------------------------------------------------------

def test_answer_choices_are_the_querys_own_words():
    from rlmlab.executors._step_grammar import answer_choices

    assert answer_choices("Does buf/chain.rs define a struct named Chain? Answer yes or no.") == ("yes", "no")
    assert answer_choices("Is it sorted? Reply with 'true' or 'false'.") == ("true", "false")
    assert answer_choices("How many structs does fmt/mod.rs contain?") == ()


def test_the_grammar_has_no_free_text_answer_and_inputs_only_as_tool_arguments():
    code = _grammar("How many structs does fmt/mod.rs contain?")
    submits = [x for x in code.splitlines() if x.startswith("submit-")]
    assert submits and not any("str-lit" in x for x in submits)
    assert not any(re.match(r"var-\d", x) and '"context"' in x for x in code.splitlines())
    # nothing computed yet: the first statement cannot submit (no numbers in the query, no variables)
    assert "submit-0" not in code
    last = step_grammar(TOOLS, ToolCaps(), query="How many structs does fmt/mod.rs contain?", must_submit=True,
                        max_statements=1, vocab=argument_vocabularies(Workspace(registry=TOOLS), {}))
    assert 'submit-0 ::= "SUBMIT(answer=None)"' in last
    _parse(code)
    _parse(last)


@pytest.mark.local_model
def test_the_local_model_cannot_submit_made_up_text_but_can_submit_what_code_computed():
    pytest.importorskip("llguidance")  # the engine grammar decoding uses ("auto"); llama.cpp's sampler is far slower
    from rlmlab.lm._guidance import guidance_accepts

    lm = make_lm("local", max_tokens=64).rlmlab_engine

    class engine:  # noqa: N801 - the accepts() of the engine that decodes
        @staticmethod
        def accepts(grammar: str, text: str) -> bool:
            tokens = lm.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
            return guidance_accepts(lm._decoder(), grammar, tokens, lm.llm.token_eos())

    yes_no = "Does buf/chain.rs define a struct named Chain? Answer yes or no."
    grammar = _grammar(yes_no)
    typed = ['SUBMIT(answer=")")', 'SUBMIT(answer="yes")', 'SUBMIT(answer=context)',
             'SUBMIT(answer=len(context) + len(context))', 'answer = "yes"\nSUBMIT(answer=answer)']
    for code in typed:
        assert not engine.accepts(grammar, grammar_step(yes_no, code)), code
    computed = 'hits = ctx_find(context, r"struct Chain", k=1)\nSUBMIT(answer="yes" if hits["total"] else "no")'
    assert engine.accepts(grammar, grammar_step(yes_no, computed))
    arith = "What is 12 + 30?"
    g = step_grammar(TOOLS, ToolCaps(), query=arith, vocab={})
    assert engine.accepts(g, grammar_step(arith, "SUBMIT(answer=12 + 30)"))
    assert engine.accepts(g, grammar_step(arith, "answer = 12 + 30\nSUBMIT(answer=answer)"))
    assert not engine.accepts(g, grammar_step(arith, 'SUBMIT(answer="42")'))
    onto = "What is the domain of prov:wasGeneratedBy?"
    g = _grammar(onto, ontology=True)
    select = '"SELECT ?x WHERE { prov:wasGeneratedBy rdfs:domain ?x }"'
    assert engine.accepts(g, grammar_step(onto, f"answer = {select}\nSUBMIT(answer=answer)"))  # the query is the answer
    assert engine.accepts(g, grammar_step(onto, f"rows = sparql_query({select})\nprint(rows)"))
    assert not engine.accepts(g, grammar_step(onto, 'answer = "the domain is Entity"\nSUBMIT(answer=answer)'))
