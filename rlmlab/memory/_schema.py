"""SQLite schema of the memory store: append-only migrations, recorded in ``schema_migrations``.

Never edit a migration that has shipped: add a new one at the end. Opening a database applies the
missing migrations only, each in its own transaction together with its ``schema_migrations`` row,
so a crash leaves the database at a whole version.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Sequence

from rlmlab._sqlite import Migration, applied_migrations, utc_now
from rlmlab._sqlite import apply_migrations as _apply
from rlmlab._sqlite import connect as open_sqlite
from rlmlab.memory._errors import MemoryStoreError

__all__ = ["Migration", "MIGRATIONS", "SHAPE_TOKENIZE", "connect", "apply_migrations", "applied_migrations", "utc_now"]


# The shape index's tokenizer: unicode61, with slot braces and arithmetic operators kept as token characters.
SHAPE_TOKENIZE = "unicode61 remove_diacritics 2 tokenchars '{}+*/%=<>'"


def _external_fts(table: str, tokenize: str,
                  columns: Sequence[str] = ("title", "description", "content", "tags")) -> tuple[str, ...]:
    """An external-content FTS5 index of the items' text ``columns``, the triggers that keep it in step with
    ``items`` (a delete passes the old values, or the index keeps stale terms), and its first build."""
    cols = ", ".join(columns)
    old, new = ", ".join(f"old.{c}" for c in columns), ", ".join(f"new.{c}" for c in columns)
    quoted = '"' + tokenize + '"' if "'" in tokenize else f"'{tokenize}'"
    return (
        f"CREATE VIRTUAL TABLE {table} USING fts5({cols}, content = 'items', content_rowid = 'n', "
        f"tokenize = {quoted})",
        f"CREATE TRIGGER {table}_insert AFTER INSERT ON items BEGIN "
        f"INSERT INTO {table} (rowid, {cols}) VALUES (new.n, {new}); END",
        f"CREATE TRIGGER {table}_delete AFTER DELETE ON items BEGIN "
        f"INSERT INTO {table} ({table}, rowid, {cols}) VALUES ('delete', old.n, {old}); END",
        f"CREATE TRIGGER {table}_update AFTER UPDATE OF {cols} ON items BEGIN "
        f"INSERT INTO {table} ({table}, rowid, {cols}) VALUES ('delete', old.n, {old}); "
        f"INSERT INTO {table} (rowid, {cols}) VALUES (new.n, {new}); END",
        f"INSERT INTO {table} ({table}) VALUES ('rebuild')",
    )


MIGRATIONS: list[Migration] = [
    Migration(1, "items", (
        # ``n`` is an explicit rowid so the FTS rows keyed on it survive VACUUM (an implicit rowid may be renumbered).
        """CREATE TABLE items (
            n INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            description TEXT NOT NULL,
            content TEXT NOT NULL,
            polarity TEXT NOT NULL CHECK (polarity IN ('success', 'failure')),
            role TEXT NOT NULL,
            scope TEXT NOT NULL,
            layer TEXT NOT NULL CHECK (layer IN ('L1', 'L2', 'L3')),
            tags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
            uses INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0),
            wins INTEGER NOT NULL DEFAULT 0 CHECK (wins >= 0 AND wins <= uses),
            domain TEXT,
            source TEXT NOT NULL,
            run_id TEXT,
            trajectory_id TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        "CREATE INDEX items_polarity_role ON items (polarity, role)",
        "CREATE INDEX items_domain ON items (domain)",
    )),
    Migration(2, "items_fts", (
        # Tags are indexed as their JSON text: the unicode61 tokenizer treats brackets, quotes and commas as
        # separators, so '["ctx", "slicing"]' indexes the words ctx and slicing.
        """CREATE VIRTUAL TABLE items_fts USING fts5(
            title, description, content, tags, tokenize = 'unicode61 remove_diacritics 2'
        )""",
        """CREATE TRIGGER items_fts_insert AFTER INSERT ON items BEGIN
            INSERT INTO items_fts (rowid, title, description, content, tags)
            VALUES (new.n, new.title, new.description, new.content, new.tags);
        END""",
        """CREATE TRIGGER items_fts_delete AFTER DELETE ON items BEGIN
            DELETE FROM items_fts WHERE rowid = old.n;
        END""",
        """CREATE TRIGGER items_fts_update AFTER UPDATE OF title, description, content, tags ON items BEGIN
            UPDATE items_fts SET title = new.title, description = new.description, content = new.content,
                tags = new.tags WHERE rowid = old.n;
        END""",
    )),
    Migration(3, "events", (
        # L4 event log: append-only, enforced by triggers so no code path can rewrite history.
        """CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL CHECK (json_valid(payload)),
            domain TEXT,
            run_id TEXT,
            trajectory_id TEXT,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX events_run ON events (run_id, trajectory_id)",
        """CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN
            SELECT RAISE(ABORT, 'events are append-only');
        END""",
        """CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN
            SELECT RAISE(ABORT, 'events are append-only');
        END""",
    )),
    Migration(4, "usage", (
        # One row per (item, trajectory): retrieving an item twice in one trajectory counts once.
        """CREATE TABLE usage (
            item_id TEXT NOT NULL REFERENCES items (id) ON DELETE CASCADE,
            trajectory_id TEXT NOT NULL,
            run_id TEXT,
            retrieved_at TEXT NOT NULL,
            outcome TEXT CHECK (outcome IN ('success', 'failure')),
            PRIMARY KEY (item_id, trajectory_id)
        )""",
        "CREATE INDEX usage_trajectory ON usage (trajectory_id)",
    )),
    Migration(5, "item_status", (
        # Consolidation and forgetting change an item's status instead of deleting it (see STATUSES).
        "ALTER TABLE items ADD COLUMN status TEXT NOT NULL DEFAULT 'active'"
        " CHECK (status IN ('active', 'superseded', 'discarded', 'forgotten'))",
        "ALTER TABLE items ADD COLUMN superseded_by TEXT",
        "CREATE INDEX items_status ON items (status, polarity)",
    )),
    Migration(6, "artifacts", (
        # L3: full artifacts, stored once per content id; only packed summaries are injected.
        """CREATE TABLE artifacts (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            content TEXT NOT NULL,
            summary TEXT,
            domain TEXT,
            source TEXT NOT NULL,
            run_id TEXT,
            trajectory_id TEXT,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX artifacts_domain ON artifacts (domain, kind)",
    )),
    Migration(7, "item_template", (
        # Optional code template with {{name:type}} slots (rlmlab.memory._templates); NULL for most items.
        # Not in items_fts: retrieval ranks on what the item says, the template is what the model copies.
        "ALTER TABLE items ADD COLUMN template TEXT CHECK (template IS NULL OR length(template) <= 2000)",
    )),
    Migration(8, "items_fts_external_porter", (
        # The index of migration 2 kept its own copy of every item's text; this one reads the text from items
        # (external content, keyed on the explicit rowid ``n``), so the text is stored once. The porter stemmer
        # over unicode61 lets "handle" find "handles". The index is rebuilt from items in the same transaction,
        # so no item leaves the search. External content is not kept in step by SQLite: the triggers must pass
        # the old values to the 'delete' command, or the index keeps stale terms.
        "DROP TRIGGER items_fts_insert",
        "DROP TRIGGER items_fts_delete",
        "DROP TRIGGER items_fts_update",
        "DROP TABLE items_fts",
        *_external_fts("items_fts", "porter unicode61 remove_diacritics 2"),
    )),
    Migration(9, "items_fts_exact", (
        # A second external-content index without stemming, searched before the porter one: a stem shares one
        # idf between forms, so a rare word ("arguments") loses to a common form of it ("argument") and recall
        # falls (see memory/_search.py). Its own triggers keep it in step with items, as migration 8's do.
        *_external_fts("items_fts_exact", "unicode61 remove_diacritics 2"),
    )),
    Migration(10, "item_shape", (
        # The query shapes an item was learned from (MemoryItem.shape; NULL for most items) and their own index:
        # slot markers and arithmetic operators are tokens ("{number}", "+"), so "What is 2 + 2?" finds a shape
        # with no content word in it. Ranked by shape similarity in memory/_shape.py, words fill in.
        "ALTER TABLE items ADD COLUMN shape TEXT CHECK (shape IS NULL OR length(shape) <= 4000)",
        *_external_fts("items_fts_shape", SHAPE_TOKENIZE, ("shape",)),
    )),
    Migration(11, "item_meta", (
        # Structured facts about an item as a JSON object (a learnt template's replay admission, its slots' order);
        # not searched: retrieval ranks on what the item says.
        "ALTER TABLE items ADD COLUMN meta TEXT NOT NULL DEFAULT '{}'",
    )),
]


def connect(path: str | Path, migrations: Sequence[Migration] = MIGRATIONS, *,
            busy_timeout: float | None = None) -> sqlite3.Connection:
    """Open (creating if needed) a memory database: WAL, foreign keys on, missing migrations applied.

    The connection is in autocommit mode (``isolation_level=None``); callers open transactions explicitly.
    A write waits up to ``busy_timeout`` seconds for another connection's lock (see :mod:`rlmlab._sqlite`).
    """
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = open_sqlite(path, busy_timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")  # an in-memory database stays in 'memory' mode; that is fine
    # In WAL mode NORMAL is still crash-safe (no corruption); only the last commits may roll back after a
    # power loss, which is acceptable for a memory bank and saves an fsync per transaction.
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    apply_migrations(conn, migrations)
    return conn


def apply_migrations(conn: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> list[int]:
    """Apply the memory migrations not yet recorded (rlmlab._sqlite's runner); MemoryStoreError for a file made by
    a different or newer rlmlab."""
    return _apply(conn, migrations, what="memory database", error=MemoryStoreError)
