"""Memory retrieval at scale: FTS5 (``MemoryStore.search`` and the ``mem_search`` tool) vs rank-bm25 in memory.

For banks of ``--sizes`` generated items (default 1,000, 10,000 and 100,000), in one process:

1. Generation (seeded): titles of 4-8 words, descriptions of 11-19, contents of 60-120, drawn from a Zipf
   (s=1) vocabulary: the words of ``data/packs/rlm_procedures.jsonl`` ranked by their frequency there, then
   ``--domain-words`` generated pseudo-words (some snake_case, like tool names). Random polarity, a role, 1-4
   tags. Every item's content differs, so the content-derived ids are unique. The banks are nested: the
   1,000-item bank is the first 1,000 items of the larger ones.
2. Insertion into a SQLite file with ``MemoryStore.add_many`` in batches of ``--batch``: items/s (add_many time
   only; building the MemoryItems is not counted), and the size per 10,000 items two ways: ``StoreStats.db_bytes``
   (page_count * page_size) and the files on disk (db + -wal) after ``PRAGMA wal_checkpoint(TRUNCATE)``.
3. ``--queries`` generated queries of 3-6 words per bank: from an item's title, from an item's content, or Zipf
   draws. FTS5 (``store.search(q, k=6)``) and the REPL tool path (``Workspace.bound("mem_search")(q, k=6)``,
   which adds argument binding, caps and JSON sizing) are timed interleaved, ``--rounds`` rounds; each query's
   time is its best round, and p50/p99 are over queries.
4. ``BM25Retriever(items)`` (rank-bm25; it scores every document per query term and field): index build time,
   then per-query time on all queries, or on the first ``--bm25-queries`` on banks of 100,000 items or more.
   Each of those queries is timed once with FTS5 right before it, so the ratio bm25/FTS5 compares medians of
   the same queries measured side by side.
5. Agreement of the two rankings on those queries (top-1 equal, top-6 overlap), whether each finds the item a
   title or content query was drawn from, and a diagnosis of top-1 disagreements: the FTS5 bm25() formula
   recomputed in Python over the union of both top-6 lists, then changed one way at a time towards rank-bm25.

Times are reported, never asserted. Raw numbers go to ``--out``/results.json (default runs/bench_memory).

Run:  .venv/bin/python benchmarks/memory.py [--quick | --smoke] [--sizes 1000,10000,100000] [--queries N] [--seed N]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import random
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: E402
from rich.table import Table  # noqa: E402

import rlmlab.memory._store as store_module  # noqa: E402
from rlmlab.memory import (  # noqa: E402
    FIELD_WEIGHTS, MIGRATIONS, BM25Retriever, MemoryItem, MemoryStore, fts_query, query_tokens, read_pack,
)
from rlmlab.memory._schema import connect  # noqa: E402
from rlmlab.memory._search import FtsSearch, _quoted  # noqa: E402
from rlmlab.tools import Workspace, attach_memory  # noqa: E402

PACK = Path(__file__).resolve().parents[1] / "data" / "packs" / "rlm_procedures.jsonl"
# The labelled query set (data/memory_queries.jsonl) names items of these packs; they join every bank.
LABELLED_PACKS = [PACK, PACK.parent / "step_templates.jsonl"]
LABELLED = Path(__file__).resolve().parents[1] / "data" / "memory_queries.jsonl"
RECALL_K = 5
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
TOKEN = re.compile(r"[^\W_]+")  # the store's tokenizer on ASCII text (no diacritics to fold)
FIELDS = ("title", "description", "content", "tags")  # the FTS5 column order
ROLES, ROLE_WEIGHTS = ("general", "planner", "coder", "verifier", "explorer"), (70, 8, 10, 8, 4)
K, BIG_BANK = 6, 100_000


# -- generation -------------------------------------------------------------------------------------------------

class Zipf:
    """Words drawn with probability proportional to 1 / rank**s (rank 1 = first word)."""

    def __init__(self, words: list[str], s: float = 1.0):
        self.words, acc, self.cum = words, 0.0, []
        for rank in range(1, len(words) + 1):
            acc += rank ** -s
            self.cum.append(acc)

    def draw(self, rng: random.Random, n: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum, k=n)


def pack_vocabulary() -> tuple[list[str], list[str]]:
    """The pack's words, most frequent first (lower-cased), and its tags."""
    counts, tags = Counter(), set()
    for line in PACK.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        tags |= set(d["tags"])
        for f in ("title", "description", "content"):
            counts.update(w.lower() for w in WORD.findall(d[f]))
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))], sorted(tags)


def domain_words(rng: random.Random, n: int, taken: set[str]) -> list[str]:
    """n distinct pronounceable pseudo-words of 1-3 syllables; about one in eight is a snake_case pair."""
    onsets = list("bcdfghklmnprstvz") + ["br", "ch", "cl", "dr", "gr", "pl", "sh", "st", "th", "tr"]
    vowels, codas = list("aeiouaeio") + ["ai", "ea", "io"], ["", "", "", "n", "r", "s", "t", "x", "l"]
    out, seen = [], set(taken)
    while len(out) < n:
        w = "".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas)
                    for _ in range(rng.choices((1, 2, 3), weights=(2, 5, 3))[0]))
        if rng.random() < 0.125 and out:
            w = rng.choice(out[-50:]).split("_")[0] + "_" + w[:6]
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


