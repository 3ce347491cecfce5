"""BlobStore: the payloads behind BlobRef handles, in memory with an optional SQLite file."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from pathlib import Path

from rlmlab._sqlite import Migration, apply_migrations, busy_errors, busy_timeout_seconds, connect
from rlmlab.errors import ToolError
from rlmlab.handles._blobref import BlobRef

__all__ = ["BlobStore", "BLOB_MIGRATIONS"]

# The blob store's schema (rlmlab._sqlite's migration runner). Migration 1 is idempotent, so a file written before
# the store recorded migrations is adopted in place.
BLOB_MIGRATIONS = [
    Migration(1, "blobs", ("CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY, payload TEXT NOT NULL,"
                           " sha256 TEXT NOT NULL, created REAL DEFAULT (unixepoch('subsec')))",)),
]

_NAME_RE = re.compile(r"^[A-Za-z0-9_.:\-]{1,64}$")


def _versioned(name: str, digest: str) -> str:
    """The key of a payload put under a name that already holds other content. '@' is not allowed in names, so
    it never collides with a name given by the caller."""
    return f"{name}@{digest[:12]}"


def unknown_key(key: str, known: list[str]) -> ToolError:
    """The error for a key the reader does not hold, listing (the first five of) those it does."""
    shown = ", ".join(known[:5]) + (f", ... ({len(known)} in all)" if len(known) > 5 else "")
    return ToolError(f"ref: unknown blob key {key!r}; known keys: {shown or '(none)'}")


def content_key(payload: str) -> str:
    """Content-hash key: the same payload always gets the same key."""
    return "blob_" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


class BlobStore:
    """Holds payloads by key. Keys are content hashes unless a name is given; a key never changes its payload
    (see :meth:`put`), so a :class:`BlobRef` always measures the text it was made for.

    With ``path`` the payloads are also written to a SQLite file and read back
    from it, so handles survive a restart of the REPL. A write waits up to
    ``busy_timeout`` seconds (default 30, see :mod:`rlmlab._sqlite`) for another
    process's write lock, then raises DatabaseBusyError naming the file.
    """

    def __init__(self, path: str | Path | None = None, *, busy_timeout: float | None = None):
        self._mem: dict[str, str] = {}
        self._lock = threading.Lock()
        self.path = Path(path) if path is not None else None
        self._db: sqlite3.Connection | None = None
        self.busy_timeout = busy_timeout_seconds(busy_timeout)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with busy_errors(self.path, self.busy_timeout):
                self._db = connect(self.path, busy_timeout=self.busy_timeout, check_same_thread=False)
                apply_migrations(self._db, BLOB_MIGRATIONS, what=f"blob store {self.path}")

    def put(self, payload: str, name: str | None = None) -> BlobRef:
        """Store ``payload`` and return its handle; a key names one payload for good.

        Without ``name`` the key is the content hash (``blob_<sha12>``). With ``name`` the key is ``name`` the first
        time; putting the same payload under that name again returns the same handle, and putting another payload
        under it returns a new handle ``name@<sha12>`` (the name's first payload, and every handle to it, keep
        their data). ToolError if ``payload`` is not a str or ``name`` is not 1-64 characters of [A-Za-z0-9_.:-].
        """
        if not isinstance(payload, str):
            raise ToolError(f"payload: expected a str, got {type(payload).__name__}")
        if name is not None and not _NAME_RE.match(name):
            raise ToolError(f"name: {name!r} is not allowed; use 1-64 characters from [A-Za-z0-9_.:-]")
        with self._lock:
            if self._db is not None:  # the file decides (another process may hold the name); the cache follows it
                digest = hashlib.sha256(payload.encode("utf-8")).hexdigest()
                with busy_errors(self.path, self.busy_timeout):
                    try:
                        key = self._claim(name or "blob_" + digest[:12], name, payload, digest)
                        self._db.commit()
                    except BaseException:
                        self._db.rollback()
                        raise
            elif name is None:
                key = content_key(payload)
            else:  # hashed only when the name holds other text: a named put stays a dict lookup
                held = self._mem.get(name)
                key = name if held is None or held == payload else _versioned(
                    name, hashlib.sha256(payload.encode("utf-8")).hexdigest())
            self._mem[key] = payload
        return BlobRef(key, len(payload))

    def _claim(self, key: str, name: str | None, payload: str, digest: str) -> str:
        """Write ``payload`` under ``key`` unless that key already holds other content (then under the name's
        versioned key); returns the key used. Runs inside the caller's transaction."""
        self._db.execute("INSERT OR IGNORE INTO blobs (key, payload, sha256) VALUES (?, ?, ?)", (key, payload, digest))
        (held,) = self._db.execute("SELECT sha256 FROM blobs WHERE key = ?", (key,)).fetchone()
        if held == digest or name is None:
            return key
        key = _versioned(name, digest)
        self._db.execute("INSERT OR IGNORE INTO blobs (key, payload, sha256) VALUES (?, ?, ?)", (key, payload, digest))
        return key

    def get(self, ref: BlobRef | str) -> str:
        """The payload for a handle or key; ToolError naming ``ref`` if it is unknown."""
        key = ref.key if isinstance(ref, BlobRef) else ref
        if not isinstance(key, str):
            raise ToolError(f"ref: expected a BlobRef or a blob key (str), got {type(ref).__name__}")
        with self._lock:
            if key in self._mem:
                return self._mem[key]
            if self._db is not None:
                row = self._db.execute("SELECT payload FROM blobs WHERE key = ?", (key,)).fetchone()
                if row is not None:
                    self._mem[key] = row[0]
                    return row[0]
        raise unknown_key(key, self.keys())

    def ref(self, key: str) -> BlobRef:
        return BlobRef(key, len(self.get(key)))

    def keys(self) -> list[str]:
        keys = set(self._mem)
        if self._db is not None:
            keys.update(k for (k,) in self._db.execute("SELECT key FROM blobs"))
        return sorted(keys)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        with self._lock:
            if key in self._mem:
                return True
            return self._db is not None and self._db.execute(
                "SELECT 1 FROM blobs WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        return len(self.keys())

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
