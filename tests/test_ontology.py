"""L0 Ont-Sense cards, grounding, L1 constraints and anti-patterns, validate_sparql and sparql_query on real files."""

from __future__ import annotations

import glob
import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import Graph

from rlmlab.errors import ToolError
from rlmlab.errors import ConfigError
from rlmlab.handles import BlobRef
from rlmlab.ontology import (
    BRIEF_BUDGET, CARD_BUDGET, DEFAULT_ANTIPATTERNS, FINDING_KINDS, ONTOLOGY_DIR, PROV_TTL, SKOS_TTL, PropertyConstraint,
    constraints_from_graph, crate_sense_card, grounding_check, load_antipatterns, load_ontology,
    ontology_cache_info, pack_constraints, sense_brief, sense_card, validate_sparql,
)
from rlmlab.tools import TOOLS
from rlmlab.tools._sparql import attach_ontology

PROV = "http://www.w3.org/ns/prov#"
PRE = f"PREFIX prov: <{PROV}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"


@pytest.fixture(scope="module")
def prov() -> Graph:
    return load_ontology(PROV_TTL)


@pytest.fixture(scope="module")
def skos() -> Graph:
    return load_ontology(SKOS_TTL)


@pytest.fixture(scope="module")
def prov_constraints(prov) -> list[PropertyConstraint]:
    return constraints_from_graph(prov)


def kinds(findings) -> list[str]:
    return [f.kind for f in findings]


# -- vendored data ----------------------------------------------------------------------------------------

def test_vendored_ontologies_carry_their_licence():
    assert PROV_TTL.is_file() and SKOS_TTL.is_file()
    note = (ONTOLOGY_DIR / "LICENSE.md").read_text()
    assert "W3C Software and Document" in note and "https://www.w3.org/ns/prov" in note and "skos/core" in note


def test_loader_parses_each_file_once_and_reloads_an_edited_copy(tmp_path):
    assert load_ontology(PROV_TTL) is load_ontology(str(PROV_TTL))
    copy = tmp_path / "skos.ttl"
    shutil.copyfile(SKOS_TTL, copy)
    first = load_ontology(copy)
    before = ontology_cache_info()
    assert load_ontology(copy) is first and ontology_cache_info()["hits"] == before["hits"] + 1
    with copy.open("a") as f:
        f.write("\n<urn:x:a> <urn:x:b> <urn:x:c> .\n")
    os.utime(copy, ns=(1, 2))  # a different mtime, whatever the clock resolution
    again = load_ontology(copy)
    assert again is not first and len(again) == len(first) + 1
    with pytest.raises(ConfigError, match="no loader for suffix '.txt'"):
        load_ontology(Path(shutil.copyfile(SKOS_TTL, tmp_path / "x.txt")))
    with pytest.raises(ConfigError, match="cannot read it"):
        load_ontology(tmp_path / "missing.ttl")


# -- L0 sense card and brief ------------------------------------------------------------------------------

def test_prov_card_is_bounded_deterministic_and_useful(prov):
    card = sense_card(prov)
    assert len(card) <= CARD_BUDGET
    assert card == sense_card(PROV_TTL) == sense_card(Graph().parse(PROV_TTL))  # a fresh parse, rdflib's prefixes
    assert f"PREFIX prov: <{PROV}>" in card
    assert "prov:Entity prov:wasGeneratedBy prov:Activity" in card and "prov:Activity prov:used prov:Entity" in card
    assert "roots: prov:Influence(" in card and "classes: prov:Entity prov:Activity prov:Agent" in card


def test_skos_card_and_smaller_budgets(skos):
    card = sense_card(skos)
    assert len(card) <= CARD_BUDGET and card == sense_card(SKOS_TTL)
    assert "skos:Concept" in card and "skos:ConceptScheme skos:hasTopConcept skos:Concept" in card
    for budget in (0, 40, 120, 300):
        small = sense_card(skos, budget=budget)
        assert len(small) <= budget and grounding_check(small, skos).ok


