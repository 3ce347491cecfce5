"""The generic operations over a whole tool result (rlmlab.executors._match_ops) and the count rule of the step
space, on real Rust sources (Debian's librust-*-dev): what a run without memory answers many-item questions with."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from rlmlab.executors import CodeRunOptions
from rlmlab.executors._constrain import run_step_grammar
from rlmlab.executors._offer import _py_raw, grep_patterns
from rlmlab.memory import query_slots
from rlmlab.tools import TOOLS, Workspace
from tests.grammar_check import accepts
from helpers import grammar_step

BYTES = Path("/usr/share/cargo/registry/bytes-1.2.1/src/bytes.rs")
TOKIO_FILE = Path("/usr/share/cargo/registry/tokio-1.24.2/src/fs/file.rs")


def _grammar(query: str, text: str) -> str:
    run = SimpleNamespace(workspace=Workspace(registry=TOOLS), options=CodeRunOptions(decoding="grammar"),
                          records=[], query=query, context_text=text)
    return run_step_grammar(run, fmt="rlm", must_submit=False)


def _step(query: str, code: str) -> str:
    return grammar_step(query, code, "x")


@pytest.mark.slow
def test_a_count_is_one_read_of_a_result_never_arithmetic_over_reads():
    text = BYTES.read_text()
    query = "How many unsafe blocks are in this file?"
    [pattern] = grep_patterns(query, query_slots(query, text)["ident"], text)
    g = _grammar(query, text)
    call = f"hits = ctx_find(context, {_py_raw(pattern)}, k=100)\n"
    assert accepts(g, _step(query, call + 'SUBMIT(answer=hits["total"])'))
    assert accepts(g, _step(query, call + 'SUBMIT(answer=len(hits["matches"]))'))
    # seen on the embedded model: a count added to itself
    assert not accepts(g, _step(query, call + 'SUBMIT(answer=hits["total"] + len(hits["matches"]))'))
    assert not accepts(g, _step(query, call + 'n = hits["total"] + hits["total"]\nSUBMIT(answer=n)'))


def test_the_listing_operation_gives_grep_n_lines_of_a_real_file():
    """"Find all async functions in this file. Answer one per line as `line:text`" (the tour's question): the
    listing operation over the offered grep, run by the real tool, is what grep -n prints."""
    text = TOKIO_FILE.read_text()
    query = "Find all async functions in this file. Answer one per line as `line:text`"
    [pattern] = grep_patterns(query, query_slots(query, text)["ident"], text)
    code = (f"hits = ctx_find(context, {_py_raw(pattern)}, k=100)\n"
            'SUBMIT(answer="\\n".join(str(m["line"]) + ":" + m["text"].strip() for m in hits["matches"]))')
    assert accepts(_grammar(query, text), _step(query, code))
    ws = Workspace(registry=TOOLS)
    ws.store.put(text, name="context")
    out = {}
    exec(code, {"context": "context", "ctx_find": ws.bound("ctx_find"),
                "SUBMIT": lambda answer: out.setdefault("answer", answer)})
    grep = subprocess.run(["grep", "-nP", r"^(?!\s*//).*\basync\s+(unsafe\s+)?fn\b", str(TOKIO_FILE)],
                          capture_output=True, text=True, check=True).stdout
    want = [re.sub(r"^(\d+):\s*", r"\1:", line).rstrip() for line in grep.splitlines()]
    assert len(want) > 5 and out["answer"].splitlines() == want


def test_matches_carry_their_file_over_a_module():
    root = Path("/usr/share/cargo/registry/bytes-1.2.1/src/buf")
    text = "".join(f"// file: {p.relative_to(root)}\n{p.read_text()}\n" for p in sorted(root.rglob("*.rs")))
    ws = Workspace(registry=TOOLS)
    ws.store.put(text, name="context")
    found = ws.bound("ctx_find")("context", r"(?m)^\s*pub trait \w+", k=20)["matches"]
    assert found
    for m in found:
        source = (root / m["file"]).read_text().splitlines()
        assert source[m["file_line"] - 1].strip() == m["text"].strip()
    impls = ws.bound("ast_query")("context", "(impl_item trait: (_) @name type: (_) @type)", k=50)["matches"]
    assert impls and all((root / m["file"]).read_text().splitlines()[m["file_line"] - 1].strip() == m["text"].strip()
                         for m in impls)


def test_over_a_document_a_sub_call_may_read_the_lines_a_search_found_for_the_question():
    """The value a line states (a password, a name) is no key of a ctx_find result: over a document a step may hand
    the matched lines and the REPL's own ``query`` to llm_query, whatever the question's words; over code it may not
    (captures name the values there)."""
    from types import SimpleNamespace

    from rlmlab.executors import CodeRunOptions
    from rlmlab.executors._constrain import run_step_grammar
    from rlmlab.tools import TOOLS, Workspace

    def grammar(query, text, code):
        run = SimpleNamespace(workspace=Workspace(registry=TOOLS), options=CodeRunOptions(decoding="grammar"),
                              records=[SimpleNamespace(code=code, output="{'total': 1}")], query=query,
                              context_text=text)
        return run_step_grammar(run, fmt="rlm", must_submit=True)

    log = "".join(f"2026-01-01 host-{i} INFO nothing\n" for i in range(30)) + "the guest password is Tundra2982\n"
    ask = 'llm_query(query + \\"\\\\n\\" + \\"\\\\n\\".join(m[\\"text\\"].strip() for m in hits[\\"matches\\"][:20]))'
    assert ask in grammar("What is the guest password?", log, 'hits = ctx_find(context, "password")')
    assert ask in grammar("Which line mentions the password?", log, 'hits = ctx_find(context, "password")')
    rust = "pub struct A {}\nimpl A { pub fn f(&self) {} }\n" * 5
    assert "llm_query" not in grammar("How many impl blocks are there?", rust, 'hits = ctx_find(context, "impl")')


@pytest.mark.slow
def test_a_grep_result_of_an_earlier_step_is_never_read_for_captures():
    """The tour's question on the embedded model: step 1 ``answer = ctx_find(...)`` found the ten async fns; step 3
    submitted ``", ".join(m["captures"]["name"] for m in answer["matches"])``, a KeyError, since a ``ctx_find``
    match has no captures. The grammar offers capture reads only of a result that has them (``ast_query``'s)."""
    from types import SimpleNamespace

    text = TOKIO_FILE.read_text()
    query = "Find all async functions in this file. Answer one per line as `line:text`."
    [pattern] = grep_patterns(query, query_slots(query, text)["ident"], text)

    def grammar(first: str) -> str:
        run = SimpleNamespace(workspace=Workspace(registry=TOOLS), options=CodeRunOptions(decoding="grammar"),
                              records=[SimpleNamespace(code=first, output="{'total': 10}")], query=query,
                              context_text=text)
        return run_step_grammar(run, fmt="rlm", must_submit=True)

    joined = 'SUBMIT(answer=", ".join(m["captures"]["name"] for m in answer["matches"]))'
    listing = 'SUBMIT(answer="\\n".join(str(m["line"]) + ":" + m["text"].strip() for m in answer["matches"]))'
    after_grep = grammar(f"answer = ctx_find(context, {_py_raw(pattern)})")
    assert not accepts(after_grep, _step(query, joined))
    assert not accepts(after_grep, _step(query, 'SUBMIT(answer=answer["matches"][0]["text"])'))  # every item asked
    assert accepts(after_grep, _step(query, listing))
    ws = Workspace(registry=TOOLS)  # the real tool's result: the captures read would fail, the listing does not
    ws.store.put(text, name="context")
    found = ws.bound("ctx_find")("context", pattern)
    assert found["total"] == 10 and all("captures" not in m for m in found["matches"])
    after_ast = grammar('answer = ast_query(context, "(function_item name: (identifier) @name)")')
    assert accepts(after_ast, _step(query, joined))  # an ast_query match has its captures
