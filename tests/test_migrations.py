"""One migration runner (rlmlab._sqlite) for every store: databases written by the code before it migrate in place."""

from __future__ import annotations

import sqlite3

import pytest

from rlmlab._sqlite import Migration, applied_migrations, apply_migrations
from rlmlab.errors import ConfigError
from rlmlab.handles import BlobStore
from rlmlab.turing import InteractionLog, load_interaction_log

# The DDL the blob store and the interaction log ran before they recorded migrations (kept here verbatim).
OLD_BLOBS = ("CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY, payload TEXT NOT NULL,"
             " sha256 TEXT NOT NULL, created REAL DEFAULT (unixepoch('subsec')))")
OLD_LOG_NO_ERRORS = """CREATE TABLE interaction_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, session TEXT NOT NULL, turn_id TEXT NOT NULL,
    phase TEXT NOT NULL, scope TEXT NOT NULL, detector TEXT NOT NULL, hooks TEXT NOT NULL,
    input_context TEXT NOT NULL, detection_output TEXT NOT NULL, stage1_status TEXT NOT NULL,
    stage2_status TEXT NOT NULL, stage3_status TEXT NOT NULL, violations TEXT NOT NULL, correction TEXT,
    elapsed_ms REAL NOT NULL)"""


def test_a_blob_store_written_before_migrations_is_adopted_with_its_blobs(tmp_path):
    path = tmp_path / "blobs.sqlite"
    db = sqlite3.connect(path)
    db.execute(OLD_BLOBS)
    db.execute("INSERT INTO blobs (key, payload, sha256) VALUES ('notes', 'kept text', 'x')")
    db.commit()
    db.close()
    store = BlobStore(path)
    assert store.get("notes") == "kept text"
    assert [(m["version"], m["name"]) for m in applied_migrations(store._db)] == [(1, "blobs")]
    store.put("more", "second")
    assert BlobStore(path).get("second") == "more"  # reopening applies nothing and keeps both


def test_an_interaction_log_without_the_errors_column_migrates_in_place(tmp_path):
    path = tmp_path / "log.sqlite"
    db = sqlite3.connect(path)
    db.execute(OLD_LOG_NO_ERRORS)
    db.execute("INSERT INTO interaction_log (ts, session, turn_id, phase, scope, detector, hooks, input_context, "
               "detection_output, stage1_status, stage2_status, stage3_status, violations, correction, elapsed_ms) "
               "VALUES (1.0, 's', '1', 'post_inference', 'main', 'programmatic', '[]', '{}', '', 'ok', 'ok', 'ok', "
               "'[]', NULL, 2.0)")
    db.commit()
    db.close()
    log = InteractionLog(path)
    assert [m["name"] for m in applied_migrations(log._db)] == ["interaction_log", "errors_column"]
    rows = load_interaction_log(path)
    assert len(rows) == 1 and rows[0]["session"] == "s" and rows[0]["errors"] == []
    log.close()


def test_a_failed_migration_leaves_the_file_at_the_last_whole_version(tmp_path):
    conn = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    good = Migration(1, "t", ("CREATE TABLE t (a INTEGER)",))
    bad = Migration(2, "u", ("CREATE TABLE u (a INTEGER)", "THIS IS NOT SQL"))
    with pytest.raises(sqlite3.OperationalError):
        apply_migrations(conn, [good, bad])
    assert [m["version"] for m in applied_migrations(conn)] == [1]
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'u'").fetchone() is None
    with pytest.raises(ConfigError, match="numbered 1, 2, 3"):
        apply_migrations(conn, [bad])
