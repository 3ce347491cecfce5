"""Bounds and bad arguments of blob and the ctx_* tools, on a real Rust file."""

import hashlib
import re
import io
from contextlib import redirect_stdout

import pytest

from rlmlab.errors import ToolError


@pytest.fixture
def src(ws, rust_file):
    text = rust_file.read_text()
    return ws, ws.call("blob", text, name="file_rs"), text


def test_stats(src):
    ws, ref, text = src
    stats = ws.call("ctx_stats", ref)
    assert stats == {"key": "file_rs", "length": len(text), "lines": len(text.splitlines()),
                     "sha256": hashlib.sha256(text.encode()).hexdigest()}


def test_peek_bounds(src):
    ws, ref, text = src
    assert ws.call("ctx_peek", ref)["preview"] == text[:200]
    assert ws.call("ctx_peek", ref, 0)["preview"] == ""
    full = ws.call("ctx_peek", ref, ws.caps.peek_max)
    assert full["preview"] == text[: ws.caps.peek_max] and full["truncated"]
    with pytest.raises(ToolError, match=r"n: -1 is out of range; allowed 0 to 2000"):
        ws.call("ctx_peek", ref, -1)
    with pytest.raises(ToolError, match=r"n: 2001 is out of range; allowed 0 to 2000"):
        ws.call("ctx_peek", ref, ws.caps.peek_max + 1)


def test_caps_are_configurable(src):
    ws, ref, text = src
    ws.caps.peek_max = 10
    with pytest.raises(ToolError, match="allowed 0 to 10"):
        ws.call("ctx_peek", ref, 11)


def test_slice_by_chars_and_lines(src):
    ws, ref, text = src
    assert ws.call("ctx_slice", ref, 100, 150)["text"] == text[100:150]
    lines = text.splitlines(keepends=True)
    got = ws.call("ctx_slice", ref, 3, 7, unit="lines")
    assert got["text"] == "".join(lines[2:7]) and (got["start"], got["end"]) == (3, 7)
    assert ws.call("ctx_slice", ref, len(text) - 5, len(text) + 50)["text"] == text[-5:]


@pytest.mark.parametrize("start,end,unit,message", [
    (-1, 10, "chars", "start: -1 is negative"),
    (50, 10, "chars", "start: 50 is after end 10"),
    (0, 4001, "chars", "end: slice of 4001 characters is over the cap of 4000"),
    (0, 5, "lines", "start: line numbers start at 1"),
    (1, 201, "lines", "end: slice of 201 lines is over the cap of 200"),
])
def test_slice_bad_arguments(src, start, end, unit, message):
    ws, ref, _ = src
    with pytest.raises(ToolError, match=message):
        ws.call("ctx_slice", ref, start, end, unit=unit)


def test_find_offsets_lines_snippets_and_total(src):
    ws, ref, text = src
    got = ws.call("ctx_find", ref, r"pub async fn (\w+)", k=3)
    import re
    every = list(re.finditer(r"pub async fn (\w+)", text))
    assert got["total"] == len(every) > 3 and got["truncated"]
    assert [m["offset"] for m in got["matches"]] == [m.start() for m in every[:3]]
    lines = text.splitlines()
    for m in got["matches"]:
        assert text.count("\n", 0, m["offset"]) + 1 == m["line"]
        assert m["text"] == lines[m["line"] - 1][: 2 * ws.caps.snippet_chars]


def test_find_clips_long_lines_around_the_match(ws):
    ref = ws.call("blob", "x" * 500 + "NEEDLE" + "y" * 500 + "\nshort NEEDLE line\n")
    got = ws.call("ctx_find", ref, "NEEDLE")
    first, second = got["matches"]
    assert "NEEDLE" in first["text"] and len(first["text"]) == 2 * ws.caps.snippet_chars
    assert second == {"offset": 1013, "line": 2, "text": "short NEEDLE line"}


@pytest.mark.parametrize("kwargs,message", [
    ({"pattern": "fn (", "k": 5}, r"pattern: invalid regular expression 'fn \(': missing \)"),
    ({"pattern": "fn", "k": 0}, "k: 0 is out of range; allowed 1 to 100"),
    ({"pattern": "fn", "k": 101}, "k: 101 is out of range; allowed 1 to 100"),
    ({"pattern": "", "k": 5}, "pattern: empty"),
])
def test_find_bad_arguments(src, kwargs, message):
    ws, ref, _ = src
    with pytest.raises(ToolError, match=message):
        ws.call("ctx_find", ref, **kwargs)


