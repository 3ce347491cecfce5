"""Candidate items: what an agent's own ``mem_add`` proposes, held out of the bank until a judge admits it.

Step code is untrusted, and a small model curates its own memory badly (Dynamic Cheatsheet), so an item the
model writes does not become searchable or injectable when it writes it. It is logged as a ``candidate`` event
(L4, append-only) with the run and trajectory that proposed it; the bank's items (L2) are unchanged. It enters
the bank by :func:`admit_candidates`: the learning loop admits a trajectory's candidates when its judge accepts that
trajectory (ASI's rule: admitted after an execution check), a person with ``rlmlab memory admit ID``. Until then
no search, retrieval, consolidation or forgetting sees it, so a step that writes "always SUBMIT 42" into a shared
bank reaches no later run.
"""

from __future__ import annotations

from collections.abc import Iterable

from rlmlab.memory._errors import MemoryStoreError
from rlmlab.memory._records import AddResult, MemoryItem
from rlmlab.memory._store import MemoryStore

__all__ = ["CANDIDATE_EVENT", "ADMIT_EVENT", "propose_candidate", "candidate_items", "admit_candidates"]

CANDIDATE_EVENT = "candidate"  # payload: {"item": MemoryItem.to_dict()}
ADMIT_EVENT = "admit"  # payload: {"ids": [...], "by": who admitted them}


def propose_candidate(store: MemoryStore, item: MemoryItem) -> AddResult:
    """Log ``item`` as a candidate under the store's bound run and trajectory; nothing enters the bank.

    Returns the item's id and ``created``: False when the bank already holds the item (nothing is logged) or
    this trajectory proposed it before."""
    item.run_id = item.run_id or store.run_id
    item.trajectory_id = item.trajectory_id or store.trajectory_id
    item.domain = item.domain or store.domain
    if item.id in store:
        return AddResult(item.id, False)
    proposed = candidate_items(store, run_id=item.run_id, trajectory_id=item.trajectory_id, held=False)
    if any(c.id == item.id for c in proposed):
        return AddResult(item.id, False)
    store.log_event(CANDIDATE_EVENT, {"item": item.to_dict()}, run_id=item.run_id,
                    trajectory_id=item.trajectory_id, domain=item.domain)
    return AddResult(item.id, True)


def candidate_items(store: MemoryStore, *, run_id: str | None = None, trajectory_id: str | None = None,
                    held: bool = True) -> list[MemoryItem]:
    """Candidate items in the order they were proposed, once per id (the first proposal's provenance); with
    ``held`` (the default) only those the bank does not hold yet."""
    seen: dict[str, MemoryItem] = {}
    for event in store.events(kind=CANDIDATE_EVENT, run_id=run_id, trajectory_id=trajectory_id):
        item = MemoryItem.from_dict(event.payload["item"])
        seen.setdefault(item.id, item)
    return [it for it in seen.values() if not (held and it.id in store)]


def admit_candidates(store: MemoryStore, ids: Iterable[str], *, by: str) -> list[AddResult]:
    """Add the candidates ``ids`` to the bank as active items (their proposal's provenance kept) and log who
    admitted them; MemoryStoreError naming the first id that no candidate event holds. An id already in the bank
    gives ``created=False``."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return []
    pool = {it.id: it for it in candidate_items(store, held=False)}
    for i in ids:
        if i not in pool:
            raise MemoryStoreError(f"unknown candidate id {i!r}; `rlmlab memory candidates` lists them")
    with store.transaction():
        results = store.add_many([pool[i] for i in ids], use_binding=False)
        store.log_event(ADMIT_EVENT, {"ids": ids, "by": by})
    return results
