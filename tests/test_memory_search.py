"""MemoryStore.search: bm25 over the OR of the words (pruned, exact), exact words before porter stems, the per-field
rerank of the best items, the external-content indexes and their migrations."""

from __future__ import annotations

import sqlite3

import pytest

import rlmlab.memory._store as store_module
from rlmlab.memory import MIGRATIONS, MemoryItem, MemoryStore
from rlmlab.memory._schema import connect


def item(title: str, content: str, polarity: str = "success", description: str = "one line", **kw) -> MemoryItem:
    return MemoryItem(title=title, description=description, content=content, polarity=polarity, **kw)


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        yield s


def test_bm25_ranks_without_an_every_word_step(store):
    # "zulu" is rare and fills the loud item's title; bm25 weighs that above an item that also holds the common
    # "alpha". An AND-first order would put the item with both words first; recall on the labelled set was not
    # lower without it (see memory/_search.py), so bm25 decides.
    store.add_many([item(f"Alpha note {i}", f"alpha filler text number {i}") for i in range(6)])
    loud = store.add(item("Zulu zulu zulu", "zulu everywhere, nothing else")).id
    both = store.add(item("Quiet item", "a body that mentions alpha once and zulu once among " + "words " * 30)).id
    hits = [h.id for h in store.search("alpha zulu", k=3)]
    assert hits[:2] == [loud, both]
    assert hits[2].startswith("mem_") and len(set(hits)) == 3
    seen = []
    store._search.trace = lambda table, match: seen.append(match)
    store.search("alpha zulu", k=3)
    assert seen and not any(" AND " in m and " OR " not in m for m in seen)  # no every-word query is asked


def test_or_finds_items_with_some_of_the_words(store):
    a = store.add(item("Slice by lines", "use ctx_slice with unit lines")).id
    b = store.add(item("Peek first", "ctx_peek shows the head")).id
    assert {h.id for h in store.search("slice peek", k=5)} == {a, b}
    assert store.search("slice nothingmatches", k=5)[0].id == a


def test_hits_are_not_repeated(store):
    ids = [store.add(item(f"Topic {w}", f"common words and {w}")).id for w in ("red", "green", "blue")]
    hits = [h.id for h in store.search("common red", k=6)]
    assert hits[0] == ids[0] and sorted(hits) == sorted(ids) and len(hits) == len(set(hits))


@pytest.mark.parametrize("query", ["handle", "handles", "handling", "HANDLED"])
def test_porter_stemming_finds_other_forms(store, query):
    target = store.add(item("Errors", "the agent handles a ToolError by changing the argument")).id
    store.add(item("Unrelated", "slicing blobs by lines"))
    assert [h.id for h in store.search(query)] == [target]


def test_filters_apply_beyond_the_prefetched_rows(store):
    # 80 strong matches of the wrong polarity fill FTS5's first cut (64 rows); the one guardrail is still found.
    store.add_many([item(f"Zebra strategy {i}", f"zebra zebra zebra {i}") for i in range(80)])
    weak = store.add(item("Guardrail", "a long text that says zebra only once " + "filler " * 40, polarity="failure")).id
    assert [h.id for h in store.search("zebra", k=1, polarity="failure")] == [weak]
    assert len(store.search("zebra", k=20, polarity="success")) == 20


def test_the_index_follows_updates_and_status(store):
    it = store.add(item("Old title", "about parsing"))
    store.execute("UPDATE items SET title = 'Fresh heading' WHERE id = ?", [it.id])
    assert store.search("old title") == [] and [h.id for h in store.search("fresh")] == [it.id]
    store.set_status([it.id], "discarded")
    assert store.search("fresh") == []


def test_text_is_stored_once(store):
    store.add(item("One", "two"))
    names = {r[0] for r in store.execute("SELECT name FROM sqlite_master")}
    assert "items_fts" in names and "items_fts_content" not in names


