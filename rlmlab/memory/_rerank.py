"""The second stage of MemoryStore.search with ``rerank=True``: the best FTS5 candidates rescored with per-field
BM25 added. Off by default: the first stage must then rank ``POOL`` items exactly instead of k, which on a large
store about doubles the search time.

FTS5's ``bm25()`` weights each column's term count and saturates once over the whole row, so a title hit is worth
at most about two body hits, and a word repeated in a short body beats the same word in a title. Per-field BM25
(as ``BM25Retriever`` scores with rank-bm25) saturates each field on its own, with the field's own length and
document frequency, and sums the fields with ``FIELD_WEIGHTS``. An item's second-stage score is the sum of both:
FTS5's view of the row plus the per-field view. Ranking every matching row by per-field BM25 would cost FTS5 its
MaxScore bound (each field can add ``idf * (k1 + 1)``: four times looser), so only the first stage's best ``POOL``
items are rescored.

The sum and ``POOL`` were chosen on the dev half of ``data/memory_queries.jsonl`` (recall@5, banks as
``benchmarks/memory.py`` builds them) against FTS5's order alone, per-field BM25 alone, smaller pools, FTS5's
formula with per-field lengths and rank fusion; the figures of each, and the latency, are in
``studies/speed_per_task/REPORT.md`` (memory recall, session 6).

A known cost beside latency: a long question that shares an incidental word with a template's title ("how much
pizza", "How much more money is needed") can put that template first (``benchmarks/template_recall.py`` measures
word retrieval's recall@1 of the right template).

What it reads: the candidates' field texts and their token counts (FTS5's docsize rows), each query word's
document frequency per column (a temporary ``fts5vocab`` table: one pass over the word's postings, cached until
the database changes) and the columns' token totals from FTS5's averages record. Words are counted in a field as
whole tokens by ``tokenize``'s rules. If the averages record cannot be read (another FTS5 format), the first
stage's order stands.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import Counter
from dataclasses import replace
from functools import lru_cache

from rlmlab.memory._records import Hit
from rlmlab.memory._tokens import FIELD_WEIGHTS, tokenize

__all__ = ["POOL", "FieldRerank", "bm25_idf", "db_state"]

POOL = 30  # first-stage items rescored per search: the smallest pool with the whole dev-half gain (15-40 tried)
_COLUMNS = ("title", "description", "content", "tags")  # the indexes' column order
_K1, _B = 1.2, 0.75  # FTS5 bm25()'s constants (fts5_aux.c)


def bm25_idf(rows: int, df: int) -> float:
    """FTS5 bm25()'s idf: ln((N - df + 0.5) / (df + 0.5)), or 1e-6 where that is <= 0."""
    value = math.log((rows - df + 0.5) / (df + 0.5))
    return value if value > 0 else 1e-6


def db_state(conn: sqlite3.Connection) -> tuple[int, int]:
    """Moves whenever the database changes: a commit by another connection moves ``PRAGMA data_version``, one of
    ours ``total_changes``; caches of document frequencies are keyed on it."""
    return conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes


@lru_cache(maxsize=256)
def _finder_of(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, words)) + r")(?![^\W_])")


def _finder(words: list[str]) -> re.Pattern[str]:
    """Finds the query ``words`` as whole tokens (``tokenize``'s rules) in lower-cased ASCII text."""
    return _finder_of(tuple(sorted(words, key=len, reverse=True)))


def _varints(blob: bytes) -> list[int]:
    """SQLite's big-endian varints (1-9 bytes; the ninth byte gives 8 bits), as FTS5 writes its records."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for j in range(9):
            byte = blob[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


class FieldRerank:
    """Per-field BM25 for one FTS5 index (``table``) on ``conn``; used under the store's lock."""

    def __init__(self, conn: sqlite3.Connection, table: str):
        self.conn, self.table = conn, table
        self._vocab = f"temp.{table}_rerank_vocab"
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {self._vocab} USING fts5vocab(main, {table}, 'col')")
        self._key: tuple[int, int] | None = None
        self._df: dict[str, dict[str, int]] = {}
        self.rows = 0
        self.avg: list[float] | None = None

    def _refresh(self) -> None:
        key = db_state(self.conn)
        if key == self._key:
            return
        self._key, self._df, self.avg = key, {}, None
        # FTS5's averages record (rowid 1 of %_data): the row count, then each column's token total.
        row = self.conn.execute(f"SELECT block FROM {self.table}_data WHERE id = 1").fetchone()
        values = _varints(bytes(row[0])) if row and row[0] else []
        if len(values) == 1 + len(_COLUMNS) and values[0] > 0:
            self.rows = values[0]
            self.avg = [total / self.rows for total in values[1:]]

    def df(self, word: str) -> dict[str, int]:
        """Rows holding ``word`` in each column (absent columns: none)."""
        if word not in self._df:
            self._df[word] = dict(self.conn.execute(f"SELECT col, doc FROM {self._vocab} WHERE term = ?", [word]))
        return self._df[word]

    def idf(self, word: str, column: str) -> float:
        """bm25()'s idf over the column's rows (:func:`bm25_idf`)."""
        return bm25_idf(self.rows, self.df(word).get(column, 0))

    def score(self, texts: dict[str, str], lengths: list[int], words: list[str],
              found: re.Pattern[str] | None = None) -> float:
        """The per-field BM25 of one item for the query ``words``: its field ``texts`` and their token counts;
        ``found`` is ``_finder(words)`` when the caller scores several items."""
        assert self.avg is not None
        found = found or _finder(words)
        total = 0.0
        for i, column in enumerate(_COLUMNS):
            text = texts[column] or ""
            if not lengths[i] or not self.avg[i]:
                continue
            counts = Counter(found.findall(text.lower()) if text.isascii() else
                             [t for t in tokenize(text) if t in words])
            norm = _K1 * (1 - _B + _B * lengths[i] / self.avg[i])
            for word, tf in counts.items():
                total += FIELD_WEIGHTS[column] * self.idf(word, column) * tf * (_K1 + 1) / (tf + norm)
        return total

    def rerank(self, hits: list[Hit], words: list[str]) -> list[Hit]:
        """``hits`` (the first stage's, best first) reordered by FTS5's bm25 plus per-field BM25, best first, ties
        by id; hits holding no query word as written (filled in by stems) keep their order after the others."""
        self._refresh()
        if self.avg is None or len(hits) < 2:
            return hits
        marks = ", ".join("?" * len(hits))
        # The fields and their token counts (FTS5's %_docsize row: one varint per column).
        rows = {r[0]: (dict(zip(_COLUMNS, r[2:])), _varints(bytes(r[1]))) for r in self.conn.execute(
            f"SELECT items.id, d.sz, {', '.join(f'items.{c}' for c in _COLUMNS)} FROM items"
            f" JOIN {self.table}_docsize d ON d.id = items.n WHERE items.id IN ({marks})", [h.id for h in hits])}
        found = _finder(words)
        scored = [(self.score(rows[h.id][0], rows[h.id][1], words, found), h) for h in hits
                  if h.id in rows and len(rows[h.id][1]) == len(_COLUMNS)]
        ranked = [replace(h, score=h.score + s) for s, h in scored if s > 0]
        ranked.sort(key=lambda h: (-h.score, h.id))
        rest = [h for s, h in scored if s <= 0]
        floor = ranked[-1].score if ranked else math.inf
        return ranked + [replace(h, score=min(h.score, floor)) for h in rest]
