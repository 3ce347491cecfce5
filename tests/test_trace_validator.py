"""TraceValidator, golden JSONL and the `rlmlab oracle validate` command on real tokio sources."""

import json

import pytest
from click.testing import CliRunner

from rlmlab.cli import main
from rlmlab.executors import run_rlm
from rlmlab.lm import make_lm
from rlmlab.oracle import Verification as V
from rlmlab.oracle import (
    GOLDEN_FIELDS, AnalysisResult, GrepOracle, MalformedLine, OracleResult, QUERY_RULES, QueryKind, QueryRule,
    SelfConsistencyOracle, TraceValidator, classify_query, pattern_for_query, read_analysis_results,
)

ASYNC = "Find all async functions"


@pytest.fixture(scope="module")
def async_lines(rust_file):
    oracle = GrepOracle(rust_file.read_text())
    return "\n".join(f"{i}:{t.strip()}" for i, t in oracle.ground_truth(pattern_for_query(ASYNC)))


def test_classification_table_and_registry():
    assert classify_query("Find all async functions") is QueryKind.PatternMatch
    assert classify_query("List all structs") is QueryKind.PatternMatch
    assert classify_query("Count unwrap calls") is QueryKind.PatternMatch
    assert classify_query("Search for 'spawn_blocking'") is QueryKind.PatternMatch
    assert classify_query("What is the set_len signature?") is QueryKind.Structural
    assert classify_query("parameters of set_len") is QueryKind.Structural
    assert classify_query("List all fields of File") is QueryKind.Structural  # structural wins over "list all"
    assert classify_query("Which types implement AsyncRead?") is QueryKind.Structural
    assert classify_query("Explain the buffering") is QueryKind.Semantic
    assert classify_query("Why does poll_read return Pending?") is QueryKind.Semantic
    assert classify_query("hello there") is QueryKind.Unknown
    QUERY_RULES.register(QueryRule.regex("greeting", QueryKind.Semantic, r"^hello\b", priority=5))
    try:
        assert classify_query("hello there") is QueryKind.Semantic
        with pytest.raises(ValueError, match="already registered"):
            QUERY_RULES.register(QueryRule.regex("greeting", QueryKind.Semantic, "x"))
    finally:
        QUERY_RULES.unregister("greeting")


def test_validate_routes_to_each_oracle(rust_file, async_lines, tokio_src):
    v = TraceValidator(tokio_src)
    path = "fs/file.rs"
    golden = v.validate(AnalysisResult(ASYNC, async_lines, source_path=path, trace_id="t1"))
    assert golden.status == "Golden" and golden.method == "GrepOracle" and golden.verdict == "ExactMatch"
    assert golden.trace.trace_id == "t1" and golden.trace.source_path == path
    failed = v.validate(AnalysisResult(ASYNC, async_lines + "\n7:async fn invented()", source_path=path))
    assert failed.status == "Failed" and failed.verdict == "HasFalsePositives"
    assert "false positives: 7:async fn invented()" in failed.reason and failed.trace is not None
    structural = v.validate(AnalysisResult("List the fields of File", "std: Arc<StdFile>, inner: Mutex<Inner>",
                                           source_path=path))
    assert (structural.status, structural.method) == ("Golden", "TreeSitterOracle")
    semantic = v.validate(AnalysisResult("Explain why File buffers writes", "because", source_path=path))
    assert semantic.status == "Unverified" and "semantic" in semantic.reason
    # the text can also be passed directly, as in the spec's validate(&result, &source, Some(path))
    direct = v.validate(AnalysisResult(ASYNC, async_lines), rust_file.read_text(), "src/fs/file.rs")
    assert direct.status == "Golden" and direct.trace.source_path == "src/fs/file.rs"


