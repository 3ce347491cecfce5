"""Forgetting policies (E11) and the memory-health summary.

``forget(store)`` retires items by setting their status to "forgotten" (nothing is deleted: provenance,
counters and the usage table survive, and an item can be reactivated with ``set_status``). Each decision is
a :class:`ForgetAction`, logged as a "forget" event.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from rlmlab.errors import ConfigError
from rlmlab.registry import Registry
from rlmlab.memory import POLARITIES, MemoryItem
from rlmlab.memory import MemoryStore
from rlmlab.records import Record

__all__ = ["FORGETTERS", "Forgetter", "ForgetAction", "NoForgetter", "BoundedForgetter", "FailingForgetter",
           "retention_score", "task_outcomes", "memory_health"]

FORGETTERS: Registry = Registry("forgetter")

EVENT_KIND = "forget"


@dataclass(frozen=True)
class ForgetAction(Record):
    """One forgetting decision. ``action`` is "forget" (``item_id`` was set to "forgotten") or "unreachable"
    (``item_id`` None: the bound cannot be met because of floors or protected items; ``reason`` says why)."""

    action: str
    item_id: str | None
    polarity: str | None = None
    score: float | None = None
    reason: str = ""
    policy: str = ""


@runtime_checkable
class Forgetter(Protocol):
    def forget(self, store: MemoryStore) -> list[ForgetAction]: ...


def retention_score(item: MemoryItem) -> float:
    """Laplace-smoothed win rate (wins + 1) / (uses + 2): 0.5 for an unused item, so a new item is not
    forgotten before a proven one, and a often-failing item drops below it."""
    return (item.wins + 1) / (item.uses + 2)


class NoForgetter:
    """Keeps everything (E9/E10)."""

    name = "none"

    def forget(self, store: MemoryStore) -> list[ForgetAction]:
        return []


class BoundedForgetter:
    """Keeps at most ``max_items`` active items of ``layer`` (default L2) across the whole store.

    Lowest retention score first (ties: older ``updated_at`` first, then id) until the bound holds, skipping
    an item when forgetting it would take its polarity below ``floors[polarity]`` (counted over all active
    items of the layer, protected ones included; a polarity already at or below its floor loses nothing).
    Items whose ``source`` starts with one of ``protect_sources`` (curated packs) are never forgotten. When
    floors or protection leave the bank above the bound, forgetting stops there and an "unreachable" action
    (also logged) says by how much and why.
    """

    name = "bounded"

    def __init__(self, max_items: int = 100, floors: Mapping[str, int] | None = None,
                 protect_sources: Sequence[str] = ("pack:",), layer: str = "L2"):
        if isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 0:
            raise ConfigError(f"forgetter max_items: {max_items!r} is not allowed; use an integer >= 0")
        floors = {"success": 2, "failure": 2} if floors is None else dict(floors)
        for pol, n in floors.items():
            if pol not in POLARITIES:
                raise ConfigError(f"forgetter floors: unknown polarity {pol!r}; use {', '.join(POLARITIES)}")
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ConfigError(f"forgetter floors[{pol!r}]: {n!r} is not allowed; use an integer >= 0")
        if sum(floors.values()) > max_items:
            raise ConfigError(f"forgetter floors: {floors} sum to more than max_items={max_items}")
        if isinstance(protect_sources, str):
            protect_sources = (protect_sources,)
        self.max_items, self.layer = max_items, layer
        self.floors = {pol: floors.get(pol, 0) for pol in POLARITIES}
        self.protect_sources = tuple(protect_sources)

    def _protected(self, item: MemoryItem) -> bool:
        return bool(self.protect_sources) and item.source.startswith(self.protect_sources)

    def forget(self, store: MemoryStore) -> list[ForgetAction]:
        active = store.items(layer=self.layer)
        excess = len(active) - self.max_items
        if excess <= 0:
            return []
        counts = Counter(it.polarity for it in active)
        candidates = sorted((it for it in active if not self._protected(it)),
                            key=lambda it: (retention_score(it), it.updated_at or "", it.id))
        chosen: list[MemoryItem] = []
        for it in candidates:
            if excess <= 0:
                break
            if counts[it.polarity] - 1 < self.floors[it.polarity]:
                continue
            chosen.append(it)
            counts[it.polarity] -= 1
            excess -= 1
        actions = [ForgetAction("forget", it.id, it.polarity, round(retention_score(it), 4),
                                f"retention {retention_score(it):.3f} (wins {it.wins}/uses {it.uses}); "
                                f"{len(active)} active over the bound of {self.max_items}", self.name)
                   for it in chosen]
        if chosen:
            store.set_status([it.id for it in chosen], "forgotten")
        if excess > 0:
            protected = sum(1 for it in active if self._protected(it))
            actions.append(ForgetAction(
                "unreachable", None, None, None,
                f"{len(active) - len(chosen)} active {self.layer} items remain, {excess} over the bound of "
                f"{self.max_items}: {protected} are protected ({', '.join(self.protect_sources) or 'none'}) and "
                f"floors {self.floors} keep {dict(counts)}", self.name))
        for act in actions:
            store.log_event(EVENT_KIND, act.to_dict())
        return actions


class FailingForgetter:
    """Retires the templates the stream keeps failing with: an active success item of ``layer`` with a template,
    injected into at least ``min_tasks`` judged tasks, whose smoothed task win rate (won + 1) / (tasks + 2) is below
    ``below``. A task counts once however many rollouts it ran (trajectory ids ``<task>-r<k>``, see
    :class:`~rlmlab.learning.ReasoningBankLoop`) and is won when one of them was judged a success; a merged item
    counts the tasks of the items it superseded.

    SkillGen's rule (keep a skill while its repairs outnumber its regressions) read on the tasks a template is
    injected into after admission: replay admitted it on its own task and siblings, but a template retrieval keeps
    injecting into tasks it does not solve costs each of them the step the model would have written without it.
    Defaults (3 tasks, 0.25) retire 3 tasks with no win, 7 with one, 11 with two. Items whose ``source`` starts
    with one of ``protect_sources`` (curated packs) are kept; the consolidator does not admit a retired template
    again (see :class:`~rlmlab.learning.SimilarityConsolidator`).
    """

    name = "failing"

    def __init__(self, min_tasks: int = 3, below: float = 0.25, protect_sources: Sequence[str] = ("pack:",),
                 layer: str = "L2"):
        if isinstance(min_tasks, bool) or not isinstance(min_tasks, int) or min_tasks < 1:
            raise ConfigError(f"forgetter min_tasks: {min_tasks!r} is not allowed; use an integer >= 1")
        if isinstance(below, bool) or not isinstance(below, (int, float)) or not 0 < below <= 1:
            raise ConfigError(f"forgetter below: {below!r} is not allowed; use a number in (0, 1]")
        if isinstance(protect_sources, str):
            protect_sources = (protect_sources,)
        self.min_tasks, self.below, self.layer = min_tasks, float(below), layer
        self.protect_sources = tuple(protect_sources)

    def forget(self, store: MemoryStore) -> list[ForgetAction]:
        candidates = [it for it in store.items(layer=self.layer, polarity="success")
                      if it.template and it.uses and not (self.protect_sources
                                                           and it.source.startswith(self.protect_sources))]
        if not candidates:
            return []
        outcomes = task_outcomes(store)
        chosen = []
        for it in candidates:
            tasks = outcomes.get(it.id, {})
            won = sum(tasks.values())
            rate = (won + 1) / (len(tasks) + 2)
            if len(tasks) >= self.min_tasks and rate < self.below:
                chosen.append(ForgetAction("forget", it.id, it.polarity, round(rate, 4),
                                           f"template failing: won {won} of the {len(tasks)} tasks it was injected "
                                           f"into ({it.wins}/{it.uses} rollouts), (won + 1) / (tasks + 2) = "
                                           f"{rate:.3f} below {self.below}", self.name))
        if chosen:
            store.set_status([a.item_id for a in chosen], "forgotten")
        for act in chosen:
            store.log_event(EVENT_KIND, act.to_dict())
        return chosen


_ROLLOUT = re.compile(r"-r\d+$")


def task_outcomes(store: MemoryStore) -> dict[str, dict[str, bool]]:
    """Item id -> {task: won}: the judged tasks each item was injected into, a task once however many rollouts
    (``<task>-r<k>`` trajectory ids), won when one was judged a success; an item also counts the tasks of the items
    it superseded (a merge sums their uses)."""
    direct: dict[str, dict[str, bool]] = {}
    for row in store.usage():
        if row["outcome"] is None:
            continue
        task = _ROLLOUT.sub("", row["trajectory_id"])
        seen = direct.setdefault(row["item_id"], {})
        seen[task] = seen.get(task, False) or row["outcome"] == "success"
    parent = {it.id: it.superseded_by for it in store.items(status="superseded") if it.superseded_by}
    total: dict[str, dict[str, bool]] = {}
    for item_id, tasks in direct.items():
        node, hops = item_id, 0
        while node is not None and hops < 1000:  # up the superseded_by chain to the item that holds the counts
            into = total.setdefault(node, {})
            for task, won in tasks.items():
                into[task] = into.get(task, False) or won
            node, hops = parent.get(node), hops + 1
    return total


@FORGETTERS.register("none")
def _none() -> NoForgetter:
    """Keep every item (no forgetting)."""
    return NoForgetter()


@FORGETTERS.register("bounded")
def _bounded(max_items: int = 100, floors: Mapping[str, int] | None = None,
             protect_sources: Sequence[str] = ("pack:",), layer: str = "L2") -> BoundedForgetter:
    """Bound the active L2 bank by retention score, with per-polarity floors; packs are protected."""
    return BoundedForgetter(max_items=max_items, floors=floors, protect_sources=protect_sources, layer=layer)


@FORGETTERS.register("failing")
def _failing(min_tasks: int = 3, below: float = 0.25, protect_sources: Sequence[str] = ("pack:",),
             layer: str = "L2") -> FailingForgetter:
    """Retire learnt templates that win too few of the tasks they are injected into (SkillGen's rule)."""
    return FailingForgetter(min_tasks=min_tasks, below=below, protect_sources=protect_sources, layer=layer)


# -- memory health ---------------------------------------------------------------------------------------


def _quantile(sorted_values: list[int], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default); the list is sorted and non-empty."""
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return float(sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo))


def memory_health(store: MemoryStore) -> dict[str, Any]:
    """A JSON-ready summary of the bank's health (seed: size, duplicate rate, novelty rate, usage).

    - ``active``, ``active_by_polarity``, ``active_by_layer``, ``by_status`` (every item): sizes.
    - ``consolidation``: counts of logged consolidation actions; ``duplicate_rate`` = share that were
      duplicate or discard, ``novelty_rate`` = share that were add (None with no consolidation events).
    - ``forgotten_events``: "forget" actions logged; ``unreachable_events``: bounds that could not be met.
    - ``uses``: quantiles (min, p25, median, p75, max), mean and share never used, over active items.
    - ``mean_win_rate``: mean of wins/uses over active items used at least once (None if none);
      ``pooled_win_rate``: total wins / total uses.
    - ``win_rate_drift``: the win rate of retrieved items over the earlier and the later half of the judged
      uses, in the order they were recorded, and ``drift`` = later - earlier (None below 2 judged uses).
    """
    stats = store.stats()
    active = store.items()
    actions = Counter(e.payload.get("action") for e in store.events(kind="consolidation"))
    n_actions = sum(actions.values())
    forget = Counter(e.payload.get("action") for e in store.events(kind=EVENT_KIND))
    uses = sorted(it.uses for it in active)
    used = [it for it in active if it.uses > 0]
    total_uses = sum(uses)
    return {
        "active": len(active),
        "active_by_polarity": {pol: stats.by_polarity.get(pol, 0) for pol in POLARITIES},
        "active_by_layer": dict(stats.by_layer),
        "by_status": dict(stats.by_status),
        "consolidation": dict(sorted((str(k), v) for k, v in actions.items())),
        "duplicate_rate": (actions["duplicate"] + actions["discard"]) / n_actions if n_actions else None,
        "novelty_rate": actions["add"] / n_actions if n_actions else None,
        "forgotten_events": forget["forget"],
        "unreachable_events": forget["unreachable"],
        "uses": {
            "min": float(uses[0]) if uses else None,
            "p25": _quantile(uses, 0.25) if uses else None,
            "median": _quantile(uses, 0.5) if uses else None,
            "p75": _quantile(uses, 0.75) if uses else None,
            "max": float(uses[-1]) if uses else None,
            "mean": total_uses / len(uses) if uses else None,
            "never_used": (len(uses) - len(used)) / len(uses) if uses else None,
        },
        "mean_win_rate": sum(it.wins / it.uses for it in used) / len(used) if used else None,
        "pooled_win_rate": sum(it.wins for it in used) / total_uses if total_uses else None,
        "win_rate_drift": _win_rate_drift([u["outcome"] == "success" for u in store.usage() if u["outcome"]]),
    }


def _win_rate_drift(wins: list[bool]) -> dict[str, Any] | None:
    if len(wins) < 2:
        return None
    half = len(wins) // 2
    earlier, later = sum(wins[:half]) / half, sum(wins[half:]) / (len(wins) - half)
    return {"judged_uses": len(wins), "earlier": earlier, "later": later, "drift": later - earlier}
