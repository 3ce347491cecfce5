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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlmlab.errors import ConfigError, DatabaseBusyError

__all__ = ["BUSY_TIMEOUT_ENV", "DEFAULT_BUSY_TIMEOUT", "busy_timeout_seconds", "connect", "busy_errors", "is_busy",
           "Migration", "apply_migrations", "applied_migrations", "utc_now"]

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


# -- migrations: one runner for every store -----------------------------------------------------------------

@dataclass(frozen=True)
class Migration:
    """One schema step: its version (1, 2, ...), a name, and its steps in order: SQL statements, or a function
    ``step(conn)`` for a step that depends on what the file already has (a column an old file lacks)."""

    version: int
    name: str
    statements: tuple[str | Callable[[sqlite3.Connection], None], ...]


def apply_migrations(conn: sqlite3.Connection, migrations: Sequence[Migration], *, what: str = "database",
                     error: type[Exception] = ConfigError) -> list[int]:
    """Apply the migrations not yet recorded in ``schema_migrations``; return the versions applied now.

    Each migration runs in its own transaction with its ``schema_migrations`` row, so a crash leaves the file at
    a whole version. A file made before it had ``schema_migrations`` migrates in place when its first
    migrations are written to be idempotent (``CREATE TABLE IF NOT EXISTS``). Raises ``error`` when the file
    records a version this code does not know, or a known version under another name (a newer rlmlab made it).
    Never edit a migration that has shipped: add a new one at the end.
    """
    versions = [m.version for m in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise error(f"migrations must be numbered 1, 2, 3, ... in order; got {versions}")
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations ("
                 " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)")
    if conn.in_transaction:
        conn.commit()
    done = {row[0]: row[1] for row in conn.execute("SELECT version, name FROM schema_migrations")}
    known = {m.version: m.name for m in migrations}
    for version, name in sorted(done.items()):
        if known.get(version) != name:
            raise error(f"{what} has migration {version} {name!r}, which this rlmlab does not know (it knows "
                        f"{', '.join(f'{v} {n!r}' for v, n in known.items())}); open it with the rlmlab that made it")
    applied = []
    for m in migrations:
        if m.version in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            for step in m.statements:
                step(conn) if callable(step) else conn.execute(step)
            conn.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                         (m.version, m.name, utc_now()))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        applied.append(m.version)
    return applied


def applied_migrations(conn: sqlite3.Connection) -> list[dict[str, object]]:
    """Rows of ``schema_migrations`` in version order."""
    rows = conn.execute("SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
    return [{"version": r[0], "name": r[1], "applied_at": r[2]} for r in rows]


def utc_now() -> str:
    """UTC timestamp, ISO 8601 to the millisecond; sorts as text."""
    import time

    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"
