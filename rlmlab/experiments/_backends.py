"""Where the experiment runner's units (one rollout of one task) run: local threads or a Ray cluster.

A backend is ``backend.map(fn, units)``: it calls the picklable top-level ``fn`` on every unit and yields
``(unit, result)`` pairs as they finish, in any order. ``BACKENDS.make("threads", workers=4)`` runs
them on a thread pool in this process; ``BACKENDS.make("ray", workers=4)`` sends them as Ray tasks to
the cluster ``ray.init()`` finds (``RAY_ADDRESS``), or to a local Ray instance it starts and stops.
On a real cluster every node needs rlmlab installed and the run directory on a shared filesystem,
because each unit opens the condition's memory DB and writes its trajectory there.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from rlmlab._interrupt import stopping_threads
from rlmlab.errors import ConfigError
from rlmlab.registry import Registry

__all__ = ["BACKENDS", "ThreadBackend", "RayBackend"]

BACKENDS: Registry = Registry("backend")


@BACKENDS.register("threads")
class ThreadBackend:
    """Units on up to ``workers`` threads of this process (the LM object is shared)."""

    name = "threads"
    ships_lm_objects = True

    def __init__(self, workers: int = 1):
        self.workers = max(1, int(workers))

    def map(self, fn: Callable[[Any], Any], units: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        units = list(units)
        if self.workers == 1:
            for u in units:
                yield u, fn(u)
            return
        with ThreadPoolExecutor(self.workers) as pool:
            futures = {pool.submit(fn, u): u for u in units}
            try:
                for f in as_completed(futures):
                    yield futures[f], f.result()
            except BaseException as exc:
                for f in futures:
                    f.cancel()
                if isinstance(exc, KeyboardInterrupt):
                    # Ctrl-C reached this (main) thread only: the running units stop at their next token or step,
                    # writing their trajectories as interrupted, instead of running to the end while we wait.
                    with stopping_threads():
                        pool.shutdown(wait=True)
                raise


@BACKENDS.register("ray")
class RayBackend:
    """Units as Ray tasks (each worker process builds its own LM from the spec); needs ``pip install rlmlab[ray]``."""

    name = "ray"
    ships_lm_objects = False  # LM objects hold native models; workers rebuild them from the spec string

    def __init__(self, workers: int = 1, address: str | None = None):
        import importlib.util

        if importlib.util.find_spec("ray") is None:  # fail before any unit runs
            raise ConfigError("backend 'ray' needs Ray: pip install 'rlmlab[ray]'")
        self.workers = max(1, int(workers))
        self.address = address

    def map(self, fn: Callable[[Any], Any], units: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        import ray

        started = not ray.is_initialized()
        if started:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
            kwargs: dict[str, Any] = {"address": self.address} if self.address else {"num_cpus": self.workers}
            ray.init(include_dashboard=False, log_to_driver=False, **kwargs)
        try:
            remote = ray.remote(num_cpus=1, max_retries=0)(fn)
            pending = {remote.remote(u): u for u in units}
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    yield pending.pop(ref), ray.get(ref)
        finally:
            if started:
                ray.shutdown()
