"""MemoryStore on real SQLite files: migrations, WAL, dedup, provenance, retrieval, usage, packs."""

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmlab.memory import (
    MIGRATIONS, RETRIEVERS, BM25Retriever, EmbeddingRetriever, FTS5Retriever, ItemValidationError, MemoryItem,
    MemoryStore, MemoryStoreError, PackError, export_pack, fts_query, import_pack, item_id, make_retriever, read_pack,
)
from rlmlab.memory._schema import connect

PACK = Path(__file__).resolve().parents[1] / "data" / "packs" / "rlm_procedures.jsonl"

# (title, description, content, polarity, role, tags): one topic per item, so each query below has one right answer.
CORPUS = [
    ("Peek before slicing a large blob", "Look at the head of a payload before reading parts of it",
     "Call ctx_peek with a small n to learn the layout, then ctx_slice the part you need.", "success", "general",
     ["ctx_peek"]),
    ("Find then slice by lines", "Use ctx_find to get line numbers, then read whole lines",
     "ctx_find returns line numbers; ctx_slice with unit lines reads the surrounding function.", "success", "general",
     ["ctx_find", "lines"]),
    ("Count functions with ast_query", "Syntax-aware counts of Rust items",
     "Run a tree-sitter query for function_item nodes and use the total field.", "success", "general",
     ["tree-sitter"]),
    ("Submitting values never seen in output", "Answering with names no tool printed",
     "The agent submitted a function name that appeared in no tool result; it was recalled, not read.",
     "failure", "general", ["grounding"]),
    ("Printing an entire payload", "Dumping thousands of characters into the history",
     "print of a full file bloats every later iteration of the loop.", "failure", "general", ["leakage"]),
    ("SPARQL prefixes come first", "Declare namespaces before the query body",
     "Write PREFIX lines for rdf, rdfs and owl before SELECT; undeclared prefixes are syntax errors.",
     "success", "query-writer", ["sparql"]),
    ("Use rdfs:subClassOf* for class hierarchies", "Transitive closure over subclasses",
     "A property path with star walks the whole hierarchy in one query instead of a recursive loop.",
     "success", "query-writer", ["sparql", "ontology"]),
    ("Domain and range constrain joins", "Check a property's domain and range before joining",
     "Join only variables whose types agree with the property's declared domain and range.", "success",
     "query-writer", ["constraints"]),
    ("Forgetting LIMIT on exploratory queries", "Unbounded SELECT over a large graph",
     "An exploratory SELECT without LIMIT returned a million rows and exhausted the budget.", "failure",
     "query-writer", ["sparql", "budget"]),
    ("Batch sub-questions with llm_query_batched", "Fan out one prompt per chunk",
     "Split the input into chunks and send all prompts in one batched call, then aggregate in Python.",
     "success", "general", ["delegation"]),
    ("Keep an agenda for compound questions", "Track each part and close it with evidence",
     "Add one agenda item per part and complete it with a line number or a count.", "success", "general",
     ["agenda"]),
    ("Regex counts include comments", "A bare pattern also matches docs and strings",
     "Counting fn with a regular expression also counted doc comments and macro bodies.", "failure", "general",
     ["regex"]),
    ("Check the arithmetic with Python", "Do sums and percentages in code, not in prose",
     "Compute totals and percentages in the interpreter and print the result before answering.", "success",
     "solver", ["arithmetic"]),
    ("Rounding the final number too early", "Intermediate rounding changes the answer",
     "Rounding a percentage before multiplying gave an answer off by one.", "failure", "solver",
     ["arithmetic", "rounding"]),
    ("Read the question's units", "Answer in the unit the question asks for",
     "The question asked for minutes; the agent answered in hours.", "failure", "solver", ["units"]),
    ("Cache parsed trees across queries", "Reuse a parse instead of re-parsing a file",
     "Keep the tree-sitter parse cache in the workspace so repeated ast_query calls are cheap.", "success",
     "general", ["performance"]),
    ("Retrying the same failing call", "Resending a call that raised a ToolError",
     "After an out-of-range error the agent sent the identical call again and lost an iteration.", "failure",
     "general", ["errors"]),
    ("Summarise a guide before injecting it", "Pack a long artifact into a short summary",
     "Inject a compressed summary of the ontology guide, under a thousand characters, not the whole guide.",
     "success", "general", ["packing"]),
    ("Verify owl:sameAs links before merging", "Identity links across datasets can be wrong",
     "Merging entities through an unchecked sameAs link conflated two different people.", "failure",
     "query-writer", ["identity"]),
    ("Two-phase memory retrieval", "Search titles first, fetch few items",
     "Use mem_search for ids and descriptions, then mem_get for at most three items.", "success", "general",
     ["memory"]),
]