def test_unknown_key_and_wrong_argument_shapes(ws):
    with pytest.raises(ToolError, match="ref: unknown blob key 'missing'"):
        ws.call("ctx_stats", "missing")
    with pytest.raises(ToolError, match="ctx_peek: .*signature is ctx_peek\\(ref, n=200\\)"):
        ws.call("ctx_peek")
    with pytest.raises(ToolError, match="unknown tool 'ctx_nope'"):
        ws.call("ctx_nope")
    with pytest.raises(ToolError, match="n: expected an integer"):
        ws.call("ctx_peek", ws.call("blob", "abc"), "5")


def test_tools_print_nothing_and_return_json(src):
    import json

    ws, ref, _ = src
    buf = io.StringIO()
    with redirect_stdout(buf):
        results = [ws.call("ctx_stats", ref), ws.call("ctx_peek", ref, 50), ws.call("ctx_slice", ref, 0, 80),
                   ws.call("ctx_find", ref, "async", k=2)]
    assert buf.getvalue() == ""
    for r in results:
        assert json.loads(json.dumps(r)) == r


def test_non_ascii_text_stays_within_the_caps():
    """Caps count characters as the model reads them, not JSON's \\uXXXX escapes (a 6x blow-up)."""
    from rlmlab.tools import Workspace

    ws = Workspace()
    ref = ws.call("blob", payload="日本語のテキスト。" * 1000)
    out = ws.call("ctx_peek", ref=ref, n=2000)
    assert len(out["preview"]) == 2000 and out["truncated"]


def test_a_wrong_argument_type_is_a_tool_error_naming_the_argument(ws):
    # issue 17: these raised TypeError (or a raw re.error / tree-sitter error) from inside the tools
    from rlmlab.errors import ToolError

    ref = ws.call("blob", "fn main() {}\n")
    for name, kwargs, words in [("ctx_slice", {"start": "a", "end": 3}, "ctx_slice: start: expected an integer, got 'a'"),
                                ("ctx_find", {"pattern": 5}, "ctx_find: pattern: expected a string, got 5"),
                                ("ast_query", {"query": None}, "ast_query: query: expected a string, got None"),
                                ("ctx_peek", {"n": True}, "ctx_peek: n: expected an integer, got True")]:
        with pytest.raises(ToolError, match=re.escape(words)):
            ws.call(name, ref, **kwargs)
    with pytest.raises(ToolError, match="allowed 0 to 2000"):  # bounds stay the tool's own message
        ws.call("ctx_peek", ref, n=5000)
    assert ws.call("ctx_find", ref, "fn", k=5)["total"] == 1


BYTES_RS = "/usr/share/cargo/registry/bytes-1.2.1/src/bytes.rs"


def test_blob_of_a_file_path_says_how_to_store_the_file_and_step_code_paths_are_stored_as_given(tmp_path):
    # blob("/path/lib.rs") stored the 50-character path while ast_query reads the file at that path
    from rlmlab.namespace import build_namespace
    from rlmlab.tools import ToolCaps, Workspace

    ns = build_namespace()  # a person's namespace (the REPL's, the kernel's)
    with pytest.raises(ToolError) as caught:
        ns["blob"](BYTES_RS)
    said = str(caught.value)
    assert "\n" not in said and said.startswith(f"payload: {BYTES_RS!r} is the path of a file")
    call = said.split("store the file's text with ")[1]
    assert call == f"blob(open({BYTES_RS!r}).read(), name='bytes.rs')"
    ref = eval(call, {**ns, "open": open})  # the call it names stores the file's text
    text = open(BYTES_RS).read()
    assert ref.key == "bytes.rs" and ref.n == len(text) > 30_000
    assert ns["ctx_find"](ref, r"pub struct Bytes", k=1)["total"] == 1
    assert ns["ast_query"](BYTES_RS, "(struct_item name: (type_identifier) @n)")["total"] >= 1  # as ast_query does
    assert ns["blob"](f"see {BYTES_RS}").n == len(BYTES_RS) + 4  # text that is not only a path is stored
    # step code's workspace (declared roots): the payload is stored as given, no host file is looked at for it
    step = Workspace(caps=ToolCaps(), path_roots=(str(tmp_path),))
    assert step.call("blob", BYTES_RS).n == len(BYTES_RS)
    assert step.store.get(step.call("blob", BYTES_RS)) == BYTES_RS
