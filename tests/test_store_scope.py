"""A workspace reads the blobs it made or was given, not every key of its store; what its tools add is bounded.

Found by the second red-team round (tests/redteam_tools_corpus.py): a step listed the store's keys from an unknown
key's error and read another run's context in a shared ``--store``; a forged ``BlobRef`` worked for any key; blob,
event_log and agenda grew the host's state without a quota; ``ctx_slice(unit='lines')`` split the whole blob.
"""

from __future__ import annotations

import tracemalloc

import pytest

from rlmlab.errors import ToolError
from rlmlab.handles import BlobRef, BlobStore, StoreScope
from rlmlab.lm import make_lm
from rlmlab.memory import MemoryStore
from rlmlab.tools import ToolCaps, Workspace, attach_memory


def test_a_workspace_reads_what_it_put_or_was_granted_and_lists_only_those(tmp_path):
    shared = BlobStore(tmp_path / "blobs.sqlite")
    shared.put("another run's context: SECRET", name="other_ctx")
    ws = Workspace(store=shared)  # a bare store is wrapped: this workspace holds nothing of it yet
    assert isinstance(ws.store, StoreScope) and ws.store.keys() == []
    mine = ws.call("blob", "mine")
    for ref in ("other_ctx", BlobRef("other_ctx", 30)):
        with pytest.raises(ToolError) as err:
            ws.call("ctx_peek", ref)
        assert "unknown blob key 'other_ctx'" in str(err.value) and str(err.value).endswith(f"known keys: {mine.key}")
    assert "other_ctx" not in ws.store and len(ws.store) == 1
    ws.store.grant("other_ctx")  # the host hands it over
    assert ws.call("ctx_peek", "other_ctx", n=5)["preview"] == "anoth"
    assert shared.get(mine) == "mine"  # puts go to the store itself


def test_a_child_scope_holds_its_own_and_its_parent_sees_them():
    parent = StoreScope(open=True)
    parent.base.put("notebook blob", name="nb")
    child = parent.child()
    assert "nb" in parent and "nb" not in child and not child.open
    ref = child.put("made by the run")
    assert parent.get(ref) == "made by the run" and child.get(ref) == "made by the run"
    closed = StoreScope(parent.base)
    with pytest.raises(ToolError, match="unknown blob key"):
        closed.get(ref)


def test_the_namespace_is_yours_and_sees_the_store_of_an_earlier_session(tmp_path):
    from rlmlab.namespace import build_namespace

    path = tmp_path / "blobs.sqlite"
    ns = build_namespace(store_path=str(path))
    ref = ns["blob"]("fn main() {}\n", name="main_rs")
    ns["workspace"].store.close()
    again = build_namespace(store_path=str(path))  # a restart: handles printed before still resolve
    assert again["ctx_peek"](ref)["preview"] == "fn main() {}\n" and again["ctx_peek"]("main_rs")["length"] == 13


def test_a_model_run_from_a_namespace_reads_its_context_not_the_notebooks_other_blobs(tmp_path):
    from rlmlab.executors import run_rlm
    from rlmlab.namespace import build_namespace

    ns = build_namespace()
    ns["blob"]("the notebook's API notes: SECRET-NB", name="notes")
    code = ("for k in ['notes', 'context']:\n"
            "    try:\n        print(k, ctx_peek(k, n=60)['preview'])\n"
            "    except Exception as e:\n        print(k, 'ERR', e)\n"
            "r = blob('found it')\nprint('made', r.key)")
    lm = make_lm("scripted", script=[{"reasoning": "look", "code": code}, {"reasoning": "done", "answer": "ok"}])
    traj = run_rlm("q", "the run's context", lm=lm, workspace=ns["workspace"], runs_dir=tmp_path, max_iters=1)
    out = traj.iterations[0].output
    assert "notes ERR" in out and "SECRET-NB" not in out and "unknown blob key 'notes'" in out, out
    assert "context the run's context" in out, out
    made = out.split("made ")[1].split()[0]
    assert ns["ctx_peek"](made)["preview"] == "found it"  # what the run made, its owner reads


