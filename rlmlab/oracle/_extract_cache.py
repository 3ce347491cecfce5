"""A SQLite cache of tree-sitter extractions, keyed by content hash, so re-extracting an unchanged tree is a lookup.

A row holds the records one extraction (``functions``, ``structs``, ...) gives for one source text, keyed by the
text's SHA-256 and by a fingerprint of everything else the records depend on: the source of the extractor's
modules (``_treesitter``, ``_items``, ``_source``, ``_verdicts`` and this codec) and the installed ``tree-sitter``
and ``tree-sitter-rust`` versions. An edited file has another hash and an upgraded parser or changed extractor
another fingerprint, so neither can be served a stale row; rows of other fingerprints are deleted when a cache
is opened, so the file does not grow with every upgrade.

Records are stored as plain nested lists of their fields in declaration order (nested records the same way),
pickled and read back by an unpickler that refuses every class or function: a cache file is data, and loading it
runs no code. The records themselves are rebuilt here. (JSON text was 3x slower to load for tokio's 3,600
records, and pickling the dataclasses themselves 4x.) Several processes may share one file (WAL, rlmlab's busy
timeout, the migration runner). A file SQLite cannot read is moved aside and rebuilt with a one-line warning; a
write that cannot get the lock in time is skipped with a warning (the records are returned all the same).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import logging
import os
import pickle
import sqlite3
import typing
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

MIGRATIONS = (
    Migration(1, "extractions", (
        "CREATE TABLE IF NOT EXISTS extractions (fingerprint TEXT NOT NULL, sha256 TEXT NOT NULL,"
        " name TEXT NOT NULL, records BLOB NOT NULL, PRIMARY KEY (fingerprint, sha256, name)) WITHOUT ROWID",)),
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


# -- records <-> JSON arrays ------------------------------------------------------------------------------------

def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return [_encode(getattr(value, f.name)) for f in dataclasses.fields(value)]
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    return value


# Tuple fields whose elements are records; every other list read back becomes a tuple of plain values.
_NESTED: dict[type, dict[str, type]] = {FunctionInfo: {"parameters": Param}, StructInfo: {"fields": FieldInfo},
                                        EnumInfo: {"variants": VariantInfo}, VariantInfo: {"fields": FieldInfo}}
_SMALL = (Param, FieldInfo)  # immutable and repeated often (``&self``, ``pub name: String``): shared, not rebuilt


@cache
def _decoder(cls: type) -> Any:
    """``decode(array) -> cls`` for a record class (see ``_NESTED``)."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    steps: list[tuple[int, Any]] = []
    for i, f in enumerate(dataclasses.fields(cls)):
        inner = _NESTED.get(cls, {}).get(f.name)
        if inner is not None:
            steps.append((i, _decoder(inner)))
        elif typing.get_origin(f.type) is tuple or str(f.type).startswith("tuple"):
            steps.append((i, None))
    new, set_attr, n = object.__new__, object.__setattr__, len(names)
    shared: dict[tuple[Any, ...], Any] | None = {} if cls in _SMALL else None

    def decode(values: list[Any]) -> Any:
        if len(values) != n:
            raise ValueError(f"{cls.__name__}: {len(values)} fields stored, {n} expected")
        if shared is not None:
            key = tuple(values)
            if key in shared:
                return shared[key]
        for i, sub in steps:
            values[i] = tuple(values[i]) if sub is None else tuple([sub(x) for x in values[i]])
        # Frozen dataclasses set each field through object.__setattr__ in __init__; giving the instance its
        # __dict__ at once is what pickle does and several times faster for a repository's thousands of records.
        obj = new(cls)
        set_attr(obj, "__dict__", dict(zip(names, values)))
        if shared is not None:
            shared[key] = obj
        return obj

    return decode


class _DataOnly(pickle.Unpickler):
    """Lists, strings, numbers, booleans and None only: a pickle naming any class or function is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name} in an extraction cache row: only plain data is stored")


def encode_records(records: Iterable[Any]) -> bytes:
    return pickle.dumps([_encode(r) for r in records], protocol=pickle.HIGHEST_PROTOCOL)


def decode_records(name: str, blob: bytes) -> list[Any]:
    """The records of extraction ``name`` from :func:`encode_records`; ValueError or UnpicklingError if malformed."""
    decode = _decoder(RECORD_TYPES[name])
    return [decode(values) for values in _DataOnly(io.BytesIO(blob)).load()]


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
            aside = self.path.with_name(self.path.name + ".corrupt")
            log.warning("%s: not a readable extraction cache (%s); moved to %s and rebuilt", self.path, exc, aside)
            for suffix in ("", "-wal", "-shm"):
                src = Path(str(self.path) + suffix)
                if src.exists():
                    os.replace(src, Path(str(aside) + suffix))
            self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = connect(self.path, busy_timeout=self._busy_timeout, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # a lost last commit after a power cut only costs a re-parse
            apply_migrations(conn, MIGRATIONS, what=f"extraction cache {self.path}")
            conn.execute("DELETE FROM extractions WHERE fingerprint != ?", (self.fingerprint,))
        except BaseException:
            conn.close()
            raise
        return conn

    def get_many(self, hashes: Iterable[str], names: Iterable[str]) -> dict[str, dict[str, list[Any]]]:
        """{sha256: {name: records}} for the pairs stored under this fingerprint; a row that does not decode is
        left out (and counted as a miss) so it is extracted and written again."""
        wanted, names = list(dict.fromkeys(hashes)), list(names)
        found: dict[str, dict[str, list[Any]]] = {}
        marks = ",".join("?" * len(names))
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start:start + _CHUNK]
            rows = self._conn.execute(
                f"SELECT sha256, name, records FROM extractions WHERE fingerprint = ? AND name IN ({marks})"
                f" AND sha256 IN ({','.join('?' * len(chunk))})", (self.fingerprint, *names, *chunk)).fetchall()
            for sha, name, blob in rows:
                try:
                    found.setdefault(sha, {})[name] = decode_records(name, blob)
                except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError) as exc:
                    log.warning("%s: a %s row does not decode (%s); extracting again", self.path, name, exc)
        got = sum(len(v) for v in found.values())
        self.hits += got
        self.misses += len(wanted) * len(names) - got
        return found

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
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            log.warning("%s: busy past the timeout; %d extractions not cached this time", self.path, len(data))

    def __len__(self) -> int:
        return self._conn.execute("SELECT count(*) FROM extractions").fetchone()[0]

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "ExtractionCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
