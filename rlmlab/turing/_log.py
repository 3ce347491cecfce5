"""The interaction log: every validation round in an SQLite ``interaction_log`` table."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from rlmlab._sqlite import Migration, apply_migrations, busy_errors, busy_timeout_seconds, connect

__all__ = ["InteractionLog", "load_interaction_log", "INTERACTION_LOG_COLUMNS", "LOG_MIGRATIONS"]

_CREATE_LOG = """CREATE TABLE IF NOT EXISTS interaction_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    session TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    phase TEXT NOT NULL,
    scope TEXT NOT NULL,
    detector TEXT NOT NULL,
    hooks TEXT NOT NULL,             -- JSON list of the hooks considered
    input_context TEXT NOT NULL,     -- JSON of the turn
    detection_output TEXT NOT NULL,  -- raw Stage 1 output
    stage1_status TEXT NOT NULL,     -- ok | violation_detected | skipped | error
    stage2_status TEXT NOT NULL,     -- ok | violation_detected | error
    stage3_status TEXT NOT NULL,     -- ok | violation_detected (a correction was injected)
    violations TEXT NOT NULL,        -- JSON list of {hook, reason}
    correction TEXT,
    elapsed_ms REAL NOT NULL,
    errors TEXT NOT NULL DEFAULT '[]'  -- JSON list of {hook, stage, error}: a detector/validator that raised
)"""
_INDEX_SESSION = "CREATE INDEX IF NOT EXISTS interaction_log_session ON interaction_log(session)"

def _add_errors_column(conn: sqlite3.Connection) -> None:
    """A log written before the errors column: add it, old rows get []."""
    if "errors" not in {r[1] for r in conn.execute("PRAGMA table_info(interaction_log)")}:
        conn.execute("ALTER TABLE interaction_log ADD COLUMN errors TEXT NOT NULL DEFAULT '[]'")


# The log's schema (rlmlab._sqlite's migration runner). Both steps are idempotent, so a log written before the log
# recorded migrations, with or without the errors column, is adopted in place.
LOG_MIGRATIONS = [
    Migration(1, "interaction_log", (_CREATE_LOG, _INDEX_SESSION)),
    Migration(2, "errors_column", (_add_errors_column,)),
]

# The fields of a logged round, in table order: every row ``load_interaction_log`` returns has exactly these keys.
INTERACTION_LOG_COLUMNS = (
    "id", "ts", "session", "turn_id", "phase", "scope", "detector", "hooks", "input_context", "detection_output",
    "stage1_status", "stage2_status", "stage3_status", "violations", "correction", "elapsed_ms", "errors",
)


class InteractionLog:
    """Append-only log of validation rounds (thread-safe; one connection per log).

    A write waits up to ``busy_timeout`` seconds (default 30, see :mod:`rlmlab._sqlite`) for another process's
    write lock (several agents may share one log), then raises DatabaseBusyError naming the file.
    """

    def __init__(self, path: str | Path, *, busy_timeout: float | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.busy_timeout = busy_timeout_seconds(busy_timeout)
        with busy_errors(self.path, self.busy_timeout):
            self._db = connect(self.path, busy_timeout=self.busy_timeout, check_same_thread=False)
            apply_migrations(self._db, LOG_MIGRATIONS, what=f"interaction log {self.path}")
        self._lock = threading.Lock()

    def write(self, row: dict[str, Any]) -> int:
        values = {k: row.get(k) for k in INTERACTION_LOG_COLUMNS if k != "id"}
        values["ts"] = values["ts"] or time.time()
        values["errors"] = values["errors"] or []
        for key in ("hooks", "input_context", "violations", "errors"):
            if not isinstance(values[key], str):
                values[key] = json.dumps(values[key], ensure_ascii=False, default=str)
        with self._lock, busy_errors(self.path, self.busy_timeout):
            try:
                cur = self._db.execute(
                    f"INSERT INTO interaction_log ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                    list(values.values()))
                self._db.commit()
            except BaseException:
                self._db.rollback()
                raise
            return int(cur.lastrowid)

    def rows(self, session: str | None = None, hook: str | None = None, status: str | None = None,
             limit: int | None = None) -> list[dict[str, Any]]:
        return load_interaction_log(self.path, session=session, hook=hook, status=status, limit=limit, db=self._db)

    def close(self) -> None:
        self._db.close()


def load_interaction_log(path: str | Path, *, session: str | None = None, hook: str | None = None,
                         status: str | None = None, limit: int | None = None,
                         db: sqlite3.Connection | None = None) -> list[dict[str, Any]]:
    """Rows as dicts (JSON columns decoded), oldest first. ``hook`` matches a confirmed violation's hook;
    ``status`` matches the final status (stage 3: ok | violation_detected); ``status="error"`` matches rounds
    in which a detector or validator raised."""
    own = db is None
    if own:
        if not Path(path).exists():
            raise FileNotFoundError(f"{path}: no interaction log here (run an agent with the Turing Protocol first)")
        db = connect(path)
    try:
        where, args = [], []
        if session:
            where.append("session = ?")
            args.append(session)
        if status == "error":
            where.append("(stage1_status = 'error' OR stage2_status = 'error')")
        elif status:
            where.append("stage3_status = ?")
            args.append(status)
        present = {r[1] for r in db.execute("PRAGMA table_info(interaction_log)")}
        # an old log opened read-only has no errors column: read it as []
        select = [c if c in present else "'[]'" for c in INTERACTION_LOG_COLUMNS]
        sql = f"SELECT {', '.join(select)} FROM interaction_log"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id"
        rows = []
        for values in db.execute(sql, args):
            row = dict(zip(INTERACTION_LOG_COLUMNS, values))
            for key in ("hooks", "input_context", "violations", "errors"):
                row[key] = json.loads(row[key])
            if hook and not any(v["hook"] == hook for v in row["violations"]):
                continue
            rows.append(row)
        return rows[-limit:] if limit else rows
    finally:
        if own:
            db.close()
