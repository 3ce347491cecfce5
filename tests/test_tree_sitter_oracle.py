"""TreeSitterOracle on real tokio sources: extractors, error patterns, queries, structural verdicts, ast_query."""

import re

import pytest
from click.testing import CliRunner

from rlmlab.cli import main
from rlmlab.errors import ToolError
from rlmlab.oracle import AstQueryError, CannotVerify, ParseCache, TreeSitterOracle, Verification as V
from rlmlab.oracle import verify_structural


def verify_detailed(oracle, answer, query):
    """The structural result for one parsed file; None when it cannot verify (not structural, or X not found)."""
    try:
        return verify_structural([oracle], answer, query)
    except CannotVerify:
        return None


def verify(oracle, answer, query):
    result = verify_detailed(oracle, answer, query)
    return None if result is None else result.verdict


def code_lines(text):
    """Lines that are not // comments: the independent (grep-style) count the tree must agree with."""
    return [ln for ln in text.splitlines() if not ln.lstrip().startswith("//")]


@pytest.fixture(scope="module")
def file_rs(rust_file):
    return rust_file.read_text()


@pytest.fixture(scope="module")
def oracle(file_rs, rust_file):
    return TreeSitterOracle(file_rs, str(rust_file))


def test_functions_carry_signature_parts_and_enclosing_impl(oracle, file_rs):
    fns = {f.name: f for f in oracle.get_functions()}
    set_len = fns["set_len"]
    assert file_rs.splitlines()[set_len.line - 1].strip().startswith("pub async fn set_len(")
    assert (set_len.params, set_len.return_type, set_len.is_async, set_len.visibility) == (
        "&self, size: u64", "io::Result<()>", True, "pub")
    assert [p.name for p in set_len.parameters] == ["&self", "size"]
    assert set_len.enclosing == "impl File" and set_len.signature == "pub async fn set_len(&self, size: u64) -> io::Result<()>"
    assert fns["poll_read"].enclosing == "impl AsyncRead for File" and fns["poll_read"].visibility is None
    # every `fn name` on a code line is found, at that line
    grep = {(i, m.group(1)) for i, ln in enumerate(file_rs.splitlines(), 1) if not ln.lstrip().startswith("//")
            for m in [re.search(r"\bfn\s+(\w+)", ln)] if m}
    assert {(f.line, f.name) for f in oracle.get_functions()} == grep


def test_unsafe_const_and_trait_methods(tokio_src):
    text = (tokio_src / "io" / "async_read.rs").read_text()
    o = TreeSitterOracle(text)
    [trait] = o.get_traits()
    assert (trait.name, trait.visibility, trait.methods) == ("AsyncRead", "pub", ("poll_read",))
    decl = [f for f in o.get_functions() if f.enclosing == "trait AsyncRead"]
    assert [(f.name, f.has_body) for f in decl] == [("poll_read", False)]
    # unsafe and const functions somewhere in tokio's sources
    unsafe = TreeSitterOracle((tokio_src / "util" / "linked_list.rs").read_text()).get_functions()
    assert any(f.is_unsafe for f in unsafe)
    consts = TreeSitterOracle((tokio_src / "util" / "slab.rs").read_text()).get_functions()
    assert any(f.is_const and f.signature.startswith(("const fn", "pub(crate) const fn", "pub const fn")) for f in consts)


def test_structs_enums_impls(oracle):
    structs = {s.name: s for s in oracle.get_structs()}
    assert [(f.name, f.type, f.visibility) for f in structs["File"].fields] == [
        ("std", "Arc<StdFile>", None), ("inner", "Mutex<Inner>", None)]
    assert structs["File"].visibility == "pub" and structs["File"].kind == "named"
    enums = {e.name: e for e in oracle.get_enums()}
    assert [(v.name, v.kind, [f.type for f in v.fields]) for v in enums["Operation"].variants] == [
        ("Read", "tuple", ["io::Result<usize>"]), ("Write", "tuple", ["io::Result<()>"]),
        ("Seek", "tuple", ["io::Result<u64>"])]
    impls = oracle.get_impls()
    inherent = [i.type_name for i in impls if i.trait is None]
    assert inherent == ["File", "Inner"]
    by_trait = {i.trait_name: i for i in impls if i.trait}
    assert by_trait["AsyncWrite"].methods == ("poll_write", "poll_flush", "poll_shutdown")
    assert by_trait["Debug"].trait == "fmt::Debug" and by_trait["From"].trait == "From<StdFile>"


