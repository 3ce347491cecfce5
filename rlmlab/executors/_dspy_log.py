"""DSPy's WARNING lines during a run go into the run's record (``Trajectory.notes``), not onto stderr.

DSPy logs through its own ``dspy`` logger with a stream handler on stderr (``dspy_handler``), so in a notebook
``RLM reached max iterations, using extract to get final output`` lands in the cell's output, far from the run it
is about. While a run is being captured, that handler drops WARNING and above (other levels print as before),
and the run gets each line as a note (``dspy WARNING dspy.predict.rlm: ...``), written with its trajectory.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Iterator

__all__ = ["dspy_warnings", "DSPY_NOTE_PREFIX"]

DSPY_NOTE_PREFIX = "dspy "
_NOTE_CHARS = 500  # one note at most: a warning that quotes a whole prompt would swamp the record
_DSPY_HANDLER = "dspy_handler"  # the name dspy.utils.logging_utils gives its stderr handler

_lock = threading.Lock()
_active: list["_Capture"] = []


class _Capture:
    """The notes of one run: records from its own thread, and from any thread while it is the only run."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()
        self.notes: list[str] = []

    def add(self, record: logging.LogRecord) -> None:
        text = " ".join(record.getMessage().split())
        if len(text) > _NOTE_CHARS:
            text = text[:_NOTE_CHARS - 3] + "..."
        self.notes.append(f"{DSPY_NOTE_PREFIX}{record.levelname} {record.name}: {text}")


class _Router(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        with _lock:
            for capture in _owners(record):
                capture.add(record)


_ROUTER = _Router()


def _owners(record: logging.LogRecord) -> list[_Capture]:
    """The captures a record belongs to: the run on its thread, else the only run going (none when several runs
    go on and the record comes from none of their threads: then it prints, as it would without rlmlab)."""
    own = [c for c in _active if c.thread == record.thread]
    return own or (_active[:] if len(_active) == 1 else [])


def _quiet(record: logging.LogRecord) -> bool:
    """Filter for DSPy's stderr handler: a WARNING or worse that a run captures is not printed too."""
    if record.levelno < logging.WARNING:
        return True
    with _lock:
        return not _owners(record)


@contextlib.contextmanager
def dspy_warnings() -> Iterator[list[str]]:
    """Capture DSPy's WARNING-and-above records for the block; yields the list of notes, filled as they come.

    Nested and concurrent captures (runs in threads) are fine: each gets the records of its own thread, and a
    record from another thread (a DSPy worker thread) when it is the only capture; a record no capture takes is
    printed as usual, so nothing is lost.
    """
    logger = logging.getLogger("dspy")
    capture = _Capture()
    with _lock:
        _active.append(capture)
        if _ROUTER not in logger.handlers:
            logger.addHandler(_ROUTER)
        for handler in logger.handlers:  # looked up each time: DSPy replaces its handler when reconfigured
            if handler.get_name() == _DSPY_HANDLER and _quiet not in handler.filters:
                handler.addFilter(_quiet)
    try:
        yield capture.notes
    finally:
        with _lock:
            _active.remove(capture)
            if not _active:
                logger.removeHandler(_ROUTER)
