"""Ctrl-C that always stops a run: a stop flag beside Python's KeyboardInterrupt.

Python raises KeyboardInterrupt in the main thread only, at whatever bytecode runs when the signal arrives. Two
ways that loses a Ctrl-C: the exception is raised inside a ``__del__`` (a finished REPL worker's ``Popen`` being
collected between two tasks) or a ctypes callback, where Python prints "Exception ignored" and goes on; and
worker threads (the experiment runner's ``threads`` backend) never see it and go on generating while the
process waits for them. So while a run goes (:func:`noting_sigint`) SIGINT also sets a flag, and the places that
loop over tokens, LM calls and steps call :func:`check_stop`, which raises KeyboardInterrupt in whichever thread
calls it while the flag is set: every thread's run ends as an interrupted main thread's does (its trajectory
written, marked interrupted). :func:`stopping_threads` sets the flag for a main thread that caught the interrupt.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["check_stop", "stop_requested", "stopping_threads", "noting_sigint", "honour_sigint"]

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
    was_set = _STOP.is_set()
    _STOP.set()
    try:
        yield
    finally:
        if not was_set:
            _STOP.clear()


def _noted(signum: int, frame: object) -> None:
    _STOP.set()
    raise KeyboardInterrupt


@contextmanager
def noting_sigint() -> Iterator[None]:
    """A run's block: SIGINT raises KeyboardInterrupt as usual and also sets the stop flag, so the next
    :func:`check_stop` raises it again if it was swallowed; a block that ends with the flag set raises it.

    Only in the main thread, only over Python's own handler (an application's handler is left alone), and not
    nested: the outermost block restores the handler and clears the flag.
    """
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, _noted)
    try:
        yield
        check_stop()  # a Ctrl-C swallowed after the last check: the run is done, but the user asked to stop
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _STOP.clear()


def honour_sigint() -> None:
    """Make SIGINT raise KeyboardInterrupt even if this process was started with it ignored.

    A shell without job control starts ``cmd &`` with SIGINT ignored, and Python keeps that: Ctrl-C and
    ``kill -INT`` then did nothing and a run could only be killed, losing its current task. A run command
    saves what it did on KeyboardInterrupt, so it takes SIGINT back. Main thread only (signal's rule).
    """
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
