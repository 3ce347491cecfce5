"""SQLite connections of rlmlab's databases: one busy timeout, and one clear error when it runs out.

Every database rlmlab writes (memory stores, the Turing interaction log, the blob store) may be written by
another process at the same time: a notebook and the CLI, two experiment conditions, a REPL. SQLite lets one
writer in at a time; the others wait up to the busy timeout. The default, 30 s, outlasts any write rlmlab makes
(its longest transaction is one task's memory writes); ``RLMLAB_SQLITE_BUSY_TIMEOUT`` (seconds) or a
``busy_timeout`` argument changes it. A write that waited that long raises :class:`DatabaseBusyError` naming
the file, instead of sqlite3's bare "database is locked".
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rlmlab.errors import ConfigError, DatabaseBusyError

__all__ = ["BUSY_TIMEOUT_ENV", "DEFAULT_BUSY_TIMEOUT", "busy_timeout_seconds", "connect", "busy_errors", "is_busy"]

BUSY_TIMEOUT_ENV = "RLMLAB_SQLITE_BUSY_TIMEOUT"
DEFAULT_BUSY_TIMEOUT = 30.0  # seconds


def busy_timeout_seconds(value: float | None = None) -> float:
    """Seconds a write waits for another connection's write lock: ``value``, else $RLMLAB_SQLITE_BUSY_TIMEOUT,
    else 30. ConfigError for a negative or non-numeric setting."""
    source = "busy_timeout"
    if value is None:
        raw = os.environ.get(BUSY_TIMEOUT_ENV, "").strip()
        if not raw:
            return DEFAULT_BUSY_TIMEOUT
        source = BUSY_TIMEOUT_ENV
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"{BUSY_TIMEOUT_ENV}: {raw!r} is not a number of seconds") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ConfigError(f"{source}: {value!r}; give seconds >= 0")
    return float(value)


def connect(path: str | Path, *, busy_timeout: float | None = None, **kwargs: Any) -> sqlite3.Connection:
    """``sqlite3.connect`` with the busy timeout (see :func:`busy_timeout_seconds`); other arguments as sqlite3's."""
    return sqlite3.connect(str(path), timeout=busy_timeout_seconds(busy_timeout), **kwargs)


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's "another connection holds the lock" (SQLITE_BUSY and its extended codes)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF == sqlite3.SQLITE_BUSY
    return str(exc).startswith("database is locked")


@contextmanager
def busy_errors(path: str | Path, timeout: float,
                error: type[DatabaseBusyError] = DatabaseBusyError) -> Iterator[None]:
    """Turn a busy timeout inside the block into ``error(path, timeout)``; other errors pass unchanged."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            raise error(path, timeout) from None
        raise