def sentence(words: list[str]) -> str:
    return words[0][:1].upper() + words[0][1:] + (" " + " ".join(words[1:]) if len(words) > 1 else "") + "."


def make_items(n: int, seed: int, n_domain: int, bar: Progress) -> tuple[list[MemoryItem], dict]:
    """n items with distinct ids, and a description of the vocabulary; deterministic in ``seed``."""
    rng = random.Random(f"items-{seed}")
    pack_words, pack_tags = pack_vocabulary()
    vocab = pack_words + domain_words(rng, n_domain, set(pack_words))
    words = Zipf(vocab)
    tag_words = Zipf(pack_tags + [w.replace("_", "-") for w in domain_words(rng, 300, set(pack_tags))])
    items, ids, task = [], set(), bar.add_task("generate items", total=n)
    while len(items) < n:
        title = " ".join(words.draw(rng, rng.randint(4, 8)))
        description = sentence(words.draw(rng, rng.randint(11, 19)))
        body, left = [], rng.randint(60, 120)
        while left > 0:
            m = min(left, rng.randint(6, 16))
            body.append(sentence(words.draw(rng, m)))
            left -= m
        item = MemoryItem(title=title[:1].upper() + title[1:], description=description, content=" ".join(body),
                          polarity=rng.choice(("success", "failure")),
                          role=rng.choices(ROLES, weights=ROLE_WEIGHTS)[0],
                          tags=sorted(set(tag_words.draw(rng, rng.randint(1, 4)))), source="bench:memory")
        if item.id in ids:  # same title and content: draw again, ids must be unique
            continue
        ids.add(item.id)
        items.append(item)
        bar.advance(task)
    bar.remove_task(task)
    return items, {"pack_words": len(pack_words), "domain_words": n_domain, "tag_vocabulary": len(tag_words.words),
                   "zipf_s": 1.0, "words": words}


def field_lengths(item: MemoryItem) -> tuple[int, ...]:
    """Tokens per FTS5 column (title, description, content, tags)."""
    return tuple(len(TOKEN.findall(t.lower())) for t in (item.title, item.description, item.content,
                                                          " ".join(item.tags)))


def make_queries(items: list[MemoryItem], words: Zipf, n: int, seed: int) -> list[dict]:
    """n queries of 3-6 words: 40% from a random item's title, 40% from its content, 20% Zipf draws."""
    rng = random.Random(f"queries-{seed}-{len(items)}")
    out = []
    for i in range(n):
        r, size = rng.random(), rng.randint(3, 6)
        if r < 0.8:
            src = rng.choice(items)
            pool = (src.title if r < 0.4 else src.content).replace(".", "").split()
            start = rng.randint(0, max(0, len(pool) - size))
            text, kind, source = " ".join(pool[start:start + size]).lower(), "title" if r < 0.4 else "content", src.id
        else:
            text, kind, source = " ".join(words.draw(rng, size)), "vocab", None
        if not query_tokens(text):  # only stopwords: add a word, as a user would
            text += " " + rng.choice(words.words[-1000:])
        out.append({"query": text, "kind": kind, "source": source})
    return out


# -- "before": the store as it was at schema version 7, kept here for side-by-side runs ------------------------

def open_before(path: Path) -> MemoryStore:
    """A MemoryStore on a database of migrations 1-7 only: items_fts keeps its own copy of the text, unicode61."""
    real = store_module.connect
    store_module.connect = lambda p, **kwargs: connect(p, MIGRATIONS[:7], **kwargs)
    try:
        return MemoryStore(path)
    finally:
        store_module.connect = real


_BEFORE_SQL = ("SELECT items.id, items.title, items.description, items.polarity, items.role, bm25(items_fts, {}) AS"
               " score FROM items_fts JOIN items ON items.n = items_fts.rowid WHERE items_fts MATCH ?"
               " AND items.status = 'active' ORDER BY score, items.id LIMIT ?").format(
    ", ".join(repr(FIELD_WEIGHTS[c]) for c in FIELDS))


def search_before(store: MemoryStore, query: str, k: int = K) -> list[str]:
    """MemoryStore.search before issue 20: every word OR-ed, bm25 over each matching row joined with items."""
    match = fts_query(query)
    return [] if match is None else [r["id"] for r in store.execute(_BEFORE_SQL, [match, k])]


class AndFirstSearch(FtsSearch):
    """MemoryStore.search's order from issue 20 to issue 26, kept for side-by-side runs: in each index the items
    holding every word first (AND), then the pruned OR fills the rest; FTS5's order, no per-field rerank."""

    def _search_index(self, table, words, need, seen, filters):
        hits = self._top(table, _quoted(words, "AND"), need, seen, filters)
        if len(hits) >= need or len(words) == 1:
            return hits
        return hits + super()._search_index(table, words, need - len(hits), seen | {h.id for h in hits}, filters)


