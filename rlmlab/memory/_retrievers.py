"""Retrievers over memory items: FTS5 in SQLite, rank-bm25 in memory, and embeddings (the upgrade path).

All three share the ``Retriever`` protocol and return :class:`Hit` lists, best first, ties broken by id,
so a policy or an experiment can swap one for another by name through ``RETRIEVERS``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from rank_bm25 import BM25Okapi

from rlmlab.errors import ConfigError
from rlmlab.registry import Registry
from rlmlab.memory._records import Hit, MemoryItem, check_filters, check_k
from rlmlab.memory._shape import ShapeRetriever
from rlmlab.memory._store import MemoryStore
from rlmlab.memory._tokens import FIELD_WEIGHTS, query_tokens, tokenize

__all__ = ["Retriever", "FTS5Retriever", "BM25Retriever", "EmbeddingRetriever", "RETRIEVERS",
           "register_retriever", "make_retriever", "Embed"]

Embed = Callable[[list[str]], Sequence[Sequence[float]]]


@runtime_checkable
class Retriever(Protocol):
    """Something that ranks memory items for a free-text query."""

    def search(self, query: str, k: int = 6, **filters: str | None) -> list[Hit]:
        """Up to ``k`` hits, best first; filters: polarity, role, domain, scope, layer (exact match)."""
        ...


class FTS5Retriever:
    """SQLite FTS5 with column-weighted bm25 over the store's index (see ``MemoryStore.search``)."""

    def __init__(self, store: MemoryStore):
        self.store = store

    def search(self, query: str, k: int = 6, **filters: str | None) -> list[Hit]:
        return self.store.search(query, k, **filters)


def _filtered(items: Sequence[MemoryItem], filters: dict[str, str | None]) -> list[int]:
    given = check_filters(filters)
    return [i for i, it in enumerate(items) if all(getattr(it, name) == value for name, value in given.items())]


def _hit(item: MemoryItem, score: float) -> Hit:
    return Hit(item.id, item.title, item.description, item.polarity, item.role, float(score))


class BM25Retriever:
    """In-memory BM25 (``rank_bm25.BM25Okapi``) over a fixed list of items.

    One index per field (title, description, content, tags); an item's score is the sum of its field
    scores weighted by ``FIELD_WEIGHTS``. This is *not* FTS5's formula: FTS5's bm25() weights the term
    counts per column before a single saturation over the whole row, so a title hit is worth at most
    about 2 content hits there, while here each field saturates on its own and a title hit counts ~8x.
    The two agree on the top item for about half of generated queries (benchmarks/memory.py); queries made
    of an item's content words find it far more often with FTS5. Tokens come from the same tokeniser as the
    FTS5 index. Only items containing at least one query word are returned (FTS5's OR-match semantics).
    The index is built once: rebuild after the bank changes.
    """

    def __init__(self, items: Iterable[MemoryItem]):
        self.items = sorted(items, key=lambda it: it.id)
        self._tokens: dict[str, list[list[str]]] = {
            "title": [tokenize(it.title) for it in self.items],
            "description": [tokenize(it.description) for it in self.items],
            "content": [tokenize(it.content) for it in self.items],
            "tags": [tokenize(" ".join(it.tags)) for it in self.items],
        }
        # BM25Okapi divides by the average document length, so a field empty in every item gets no index.
        self._indexes = {f: BM25Okapi(toks) for f, toks in self._tokens.items() if any(toks)}
        self._vocab = [set().union(*(toks[i] for toks in self._tokens.values())) for i in range(len(self.items))]

    @classmethod
    def from_store(cls, store: MemoryStore, **filters: str | None) -> "BM25Retriever":
        """An index over the store's items (optionally only those matching ``filters``)."""
        return cls(store.items(**filters))

    def search(self, query: str, k: int = 6, **filters: str | None) -> list[Hit]:
        check_k(k)
        tokens = query_tokens(query)
        candidates = _filtered(self.items, filters)
        if not tokens or not candidates:
            return []
        totals = [0.0] * len(self.items)
        for field, index in self._indexes.items():
            for i, s in enumerate(index.get_scores(tokens)):
                totals[i] += FIELD_WEIGHTS[field] * float(s)
        wanted = set(tokens)
        matched = [i for i in candidates if self._vocab[i] & wanted]
        matched.sort(key=lambda i: (-totals[i], self.items[i].id))
        return [_hit(self.items[i], totals[i]) for i in matched[:k]]