def test_migration_to_the_external_porter_index_keeps_every_item(tmp_path, monkeypatch):
    path = tmp_path / "v7.db"
    # A bank written by the store as it was at migration 7 (own copy of the text, unicode61 without stemming).
    monkeypatch.setattr(store_module, "connect", lambda p, **kw: connect(p, MIGRATIONS[:7], **kw))
    with MemoryStore(path) as old:
        old.add_many([item(f"Strategy {i}", f"content number {i} handles case {i}", tags=[f"t{i}"]) for i in range(50)])
        gone = old.add(item("Discarded", "handles old things")).id
        old.set_status([gone], "discarded")
        old.add(item("Templated", "fill the slots", template="x = {{n:number}}"))
        before = {r["id"]: dict(r) for r in old.execute("SELECT * FROM items")}
        assert old.search("handle") == []  # no stemming before
        assert {r[0] for r in old.execute("SELECT name FROM sqlite_master")} >= {"items_fts_content"}
    monkeypatch.undo()
    with MemoryStore(path) as new:
        assert [m["version"] for m in new.migrations()] == [m.version for m in MIGRATIONS]
        after = {r["id"]: dict(r) for r in new.execute("SELECT * FROM items")}
        assert {i: {k: r[k] for k in before[i]} for i, r in after.items()} == before  # no item lost or changed
        assert all(r["shape"] is None for r in after.values())  # migration 10's column, empty for old items
        for index in ("items_fts", "items_fts_exact"):  # migrations 8 and 9 built both from items
            assert new.execute(f"SELECT count(*) FROM {index}")[0][0] == len(before)
            new.execute(f"INSERT INTO {index} ({index}) VALUES ('integrity-check')")
        assert len(new.search("handle", k=20)) == 20 and gone not in {h.id for h in new.search("handles old", k=20)}
        for i in (0, 17, 49):
            assert new.search(f"t{i} strategy")[0].title == f"Strategy {i}"
        assert "items_fts_content" not in {r[0] for r in new.execute("SELECT name FROM sqlite_master")}
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)
    raw.close()


def test_exact_words_rank_before_other_forms(store):
    # Stemmed, "arguments" would share the idf of the common "argument"; the exact index keeps it rare.
    store.add_many([item(f"Argument {i}", f"the argument of call {i} is an argument") for i in range(12)])
    rare = store.add(item("Named arguments", "pass arguments by name", description="keyword arguments")).id
    hits = store.search("arguments", k=3)
    assert hits[0].id == rare and len(hits) == 3  # other forms ("argument") fill after the exact word
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def _bank(store, n=400, seed=3):
    # Zipf-like words: a few in most items (weightless in bm25), many rare ones.
    import random

    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(300)]
    weights = [1 / (r + 1) for r in range(len(vocab))]
    store.add_many([item(" ".join(rng.choices(vocab, weights, k=5)), " ".join(rng.choices(vocab, weights, k=40)),
                         polarity=rng.choice(("success", "failure")), description=" ".join(rng.choices(vocab, weights, k=8)))
                    for _ in range(n)])
    return rng, vocab, weights


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_or_step_equals_the_plain_or_ranking(store):
    # MaxScore prunes rows that cannot reach the k-th score; the result must be the one the OR of every word gives.
    rng, vocab, weights = _bank(store)
    search = store._search
    freq = search._freq["items_fts_exact"]
    freq.refresh(store._conn)
    compared = 0
    for _ in range(60):
        words = list(dict.fromkeys(rng.choices(vocab, weights, k=rng.randint(2, 5))))
        weighty = [w for w in words if 0 < 2 * freq.df(store._conn, w) < freq.items]
        for k, filters in ((6, {"status": "active"}), (3, {"status": "active", "polarity": "failure"})):
            with store._lock:
                pruned = search._or("items_fts_exact", weighty, k, set(), filters) if weighty else []
                plain = search._top("items_fts_exact", " OR ".join(f'"{w}"' for w in weighty), k, set(), filters) \
                    if weighty else []
            assert [h.id for h in pruned] == [h.id for h in plain], words
            compared += bool(weighty)
    assert compared > 50


