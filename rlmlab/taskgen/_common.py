"""What every generator shares: a verified candidate, the drop report, phrasing by seed, and the selection that
fills levels and kinds round-robin, with train and test kept apart by source.

A generator is a list of :class:`Kind` streams. Each stream yields, lazily and in an order fixed by the seed,
either a :class:`Candidate` (a task whose answer passed the independent check) or a :class:`Drop` (why a
candidate was thrown away). :func:`select` pulls from the streams only as many as it needs.
"""

from __future__ import annotations

import random
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rlmlab.experiments import Task
from rlmlab.text import plural

__all__ = ["Candidate", "Drop", "Kind", "GenerationReport", "rng_for", "phrase", "select", "split_units", "SIDES"]

SIDES = ("train", "test")


@dataclass(frozen=True)
class Candidate:
    """A task whose expected answer passed the independent check; ``units`` are the sources it uses (a crate,
    a module, an ontology term, a GSM8K item or a problem family), which the split keeps on one side."""

    task: Task
    units: tuple[str, ...]


@dataclass(frozen=True)
class Drop:
    """A candidate thrown away: ``reason`` is a short fixed phrase (counted in the report), ``detail`` says which."""

    kind: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class Kind:
    """One question kind at one level: ``stream(rng)`` yields Candidates and Drops in an order fixed by ``rng``."""

    name: str
    level: int
    stream: Callable[[random.Random], Iterator[Candidate | Drop]]


