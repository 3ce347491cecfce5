"""MemoryStore: memory items, the L4 event log and item usage in one SQLite file, with FTS5 search."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

from rlmlab._faults import write_point
from rlmlab._sqlite import busy_errors, busy_timeout_seconds
from rlmlab.memory._errors import ItemValidationError, MemoryStoreError, StoreBusyError
from rlmlab.memory._records import (
    FILTERS, STATUSES, AddResult, Artifact, Event, Hit, MemoryItem, StoreStats, check_shape, check_filters, check_k,
)
from rlmlab.memory._schema import applied_migrations, connect, utc_now
from rlmlab.memory._search import FtsSearch
from rlmlab.memory._tokens import query_tokens

__all__ = ["MemoryStore"]

_ITEM_COLUMNS = [f.name for f in fields(MemoryItem)]
_ARTIFACT_COLUMNS = [f.name for f in fields(Artifact)]


class MemoryStore:
    """Memory items, events and usage in a SQLite file (``":memory:"`` for a throw-away store).

    Provenance: ``bind(run_id=..., trajectory_id=..., domain=...)`` sets the ids stamped on items added and
    events logged afterwards (where the item or call does not give its own). Safe to share between threads.
    A write waits up to ``busy_timeout`` seconds (default 30, see :mod:`rlmlab._sqlite`) for another process's
    write lock, then raises StoreBusyError naming the file.
    """

    def __init__(self, path: str | Path, *, run_id: str | None = None, trajectory_id: str | None = None,
                 domain: str | None = None, busy_timeout: float | None = None, rerank: bool = False):
        self.path = str(path)
        self.busy_timeout = busy_timeout_seconds(busy_timeout)
        with self._busy():
            self._conn = connect(path, busy_timeout=self.busy_timeout)
        self._lock = threading.RLock()
        self._depth = 0  # open transaction()/write nesting; only the thread holding _lock touches it
        self._search = FtsSearch(self._conn, rerank=rerank)
        # A database opened with fewer migrations (a test or benchmark of an older schema) lacks the newer columns:
        # an item is written without them (they hold their defaults) and read with their defaults.
        present = {r[1] for r in self._conn.execute("PRAGMA table_info(items)")}
        self._columns = [c for c in _ITEM_COLUMNS if c in present]
        self.run_id, self.trajectory_id, self.domain = run_id, trajectory_id, domain

    def bind(self, *, run_id: str | None = None, trajectory_id: str | None = None, domain: str | None = None) -> None:
        """Set the provenance for later writes; all three are replaced (None clears one)."""
        self.run_id, self.trajectory_id, self.domain = run_id, trajectory_id, domain

    # -- items -------------------------------------------------------------------------------------------

    def add(self, item: MemoryItem, *, use_binding: bool = True) -> AddResult:
        """Store ``item`` unless an item with its id (same normalised title and content) is stored.

        A duplicate changes nothing at all (no counter, timestamp or provenance is touched, and a differing
        description, polarity or tags is not merged): the result carries the existing id and
        ``created=False``. With ``use_binding`` the store's bound run/trajectory/domain fill the item's
        empty provenance fields; ``created_at``/``updated_at`` default to now.
        """
        return self.add_many([item], use_binding=use_binding)[0]

    def add_many(self, items: Iterable[MemoryItem], *, use_binding: bool = True) -> list[AddResult]:
        """``add`` for several items in one transaction: all are written or none."""
        rows = [self._row_for(item, use_binding) for item in items]
        results = []
        with self._tx("items") as conn:
            for row in rows:
                cur = conn.execute(
                    f"INSERT INTO items ({', '.join(self._columns)}) VALUES ({', '.join('?' * len(self._columns))})"
                    " ON CONFLICT (id) DO NOTHING",
                    [row[c] for c in self._columns],
                )
                results.append(AddResult(row["id"], cur.rowcount == 1))
        return results

    def _bound_row(self, record: MemoryItem | Artifact, use_binding: bool) -> dict[str, Any]:
        """``record`` as a dict with its empty provenance filled from the binding, re-validated (a bound id
        may be malformed)."""
        row = record.to_dict()
        if use_binding:
            for name in ("run_id", "trajectory_id", "domain"):
                if row[name] is None:
                    row[name] = getattr(self, name)
        type(record)(**row)
        return row

    def _row_for(self, item: MemoryItem, use_binding: bool) -> dict[str, Any]:
        if not isinstance(item, MemoryItem):
            raise TypeError(f"add expects a MemoryItem, got {type(item).__name__}")
        row = self._bound_row(item, use_binding)
        now = utc_now()
        row["created_at"] = row["created_at"] or now
        row["updated_at"] = row["updated_at"] or row["created_at"]
        row["tags"] = json.dumps(row["tags"])
        row["meta"] = json.dumps(row["meta"], sort_keys=True)
        return row

    def get(self, item_id: str) -> MemoryItem:
        """The item with this id; MemoryStoreError if there is none."""
        return self.get_many([item_id])[0]

    def get_many(self, ids: Iterable[str]) -> list[MemoryItem]:
        """Items in the order of ``ids``; MemoryStoreError naming the first unknown id."""
        ids = list(ids)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT * FROM items WHERE id IN ({', '.join('?' * len(ids))})", ids).fetchall() if ids else []
        found = {row["id"]: _item(row) for row in rows}
        for i in ids:
            if i not in found:
                raise MemoryStoreError(f"unknown memory id {i!r}")
        return [found[i] for i in ids]

    def __contains__(self, item_id: object) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM items WHERE id = ?", (item_id,)).fetchone() is not None

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT count(*) FROM items").fetchone()[0]

    def items(self, **filters: str | None) -> list[MemoryItem]:
        """Active items, sorted by id, optionally filtered by polarity, role, domain, scope or layer (exact match).

        ``status="superseded"`` (or another status) lists those instead; ``status=None`` lists every item.
        """
        filters.setdefault("status", "active")
        where, params = _where(filters)
        with self._lock:
            rows = self._conn.execute(f"SELECT * FROM items {where} ORDER BY id", params).fetchall()
        return [_item(row) for row in rows]

    def distinct(self, field: str) -> list[str]:
        """The distinct values of one filter field (one of FILTERS) over every item of any status, sorted;
        items with no value (None) are left out. ItemValidationError for a field that is not a filter."""
        if field not in FILTERS:
            raise ItemValidationError(field, f"not a filter field; allowed: {', '.join(FILTERS)}")
        # ``field`` is one of FILTERS (checked above), so it is safe to put in the SQL text
        with self._lock:
            rows = self._conn.execute(f"SELECT DISTINCT {field} FROM items WHERE {field} IS NOT NULL ORDER BY 1")
            return [r[0] for r in rows]

    def search(self, query: str, k: int = 6, **filters: str | None) -> list[Hit]:
        """Up to ``k`` items ranked by FTS5 bm25 (weights in ``FIELD_WEIGHTS``), best first; ties by id.

        ``query`` is free text: its words (``query_tokens``) are quoted, so FTS5 syntax in it is neutralised,
        and a query with no searchable words returns []. Items holding any of the words are ranked by bm25
        (OR; an item need not hold them all). Words are matched as written first;
        other forms of them (porter stems: "handle" finds "handles") fill what is still left. A store opened with
        ``rerank=True`` rescores the best 30: FTS5's bm25 plus per-field BM25, better recall at large banks for
        about twice the time (``memory/_rerank.py``). Scores are non-increasing (a later step's hit never shows
        more than the hit before it). Filters as in ``items`` (active items unless ``status`` is given). How it
        stays fast: ``memory/_search.py``.
        """
        check_k(k)
        filters.setdefault("status", "active")
        check_filters(filters)
        words = query_tokens(query)
        if not words:
            return []
        with self._lock:
            return self._search.search(words, k, filters)

    def set_status(self, ids: Iterable[str], status: str, *, superseded_by: str | None = None) -> int:
        """Move items to ``status`` (one of STATUSES) in one transaction; returns how many rows changed.

        ``superseded_by`` (an existing item id) is required for "superseded" and refused otherwise; going
        back to "active" clears it. Unknown ids raise MemoryStoreError and nothing changes.
        """
        if status not in STATUSES:
            raise ItemValidationError("status", f"{status!r} is not allowed; use one of {', '.join(STATUSES)}")
        if (status == "superseded") != (superseded_by is not None):
            raise ItemValidationError("superseded_by", "give it exactly when the status is 'superseded'")
        ids = list(dict.fromkeys(ids))
        self.get_many(ids + ([superseded_by] if superseded_by else []))
        if superseded_by in ids:
            raise ItemValidationError("superseded_by", f"{superseded_by!r} cannot supersede itself")
        now = utc_now()
        with self._tx("status") as conn:
            return sum(conn.execute("UPDATE items SET status = ?, superseded_by = ?, updated_at = ? WHERE id = ?",
                                    (status, superseded_by, now, i)).rowcount for i in ids)

    def add_shape(self, item_id: str, query: str) -> bool:
        """Add ``query``'s shape to the item's shapes (a template that won on a task asked another way: a guardrail
        for that shape then no longer retires it, see MixedRetrieval). True when the shapes changed; False when the
        shape is there already or the shapes would pass their limit. MemoryStoreError for an unknown id."""
        item = self.get(item_id)
        try:
            shape = check_shape("\n".join(filter(None, [item.shape, query])))
        except ItemValidationError:
            return False
        if shape == item.shape:
            return False
        with self._tx("shape") as conn:
            conn.execute("UPDATE items SET shape = ?, updated_at = ? WHERE id = ?", (shape, utc_now(), item_id))
        return True

    # -- artifacts (L3) ----------------------------------------------------------------------------------

    def put_artifact(self, artifact: Artifact, *, use_binding: bool = True) -> AddResult:
        """Store an L3 artifact unless one with its id (same kind and content) is stored; provenance as ``add``."""
        if not isinstance(artifact, Artifact):
            raise TypeError(f"put_artifact expects an Artifact, got {type(artifact).__name__}")
        row = self._bound_row(artifact, use_binding)
        row["created_at"] = row["created_at"] or utc_now()
        with self._tx("artifact") as conn:
            cur = conn.execute(
                f"INSERT INTO artifacts ({', '.join(_ARTIFACT_COLUMNS)})"
                f" VALUES ({', '.join('?' * len(_ARTIFACT_COLUMNS))}) ON CONFLICT (id) DO NOTHING",
                [row[c] for c in _ARTIFACT_COLUMNS])
        return AddResult(row["id"], cur.rowcount == 1)

    def get_artifact(self, artifact_id: str) -> Artifact:
        """The artifact with this id; MemoryStoreError if there is none."""
        with self._lock:
            row = self._conn.execute("SELECT * FROM artifacts WHERE id = ?", (artifact_id,)).fetchone()
        if row is None:
            raise MemoryStoreError(f"unknown artifact id {artifact_id!r}")
        return Artifact(**{c: row[c] for c in _ARTIFACT_COLUMNS})

    def artifacts(self, *, domain: str | None = None, kind: str | None = None) -> list[Artifact]:
        """Artifacts, newest first (ties by id), optionally of one domain and/or kind."""
        clauses = [(c, v) for c, v in (("domain", domain), ("kind", kind)) if v is not None]
        where = ("WHERE " + " AND ".join(f"{c} = ?" for c, _ in clauses)) if clauses else ""
        with self._lock:
            rows = self._conn.execute(f"SELECT * FROM artifacts {where} ORDER BY created_at DESC, id",
                                      [v for _, v in clauses]).fetchall()
        return [Artifact(**{c: r[c] for c in _ARTIFACT_COLUMNS}) for r in rows]

    # -- events (L4) ---------------------------------------------------------------------------------------

    def log_event(self, kind: str, payload: dict[str, Any], *, run_id: str | None = None,
                  trajectory_id: str | None = None, domain: str | None = None) -> int:
        """Append an event; returns its id. Provenance defaults to the bound ids. Events cannot be changed."""
        if not isinstance(kind, str) or not kind.strip() or len(kind) > 64 or "\n" in kind:
            raise ItemValidationError("kind", f"{kind!r} is not allowed; use a one-line name of 1-64 characters")
        if not isinstance(payload, dict):
            raise ItemValidationError("payload", f"expected a JSON object (dict), got {type(payload).__name__}")
        try:
            text = json.dumps(payload, ensure_ascii=False, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ItemValidationError("payload", f"not JSON-serialisable: {exc}") from None
        row = (kind.strip(), text, domain or self.domain, run_id or self.run_id,
               trajectory_id or self.trajectory_id, utc_now())
        with self._tx(f"event:{row[0]}") as conn:
            cur = conn.execute(
                "INSERT INTO events (kind, payload, domain, run_id, trajectory_id, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)", row)
        return int(cur.lastrowid)

    def events(self, *, kind: str | None = None, run_id: str | None = None, trajectory_id: str | None = None,
               payload: dict[str, Any] | None = None) -> list[Event]:
        """Events in the order they were logged, optionally filtered (exact match). ``payload`` matches top-level
        payload fields (``{"task_id": "t1"}``: events whose payload has that task_id); a field name that is not an
        identifier is an ItemValidationError."""
        clauses = [(f"{c} = ?", v) for c, v in (("kind", kind), ("run_id", run_id),
                                                 ("trajectory_id", trajectory_id)) if v is not None]
        for key, value in (payload or {}).items():
            if not key.isidentifier():
                raise ItemValidationError("payload", f"field {key!r}: expected an identifier such as task_id")
            clauses.append((f"json_extract(payload, '$.{key}') = ?", value))
        where = ("WHERE " + " AND ".join(c for c, _ in clauses)) if clauses else ""
        with self._lock:
            rows = self._conn.execute(f"SELECT * FROM events {where} ORDER BY id", [v for _, v in clauses])
            return [Event(**{**dict(r), "payload": json.loads(r["payload"])}) for r in rows.fetchall()]

    # -- usage and outcomes ------------------------------------------------------------------------------

    def record_usage(self, ids: Iterable[str], *, trajectory_id: str | None = None,
                     run_id: str | None = None) -> int:
        """Link retrieved items to a trajectory (default: the bound one); returns the rows added.

        Without a trajectory id there is nothing to link and 0 is returned. An item already linked to the
        trajectory is not linked again. Unknown ids raise MemoryStoreError and nothing is written.
        """
        trajectory_id = trajectory_id or self.trajectory_id
        ids = list(dict.fromkeys(ids))
        self.get_many(ids)  # clear error for an unknown id, before anything is written
        if trajectory_id is None or not ids:
            return 0
        now, run_id = utc_now(), run_id or self.run_id
        with self._tx("usage") as conn:
            added = 0
            for i in ids:
                added += conn.execute(
                    "INSERT OR IGNORE INTO usage (item_id, trajectory_id, run_id, retrieved_at) VALUES (?, ?, ?, ?)",
                    (i, trajectory_id, run_id, now)).rowcount
        return added

    def usage(self, trajectory_id: str | None = None) -> list[dict[str, Any]]:
        """Usage rows (item_id, trajectory_id, run_id, retrieved_at, outcome) in the order they were recorded,
        optionally of one trajectory."""
        sql = "SELECT item_id, trajectory_id, run_id, retrieved_at, outcome FROM usage"
        params: list[Any] = []
        if trajectory_id is not None:
            sql, params = sql + " WHERE trajectory_id = ?", [trajectory_id]
        with self._lock:
            return [dict(r) for r in self._conn.execute(sql + " ORDER BY retrieved_at, rowid", params)]

    def record_outcome(self, trajectory_id: str, success: bool) -> int:
        """Judge a trajectory: each item it retrieved gets ``uses += 1`` and, on success, ``wins += 1``.

        Returns how many items were updated. Only usage rows without an outcome count, so a second call for
        the same trajectory updates nothing and returns 0 (a verdict is not changed once recorded).
        """
        if not isinstance(success, bool):
            raise ItemValidationError("success", f"expected True or False, got {success!r}")
        outcome, now = ("success" if success else "failure"), utc_now()
        with self._tx("outcome") as conn:
            ids = [r[0] for r in conn.execute(
                "SELECT item_id FROM usage WHERE trajectory_id = ? AND outcome IS NULL", (trajectory_id,))]
            conn.execute("UPDATE usage SET outcome = ? WHERE trajectory_id = ? AND outcome IS NULL",
                         (outcome, trajectory_id))
            for i in ids:
                conn.execute("UPDATE items SET uses = uses + 1, wins = wins + ?, updated_at = ? WHERE id = ?",
                             (int(success), now, i))
        return len(ids)

    # -- housekeeping ------------------------------------------------------------------------------------

    def stats(self) -> StoreStats:
        """Active-item counts by polarity, role, domain ("(none)" for no domain) and layer; all items by status;
        artifact, event and usage counts; size."""
        with self._lock:
            c = self._conn

            def count_by(column: str, where: str = "WHERE status = 'active'") -> dict[str, int]:
                rows = c.execute(
                    f"SELECT coalesce({column}, '(none)'), count(*) FROM items {where} GROUP BY 1 ORDER BY 1")
                return {k: n for k, n in rows}

            return StoreStats(
                path=self.path,
                items=c.execute("SELECT count(*) FROM items").fetchone()[0],
                by_polarity=count_by("polarity"),
                by_role=count_by("role"),
                by_domain=count_by("domain"),
                by_layer=count_by("layer"),
                by_status=count_by("status", ""),
                artifacts=c.execute("SELECT count(*) FROM artifacts").fetchone()[0],
                events=c.execute("SELECT count(*) FROM events").fetchone()[0],
                usage_rows=c.execute("SELECT count(*) FROM usage").fetchone()[0],
                db_bytes=c.execute("PRAGMA page_count").fetchone()[0] * c.execute("PRAGMA page_size").fetchone()[0],
            )

    def migrations(self) -> list[dict[str, object]]:
        """The applied schema migrations (version, name, applied_at)."""
        with self._lock:
            return applied_migrations(self._conn)

    def execute(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Run a read query (for analysis and tests); writes go through the methods above."""
        with self._lock:
            return self._conn.execute(sql, list(params)).fetchall()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "MemoryStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MemoryStore({self.path!r})"

    @contextmanager
    def transaction(self) -> Iterator["MemoryStore"]:
        """Group writes: every write made through this store inside the block commits when the block ends, or
        none does (an exception, or a killed process, leaves the database as it was). The block holds the
        database's write lock, and this store's lock against its other threads, so keep slow work (LM calls)
        outside it. Reads inside the block see its writes; a nested block is a savepoint.
        """
        with self._tx("commit"):
            yield self

    @contextmanager
    def _tx(self, what: str) -> Iterator[sqlite3.Connection]:
        """One write (``what`` names it for :func:`~rlmlab._faults.write_point`): its own transaction, or a
        savepoint inside an open ``transaction()``."""
        with self._lock:
            if self._depth:
                savepoint = f"sp{self._depth}"
                self._conn.execute(f"SAVEPOINT {savepoint}")
                self._depth += 1
                try:
                    yield self._conn
                except BaseException:
                    self._conn.execute(f"ROLLBACK TO {savepoint}")
                    self._conn.execute(f"RELEASE {savepoint}")
                    raise
                finally:
                    self._depth -= 1
                self._conn.execute(f"RELEASE {savepoint}")
                write_point(f"memory:{what}")  # not committed yet: a kill here loses the whole transaction
                return
            with self._busy():
                self._conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield self._conn
                with self._busy():
                    self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            finally:
                self._depth = 0
        write_point(f"memory:{what}")

    def _busy(self) -> Any:
        return busy_errors(self.path, self.busy_timeout, StoreBusyError)


def _item(row: sqlite3.Row) -> MemoryItem:
    data = {c: row[c] for c in _ITEM_COLUMNS if c in row.keys()}
    data["tags"] = json.loads(data["tags"])
    if "meta" in data:  # a database opened with fewer migrations has no meta column (shape's rule for its columns)
        data["meta"] = json.loads(data["meta"])
    return MemoryItem(**data)


def _where(filters: dict[str, str | None], prefix: str = "", joiner: str = "WHERE") -> tuple[str, list[str]]:
    """SQL clause and parameters for the item filters (validated by ``check_filters``)."""
    given = check_filters(filters)
    clause = " AND ".join(f"{prefix}{name} = ?" for name in given)
    return (f"{joiner} {clause}" if given else ""), list(given.values())