QUERIES = [
    ("how do I peek at a big blob", "Peek before slicing a large blob"),
    ("count the Rust functions", "Count functions with ast_query"),
    ("sparql PREFIX declarations", "SPARQL prefixes come first"),
    ("subclass hierarchy", "Use rdfs:subClassOf* for class hierarchies"),
    ("LIMIT exploratory", "Forgetting LIMIT on exploratory queries"),
    ("owl sameAs merging", "Verify owl:sameAs links before merging"),
    ("rounding percentage", "Rounding the final number too early"),
    ("agenda compound", "Keep an agenda for compound questions"),
    ("llm_query_batched chunks", "Batch sub-questions with llm_query_batched"),
    ("units minutes hours", "Read the question's units"),
]


def make_items(**extra):
    return [MemoryItem(title=t, description=d, content=c, polarity=p, role=r, tags=tags, **extra)
            for t, d, c, p, r, tags in CORPUS]


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "mem.db", run_id="run-1", trajectory_id="traj-1", domain="demo") as s:
        s.add_many(make_items())
        yield s


def test_migrations_recorded_once_and_reopen_is_idempotent(tmp_path):
    path = tmp_path / "m.db"
    with MemoryStore(path) as s:
        first = s.migrations()
    assert [(m["version"], m["name"]) for m in first] == [(m.version, m.name) for m in MIGRATIONS]
    assert [m["version"] for m in first] == [m.version for m in MIGRATIONS]
    with MemoryStore(path) as s:
        assert s.migrations() == first  # nothing re-applied: same rows, same applied_at


def test_only_missing_migrations_are_applied(tmp_path):
    path = tmp_path / "old.db"
    connect(path, MIGRATIONS[:2]).close()  # a database made by an older rlmlab
    raw = sqlite3.connect(path)
    old = raw.execute("SELECT version, applied_at FROM schema_migrations").fetchall()
    raw.close()
    with MemoryStore(path) as s:
        rows = s.migrations()
    assert [r["version"] for r in rows] == [m.version for m in MIGRATIONS]
    assert [(r["version"], r["applied_at"]) for r in rows[:2]] == old


def test_items_of_a_version_4_bank_become_active_on_upgrade(tmp_path):
    path = tmp_path / "v4.db"
    conn = connect(path, MIGRATIONS[:4])
    conn.execute(
        "INSERT INTO items (id, title, description, content, polarity, role, scope, layer, source, created_at,"
        " updated_at) VALUES ('mem_0', 'Peek before slicing', 'd', 'c', 'success', 'general', 'global', 'L2', 'api',"
        " '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')")
    conn.close()
    with MemoryStore(path) as s:
        [item] = s.items()
        assert (item.id, item.status, item.superseded_by) == ("mem_0", "active", None)
        assert [h.id for h in s.search("slicing")] == ["mem_0"]


def test_unknown_migration_is_refused(tmp_path):
    path = tmp_path / "new.db"
    MemoryStore(path).close()
    raw = sqlite3.connect(path)
    raw.execute("INSERT INTO schema_migrations VALUES (99, 'from_the_future', '2099-01-01T00:00:00.000Z')")
    raw.commit()
    raw.close()
    with pytest.raises(MemoryStoreError, match="migration 99 'from_the_future'"):
        MemoryStore(path)


def test_wal_mode_and_foreign_keys(store):
    assert store.execute("PRAGMA journal_mode")[0][0] == "wal"
    assert store.execute("PRAGMA foreign_keys")[0][0] == 1
    raw = sqlite3.connect(store.path)  # WAL is a property of the file, seen by any other connection
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


def test_same_content_is_stored_once(store):
    n = len(store)
    item = MemoryItem("Peek before slicing", "first", "Call ctx_peek  first.", "success")
    again = MemoryItem("peek BEFORE slicing", "reworded description", "call ctx_peek first.", "failure")
    first, second = store.add(item), store.add(again)
    assert first.created and not second.created and first.id == second.id == item_id("Peek before slicing",
                                                                                       "call ctx_peek first.")
    assert len(store) == n + 1
    kept = store.get(first.id)
    assert (kept.description, kept.polarity, kept.uses, kept.updated_at) == ("first", "success", 0, kept.created_at)


def test_provenance_on_every_item_and_event(store):
    store.log_event("retrieval", {"query": "peek", "ids": ["mem_x"]})
    store.bind(run_id="run-2", trajectory_id="traj-9", domain="other")
    store.log_event("judge", {"success": True})
    for row in store.execute("SELECT * FROM items"):
        assert all(row[c] for c in ("run_id", "trajectory_id", "domain", "source", "created_at", "updated_at"))
    events = store.events()
    assert [(e.kind, e.run_id, e.trajectory_id, e.domain) for e in events] == [
        ("retrieval", "run-1", "traj-1", "demo"), ("judge", "run-2", "traj-9", "other")]
    assert all(e.created_at.endswith("Z") for e in events) and events[0].payload == {"ids": ["mem_x"], "query": "peek"}
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        store.execute("UPDATE events SET kind = 'x'")


