"""ContextBuilder, retrieval policy, domains and the L3 artifact store, on a real SQLite file."""

from __future__ import annotations

import pytest

from rlmlab.errors import ConfigError
from rlmlab.memory import (
    RETRIEVAL_POLICIES, Artifact, Budgets, ContextBuilder, MemoryItem, MemoryStore, MemoryStoreError, MemoryTask,
    Toggles, import_pack, resolve_domain,
)
from rlmlab.memory._store import ItemValidationError
from rlmlab.ontology import PROV_TTL, grounding_check

PACK = "data/packs/rlm_procedures.jsonl"
COUNT_TASK = MemoryTask("count", "How many public async functions are in file.rs?", domain="crate:tokio")


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "bank.db") as s:
        import_pack(s, PACK)
        yield s


def test_baseline_injects_base_instructions_only(store):
    built = ContextBuilder(store).build(COUNT_TASK, trajectory_id="t0")
    assert built.text == ContextBuilder(store).base_instructions
    assert [r.enabled for r in built.layers] == [False] * 4 and built.injected_ids == []
    [event] = store.events(kind="context")
    assert event.trajectory_id == "t0" and event.payload["text"] == built.text and event.domain == "crate:tokio"


def test_full_cake_on_prov_respects_every_budget_and_reports_layers(store):
    store.put_artifact(Artifact("guide", "PROV guide", "# Guide\n\n## Agents\n\nUse prov:wasAttributedTo to link an "
                                "entity to its agent. More detail.\n\n" + "filler text. " * 3000, domain="prov"))
    budgets = Budgets(L0=600, L1=800, L2=700, L3=400)
    built = ContextBuilder(store, toggles="all", budgets=budgets).build(
        MemoryTask("q1", "Which agent was an entity attributed to? print large payloads", domain="prov"),
        trajectory_id="t1")
    by = {r.layer: r for r in built.layers}
    for layer, budget in budgets.to_dict().items():
        assert by[layer].chars <= budget and by[layer].injected, layer
    assert "PREFIX prov:" in built.text and "Domain -> range" in built.text and "Guide: PROV guide" in built.text
    assert "filler text. filler" not in built.text  # the L3 artifact's full text is never injected
    assert by["L2"].packed and set(by["L2"].packed) <= set(by["L2"].retrieved)
    assert len(built.text) <= len(ContextBuilder(store).base_instructions) + sum(budgets.to_dict().values()) + 8
    # Injected items are linked to the trajectory, so judging it updates their counters.
    assert {u["item_id"] for u in store.usage("t1")} == set(built.injected_ids)
    store.record_outcome("t1", True)
    assert all(it.uses == 1 and it.wins == 1 for it in store.get_many(built.injected_ids))
    report = store.events(kind="context")[-1].payload
    assert report["layers"][2]["packed"] == by["L2"].packed and report["retrieval"]["success"]
    # L0 of the injected card is grounded: every prov: term exists in the graph.
    card = built.text.split("\n\n")[1]
    assert card.startswith("ONT W3C PROVenance") and len(card) == by["L0"].chars
    assert grounding_check(card, PROV_TTL).ok


def test_tool_mediated_mode_injects_no_l2_and_says_how_to_retrieve(store):
    built = ContextBuilder(store, toggles=["L2"], mode="tool_mediated").build(COUNT_TASK)
    l2 = built.layers[2]
    assert l2.enabled and not l2.injected and "mem_search" in built.text and "tool-mediated" in l2.note
    assert store.usage() == []


def test_retrieval_scopes_by_domain(tmp_path):
    with MemoryStore(tmp_path / "s.db") as s:
        s.add(MemoryItem("Slice large files", "Use ctx_slice windows", "slice it", "success", domain="crate:tokio"))
        s.add(MemoryItem("Slice ontology dumps", "Use LIMIT", "slice the graph", "success", domain="prov"))
        s.add(MemoryItem("Slice anything carefully", "global", "slice globally", "success"))
        got = RETRIEVAL_POLICIES.make("mixed").retrieve(s, "slice", "crate:tokio")
        assert {it.title for it in got.successes} == {"Slice large files", "Slice anything carefully"}
        only = RETRIEVAL_POLICIES.make("mixed", scope="domain_only").retrieve(s, "slice", "prov")
        assert [it.title for it in only.successes] == ["Slice ontology dumps"]
        assert RETRIEVAL_POLICIES.make("success_only").k_failure == 0


def test_inactive_items_are_neither_retrieved_nor_searched(store):
    hit = store.search("regex comments strings", k=1)[0]
    store.set_status([hit.id], "forgotten")
    assert hit.id not in [h.id for h in store.search("regex comments strings", k=20)]
    assert hit.id in [it.id for it in store.items(status="forgotten")] and hit.id not in store.items()
    assert store.stats().by_status["forgotten"] == 1


def test_set_status_validates(store):
    a, b = [it.id for it in store.items()[:2]]
    with pytest.raises(ItemValidationError, match="superseded_by"):
        store.set_status([a], "superseded")
    with pytest.raises(ItemValidationError, match="itself"):
        store.set_status([a], "superseded", superseded_by=a)
    with pytest.raises(MemoryStoreError, match="unknown memory id"):
        store.set_status(["mem_nope"], "discarded")
    assert store.set_status([a], "superseded", superseded_by=b) == 1
    assert store.get(a).superseded_by == b and store.get(a).status == "superseded"


def test_artifacts_are_stored_once_with_provenance(tmp_path):
    with MemoryStore(tmp_path / "a.db", run_id="r1", domain="prov") as s:
        art = Artifact("guide", "PROV guide", "# G\n\nText.")
        assert s.put_artifact(art).created and not s.put_artifact(art).created
        got = s.get_artifact(art.id)
        assert (got.run_id, got.domain, got.content) == ("r1", "prov", "# G\n\nText.") and got.created_at
        assert [a.id for a in s.artifacts(domain="prov", kind="guide")] == [art.id]
        assert s.stats().artifacts == 1
        with pytest.raises(MemoryStoreError, match="unknown artifact"):
            s.get_artifact("art_0")


def test_toggles_and_budgets_are_validated():
    assert Toggles.parse(["L0", "L2"]).enabled() == ["L0", "L2"] and Toggles.parse("all").enabled() == ["L0", "L1", "L2", "L3"]
    with pytest.raises(ConfigError, match="unknown layer 'L5'"):
        Toggles.parse({"L5": True})
    with pytest.raises(ConfigError, match="L0: 601 is over the spec's 600"):
        Budgets(L0=601)
    with pytest.raises(ConfigError, match="L2: '9'"):
        Budgets.parse({"L2": "9"})
    with pytest.raises(ConfigError, match="mode"):
        ContextBuilder(mode="sometimes")


def test_domains_resolve(tokio_src):
    assert resolve_domain("prov").source == PROV_TTL
    tokio = resolve_domain("crate:tokio")
    assert tokio.kind == "crate" and tokio.source == tokio_src
    assert resolve_domain(str(PROV_TTL)).kind == "ontology"
    with pytest.raises(ConfigError, match="apt-get install librust-no-such-crate-dev"):
        resolve_domain("crate:no_such_crate")
    with pytest.raises(ConfigError, match="registered: prov, skos"):
        resolve_domain("nowhere")