def search_and_first(search: FtsSearch, query: str, k: int = K) -> list[str]:
    """The AND-first order (or another FtsSearch) over the store's own connection (``search`` is built on it)."""
    words = query_tokens(query)
    return [h.id for h in search.search(words, k, {"status": "active"})] if words else []


def labelled_items() -> list[MemoryItem]:
    return [it for path in LABELLED_PACKS for it in read_pack(path)]


def labelled_queries() -> list[dict]:
    return [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines() if line.strip()]


def recall_at(ranked: list[list[str]], queries: list[dict], k: int = RECALL_K) -> float:
    return sum(q["id"] in r[:k] for r, q in zip(ranked, queries)) / len(queries)


def recall_halves(ranked: list[list[str]], queries: list[dict]) -> dict[str, float]:
    """recall@RECALL_K on all queries, on the dev half (lines 1, 3, 5, ...: orders were chosen on these) and on
    the held-out half (lines 2, 4, ...)."""
    return {"all": recall_at(ranked, queries), "dev": recall_at(ranked[0::2], queries[0::2]),
            "held_out": recall_at(ranked[1::2], queries[1::2])}


# -- measurement helpers ----------------------------------------------------------------------------------------

def pct(values: list[float], q: float) -> float | None:
    """The q-th percentile (0-100), linear interpolation between order statistics; None for no values."""
    if not values:
        return None
    v = sorted(values)
    pos = (len(v) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def disk_bytes(path: Path) -> dict[str, int]:
    return {suffix or "db": (path.parent / (path.name + suffix)).stat().st_size if
            (path.parent / (path.name + suffix)).exists() else 0 for suffix in ("", "-wal", "-shm")}


def progress(console: Console) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, transient=True)


# -- diagnosis of disagreements ---------------------------------------------------------------------------------

class Rescorer:
    """The FTS5 bm25() formula (fts5_aux.c) in Python over a few items, and variants of it towards rank-bm25.

    FTS5: per query term, tf = sum over columns of weight * count; D = the row's tokens in all columns;
    score = sum idf * tf (k1 + 1) / (tf + k1 (1 - b + b D / avgdl)), idf = ln((N - n + .5) / (n + .5)) over rows
    (1e-6 if <= 0), k1 = 1.2, b = 0.75. rank-bm25 (as BM25Retriever uses it) instead has k1 = 1.5, one BM25 per
    column with that column's length and document frequencies, and the weighted sum of those; its idf floor
    (0.25 * the mean idf of the column's vocabulary) is not modelled here.
    """

    def __init__(self, store: MemoryStore, items: dict[str, MemoryItem], lengths: dict[str, tuple[int, ...]]):
        self.store, self.items, self.lengths, self.n = store, items, lengths, len(items)
        totals = [sum(ln[f] for ln in lengths.values()) for f in range(len(FIELDS))]
        self.avg_field = [t / self.n for t in totals]
        self.avg_row = sum(totals) / self.n
        self._df: dict[str, int] = {}

    def idf(self, term: str, column: str | None = None) -> float:
        """FTS5's idf over rows containing ``term`` in any column, or (``column``) in that column only."""
        key = f"{column} : \"{term}\"" if column else f'"{term}"'
        if key not in self._df:
            self._df[key] = self.store.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH ?", [key])[0][0]
        n = self._df[key]
        v = math.log((self.n - n + 0.5) / (n + 0.5))
        return v if v > 0 else 1e-6

    def score(self, item_id: str, terms: list[str], *, k1: float = 1.2, per_field: bool = False,
              field_idf: bool = False) -> float:
        it, b, ln = self.items[item_id], 0.75, self.lengths[item_id]
        counts = [Counter(TOKEN.findall(t.lower())) for t in (it.title, it.description, it.content,
                                                              " ".join(it.tags))]
        total = 0.0
        for term in terms:
            if per_field:
                total += sum(
                    FIELD_WEIGHTS[f] * self.idf(term, f if field_idf else None) * c[term] * (k1 + 1)
                    / (c[term] + k1 * (1 - b + b * ln[i] / self.avg_field[i]))
                    for i, (f, c) in enumerate(zip(FIELDS, counts)) if self.avg_field[i] and c[term])
            else:
                tf = sum(FIELD_WEIGHTS[f] * c[term] for f, c in zip(FIELDS, counts))
                total += self.idf(term) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * sum(ln) / self.avg_row))
        return total

    def top1(self, ids: list[str], terms: list[str], **variant) -> str:
        return min(ids, key=lambda i: (-self.score(i, terms, **variant), i))


