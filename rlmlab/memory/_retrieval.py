"""Retrieval policies: which L2 items the auto-inject mode retrieves for a task (k per polarity, scope).

A policy is a plug-in in ``RETRIEVAL_POLICIES``; ``mixed`` takes the top-k success strategies and the
top-k failure guardrails for the task's words, scoped to the task's domain plus domain-free items.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from rlmlab.errors import ConfigError
from rlmlab.registry import PolicyRegistry
from rlmlab.memory._records import Hit, MemoryItem
from rlmlab.memory._retrieve import make_retriever
from rlmlab.memory._store import MemoryStore

__all__ = ["RetrievalPolicy", "Retrieved", "MixedRetrieval", "RETRIEVAL_POLICIES", "SCOPES"]

# "domain": the task's domain and items with no domain; "domain_only": the task's domain; "any": all items.
SCOPES = ("domain", "domain_only", "any")
_OVERFETCH = 5  # candidates per wanted item, before scoping by domain


@dataclass
class Retrieved:
    """What a retrieval policy found, best first per polarity, with the hits' scores."""

    query: str
    successes: list[MemoryItem] = field(default_factory=list)
    failures: list[MemoryItem] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        return [it.id for it in self.successes + self.failures]

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "success": [it.id for it in self.successes],
                "failure": [it.id for it in self.failures], "scores": self.scores}


class RetrievalPolicy(Protocol):
    name: str

    def retrieve(self, store: MemoryStore, query: str, domain: str | None) -> Retrieved: ...


class MixedRetrieval:
    """Top ``k_success`` strategies and top ``k_failure`` guardrails of ``layer`` for the query.

    ``retriever`` is a name in ``RETRIEVERS`` ("fts5" by default); ``scope`` one of ``SCOPES``.
    """

    name = "mixed"

    def __init__(self, k_success: int = 3, k_failure: int = 2, *, scope: str = "domain", retriever: str = "fts5",
                 layer: str = "L2"):
        for label, k in (("k_success", k_success), ("k_failure", k_failure)):
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= 20:
                raise ConfigError(f"retrieval {label}: {k!r}; use an integer from 0 to 20")
        if scope not in SCOPES:
            raise ConfigError(f"retrieval scope: {scope!r}; use one of {', '.join(SCOPES)}")
        self.k_success, self.k_failure, self.scope, self.retriever, self.layer = (
            k_success, k_failure, scope, retriever, layer)

    def _in_scope(self, item: MemoryItem, domain: str | None) -> bool:
        if self.scope == "any":
            return True
        if self.scope == "domain_only":
            return item.domain == domain
        return item.domain is None or item.domain == domain

    def retrieve(self, store: MemoryStore, query: str, domain: str | None) -> Retrieved:
        out = Retrieved(query)
        retriever = make_retriever(self.retriever, store)
        for polarity, k, bucket in (("success", self.k_success, out.successes), ("failure", self.k_failure, out.failures)):
            if k == 0:
                continue
            hits: list[Hit] = retriever.search(query, min(k * _OVERFETCH, 100), polarity=polarity, layer=self.layer)
            items = store.get_many([h.id for h in hits])
            for hit, item in zip(hits, items):
                if len(bucket) < k and self._in_scope(item, domain):
                    bucket.append(item)
                    out.scores[item.id] = round(hit.score, 4)
        return out

    def __repr__(self) -> str:
        return (f"MixedRetrieval(k_success={self.k_success}, k_failure={self.k_failure}, scope={self.scope!r}, "
                f"retriever={self.retriever!r})")


RETRIEVAL_POLICIES: PolicyRegistry = PolicyRegistry("retrieval policy")


@RETRIEVAL_POLICIES.register("mixed")
def _mixed(**options: Any) -> MixedRetrieval:
    """Top-k success strategies plus top-k failure guardrails (default 3 + 2), domain-scoped."""
    return MixedRetrieval(**options)


@RETRIEVAL_POLICIES.register("success_only")
def _success_only(k_success: int = 3, **options: Any) -> MixedRetrieval:
    """Only success strategies (ReasoningBank without guardrails), for ablations."""
    return MixedRetrieval(k_success, 0, **options)


@RETRIEVAL_POLICIES.register("templates")
def _templates(k_success: int = 1, **options: Any) -> MixedRetrieval:
    """Code templates for a constrained step: the one best success strategy (k=1, as ReasoningBank retrieves
    best), ranked by query shape as well as words (retriever "shape"); no guardrails."""
    options.setdefault("retriever", "shape")
    return MixedRetrieval(k_success, 0, **options)
