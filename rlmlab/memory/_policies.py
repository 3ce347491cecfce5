"""Retrieval policies: which L2 items the auto-inject mode retrieves for a task (k per polarity, scope).

A policy is a plug-in in ``RETRIEVAL_POLICIES``; ``mixed`` takes the top-k success strategies and the
top-k failure guardrails for the task's words, scoped to the task's domain plus domain-free items.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from rlmlab.errors import ConfigError
from rlmlab.registry import Registry
from rlmlab.memory._literals import query_shape
from rlmlab.memory._records import Hit, MemoryItem
from rlmlab.memory._retrievers import make_retriever
from rlmlab.memory._store import MemoryStore
from rlmlab.memory._templates import TemplateError, normalise_template

__all__ = ["RetrievalPolicy", "Retrieved", "MixedRetrieval", "RETRIEVAL_POLICIES", "RETRIEVAL_SCOPES"]

# "domain": the task's domain and items with no domain; "domain_only": the task's domain; "any": all items.
RETRIEVAL_SCOPES = ("domain", "domain_only", "any")
_OVERFETCH = 5  # candidates per wanted item, before scoping by domain
_GUARD_K = 20  # failure items read for guardrails against a misfired template


@dataclass
class Retrieved:
    """What a retrieval policy found, best first per polarity, with the hits' scores."""

    query: str
    successes: list[MemoryItem] = field(default_factory=list)
    failures: list[MemoryItem] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    # success items left out because a guardrail names their template as one that misfired on this query's shape
    vetoed: list[str] = field(default_factory=list)

    @property
    def ids(self) -> list[str]:
        return [it.id for it in self.successes + self.failures]

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "success": [it.id for it in self.successes],
                "failure": [it.id for it in self.failures], "scores": self.scores, "vetoed": self.vetoed}


class RetrievalPolicy(Protocol):
    name: str

    def retrieve(self, store: MemoryStore, query: str, domain: str | None) -> Retrieved: ...


class MixedRetrieval:
    """Top ``k_success`` strategies and top ``k_failure`` guardrails of ``layer`` for the query.

    ``retriever`` is a name in ``RETRIEVERS`` ("fts5" by default); ``scope`` one of ``RETRIEVAL_SCOPES``. With
    ``guardrails`` (default), a success strategy whose template a guardrail names as having misfired on the query's
    shape (a failure item of kind "misfire", see :mod:`rlmlab.learning`) is skipped for the next one, unless the
    strategy was learnt from that very shape: a template copied onto a near shape it does not answer is not offered again.
    ``candidates`` (default 0: just ``k_success``) ranks that many success items instead, best first, so a caller
    that takes only the items it can use (``ContextBuilder``'s ``admit``) still finds ``k_success`` of them.
    """

    name = "mixed"

    def __init__(self, k_success: int = 3, k_failure: int = 2, *, scope: str = "domain", retriever: str = "fts5",
                 layer: str = "L2", guardrails: bool = True, candidates: int = 0):
        for label, k in (("k_success", k_success), ("k_failure", k_failure), ("candidates", candidates)):
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= 20:
                raise ConfigError(f"retrieval {label}: {k!r}; use an integer from 0 to 20")
        if scope not in RETRIEVAL_SCOPES:
            raise ConfigError(f"retrieval scope: {scope!r}; use one of {', '.join(RETRIEVAL_SCOPES)}")
        self.k_success, self.k_failure, self.scope, self.retriever, self.layer = (
            k_success, k_failure, scope, retriever, layer)
        self.guardrails = bool(guardrails)
        self.candidates = max(candidates, k_success)

    def _in_scope(self, item: MemoryItem, domain: str | None) -> bool:
        if self.scope == "any":
            return True
        if self.scope == "domain_only":
            return item.domain == domain
        return item.domain is None or item.domain == domain

    def retrieve(self, store: MemoryStore, query: str, domain: str | None) -> Retrieved:
        out = Retrieved(query)
        retriever = make_retriever(self.retriever, store)
        shape = query_shape(query)
        misfired = self._misfired(store, retriever, query, shape) if self.guardrails and self.k_success else set()
        for polarity, k, bucket in (("success", self.candidates, out.successes), ("failure", self.k_failure, out.failures)):
            if k == 0:
                continue
            hits: list[Hit] = retriever.search(query, min(k * _OVERFETCH, 100), polarity=polarity, layer=self.layer)
            items = store.get_many([h.id for h in hits])
            for hit, item in zip(hits, items):
                if len(bucket) < k and self._in_scope(item, domain):
                    if polarity == "success" and misfired and _vetoed(item, shape, misfired):
                        out.vetoed.append(item.id)
                        continue
                    bucket.append(item)
                    out.scores[item.id] = round(hit.score, 4)
        return out

    def _misfired(self, store: MemoryStore, retriever: Any, query: str, shape: str) -> set[str]:
        """Normalised templates that guardrails record as having misfired on ``shape`` (any domain: a procedure
        that misfired is wrong for the shape wherever it was learnt)."""
        hits = retriever.search(query, _GUARD_K, polarity="failure", layer=self.layer)
        out: set[str] = set()
        for item in store.get_many([h.id for h in hits]):
            if item.template and (item.meta or {}).get("kind") == "misfire" and shape in (item.shape or "").split("\n"):
                key = _normalised(item.template)
                if key:
                    out.add(key)
        return out

    def __repr__(self) -> str:
        return (f"MixedRetrieval(k_success={self.k_success}, k_failure={self.k_failure}, scope={self.scope!r}, "
                f"retriever={self.retriever!r}" + (f", candidates={self.candidates})" if self.candidates > self.k_success
                                                   else ")"))


def _normalised(template: str) -> str | None:
    try:
        return normalise_template(template)
    except TemplateError:
        return None


def _vetoed(item: MemoryItem, shape: str, misfired: set[str]) -> bool:
    """Whether a guardrail vetoes ``item`` for a query of ``shape``: its template misfired there and the item was
    not learnt from that shape itself (one miss on its own shape is evidence about that task, not the shape)."""
    if not item.template or shape in (item.shape or "").split("\n"):
        return False
    return _normalised(item.template) in misfired


RETRIEVAL_POLICIES: Registry = Registry("retrieval policy")


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
    best), ranked by query shape as well as words (retriever "shape"); no guardrails. Four candidates are ranked
    (``candidates``), so a builder that admits only templates that fit the task injects the best that does."""
    options.setdefault("retriever", "shape")
    options.setdefault("candidates", 4)
    return MixedRetrieval(k_success, 0, **options)
