"""A SQLite cache of tree-sitter extractions, keyed by content hash, so re-extracting an unchanged tree is a lookup.

A row holds the records one extraction (``functions``, ``structs``, ...) gives for one source text, keyed by the
text's SHA-256 and by a fingerprint of everything else the records depend on: the source of the extractor's
modules (``_treesitter``, ``_items``, ``_source``, ``_verdicts`` and this one) and the installed ``tree-sitter``
and ``tree-sitter-rust`` versions. An edited file has another hash and an upgraded parser or changed extractor
another fingerprint, so neither can be served a stale row; rows of other fingerprints are deleted when a cache
is opened, so the file does not grow with every upgrade.

A whole tree seen unchanged twice also gets one row of its own (``trees``, keyed by the hashes of its files in
order): equal strings and small records are shared across its files before pickling, so it loads as one object
graph, in about half the time of the per-file rows (tokio: 3,600 records). The first extraction stores per-file
rows only (a cold run stays as fast as no cache); the second, served from them, stores the tree's row; the last
``TREES_KEPT`` trees are kept.

Records are pickled and read back by an unpickler that builds the oracle's record dataclasses and plain values
and refuses every other class or function, so loading a row runs no code. (JSON text, rebuilt into records in
Python, took 3x as long to load for tokio's 3,600 records; that load is most of a warm extraction.)

Several processes may share one file (WAL, rlmlab's busy timeout, the migration runner). A file SQLite cannot
read, when opened or later, is moved aside and rebuilt with a one-line warning (what it held is extracted again); a row that does not load is extracted again (a
warning); a write that cannot get the lock in time is skipped with a warning (the records are returned all the
same).
"""

from __future__ import annotations

import gc
import hashlib
import io
import logging
import os
import pickle
import sqlite3
import time
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from rlmlab._sqlite import Migration, apply_migrations, connect, is_busy
from rlmlab.oracle._items import (
    EnumInfo, FieldInfo, FunctionInfo, ImplInfo, Param, StructInfo, TraitInfo, VariantInfo,
)

__all__ = ["ExtractionCache", "default_cache_path", "extractor_fingerprint", "CACHE_DIR_ENV"]

log = logging.getLogger("rlmlab.oracle")

CACHE_DIR_ENV = "RLMLAB_CACHE_DIR"
RECORD_TYPES: dict[str, type] = {"functions": FunctionInfo, "structs": StructInfo, "enums": EnumInfo,
                                 "impls": ImplInfo, "traits": TraitInfo}
# The modules whose code decides what an extraction returns; their source is part of the fingerprint.
EXTRACTOR_MODULES = ("_treesitter.py", "_items.py", "_source.py", "_verdicts.py", "_extract_cache.py")
_LIBRARIES = ("tree-sitter", "tree-sitter-rust")
_CHUNK = 500  # hashes per lookup statement, under SQLite's bound-parameter limit on old builds (999)
TREES_KEPT = 8  # whole-tree rows kept (the newest); each holds a tree's records once more

MIGRATIONS = (
    Migration(1, "extractions", (
        "CREATE TABLE IF NOT EXISTS extractions (fingerprint TEXT NOT NULL, sha256 TEXT NOT NULL,"
        " name TEXT NOT NULL, records BLOB NOT NULL, PRIMARY KEY (fingerprint, sha256, name)) WITHOUT ROWID",)),
    Migration(2, "trees", (
        "CREATE TABLE IF NOT EXISTS trees (fingerprint TEXT NOT NULL, key TEXT NOT NULL, records BLOB NOT NULL,"
        " stored_at REAL NOT NULL, PRIMARY KEY (fingerprint, key)) WITHOUT ROWID",)),
)


def default_cache_path() -> Path:
    """``$RLMLAB_CACHE_DIR/extractions.sqlite``, else ``$XDG_CACHE_HOME/rlmlab/...``, else ``~/.cache/rlmlab/...``."""
    base = os.environ.get(CACHE_DIR_ENV)
    if not base:
        base = str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rlmlab")
    return Path(base) / "extractions.sqlite"


def _library_versions() -> dict[str, str]:
    out = {}
    for name in _LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "unknown"
    return out


def _module_sources() -> dict[str, bytes]:
    here = Path(__file__).resolve().parent
    return {name: (here / name).read_bytes() for name in EXTRACTOR_MODULES}


@cache
def extractor_fingerprint() -> str:
    """A hex digest of the extractor's code and the parser library versions (see the module docstring); computed
    once per process (reading package metadata costs milliseconds)."""
    h = hashlib.sha256()
    for name, version in sorted(_library_versions().items()):
        h.update(f"{name}=={version}\n".encode())
    for name, source in sorted(_module_sources().items()):
        h.update(f"{name} {len(source)}\n".encode())
        h.update(source)
    return h.hexdigest()


