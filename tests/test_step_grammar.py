"""The step grammar (GBNF) generated from the tool registry, and constrained decoding on the real local model."""

from __future__ import annotations

import ast
import re
from typing import Annotated

import pytest

from rlmlab.executors import run_rlm
from rlmlab.executors._step_grammar import (
    fields_grammar, int_range, query_slots, step_grammar, template_rule, unit_constants,
)
from rlmlab.handles import BlobRef
from rlmlab.lm import DecodingConstraint, constrained, make_lm
from rlmlab.tools import TOOLS, Bounds, ToolCaps, ToolRegistry, tool
from helpers import grammar_step

# -- pure Python: the generated text -----------------------------------------------------------------------


def _gbnf_to_regex(expr: str) -> str:
    """The subset of GBNF int_range emits (literals, [a-b], {n}, groups, |) as a Python regex."""
    out, i = [], 0
    while i < len(expr):
        c = expr[i]
        if c == '"':
            j = expr.index('"', i + 1)
            out.append(re.escape(expr[i + 1:j]))
            i = j + 1
        elif c == "[":
            j = expr.index("]", i)
            out.append(expr[i:j + 1])
            i = j + 1
        elif c == " ":
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


@pytest.mark.parametrize("lo,hi", [(0, 0), (0, 9), (1, 100), (0, 2000), (1, 20), (7, 7), (15, 2345), (1, 10000)])
def test_int_range_matches_exactly_the_integers_in_range(lo, hi):
    rx = re.compile(_gbnf_to_regex(int_range(lo, hi)))
    accepted = {n for n in range(0, 12_001) if rx.fullmatch(str(n))}
    assert accepted == set(range(lo, min(hi, 12_000) + 1))
    assert not rx.fullmatch("0" + str(max(lo, 1)))  # no leading zeros


def test_query_slots_reads_numbers_curies_paths_and_quotes():
    slots = query_slots("Natalia sold 48 clips in April and half as many in May; 1,250.50 total. 25% off.")
    assert slots["number"][:3] == ["48", "1250.5", "25"] and "2" in slots["number"]  # "half"
    onto = query_slots("the rdfs:label of prov:Activity (see http://www.w3.org/ns/prov#)")
    assert onto["curie"] == ["rdfs:label", "prov:Activity"]
    code = query_slots("How many unwrap calls are there in sync/watch.rs? Count 'async fn'.")
    assert code["path"] == ["sync/watch.rs"] and code["quoted"] == ["async fn"]
    assert "unwrap" in code["word"] and "watch" not in code["ident"]  # path parts are not identifiers
    assert unit_constants("He rode 3 hours at 20 km per hour") == ["60", "24", "1000"]


def _alternatives(rule: str) -> list[str]:
    """The whole texts a template rule of string-literal alternatives allows."""
    import json

    return [json.loads(m) for m in re.findall(r'"(?:[^"\\]|\\.)*"', rule)]


def test_template_slots_take_only_the_query_candidates():
    rule = template_rule('hits = ctx_find(context, r"\\b{{kw:word}}\\s+fn\\b", k=100)\nSUBMIT(answer=hits["total"])',
                         query_slots("How many async functions?"))
    texts = _alternatives(rule)
    assert 'hits = ctx_find(context, r"\\basync\\s+fn\\b", k=100)\nSUBMIT(answer=hits["total"])' in texts
    assert all("\\bfn\\s+fn" not in t for t in texts)  # "fn" is not a word of the query
    assert template_rule("SUBMIT(answer={{a:curie}})", query_slots("no curie here")) is None
    with pytest.raises(ValueError, match="give a type"):
        template_rule("x = {{a}}", {})


def test_template_slots_are_filled_jointly():
    q = "Write a SPARQL query that returns the rdfs:label of prov:Activity (one column)."
    texts = _alternatives(template_rule('q = "SELECT ?v WHERE { {{s:curie}} {{p:property}} ?v }"', query_slots(q)))
    assert texts == ['q = "SELECT ?v WHERE { prov:Activity rdfs:label ?v }"']  # distinct, typed by RDF case
    assert _alternatives(template_rule("answer = {{a:number}} + {{b:number}}", query_slots("What is 2 + 2?"))) == [
        "answer = 2 + 2"]  # numbers may repeat
    same = _alternatives(template_rule("x = {{n:number}} * {{n:number}}", query_slots("3 and 4")))
    assert same == ["x = 3 * 3", "x = 4 * 4"]  # one name, one value


def test_ident_slots_are_grounded_in_the_context(rust_file):
    slots = query_slots("What does fn set_len in fs/file.rs return? What about poll?", rust_file.read_text())
    assert "set_len" in slots["ident"] and not {"What", "does", "fn", "about"} & set(slots["ident"])


def _registry_with_new_tool() -> ToolRegistry:
    reg = TOOLS.select(groups={"context"})

    @tool(cap=256, group="custom", registry=reg)
    def count_words(ws, ref: BlobRef | str, top: Annotated[int, Bounds(minimum=1, maximum=50)] = 5) -> dict:
        """Count words of a payload.

        Args:
            ref: a BlobRef or a blob key.
            top: how many of the commonest words to return, 1 to 50.
        """
        return {}

    return reg


