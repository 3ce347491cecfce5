"""Judges of the ReasoningBank loop on real inputs: answers, PROV-O SPARQL, tokio's Rust sources, a scripted LM."""

from __future__ import annotations

import json

import pytest

from rlmlab.errors import ConfigError
from rlmlab.executors import IterationRecord, Trajectory
from rlmlab.lm import make_lm
from rlmlab.learning import (
    JUDGES, RUBRICS, CodeJudge, ExactJudge, Judge, LLMJudge, NumericJudge, SparqlJudge, judge_for, parse_llm_verdict,
)
from rlmlab.learning._judge import strip_fences
from rlmlab.memory import MemoryTask, Verdict
from rlmlab.numbers import final_number
from rlmlab.ontology import PROV_TTL
from rlmlab.trace import IterationLeakage


def traj(answer, *, query="q", error=None, submitted=True, iterations=()):
    return Trajectory(run_id="t", query=query, lm="scripted", context_mode="handle", answer=answer, error=error,
                      submitted=submitted, iterations=list(iterations))


def short(verdict: Verdict) -> None:
    """Every rationale is short and readable in a log; the verdict round-trips through JSON."""
    assert 0 < len(verdict.rationale) <= 400 and "\n" not in verdict.rationale
    assert Verdict.from_dict(json.loads(json.dumps(verdict.to_dict()))) == verdict


# -- contains ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer, expected, ok", [
    ("The guest Wi-Fi password at the Lisbon office is Willow7278.", "Willow7278", True),
    ("willow7278", "Willow7278", True),
    ("wicked-marmot-10", "wicked-marmot-10", True),
    ("The password is wicked-marmot-100", "wicked-marmot-10", False),  # not inside a longer token
    ("The password that launches Project Ember is:", "wicked-marmot-10", False),
    ("It is Lyon.", ["Paris", "Lyon"], True),
    (" ".join(["filler"] * 45) + " Willow7278", "Willow7278", False),  # a dump of the text, not an answer
])
def test_contains(answer, expected, ok):
    v = JUDGES.make("contains").judge(MemoryTask("c", "q", expected=expected), traj(answer))
    assert (v.success, v.judge) == (ok, "contains"), v.rationale
    short(v)


# -- exact -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer, expected, ok", [
    ("Paris", "paris", True),
    ('  "Paris."  ', "Paris", True),
    ("New   York", "new york", True),
    ("'`mutex`'", "Mutex", True),
    ("Lyon", ["Paris", "Lyon"], True),
    ("Paris, France", "Paris", False),
    ("42", 42, True),
])
def test_exact(answer, expected, ok):
    v = ExactJudge().judge(MemoryTask("e", "q", expected=expected), traj(answer))
    assert (v.success, v.score, v.judge, v.rubric) == (ok, float(ok), "exact", None)
    short(v)


def test_exact_no_answer_error_and_missing_expected():
    task = MemoryTask("e", "q", expected="Paris")
    none = ExactJudge().judge(task, traj(None, submitted=False))
    assert not none.success and "no answer" in none.rationale and "did not SUBMIT" in none.rationale
    err = ExactJudge().judge(task, traj("Paris", error="RLMLabError: max iterations"))
    assert not err.success and "error" in err.rationale and "max iterations" in err.rationale
    blank = ExactJudge().judge(task, traj("   "))
    assert not blank.success and "no answer" in blank.rationale
    orphan = ExactJudge().judge(MemoryTask("e9", "q"), traj("Paris"))
    assert not orphan.success and orphan.confidence == 0.0 and "e9" in orphan.rationale


# -- numeric -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer, expected, ok", [
    ("$1,234.50", 1234.5, True),
    ("It costs $1,234.50 in total.", "1234.5", True),
    ("-3", -3, True),
    ("The answer is 42.", 42, True),
    ("The answer is 42, from 6 * 7 = 42 after 3 steps", "42", True),  # the marker wins over the last number
    ("20%", 20, True),
    ("3/4", 0.75, True),
    ("x = 1/3", "1/3", True),
    ("0.3333333", "1/3", True),  # within rel_tol 1e-6
    ("0.3333", "1/3", False),
    ("3", -3, False),
    ("1,234.5", [1000, 1234.5], True),
    ("41.99", 42, False),
])
def test_numeric(answer, expected, ok):
    v = NumericJudge().judge(MemoryTask("n", "q", expected=expected, check="numeric"), traj(answer))
    assert (v.success, v.score) == (ok, float(ok)), v.rationale
    short(v)


