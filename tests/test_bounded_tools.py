"""Hostile inputs to the REPL tools: catastrophic regexes, exploding SPARQL, huge sources, dying workers.

Every tool call must end (a result or a ToolError the model can read) within the tool's time limit, in bounded
memory, and never return more than its registered cap; a REPL worker that dies is restarted and the step
recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
import tracemalloc

import pytest

from rlmlab.errors import ToolError
from rlmlab.executors import run_rlm
from rlmlab.executors._interpreter import RLMLabInterpreter
from rlmlab.lm import make_lm
from rlmlab.oracle import TreeSitterOracle
from rlmlab.tools import DEADLINE_KEY, TOOLS, ToolCaps, Workspace
from rlmlab.tools._sparql import attach_ontology

PROV = "data/ontology/prov.ttl"
# Explodes in the regex engine too (alternatives that overlap): without a time limit it runs for hours.
CATASTROPHIC = (r"(a|aa)+$", "a" * 48 + "b")


def _ws(**caps) -> Workspace:
    return Workspace(caps=ToolCaps(**caps))


def _within_cap(ws: Workspace, name: str, result: dict) -> bool:
    return len(json.dumps(result, ensure_ascii=False, default=str)) <= TOOLS.get(name).result_cap(ws.caps)


# -- ctx_find: bounded regex, streaming count ------------------------------------------------------------------


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_catastrophic_regex_is_stopped_with_a_tool_error():
    ws = _ws(tool_timeout_s=0.5)
    ref = ws.store.put(CATASTROPHIC[1])
    with pytest.raises(ToolError, match=r"did not finish within 0.5 s"):
        ws.call("ctx_find", ref, CATASTROPHIC[0])
    assert ws.call("ctx_find", ref, "a+b")["total"] == 1  # the host is free for the next call


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_step_deadline_bounds_a_tool_call():
    ws = _ws(tool_timeout_s=60)
    ref = ws.store.put(CATASTROPHIC[1])
    ws.extras[DEADLINE_KEY] = time.monotonic() + 0.3
    with pytest.raises(ToolError, match=r"did not finish within 0\.[23]\d* s"):
        ws.call("ctx_find", ref, CATASTROPHIC[0])
    ws.extras[DEADLINE_KEY] = time.monotonic() - 1
    with pytest.raises(ToolError, match="no time left in this step"):
        ws.call("ctx_find", ref, "a")


def test_counting_beyond_k_holds_no_per_line_state():
    ws = Workspace()
    ref = ws.store.put("\n" * 3_000_000 + "needle\n")
    tracemalloc.start()
    try:
        out = ws.call("ctx_find", ref, "needle")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out["matches"] == [{"offset": 3_000_000, "line": 3_000_001, "text": "needle"}]
    assert peak < 5_000_000  # a list of line starts alone would take over 100 MB


def test_total_is_a_lower_bound_when_counting_runs_out_of_time():
    ws = _ws(tool_timeout_s=0.2)
    ref = ws.store.put("\n" * 20_000_000)
    out = ws.call("ctx_find", ref, "(?m)^", k=3)
    assert [m["line"] for m in out["matches"]] == [1, 2, 3]
    assert out["total_complete"] is False and 3 <= out["total"] < 20_000_001


def test_matches_lines_and_total_agree_with_a_plain_scan(rust_file):
    ws = Workspace()
    text = rust_file.read_text()
    ref = ws.store.put(text)
    out = ws.call("ctx_find", ref, r"fn \w+", k=7)
    expected = [(m.start(), text.count("\n", 0, m.start()) + 1) for m in re.finditer(r"fn \w+", text)]
    assert out["total"] == len(expected) and "total_complete" not in out
    assert [(m["offset"], m["line"]) for m in out["matches"]] == expected[:7]
    assert all(m["text"] in text.splitlines()[m["line"] - 1] for m in out["matches"])


def test_results_never_exceed_their_caps_on_escape_heavy_text():
    ws = Workspace()
    control = ws.store.put("\x01" * 5000)
    quotes = ws.store.put(('"\\' * 200 + "\n") * 150)
    peek = ws.call("ctx_peek", control, n=2000)  # each character is six in JSON: \u0001
    assert peek["truncated"] and 0 < len(peek["preview"]) < 2000 and _within_cap(ws, "ctx_peek", peek)
    found = ws.call("ctx_find", quotes, '"', k=100)
    assert len(found["matches"]) == 100 and _within_cap(ws, "ctx_find", found)
    sliced = ws.call("ctx_slice", control, 0, 4000)
    assert sliced["clipped"] and sliced["end"] == len(sliced["text"]) and _within_cap(ws, "ctx_slice", sliced)
    long_pattern = ws.call("ctx_find", quotes, r"(?:\\)?" * 70 + '"', k=100)
    assert _within_cap(ws, "ctx_find", long_pattern)


@pytest.mark.parametrize("call, arg", [
    (("ctx_slice", "ref", "a", 5), "start"),
    (("ctx_find", "ref", 5), "pattern"),
    (("ast_query", "ref", None), "query"),
])
def test_wrong_argument_types_are_tool_errors_naming_the_argument(call, arg):
    ws = Workspace()
    ws.store.put("fn main() {}", "ref")
    with pytest.raises(ToolError, match=rf"{arg}: expected"):
        ws.call(*call)


# -- SPARQL and ast_query: a worker process with a time and memory limit ----------------------------------------


@pytest.mark.slow  # waits out a time limit
def test_exploding_sparql_is_killed_at_the_time_limit_and_leaves_nothing_running():
    ws = _ws(tool_timeout_s=1.0)
    attach_ontology(ws, PROV)
    threads = threading.active_count()
    with pytest.raises(ToolError, match=r"sparql_query: stopped after 1 s"):
        ws.call("sparql_query", "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?a ?d ?g LIMIT 1")
    assert threading.active_count() == threads  # no detached evaluation thread left behind
    assert ws.call("sparql_query", "SELECT ?c WHERE { ?c a owl:Class } LIMIT 3")["rows"] == 3


def test_sparql_regex_with_a_bad_pattern_is_a_tool_error():
    ws = Workspace()
    attach_ontology(ws, PROV)
    with pytest.raises(ToolError, match="query: SPARQL error"):
        ws.call("sparql_query", 'SELECT ?c WHERE { ?c a owl:Class FILTER regex(str(?c), "([a") }')


@pytest.mark.slow
def test_ast_query_past_its_memory_limit_is_a_tool_error():
    # the time limit far above what the parse needs, so on a loaded machine the memory limit still comes first
    ws = _ws(tool_memory_mb=64, tool_timeout_s=120)
    ref = ws.store.put("fn a() { let x = [1, 2, 3]; }\n" * 400_000)
    with pytest.raises(ToolError, match=r"ast_query: .*(memory|killed)"):
        ws.call("ast_query", ref, "(function_item name: (identifier) @name)")
    small = ws.store.put("fn a() {}\n" * 3)
    assert ws.call("ast_query", small, "(function_item name: (identifier) @name)")["total"] == 3


def test_ast_query_keeps_the_first_k_in_source_order_and_counts_the_rest(rust_file):
    ws = Workspace()
    text = rust_file.read_text()
    query = "[(function_item name: (identifier) @fn) (struct_item name: (type_identifier) @struct)]"
    everything = TreeSitterOracle(text).query(query)
    out = ws.call("ast_query", ws.store.put(text), query, k=5)
    assert out["total"] == len(everything) > 5 and out["truncated"]
    assert [m["line"] for m in out["matches"]] == [m.line for m in everything[:5]]
    assert [m["captures"] for m in out["matches"]] == [
        {n: c[0].text for n, c in m.captures.items()} for m in everything[:5]]


# -- the REPL worker: crashes restart it, the step is recorded ---------------------------------------------------


@pytest.mark.parametrize("code, how", [
    ("import os; os._exit(3)", "exited with status 3"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "killed by SIGKILL"),
    ("import threading, time; threading.Thread(target=time.sleep, args=(5,)).start()", "background threads"),
])
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_dying_worker_is_restarted_and_the_step_says_why(code, how):
    repl = RLMLabInterpreter(Workspace(), step_timeout=10)
    try:
        repl.recording_setup = True
        repl.execute("context = 'kept'")
        repl.recording_setup = False
        out = repl.execute(code)
        assert out.startswith("[Error] WorkerCrash:") and how in out
        assert repl.execute("print(context)").strip() == "kept" and repl.crashes == 1
    finally:
        repl.shutdown()


def test_worker_memory_limit_turns_a_huge_allocation_into_an_error():
    repl = RLMLabInterpreter(Workspace(), step_timeout=10, memory_limit_mb=512)
    try:
        with pytest.raises(Exception, match="MemoryError"):
            repl.execute("x = bytearray(1024 * 1024 * 1024)")
        assert repl.execute("print('alive')").strip() == "alive"
    finally:
        repl.shutdown()


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_crashed_step_is_recorded_and_the_run_goes_on(tmp_path):
    lm = make_lm("scripted", script=[
        {"reasoning": "1", "code": "import os\nos._exit(9)"},
        {"reasoning": "2", "code": "print(ctx_stats(context)['length'])"},
        {"reasoning": "3", "code": "SUBMIT(answer='7')"},
    ])
    traj = run_rlm("q", "payload", lm=lm, runs_dir=tmp_path)
    assert "WorkerCrash" in traj.iterations[0].output and "status 9" in traj.iterations[0].output
    assert traj.iterations[1].output.strip() == "7" and traj.answer == "7" and traj.error is None
    stored = [json.loads(line) for line in (tmp_path / traj.run_id / "trajectory.jsonl").read_text().splitlines()]
    assert any("WorkerCrash" in json.dumps(r) for r in stored)


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_huge_step_output_is_clipped_in_the_stored_trajectory(tmp_path):
    lm = make_lm("scripted", script=[
        {"reasoning": "1", "code": "print('x' * 10**7)"},
        {"reasoning": "2", "code": "SUBMIT(answer='done')"},
    ])
    traj = run_rlm("q", "c", lm=lm, runs_dir=tmp_path)
    size = sum(p.stat().st_size for p in (tmp_path / traj.run_id).rglob("*") if p.is_file())
    # the worker sends at most 4 MiB of what a step printed (issue 52), saying how much there was
    assert traj.iterations[0].output_chars >= 4 * 2**20 and size < 200_000
    assert "the step printed 10000001 bytes" in traj.iterations[0].output


def test_oracle_ast_query_over_a_directory_skips_a_file_that_is_not_utf8(tmp_path, rust_file):
    from click.testing import CliRunner

    from rlmlab.cli import main

    (tmp_path / "a_bad.rs").write_bytes(b"fn \xff\xfe() {}\n")
    (tmp_path / "b_good.rs").write_text(rust_file.read_text())
    result = CliRunner().invoke(main, ["oracle", "ast-query", "(function_item name: (identifier) @n)", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "a_bad.rs" in result.output and "skipped" in result.output and "b_good.rs:" in result.output
    assert "1 skipped" in result.output
