"""Tool results as people read them (a match table, numbered code lines; real line breaks in the terminal), the
``tools`` listing without parentheses, a short MemoryTask repr, and the memory browser after a search with no hits."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from rlmlab.tools import ToolResult
from rlmlab.namespace import build_namespace


def test_namespace_tools_return_the_same_dicts_shown_as_tables_and_numbered_code(rust_file):
    ns = build_namespace()
    text = rust_file.read_text()
    src = ns["blob"](text, name="file.rs")
    found = ns["ctx_find"](src, r"pub async fn", k=3)
    plain = ns["workspace"].call("ctx_find", src, r"pub async fn", k=3)
    assert isinstance(found, ToolResult) and found == plain and json.loads(json.dumps(found)) == plain
    page = found._repr_html_()
    assert "rlmlab-matches" in page and f"{found['total']:,} matches (first 3 shown)" in page
    first = found["matches"][0]
    assert f">{first['line']}</td>" in page and "<mark>pub async fn</mark>" in page
    sliced = ns["ctx_slice"](src, 156, 158, unit="lines")
    lines = re.findall(r"<td[^>]*>(\d+)</td><td[^>]*>(.*?)</td>", sliced._repr_html_())
    assert [int(n) for n, _ in lines] == [156, 157, 158] and "pub async fn open" in lines[0][1]
    # a character slice is numbered from the line it starts on
    offset = text.index("pub async fn open")
    chars = ns["ctx_slice"](src, offset, offset + 40)
    assert chars.first_line == first["line"] and f">{first['line']}</td>" in chars._repr_html_()
    ast = ns["ast_query"](src, "(struct_item name: (type_identifier) @name)")
    rows = re.findall(r"<td[^>]*>(\d+)</td><td[^>]*>(.*?)</td><td[^>]*>(.*?)</td>", ast._repr_html_())
    assert [(int(n), code, cap) for n, code, cap in rows] == [
        (93, "pub struct File {", "name = File"), (98, "struct Inner {", "name = Inner")]
    assert ns["blob"]("x").__class__.__name__ == "BlobRef"  # not a dict: returned as is


def test_plain_imports_return_displayable_results():
    from rlmlab import blob, ctx_peek

    peek = ctx_peek(blob("line one\nline two\n"), 12)
    assert isinstance(peek, ToolResult) and peek["preview"] == "line one\nlin"
    assert "<pre" in peek._repr_html_() and "line one\nlin" in peek._repr_html_()


def test_tools_lists_without_parentheses_and_follows_new_tools():
    ns = build_namespace()
    listing = ns["tools"]
    assert "lambda" not in repr(listing) and "ctx_peek(ref, n=200)" in repr(listing)
    assert ns["tools"]() is listing and "<table>" in listing._repr_html_()


@pytest.mark.slow
def test_terminal_repl_shows_text_with_real_line_breaks(tmp_path):
    code = "r = blob('fn a() {}\\nfn b() {}\\n', name='m.rs')\nctx_peek(r, 20)\nctx_find(r, 'fn b')\ntools\n"
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "repl"], input=code, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "\\n" not in out  # no escaped line breaks anywhere
    assert re.search(r"preview\s+fn a\(\) \{\}\s*\n\s+fn b\(\) \{\}", out)  # two lines, not 'fn a() {}\nfn b'
    assert "ctx_find in m.rs: 1 match\n  fn b\n" in out and "<function" not in out and "lambda" not in out
    assert "ctx_find(ref, pattern, k=20, ignore_case=False)" in out  # `tools` without parentheses


BYTES_RS = "/usr/share/cargo/registry/bytes-1.2.1/src/bytes.rs"


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_ast_query_shows_the_query_as_given_and_an_unbalanced_query_points_at_its_open_paren(tmp_path):
    # the header collapsed the query's spaces and line breaks into one quoted line and rich re-wrapped it to the
    # table's width; an unbalanced query's caret sat after its last character, not under the ( never closed
    multi = '(function_item\n   name:   (identifier) @name\n   (#eq? @name "new"))'
    unbalanced = "(function_item name: (identifier) @name"
    code = f"ast_query({BYTES_RS!r}, {multi!r}, k=2)\nast_query({BYTES_RS!r}, {unbalanced!r})\n"
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "repl"], input=code, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr  # (the REPL writes an error to stderr)
    assert f"ast_query in {BYTES_RS}: 2 matches" in " ".join(out.split())  # (the header line may wrap)
    assert "\n".join(f"  {line}" for line in multi.splitlines()) + "\n" in out  # each line as typed
    assert "pub const fn new() -> Bytes {" in out
    lines = out.splitlines()
    at = lines.index(f"  {unbalanced}")
    assert "this ( is never closed" in lines[at - 1] and lines[at + 1] == "  ^ (line 1, column 1)"
    ns = build_namespace()  # the notebook's form: the query in a <pre>, as given
    page = ns["ast_query"](BYTES_RS, multi, k=2)._repr_html_()
    assert f">{multi.replace(chr(34), '&quot;')}</pre>" in page and "2 matches" in page


def test_memory_task_repr_does_not_print_the_context(rust_file):
    from rlmlab.memory import MemoryTask

    text = rust_file.read_text()
    task = MemoryTask("async", "How many pub async fn?", text, "crate:tokio", 9, "numeric",
                      {"source_path": str(rust_file)})
    shown = repr(task)
    assert len(shown) < 300 and f"<{len(text):,} chars" in shown and "How many pub async fn?" in shown


@pytest.mark.slow
def test_memory_browser_drops_the_selection_after_a_search_with_no_hits(tmp_path):
    from rlmlab import PROJECT_ROOT
    from rlmlab.jupyter import MemoryBrowser
    from rlmlab.memory import MemoryStore, import_pack

    store = MemoryStore(tmp_path / "bank.sqlite")
    import_pack(store, PROJECT_ROOT / "data/packs/rlm_procedures.jsonl")
    browser = MemoryBrowser(store)
    hit = browser.search("counting")[0]
    browser.select(hit.id)
    assert hit.title in browser.record.value
    assert browser.search("zzqxv") == [] and browser.selected is None
    assert hit.title not in browser.record.value and "select an item" in browser.record.value
    browser.select(hit.id)
    browser.search("tool error")  # other hits: the item being read stays open
    assert browser.selected is not None and browser.selected.id == hit.id
    browser.set_layer("L3")  # a filter that lists nothing drops it too
    assert browser.results == [] and browser.selected is None