# -- records <-> bytes ------------------------------------------------------------------------------------------

_RECORD_CLASSES = {cls.__name__: cls for cls in (FunctionInfo, Param, StructInfo, FieldInfo, EnumInfo, VariantInfo,
                                                 ImplInfo, TraitInfo)}
_TOP_LEVEL = frozenset(RECORD_TYPES.values())  # what a row's list may hold
_ALL_RECORDS = frozenset(_RECORD_CLASSES.values())


class _RecordsOnly(pickle.Unpickler):
    """Unpickles the oracle's record dataclasses and plain values only: a pickle naming any other class or any
    function is refused, so loading a row can build records and nothing else."""

    def find_class(self, module: str, name: str) -> Any:
        if module == FunctionInfo.__module__ and name in _RECORD_CLASSES:
            return _RECORD_CLASSES[name]
        raise pickle.UnpicklingError(f"{module}.{name} in an extraction cache row; only the oracle's records load")


def encode_records(records: Iterable[Any]) -> bytes:
    return pickle.dumps(list(records), protocol=pickle.HIGHEST_PROTOCOL)


def tree_key(hashes: Iterable[str], names: Iterable[str]) -> str:
    """The ``trees`` key of files with these content hashes, in this order, and these extractions."""
    return hashlib.sha256("\n".join([*names, "", *hashes]).encode()).hexdigest()


_SMALL = (Param, FieldInfo)


def _shared(value: Any, seen: dict[Any, Any]) -> Any:
    """``value`` with equal strings, tuples and small records replaced by one instance each (``seen``); a record's
    fields are replaced in place (equal values: what it means does not change)."""
    kind = type(value)
    if kind is str:
        return seen.setdefault(value, value)
    if kind is tuple:
        return seen.setdefault(value, tuple([_shared(v, seen) for v in value])) if value else value
    if kind in _ALL_RECORDS:
        fields = value.__dict__
        for name, field in fields.items():
            fields[name] = _shared(field, seen)
        return seen.setdefault((kind, *fields.values()), value) if kind in _SMALL else value
    return value


def encode_tree(per_file: list[dict[str, list[Any]]]) -> bytes:
    seen: dict[Any, Any] = {}
    return pickle.dumps([{n: [_shared(r, seen) for r in recs] for n, recs in d.items()} for d in per_file],
                        protocol=pickle.HIGHEST_PROTOCOL)


def decode_tree(blob: bytes, files: int) -> list[dict[str, list[Any]]]:
    tree = _RecordsOnly(io.BytesIO(blob)).load()
    if not isinstance(tree, list) or len(tree) != files or not all(isinstance(d, dict) for d in tree):
        raise ValueError("a tree row that does not match its files")
    for d in tree:
        for records in d.values():
            if not isinstance(records, list) or not all(type(r) in _TOP_LEVEL for r in records):
                raise ValueError("a tree row that is not lists of extraction records")
    return tree


def decode_records(blob: bytes) -> list[Any]:
    """The records :func:`encode_records` stored; UnpicklingError (or ValueError, EOFError) if malformed."""
    records = _RecordsOnly(io.BytesIO(blob)).load()
    if not isinstance(records, list) or not all(type(r) in _TOP_LEVEL for r in records):
        raise ValueError("a row that is not a list of extraction records")
    return records


# -- the cache file ---------------------------------------------------------------------------------------------