def test_every_error_pattern_kind_agrees_with_a_line_count(oracle, file_rs):
    counts = oracle.count_error_patterns()
    code = code_lines(file_rs)
    assert counts.result_types == sum(len(re.findall(r"\bResult\b", ln)) for ln in code
                                      if not ln.lstrip().startswith("use "))
    assert counts.result_types >= 15  # io::Result<...> is a scoped_type_identifier and must count
    assert counts.question_marks == sum(ln.count("?") for ln in code) == 10
    assert counts.ok_err_match_arms == sum(bool(re.match(r"\s*(Ok|Err)\(.*=>", ln)) for ln in code) == 2
    assert counts.unwrap_calls == sum(ln.count(".unwrap()") for ln in code) == 4
    assert counts.expect_calls == sum(ln.count(".expect(") for ln in code) == 1
    assert counts.panic_macros == sum(len(re.findall(r"\b(panic|unreachable|todo|unimplemented)!", ln))
                                      for ln in code) == 3


def test_query_matches_with_captures_and_lines(oracle, file_rs):
    matches = oracle.query("(impl_item trait: (type_identifier) @trait type: (type_identifier) @type)")
    pairs = [(m.captures["trait"][0].text, m.captures["type"][0].text) for m in matches]
    assert ("AsyncRead", "File") in pairs
    first = next(m for m in matches if m.captures["trait"][0].text == "AsyncRead")
    assert file_rs.splitlines()[first.line - 1].startswith("impl AsyncRead for File")
    assert first.format().startswith(f"{first.line}: @trait=AsyncRead")


def test_bad_query_quotes_tree_sitter_and_points_at_the_position(oracle):
    # `for:` is not a field of impl_item in tree-sitter-rust (it is `trait:` and `type:`)
    with pytest.raises(AstQueryError) as err:
        oracle.query("(impl_item for: (type_identifier) @t)")
    assert "Invalid field name at row 0, column 11: for" in str(err.value)
    assert (err.value.row, err.value.column) == (0, 11)
    assert "             ^ (line 1, column 12)" in str(err.value)
    with pytest.raises(AstQueryError, match="Unexpected EOF"):
        oracle.query("(function_item name: (identifier) @name")


def _caret(message: str, line: str) -> int:
    """The column the caret of ``message`` points at in the quoted ``line`` (both indented alike)."""
    lines = message.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.endswith(line))
    return lines[at + 1].index("^") - (len(lines[at]) - len(line))


def test_a_bad_query_s_caret_points_at_the_unclosed_paren_or_the_character_named(oracle, tmp_path):
    # unbalanced: tree-sitter says only "Unexpected EOF"; the caret sat after the query's last character
    with pytest.raises(AstQueryError) as err:
        oracle.query("(function_item name: (identifier) @name")
    assert "this ( is never closed" in str(err.value) and (err.value.row, err.value.column) == (0, 0)
    assert _caret(str(err.value), "(function_item name: (identifier) @name") == 0
    two = '(struct_item name: (type_identifier) @s)\n  (function_item\n    name: (identifier) @name ; (a comment)'
    with pytest.raises(AstQueryError) as err:
        oracle.query(two)  # the second pattern's ( on line 2 is never closed
    assert "^ (line 2, column 3)" in str(err.value) and _caret(str(err.value), "  (function_item") == 2
    with pytest.raises(AstQueryError) as err:  # one ) too many: tree-sitter's own position, the extra )
        oracle.query("(function_item name: (identifier) @name))")
    extra = "(function_item name: (identifier) @name))"
    assert _caret(str(err.value), extra) == len(extra) - 1
    query = '((function_item name: (identifier) @n) (#eq? @n "é") (bogus_node))'  # é: 2 bytes, 1 column
    with pytest.raises(AstQueryError) as err:
        oracle.query(query)
    assert "Invalid node type" in str(err.value) and _caret(str(err.value), query) == query.index("bogus_node")
    # rlmlab oracle ast-query says the same, over a real file
    res = CliRunner().invoke(main, ["oracle", "ast-query", "(function_item\n  name: (identifier) @name",
                                    "/usr/share/cargo/registry/bytes-1.2.1/src/bytes.rs"])
    assert res.exit_code == 2 and "this ( is never closed" in res.output
    assert _caret(res.output, "(function_item") == 0 and "(line 1, column 1)" in res.output


