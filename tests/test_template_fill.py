"""How a template from memory is filled in the step grammar: distinct number slots use a query's number only as
often as the query writes it, and a SPARQL template's fillings are narrowed to those whose query matches the
attached ontology (real PROV-O graph, real rdflib, the bounded child process)."""

from __future__ import annotations

import re

import pytest

from rlmlab.executors import query_slots, template_rule
from rlmlab.executors._constrain import run_step_grammar
from rlmlab.executors._sparql_fill import sparql_keeper, sparql_strings
from rlmlab.executors._template_rule import number_uses
from rlmlab.ontology import PROV_TTL, load_ontology

DIVIDE = "answer = {{total:number}} / {{rate:number}}\nSUBMIT(answer=answer)"
VALUE = ('q = "SELECT ?value WHERE { {{resource:curie}} {{property:property}} ?value } LIMIT 1000"\n'
         "rows = sparql_query(q)\nSUBMIT(answer=q)")
INVERSE = ("Write a SPARQL SELECT query over PROV-O (prov:, the W3C PROV ontology) that returns the name of the "
           "inverse property recorded with prov:inverse for prov:wasDerivedFrom (one column).")


def _fillings(rule: str) -> set[str]:
    """The texts a joint template rule allows (an alternative of GBNF string literals)."""
    return {m.encode().decode("unicode_escape") for m in re.findall(r'"((?:[^"\\]|\\.)*)"', rule)}


def test_distinct_number_slots_take_a_number_only_as_often_as_the_query_writes_it():
    q = "What is 144 / 12?"
    before = _fillings(template_rule(DIVIDE, query_slots(q)))
    after = _fillings(template_rule(DIVIDE, query_slots(q), uses=number_uses(q)))
    assert any(f.startswith("answer = 12 / 12") for f in before)  # the old rule let 12 fill both slots
    assert {f.split("\n")[0] for f in after} == {"answer = 144 / 12", "answer = 12 / 144"}
    twice = "What is 2 + 2?"
    assert "answer = 2 + 2" in {f.split("\n")[0] for f in _fillings(
        template_rule("answer = {{a:number}} + {{b:number}}", query_slots(twice), uses=number_uses(twice)))}
    # one slot name used twice is one value: not limited by how often the query writes it
    square = "A square has sides of 7 cm. What is its area?"
    assert "answer = 7 * 7" in _fillings(template_rule("answer = {{side:number}} * {{side:number}}",
                                                       query_slots(square), uses=number_uses(square)))


def test_sparql_fillings_are_narrowed_to_those_that_match_the_ontology():
    graph = load_ontology(PROV_TTL)
    slots = query_slots(INVERSE)
    both = _fillings(template_rule(VALUE, slots))
    assert {"prov:inverse prov:wasDerivedFrom", "prov:wasDerivedFrom prov:inverse"} == {
        re.search(r"\{ (\S+ \S+) \?value", f).group(1) for f in both}
    kept = _fillings(template_rule(VALUE, slots, keep=sparql_keeper(graph)))
    assert len(kept) == 1 and "{ prov:wasDerivedFrom prov:inverse ?value }" in kept.pop()


def test_the_check_only_narrows_never_empties_and_leaves_other_code_alone():
    keep = sparql_keeper(load_ontology(PROV_TTL))
    empty = ['q = "SELECT ?x WHERE { prov:Entity prov:madeUp ?x }"\nSUBMIT(answer=q)',
             'q = "SELECT ?x WHERE { prov:Agent prov:madeUp ?x }"\nSUBMIT(answer=q)']
    assert keep(empty) == empty  # no filling has rows: an empty answer may be right, all stay
    code = ["answer = 144 / 12", "answer = 12 / 144"]
    assert keep(code) == code
    broken = ['q = "SELECT ?x WHERE { prov:Entity rdfs:label ?x }"\nrows = sparql_query(q)',
              'q = "SELECT ?x WHERE { rdfs:label prov:Entity ?x }"\nrows = sparql_query(q)',
              'q = "SELECT ?x WHERE { ?x nope:label"\nrows = sparql_query(q)']
    assert keep(broken) == broken[:1]
    assert sparql_strings("x = 'select ?a where {}'\ny = 'text'") == ["select ?a where {}"]
    assert sparql_strings("not python (") == []


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_query_is_checked_once_per_graph(monkeypatch):
    import rlmlab.executors._sparql_fill as fill

    calls = []
    real = fill.run_bounded
    monkeypatch.setattr(fill, "run_bounded", lambda fn, graph, queries, **kw: calls.append(list(queries)) or
                        real(fn, graph, queries, **kw))
    import rdflib

    graph = rdflib.Graph().parse(PROV_TTL)  # fresh: load_ontology's cached graph may have been checked already
    fillings = _fillings(template_rule(VALUE, query_slots(INVERSE)))
    first = sparql_keeper(graph)(sorted(fillings))
    assert sparql_keeper(graph)(sorted(fillings)) == first and len(first) == 1  # a later step: no new child
    assert len(calls) == 1 and len(calls[0]) == 2
    other = rdflib.Graph().parse(PROV_TTL)  # another graph object is checked on its own
    assert sparql_keeper(other)(sorted(fillings)) == first and len(calls) == 2


class _Run:
    """What run_step_grammar reads of a running executor: its workspace, options, records, query and context."""

    def __init__(self, ws, query):
        from types import SimpleNamespace

        self.workspace, self.query, self.context_text, self.records = ws, query, "", []
        self.options = SimpleNamespace(vocab=True, max_statements=3)


def test_a_step_with_an_attached_ontology_offers_only_the_matching_filling():
    from rlmlab.tools import TOOLS, Workspace, attach_ontology

    ws = Workspace(registry=TOOLS)
    attach_ontology(ws, PROV_TTL)
    ws.extras["step_templates"] = [{"id": "t", "title": "value", "template": VALUE}]
    grammar = run_step_grammar(_Run(ws, INVERSE), fmt="rlm", must_submit=False)
    assert "prov:wasDerivedFrom prov:inverse ?value" in grammar
    assert "prov:inverse prov:wasDerivedFrom ?value" not in grammar
    from llama_cpp import LlamaGrammar

    LlamaGrammar.from_string(grammar, verbose=False)