def test_numeric_rationale_tolerance_and_edge_cases():
    task = MemoryTask("n", "How much?", expected=42, check="numeric")
    bad = NumericJudge().judge(task, traj("The answer is 41."))
    assert bad.rationale == "The answer's final number 41 differs from the expected 42."
    assert NumericJudge(rel_tol=0.05).judge(task, traj("41")).success
    assert not NumericJudge().judge(task, traj("forty-two")).success
    assert "holds no number" in NumericJudge().judge(task, traj("forty-two")).rationale
    assert "no answer" in NumericJudge().judge(task, traj(None)).rationale
    err = NumericJudge().judge(task, traj("42", error="ToolError: boom"))
    assert not err.success and "error" in err.rationale
    with pytest.raises(ConfigError, match="rel_tol"):
        JUDGES.make("numeric", rel_tol=2)
    assert str(final_number("see src/fs/file.rs and 12")) == "12"  # a path is not a fraction
    assert final_number("no digits") is None and final_number(True) is None


# -- sparql ------------------------------------------------------------------------------------------------

PRE = "PREFIX prov: <http://www.w3.org/ns/prov#>\nPREFIX owl: <http://www.w3.org/2002/07/owl#>\n"
CLASSES = PRE + "SELECT ?c WHERE { ?c a owl:Class }"


def sparql_task(expected=CLASSES):
    return MemoryTask("s", "List every OWL class", expected=expected, check="sparql", meta={"ontology": str(PROV_TTL)})


def test_sparql_equivalent_query_written_differently_succeeds():
    answer = ("Here is my query:\n```sparql\nPREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n"
              "SELECT ?klass WHERE { ?klass rdf:type ?t FILTER(?t = owl:Class) } LIMIT 1000\n```")
    v = SparqlJudge().judge(sparql_task(), traj(answer))
    assert (v.success, v.score, v.confidence) == (True, 1.0, 1.0), v.rationale
    assert "same 59 row(s)" in v.rationale
    short(v)


def test_sparql_columns_are_aligned_by_name_when_the_reference_names_them():
    ref = PRE + "SELECT ?p ?d WHERE { ?p <http://www.w3.org/2000/01/rdf-schema#domain> ?d }"
    same_names = "SELECT ?d ?p WHERE { ?p rdfs:domain ?d } LIMIT 500"
    v = SparqlJudge().judge(sparql_task(ref), traj(same_names))
    assert v.success and "aligning its columns by name" in v.rationale
    # Other names: the columns mean what their position says; no other order is tried (issue 18, defect 7).
    other_names = "SELECT ?dom ?prop WHERE { ?prop rdfs:domain ?dom } LIMIT 500"
    assert not SparqlJudge().judge(sparql_task(ref), traj(other_names)).success
    in_order = "SELECT ?prop ?dom WHERE { ?prop rdfs:domain ?dom } LIMIT 500"
    assert SparqlJudge().judge(sparql_task(ref), traj(in_order)).success


def test_sparql_an_unnamed_reference_still_has_its_column_order_searched():
    ref = PRE + "SELECT * WHERE { ?p <http://www.w3.org/2000/01/rdf-schema#domain> ?d }"
    for answer in ("SELECT ?dom ?prop WHERE { ?prop rdfs:domain ?dom }", "SELECT ?prop ?dom WHERE { ?prop rdfs:domain ?dom }"):
        assert SparqlJudge().judge(sparql_task(ref), traj(answer)).success, answer


def test_sparql_the_inverse_property_domain_and_range_is_rejected():
    # Regression (issue 18, defect 7): prov:wasGeneratedBy's (domain, range) is prov:generated's reversed;
    # trying the other column order used to accept it.
    ref = PRE + ("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
                 "SELECT ?domain ?range WHERE { prov:generated rdfs:domain ?domain ; rdfs:range ?range }")
    inverse = "SELECT ?domain ?range WHERE { prov:wasGeneratedBy rdfs:domain ?domain ; rdfs:range ?range }"
    swapped = "SELECT ?range ?domain WHERE { prov:wasGeneratedBy rdfs:domain ?domain ; rdfs:range ?range }"
    unnamed = "SELECT ?a ?b WHERE { prov:wasGeneratedBy rdfs:domain ?a ; rdfs:range ?b }"
    for wrong in (inverse, swapped, unnamed):
        v = SparqlJudge().judge(sparql_task(ref), traj(PRE + wrong))
        assert not v.success and v.score == 0.0, (wrong, v.rationale)
    right = "SELECT ?range ?domain WHERE { prov:generated rdfs:domain ?domain ; rdfs:range ?range }"
    assert SparqlJudge().judge(sparql_task(ref), traj(PRE + right)).success