# Each variant changes the FTS5 formula one way (or all three ways) towards BM25Retriever's model.
VARIANTS = {"FTS5 formula": {}, "k1 1.5": {"k1": 1.5}, "per-column BM25": {"per_field": True},
            "per-column BM25 and idf": {"per_field": True, "field_idf": True},
            "all three": {"k1": 1.5, "per_field": True, "field_idf": True}}


# -- one bank ---------------------------------------------------------------------------------------------------

def bench_size(console: Console, items: list[MemoryItem], words: Zipf, args, workdir: Path) -> dict:
    n = len(items)
    items = items + labelled_items()  # the items data/memory_queries.jsonl must find, among n generated ones
    path, before_path = workdir / f"bank_{n}.sqlite", workdir / f"bank_{n}_before.sqlite"
    for p in (path, before_path):
        for suffix in ("", "-wal", "-shm"):
            Path(str(p) + suffix).unlink(missing_ok=True)
    store, res = MemoryStore(path), {"size": n, "db_path": str(path)}
    before = open_before(before_path)

    # Insert, into both banks batch by batch. add_many re-validates each item and writes it and its FTS5 row in
    # one transaction per batch.
    spent = {"before": 0.0, "after": 0.0}
    with progress(console) as bar:
        task = bar.add_task(f"{n:,}: add_many (before and after)", total=len(items))
        for start in range(0, len(items), args.batch):
            batch = items[start:start + args.batch]
            for name, st in (("before", before), ("after", store)):
                dt, added = timed(st.add_many, batch)
                spent[name] += dt
                if not all(a.created for a in added):
                    raise RuntimeError("a generated item was already stored: ids are not unique")
            bar.advance(task, len(batch))
    sizes = {}
    for name, st, p in (("before", before, before_path), ("after", store, path)):
        stats = st.stats()
        wal_before = disk_bytes(p)
        st.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        after = disk_bytes(p)
        try:  # bytes per table and index, to see what the FTS5 index and its copy of the text cost
            tables = {r[0]: r[1] for r in st.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")}
        except sqlite3.OperationalError:  # SQLite built without SQLITE_ENABLE_DBSTAT_VTAB
            tables = {}
        sizes[name] = {"db_bytes": stats.db_bytes, "files_before_checkpoint": wal_before,
                       "files_after_checkpoint": after, "db_mb_per_10k": stats.db_bytes / 1e6 * 1e4 / len(items),
                       "disk_mb_per_10k": (after["db"] + after["-wal"]) / 1e6 * 1e4 / len(items), "by_table": tables}
    res["insert"] = {"seconds": spent["after"], "items_per_s": len(items) / spent["after"], "batch": args.batch,
                     "before_items_per_s": len(items) / spent["before"]}
    res["size_bytes"], res["size_bytes_before"] = sizes["after"], sizes["before"]

    # FTS5 and the tool path, interleaved per query; the warm-up pulls the index into the page cache.
    queries = make_queries(items, words, args.queries, args.seed)
    ws = Workspace()
    attach_memory(ws, store)
    tool = ws.bound("mem_search")
    and_first = AndFirstSearch(store._conn)  # the order issue 26 replaced, on the same connection and bank
    fts_rerank = FtsSearch(store._conn, rerank=True)  # the OR with the per-field rerank (memory/_rerank.py), opt-in
    for q in queries[:10]:
        store.search(q["query"], k=K)
        tool(q["query"], k=K)
        search_before(before, q["query"])
        search_and_first(and_first, q["query"])
        search_and_first(fts_rerank, q["query"])
    fts_t, tool_t, fts_hits = [math.inf] * len(queries), [math.inf] * len(queries), [[] for _ in queries]
    before_t, before_hits = [math.inf] * len(queries), [[] for _ in queries]
    and_t, order_t = [math.inf] * len(queries), [math.inf] * len(queries)
    first_t = [math.inf] * len(queries)  # store.search's first round: word frequencies not yet cached
    with progress(console) as bar:
        task = bar.add_task(f"{n:,}: before + FTS5 + tool, {args.rounds} rounds", total=len(queries) * args.rounds)
        for round_ in range(args.rounds):
            for i, q in enumerate(queries):
                dt, before_hits[i] = timed(search_before, before, q["query"])
                before_t[i] = min(before_t[i], dt)
                and_t[i] = min(and_t[i], timed(search_and_first, and_first, q["query"])[0])
                order_t[i] = min(order_t[i], timed(search_and_first, fts_rerank, q["query"])[0])
                dt, hits = timed(store.search, q["query"], k=K)
                fts_t[i], fts_hits[i] = min(fts_t[i], dt), [h.id for h in hits]
                first_t[i] = dt if round_ == 0 else first_t[i]
                dt = timed(tool, q["query"], k=K)[0]
                tool_t[i] = min(tool_t[i], dt)
                bar.advance(task)
    tool_same = sum([h["id"] for h in tool(q["query"], k=K)["hits"]] == fts_hits[i] for i, q in enumerate(queries))
    matched = [store.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH ?",
                             [" OR ".join(f'"{t}"' for t in query_tokens(q["query"]))])[0][0] for q in queries]
    res["fts5"] = {"ms": [t * 1e3 for t in fts_t], "p50_ms": pct(fts_t, 50) * 1e3, "p99_ms": pct(fts_t, 99) * 1e3,
                   "first_round_p50_ms": pct(first_t, 50) * 1e3, "first_round_p99_ms": pct(first_t, 99) * 1e3,
                   "rounds": args.rounds, "matched_rows_p50": pct(matched, 50), "matched_rows_max": max(matched)}
    res["before"] = {"ms": [t * 1e3 for t in before_t], "p50_ms": pct(before_t, 50) * 1e3,
                     "p99_ms": pct(before_t, 99) * 1e3,
                     "source_top6": sum(q["source"] in h for q, h in zip(queries, before_hits) if q["source"]),
                     "source_top6_after": sum(q["source"] in h for q, h in zip(queries, fts_hits) if q["source"]),
                     "source_queries": sum(1 for q in queries if q["source"])}
    res["and_first"] = {"ms": [t * 1e3 for t in and_t], "p50_ms": pct(and_t, 50) * 1e3,
                        "p99_ms": pct(and_t, 99) * 1e3}
    res["fts5_rerank"] = {"ms": [t * 1e3 for t in order_t], "p50_ms": pct(order_t, 50) * 1e3,
                          "p99_ms": pct(order_t, 99) * 1e3}
    res["tool"] = {"ms": [t * 1e3 for t in tool_t], "p50_ms": pct(tool_t, 50) * 1e3, "p99_ms": pct(tool_t, 99) * 1e3,
                   "same_ids_as_store_search": tool_same,
                   "overhead_p50_us": pct([(t - f) * 1e6 for t, f in zip(tool_t, fts_t)], 50)}

    # rank-bm25: build, then each query timed right after the same query through FTS5.
    n_bm = len(queries) if n < BIG_BANK else min(args.bm25_queries, len(queries))
    console.print(f"[dim]{n:,}: building BM25Retriever over {n:,} items...[/]")
    gc.collect()
    build_s, bm25 = timed(BM25Retriever, items)
    bm_t, pair_t, bm_hits = [], [], []
    with progress(console) as bar:
        task = bar.add_task(f"{n:,}: rank-bm25 (+ FTS5 paired)", total=n_bm)
        for q in queries[:n_bm]:
            pair_t.append(timed(store.search, q["query"], k=K)[0])
            dt, hits = timed(bm25.search, q["query"], k=K)
            bm_t.append(dt)
            bm_hits.append([h.id for h in hits])
            bar.advance(task)
    labelled = labelled_queries()
    ranked = {"before": [search_before(before, q["query"], RECALL_K) for q in labelled],
              "and_first": [search_and_first(and_first, q["query"], RECALL_K) for q in labelled],
              "fts5_rerank": [search_and_first(fts_rerank, q["query"], RECALL_K) for q in labelled],
              "after": [[h.id for h in store.search(q["query"], RECALL_K)] for q in labelled],
              "rank_bm25": [[h.id for h in bm25.search(q["query"], RECALL_K)] for q in labelled]}
    res["recall"] = {"queries": len(labelled), "k": RECALL_K,
                     **{name: recall_at(r, labelled) for name, r in ranked.items()},
                     "halves": {name: recall_halves(r, labelled) for name, r in ranked.items()}}
    del bm25
    gc.collect()
    res["bm25"] = {"build_s": build_s, "queries": n_bm, "ms": [t * 1e3 for t in bm_t],
                   "p50_ms": pct(bm_t, 50) * 1e3, "p99_ms": pct(bm_t, 99) * 1e3,
                   "fts5_paired_ms": [t * 1e3 for t in pair_t], "fts5_paired_p50_ms": pct(pair_t, 50) * 1e3,
                   "ratio_p50": pct(bm_t, 50) / pct(pair_t, 50)}

    res["agreement"], res["per_query"] = agreement(store, items, queries[:n_bm], fts_hits[:n_bm], bm_hits)
    for i, q in enumerate(queries):
        row = {**q, "fts5_ms": fts_t[i] * 1e3, "tool_ms": tool_t[i] * 1e3, "matched_rows": matched[i],
               "fts5_top6": fts_hits[i]}
        if i < n_bm:
            res["per_query"][i].update(row)
        else:
            res["per_query"].append(row)
    store.close()
    before.close()
    if not args.keep_db:
        for p in (path, before_path):
            for suffix in ("", "-wal", "-shm"):
                Path(str(p) + suffix).unlink(missing_ok=True)
    return res