def test_missing_source_file_is_unverified_with_the_path(tokio_src, async_lines):
    v = TraceValidator(tokio_src)
    r = v.validate(AnalysisResult(ASYNC, async_lines, source_path="fs/no_such_file.rs"))
    assert r.status == "Unverified" and "source not found: fs/no_such_file.rs" in r.reason
    stats = v.batch_validate([AnalysisResult(ASYNC, async_lines, source_path="fs/file.rs"),
                              AnalysisResult(ASYNC, async_lines, source_path="fs/no_such_file.rs")])
    assert stats.by_status == {"Golden": 1, "Unverified": 1} and stats.golden_rate() == 0.5


def test_multi_file_source_root(tokio_src):
    fs = tokio_src / "fs"
    oracle = GrepOracle.over_files({str(p.relative_to(fs)): p.read_text() for p in fs.rglob("*.rs")})
    truth = oracle.ground_truth_all(pattern_for_query(ASYNC))
    assert len({p for p, _, _ in truth}) > 5
    answer = "\n".join(f"tokio/src/fs/{p}:{i}:{t}" for p, i, t in reversed(truth))  # longer path prefix, reordered
    v = TraceValidator(tokio_src)
    r = v.validate(AnalysisResult(ASYNC, answer, source_path="fs"))
    assert (r.status, r.verdict) == ("Golden", "UnorderedMatch")
    first = "\n".join(f"{p}:{i}:{t}" for p, i, t in truth[:2])
    r2 = v.validate(AnalysisResult(ASYNC, first, source_path="fs"))
    assert r2.verdict == "HasFalseNegatives" and len(r2.detail["false_negatives"]) == len(truth) - 2
    structural = v.validate(AnalysisResult("Which types implement AsyncRead?", "File", source_path="fs"))
    assert structural.verdict == "ExactMatch"  # only File implements AsyncRead under fs/


def test_batch_parses_each_file_once(tokio_src, async_lines):
    v = TraceValidator(tokio_src)
    items = [AnalysisResult("What are the parameters of set_len?", "&self, size: u64", source_path="fs/file.rs")
             for _ in range(20)]
    stats = v.batch_validate(items)
    assert stats.by_status == {"Golden": 20}
    assert v.cache.stats() == {"entries": 1, "hits": 19, "misses": 1}
    assert TraceValidator(tokio_src, use_cache=False).cache is None


def test_malformed_jsonl_lines_are_reported_and_skipped(tmp_path, async_lines):
    traces = tmp_path / "traces.jsonl"
    good = {"query": ASYNC, "answer": async_lines, "source_path": "fs/file.rs"}
    traces.write_text("\n".join([json.dumps(good), "{not json", json.dumps({"answer": "x"}), "[1, 2]",
                                 json.dumps(good)]) + "\n")
    items = list(read_analysis_results(traces))
    bad = [i for i in items if isinstance(i, MalformedLine)]
    assert [(b.line, b.message.split(" (")[0]) for b in bad] == [
        (2, "not JSON"), (3, "missing field 'query'"), (4, "expected a JSON object, got a list")]
    assert str(bad[0]).startswith(f"{traces}:2: not JSON")