class ExtractionCache:
    """Extracted records by (content SHA-256, extraction name) in a SQLite file; see the module docstring.

    ``hits`` and ``misses`` count (text, extraction) pairs asked for. Use as a context manager or call
    :meth:`close`.
    """

    def __init__(self, path: str | Path | None = None, *, busy_timeout: float | None = None):
        self.path = Path(path) if path is not None else default_cache_path()
        self.fingerprint = extractor_fingerprint()
        self.hits = self.misses = 0
        self._busy_timeout = busy_timeout
        try:
            self._conn = self._open()
        except sqlite3.DatabaseError as exc:
            if is_busy(exc):
                raise
            self._conn = self._rebuild(exc)

    def _rebuild(self, exc: BaseException) -> sqlite3.Connection:
        """Move the unreadable file aside (``.corrupt``) with a one-line warning and open a new one."""
        aside = self.path.with_name(self.path.name + ".corrupt")
        log.warning("%s: not a readable extraction cache (%s); moved to %s and rebuilt", self.path,
                    str(exc).replace("\n", " "), aside)
        for suffix in ("", "-wal", "-shm"):
            src = Path(str(self.path) + suffix)
            if src.exists():
                os.replace(src, Path(str(aside) + suffix))
        return self._open()

    def _damaged(self, exc: sqlite3.DatabaseError) -> bool:
        """True (and the file rebuilt) if ``exc`` says the file is damaged; False for a busy lock."""
        if is_busy(exc):
            return False
        self._conn.close()
        self._conn = self._rebuild(exc)
        return True

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = connect(self.path, busy_timeout=self._busy_timeout, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            # No fsync: this is a cache (fsyncs doubled a cold tokio run's write time); a file a crash damaged is
            # moved aside and rebuilt when opened or used.
            conn.execute("PRAGMA synchronous=OFF")
            apply_migrations(conn, MIGRATIONS, what=f"extraction cache {self.path}")
            # Range conditions use the primary key, so a file holding only this fingerprint is not scanned, and
            # no write lock is taken unless there is something to delete.
            other = "fingerprint < ? OR fingerprint > ?"
            for table in ("extractions", "trees"):
                if conn.execute(f"SELECT 1 FROM {table} WHERE {other} LIMIT 1", (self.fingerprint,) * 2).fetchone():
                    conn.execute(f"DELETE FROM {table} WHERE {other}", (self.fingerprint,) * 2)
        except BaseException:
            conn.close()
            raise
        return conn

    def get_many(self, hashes: Iterable[str], names: Iterable[str]) -> dict[str, dict[str, list[Any]]]:
        """{sha256: {name: records}} for the pairs stored under this fingerprint; a row that does not decode is
        left out (and counted as a miss) so it is extracted and written again."""
        wanted, names = list(dict.fromkeys(hashes)), list(names)
        found: dict[str, dict[str, list[Any]]] = {}
        wanted_names = set(names)
        collecting = gc.isenabled()
        gc.disable()  # tens of thousands of new objects would set off collections that scan the whole process
        try:  # (extract_files pauses the collector already; a direct caller gets the same)
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start:start + _CHUNK]
                # Filtering names here, not in SQL, measured faster: one index seek per hash instead of three.
                try:
                    rows = self._conn.execute(
                        f"SELECT sha256, name, records FROM extractions WHERE fingerprint = ?"
                        f" AND sha256 IN ({','.join('?' * len(chunk))})", (self.fingerprint, *chunk)).fetchall()
                except sqlite3.DatabaseError as exc:
                    if not self._damaged(exc):
                        raise
                    found.clear()
                    break
                for sha, name, blob in rows:
                    if name not in wanted_names:
                        continue
                    try:
                        found.setdefault(sha, {})[name] = decode_records(blob)
                    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
                        log.warning("%s: a %s row does not decode (%s); extracting again", self.path, name, exc)
        finally:
            if collecting:
                gc.enable()
        got = sum(len(v) for v in found.values())
        self.hits += got
        self.misses += len(wanted) * len(names) - got
        return found

    def get_tree(self, key: str, files: int) -> list[dict[str, list[Any]]] | None:
        """The per-file records stored for tree ``key`` (one dict per file, in order), or None."""
        try:
            row = self._conn.execute("SELECT records FROM trees WHERE fingerprint = ? AND key = ?",
                                     (self.fingerprint, key)).fetchone()
        except sqlite3.DatabaseError as exc:
            if self._damaged(exc):
                return None
            raise
        if row is None:
            return None
        collecting = gc.isenabled()
        gc.disable()
        try:
            return decode_tree(row[0], files)
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
            log.warning("%s: a tree row does not decode (%s); reading the files' rows", self.path, exc)
            return None
        finally:
            if collecting:
                gc.enable()

    def put_tree(self, key: str, per_file: list[dict[str, list[Any]]]) -> None:
        """Store a tree's records as one row, keeping the newest ``TREES_KEPT``; skipped with a warning if busy."""
        blob = encode_tree(per_file)
        try:
            with self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.execute("INSERT OR REPLACE INTO trees VALUES (?, ?, ?, ?)",
                                   (self.fingerprint, key, blob, time.time()))
                self._conn.execute("DELETE FROM trees WHERE key NOT IN (SELECT key FROM trees ORDER BY stored_at DESC"
                                   " LIMIT ?)", (TREES_KEPT,))
        except sqlite3.DatabaseError as exc:
            if not self._damaged(exc):
                log.warning("%s: busy past the timeout; the tree's row not stored this time", self.path)

    def put_many(self, rows: Mapping[str, Mapping[str, Iterable[Any]]]) -> None:
        """Store {sha256: {name: records}} in one transaction; skipped with a warning if the lock stays taken."""
        data = [(self.fingerprint, sha, name, encode_records(records))
                for sha, per in rows.items() for name, records in per.items()]
        if not data:
            return
        try:
            with self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany("INSERT OR REPLACE INTO extractions VALUES (?, ?, ?, ?)", data)
        except sqlite3.DatabaseError as exc:
            if not self._damaged(exc):
                log.warning("%s: busy past the timeout; %d extractions not cached this time", self.path, len(data))

    def __len__(self) -> int:
        return self._conn.execute("SELECT count(*) FROM extractions").fetchone()[0]

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "ExtractionCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