def agreement(store: MemoryStore, items: list[MemoryItem], queries: list[dict], fts: list[list[str]],
              bm: list[list[str]]) -> tuple[dict, list[dict]]:
    """Top-1/top-6 agreement, source-item recall by query kind, and the rescored causes of top-1 disagreements."""
    by_id = {it.id: it for it in items}
    rescore = Rescorer(store, by_id, {it.id: field_lengths(it) for it in items})
    rows, causes = [], Counter()
    for q, a, b in zip(queries, fts, bm):
        row = {"bm25_top6": b, "top1_equal": bool(a and b and a[0] == b[0]),
               "top6_overlap": len(set(a) & set(b)) / max(len(a), len(b)) if a or b else None}
        if a and b and a[0] != b[0]:
            terms, union = query_tokens(q["query"]), sorted(set(a) | set(b))
            picks = {name: rescore.top1(union, terms, **v) for name, v in VARIANTS.items()}
            scores = {i: rescore.score(i, terms) for i in (a[0], b[0])}
            row["diagnosis"] = {"variant_top1": picks, "fts5_formula_scores": scores,
                                "bm25_top1_rank_in_fts5": a.index(b[0]) + 1 if b[0] in a else None,
                                "fts5_top1_rank_in_bm25": b.index(a[0]) + 1 if a[0] in b else None}
            # Counts: the FTS5 formula picking FTS5's top-1, each variant picking rank-bm25's, exact ties.
            causes["FTS5 formula"] += picks["FTS5 formula"] == a[0]
            for name in list(VARIANTS)[1:]:
                causes[name] += picks[name] == b[0]
            causes["ties"] += abs(scores[a[0]] - scores[b[0]]) < 1e-9
        rows.append(row)
    n = len(rows)
    overlaps = [r["top6_overlap"] for r in rows if r["top6_overlap"] is not None]
    kinds = {}
    for kind in ("title", "content", "vocab"):
        sel = [(q, a, b) for q, a, b in zip(queries, fts, bm) if q["kind"] == kind]
        if not sel:
            continue
        kinds[kind] = {"queries": len(sel), "top1_equal": sum(bool(a and b and a[0] == b[0]) for _, a, b in sel)}
        if kind != "vocab":
            for name, col in (("fts5", 1), ("bm25", 2)):
                kinds[kind][f"{name}_source_top1"] = sum(s[col][:1] == [s[0]["source"]] for s in sel)
                kinds[kind][f"{name}_source_top6"] = sum(s[0]["source"] in s[col] for s in sel)
    return {"queries": n, "top1_equal": sum(r["top1_equal"] for r in rows),
            "top1_rate": sum(r["top1_equal"] for r in rows) / n if n else None,
            "top6_overlap_mean": statistics.fmean(overlaps) if overlaps else None,
            "top1_disagreements": sum("diagnosis" in r for r in rows), "causes": dict(causes), "by_kind": kinds}, rows


