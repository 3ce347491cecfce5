"""A handle names content, not a slot: putting other text under a used name makes a new handle (issue 28, item 1).

Covered where a user or a model makes handles: the blob store (in memory and in a SQLite file, also shared by two
stores), the default workspace of ``from rlmlab import blob``, the REPL worker of an RLM run, and the rlmlab kernel.
"""

import json
import sqlite3
import subprocess
import sys

import pytest

from rlmlab.executors import run_rlm
from rlmlab.handles import BlobRef, BlobStore, decode_handles
from rlmlab.lm import make_lm
from rlmlab.tools import Workspace

TEXT_A = "fn a() {}\n" * 3  # 30 characters
TEXT_B = "fn b() {}\n"  # 10


def _check_two_handles(store: BlobStore) -> None:
    ra = store.put(TEXT_A, name="mod.rs")
    rb = store.put(TEXT_B, name="mod.rs")
    assert ra == BlobRef("mod.rs", 30) and rb.n == 10 and rb.key.startswith("mod.rs@") and len(rb.key) == 19
    assert store.get(ra) == TEXT_A and store.get(rb) == TEXT_B  # the old handle keeps its data
    assert store.get("mod.rs") == TEXT_A  # the key, typed as a string, names the same text as its handle
    assert store.put(TEXT_A, name="mod.rs") == ra and store.put(TEXT_B, name="mod.rs") == rb  # same text: same handle


def test_a_reused_name_gives_a_new_handle_in_memory_and_in_a_file(tmp_path):
    _check_two_handles(BlobStore())
    path = tmp_path / "blobs.sqlite"
    _check_two_handles(BlobStore(path))
    again = BlobStore(path)  # reopened (a restarted REPL): both handles still measure their own text
    assert again.get("mod.rs") == TEXT_A and again.get(again.put(TEXT_B, name="mod.rs")) == TEXT_B
    assert len(again) == 2


def test_two_stores_on_one_file_never_overwrite_each_other(tmp_path):
    path = tmp_path / "blobs.sqlite"
    first, second = BlobStore(path), BlobStore(path)  # two processes sharing one store file
    ra = first.put(TEXT_A, name="mod.rs")
    rb = second.put(TEXT_B, name="mod.rs")  # second never saw mod.rs in memory: the file says it is taken
    assert rb != ra and first.get(ra) == TEXT_A and second.get(ra) == TEXT_A and first.get(rb) == TEXT_B


def test_a_store_file_and_records_written_before_keep_reading(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)  # the layout and the replace-on-put of the store before handles were immutable
    db.execute("CREATE TABLE blobs (key TEXT PRIMARY KEY, payload TEXT NOT NULL, sha256 TEXT NOT NULL,"
               " created REAL DEFAULT (unixepoch('subsec')))")
    db.execute("INSERT OR REPLACE INTO blobs (key, payload, sha256) VALUES ('context', 'old text', 'x')")
    db.commit()
    db.close()
    store = BlobStore(path)
    recorded = decode_handles(json.loads('{"ref": {"__blobref__": true, "key": "context", "n": 8}}'))["ref"]
    assert store.get(recorded) == "old text"
    new = store.put("new text!", name="context")
    assert new.key.startswith("context@") and store.get(recorded) == "old text" and store.get(new) == "new text!"


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_default_workspace_of_from_rlmlab_import_blob():
    code = ("from rlmlab import blob, ctx_stats\n"
            f"ra = blob({TEXT_A!r}, name='mod.rs'); rb = blob({TEXT_B!r}, name='mod.rs')\n"
            "print(ra, rb.n, ctx_stats(ra)['length'], ctx_stats(rb)['length'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.split() == ["BlobRef(key='mod.rs',", "n=30)", "10", "30", "10"]


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_repl_worker_of_an_rlm_run_and_a_workspace_shared_by_two_runs(tmp_path):
    ws = Workspace()
    code = (f"ra = blob({TEXT_A!r}, name='mod.rs')\nrb = blob({TEXT_B!r}, name='mod.rs')\n"
            "print(ctx_stats(ra)['length'], ctx_stats(rb)['length'], ctx_stats(context)['length'])")
    lm = make_lm("scripted", script=[{"reasoning": "1", "code": code},
                                     {"reasoning": "2", "code": "SUBMIT(answer='done')"}])
    first = run_rlm("q", "first context", lm=lm, runs_dir=tmp_path, workspace=ws)
    assert first.iterations[0].output.split() == ["30", "10", "13"], first.iterations[0].output
    # the same workspace, another task: its context gets a handle of its own, the first run's keeps its text
    lm = make_lm("scripted", script=[{"reasoning": "1", "code": "print(context.key, ctx_stats(context)['length'])"},
                                     {"reasoning": "2", "code": "SUBMIT(answer='done')"}])
    second = run_rlm("q", "second, longer context", lm=lm, runs_dir=tmp_path, workspace=ws)
    key, length = second.iterations[0].output.split()
    assert key.startswith("context@") and length == "22" and ws.store.get("context") == "first context"


@pytest.mark.slow
def test_the_rlmlab_kernel_namespace(rlmlab_kernel):
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name=rlmlab_kernel)
    try:
        got = []
        code = (f"ra = blob({TEXT_A!r}, name='mod.rs')\nrb = blob({TEXT_B!r}, name='mod.rs')\n"
                "print(ctx_stats(ra)['length'], ctx_stats(rb)['length'], rb.key.startswith('mod.rs@'))")
        reply = kc.execute_interactive(code, timeout=60, output_hook=got.append)
        assert reply["content"]["status"] == "ok", reply["content"]
        text = "".join(m["content"].get("text", "") for m in got if m["msg_type"] == "stream")
        assert text.split() == ["30", "10", "True"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
