"""Consolidation policies: how candidate items from extraction enter the bank (E9 append, E10 consolidate).

``persist(store, candidates)`` decides, per candidate in order, one of: ``add`` (a new active item),
``duplicate`` (an item with the same content id is already stored, in any status: nothing changes),
``discard`` (a near-duplicate of an active item), ``supersede`` (same title, revised content: the candidate
replaces the old item) or ``merge`` (similar: a combined item replaces the old one). Nothing is deleted:
replaced items get status "superseded" with ``superseded_by``, and a discarded candidate is stored with
status "discarded", so the L4 log's ids always resolve and the audit trail keeps every candidate. Each
decision is a :class:`ConsolidationAction`, logged as a "consolidation" event.

Items with a code template are procedures, not prose: two of them are the same when their templates are
(:func:`rlmlab.memory.normalise_template`: the same code whatever its quoting, spacing and slot names), however
alike their words; a merge keeps the template and sums uses, wins and the admission counts in ``meta``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from rlmlab.errors import ConfigError
from rlmlab.registry import Registry
from rlmlab.memory import LIMITS, MemoryItem, normalise_template
from rlmlab.memory import MemoryStore
from rlmlab.memory import STOPWORDS, tokenize
from rlmlab.records import Record

__all__ = ["CONSOLIDATORS", "Consolidator", "ConsolidationAction", "AppendConsolidator",
           "SimilarityConsolidator", "similarity", "merge_contents", "merge_meta", "CONSOLIDATION_ACTIONS"]

CONSOLIDATORS: Registry = Registry("consolidator")

CONSOLIDATION_ACTIONS = ("add", "duplicate", "discard", "merge", "supersede")
EVENT_KIND = "consolidation"


@dataclass(frozen=True)
class ConsolidationAction(Record):
    """One decision about one candidate.

    ``item_id`` is the candidate's id; ``target_ids`` the existing items the decision is about (the stored
    duplicate, the near-duplicate kept, the item superseded or merged into); ``result_id`` the active item
    that now carries the knowledge (the candidate, the merged item, or the kept item; for a duplicate, the
    stored item whatever its status). ``similarity`` is the best Jaccard score found (None: not computed).
    """

    action: str
    item_id: str
    target_ids: list[str] = field(default_factory=list)
    similarity: float | None = None
    reason: str = ""
    result_id: str | None = None
    policy: str = ""

    def __post_init__(self) -> None:
        if self.action not in CONSOLIDATION_ACTIONS:
            raise ValueError(f"ConsolidationAction.action: {self.action!r}; use one of {CONSOLIDATION_ACTIONS}")


@runtime_checkable
class Consolidator(Protocol):
    def persist(self, store: MemoryStore, candidates: list[MemoryItem]) -> list[ConsolidationAction]: ...


def _log(store: MemoryStore, action: ConsolidationAction, item: MemoryItem) -> ConsolidationAction:
    store.log_event(EVENT_KIND, action.to_dict(), run_id=item.run_id, trajectory_id=item.trajectory_id,
                    domain=item.domain)
    return action


class AppendConsolidator:
    """E9: store every candidate; only an exact repeat (same content id) is skipped, as "duplicate"."""

    name = "append"

    def persist(self, store: MemoryStore, candidates: list[MemoryItem]) -> list[ConsolidationAction]:
        actions = []
        for cand in candidates:
            if cand.id in store:
                status = store.get(cand.id).status
                act = ConsolidationAction("duplicate", cand.id, [cand.id], 1.0,
                                          f"same content id already stored (status {status})", cand.id, self.name)
            else:
                store.add(cand)
                act = ConsolidationAction("add", cand.id, [], None, "appended", cand.id, self.name)
            actions.append(_log(store, act, cand))
        return actions


# -- similarity ------------------------------------------------------------------------------------------


def _words(text: str) -> set[str]:
    # Stopwords and one-letter tokens would make every pair of English sentences look alike.
    return {t for t in tokenize(text) if len(t) > 1 and t not in STOPWORDS}


def similarity(a: MemoryItem, b: MemoryItem) -> float:
    """Jaccard similarity in [0, 1] of the title+content word sets (stopwords and 1-letter tokens dropped)."""
    wa, wb = _words(f"{a.title} {a.content}"), _words(f"{b.title} {b.content}")
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def _norm_title(title: str) -> str:
    return " ".join(tokenize(title))


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _new_sentences(old: str, new: str) -> list[str]:
    """The sentences of ``new`` whose words are not those of a sentence of ``old`` (nor of an earlier one)."""
    seen = {" ".join(tokenize(s)) for s in _SENTENCE.split(old.strip())}
    out = []
    for sentence in _SENTENCE.split(new.strip()):
        key = " ".join(tokenize(sentence))
        if key and key not in seen:
            seen.add(key)
            out.append(sentence)
    return out


def merge_contents(old: str, new: str, limit: int = LIMITS["content"]) -> str:
    """``old`` followed by the sentences of ``new`` it does not already hold (compared by their words),
    in order; sentences that would take the result over ``limit`` characters are left out."""
    out = old.strip()
    for sentence in _new_sentences(out, new):
        if len(out) + 1 + len(sentence) <= limit:
            out = f"{out} {sentence}"
    return out


class SimilarityConsolidator:
    """E10: Jaccard similarity against active items of the same polarity, layer and domain.

    Per candidate: an exact repeat is "duplicate"; similarity >= ``dup_threshold`` to some item is "discard";
    else an item with the same normalised title is superseded by the candidate; else similarity >=
    ``merge_threshold`` merges the candidate into the most similar item; else "add". Items whose source starts
    with one of ``protect_sources`` (curated packs) can make a candidate a discard but are never superseded
    or merged: the candidate is then added beside them.
    """

    name = "consolidate"

    def __init__(self, dup_threshold: float = 0.8, merge_threshold: float = 0.5,
                 protect_sources: Sequence[str] = ("pack:",)):
        for label, v in (("dup_threshold", dup_threshold), ("merge_threshold", merge_threshold)):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(f"consolidator {label}: {v!r} is not a number")
        if not 0 < merge_threshold < dup_threshold <= 1:
            raise ConfigError(f"consolidator thresholds: need 0 < merge_threshold < dup_threshold <= 1, "
                              f"got merge_threshold={merge_threshold}, dup_threshold={dup_threshold}")
        if isinstance(protect_sources, str):
            protect_sources = (protect_sources,)
        self.dup_threshold, self.merge_threshold = float(dup_threshold), float(merge_threshold)
        self.protect_sources = tuple(protect_sources)

    def persist(self, store: MemoryStore, candidates: list[MemoryItem]) -> list[ConsolidationAction]:
        return [_log(store, self._one(store, cand), cand) for cand in candidates]

    def _protected(self, item: MemoryItem) -> bool:
        return item.source.startswith(self.protect_sources) if self.protect_sources else False

    def _one(self, store: MemoryStore, cand: MemoryItem) -> ConsolidationAction:
        def act(action: str, targets: list[str], sim: float | None, reason: str, result: str | None):
            return ConsolidationAction(action, cand.id, targets, None if sim is None else round(sim, 4), reason,
                                       result, self.name)

        if cand.id in store:
            status = store.get(cand.id).status
            return act("duplicate", [cand.id], 1.0, f"same content id already stored (status {status})", cand.id)
        pool = store.items(polarity=cand.polarity, layer=cand.layer)
        if cand.template is not None:  # a procedure is the same whatever crate or ontology it was learnt on
            return self._one_template(store, cand, pool, act)
        pool = [it for it in pool if it.domain == cand.domain]
        scored = sorted(((similarity(cand, it), it) for it in pool), key=lambda p: (-p[0], p[1].id))
        best_sim, best = scored[0] if scored else (0.0, None)
        if best is not None and best_sim >= self.dup_threshold:
            store.add(replace(cand, status="discarded", superseded_by=None))
            return act("discard", [best.id], best_sim,
                       f"near-duplicate of {best.id} (similarity {best_sim:.2f} >= {self.dup_threshold})", best.id)
        title = _norm_title(cand.title)
        same = [(s, it) for s, it in scored if _norm_title(it.title) == title]
        if same:
            sim, old = same[0]
            if not self._protected(old) and old.template is None:
                store.add(replace(cand, status="active", superseded_by=None))
                store.set_status([old.id], "superseded", superseded_by=cand.id)
                return act("supersede", [old.id], best_sim,
                           f"same title as {old.id}, revised content (similarity {sim:.2f})", cand.id)
        if best is not None and best_sim >= self.merge_threshold and not self._protected(best) \
                and best.template is None:  # prose does not rewrite a procedure
            merged = self._merge(best, cand)
            if merged is not None:
                created = store.add(merged).created
                if not created and store.get(merged.id).status != "active":
                    store.set_status([merged.id], "active")  # the same merge was made once and later retired
                store.set_status([best.id], "superseded", superseded_by=merged.id)
                # The candidate is kept for provenance, retired in favour of the merged item.
                store.add(replace(cand, status="superseded", superseded_by=merged.id))
                return act("merge", [best.id], best_sim,
                           f"similar to {best.id} (similarity {best_sim:.2f} >= {self.merge_threshold}): merged",
                           merged.id)
            if not _new_sentences(best.content, cand.content):
                store.add(replace(cand, status="discarded", superseded_by=None))
                return act("discard", [best.id], best_sim,
                           f"every sentence is already in {best.id} (similarity {best_sim:.2f})", best.id)
        store.add(replace(cand, status="active", superseded_by=None))
        note = ""
        if same:
            note = f"; same title as protected {same[0][1].id}, kept beside it"
        elif best is not None and best_sim >= self.merge_threshold:
            note = f"; similar to {best.id} but it is protected or full"
        return act("add", [], best_sim if best is not None else None,
                   f"new (best similarity {best_sim:.2f}){note}", cand.id)

    def _one_template(self, store: MemoryStore, cand: MemoryItem, pool: list[MemoryItem], act: Any
                      ) -> ConsolidationAction:
        """A candidate with a template: merged into (or, adding no sentence, discarded beside) an active item with
        the same normalised template, the most used first; else added, whatever its words' similarity."""
        key = normalise_template(cand.template or "")
        same = sorted((it for it in pool if it.template is not None and normalise_template(it.template) == key),
                      key=lambda it: (-it.uses, -it.wins, it.id))
        if not same:
            retired = sorted(it.id for it in store.items(polarity=cand.polarity, layer=cand.layer, status="forgotten")
                             if it.template is not None and normalise_template(it.template) == key)
            if retired:  # a forgetter retired it for failing on the stream: the same template is not admitted again
                store.add(replace(cand, status="discarded", superseded_by=None))
                return act("discard", retired[:1], 1.0, f"same template as {retired[0]}, retired (forgotten)",
                           retired[0])
            store.add(replace(cand, status="active", superseded_by=None))
            return act("add", [], None, "new template", cand.id)
        old = same[0]
        merged = None if self._protected(old) else self._merge(old, cand)
        if merged is None:
            store.add(replace(cand, status="discarded", superseded_by=None))
            why = "protected" if self._protected(old) else "it adds no sentence"
            return act("discard", [old.id], 1.0, f"same template as {old.id} ({why})", old.id)
        created = store.add(merged).created
        if not created and store.get(merged.id).status != "active":
            store.set_status([merged.id], "active")
        store.set_status([old.id], "superseded", superseded_by=merged.id)
        store.add(replace(cand, status="superseded", superseded_by=merged.id))
        return act("merge", [old.id], 1.0, f"same template as {old.id}: merged", merged.id)

    @staticmethod
    def _merge(old: MemoryItem, cand: MemoryItem) -> MemoryItem | None:
        """The merged item (the old one's template, or the candidate's if the old has none), or None when the
        candidate adds no sentence that fits."""
        content = merge_contents(old.content, cand.content)
        if content == old.content:
            return None
        tags = list(dict.fromkeys(old.tags + cand.tags))[:LIMITS["tags"]]
        return MemoryItem(
            title=old.title, description=old.description, content=content, polarity=old.polarity, role=old.role,
            scope=old.scope, layer=old.layer, tags=tags, domain=old.domain, source="merge",
            run_id=cand.run_id or old.run_id, trajectory_id=cand.trajectory_id or old.trajectory_id,
            uses=old.uses + cand.uses, wins=old.wins + cand.wins, template=old.template or cand.template,
            meta=merge_meta(old.meta, cand.meta))