# -- report -----------------------------------------------------------------------------------------------------

def report(console: Console, results: list[dict], args) -> None:
    table = Table(title=f"Memory retrieval, k={K}, seed {args.seed}: FTS5 vs rank-bm25 (ms per query)")
    cols = ["size", "insert\nitems/s", "db MB\nper 10k", "FTS5\np50", "FTS5\np99", "tool\np50", "rank-bm25\nbuild s",
            "rank-bm25\np50", "rank-bm25\np99", "ratio bm25/\nFTS5 p50", "top-1\nagreement", "top-6\noverlap"]
    for c in cols:
        table.add_column(c, justify="right")
    for r in results:
        b, a, s = r["bm25"], r["agreement"], r["size_bytes"]
        table.add_row(f"{r['size']:,}", f"{r['insert']['items_per_s']:,.0f}",
                      f"{s['db_mb_per_10k']:.1f} ({s['disk_mb_per_10k']:.1f})", f"{r['fts5']['p50_ms']:.2f}",
                      f"{r['fts5']['p99_ms']:.2f}", f"{r['tool']['p50_ms']:.2f}", f"{b['build_s']:.2f}",
                      f"{b['p50_ms']:.1f}", f"{b['p99_ms']:.1f}", f"{b['ratio_p50']:,.0f}x",
                      f"{a['top1_equal']}/{a['queries']} ({a['top1_rate']:.0%})", f"{a['top6_overlap_mean']:.0%}")
    table.caption = (f"FTS5 and tool: {args.queries} queries, each its best of {args.rounds} interleaved rounds. "
                     f"rank-bm25: all queries below {BIG_BANK:,} items, the first {args.bm25_queries} at "
                     f"{BIG_BANK:,}+, timed once each; the ratio divides its p50 by the p50 of FTS5 on the same "
                     "queries, timed just before each. db MB: StoreStats.db_bytes (page_count * page_size); in "
                     "brackets the db + -wal files on disk after wal_checkpoint(TRUNCATE). Agreement: rank-bm25 "
                     "queries only.")
    console.print(table)
    kinds = Table(title="Agreement by query kind; 'source' = the item the query was drawn from (top-1 / top-6)")
    for c in ("size", "kind", "queries", "top-1 equal", "FTS5 finds source", "rank-bm25 finds source"):
        kinds.add_column(c, justify="right")
    for r in results:
        for kind, k in r["agreement"]["by_kind"].items():
            src = ["-", "-"] if kind == "vocab" else [f"{k[f'{m}_source_top1']} / {k[f'{m}_source_top6']}"
                                                     for m in ("fts5", "bm25")]
            kinds.add_row(f"{r['size']:,}", kind, str(k["queries"]), str(k["top1_equal"]), *src)
    console.print(kinds)
    for r in results:
        a, f, tables = r["agreement"], r["fts5"], r["size_bytes"]["by_table"]
        if tables:
            groups = Counter()
            for name, size in tables.items():
                groups["FTS5 index (items_fts_data)" if name == "items_fts_data" else
                       "FTS5 exact-word index (items_fts_exact_data)" if name == "items_fts_exact_data" else
                       "FTS5 copy of the text (items_fts_content)" if name == "items_fts_content" else
                       "items table" if name == "items" else "other tables and indexes"] += size
            console.print(f"{r['size']:,}: bytes per item: " + ", ".join(
                f"{g} {v / r['size']:,.0f}" for g, v in groups.most_common()))
        console.print(f"{r['size']:,}: FTS5 matched rows per query p50 {f['matched_rows_p50']:,.0f}, max "
                      f"{f['matched_rows_max']:,}; tool = store.search ids on {r['tool']['same_ids_as_store_search']}"
                      f"/{len(f['ms'])} queries; tool minus store.search per query, median "
                      f"{r['tool']['overhead_p50_us']:.0f} us")
    causes = Table(title="Top-1 disagreements rescored over the union of both top-6 lists: how often the FTS5 "
                         "formula (in Python) picks FTS5's top-1, and each variant towards BM25Retriever picks "
                         "rank-bm25's")
    for c in ("size", "disagree-\nments", *VARIANTS, "exact ties"):
        causes.add_column(c, justify="right")
    for r in results:
        a = r["agreement"]
        causes.add_row(f"{r['size']:,}", str(a["top1_disagreements"]),
                       *(str(a["causes"].get(v, 0)) for v in [*VARIANTS, "ties"]))
    console.print(causes)
    issue_table(console, results)