@pytest.mark.parametrize("name", ["prov", "skos"])
@pytest.mark.parametrize("render", [sense_card, sense_brief], ids=["card", "brief"])
def test_card_and_brief_are_fully_grounded(request, name, render):
    graph = request.getfixturevalue(name)
    text = render(graph)
    report = grounding_check(text, graph)
    assert report.rate == 1.0 and report.ok, report.reasons
    assert report.total >= 10  # it really mentions terms
    assert len(text) <= (CARD_BUDGET if render is sense_card else BRIEF_BUDGET)


def test_brief_has_sections_and_domains(prov):
    brief = sense_brief(prov)
    assert brief == sense_brief(PROV_TTL)
    for section in ("## Namespaces", "## Class hierarchy", "## Properties (domain -> range)", "## Notes"):
        assert section in brief
    assert "prov:used: prov:Activity -> prov:Entity" in brief
    assert "\n  prov:Plan\n" in brief  # indented under prov:Entity
    assert len(sense_brief(prov, budget=1500)) <= 1500


def test_fabricated_terms_fail_grounding(prov):
    card = sense_card(prov) + "\nask: prov:Entity prov:wasGeneratedByX prov:Activity; <http://example.org/fake#Thing> foo:Bar"
    report = grounding_check(card, prov)
    assert set(report.missing) == {"prov:wasGeneratedByX", "<http://example.org/fake#Thing>", "foo:Bar"}
    assert "prefix 'foo'" in report.reasons["foo:Bar"] and report.rate < 1.0 and not report.ok
    assert json.loads(json.dumps(report.to_dict()))["missing"] == report.missing


# -- L1 constraints ---------------------------------------------------------------------------------------

def test_constraints_from_prov_and_skos(prov_constraints, skos):
    by = {c.property: c for c in prov_constraints}
    used = by[PROV + "used"]
    assert (used.domain, used.range, used.kind) == ((PROV + "Activity",), (PROV + "Entity",), "object")
    assert used.text == "prov:used: prov:Activity -> prov:Entity"
    assert set(by[PROV + "atLocation"].domain) == {PROV + c for c in ("Activity", "Agent", "Entity", "InstantaneousEvent")}
    assert PROV + "Plan" in by[PROV + "wasGeneratedBy"].domain_ok  # a subclass of prov:Entity fits
    assert PropertyConstraint.from_dict(json.loads(json.dumps(used.to_dict()))) == used
    broader = {c.property: c for c in constraints_from_graph(skos)}["http://www.w3.org/2004/02/skos/core#broader"]
    assert broader.domain_from == "http://www.w3.org/2004/02/skos/core#semanticRelation"  # inherited


def test_antipattern_pack_is_curated_and_covers_every_finding_kind():
    items = load_antipatterns()
    assert 6 <= len(items) <= 12 and len({a.id for a in items}) == len(items)
    assert all(a.title and a.description and 0 < len(a.content) <= 100 for a in items)
    assert {k for k in FINDING_KINDS.values() if k} <= {a.id for a in items}
    assert DEFAULT_ANTIPATTERNS.name == "sparql_antipatterns.jsonl"


def test_malformed_antipattern_line_is_rejected_with_line_and_field(tmp_path):
    bad = tmp_path / "ap.jsonl"
    bad.write_text('{"id": "a", "title": "t", "description": "d", "content": "c"}\n{"id": "b", "title": "t"}\n')
    with pytest.raises(ConfigError, match=r"ap.jsonl:2: field 'description' must be a non-empty string"):
        load_antipatterns(bad)


def test_default_pack_fits_the_budget(prov_constraints):
    text = pack_constraints(prov_constraints, load_antipatterns())
    assert len(text) <= 1000
    assert "prov:Entity -> prov:Entity: prov:wasDerivedFrom" in text and "Avoid:\n- End every" in text
    assert "more)" in text  # PROV does not fit whole: the packer says how much was left out


_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), budget=st.integers(min_value=-5, max_value=2500))
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_pack_constraints_never_exceeds_its_budget(prov_constraints, data, budget):
    antipatterns = load_antipatterns()
    cons = data.draw(st.lists(st.sampled_from(prov_constraints) | _TEXT, max_size=40))
    aps = data.draw(st.lists(st.sampled_from(antipatterns) | _TEXT, max_size=15))
    text = pack_constraints(cons, aps, budget=budget)
    assert len(text) <= max(budget, 0)