def test_sparql_an_empty_reference_needs_an_empty_answer():
    ref = PRE + "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\nSELECT ?label WHERE { prov:Process rdfs:label ?label }"
    empty = SparqlJudge().judge(sparql_task(ref), traj(PRE + "SELECT ?l WHERE { prov:Process rdfs:label ?l }"))
    assert empty.success and "same 0 row(s)" in empty.rationale
    guess = SparqlJudge().judge(sparql_task(ref), traj(PRE + "SELECT ?l WHERE { prov:Activity rdfs:label ?l }"))
    assert not guess.success and guess.score == 0.0


def test_sparql_subset_fails_with_partial_score():
    answer = PRE + "SELECT ?c WHERE { ?c a owl:Class . ?c rdfs:subClassOf prov:Entity } LIMIT 100"
    v = SparqlJudge().judge(sparql_task(), traj(answer))
    assert not v.success and 0.0 < v.score < 1.0
    assert v.score == pytest.approx(3 / 59, abs=1e-4)
    assert "returns 3 row(s), the reference 59; 3 agree" in v.rationale


def test_sparql_syntax_error_fails_with_the_parser_message():
    v = SparqlJudge().judge(sparql_task(), traj("SELECT ?c WHERE { ?c a owl:Class "))
    assert not v.success and v.score == 0.0
    assert "does not parse" in v.rationale and "Expected SelectQuery" in v.rationale


def test_sparql_unknown_property_is_named_from_validate_sparql():
    answer = PRE + "SELECT ?c WHERE { ?c prov:wasGeneratedByX ?a } LIMIT 5"
    v = SparqlJudge().judge(sparql_task(), traj(answer))
    assert not v.success and v.score == 0.0
    assert "unknown_property" in v.rationale and "did you mean prov:wasGeneratedBy?" in v.rationale


def test_sparql_shape_mismatch_cap_and_broken_tasks():
    v = SparqlJudge().judge(sparql_task(), traj("ASK { prov:Entity a owl:Class }"))
    assert not v.success and "ASK of 1 column(s); the reference is a SELECT" in v.rationale
    capped = JUDGES.make("sparql", max_rows=5).judge(sparql_task(), traj(CLASSES))
    assert capped.confidence == 0.5 and "first 5 rows" in capped.rationale
    with pytest.raises(ConfigError, match="reference query does not run"):
        SparqlJudge().judge(sparql_task("SELECT nonsense"), traj(CLASSES))
    with pytest.raises(ConfigError, match="meta\\['ontology'\\]"):
        SparqlJudge().judge(MemoryTask("s", "q", expected=CLASSES, check="sparql"), traj(CLASSES))
    assert strip_fences("```\nASK {}\n```") == "ASK {}" and strip_fences(" SELECT * {} ") == "SELECT * {}"


# -- code --------------------------------------------------------------------------------------------------

def code_task(query, source, expected=None):
    return MemoryTask("c", query, expected=expected, check="code", meta={"source_path": str(source)})


@pytest.mark.parametrize("query, answer, ok", [
    ("What are the parameters of set_len?", "&self, size: u64", True),
    ("What are the parameters of set_len?", "&self, len: usize", False),
    ("List the fields of File", "std: Arc<StdFile>, inner: Mutex<Inner>", True),
    ("List the fields of File", "path: PathBuf", False),
    ("How many async functions are there?", "3", False),
])
def test_code_oracle_on_tokio_file(rust_file, query, answer, ok):
    v = CodeJudge().judge(code_task(query, rust_file), traj(answer))
    assert (v.success, v.score, v.confidence) == (ok, float(ok), 1.0), v.rationale
    assert ("verified" if ok else "contradicts") in v.rationale
    short(v)


def test_code_oracle_on_crate_directory_and_relative_root(tokio_src):
    judge = JUDGES.make("code", source_root=str(tokio_src))
    assert judge.judge(code_task("Which types implement AsyncRead?", "fs"), traj("File")).success
    wrong = judge.judge(code_task("Which types implement AsyncRead?", "fs"), traj("Inner"))
    assert not wrong.success and "Mismatch" in wrong.rationale


def test_code_cannot_verify_expected_and_missing_source(rust_file, tmp_path):
    unsure = CodeJudge().judge(code_task("Explain why File buffers writes", rust_file), traj("to batch syscalls"))
    assert not unsure.success and unsure.confidence == 0.3 and "could not decide" in unsure.rationale
    q = "What are the parameters of set_len?"
    agree = CodeJudge().judge(code_task(q, rust_file, expected="&self, size: u64"), traj("&self, size: u64"))
    assert agree.success and "agrees with the expected" in agree.rationale
    differ = CodeJudge().judge(code_task(q, rust_file, expected="&self"), traj("&self, size: u64"))
    assert not differ.success and "does not agree with the expected '&self'" in differ.rationale
    assert not CodeJudge().judge(code_task(q, rust_file), traj(None)).success
    with pytest.raises(ConfigError, match="source not found"):
        CodeJudge().judge(code_task(q, tmp_path / "nope.rs"), traj("x"))


