"""Ctrl-C for the threads that generate: Python raises KeyboardInterrupt in the main thread only.

A run on worker threads (the experiment runner's ``threads`` backend) would go on generating after the main
thread was interrupted, and the process would wait for it. So whoever catches the interrupt in the main thread
asks the others to stop (:func:`stopping_threads`), and the places that loop over tokens, LM calls and steps call
:func:`check_stop`, which raises KeyboardInterrupt in the thread that calls it while a stop is requested: each
thread's run then ends as an interrupted main thread's does (its trajectory written, marked interrupted).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["check_stop", "stop_requested", "stopping_threads", "honour_sigint"]

_STOP = threading.Event()


def stop_requested() -> bool:
    """True while :func:`stopping_threads` asks every generating thread to stop."""
    return _STOP.is_set()


def check_stop() -> None:
    """Raise KeyboardInterrupt if a stop is requested (a cheap check: call it once per token or step)."""
    if _STOP.is_set():
        raise KeyboardInterrupt


@contextmanager
def stopping_threads() -> Iterator[None]:
    """Ask every thread that calls :func:`check_stop` to stop during the block (wait for them in it)."""
    _STOP.set()
    try:
        yield
    finally:
        _STOP.clear()


def honour_sigint() -> None:
    """Make SIGINT raise KeyboardInterrupt even if this process was started with it ignored.

    A shell without job control starts ``cmd &`` with SIGINT ignored, and Python keeps that: Ctrl-C and
    ``kill -INT`` then did nothing and a run could only be killed, losing its current task. A run command
    saves what it did on KeyboardInterrupt, so it takes SIGINT back. Main thread only (signal's rule).
    """
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
