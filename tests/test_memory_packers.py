"""Packers never exceed their budgets (property-based), and pack what a reader expects."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlmlab.memory import Artifact, MemoryItem, pack_l2, pack_l3, pack_text, read_pack, summarise_markdown
from rlmlab.ontology import PROV_TTL, constraints_from_graph, crate_sense_card, pack_constraints, sense_card

PACK = read_pack("data/packs/rlm_procedures.jsonl")

_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=600).filter(lambda s: s.strip())
_words = st.lists(st.sampled_from("agent tool slice peek count regex error guardrail å 日本 \t\n ---".split(" ")),
                  min_size=1, max_size=80).map(" ".join).filter(lambda s: s.strip())
_budget = st.integers(min_value=0, max_value=2500)


@st.composite
def _items(draw, polarity):
    n = draw(st.integers(0, 6))
    out = []
    for i in range(n):
        out.append(MemoryItem(title=draw(_words)[:200] or "t", description=draw(_words)[:500] or "d",
                              content=f"{polarity} {i} " + draw(st.one_of(_text, _words))[:3990], polarity=polarity))
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_items("success"), _items("failure"), _budget, st.integers(0, 5), st.integers(0, 5), st.integers(0, 800))
@pytest.mark.slow
def test_l2_packer_never_exceeds_budget(successes, failures, budget, ks, kf, content_chars):
    p = pack_l2(successes, failures, budget, k_success=ks, k_failure=kf, content_chars=content_chars)
    assert len(p.text) <= budget
    offered = [it.id for it in successes[:ks]] + [it.id for it in failures[:kf]]
    assert sorted(p.item_ids + p.dropped) == sorted(offered)  # every offered item is packed or reported dropped


@settings(max_examples=120, deadline=None)
@given(st.one_of(_text, _words), st.one_of(st.none(), _text), _budget)
def test_l3_packer_never_exceeds_budget(content, summary, budget):
    p = pack_l3(Artifact("guide", "A guide", content, summary=summary), budget)
    assert len(p.text) <= budget
    assert len(summarise_markdown(content, budget)) <= budget


@settings(max_examples=60, deadline=None)
@given(_text, _budget)
def test_text_packer_never_exceeds_budget(text, budget):
    assert len(pack_text("L0", text, budget).text) <= budget


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 1200))
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_l0_sense_card_never_exceeds_budget(budget):
    assert len(sense_card(PROV_TTL, budget)) <= budget


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 1200))
def test_l0_crate_card_never_exceeds_budget(tokio_src, budget):
    assert len(crate_sense_card(tokio_src / "sync", budget)) <= budget


PROV_CONSTRAINTS = constraints_from_graph(PROV_TTL)
_constraint = st.one_of(st.sampled_from(PROV_CONSTRAINTS), _words)


@settings(max_examples=80, deadline=None)
@given(st.lists(_constraint, max_size=30), st.lists(st.one_of(_text, _words), max_size=12), _budget)
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_l1_packer_never_exceeds_budget(constraints, bullets, budget):
    assert len(pack_constraints(constraints, bullets, budget)) <= budget


def test_l1_packer_on_prov_fits_the_spec_budget():
    text = pack_constraints(constraints_from_graph(PROV_TTL), [], 1000)
    assert 800 < len(text) <= 1000 and "prov:wasAttributedTo" in text


def test_l2_packs_top_k_of_each_polarity_in_order():
    successes = [it for it in PACK if it.polarity == "success"]
    failures = [it for it in PACK if it.polarity == "failure"]
    p = pack_l2(successes, failures, 1500, k_success=3, k_failure=2)
    assert p.item_ids == [it.id for it in successes[:3]] + [it.id for it in failures[:2]] and not p.dropped
    strategies, guardrails = p.text.split("\n\n")
    assert strategies.startswith("Strategies that worked before:") and guardrails.startswith("Guardrails from")
    assert successes[0].title in strategies and failures[1].title in guardrails
    assert strategies.index(successes[0].title) < strategies.index(successes[2].title)


def test_l2_keeps_guardrails_when_strategies_are_long():
    long = [MemoryItem(f"Strategy {i}", "d" * 400, "word " * 700, "success") for i in range(3)]
    guard = [MemoryItem("Never print whole payloads", "keep large text in variables", "short", "failure")]
    p = pack_l2(long, guard, 600)
    assert guard[0].id in p.item_ids and "Never print whole payloads" in p.text and len(p.text) <= 600
    assert p.clipped  # the long strategies were cut, not the guardrail's title


def test_l2_tiny_budget_drops_and_reports():
    p = pack_l2(PACK[:3], [], 10)
    assert p.text == "" and p.item_ids == [] and len(p.dropped) == 3


def test_l3_uses_the_artifacts_summary_and_never_the_full_text():
    guide = "# Guide\n\n" + "\n\n".join(f"## Section {i}\n\nFirst sentence {i}. Second sentence.\n\n- bullet {i}"
                                        for i in range(200))
    p = pack_l3(Artifact("guide", "PROV guide", guide), 1000)
    assert len(p.text) <= 1000 and p.text.startswith("Guide: PROV guide\n")
    assert "Section 0:" in p.text and "First sentence 0." in p.text and "Second sentence" not in p.text
    own = pack_l3(Artifact("guide", "PROV guide", guide, summary="Use prov:wasGeneratedBy for outputs."), 1000)
    assert own.text == "Guide: PROV guide\nUse prov:wasGeneratedBy for outputs." and not own.clipped


def test_summary_skips_code_and_joins_wrapped_lines():
    md = "# T\n\nA wrapped\nsentence here. More.\n\n```python\nprint('code')\n```\n\n- a bullet\n  continued"
    assert summarise_markdown(md, 500) == "T:\nA wrapped sentence here.\n- a bullet continued"


def test_negative_budget_is_refused():
    with pytest.raises(ValueError, match="budget"):
        pack_l2([], [], -1)