# -- validate_sparql --------------------------------------------------------------------------------------

def test_unknown_property_with_a_suggestion(prov):
    findings = validate_sparql(PRE + "SELECT ?e WHERE { ?e prov:wasGeneratedByX ?a } LIMIT 5", prov)
    assert kinds(findings) == ["unknown_property"]
    assert findings[0].term == PROV + "wasGeneratedByX" and "did you mean prov:wasGeneratedBy?" in findings[0].message
    assert findings[0].antipattern == "ap-invented-term"


@pytest.mark.parametrize("source", ["graph", "constraints"])
def test_domain_violation_agent_used(prov, prov_constraints, source):
    # In PROV-O prov:used has rdfs:domain prov:Activity, and prov:Agent is no subclass of it.
    checked = prov if source == "graph" else prov_constraints
    findings = validate_sparql(PRE + "SELECT ?a ?e WHERE { ?a a prov:Agent . ?a prov:used ?e } LIMIT 5", checked)
    assert kinds(findings) == ["domain_violation"]
    assert findings[0].term == PROV + "used" and "prov:Agent" in findings[0].message


@pytest.mark.parametrize("query", [
    "SELECT ?a ?e WHERE { ?a a prov:Activity . ?a prov:used ?e . ?e a prov:Entity } LIMIT 5",
    "SELECT ?p ?a WHERE { ?p a prov:Plan . ?p prov:wasGeneratedBy ?a } LIMIT 5",  # Plan is a subclass of Entity
    "SELECT ?i ?p WHERE { ?i a prov:Influence . ?i prov:hadPlan ?p } LIMIT 5",  # Influence is a superclass of Association
    "SELECT ?x WHERE { ?x a prov:Agent ; prov:atLocation ?l } LIMIT 5",  # one member of a union domain
    "SELECT ?e ?t WHERE { ?e prov:generatedAtTime ?t FILTER(?t > \"2020-01-01T00:00:00Z\"^^xsd:dateTime) } LIMIT 5",
    "SELECT (COUNT(*) AS ?n) WHERE { ?a a prov:Activity }",  # one row: no LIMIT needed
    "SELECT ?a ?b WHERE { { ?a a prov:Entity } UNION { ?b a prov:Agent } } LIMIT 5",
])
def test_good_queries_have_no_findings(prov, query):
    assert validate_sparql(PRE + query, prov) == []


@pytest.mark.parametrize("query,expected", [
    ("SELECT ?e ?x WHERE { ?e prov:wasGeneratedBy ?x . ?x a prov:Entity } LIMIT 5", ["range_violation"]),
    ("SELECT ?e WHERE { ?e prov:wasGeneratedBy \"yesterday\" } LIMIT 5", ["range_violation"]),
    ("SELECT ?a WHERE { prov:Entity prov:used ?a } LIMIT 5", ["domain_violation"]),  # a class is no Activity
    ("SELECT ?x WHERE { ?x a prov:used } LIMIT 5", ["type_is_property"]),
    ("SELECT ?x WHERE { ?x a prov:Entiti } LIMIT 5", ["unknown_class"]),
    ("SELECT * WHERE { ?a prov:used ?e }", ["missing_limit"]),
    ("SELECT ?a ?b WHERE { ?a a prov:Entity . ?b a prov:Agent } LIMIT 5", ["cartesian_product"]),
    ("SELECT ?x WHERE { ?x prov:wasGeneratedBy ?a FILTER(STR(?a) = \"http://example.org/a\") } LIMIT 5",
     ["string_iri_filter"]),
    ("SELECT ?l WHERE { ?c rdfs:labell ?l } LIMIT 5", ["missing_prefix", "unknown_property"]),
])
def test_bad_queries_are_caught(prov, query, expected):
    assert kinds(validate_sparql(PRE + query, prov)) == expected


