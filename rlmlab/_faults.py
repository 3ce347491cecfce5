"""Fault injection at named write points, for crash tests.

The code that writes a run's state (memory writes, the results file) calls :func:`write_point` with a name
after each write: ``memory:<what>`` after a store write (``memory:event:judge``, ``memory:items``, ...; inside
a task's transaction it is not committed yet), ``memory:commit`` after a task's transaction commits,
``loop:rollout`` after an agent run (its trajectory file written), ``results:partial`` with half a results
row on disk and ``results:row`` after it. A crash test kills the process at one of them and checks that a
resume ends where an uninterrupted run does.

Nothing happens unless a test sets a hook (:func:`fault_hook`, called with each name; it may raise) or the
``RLMLAB_FAULT`` environment variable names a point: ``RLMLAB_FAULT=memory:commit:2`` ends the process with
``os._exit(FAULT_EXIT_CODE)`` the second time that point is reached, with no cleanup, as SIGKILL would;
``*:7`` stops at the seventh write point of any name.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["FAULT_ENV", "FAULT_EXIT_CODE", "write_point", "fault_hook"]

FAULT_ENV = "RLMLAB_FAULT"
FAULT_EXIT_CODE = 137  # what a shell reports for a process killed by SIGKILL

_hook: Callable[[str], None] | None = None
_seen: Counter[str] = Counter()
_seen_lock = threading.Lock()


def write_point(name: str) -> None:
    """Mark a write point (see the module docstring); free when no fault is set."""
    hook = _hook
    if hook is not None:
        hook(name)
    spec = os.environ.get(FAULT_ENV)
    if spec:
        target, _, nth = spec.rpartition(":")
        if not target or not nth.isdigit():
            target, nth = spec, "1"
        if target in (name, "*"):
            with _seen_lock:
                _seen[target] += 1
                hit = _seen[target] == int(nth)
            if hit:
                os._exit(FAULT_EXIT_CODE)


@contextmanager
def fault_hook(hook: Callable[[str], None]) -> Iterator[None]:
    """Call ``hook(name)`` at every write point inside the block (one hook at a time, process-wide)."""
    global _hook
    before, _hook = _hook, hook
    try:
        yield
    finally:
        _hook = before