def test_a_registered_tool_is_in_the_grammar_with_its_typed_arguments():
    grammar = step_grammar(_registry_with_new_tool(), ToolCaps(), query="Count the words of the context.")
    line = next(x for x in grammar.splitlines() if x.startswith("call-count-words ::="))
    assert '"count_words("' in line and '", top="' in line and "int-1-50" in line
    assert "call-sparql-query" not in grammar  # only registered tools
    ctx_find = next(x for x in step_grammar(TOOLS, ToolCaps(find_k_max=7)).splitlines() if x.startswith("call-ctx-find"))
    assert "int-1-7" in ctx_find  # the cap comes from the workspace's caps


# -- the real local model: llama.cpp parses and applies the grammar ----------------------------------------

local = pytest.mark.local_model


@pytest.fixture(scope="module")
def local_lm():
    return make_lm("local", max_tokens=160)


def _step(code: str) -> str:
    return grammar_step("Count the words of the context.", code)


@local
def test_grammar_accepts_a_new_tools_call_and_rejects_an_out_of_cap_integer(local_lm):
    engine = local_lm.rlmlab_engine
    grammar = step_grammar(_registry_with_new_tool(), ToolCaps(), query="Count the words of the context.")
    assert engine.accepts(grammar, _step('hits = count_words(context, top=50)\nSUBMIT(answer=hits["total"])'))
    assert not engine.accepts(grammar, _step('hits = count_words(context, top=51)\nSUBMIT(answer=hits["total"])'))
    assert not engine.accepts(grammar, _step('hits = count_words(context, top=0)'))
    assert not engine.accepts(grammar, _step('print(hits)'))  # reads a variable no step has set
    assert not engine.accepts(grammar, _step('SUBMIT(answer=514)'))  # a bare number the model made up
    assert engine.accepts(grammar, _step('hits = ctx_find(context, r"fn", k=100)\nprint(hits["total"])'))
    assert not engine.accepts(grammar, _step('hits = ctx_find(context, r"fn", k=101)'))


def _planned(plan: str) -> str:
    return grammar_step("Count the words of the context.", 'hits = ctx_find(context, r"fn")\nprint(hits["total"])', plan)


@local
def test_the_plan_is_capped_in_words_and_digits(local_lm):
    engine = local_lm.rlmlab_engine
    grammar = step_grammar(TOOLS, ToolCaps(), query="Count the words of the context.", plan_words=8)
    assert engine.accepts(grammar, _planned("find fn, then print the total."))
    assert engine.accepts(grammar, _planned("count 12 words"))
    assert not engine.accepts(grammar, _planned("1" + "0" * 30))  # the recorded degenerate plan
    assert not engine.accepts(grammar, _planned(" ".join(["count"] * 9)))  # a word repeated past the cap
    assert not engine.accepts(grammar, _planned("a" * 13))  # one word past PLAN_WORD_CHARS


def test_the_plan_rule_bounds_its_length():
    grammar = step_grammar(TOOLS, ToolCaps(), query="What is 2 + 3?", plan_words=5)
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines())
    assert rules["plan"] == 'plan-word (" " plan-word){0,4}'
    assert "Plan: \" plan?" in rules["thought"]
    assert all("}" in alt for alt in rules["plan-word"].split(" | "))  # every kind of word has a length cap
    with pytest.raises(ValueError, match="plan_words"):
        step_grammar(TOOLS, ToolCaps(), plan_words=0)


@local
def test_a_constrained_step_parses_and_runs(local_lm):
    traj = run_rlm("What is 125 + 389?", "", lm=local_lm, max_iters=2, decoding="grammar")
    assert traj.error is None and traj.decoding == "grammar" and traj.salvaged_replies == 0
    assert traj.iterations and traj.answer is not None
    for it in traj.iterations:
        ast.parse(it.code)  # every step is valid Python
        assert "Error" not in it.output.split("\n")[0] or "NameError" not in it.output
    assert traj.iterations[-1].code.splitlines()[-1].startswith("SUBMIT(answer=")  # the last step must submit


@local
def test_json_schema_constraint_and_grammar_cache(local_lm):
    engine = local_lm.rlmlab_engine
    schema = {"type": "object", "properties": {"n": {"enum": ["red", "green"]}},
              "required": ["n"], "additionalProperties": False}
    with constrained(json_schema=schema):
        out = engine.generate([{"role": "user", "content": "Give n."}], None)
    import json

    assert json.loads(out.text)["n"] in ("red", "green") and set(json.loads(out.text)) == {"n"}
    from rlmlab.lm._constraints import GRAMMARS

    hits = GRAMMARS.hits
    GRAMMARS.get(DecodingConstraint.of(json_schema=schema))
    assert GRAMMARS.hits == hits + 1  # built once


def test_fields_grammar_lists_the_fields_in_order():
    g = fields_grammar(["reasoning", "answer"])
    assert g.index("## reasoning ##") < g.index("## answer ##") < g.index("## completed ##")


def test_a_model_that_cannot_constrain_runs_free_and_says_so(caplog):
    lm = make_lm("scripted", script=[{"reasoning": "r", "code": "SUBMIT(answer=4)"}])
    traj = run_rlm("What is 2 + 2?", "", lm=lm, max_iters=1, decoding="grammar")
    assert traj.decoding == "free" and traj.answer == "4"
    assert traj.notes and "grammar ignored" in traj.notes[0]
    with pytest.raises(ValueError, match="decoding"):
        run_rlm("q", "", lm=lm, decoding="fancy")