def issue_table(console: Console, results: list[dict]) -> None:
    """Issue 20's rows: the store at schema 7 (OR of every word, own copy of the text) vs now, same banks and queries."""
    table = Table(title="mem_search before/after issue 20 (same bank, same queries, timed interleaved)")
    for c in ("figure", "size", "before", "after", "goal"):
        table.add_column(c, justify="right")
    for r in results:
        n, b, f, rc = f"{r['size']:,}", r["before"], r["fts5"], r["recall"]
        table.add_row("store.search p50 ms", n, f"{b['p50_ms']:.2f}", f"{f['p50_ms']:.2f}", "")
        table.add_row("store.search p99 ms", n, f"{b['p99_ms']:.2f}", f"{f['p99_ms']:.2f}", "")
        table.add_row("  first round only (word frequencies not cached yet), p50 / p99 ms", n, "",
                      f"{f['first_round_p50_ms']:.2f} / {f['first_round_p99_ms']:.2f}", "")
        table.add_row("mem_search tool minus store.search, median us", n, "", f"{r['tool']['overhead_p50_us']:.0f}", "")
        table.add_row(f"recall@{rc['k']}, {rc['queries']} labelled queries", n, f"{rc['before']:.1%}",
                      f"{rc['after']:.1%}", "not lower")
        table.add_row("generated queries: source item in top 6", n,
                      f"{b['source_top6']}/{b['source_queries']}", f"{b['source_top6_after']}/{b['source_queries']}",
                      "")
        table.add_row("db MB per 10k items", n, f"{r['size_bytes_before']['db_mb_per_10k']:.1f}",
                      f"{r['size_bytes']['db_mb_per_10k']:.1f}", "")
        table.add_row("insert items/s", n, f"{r['insert']['before_items_per_s']:,.0f}",
                      f"{r['insert']['items_per_s']:,.0f}", "")
        table.add_row(f"rank-bm25 recall@{rc['k']} (same labelled set)", n, "", f"{rc['rank_bm25']:.1%}", "")
    table.caption = ("before: migrations 1-7 and the old query (every word OR-ed), kept in this script as "
                     "search_before; after: MemoryStore.search (exact words, then porter stems; a pruned OR). "
                     "Times: each query's best of the rounds; 'first round' is each query's first run. Each bank "
                     "also holds the 59 items of rlm_procedures and step_templates that data/memory_queries.jsonl "
                     "names.")
    console.print(table)
    order_table(console, results)


