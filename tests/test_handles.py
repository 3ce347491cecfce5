import sqlite3

import pytest

from rlmlab.errors import ToolError
from rlmlab.handles import BlobRef, BlobStore, content_key, decode_handles, encode_handles


def test_repr_is_exact_and_never_contains_payload(ws):
    assert repr(BlobRef("graph_001", 1664)) == "BlobRef(key='graph_001', n=1664)"
    payload = "SECRET-PAYLOAD " * 1000
    ref = ws.store.put(payload)
    assert "SECRET" not in repr(ref) and "SECRET" not in str(ref)
    assert repr(ref) == f"BlobRef(key={content_key(payload)!r}, n={len(payload)})"


def test_content_hash_keys_and_names(ws):
    a, b = ws.store.put("same"), ws.store.put("same")
    assert a == b and a.key.startswith("blob_")
    named = ws.store.put("other", name="graph_001")
    assert named.key == "graph_001" and ws.store.get(named) == "other"


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "semi;colon"])
def test_bad_names_rejected(ws, name):
    with pytest.raises(ToolError, match="name"):
        ws.store.put("x", name=name)


def test_sqlite_store_survives_reopen(tmp_path):
    path = tmp_path / "blobs.sqlite"
    store = BlobStore(path)
    ref = store.put("fn main() {}\n", name="main_rs")
    store.close()
    rows = sqlite3.connect(path).execute("SELECT key, sha256 FROM blobs").fetchall()
    assert rows[0][0] == "main_rs" and len(rows[0][1]) == 64
    again = BlobStore(path)
    assert again.get("main_rs") == "fn main() {}\n" and again.ref("main_rs") == ref


def test_unknown_key_names_argument_and_known_keys(ws):
    ws.store.put("a", name="alpha")
    with pytest.raises(ToolError, match=r"ref: unknown blob key 'nope'; known keys: alpha"):
        ws.store.get("nope")


def test_handles_cross_json_both_ways():
    value = {"r": BlobRef("k", 3), "xs": [BlobRef("j", 1), 2]}
    encoded = encode_handles(value)
    assert encoded["r"] == {"__blobref__": True, "key": "k", "n": 3}
    assert decode_handles(encoded) == {"r": BlobRef("k", 3), "xs": [BlobRef("j", 1), 2]}


def test_the_blobref_module_imports_nothing_of_rlmlab_so_pyodide_can_run_a_copy():
    import ast

    from rlmlab import PROJECT_ROOT

    tree = ast.parse((PROJECT_ROOT / "rlmlab" / "handles" / "_blobref.py").read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m.split(".")[0] == "rlmlab"], imported


def test_a_malformed_handle_is_a_tool_error_on_the_host():
    from rlmlab.errors import ToolError

    for n in ("zz", [1], None, True):
        with pytest.raises(ToolError, match="expected an int"):
            decode_handles({"__blobref__": True, "key": "k", "n": n})
    assert decode_handles({"__blobref__": True, "key": "k", "n": 3}) == BlobRef("k", 3)