@pytest.mark.parametrize("field,kwargs,allowed", [
    ("polarity", {"polarity": "great"}, "'success', 'failure'"),
    ("layer", {"layer": "L9"}, "'L1', 'L2', 'L3'"),
    ("role", {"role": "Root Agent"}, "lower-case slug"),
    ("tags", {"tags": ["ok", "not ok"]}, "tags match"),
    ("title", {"title": "  "}, "empty"),
])
def test_bad_fields_name_the_field_and_allowed_values(field, kwargs, allowed):
    args = {"title": "t", "description": "d", "content": "c", "polarity": "success", **kwargs}
    with pytest.raises(ItemValidationError, match=rf"^{field}: .*{allowed}") as err:
        MemoryItem(**args)
    assert err.value.field == field


def test_bad_filters_are_refused(store):
    with pytest.raises(ItemValidationError, match="polarity: 'good' is not allowed; use one of 'success', 'failure'"):
        store.search("peek", polarity="good")
    with pytest.raises(ItemValidationError, match="colour: unknown filter"):
        store.items(colour="red")


@pytest.mark.parametrize("name", ["fts5", "bm25"])
@pytest.mark.parametrize("query,title", QUERIES)
def test_both_lexical_retrievers_rank_the_expected_item_first(store, name, query, title):
    retriever = FTS5Retriever(store) if name == "fts5" else BM25Retriever(store.items())
    hits = retriever.search(query, k=5)
    assert hits and hits[0].title == title
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_retriever_registry_and_filters(store):
    assert {"fts5", "bm25", "embedding"} <= set(RETRIEVERS)
    for name in ("fts5", "bm25"):
        r = make_retriever(name, store)
        fails = r.search("agent function output", k=10, polarity="failure")
        assert fails and all(h.polarity == "failure" for h in fails)
        assert all(h.role == "solver" for h in r.search("answer percentage", k=10, role="solver"))
    with pytest.raises(Exception, match="unknown 'dense'; registered: bm25, embedding, fts5"):
        make_retriever("dense", store)


def test_embedding_retriever_with_a_callable(store):
    vocab = sorted({w for it in store.items() for w in it.title.lower().split()})

    def embed(texts):  # bag of title words: enough to exercise cosine ranking through the interface
        return [[float(w in t.lower().split()) for w in vocab] for t in texts]

    hits = EmbeddingRetriever(store.items(), embed).search("rounding the number", k=3)
    assert hits[0].title == "Rounding the final number too early" and 0 < hits[-1].score <= hits[0].score <= 1


@pytest.mark.parametrize("query", [
    "what's (x) AND -y*", '"unbalanced', "title:peek", "NEAR(peek slice)", "peek OR", "^start*", "a:b:c",
    "x' OR 1=1 --",
])
def test_fts_syntax_in_queries_does_not_raise(store, query):
    store.search(query)
    BM25Retriever(store.items()).search(query)


@pytest.mark.parametrize("query", ["", "   ", "()*-^\"'", "the and of", "a b c"])
def test_queries_without_searchable_words_return_nothing(store, query):
    assert fts_query(query) is None and store.search(query) == [] and BM25Retriever(store.items()).search(query) == []


@pytest.fixture(scope="module")
def small_store():
    with MemoryStore(":memory:") as s:
        s.add_many(make_items())
        yield s


@settings(max_examples=200, deadline=None)
@given(query=st.text(max_size=60))
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_any_text_is_a_safe_query(small_store, query):
    hits = small_store.search(query)
    assert isinstance(hits, list) and (hits == [] or fts_query(query) is not None)


def test_usage_then_outcome_updates_uses_and_wins(store):
    a, b, c = [store.items()[i].id for i in range(3)]
    assert store.record_usage([a, b, a]) == 2
    assert store.record_usage([a]) == 0  # already linked to traj-1
    assert store.record_usage([c], trajectory_id="traj-2") == 1
    with pytest.raises(MemoryStoreError, match="unknown memory id 'mem_nope'"):
        store.record_usage(["mem_nope"])
    assert store.record_outcome("traj-1", True) == 2
    assert store.record_outcome("traj-1", False) == 0  # a verdict is recorded once
    assert store.record_outcome("traj-2", False) == 1
    assert [(i.uses, i.wins) for i in store.get_many([a, b, c])] == [(1, 1), (1, 1), (1, 0)]
    assert {(u["item_id"], u["trajectory_id"], u["run_id"], u["outcome"]) for u in store.usage()} == {
        (a, "traj-1", "run-1", "success"), (b, "traj-1", "run-1", "success"), (c, "traj-2", "run-1", "failure")}
    store.bind(run_id="run-1")
    assert store.record_usage([a]) == 0  # no trajectory bound: nothing to link