def test_blob_payload_cap_and_run_quota():
    ws = Workspace(caps=ToolCaps(blob_max_chars=10, blob_quota_chars=25))
    with pytest.raises(ToolError, match="payload: 11 characters, over the cap of 10"):
        ws.call("blob", "x" * 11)
    ws.call("blob", "a" * 10)
    ws.call("blob", "b" * 10)
    assert ws.call("blob", "a" * 10).n == 10  # the same payload again stores nothing new
    with pytest.raises(ToolError, match="blob_quota_chars: this run has used 20 of its 25 characters"):
        ws.call("blob", "c" * 10)
    assert ws.usage["blob_quota_chars"] == 20
    ws.store.put("host context " * 10, name="context")  # the host's puts are not the step's quota
    assert ws.usage["blob_quota_chars"] == 20


def test_event_log_agenda_and_mem_add_stop_at_their_caps(tmp_path):
    ws = Workspace(caps=ToolCaps(event_log_quota_chars=100, agenda_max=3, mem_add_max=2))
    attach_memory(ws, MemoryStore(tmp_path / "memory.sqlite"))
    ws.call("event_log", {"x": "y" * 80})
    with pytest.raises(ToolError, match="event_log_quota_chars"):
        ws.call("event_log", {"x": "y" * 80})
    for i in range(3):
        ws.call("agenda", "add", f"item {i}")
    with pytest.raises(ToolError, match="agenda: 3 items, the cap"):
        ws.call("agenda", "add", "one more")
    for i in range(2):
        ws.call("mem_add", f"t{i}", "when", "how", "success")
    with pytest.raises(ToolError, match="mem_add_max: this run has used 2 of its 2 calls"):
        ws.call("mem_add", "t3", "when", "how", "success")


@pytest.mark.slow
def test_ctx_slice_by_lines_splits_a_window_not_the_whole_blob():
    ws = Workspace()
    ref = ws.store.put("\n" * 2_000_000 + "last line\r\nafter\n", name="big")  # the host's context: no blob cap
    tracemalloc.start()
    try:
        out = ws.call("ctx_slice", ref, 2_000_001, 2_000_002, unit="lines")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out["text"] == "last line\r\nafter\n" and out["end"] == 2_000_002
    assert peak < 1 << 20, peak  # splitting every line took 16 MB here (2M list entries), 12x the blob at 24 MB


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\r\nb\rc\x0bd\x0ce\x1cf\x85g\u2028h\u2029i\n\nj",
                                  "\r\r\n\n\r", "x" * 50 + "\n" + "y\n" * 30])
def test_ctx_slice_lines_are_splitlines_lines(text):
    ws = Workspace()
    ref = ws.store.put(text)
    total = len(text.splitlines())
    for start in range(1, total + 3):
        for end in range(start, start + 4):
            out = ws.call("ctx_slice", ref, start, end, unit="lines")
            expected = text.splitlines(keepends=True)[start - 1:end]
            assert out["text"] == "".join(expected) and out["end"] == start + len(expected) - 1, (start, end)


def test_an_interpreter_made_on_a_persons_open_namespace_runs_its_code_in_a_closed_child(tmp_path):
    """RLMLabInterpreter(ns["workspace"]) directly, not through run_rlm: the step code still reads only its own keys,
    and what it stores is the namespace owner's to read."""
    from rlmlab.executors import RLMLabInterpreter
    from rlmlab.namespace import build_namespace

    ns = build_namespace(store_path=str(tmp_path / "blobs.sqlite"))
    secret = ns["blob"]("the owner's notes: SECRET", name="owner_notes")
    ws = ns["workspace"]
    tools = {spec.name: ws.bound(spec.name) for spec in ws.registry}
    repl = RLMLabInterpreter(ws, tools=tools, step_timeout=20)
    try:
        out = repl.execute("try:\n    print(ctx_peek('owner_notes'))\nexcept Exception as e:\n    print(e)")
        assert "unknown blob key 'owner_notes'" in out and "SECRET" not in out, out
        made = repl.execute("r = blob('made by the step')\nprint(r.key)").strip()
        assert ws.call("ctx_peek", made, n=16)["preview"] == "made by the step"  # granted back to the owner
        assert ws.call("ctx_peek", secret, n=5)["preview"] == "the o" and ws.store.open
    finally:
        repl.shutdown()