class EmbeddingRetriever:
    """Cosine similarity over embeddings: the upgrade path from lexical retrieval.

    ``embed(texts) -> vectors`` is any callable (a sentence-transformer's ``encode``, an API client, a
    test's bag-of-words): it is called once with every item's text (title, description, content, tags),
    when the retriever is built, and once per query with ``[query]``. Hits have a cosine above
    ``min_score`` (default 0: unrelated and opposite items are left out). Plain Python, no numpy needed.
    """

    def __init__(self, items: Iterable[MemoryItem], embed: Embed, *, min_score: float = 0.0):
        if not callable(embed):
            raise ConfigError("embed: expected a callable taking a list of texts and returning a list of vectors")
        self.items = sorted(items, key=lambda it: it.id)
        self.embed = embed
        self.min_score = min_score
        texts = [self.item_text(it) for it in self.items]
        self._vectors = [_unit(v) for v in self._embed(texts)] if texts else []

    @staticmethod
    def item_text(item: MemoryItem) -> str:
        return "\n".join([item.title, item.description, item.content, " ".join(item.tags)])

    def _embed(self, texts: list[str]) -> list[list[float]]:
        vectors = [list(map(float, v)) for v in self.embed(texts)]
        if len(vectors) != len(texts):
            raise ConfigError(f"embed returned {len(vectors)} vectors for {len(texts)} texts")
        return vectors

    def search(self, query: str, k: int = 6, **filters: str | None) -> list[Hit]:
        check_k(k)
        candidates = _filtered(self.items, filters)
        if not query.strip() or not candidates:
            return []
        q = _unit(self._embed([query])[0])
        if len(q) != len(self._vectors[0]):
            raise ConfigError(f"embed returned a {len(q)}-dimensional query vector; items have {len(self._vectors[0])}")
        scores = {i: sum(a * b for a, b in zip(q, self._vectors[i])) for i in candidates}
        ranked = sorted((i for i in candidates if scores[i] > self.min_score),
                        key=lambda i: (-scores[i], self.items[i].id))
        return [_hit(self.items[i], scores[i]) for i in ranked[:k]]


def _unit(v: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v] if norm else list(v)


RetrieverFactory = Callable[..., Retriever]

RETRIEVERS: Registry = Registry("retriever")


def register_retriever(name: str) -> Callable[[RetrieverFactory], RetrieverFactory]:
    """Register ``factory(store, **options) -> Retriever`` under ``name``; a second use of a name is an error."""
    return RETRIEVERS.register(name)


def make_retriever(name: str, store: MemoryStore, **options: Any) -> Retriever:
    """The retriever registered as ``name`` over ``store``; ConfigError naming the known ones if unknown."""
    return RETRIEVERS.make(name, store=store, **options)


@register_retriever("fts5")
def _fts5(store: MemoryStore) -> Retriever:
    """SQLite FTS5, column-weighted bm25; sees writes immediately."""
    return FTS5Retriever(store)


@register_retriever("bm25")
def _bm25(store: MemoryStore) -> Retriever:
    """rank-bm25 over a snapshot of the store's items."""
    return BM25Retriever.from_store(store)


@register_retriever("embedding")
def _embedding(store: MemoryStore, *, embed: Embed, min_score: float = 0.0) -> Retriever:
    """Cosine over ``embed(texts)`` vectors of a snapshot of the store's items."""
    return EmbeddingRetriever(store.items(), embed, min_score=min_score)


@register_retriever("shape")
def _shape(store: MemoryStore, *, min_similarity: float = 0.6, word_weight: float = 0.5) -> Retriever:
    """Items whose stored query shape (MemoryItem.shape) is close to the query's first, words fill in; plain FTS5
    word search when no stored shape is close."""
    return ShapeRetriever(store, min_similarity=min_similarity, word_weight=word_weight)