def test_distinct_values_of_a_filter_field_over_every_status(store):
    first, second = store.items()[:2]
    store.add(MemoryItem(title="No domain", description="d", content="c", polarity="success"), use_binding=False)
    store.add(MemoryItem(title="Other domain", description="d", content="c", polarity="success", domain="aaa"),
              use_binding=False)
    store.set_status([first.id], "superseded", superseded_by=second.id)
    assert store.distinct("domain") == ["aaa", "demo"]  # sorted; None (no domain) left out
    assert store.distinct("role") == ["general", "query-writer", "solver"]
    assert store.distinct("status") == ["active", "superseded"]  # superseded items count too
    with pytest.raises(ItemValidationError, match="colour: not a filter field") as err:
        store.distinct("colour")
    assert err.value.field == "colour"
    with pytest.raises(ItemValidationError, match="content: not a filter field"):
        store.distinct("content")


def test_stats(store):
    store.log_event("note", {})
    st_ = store.stats()
    assert st_.items == len(CORPUS) and st_.events == 1 and st_.db_bytes > 0
    assert st_.by_polarity == {"failure": 8, "success": 12}
    assert st_.by_role == {"general": 12, "query-writer": 5, "solver": 3} and st_.by_domain == {"demo": 20}
    assert json.loads(json.dumps(st_.to_dict()))["by_layer"] == {"L2": 20}


def test_curated_pack_imports_once_and_exports_byte_identical(tmp_path):
    with MemoryStore(tmp_path / "p.db") as s:
        report = import_pack(s, PACK)
        assert 8 <= len(report.added) <= 15 and report.existing == []
        assert {i.polarity for i in s.items()} == {"success", "failure"}
        assert all(i.source == "pack:rlm_procedures" and i.title and i.description and i.tags for i in s.items())
        again = import_pack(s, PACK)
        assert again.added == [] and sorted(again.existing) == sorted(report.added) and len(s) == len(report.added)
        out = tmp_path / "out.jsonl"
        assert export_pack(s, out) == len(report.added)
    assert out.read_bytes() == PACK.read_bytes()


def test_export_import_round_trip_keeps_ids(store, tmp_path):
    out = tmp_path / "corpus.jsonl"
    export_pack(store, out)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [d["id"] for d in lines] == sorted(i.id for i in store.items())
    with MemoryStore(tmp_path / "copy.db") as copy:
        assert len(import_pack(copy, out).added) == len(CORPUS)
        assert [i.to_dict() | {"uses": 0, "wins": 0} for i in copy.items()] == [
            i.to_dict() for i in store.items()]
        export_pack(copy, tmp_path / "again.jsonl")
    assert (tmp_path / "again.jsonl").read_bytes() == out.read_bytes()


@pytest.mark.parametrize("bad_line,message", [
    ('{"title": "t", "description": "d", "content": "c"', r":3: not JSON"),
    ('{"title": "t", "description": "d", "content": "c", "polarity": "maybe"}',
     r":3: polarity: 'maybe' is not allowed"),
    ('{"title": "t", "description": "d", "content": "c"}', r":3: polarity: missing"),
    ('{"title": "t", "description": "d", "content": "c", "polarity": "success", "wins": 3}',
     r":3: wins: unknown field"),
    ('{"id": "mem_0000000000000000", "title": "t", "description": "d", "content": "c", "polarity": "success"}',
     r":3: id: 'mem_0000000000000000' does not match"),
    ('["not", "an", "object"]', r":3: expected a JSON object"),
    ('{"title": "Valid", "description": "d", "content": "C", "polarity": "failure"}', r":3: id: .* repeats line 1"),
])
def test_malformed_pack_line_is_reported_with_its_line_number(tmp_path, bad_line, message):
    pack = tmp_path / "bad.jsonl"
    good = '{"title": "Valid", "description": "d", "content": "c", "polarity": "success"}'
    pack.write_text(f"{good}\n\n{bad_line}\n")
    with MemoryStore(tmp_path / "b.db") as s:
        with pytest.raises(PackError, match=rf"^{pack}{message}"):
            import_pack(s, pack)
        assert len(s) == 0  # all or nothing
    pack.write_text(good + "\n")
    assert read_pack(pack)[0].source == "pack:bad"
