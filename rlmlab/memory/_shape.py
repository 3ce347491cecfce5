"""Retrieval by query shape as well as words: the ``shape`` retriever.

A task's words find an item that talks about the same things; its shape (:func:`query_shape`: the query with
its literals replaced by slot types) finds an item learned from a task asked the same way, even when the query
has no content word at all ("What is 2 + 2?" is ``What is {number} + {number}?``). Items store the shapes of
their source queries (``MemoryItem.shape``, indexed by migration 10 with slot markers and operators as tokens).

Ranking: an item whose stored shape is close to the query's (similarity at least ``min_similarity``) scores its
similarity plus ``word_weight`` times its word score (bm25 over the store's text indexes, divided by the best
word score of the query); any other item scores only the word part. With ``word_weight <= min_similarity`` every
shape-close item ranks above every item found by words alone, and among shape-close items the words decide
between "How many async functions ..." and "How many unsafe blocks ..." (same shape but one word).
"""

from __future__ import annotations

from rlmlab.errors import ConfigError
from rlmlab.memory._literals import query_shape, shape_similarity, shape_tokens
from rlmlab.memory._records import Hit, check_filters, check_k
from rlmlab.memory._store import MemoryStore

__all__ = ["ShapeRetriever", "SHAPE_INDEX"]

SHAPE_INDEX = "items_fts_shape"
_WORD_DEPTH = 16  # word hits read per query (at least): enough to give the shape-close items their word scores
_CANDIDATES = 256  # shape candidates FTS5 ranks before the exact similarity is computed


class ShapeRetriever:
    """Shape-close items first, then items found by words (see the module docstring).

    ``min_similarity`` (0-1, default 0.6) is how alike two shapes must be to count (:func:`shape_similarity`);
    ``word_weight`` (0-1, default 0.5) how much a word match adds. Without any shape in the bank, or with a
    query of no shape token, the ranking is the store's word search (``MemoryStore.search``) unchanged.
    """

    def __init__(self, store: MemoryStore, *, min_similarity: float = 0.6, word_weight: float = 0.5):
        for label, value in (("min_similarity", min_similarity), ("word_weight", word_weight)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ConfigError(f"shape retriever {label}: {value!r}; use a number from 0 to 1")
        self.store, self.min_similarity, self.word_weight = store, float(min_similarity), float(word_weight)
        present = {r[0] for r in store.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        self._indexed = SHAPE_INDEX in present

    def shape_scores(self, query: str, **filters: str | None) -> dict[str, float]:
        """Item id -> similarity of its closest stored shape to the query's, for items at ``min_similarity`` or
        more (filters as ``MemoryStore.items``: active items unless ``status`` is given)."""
        filters.setdefault("status", "active")
        given = check_filters(filters)
        shape = query_shape(query)
        tokens = list(dict.fromkeys(t for t in shape_tokens(shape) if t != "-"))  # a spaced "-" is not indexed
        if not self._indexed or not tokens:
            return {}
        match = " OR ".join(f'"{t}"' for t in tokens)
        where = "".join(f" AND items.{c} = ?" for c in given)  # c is one of FILTERS (check_filters)
        rows = self.store.execute(
            f"SELECT items.id, items.shape FROM (SELECT rowid, bm25({SHAPE_INDEX}) AS score FROM {SHAPE_INDEX} "
            f"WHERE {SHAPE_INDEX} MATCH ? ORDER BY score LIMIT ?) r JOIN items ON items.n = r.rowid "
            f"WHERE items.shape IS NOT NULL{where}", [match, _CANDIDATES, *given.values()])
        out = {}
        for row in rows:
            best = max(shape_similarity(shape, s) for s in row["shape"].splitlines())
            if best >= self.min_similarity:
                out[row["id"]] = best
        return out

    def search(self, query: str, k: int = 6, **filters: str | None) -> list[Hit]:
        """Up to ``k`` hits, best first (ties by id); filters as ``MemoryStore.search``."""
        check_k(k)
        shaped = self.shape_scores(query, **filters)
        words = self.store.search(query, max(k, _WORD_DEPTH), **filters)
        if not shaped:
            return words[:k]
        top = max((h.score for h in words), default=0.0)
        word_part = {h.id: (h.score / top if top > 0 else 0.0) for h in words}
        scores = {i: self.word_weight * s for i, s in word_part.items()}
        for i, sim in shaped.items():
            scores[i] = sim + self.word_weight * word_part.get(i, 0.0)
        ranked = sorted(scores, key=lambda i: (-scores[i], i))[:k]
        known = {h.id: h for h in words}
        missing = [i for i in ranked if i not in known]
        for item in self.store.get_many(missing):
            known[item.id] = Hit(item.id, item.title, item.description, item.polarity, item.role, 0.0)
        return [_rescored(known[i], scores[i]) for i in ranked]

    def __repr__(self) -> str:
        return f"ShapeRetriever(min_similarity={self.min_similarity}, word_weight={self.word_weight})"


def _rescored(hit: Hit, score: float) -> Hit:
    return Hit(hit.id, hit.title, hit.description, hit.polarity, hit.role, round(float(score), 6))