def test_structural_verdicts(oracle):
    sig = "What is the signature of set_len?"
    assert verify(oracle, "`pub async fn set_len(&self, size: u64) -> io::Result<()>`", sig) is V.ExactMatch
    assert verify(oracle, "pub async fn set_len(&self,size:u64)->io::Result<()> {", sig) is V.ExactMatch
    assert verify(oracle, "async fn set_len(&self, size: u64) -> io::Result<()>", sig) is V.HasFalseNegatives
    assert verify(oracle, "pub async unsafe fn set_len(&self, size: u64) -> io::Result<()>", sig) is V.HasFalsePositives
    assert verify(oracle, "pub async fn set_len(&self, size: u32) -> io::Result<()>", sig) is V.Mismatch
    params = "What are the parameters of set_len?"
    assert verify(oracle, "- &self\n- size: u64", params) is V.ExactMatch
    assert verify(oracle, "size: u64, &self", params) is V.UnorderedMatch
    assert verify(oracle, "size: u32", params) is V.Mismatch
    fields = "List the fields of File"
    assert verify(oracle, "std: Arc<StdFile>, inner: Mutex<Inner>", fields) is V.ExactMatch
    detail = verify_detailed(oracle, "std: StdFile, inner: Mutex<Inner>", fields)
    assert detail.verdict is V.HasFalsePositives and detail.false_positives == ["std: StdFile"]
    assert verify(oracle, "inner", fields) is V.HasFalseNegatives
    assert verify(oracle, "inner", "Give an example of the fields of File") is V.SubsetMatch
    assert verify(oracle, "Idle, Busy", "What are the variants of State?") is V.ExactMatch
    assert verify(oracle, "File", "Which types implement AsyncRead?") is V.ExactMatch
    assert verify(oracle, "File, Inner", "Which types implement AsyncRead?") is V.HasFalsePositives
    assert verify(oracle, "AsyncRead, AsyncWrite", "Which traits does File implement?") is V.HasFalseNegatives
    assert verify(oracle, "Yes.", "Does File implement AsyncSeek?") is V.ExactMatch
    assert verify(oracle, "No, it does not.", "Does Inner implement AsyncSeek?") is V.ExactMatch
    assert verify(oracle, "a: u8", "List the fields of NoSuchStruct") is None  # cannot verify, not a verdict
    assert verify(oracle, "anything", "Explain the file") is None


def test_parse_cache_parses_each_text_once(file_rs):
    cache = ParseCache()
    a = TreeSitterOracle(file_rs, cache=cache)
    fns = a.get_functions()
    b = TreeSitterOracle(file_rs, cache=cache)
    assert b.get_functions() is fns and b.entry is a.entry
    assert cache.stats() == {"entries": 1, "hits": 1, "misses": 1}


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_ast_query_tool_bounded_and_errors(ws, rust_file):
    ref = ws.call("blob", rust_file.read_text())
    out = ws.call("ast_query", ref, "(function_item name: (identifier) @name)", k=5)
    assert out["total"] == 25 and out["truncated"] and [m["line"] for m in out["matches"]] == [156, 196, 215, 249, 284]
    assert out["matches"][0]["captures"] == {"name": "open"}
    by_path = ws.call("ast_query", str(rust_file), "(struct_item name: (type_identifier) @s)")
    assert [m["captures"]["s"] for m in by_path["matches"]] == ["File", "Inner"] and not by_path["truncated"]
    with pytest.raises(ToolError, match="Invalid field name"):
        ws.call("ast_query", ref, "(impl_item for: (type_identifier) @t)")
    with pytest.raises(ToolError, match="neither a blob key nor a readable file"):
        ws.call("ast_query", "no/such/file.rs", "(identifier) @i")
    with pytest.raises(ToolError, match="k: 500 is out of range; allowed 1 to 100"):
        ws.call("ast_query", ref, "(identifier) @i", k=500)
    many = ws.call("ast_query", ref, "(identifier) @i", k=100)
    assert len(many["matches"]) == 100 and many["total"] > 100