@dataclass
class GenerationReport:
    """Counts of one generation: kept per (side, level, kind), dropped per (kind, reason), and seconds spent."""

    suite: str
    seed: int
    kept: Counter = field(default_factory=Counter)  # (side, level, kind) -> n
    dropped: Counter = field(default_factory=Counter)  # (kind, reason) -> n
    examples: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, reason) -> first detail
    straddling: int = 0  # candidates whose sources fell on both sides of the split
    seconds: float = 0.0
    contexts: list[int] = field(default_factory=list)  # long-context suites: each written context's tokens

    def note_drop(self, drop: Drop) -> None:
        key = (drop.kind, drop.reason)
        self.dropped[key] += 1
        if drop.detail and key not in self.examples:
            self.examples[key] = drop.detail

    def to_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite, "seed": self.seed, "seconds": round(self.seconds, 2), "straddling": self.straddling,
            "kept": [{"side": s, "level": lv, "kind": k, "n": n} for (s, lv, k), n in sorted(self.kept.items())],
            "dropped": [{"kind": k, "reason": r, "n": n, "example": self.examples.get((k, r), "")}
                        for (k, r), n in sorted(self.dropped.items())],
        } | ({"context_tokens": self.contexts} if self.contexts else {})

    def lines(self) -> list[str]:
        """A short human summary: counts per side and level, then kinds, then drops by reason."""
        out = [f"{self.suite}: seed {self.seed}, {self.seconds:.1f} s"]
        for side in SIDES:
            per_level = Counter()
            for (s, lv, _), n in self.kept.items():
                if s == side:
                    per_level[lv] += n
            if per_level:
                levels = ", ".join(f"L{lv} {n}" for lv, n in sorted(per_level.items()))
                out.append(f"  {side}: {plural(sum(per_level.values()), 'task')} ({levels})")
        kinds = Counter()
        for (_, _, kind), n in self.kept.items():
            kinds[kind] += n
        out.append("  kinds: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
        if self.dropped:
            out.append(f"  dropped {sum(self.dropped.values())}: " + "; ".join(
                f"{k} {r} {n}" for (k, r), n in sorted(self.dropped.items())))
        if self.contexts:
            out.append(f"  contexts: {plural(len(self.contexts), 'file')}, "
                       f"{min(self.contexts):,}-{max(self.contexts):,} "
                       "tokens (rlmlab.tokens.count_tokens)")
        if self.straddling:
            out.append(f"  left out (sources on both sides of the split): {self.straddling}")
        return out


def rng_for(seed: int, *parts: object) -> random.Random:
    """A generator of its own for each (seed, part...): str seeds hash with SHA-512, the same in every process."""
    return random.Random(":".join(map(str, (seed, *parts))))


def phrase(rng: random.Random, forms: Sequence[str], **values: Any) -> str:
    """One of ``forms``, chosen by ``rng``, with ``values`` filled in."""
    return rng.choice(list(forms)).format(**values)


def split_units(groups: dict[str, list[str]], test_frac: float, seed: int) -> set[str]:
    """The units that go to the test side: in each group, ``round(test_frac * n)`` of its units (at least one
    when ``test_frac > 0`` and the group has two or more), chosen by a seeded shuffle of the sorted units."""
    test: set[str] = set()
    for group, units in sorted(groups.items()):
        ordered = sorted(set(units))
        rng_for(seed, "split", group).shuffle(ordered)
        take = round(test_frac * len(ordered))
        if test_frac > 0 and take == 0 and len(ordered) >= 2:
            take = 1
        test.update(ordered[:min(take, len(ordered) - 1) if test_frac < 1 else take])
    return test


def _quotas(total: int, keys: list[int]) -> dict[int, int]:
    base, extra = divmod(total, len(keys)) if keys else (0, 0)
    return {k: base + (i < extra) for i, k in enumerate(keys)}


class _Pool:
    """The candidates pulled from one kind's stream, parked by side until the selection takes them."""

    def __init__(self, kind: Kind, seed: int, side_of: Callable[[Candidate], str | None], report: GenerationReport):
        self.kind, self.side_of, self.report = kind, side_of, report
        self.stream: Iterator[Candidate | Drop] | None = kind.stream(rng_for(seed, "kind", kind.name))
        self.parked: dict[str, deque[Candidate]] = {side: deque() for side in SIDES}

    def take(self, side: str) -> Candidate | None:
        while not self.parked[side] and self.stream is not None:
            item = next(self.stream, None)
            if item is None:
                self.stream = None
            elif isinstance(item, Drop):
                self.report.note_drop(item)
            else:
                where = self.side_of(item)
                if where is None:
                    self.report.straddling += 1
                else:
                    self.parked[where].append(item)
        return self.parked[side].popleft() if self.parked[side] else None


def select(kinds: Iterable[Kind], want: dict[str, int], seed: int, report: GenerationReport,
           side_of: Callable[[Candidate], str | None] = lambda c: "train") -> dict[str, list[Task]]:
    """Up to ``want[side]`` tasks per side: levels get equal shares, kinds within a level take turns; a level
    that runs dry leaves its share to the others. Tasks are returned in a seeded order that mixes levels and
    kinds (a stream, not a sorted list), with their ``kind`` set; ids are given by the caller."""
    pools: dict[int, list[_Pool]] = {}
    for kind in kinds:
        pools.setdefault(kind.level, []).append(_Pool(kind, seed, side_of, report))
    out: dict[str, list[Task]] = {}
    for side, total in want.items():
        chosen: list[Task] = []
        levels = sorted(pools)
        open_levels = list(levels)
        turn = dict.fromkeys(levels, 0)
        while len(chosen) < total and open_levels:
            quota = _quotas(total - len(chosen), open_levels)
            for level in list(open_levels):
                got = 0
                live = list(pools[level])
                while got < quota[level] and live:
                    pool = live[turn[level] % len(live)]
                    cand = pool.take(side)
                    if cand is None:
                        live.remove(pool)
                        continue
                    turn[level] += 1
                    chosen.append(replace(cand.task, kind=pool.kind.name))
                    report.kept[(side, level, pool.kind.name)] += 1
                    got += 1
                if got < quota[level]:
                    open_levels.remove(level)
        rng_for(seed, "order", side).shuffle(chosen)
        out[side] = chosen
    return out