def test_or_step_leaves_out_words_in_most_items(store):
    _bank(store)
    common = store._search._freq["items_fts_exact"]
    common.refresh(store._conn)
    assert 2 * common.df(store._conn, "w0") >= common.items  # in more than half the items: bm25 gives it 1e-6
    seen = []
    store._search.trace = lambda table, match: seen.append(match)
    hits = store.search("w0 w120 w250", k=6)
    assert len(hits) == 6 and all('"w0"' not in m for m in seen)
    # With too few items holding the informative words, the weightless word fills the rest.
    seen.clear()
    assert len(store.search("w0 nosuchword", k=6)) == 6


def test_cached_frequencies_follow_writes(store, tmp_path):
    assert store.search("zanzibar") == []
    new = store.add(item("Zanzibar", "an island")).id
    assert [h.id for h in store.search("zanzibar")] == [new]  # the cached df of 0 did not survive the write
    with MemoryStore(tmp_path / "m.db") as other:  # another connection to the same file
        other_id = other.add(item("Zanzibar again", "another island")).id
    assert {h.id for h in store.search("zanzibar")} == {new, other_id}


def test_the_rerank_reads_fts5_column_totals(store):
    # FieldRerank reads the columns' token totals from FTS5's averages record (an internal record of FTS5's file
    # format): they must equal the tokens of the items' fields, counted with the index's own tokenizer rules.
    from rlmlab.memory._rerank import FieldRerank
    from rlmlab.memory._tokens import tokenize

    texts = [("Slice by lines", "use ctx_slice with unit lines and a café", ["ctx", "lines"]),
             ("Peek first", "ctx_peek shows the head of a handle", ["peek"]),
             ("Zulu", "one two three", [])]
    for title, content, tags in texts:
        store.add(item(title, content, description=f"about {title.lower()}", tags=tags))
    rerank = FieldRerank(store._conn, "items_fts_exact")
    rerank._refresh()
    rows = store._conn.execute("SELECT title, description, content, tags FROM items").fetchall()
    expected = [sum(len(tokenize(r[c])) for r in rows) / len(rows) for c in range(4)]
    assert rerank.rows == 3 and rerank.avg == pytest.approx(expected)
    from rlmlab.memory._rerank import _varints

    sizes = store._conn.execute("SELECT items.title, items.description, items.content, items.tags, d.sz FROM items"
                                " JOIN items_fts_exact_docsize d ON d.id = items.n").fetchall()
    assert [_varints(bytes(r[4])) for r in sizes] == [[len(tokenize(r[c])) for c in range(4)] for r in sizes]
    assert rerank.df("ctx") == {"content": 2, "tags": 1} and rerank.df("absent") == {}


def test_a_title_word_outranks_repetitions_in_a_body(tmp_path):
    # FTS5's bm25() saturates once over the row, so five "zulu" in a short body beat one in a title; the per-field
    # rerank lets the title count on its own (BM25 per field, as rank-bm25 scores fields).
    store = MemoryStore(tmp_path / "r.db", rerank=True)
    store.add_many([item(f"Filler note {i}", "plain words about other things " * 3 + str(i)) for i in range(20)])
    titled = store.add(item("Zulu checks", "a long body of words that never name the thing " * 8)).id
    body = store.add(item("Notes", "zulu zulu zulu zulu zulu in a short body")).id
    hits = store.search("zulu", k=2)
    assert [h.id for h in hits] == [titled, body] and hits[0].score > hits[1].score
    store.close()
    with MemoryStore(tmp_path / "r.db") as plain:  # the default: FTS5's order
        assert [h.id for h in plain.search("zulu", k=2)] == [body, titled]


def test_the_rerank_keeps_filters_and_the_database_schema(store, tmp_path):
    store._search.rerank = True
    _bank(store)
    hits = store.search("w3 w40 w120", k=6, polarity="failure")
    assert hits and all(h.polarity == "failure" for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # The per-field frequencies come from a temporary fts5vocab table: nothing is added to the file.
    with sqlite3.connect(tmp_path / "m.db") as other:
        assert not [r for r in other.execute("SELECT name FROM sqlite_master") if "vocab" in r[0]]