def test_query_words_never_eat_names_and_names_are_not_sample_words():
    # Regressions found by benchmarks/oracle.py.
    src = ("struct EnumerateProducer { base: u8 }\nfn fns_defined() -> u8 { 0 }\n"
           "fn any<P>(self, predicate: P) -> bool { true }\nfn check(&i: &i32, mut n: u8) {}\n"
           "impl<'a, T> Read for &'a mut T {}\nfn poll(self: Pin<&mut Self>) {}\n")
    o = TreeSitterOracle(src)
    assert verify(o, "base: u8", "List the fields of EnumerateProducer") is V.ExactMatch
    assert verify(o, "fn totally_wrong() -> String", "What is the signature of fns_defined?") is V.Mismatch
    assert verify(o, "predicate: P", "What are the parameters of any?") is V.HasFalseNegatives
    assert verify(o, "&i: &i32, mut n: u8", "What are the parameters of check?") is V.ExactMatch
    assert verify(o, "&i: &i32, n: u8", "What are the parameters of check?") is V.ExactMatch
    assert [i.type_name for i in o.get_impls()] == ["T"]
    assert verify(o, "self: Invented", "What are the parameters of poll?") is V.Mismatch
    assert verify(o, "self: Pin<&mut Self>", "What are the parameters of poll?") is V.ExactMatch


def test_item_inside_a_cfg_macro_body_is_found_and_verified(tokio_src):
    # Regression (issue 18, defect 8): `thread_id` sits in `cfg_rt! { ... }`, a token tree to tree-sitter, so a
    # structural query about it came out Unverified.
    from rlmlab.oracle import AnalysisResult, TraceValidator

    text = (tokio_src / "runtime" / "context.rs").read_text()
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "fn thread_id" in t)
    [fn] = [f for f in TreeSitterOracle(text).get_functions() if f.name == "thread_id"]
    assert (fn.line, fn.from_macro, fn.visibility) == (line, "cfg_rt", "pub(crate)")
    assert fn.signature == "pub(crate) fn thread_id() -> Result<ThreadId, AccessError>"
    r = TraceValidator(tokio_src).validate(AnalysisResult(
        "What is the signature of thread_id?", "pub(crate) fn thread_id() -> Result<ThreadId, AccessError>",
        source_path="runtime/context.rs"))
    assert (r.status, r.method) == ("Golden", "TreeSitterOracle"), r.reason


def test_macro_bodies_nested_in_impls_keep_lines_and_enclosing(tokio_src):
    # pin_project! structs, nested cfg macros, and a cfg macro inside an impl block: the methods belong to it.
    text = (tokio_src / "io" / "util" / "buf_reader.rs").read_text()
    lines = text.splitlines()
    [s] = [x for x in TreeSitterOracle(text).get_structs() if x.name == "BufReader"]
    assert s.from_macro == "pin_project" and "struct BufReader" in lines[s.line - 1]
    assert [f.name for f in s.fields][:1] == ["inner"]
    src = ("pub struct A;\nimpl A {\n    cfg_io! {\n        cfg_fs! {\n            pub fn read(&self) -> u8 { 1 }\n"
           "        }\n    }\n}\nthread_local! { static X: u8 = 1 }\nfn f() { m! { struct NotAnItem; } }\n")
    o = TreeSitterOracle(src)
    read = next(f for f in o.get_functions() if f.name == "read")
    assert (read.line, read.enclosing, read.from_macro) == (5, "impl A", "cfg_io > cfg_fs")
    assert [x.name for x in o.get_structs()] == ["A"]  # not the one in an expression-position macro
    assert all(f.from_macro is None for f in o.get_functions() if f.name == "f")




def _walk(root, *types):
    """Every node of the given types in source order, by a Python walk (the extraction before issue 20)."""
    wanted, out, stack = set(types), [], [root]
    while stack:
        node = stack.pop()
        if node.type in wanted:
            out.append(node)
        stack.extend(reversed(node.children))
    return out


@pytest.mark.parametrize("name", ["fs/file.rs", "runtime/task/mod.rs", "macros/select.rs", "sync/mpsc/chan.rs"])
def test_query_extraction_equals_a_node_walk(tokio_src, name):
    o = TreeSitterOracle((tokio_src / name).read_text(), name)

    def own(items):  # the file's own items; those re-parsed from macro bodies (issue 18) have from_macro set
        return [x for x in items if x.from_macro is None]

    assert own(o.get_functions()) == [o._function(n) for n in _walk(o.root, "function_item", "function_signature_item")]
    assert own(o.get_structs()) == [o._struct(n) for n in _walk(o.root, "struct_item")]
    assert own(o.get_enums()) == [o._enum(n) for n in _walk(o.root, "enum_item")]
    assert own(o.get_impls()) == [o._impl(n) for n in _walk(o.root, "impl_item")]
    assert own(o.get_traits()) == [o._trait(n) for n in _walk(o.root, "trait_item")]


