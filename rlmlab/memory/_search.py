"""Full-text ranking for MemoryStore.search over its two FTS5 indexes (exact words, then porter stems).

Both indexes rank with FTS5's own ``bm25()`` and ``FIELD_WEIGHTS``. The exact index (``unicode61``) answers
first; the stemmed one (``porter unicode61``) only fills what is left, so "handle" still finds "handles". Stems
alone cost recall: "arguments" (1 item of a 10,000-item bank) and "argument" (1,421 items) share a stem and its
idf, so a query saying "arguments" no longer singles out the item that does (recall@5 on
``data/memory_queries.jsonl`` at 10,000 items fell from 90.3% to 86.4% with the stemmed index alone).

Each index ranks the items holding any query word (OR) by bm25 alone. An earlier order put the items holding every
word first (AND, then OR); on ``data/memory_queries.jsonl`` plain OR had recall@5 at or above it on both halves
at 1,000, 10,000 and 100,000 items (96.1 / 91.3 / 84.5% against 95.1 / 91.3 / 83.5%; ``benchmarks/memory.py``
keeps the AND-first order as a reference), so bm25's weights, not the word count, decide. FTS5 scores every
row its MATCH expression matches, and computes each word's idf by reading the word's whole posting list, so an
OR over a word found in half of 100,000 items scores 50,000 rows. Two savings that keep the plain OR's ranking:

- A word found in at least half the items has idf <= 0, which ``bm25()`` replaces with 1e-6: it adds no weight
  (only a tie between rows could tip on it). The OR step leaves such words out and only falls back to them when
  the other words match too few items.
- MaxScore (Turtle and Flood, 1995): a word adds at most ``idf * (k1 + 1)`` to a row's score. With the query's
  rarer words R and its commoner words C, a row holding no word of R scores at most ``sum(idf(C)) * (k1 + 1)``.
  FTS5 ranks the rows holding a word of R twice: by R alone (``R``) and by every word (``(R) AND (C)``); merged,
  they give the exact best rows among those holding a word of R. If the last one needed beats the bound, no
  other row can enter; otherwise one more word moves from C to R.

With ``rerank`` (``MemoryStore(path, rerank=True)``; off by default) the best ``POOL`` (30) items of this ranking
are rescored with per-field BM25 added (``memory/_rerank.py``): recall@5 on the labelled set at or above
rank-bm25's at every bank size, for about twice the latency at 100,000 items.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from rlmlab.memory._records import Hit, check_filters
from rlmlab.memory._rerank import POOL, FieldRerank, bm25_idf, db_state
from rlmlab.memory._tokens import FIELD_WEIGHTS

__all__ = ["INDEXES", "FtsSearch"]

INDEXES = ("items_fts_exact", "items_fts")  # searched in this order; the second only fills what the first left
_COLUMNS = ("title", "description", "content", "tags")  # the indexes' column order
_WEIGHTS = ", ".join(repr(FIELD_WEIGHTS[c]) for c in _COLUMNS)
_K1 = 1.2  # FTS5 bm25()'s k1 (fts5_aux.c): one word adds at most idf * (k1 + 1) to a row's score
_OVERFETCH = 8  # rows FTS5 ranks per wanted row before the join; filters on role or polarity rarely leave fewer


def _quoted(words: Iterable[str], op: str) -> str:
    return f" {op} ".join(f'"{w}"' for w in words)


class _Frequencies:
    """Document frequencies of words in one FTS5 index and the number of items, cached until the database
    changes (:func:`db_state`)."""

    def __init__(self, table: str):
        self.table = table
        self._key: tuple[int, int] | None = None
        self._df: dict[str, int] = {}
        self.items = 0

    def refresh(self, conn: sqlite3.Connection) -> None:
        key = db_state(conn)
        if key != self._key:
            self._key, self._df = key, {}
            self.items = conn.execute("SELECT count(*) FROM items").fetchone()[0]  # FTS5's row count: every item

    def df(self, conn: sqlite3.Connection, word: str) -> int:
        if word not in self._df:
            self._df[word] = conn.execute(f"SELECT count(*) FROM {self.table} WHERE {self.table} MATCH ?",
                                          [f'"{word}"']).fetchone()[0]
        return self._df[word]

    def idf(self, conn: sqlite3.Connection, word: str) -> float:
        """bm25()'s idf over the index's rows (:func:`bm25_idf`)."""
        return bm25_idf(self.items, self.df(conn, word))


class FtsSearch:
    """Ranked search over the store's FTS5 indexes; ``conn`` is used under the store's lock by the caller."""

    def __init__(self, conn: sqlite3.Connection, *, rerank: bool = False):
        self.conn = conn
        self.rerank = rerank  # rescore the best POOL items with per-field BM25 added (memory/_rerank.py)
        # A database opened with fewer migrations (a test or benchmark of an older schema) lacks some indexes.
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        self._freq = {table: _Frequencies(table) for table in INDEXES if table in present}
        self._fields: FieldRerank | None = None  # made at the first reranked search
        self.trace: Callable[[str, str], None] | None = None  # (index, MATCH) of each ranked query, for tests

    def search(self, words: list[str], k: int, filters: dict[str, str | None]) -> list[Hit]:
        """The best ``k`` items for the query words (from ``query_tokens``), best first. With ``rerank``, FTS5's
        best ``max(k, POOL)`` are ordered by FTS5's bm25 plus per-field BM25 (``memory/_rerank.py``)."""
        if not (self.rerank and INDEXES[0] in self._freq):
            return self._search(words, k, filters)
        self._fields = self._fields or FieldRerank(self.conn, INDEXES[0])
        return self._fields.rerank(self._search(words, max(k, POOL), filters), words)[:k]

    def _search(self, words: list[str], k: int, filters: dict[str, str | None]) -> list[Hit]:
        hits: list[Hit] = []
        for table, freq in self._freq.items():
            freq.refresh(self.conn)
            found = [w for w in words if freq.df(self.conn, w) > 0]
            if found:
                hits += self._search_index(table, found, k - len(hits), {h.id for h in hits}, filters)
            if len(hits) >= k:
                break
        # A later step (stems after exact words, weightless words after the others) may score higher on its own
        # scale; the list is in step order, so its scores are capped to keep them non-increasing.
        for i in range(1, len(hits)):
            if hits[i].score > hits[i - 1].score:
                hits[i] = replace(hits[i], score=hits[i - 1].score)
        return hits

    def _search_index(self, table: str, words: list[str], need: int, seen: set[str],
                      filters: dict[str, str | None]) -> list[Hit]:
        """Up to ``need`` items not in ``seen`` holding any of ``words``, best bm25 first."""
        freq = self._freq[table]
        weighty = [w for w in words if 2 * freq.df(self.conn, w) < freq.items]  # the others have idf 1e-6
        hits = self._or(table, weighty, need, seen, filters) if weighty else []
        if len(hits) < need and len(weighty) < len(words):
            taken = seen | {h.id for h in hits}  # the weightless words fill what is left, in bm25 order
            hits += self._top(table, _quoted(words, "OR"), need - len(hits), taken, filters)
        return hits

    def _or(self, table: str, words: list[str], need: int, seen: set[str],
            filters: dict[str, str | None]) -> list[Hit]:
        """The best ``need`` items not in ``seen`` holding any of ``words``, as the OR of them all ranks them,
        by MaxScore (see the module docstring); the plain OR when pruning could not save much."""
        freq, conn = self._freq[table], self.conn
        order = sorted(words, key=lambda w: (freq.df(conn, w), w))
        total = sum(freq.df(conn, w) for w in order)
        rare_rows = 0
        for split in range(1, len(order)):
            rare, common = order[:split], order[split:]
            rare_rows += freq.df(conn, rare[-1])
            if 2 * rare_rows > total:
                break  # R's rows are most of the work already
            either = f"({_quoted(rare, 'OR')})"
            best = {h.id: h for h in self._top(table, either, need, seen, filters)}
            best.update((h.id, h) for h in self._top(table, f"{either} AND ({_quoted(common, 'OR')})", need, seen,
                                                     filters))
            top = sorted(best.values(), key=lambda h: (-h.score, h.id))[:need]
            bound = (_K1 + 1) * sum(freq.idf(conn, w) for w in common)
            if len(top) == need and top[-1].score > bound:
                return top
        return self._top(table, _quoted(order, "OR"), need, seen, filters)

    def _top(self, table: str, match: str, need: int, seen: set[str], filters: dict[str, str | None]) -> list[Hit]:
        """The best ``need`` items for one MATCH expression that the filters keep, leaving out ``seen``; by bm25,
        ties by id.

        FTS5 ranks its own rows (``ORDER BY ... LIMIT`` inside the virtual table: no join per matched row) and
        only the best ``max(_OVERFETCH * k, 64)`` are joined with items and filtered here (k = need + the seen
        ids). That is exact when every match was fetched, or when the k-th kept row scores strictly better than
        the last one fetched (no cut row can tie or beat it); otherwise the full join decides.
        """
        if self.trace is not None:
            self.trace(table, match)
        k = need + len(seen)
        given = check_filters(filters)
        cut = max(_OVERFETCH * k, 64)
        bm25 = f"bm25({table}, {_WEIGHTS})"
        cols = ", ".join(f"items.{c}" for c in ("id", "title", "description", "polarity", "role", *given))
        rows = self.conn.execute(
            f"SELECT {cols}, r.score FROM (SELECT rowid, {bm25} AS score FROM {table} WHERE {table} MATCH ?"
            f" ORDER BY score LIMIT ?) r JOIN items ON items.n = r.rowid ORDER BY r.score, items.id",
            [match, cut]).fetchall()
        kept = [r for r in rows if all(r[c] == v for c, v in given.items())][:k]
        if len(rows) == cut and not (len(kept) == k and kept[-1]["score"] < rows[-1]["score"]):
            where = "".join(f" AND items.{c} = ?" for c in given)
            kept = self.conn.execute(
                f"SELECT items.id, items.title, items.description, items.polarity, items.role, {bm25} AS score"
                f" FROM {table} JOIN items ON items.n = {table}.rowid WHERE {table} MATCH ?{where}"
                f" ORDER BY score, items.id LIMIT ?", [match, *given.values(), k]).fetchall()
        # bm25() is lower-is-better (negative); Hit.score is higher-is-better.
        return [_hit(r) for r in kept if r["id"] not in seen][:need]


def _hit(row: Any) -> Hit:
    return Hit(row["id"], row["title"], row["description"], row["polarity"], row["role"], -row["score"])
