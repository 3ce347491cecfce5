"""Malformed input files through every command that reads one (issue 17).

Each case runs the real command in-process (click's CliRunner) on a file that is truncated, not UTF-8, binary,
empty, of the wrong JSON types, holding NaN, or huge, and asserts: exit code 2, exactly one line of error output
(stderr) naming the file (and its line or field where it has them), no traceback, and no half-written output
file. The hypothesis tests throw random bytes and random JSON at the line-oriented readers with the same rules
(a random input may also be valid: then the command succeeds). ``CORPUS_SIZE`` counts the (command, input) cases.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlmlab.cli import main

# -- the corpus ----------------------------------------------------------------------------------------------

TRUNCATED_JSON = b'{"query": "How many async functions are there?", "answer": "3", "sour'
NON_UTF8 = b'{"query": "caf\xe9 au lait", "answer": "1"}\n'
BINARY = bytes(b for b in range(256) if b != 10) * 4  # one "line" of every other byte
HUGE = b"x" * 3_000_000 + b"\n"  # one 3 MB line
NAN = b'{"query": "How many fns?", "answer": NaN}\n'


@dataclass
class Case:
    """One command on one bad file: ``args`` holds ``{file}`` (and ``{tmp}``) placeholders."""

    id: str
    args: list[str]
    content: bytes
    suffix: str = ".jsonl"
    where: str = ""  # what the one error line must also say ("{file}:2", "field response")
    names: str = "{file}"  # the file the error line must name
    outputs: list[str] = field(default_factory=list)  # must not exist afterwards (relative to tmp)
    setup: Callable[[Path], None] | None = None


def _lines(*records: object) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


EVAL_OK = {"id": "e1", "phase": "post_inference", "scope": "main", "response": "Let me check.", "tool_calls": [],
           "expected": ["empty_promise"]}
PACK_OK = {"title": "A title", "description": "When it applies", "content": "What to do", "polarity": "success"}
TRACE_OK = {"query": "How many async functions are there?", "answer": "3", "source_path": "a.rs"}


def _eval(**changes: object) -> bytes:
    return _lines(EVAL_OK, {**EVAL_OK, "id": "e2", **changes})


def _memory_db(tmp: Path) -> None:
    shutil.copy(tmp / "in.jsonl", tmp / "mem.sqlite")


def _results_dir(tmp: Path) -> None:
    """Two run directories for ``experiment compare``: a good one, and ``b`` whose results.jsonl is the input."""
    for name in ("a", "b"):
        (tmp / name).mkdir(exist_ok=True)  # a good run, and b whose results.jsonl is the bad input
    row = {"condition": "main", "task_id": "t1", "rollout": 0, "best": True, "answer": "3", "success": True,
           "converged": True, **dict.fromkeys(["input_tokens", "output_tokens", "lm_calls", "iterations", "tool_calls",
                                               "stdout_chars", "variables_info_chars", "large_returns",
                                               "sub_llm_calls", "prompt_chars_mean", "context_chars",
                                               "elapsed_ms"], 1)}
    (tmp / "a" / "results.jsonl").write_text(json.dumps(row) + "\n")
    shutil.copy(tmp / "in.jsonl", tmp / "b" / "results.jsonl")


CASES: list[Case] = []

# oracle validate: a bad line is skipped with file:line (exit 2); golden/review files keep only whole records
_ORACLE = ["oracle", "validate", "{file}", "--source-root", "{tmp}", "--out", "{tmp}/golden.jsonl",
           "--review", "{tmp}/review.jsonl"]
CASES += [Case(f"oracle-validate-{name}", _ORACLE, content, where="{file}:" + line) for name, content, line in [
    ("truncated", TRUNCATED_JSON, "1"),
    ("non-utf8", _lines(TRACE_OK) + NON_UTF8, "2"),
    ("binary", BINARY, "1"),
    ("nan", NAN, "1"),
    ("overflow-to-infinity", b'{"query": "How many fns?", "answer": "1", "iterations": 1e999}\n', "1"),
    ("huge", HUGE, "1"),
    ("list", b"[1, 2, 3]\n", "1"),
    ("query-not-string", _lines({**TRACE_OK, "query": 5}), "1"),
    ("source-path-not-string", _lines({**TRACE_OK, "source_path": 5}), "1"),
    ("source-path-list", _lines({**TRACE_OK, "source_path": ["a.rs"]}), "1"),
    ("iterations-string", _lines({**TRACE_OK, "iterations": "3"}), "1"),
    ("trace-id-object", _lines({**TRACE_OK, "trace_id": {"x": 1}}), "1"),
]]

# turing eval: the labelled turns file
_EVAL = ["turing", "eval", "--data", "{file}", "--lm", "none"]
CASES += [Case(f"turing-eval-{name}", _EVAL, content, where=where) for name, content, where in [
    ("empty", b"", "no labelled turns"),
    ("truncated", _lines(EVAL_OK) + TRUNCATED_JSON, "{file}:2"),
    ("non-utf8", _lines(EVAL_OK) + NON_UTF8, "{file}:2"),
    ("binary", BINARY, "{file}:1"),
    ("nan", _lines(EVAL_OK) + b'{"id": "e2", "phase": "post_inference", "response": NaN, "expected": []}\n',
     "{file}:2"),
    ("huge", HUGE, "{file}:1"),
    ("list", b"[1, 2]\n", "{file}:1"),
    ("response-not-string", _eval(response=5), "{file}:2: field response"),
    ("tool-calls-string", _eval(tool_calls="ctx_find"), "{file}:2: field tool_calls"),
    ("call-without-name", _eval(tool_calls=[{"arguments": {}}]), "{file}:2: field tool_calls.0"),
    ("call-name-number", _eval(tool_calls=[{"name": 3}]), "{file}:2: field tool_calls.0.name"),
    ("arguments-list", _eval(tool_calls=[{"name": "ctx_find", "arguments": [1]}]),
     "{file}:2: field tool_calls.0.arguments"),
    ("unknown-phase", _eval(phase="during_lunch"), "{file}:2: field phase"),
    ("unknown-scope", _eval(scope="everywhere"), "{file}:2: field scope"),
    ("unknown-hook", _eval(expected=["phantom_tool_results"]), "{file}:2: field expected"),
    ("expected-string", _eval(expected="empty_promise"), "{file}:2: field expected"),
    ("history-string", _eval(history="earlier"), "{file}:2: field history"),
    ("history-response-number", _eval(history=[{"response": 5}]), "{file}:2: field history.0.response"),
    ("objective-list", _eval(objective=["x"]), "{file}:2: field objective"),
    ("id-missing", _lines({k: v for k, v in EVAL_OK.items() if k != "id"}), "{file}:1"),
]]

# teach run: datasets (CSV and GSM8K-style JSONL); nothing may be written into --out
_TEACH = ["teach", "run", "--dataset", "{file}", "--provider", "demo", "--out", "{tmp}/out/traces.json"]
_TEACH_OUT = ["out"]
CASES += [Case(f"teach-dataset-csv-{name}", _TEACH, content, suffix=".csv", where=where, outputs=_TEACH_OUT)
          for name, content, where in [
              ("empty", b"", "{file}:1"),
              ("non-utf8", b"question,reference\nWhat is 1 + 1?,2\nQu\xe9 es 2 + 2?,4\n", "{file}:3"),
              ("binary", BINARY, "{file}"),
              ("unclosed-quote", b'question,reference\nWhat is 1 + 1?,2\n"What is 2 + 2?,4\nWhat is 3 + 3?,6\n',
               "{file}:3"),
              ("huge-field", b"question,reference\n" + b"x" * 300_000 + b",1\n", "{file}:2"),
              ("text-after-quote", b'question,reference\n"What is 1 + 1?"x,2\n', "{file}:2"),
              ("header-only", b"question,reference\n", "{file}: no items"),
              ("missing-column", b"question\nWhat is 1 + 1?\n", "{file}:1"),
          ]]
CASES += [Case(f"teach-dataset-jsonl-{name}", _TEACH, content, where=where, outputs=_TEACH_OUT)
          for name, content, where in [
              ("truncated", TRUNCATED_JSON, "{file}:1"),
              ("non-utf8", _lines({"question": "Q?", "answer": "#### 4"}) + NON_UTF8, "{file}:2"),
              ("binary", BINARY, "{file}:1"),
              ("nan", b'{"question": "Q?", "answer": NaN}\n', "{file}:1"),
              ("huge", HUGE, "{file}:1"),
              ("wrong-types", _lines({"question": ["Q?"], "answer": 4}), "{file}:1"),
              ("empty", b"", "{file}: no items"),
          ]]
CASES += [Case(f"teach-dataset-{name}", [*_TEACH[:3], "{tmp}/" + target, *_TEACH[4:]], b"", where=where,
               names="{tmp}/" + target, outputs=_TEACH_OUT, setup=setup) for name, target, where, setup in [
              ("missing", "missing.csv", "missing.csv: no such file", None),
              ("directory", "folder.csv", "folder.csv: a directory", lambda tmp: (tmp / "folder.csv").mkdir()),
          ]]

# teach run --config (YAML)
_TEACH_CFG = ["teach", "run", "--config", "{file}", "--out", "{tmp}/out/traces.json"]
CASES += [Case(f"teach-config-{name}", _TEACH_CFG, content, suffix=".yaml", where=where, outputs=_TEACH_OUT)
          for name, content, where in [
              ("non-utf8", b"runtime:\n  max_turns: 2\n# caf\xe9\n", "{file}:3"),
              ("binary", BINARY, "{file}"),
              ("truncated", b"runtime: {max_turns: 3\n", "{file}"),
              ("top-level-list", b"- 1\n- 2\n", "{file}"),
              ("runtime-number", b"runtime: 5\n", "runtime"),
              ("max-turns-string", b"runtime:\n  max_turns: three\n", "runtime.max_turns"),
              ("nan", b"runtime:\n  max_turns: .nan\n", "runtime.max_turns"),
              ("huge", b"runtime:\n  max_turns: " + b"9" * 2_000_000 + b"\n", "{file}: invalid YAML"),
          ]]

# teach show / teach run --history: traces.json
_TRACES_BAD = [
    ("empty", b"", "{file}"),
    ("truncated", b'{"summary": {"items": 1}, "traces": [', "{file}"),
    ("non-utf8", b'{"summary": {}, "traces": []}\n\xff\n', "{file}:2"),
    ("binary", BINARY, "{file}"),
    ("nan", b'{"summary": {"items": NaN}, "traces": []}', "{file}"),
    ("wrong-types", b'{"summary": {}, "traces": "none"}', "traces"),
    ("huge", HUGE, "{file}"),
]
CASES += [Case(f"teach-show-{name}", ["teach", "show", "{file}"], content, suffix=".json", where=where)
          for name, content, where in _TRACES_BAD]
CASES += [Case(f"teach-history-{name}", [*_TEACH[:-2], "--history", "{file}", "--out", "{tmp}/out/traces.json"],
               content, suffix=".json", where=where, outputs=_TEACH_OUT)
          for name, content, where in _TRACES_BAD]
for case in CASES[-len(_TRACES_BAD):]:  # --history needs a good dataset
    case.args[case.args.index("{file}")] = "data/math20.csv"
    case.args[-3] = "{file}"

# memory import: a bad pack writes nothing, not even an empty database
_IMPORT = ["memory", "import", "{file}", "--db", "{tmp}/new.sqlite"]
CASES += [Case(f"memory-import-{name}", _IMPORT, content, where=where, outputs=["new.sqlite"])
          for name, content, where in [
              ("truncated", _lines(PACK_OK) + TRUNCATED_JSON, "{file}:2"),
              ("non-utf8", _lines(PACK_OK) + NON_UTF8, "{file}:2"),
              ("binary", BINARY, "{file}:1"),
              ("nan", b'{"title": "t", "description": "d", "content": "c", "polarity": NaN}\n', "{file}:1"),
              ("huge", HUGE, "{file}:1"),
              ("list", b"[1]\n", "{file}:1"),
              ("title-number", _lines({**PACK_OK, "title": 5}), "{file}:1: title"),
              ("tags-number", _lines({**PACK_OK, "tags": 5}), "{file}:1: tags"),
              ("antipattern-extra-key", _lines({"id": "ap-x", "title": "t", "description": "d", "content": "c",
                                                "severity": 3}), "{file}:1: severity"),
              ("polarity-unknown", _lines({**PACK_OK, "polarity": "maybe"}), "{file}:1: polarity"),
          ]]

# --db / --store pointing at something that is not the right SQLite file
_NOT_SQLITE = [("empty", b""), ("text", b"not a database\n"), ("binary", BINARY), ("non-utf8", NON_UTF8),
               ("truncated-sqlite", b"SQLite format 3\x00" + b"\x10\x00" + b"\x00" * 30)]
for cmd in (["memory", "search", "q"], ["memory", "show", "mem_0"], ["memory", "stats"], ["memory", "health"],
            ["memory", "context", "q"], ["memory", "export", "{tmp}/export.jsonl"]):
    CASES += [Case(f"{'-'.join(cmd[:2])}-db-{name}", [*cmd, "--db", "{tmp}/mem.sqlite"], content, where="--db",
                   names="{tmp}/mem.sqlite", outputs=["export.jsonl"], setup=_memory_db)
              for name, content in _NOT_SQLITE]
CASES += [Case(f"memory-import-db-{name}", ["memory", "import", "data/packs/rlm_procedures.jsonl", "--db",
                                            "{tmp}/mem.sqlite"], content, where="--db", names="{tmp}/mem.sqlite",
               setup=_memory_db)
          for name, content in _NOT_SQLITE if name != "empty"]  # an empty file is a new store
CASES += [Case(f"turing-log-db-{name}", ["turing", "log", "--db", "{file}"], content, suffix=".sqlite", where="--db")
          for name, content in _NOT_SQLITE]
CASES += [Case(f"repl-store-{name}", ["repl", "--store", "{file}"], content, suffix=".sqlite", where="--store")
          for name, content in _NOT_SQLITE if name != "empty"]  # an empty file is a new blob store

# memory artifact: a text file
CASES += [Case(f"memory-artifact-{name}", ["memory", "artifact", "{file}", "--db", "{tmp}/new.sqlite", "--domain",
                                           "prov"], content, suffix=".md", where="{file}", outputs=["new.sqlite"])
          for name, content in [("empty", b""), ("non-utf8", b"# Guide\ncaf\xe9\n"), ("binary", BINARY)]]

# rlm run: the source file and --turing-config
_RLM = ["rlm", "run", "q", "{file}", "--lm", "scripted:probe", "--runs-dir", "{tmp}/runs"]
CASES += [Case(f"rlm-run-file-{name}", _RLM, content, suffix=".rs", where="{file}", outputs=["runs"])
          for name, content in [("non-utf8", b"fn main() { let s = \"caf\xe9\"; }\n"), ("binary", BINARY)]]
_RLM_TURING = ["rlm", "run", "q", "data/math20.csv", "--lm", "scripted:probe", "--runs-dir", "{tmp}/runs",
               "--turing", "--turing-config", "{file}"]
CASES += [Case(f"rlm-turing-config-{name}", _RLM_TURING, content, suffix=".yaml", where=where, outputs=["runs"])
          for name, content, where in [
              ("non-utf8", b"turing_protocol:\n  backends: null\n# caf\xe9\n", "{file}:3"),
              ("binary", BINARY, "{file}"),
              ("truncated", b"turing_protocol: {backends: [local\n", "{file}"),
              ("section-number", b"turing_protocol: 5\n", "turing_protocol"),
              ("backends-number", b"turing_protocol:\n  backends: 5\n", "turing_protocol.backends"),
          ]]

# experiment run NAME.yaml / experiment compare (results.jsonl) / experiment notebook NAME.ipynb
_EXP = ["experiment", "run", "{file}", "--lm", "scripted:probe", "--runs-dir", "{tmp}/runs"]
CASES += [Case(f"experiment-run-{name}", _EXP, content, suffix=".yaml", where=where, outputs=["runs"])
          for name, content, where in [
              ("empty", b"", "{file}"),
              ("non-utf8", b"id: EX\ntitle: caf\xe9\n", "{file}:2"),
              ("binary", BINARY, "{file}"),
              ("truncated", b"id: EX\nbase: {layers: [L0\n", "{file}"),
              ("wrong-types", b"id: 5\ntitle: []\nbase: x\n", "{file}"),
          ]]
_COMPARE = ["experiment", "compare", "{tmp}/a", "{tmp}/b"]
CASES += [Case(f"experiment-compare-{name}", _COMPARE, content, where=where, names="{tmp}/b/results.jsonl",
               setup=_results_dir)
          for name, content, where in [
              ("non-utf8", NON_UTF8 + b"{}\n", "results.jsonl:1"),
              ("binary", BINARY + b"\n{}\n", "results.jsonl:1"),
              ("truncated-middle", TRUNCATED_JSON + b"\n{}\n", "results.jsonl:1"),
              ("nan", b'{"condition": "main", "success": NaN}\n{}\n', "results.jsonl:1"),
              ("list-rows", b"[1]\n[2]\n", "results.jsonl:1"),
              ("missing-fields", b'{"condition": "main"}\n', "results.jsonl"),
          ]]
CASES += [Case(f"experiment-notebook-{name}", ["experiment", "notebook", "{file}", "--runs-dir", "{tmp}/runs"],
               content, suffix=".ipynb", where="{file}", outputs=["runs"])
          for name, content in [("empty", b""), ("truncated", b'{"cells": [{"cell_type": "code", "sou'),
                                ("non-utf8", b'{"cells": [], "metadata": {"t": "caf\xe9"}}'), ("binary", BINARY),
                                ("wrong-types", b'{"cells": 5, "nbformat": "four"}')]]

# oracle ast-query: Rust files
CASES += [Case(f"oracle-ast-query-{name}", ["oracle", "ast-query", "(function_item) @f", "{file}"], content,
               suffix=".rs", where="{file}") for name, content in [("non-utf8", b"fn caf\xe9() {}\n"),
                                                                   ("binary", BINARY)]]

CORPUS_SIZE = len(CASES)


def _fill(text: str, file: Path, tmp: Path) -> str:
    return text.replace("{file}", str(file)).replace("{tmp}", str(tmp))


def assert_refused(res, where: str) -> None:
    """Exit code 2, one line of error output that names ``where``, no traceback."""
    assert "Traceback" not in res.output, res.output[-3000:]
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 2, (res.exit_code, res.output[-2000:])
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr[-3000:]
    assert where in lines[0], (where, lines[0])
    assert len(lines[0]) < 1000  # a message, not a dump of the input


def assert_strict_jsonl(path: Path) -> None:
    """A JSONL output that exists is whole lines of strict JSON (no NaN/Infinity)."""
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            json.loads(line, parse_constant=lambda name: pytest.fail(f"{path}: {name} written"))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_malformed_input_is_one_line_naming_the_file(case: Case, tmp_path, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # the project root: data/ paths in args
    file = tmp_path / f"in{case.suffix}"
    file.write_bytes(case.content)
    if case.setup is not None:
        case.setup(tmp_path)
    res = CliRunner().invoke(main, [_fill(a, file, tmp_path) for a in case.args], input="")
    assert_refused(res, _fill(case.where, file, tmp_path))
    assert _fill(case.names, file, tmp_path) in res.stderr  # the one line names the file
    for out in case.outputs:
        target = tmp_path / out
        assert not target.exists() or (target.is_dir() and not any(target.rglob("*"))), f"{out} left behind"
    for out in ("golden.jsonl", "review.jsonl"):
        assert_strict_jsonl(tmp_path / out)


def test_the_corpus_covers_every_command_that_reads_a_file():
    commands = {" ".join(a for a in c.args[:2]) for c in CASES}
    assert {"oracle validate", "oracle ast-query", "turing eval", "turing log", "teach run", "teach show",
            "memory import", "memory search", "memory artifact", "rlm run", "experiment run", "experiment compare",
            "experiment notebook", "repl --store"} <= commands
    assert CORPUS_SIZE >= 150, CORPUS_SIZE


# -- random inputs -----------------------------------------------------------------------------------------------

_FAST = settings(max_examples=15, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                  max_size=4), max_leaves=12)


def _run_on(tmp_path: Path, args: list[str], content: bytes, suffix: str = ".jsonl"):
    file = tmp_path / f"random{suffix}"
    file.write_bytes(content)
    res = CliRunner().invoke(main, [_fill(a, file, tmp_path) for a in args], input="")
    assert "Traceback" not in res.output, res.output[-3000:]
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    if res.exit_code == 2:
        lines = [line for line in res.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and str(file) in lines[0], res.stderr[-3000:]
    else:
        assert res.exit_code == 0, res.output[-2000:]
    return res


@_FAST
@given(st.binary(max_size=300))
def test_random_bytes_as_a_pack_or_eval_file(tmp_path, data):
    db = tmp_path / "rand.sqlite"
    db.unlink(missing_ok=True)
    res = _run_on(tmp_path, ["memory", "import", "{file}", "--db", str(db)], data)
    assert res.exit_code == 0 or not db.exists()
    _run_on(tmp_path, ["turing", "eval", "--data", "{file}", "--lm", "none"], data + b"\n" + _lines(EVAL_OK))


@_FAST
@given(st.dictionaries(st.sampled_from(["id", "phase", "scope", "response", "tool_calls", "history", "objective",
                                        "final", "expected"]), _json, max_size=6))
@pytest.mark.slow
def test_random_eval_fields(tmp_path, changes):
    _run_on(tmp_path, ["turing", "eval", "--data", "{file}", "--lm", "none"], _lines({**EVAL_OK, **changes}))


@_FAST
@given(st.dictionaries(st.sampled_from(["query", "answer", "source_path", "iterations", "trace_id", "timestamp",
                                        "type"]), _json, max_size=4))
@pytest.mark.slow
def test_random_trace_fields(tmp_path, changes):
    _run_on(tmp_path, ["oracle", "validate", "{file}", "--source-root", str(tmp_path), "--out",
                       str(tmp_path / "g.jsonl"), "--review", str(tmp_path / "r.jsonl")],
            _lines({**TRACE_OK, **changes}))
    assert_strict_jsonl(tmp_path / "g.jsonl")
    assert_strict_jsonl(tmp_path / "r.jsonl")


@_FAST
@given(st.dictionaries(st.sampled_from(list(PACK_OK) + ["tags", "role", "layer", "template", "id", "domain"]),
                       _json, max_size=4))
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_random_pack_fields(tmp_path, changes):
    db = tmp_path / "p.sqlite"
    db.unlink(missing_ok=True)
    res = _run_on(tmp_path, ["memory", "import", "{file}", "--db", str(db)], _lines({**PACK_OK, **changes}))
    assert res.exit_code == 0 or not db.exists()


@_FAST
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12),
                min_size=1, max_size=3), st.sampled_from([",", '"', "\n", "\r", "\x00", "\ufeff"]))
def test_random_csv_datasets(tmp_path, cells, glue):
    text = "question,reference\n" + glue.join(cells) + "\n"
    out = tmp_path / "csvout"
    shutil.rmtree(out, ignore_errors=True)
    res = _run_on(tmp_path, ["teach", "run", "--dataset", "{file}", "--provider", "demo", "--mode", "reference",
                             "--max-turns", "1", "--out", str(out / "traces.json")], text.encode(), suffix=".csv")
    assert res.exit_code == 0 or not out.exists()