def order_table(console: Console, results: list[dict]) -> None:
    """Issue 26's memory-search decisions, same bank: the AND-first order (issue 20), the OR in FTS5's bm25 order
    (the default), and the OR with the per-field rerank of its best items (``rerank=True``)."""
    table = Table(title=f"mem_search order: AND-first (issue 20), OR (FTS5 order, default), OR + per-field rerank "
                        f"(rerank=True); recall@{RECALL_K} all / dev / held-out and ms per query")
    for c in ("size", "AND-first recall", "OR recall", "OR + rerank recall", "rank-bm25 recall",
              "AND-first p50 / p99", "OR p50 / p99", "OR + rerank p50 / p99", "goal"):
        table.add_column(c, justify="right")
    for r in results:
        h, a, o, f = r["recall"]["halves"], r["and_first"], r["fts5"], r["fts5_rerank"]
        cell = lambda x: " / ".join(f"{x[k]:.1%}" for k in ("all", "dev", "held_out"))  # noqa: E731
        table.add_row(f"{r['size']:,}", cell(h["and_first"]), cell(h["after"]), cell(h["fts5_rerank"]),
                      cell(h["rank_bm25"]), f"{a['p50_ms']:.2f} / {a['p99_ms']:.2f}",
                      f"{o['p50_ms']:.2f} / {o['p99_ms']:.2f}", f"{f['p50_ms']:.2f} / {f['p99_ms']:.2f}",
                      "recall >= rank-bm25; p50 <= 10, p99 <= 40 ms" if r["size"] >= BIG_BANK else
                      "recall >= rank-bm25")
    table.caption = ("dev: lines 1, 3, 5, ... of data/memory_queries.jsonl (orders and the rerank were chosen on "
                     "these); held-out: lines 2, 4, .... Times: each query's best of the rounds, the orders "
                     "interleaved.")
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000", help="bank sizes, comma-separated")
    ap.add_argument("--queries", type=int, default=200, help="queries per bank (FTS5 and the tool)")
    ap.add_argument("--bm25-queries", type=int, default=20,
                    help=f"queries ranked with rank-bm25 on banks of {BIG_BANK:,}+ items (smaller banks: all)")
    ap.add_argument("--rounds", type=int, default=3, help="timing rounds of FTS5 and the tool; best round per query")
    ap.add_argument("--batch", type=int, default=1000, help="items per add_many call")
    ap.add_argument("--domain-words", type=int, default=20_000, help="generated words after the pack's words")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="sizes 1000,10000 and 50 queries")
    ap.add_argument("--smoke", action="store_true",
                    help="a check that the script runs (make check): a 200-item bank, 8 queries, 1 round, seconds; "
                         "--out defaults to runs/bench_smoke/memory")
    ap.add_argument("--out", type=Path, help="results.json and the databases (default runs/bench_memory)")
    ap.add_argument("--keep-db", action="store_true", help="keep the SQLite files under --out")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.queries = "1000,10000", 50
    if args.smoke:
        args.sizes, args.queries, args.bm25_queries, args.rounds, args.domain_words = "200", 8, 8, 1, 500
    args.out = args.out or Path("runs/bench_smoke/memory" if args.smoke else "runs/bench_memory")
    sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    console, t_start = Console(width=150), time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    workdir = args.out if args.keep_db else Path(tempfile.mkdtemp(prefix="banks-", dir=args.out))
    console.print(f"load average at start: {os.getloadavg()}; SQLite {sqlite3.sqlite_version}, "
                  f"Python {platform.python_version()}, {os.cpu_count()} CPUs")
    with progress(console) as bar:
        t_gen, (all_items, vocab) = timed(make_items, max(sizes), args.seed, args.domain_words, bar)
    words = vocab.pop("words")
    lens = [len(it.content.split()) for it in all_items]
    shares = Counter(w for it in all_items[:2000] for w in TOKEN.findall(it.content.lower()))
    top = sum(c for _, c in shares.most_common(10)) / sum(shares.values())
    console.print(f"generated {len(all_items):,} items in {t_gen:.1f} s: vocabulary {vocab['pack_words']} pack words + "
                  f"{vocab['domain_words']:,} generated, Zipf s=1; content {min(lens)}-{max(lens)} words "
                  f"(mean {statistics.fmean(lens):.0f}); the 10 commonest content tokens are {top:.0%} of all")
    results = []
    try:
        for n in sizes:
            results.append(bench_size(console, all_items[:n], words, args, workdir))
            r = results[-1]
            console.print(f"[bold]{n:,}[/]: insert {r['insert']['items_per_s']:,.0f} items/s, FTS5 p50 "
                          f"{r['fts5']['p50_ms']:.2f} ms, rank-bm25 p50 {r['bm25']['p50_ms']:.1f} ms "
                          f"(build {r['bm25']['build_s']:.1f} s)")
    finally:
        if not args.keep_db:
            shutil.rmtree(workdir, ignore_errors=True)
    report(console, results, args)
    total = time.perf_counter() - t_start
    console.print(f"load average at end: {os.getloadavg()}; total {total:.0f} s")
    out = args.out / "results.json"
    out.write_text(json.dumps({
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()} | {"sizes": sizes},
        "environment": {"sqlite": sqlite3.sqlite_version, "python": platform.python_version(),
                        "cpus": os.cpu_count(), "loadavg_end": os.getloadavg()},
        "generation": {**vocab, "seconds": t_gen, "content_words_mean": statistics.fmean(lens),
                       "top10_token_share": top},
        "total_seconds": total, "results": results}, indent=1))
    console.print(f"raw results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