# -- llm ---------------------------------------------------------------------------------------------------

def llm_traj():
    leak = IterationLeakage(iteration=1)
    calls = [{"name": "ctx_find", "arguments": {}, "result_chars": 10, "error": None}] * 2
    it = IterationRecord(1, "look", "ctx_find(context, 'x')", "", calls, leak, 0, 0, 0)
    return traj("Paris", query="Capital of France?", iterations=[it])


def test_llm_well_formed_reply_and_prompt():
    prompts = []

    def script(messages):
        prompts.append(messages[-1]["content"])
        return "VERDICT: success\nCONFIDENCE: 0.9\nRATIONALE: Paris is the capital of France."

    judge = LLMJudge(make_lm("scripted", script=script))
    task = MemoryTask("l", "Capital of France?", expected="Paris", check="llm")
    v = judge.judge(task, llm_traj())
    assert (v.success, v.confidence, v.score, v.rubric, v.judge) == (True, 0.9, 0.9, "judge_v1", "llm")
    assert v.rationale == "Paris is the capital of France."
    [prompt] = prompts
    assert RUBRICS["judge_v1"] in prompt and "Capital of France?" in prompt
    assert "iterations: 1" in prompt and "ctx_find x2" in prompt and "## Expected answer\nParis" in prompt


def test_llm_messy_reply_is_parsed():
    reply = ("Let me think. The format asks for VERDICT: success|failure.\n\n**Verdict:** Failure\n"
             "confidence = 80%\nrationale - the agent answered Lyon, not Paris.\nThanks!")
    v = LLMJudge(make_lm("scripted", script=[reply])).judge(MemoryTask("l", "q"), llm_traj())
    assert (v.success, v.confidence, v.score) == (False, 0.8, pytest.approx(0.2))
    assert v.rationale == "the agent answered Lyon, not Paris."
    assert parse_llm_verdict("verdict: PASS") == (True, 0.5, "The judge gave no rationale.")


def test_llm_garbage_is_an_unparseable_failure():
    garbage = "I think it is fine " * 30
    v = LLMJudge(make_lm("scripted", script=[garbage])).judge(MemoryTask("l", "q"), llm_traj())
    assert (v.success, v.confidence, v.score, v.rubric) == (False, 0.0, 0.0, "judge_v1")
    assert "unparseable" in v.rationale and repr(garbage[:200]) in v.rationale


def test_llm_no_answer_skips_the_lm_and_unknown_rubric():
    lm = make_lm("scripted", script=[])  # would raise if called
    v = LLMJudge(lm).judge(MemoryTask("l", "q"), traj(None, submitted=False))
    assert not v.success and v.rubric == "judge_v1" and "no answer" in v.rationale
    with pytest.raises(ConfigError, match="unknown rubric 'judge_v9'; known: judge_v1"):
        LLMJudge(lm, rubric="judge_v9")
    with pytest.raises(ConfigError, match="needs an lm"):
        JUDGES.make("llm")


# -- registry ----------------------------------------------------------------------------------------------

def test_registry_and_judge_for(rust_file):
    assert JUDGES.names() == ["code", "constraints", "contains", "exact", "llm", "numeric", "oracle", "set", "sparql", "vote"]
    with pytest.raises(ConfigError, match="unknown 'fuzzy'; registered: code, constraints, contains, exact, llm, numeric, oracle, set, sparql, vote"):
        JUDGES.make("fuzzy")
    with pytest.raises(ConfigError, match="unknown 'fuzzy'"):
        judge_for(MemoryTask("x", "q", check="fuzzy"))
    lm = make_lm("scripted", script=["VERDICT: success\nCONFIDENCE: 1\nRATIONALE: ok"])
    numeric = judge_for(MemoryTask("x", "q", check="numeric"), lm=lm)  # lm is not passed to numeric
    assert isinstance(numeric, NumericJudge) and isinstance(numeric, Judge)
    llm = judge_for(MemoryTask("x", "q", check="llm"), lm=lm)
    assert isinstance(llm, LLMJudge) and llm.lm is lm
    assert isinstance(judge_for(MemoryTask("x", "q")), ExactJudge)
    assert judge_for(MemoryTask("x", "q", check="sparql"), max_rows=7).max_rows == 7
    with pytest.raises(ConfigError, match="unknown option"):
        judge_for(MemoryTask("x", "q", check="exact"), rel_tol=1)