def test_cli_validate_writes_golden_and_review(tmp_path, tokio_src, async_lines):
    traces = tmp_path / "traces.jsonl"
    rows = [{"query": ASYNC, "answer": async_lines, "source_path": "fs/file.rs", "trace_id": "good"},
            {"query": ASYNC, "answer": "1:async fn invented()", "source_path": "fs/file.rs", "trace_id": "bad"}]
    traces.write_text(json.dumps(rows[0]) + "\nnot json at all\n" + json.dumps(rows[1]) + "\n")
    out, review = tmp_path / "golden.jsonl", tmp_path / "failed.jsonl"
    result = CliRunner().invoke(main, ["oracle", "validate", str(traces), "--source-root", str(tokio_src),
                                       "--out", str(out), "--review", str(review)])
    assert result.exit_code == 2, result.output  # 2: malformed lines were skipped
    assert f"{traces}:2: not JSON" in result.output and "golden rate 50.0%" in result.output
    [gold] = [json.loads(line) for line in out.read_text().splitlines()]
    assert tuple(gold) == GOLDEN_FIELDS and gold["trace_id"] == "good"
    [failed] = [json.loads(line) for line in review.read_text().splitlines()]
    assert failed["trace"]["trace_id"] == "bad" and failed["verdict"] == "Mismatch"
    # issue 30: beside the golden file, what validated it
    prov = json.loads((tmp_path / "golden.provenance.json").read_text())
    assert prov["command"] == "oracle validate" and prov["source_root"] == str(tokio_src) and prov["lm"] is None
    [read] = prov["files"]
    assert read["path"] == str(traces.resolve()) and read["role"] == "traces" and len(read["sha256"]) == 64


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_end_to_end_rlm_trajectory_to_golden_record(tmp_path, rust_file, tokio_src):
    # The scripted agent answers in grep -n style from ctx_find results, like a good agent would.
    pattern = "(?m)" + pattern_for_query(ASYNC)  # ctx_find searches the whole text: ^ needs multiline
    code = (f"hits = ctx_find(context, {pattern!r}, k=100)\n"
            "SUBMIT(answer='\\n'.join(f\"{m['line']}:{m['text']}\" for m in hits['matches']))")
    lm = make_lm("scripted", script=[{"reasoning": "grep for async fns", "code": code}])
    runs = tmp_path / "runs"
    traj = run_rlm(ASYNC, rust_file.read_text(), lm=lm, runs_dir=runs, source_path="fs/file.rs")
    assert traj.error is None and traj.submitted
    out = tmp_path / "golden.jsonl"
    result = CliRunner().invoke(main, ["oracle", "validate", str(runs), "--source-root", str(tokio_src),
                                       "--out", str(out), "--review", str(tmp_path / "failed.jsonl")])
    assert result.exit_code == 0, result.output
    [gold] = [json.loads(line) for line in out.read_text().splitlines()]
    assert tuple(gold) == GOLDEN_FIELDS
    assert gold["trace_id"] == traj.run_id and gold["verification_method"] == "GrepOracle"
    assert gold["answer"] == traj.answer and gold["iterations"] == 1
    assert gold["input_tokens"] == traj.input_tokens > 0 and gold["output_tokens"] == traj.output_tokens > 0
    assert gold["source_path"] == "fs/file.rs" and gold["timestamp"] == int(traj.started)


def test_self_consistency_gives_consensus_never_golden(rust_file):
    answer = "File wraps a std file and runs blocking operations on a thread pool"
    agree = make_lm("scripted", script=[{"answer": answer}] * 6)  # two validations of 3 samples
    v = TraceValidator(lm=agree)
    r = v.validate(AnalysisResult("Explain how File does IO", answer), rust_file.read_text(), "fs/file.rs")
    assert r.status == "Consensus" and r.verdict == "consensus" and not r.is_golden
    assert r.detail["similarities"] == [1.0, 1.0, 1.0]
    stats = v.batch_validate([(AnalysisResult("Explain how File does IO", answer), rust_file.read_text(), "f.rs")])
    assert stats.golden == [] and stats.by_status == {"Consensus": 1}
    disagree = make_lm("scripted", script=[{"answer": answer}, {"answer": "it parses JSON"}, {"answer": answer}])
    r2 = TraceValidator(lm=disagree).validate(AnalysisResult("Explain how File does IO", answer),
                                              rust_file.read_text())
    assert r2.status == "Unverified" and "no consensus" in r2.reason
    with pytest.raises(ValueError, match="at least 2"):
        SelfConsistencyOracle(agree, samples=1)


def test_oracle_result_constructors_match_the_spec():
    assert OracleResult.Unverified("why").status == "Unverified"
    empty = TraceValidator().validate(AnalysisResult(ASYNC, None, source_path="x.rs"))
    assert empty.status == "Unverified" and "no FINAL answer" in empty.reason