_COUNTS = ("siblings", "applicable", "repairs", "regressions")


def merge_meta(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The old item's meta with the new one's keys it lacks, and the admission counts (siblings, applicable,
    repairs, regressions) summed; ``merged`` counts the candidates merged in. Per-sibling results are dropped
    (they would outgrow the meta limit)."""
    out = {**new, **old}
    a, b = old.get("admission"), new.get("admission")
    if isinstance(a, dict) and isinstance(b, dict):
        out["admission"] = {**{k: v for k, v in a.items() if k != "results"},
                            **{k: int(a.get(k) or 0) + int(b.get(k) or 0) for k in _COUNTS}}
    out["merged"] = int(old.get("merged", 0)) + 1 + int(new.get("merged", 0))
    return out


@CONSOLIDATORS.register("append")
def _append() -> AppendConsolidator:
    """E9: add every candidate; an exact repeat (same content id) is a duplicate."""
    return AppendConsolidator()


@CONSOLIDATORS.register("consolidate")
def _consolidate(dup_threshold: float = 0.8, merge_threshold: float = 0.5,
                 protect_sources: Sequence[str] = ("pack:",)) -> SimilarityConsolidator:
    """E10: discard near-duplicates, supersede same-title items, merge similar ones (Jaccard)."""
    return SimilarityConsolidator(dup_threshold=dup_threshold, merge_threshold=merge_threshold,
                                  protect_sources=protect_sources)
