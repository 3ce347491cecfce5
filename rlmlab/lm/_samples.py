"""Votes in one batch: the first call of each of N sampled rollouts decoded together.

N rollouts of a vote (E13's ``vote5``) start from the same prompt: the task, the instructions, the injected
memory and the tool listing are the same, only the seed differs. Their first step can therefore be decoded as N
sequences of one llama.cpp batch (:meth:`rlmlab.lm.LlamaEngine.generate_n`); from the second step on each
rollout's prompt holds its own earlier steps, so those calls stay one sequence each.

The experiment runner marks a rollout with :func:`shared_samples` (the seeds of the whole vote and how many of the
rollout's first calls to share). The first rollout to make a marked call decodes it for every seed of the vote at
once; the completions of the other seeds wait in a :class:`SampleShare` until their rollouts make the same call
(same prompt, constraint, temperature, length cap and stop strings), which then costs no model time. Rollouts may
run one after another or on threads: the engine's model lock makes the first one decode and the others find their
completion. A completion nobody claims is evicted after ``size`` newer prompts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from rlmlab.text import plural

__all__ = ["shared_samples", "claim_shared_call", "SampleShare", "SharedCall"]


@dataclass
class SharedCall:
    """The sharing state of one rollout: the vote's seeds and how many more of its calls are shared."""

    seeds: tuple[int, ...]
    calls: int = 1
    served: int = field(default=0)  # calls of this rollout answered from another rollout's batch


_SHARED: ContextVar[SharedCall | None] = ContextVar("rlmlab_shared_samples", default=None)


@contextmanager
def shared_samples(seeds: Sequence[int], calls: int = 1) -> Iterator[SharedCall]:
    """Mark the LM calls of this block (this thread or task) as one rollout of a vote over ``seeds``: its first
    ``calls`` sampled calls are decoded in one batch with the other rollouts' (see the module docstring).

    Only engines that batch (the embedded llama.cpp model) act on it; a call at temperature 0 or whose seed is
    not among ``seeds`` is not shared. Raises ValueError for fewer than two distinct seeds.
    """
    seeds = tuple(dict.fromkeys(int(s) for s in seeds))
    if len(seeds) < 2:
        raise ValueError(f"shared_samples: {plural(len(seeds), 'distinct seed')}; a vote shares between two or more")
    state = SharedCall(seeds, calls)
    token = _SHARED.set(state)
    try:
        yield state
    finally:
        _SHARED.reset(token)


def claim_shared_call(seed: int | None, temperature: float) -> SharedCall | None:
    """The rollout's sharing state when this call is to be shared (and counts it), else None."""
    state = _SHARED.get()
    if state is None or state.calls <= 0 or temperature <= 0 or seed is None or int(seed) not in state.seeds:
        return None
    state.calls -= 1
    return state


class SampleShare:
    """Completions decoded for seeds whose rollouts have not asked yet, by request key; LRU-bounded."""

    def __init__(self, size: int = 32):
        self._size = size
        self._items: OrderedDict[Any, dict[int, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self.batches = self.served = 0

    def take(self, key: Any, seed: int) -> Any:
        """The completion kept for ``seed`` under ``key`` (removed), or None."""
        with self._lock:
            found = self._items.get(key, {}).pop(seed, None)
            if found is not None:
                self.served += 1
                if not self._items[key]:
                    del self._items[key]
            return found

    def put(self, key: Any, completions: dict[int, Any]) -> None:
        with self._lock:
            self.batches += 1
            if completions:
                self._items[key] = dict(completions)
                self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