def test_claim_paths_resolve_to_the_exact_file_first(tokio_src):
    io = tokio_src / "io"
    oracle = GrepOracle.over_files({str(p.relative_to(io)): p.read_text() for p in io.rglob("*.rs")})
    assert {"read_buf.rs", "util/read_buf.rs"} <= {path for path, _ in oracle.files}
    truth = [t for t in oracle.ground_truth_all(pattern_for_query("Find all structs")) if t[0] == "read_buf.rs"]
    assert truth
    claim = "\n".join(f"read_buf.rs:{i}:{t}" for _, i, t in truth)
    detail = oracle.verify_detailed(claim, "Show some structs")
    assert detail.verdict is V.SubsetMatch and not detail.false_positives
    longer = "\n".join(f"tokio/src/io/read_buf.rs:{i}:{t}" for _, i, t in truth)
    assert oracle.verify_detailed(longer, "Show some structs").verdict is V.SubsetMatch


def test_explain_wins_over_implements():
    assert classify_query("Explain how Semaphore implements fairness") is QueryKind.Semantic


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_batch_reads_each_source_once_and_gives_the_verdicts_of_single_calls(tokio_src, monkeypatch):
    items = [AnalysisResult(q, a, source_path=p) for q, a, p in [
        (ASYNC, "1:nothing", "fs/file.rs"), ("What are the parameters of set_len?", "&self, size: u64", "fs/file.rs"),
        ("Count unwrap calls", "3", "fs"), ("Which types implement AsyncRead?", "File", "fs"),
        ("Find all unsafe blocks", "None.", "fs/file.rs")] * 5]
    single = [(r.status, r.verdict, r.detail) for r in (TraceValidator(tokio_src).validate(i) for i in items)]
    v, reads = TraceValidator(tokio_src), []
    real = v._read
    monkeypatch.setattr(v, "_read", lambda path: reads.append(path) or real(path))
    stats = v.batch_validate(items)
    assert [(r.status, r.verdict, r.detail) for r in stats.results] == single
    assert len(reads) == 1 + len(list((tokio_src / "fs").rglob("*.rs")))  # file.rs, then the fs/ directory
    assert v._batch is None  # outside a batch every call looks at the files again


def test_source_paths_outside_the_root_and_nan_lines_are_refused(tokio_src, tmp_path):
    # issue 17: a trace's source_path may not climb out of --source-root; NaN/Infinity are not JSON
    from rlmlab.oracle._records import MalformedLine, read_analysis_results

    r = TraceValidator(tokio_src).validate(AnalysisResult("How many async functions are there?", "3",
                                                          source_path="../../../../etc/passwd"))
    assert r.status == "Unverified" and "outside the source root" in r.reason
    traces = tmp_path / "t.jsonl"
    traces.write_text('{"query": "How many async functions?", "answer": NaN, "source_path": "fs/file.rs"}\n'
                      '{"query": "How many async functions?", "answer": "10", "source_path": "fs/file.rs"}\n')
    items = list(read_analysis_results(traces))
    assert isinstance(items[0], MalformedLine) and "NaN is not JSON" in str(items[0]) and items[0].line == 1
    assert not isinstance(items[1], MalformedLine)


# -- issue 17: streaming output, undecodable and mistyped lines, strict JSON, Ctrl-C ---------------------------

def _validate(traces, tokio_src, tmp_path, *extra):
    out, review = tmp_path / "golden.jsonl", tmp_path / "failed.jsonl"
    res = CliRunner().invoke(main, ["oracle", "validate", str(traces), "--source-root", str(tokio_src),
                                    "--out", str(out), "--review", str(review), *extra])
    return res, out, review


def test_undecodable_and_mistyped_lines_are_skipped_and_the_batch_goes_on(tmp_path, tokio_src, async_lines):
    traces = tmp_path / "traces.jsonl"
    good = json.dumps({"query": ASYNC, "answer": async_lines, "source_path": "fs/file.rs"}).encode()
    traces.write_bytes(b"\n".join([good, b'{"query": "caf\xe9", "answer": "1"}',
                                   json.dumps({"query": ASYNC, "answer": "1", "source_path": 5}).encode(),
                                   json.dumps({"query": ASYNC, "answer": "1", "source_path": ["x"]}).encode(),
                                   good]) + b"\n")
    res, out, review = _validate(traces, tokio_src, tmp_path)
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert res.stderr.splitlines() == [
        f"skipped {traces}:2: not UTF-8 text (byte 0xe9 at column 15)",
        f"skipped {traces}:3: field 'source_path': expected a string or null, got int",
        f"skipped {traces}:4: field 'source_path': expected a string or null, got list"]
    assert len(out.read_text().splitlines()) == 2 and review.read_text() == ""