TRICKY = r'''
// fn in_a_comment() {} struct NotOne; impl Nope for X {}
/* enum Hidden { A } trait Hidden2 {} */
const S: &str = "fn in_a_string() { struct Q; } cfg_x! { fn no() {} }";
const R: &str = r#"impl X { fn raw() {} }"#;
type Callback = fn(u8) -> bool;
fn r#fn(f: impl Fn() -> u8, g: &dyn Fn(u8)) -> impl Iterator<Item = u8> { let _ = a != b; std::iter::empty() }
pub(crate) unsafe fn a_fn_b() {} fn_like!(); my_macro! { fn inside() {} }
unsafe impl Send for Foo {}
impl<T> !Sync for Foo<T> {}
pub unsafe trait Marker: Send {}
extern "C" { fn ext(x: i32) -> i32; }
mod m { cfg_io! { pub struct Inner; } enum E { A, B } impl E { fn m(&self) {} } }
struct Fnord; struct structure; enum enumerate {}
macro_rules! mk { ($n:ident) => { fn $n() {} }; }
fn outer() { fn nested() {} struct Local; let x = vec![1]; }
trait T { fn decl(&self); fn with_default(&self) {} }
union U { a: u8 }
'''


def _spans(found):
    return {kind: [(n.start_byte, n.end_byte, n.type) for n in nodes] for kind, nodes in found.items()}


@pytest.mark.parametrize("name", ["fs/file.rs", "runtime/task/mod.rs", "macros/select.rs", "sync/mpsc/chan.rs",
                                  "io/util/async_read_ext.rs", "runtime/mod.rs", "lib.rs", "macros/cfg.rs"])
def test_keyword_lookup_finds_what_a_query_pass_finds(tokio_src, name):
    # Items are found from their keyword tokens (fn, struct, enum, impl, trait, and "!" for item-position macros);
    # the reference is one tree-sitter query pass over every node.
    o = TreeSitterOracle((tokio_src / name).read_text(), name)
    assert _spans(o._items_by_keyword()) == _spans(o.items_by_query())


def test_keyword_lookup_skips_comments_strings_and_lookalikes():
    o = TreeSitterOracle(TRICKY, "tricky.rs")
    assert _spans(o._items_by_keyword()) == _spans(o.items_by_query())
    names = [f.name for f in o.get_functions()]
    assert names == ["r#fn", "a_fn_b", "inside", "ext", "m", "outer", "nested", "decl", "with_default"]
    assert [s.name for s in o.get_structs()] == ["Inner", "Fnord", "structure", "Local"]
    assert [e.name for e in o.get_enums()] == ["E", "enumerate"]
    assert [(i.trait_name, i.negative) for i in o.get_impls()] == [("Send", False), ("Sync", True), (None, False)]
    assert [t.name for t in o.get_traits()] == ["Marker", "T"]


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_extract_files_in_worker_processes_equals_one_process(tokio_src, monkeypatch):
    import rlmlab.oracle._batch as batch
    from rlmlab.oracle import extract_files

    import types

    files = {str(p.relative_to(tokio_src)): p.read_text() for p in sorted((tokio_src / "sync").rglob("*.rs"))}
    what = ("functions", "structs", "enums", "impls", "traits")
    alone = extract_files(files, what, workers=1)
    # extract_files forks only from a process with no other threads; earlier tests of a session may leave some
    # (idle daemon threads), so this test says there are none.
    monkeypatch.setattr(batch, "threading", types.SimpleNamespace(active_count=lambda: 1))
    shared = extract_files(files, what, workers=3)
    assert list(shared) == list(files)
    for path, o in alone.items():
        assert [getattr(shared[path], f"get_{n}")() for n in what] == [getattr(o, f"get_{n}")() for n in what]
    # A child's oracle has no tree until asked; then it parses its text like any other.
    from_children = [p for p, o in shared.items() if o.entry._tree is None]
    assert 0 < len(from_children) < len(files)  # this process did one share, two children the others
    q = "(struct_item name: (type_identifier) @n)"
    assert shared[from_children[0]].query(q) == alone[from_children[0]].query(q)
    # A failing child: its share is done in this process, with the same records.
    monkeypatch.setattr(batch, "_extract_share", lambda *a: (_ for _ in ()).throw(RuntimeError("boom")))
    again = extract_files(files, ("functions",), workers=2)
    assert all(o.entry._tree is not None for o in again.values())
    assert {p: o.get_functions() for p, o in again.items()} == {p: o.get_functions() for p, o in alone.items()}
    with pytest.raises(ValueError, match="unknown extraction 'fields'"):
        extract_files(files, ("fields",))
