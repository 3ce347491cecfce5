"""mem_search, mem_get, mem_quote, mem_add and event_log through Workspace.call, over the curated pack."""

import json
from pathlib import Path

import jsonschema
import pytest

from rlmlab.errors import ToolError
from rlmlab.memory import MemoryItem, MemoryStore, candidate_items, import_pack
from rlmlab.tools import TOOLS, ToolCaps
from rlmlab.tools._memory import MEMORY_CAP_DEFAULTS, attach_memory, set_default_store

PACK = Path(__file__).resolve().parents[1] / "data" / "packs" / "rlm_procedures.jsonl"
MEM_TOOLS = ["event_log", "mem_add", "mem_get", "mem_quote", "mem_search"]


@pytest.fixture
def mem(ws, tmp_path):
    with MemoryStore(tmp_path / "mem.db", run_id="run-1", trajectory_id="traj-1", domain="tokio") as store:
        import_pack(store, PACK)
        attach_memory(ws, store)
        yield ws, store


def test_tools_registered_in_memory_group_with_valid_schemas():
    assert TOOLS.select(groups={"memory"}).names() == MEM_TOOLS
    for name in MEM_TOOLS:
        spec = TOOLS.get(name)
        jsonschema.Draft202012Validator.check_schema(spec.schema_for_caps(ToolCaps()))
        assert spec.result_cap(ToolCaps()) > 0
    k = TOOLS.get("mem_search").schema_for_caps(ToolCaps())["properties"]["k"]
    assert (k["minimum"], k["maximum"], k["default"]) == (1, MEMORY_CAP_DEFAULTS["mem_search_k_max"], 6)


def test_mem_search_returns_ids_titles_descriptions_and_no_content(mem, capsys):
    ws, store = mem
    res = ws.call("mem_search", "count functions with ast_query", k=3)
    assert res["count"] == len(res["hits"]) == 3
    assert res["hits"][0]["title"] == "Count code constructs with ast_query before SUBMIT"
    assert all(set(h) == {"id", "title", "description", "polarity", "role"} for h in res["hits"])
    dumped = json.dumps(res)
    assert not any(item.content[:60] in dumped for item in store.items())
    assert capsys.readouterr().out == ""


def test_mem_search_filters_bounds_and_odd_queries(mem):
    ws, _ = mem
    fails = ws.call("mem_search", "answer tool output", k=10, polarity="failure")["hits"]
    assert fails and all(h["polarity"] == "failure" for h in fails)
    assert ws.call("mem_search", "peek", role="nobody")["hits"] == []
    with pytest.raises(ToolError, match=r"k: 21 is out of range; allowed 1 to 20"):
        ws.call("mem_search", "peek", k=21)
    with pytest.raises(ToolError, match=r"k: 0 is out of range"):
        ws.call("mem_search", "peek", k=0)
    with pytest.raises(ToolError, match="polarity: 'good' is not allowed"):
        ws.call("mem_search", "peek", polarity="good")
    with pytest.raises(ToolError, match="query: empty"):
        ws.call("mem_search", "  ")
    assert ws.call("mem_search", "what's (x) AND -y*")["count"] >= 0
    empty = ws.call("mem_search", "the of (*)")
    assert empty["hits"] == [] and empty["count"] == 0 and "no searchable words" in empty["note"]


def test_mem_get_returns_full_items_and_refuses_over_the_cap(mem):
    ws, store = mem
    ids = [h["id"] for h in ws.call("mem_search", "slice peek find lines ctx", k=4)["hits"]]
    assert len(ids) == 4
    with pytest.raises(ToolError, match=r"^ids: 4 ids requested, over the cap of 3; call mem_get with at most 3"):
        ws.call("mem_get", ids)
    got = ws.call("mem_get", ids[:3])["items"]
    assert [g["id"] for g in got] == ids[:3] and all(g["content"] == store.get(g["id"]).content for g in got)
    assert ws.call("mem_get", ids[0])["items"][0]["id"] == ids[0]  # one id as a string
    ws.caps.mem_get_max = 1  # a workspace's caps decide, once ToolCaps has the field and before
    with pytest.raises(ToolError, match="ids: 2 ids requested, over the cap of 1"):
        ws.call("mem_get", ids[:2])
    with pytest.raises(ToolError, match="ids: unknown memory id 'mem_nope'; ids come from mem_search"):
        ws.call("mem_get", ["mem_nope"])
    with pytest.raises(ToolError, match="ids: empty"):
        ws.call("mem_get", [])