def test_records_are_strict_json_even_when_a_value_is_not_finite(tmp_path):
    from rlmlab.oracle import GoldenTrace, ResultWriter

    trace = GoldenTrace("q", "a", 1, 0, 0, 0, 0, None, "GrepOracle", 0, "t")
    failed = OracleResult.Failed("no", trace, detail={"agreement": float("nan"), "scores": [float("inf"), 1.0]})
    with ResultWriter(tmp_path / "g.jsonl", tmp_path / "r.jsonl") as writer:
        writer.write(failed)
        writer.write(OracleResult.Golden(trace))
    assert (writer.golden, writer.review) == (1, 1)
    line = (tmp_path / "r.jsonl").read_text()
    record = json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} written"))
    assert record["detail"] == {"agreement": None, "scores": [None, 1.0]}


def test_ctrl_c_keeps_every_record_written_so_far(tmp_path, tokio_src, async_lines, monkeypatch):
    traces = tmp_path / "traces.jsonl"
    rows = [{"query": ASYNC, "answer": async_lines if i % 2 == 0 else "1:async fn invented()",
             "source_path": "fs/file.rs", "trace_id": f"t{i}"} for i in range(6)]
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows))
    seen_on_disk = []
    validate = TraceValidator.validate

    def interrupted_on_the_fifth(self, *args, **kwargs):
        if len(seen_on_disk) == 4:
            raise KeyboardInterrupt
        seen_on_disk.append(len((tmp_path / "golden.jsonl").read_text().splitlines()))
        return validate(self, *args, **kwargs)

    monkeypatch.setattr(TraceValidator, "validate", interrupted_on_the_fifth)
    res, out, review = _validate(traces, tokio_src, tmp_path)
    assert seen_on_disk == [0, 1, 1, 2]  # each record was on disk before the next trace was validated
    assert res.exit_code == 130 and "Traceback" not in res.output
    assert res.stderr.splitlines() == [f"Error: interrupted after 4 of 6 traces: 2 golden records kept in {out}, "
                                       f"2 for review in {review}"]
    assert [json.loads(x)["trace_id"] for x in out.read_text().splitlines()] == ["t0", "t2"]
    assert [json.loads(x)["trace"]["trace_id"] for x in review.read_text().splitlines()] == ["t1", "t3"]


@pytest.mark.slow
def test_a_real_sigint_keeps_whole_records_and_says_how_many(tmp_path, tokio_src, async_lines):
    import signal
    import subprocess
    import sys
    import time

    traces = tmp_path / "traces.jsonl"
    line = json.dumps({"query": ASYNC, "answer": async_lines, "source_path": "fs/file.rs"})
    traces.write_text((line + "\n") * 5000)  # --no-cache re-reads and re-parses the source for every trace
    out, review = tmp_path / "golden.jsonl", tmp_path / "failed.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "rlmlab.cli", "oracle", "validate", str(traces), "--source-root",
                             str(tokio_src), "--out", str(out), "--review", str(review), "--no-cache"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (out.exists() and out.stat().st_size) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # poll until the first record is on disk
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    kept = [json.loads(x, parse_constant=lambda name: pytest.fail(name)) for x in out.read_text().splitlines()]
    assert 1 <= len(kept) < 5000 and "Traceback" not in err
    assert err.strip().splitlines() == [(f"Error: interrupted after {len(kept)} of 5,000 traces: {len(kept)} golden "
                                            f"record{'s' * (len(kept) != 1)} kept in {out}, 0 for review in {review}")]
    assert out.read_bytes().endswith(b"}\n")  # whole lines only
