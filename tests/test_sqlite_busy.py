"""SQLite writers wait for each other up to a busy timeout, then fail with one line naming the database."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from rlmlab.errors import ConfigError, DatabaseBusyError
from rlmlab.handles import BlobStore
from rlmlab.memory import MemoryStore, MemoryStoreError
from rlmlab.turing import InteractionLog


def _hold_write_lock(path) -> sqlite3.Connection:
    """Another connection (as another process would) in the middle of a write transaction on ``path``."""
    holder = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_a_write_blocked_longer_than_the_busy_timeout_is_a_one_line_error(tmp_path):
    path = tmp_path / "bank.sqlite"
    MemoryStore(path).close()
    holder = _hold_write_lock(path)
    try:
        with MemoryStore(path, busy_timeout=0.2) as store:
            t0 = time.monotonic()
            with pytest.raises(DatabaseBusyError) as err:
                store.log_event("note", {"x": 1})
            assert time.monotonic() - t0 >= 0.15  # it waited before giving up
            assert isinstance(err.value, MemoryStoreError)  # the memory CLI's one-line errors cover it
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    message = str(err.value)
    assert str(path) in message and "another process holds the database's write lock" in message
    assert "0.2 s" in message and "\n" not in message
    with MemoryStore(path) as store:  # nothing was half-written, and the store works once the lock is gone
        assert store.events() == []
        store.log_event("note", {"x": 1})
        assert len(store.events()) == 1


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_write_blocked_shorter_than_the_busy_timeout_waits_and_succeeds(tmp_path):
    path = tmp_path / "bank.sqlite"
    MemoryStore(path).close()
    holder = _hold_write_lock(path)
    holder.execute("INSERT INTO events (kind, payload, created_at) VALUES ('other', '{}', 'now')")
    timer = threading.Timer(0.4, lambda: holder.execute("COMMIT"))
    timer.start()
    try:
        with MemoryStore(path, busy_timeout=10) as store:
            t0 = time.monotonic()
            store.log_event("note", {"x": 1})
            assert time.monotonic() - t0 >= 0.3
            assert [e.kind for e in store.events()] == ["other", "note"]
    finally:
        timer.join()
        holder.close()


def test_the_busy_timeout_defaults_to_30_s_and_can_be_set_by_environment(tmp_path, monkeypatch):
    with MemoryStore(tmp_path / "a.sqlite") as store:
        assert store.execute("PRAGMA busy_timeout")[0][0] == 30_000
    monkeypatch.setenv("RLMLAB_SQLITE_BUSY_TIMEOUT", "2.5")
    with MemoryStore(tmp_path / "a.sqlite") as store:
        assert store.busy_timeout == 2.5 and store.execute("PRAGMA busy_timeout")[0][0] == 2500
    monkeypatch.setenv("RLMLAB_SQLITE_BUSY_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="RLMLAB_SQLITE_BUSY_TIMEOUT: 'soon' is not a number"):
        MemoryStore(tmp_path / "a.sqlite")


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_blob_store_and_the_interaction_log_wait_and_fail_the_same_way(tmp_path):
    blobs, log = BlobStore(tmp_path / "blobs.sqlite", busy_timeout=0.2), InteractionLog(tmp_path / "turing.sqlite",
                                                                                          busy_timeout=0.2)
    for path, write in ((blobs.path, lambda: blobs.put("payload")),
                        (log.path, lambda: log.write({"session": "s", "turn_id": "t", "phase": "p", "scope": "s",
                                                      "detector": "d", "hooks": [], "input_context": {},
                                                      "detection_output": "", "stage1_status": "ok",
                                                      "stage2_status": "ok", "stage3_status": "ok",
                                                      "violations": [], "elapsed_ms": 1.0}))):
        holder = _hold_write_lock(path)
        try:
            with pytest.raises(DatabaseBusyError, match="another process holds the database's write lock") as err:
                write()
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert str(path) in str(err.value)
        write()  # the connection is usable again once the other writer is done
    assert blobs.get(blobs.keys()[0]) == "payload" and len(log.rows()) == 1