def test_reads_are_linked_to_the_trajectory_for_outcomes(mem):
    ws, store = mem
    a, b = [h["id"] for h in ws.call("mem_search", "verify grounding submit", k=2)["hits"]]
    ws.call("mem_get", [a])
    ws.call("mem_quote", b, 50)
    assert {u["item_id"] for u in store.usage("traj-1")} == {a, b}
    assert store.record_outcome("traj-1", True) == 2
    assert [(i.uses, i.wins) for i in store.get_many([a, b])] == [(1, 1), (1, 1)]


def test_mem_quote_is_bounded(mem):
    ws, store = mem
    item = store.items()[0]
    got = ws.call("mem_quote", item.id, 40)
    assert got == {"id": item.id, "start": 0, "end": 40, "length": len(item.content), "text": item.content[:40],
                   "truncated": True}
    tail = ws.call("mem_quote", item.id, 2000, start=len(item.content) - 10)
    assert tail["text"] == item.content[-10:] and not tail["truncated"]
    with pytest.raises(ToolError, match=r"max_chars: 2001 is out of range; allowed 1 to 2000"):
        ws.call("mem_quote", item.id, 2001)
    with pytest.raises(ToolError, match=r"start: -1 is not allowed"):
        ws.call("mem_quote", item.id, 10, start=-1)


def test_mem_add_proposes_once_and_prints_nothing(mem, capsys):
    ws, store = mem
    args = dict(title="Slice tests out of counts", description="Exclude #[cfg(test)] modules from function counts",
                content="Find the test module's line range with ctx_find and drop matches inside it.",
                polarity="success", tags=["counting", "tests"])
    first = ws.call("mem_add", **args)
    again = ws.call("mem_add", **{**args, "title": "slice TESTS out of counts", "description": "other"})
    assert first == {"id": first["id"], "created": True, "status": "candidate"}
    assert again == {"id": first["id"], "created": False, "status": "candidate"}
    assert first["id"] not in store  # a candidate until a judge or a person admits it (test_memory_candidates.py)
    [item] = candidate_items(store)
    assert (item.source, item.run_id, item.trajectory_id, item.domain, item.description) == (
        "mem_add", "run-1", "traj-1", "tokio", args["description"])
    with pytest.raises(ToolError, match=r"^polarity: 'meh' is not allowed; use one of 'success', 'failure'"):
        ws.call("mem_add", **{**args, "polarity": "meh"})
    with pytest.raises(ToolError, match=r"^content: 4001 characters, over the limit of 4000"):
        ws.call("mem_add", **{**args, "content": "x" * 4001})
    assert capsys.readouterr().out == ""


def test_non_ascii_items_stay_within_the_caps(mem):
    ws, store = mem
    ids = [store.add(MemoryItem(f"長い項目 {i}", "説明" * 200, "内容" * 2000, "success")).id for i in range(3)]
    assert len(ws.call("mem_get", ids)["items"]) == 3  # Workspace.call raises RuntimeError if a cap is broken
    assert len(ws.call("mem_quote", ids[0], 2000)["text"]) == 2000
    assert ws.call("mem_search", "長い項目", k=20)["count"] >= 1


def test_event_log_appends_an_event_and_prints_nothing(mem, capsys):
    ws, store = mem
    ref = ws.call("blob", "fn main() {}", name="main_rs")
    got = ws.call("event_log", {"step": 3, "saw": ref, "note": "counted 14 fns"}, kind="observation")
    assert set(got) == {"event_id", "kind"} and got["kind"] == "observation"
    (event,) = store.events(kind="observation")
    assert (event.id, event.run_id, event.trajectory_id, event.domain) == (got["event_id"], "run-1", "traj-1", "tokio")
    assert event.payload["saw"]["key"] == "main_rs" and event.payload["step"] == 3
    assert ws.call("event_log", {"x": 1})["kind"] == "note"
    with pytest.raises(ToolError, match=r"obj: \d+ characters of JSON, over the cap of 8000"):
        ws.call("event_log", {"big": "x" * 9000})
    with pytest.raises(ToolError, match="obj: not JSON-serialisable"):
        ws.call("event_log", {"s": {1, 2}})
    assert len(store.events()) == 2 and capsys.readouterr().out == ""


def test_without_a_store_the_tools_say_how_to_attach_one(ws, tmp_path):
    with pytest.raises(ToolError, match="no memory store is attached"):
        ws.call("mem_search", "peek")
    with MemoryStore(tmp_path / "default.db") as store:
        set_default_store(store)
        try:
            assert ws.call("mem_add", "t", "d", "c", "failure")["created"]  # an empty store still counts
        finally:
            set_default_store(None)