def test_syntax_error_has_parser_message_line_and_column(prov):
    (finding,) = validate_sparql(PRE + "SELECT ?a WHERE {\n  ?a prov:used ?e .\n  ?a prov:wasAssociatedWith\n}", prov)
    # The parser gives up at the triple left without an object: line 5 (after two PREFIX lines), column 3.
    assert (finding.kind, finding.line, finding.col) == ("syntax_error", 5, 3)
    assert "line 5, column 3" in finding.message and finding.term == "?a prov:wasAssociatedWith"


def test_missing_prefix(prov):
    findings = validate_sparql("SELECT ?a WHERE { ?a a prov:Entity } LIMIT 1", prov)
    assert kinds(findings) == ["missing_prefix"] and f"PREFIX prov: <{PROV}>" in findings[0].message


# -- sparql_query tool ------------------------------------------------------------------------------------

def test_sparql_query_returns_a_handle_and_a_bounded_preview(ws, prov):
    attach_ontology(ws, PROV_TTL)
    q = PRE + "SELECT ?c ?label WHERE { ?c a owl:Class ; rdfs:label ?label } ORDER BY ?c"
    got = ws.call("sparql_query", q, limit=1000)
    assert isinstance(got["ref"], BlobRef) and got["type"] == "SELECT" and got["vars"] == ["c", "label"]
    rows = [json.loads(line) for line in ws.store.get(got["ref"]).splitlines()]
    assert got["rows"] == len(rows) > 40 and not got["more"]
    assert len(got["preview"]) == 5 and got["preview"] == rows[:5]
    assert {"c": "prov:Activity", "label": '"Activity"'} in rows and [r["c"] for r in rows] == sorted(r["c"] for r in rows)
    small = ws.call("sparql_query", q, limit=3)
    assert small["rows"] == 3 and small["more"]
    spec = TOOLS.get("sparql_query")
    assert spec.group == "ontology" and spec.schema["properties"]["limit"]["minimum"] == 1


def test_sparql_query_stops_after_limit_on_a_cross_product(ws):
    attach_ontology(ws, PROV_TTL)  # 1664 triples: 2.7 million rows if it were evaluated in full
    got = ws.call("sparql_query", "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }", limit=10)
    assert got["rows"] == 10 and got["more"] and len(got["vars"]) == 6


def test_sparql_query_explains_an_empty_result(ws):
    attach_ontology(ws, PROV_TTL)
    got = ws.call("sparql_query", PRE + "SELECT ?a WHERE { ?a a prov:Agent . ?a prov:used ?e } LIMIT 5")
    assert got["rows"] == 0 and got["warnings"][0].startswith("domain_violation:")


def test_sparql_query_refuses_bad_calls(ws):
    with pytest.raises(ToolError, match="no ontology is loaded"):
        ws.call("sparql_query", "ASK {}")
    attach_ontology(ws, load_ontology(SKOS_TTL))
    with pytest.raises(ToolError, match=r"limit: 0 is out of range; allowed 1 to 10000"):
        ws.call("sparql_query", "ASK {}", limit=0)
    with pytest.raises(ToolError, match="SPARQL error at line 1"):
        ws.call("sparql_query", "SELECT ?x WHERE { ?x a }")
    with pytest.raises(ToolError, match="query: empty"):
        ws.call("sparql_query", "   ")
    assert ws.call("sparql_query", "ASK { skos:Concept a owl:Class }")["preview"] == [{"ask": True}]


# -- crate sense card -------------------------------------------------------------------------------------

def _tokio_src() -> Path:
    found = sorted(glob.glob("/usr/share/cargo/registry/tokio-[0-9]*/src"))
    if not found:
        pytest.skip("tokio sources are not installed under /usr/share/cargo/registry (apt-get install librust-tokio-dev)")
    return Path(found[-1])


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_crate_sense_card_of_tokio():
    src = _tokio_src()
    card = crate_sense_card(src)
    assert len(card) <= CARD_BUDGET and card == crate_sense_card(str(src))
    assert card.startswith("CRATE tokio ") and "AsyncRead(" in card and "runtime(" in card
    assert len(crate_sense_card(src, budget=200)) <= 200
    with pytest.raises(ConfigError, match="not a directory"):
        crate_sense_card(src / "lib.rs")
