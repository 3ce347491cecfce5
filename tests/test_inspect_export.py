"""``rlmlab experiment export --format inspect``: a real run directory (the scripted agent over tokio's file.rs,
one task failed) written as an Inspect AI eval log and read back with inspect_ai's own reader; the browser test
opens it in ``inspect view`` and sees a sample's steps in the Transcript."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rlmlab.cli import main
from rlmlab.experiments import export_inspect, read_results, run_experiment
from rlmlab.lm import make_lm, read_calls
from rlmlab.lm._scripts import output_fields
from rlmlab.memory import MemoryTask
from helpers import free_port

# find_spec, not importorskip: importing inspect_ai takes about 1.5 s, which every pytest worker would pay while
# collecting; the tests import it when they run
if importlib.util.find_spec("inspect_ai") is None:
    pytest.skip("the inspect extra is not installed: pip install 'rlmlab[inspect]'", allow_module_level=True)
# the tests that read a log back import inspect_ai (about 2 s, once a process): make test's, not make check's
pytestmark = pytest.mark.slow

# Step 1 counts and asks the sub-LM (llm_query) a question, so a step holds calls made while its code ran.
COUNT = ("hits = ctx_find(context, r'pub async fn', k=50)\nnote = llm_query('Is a regex count enough?')\n"
         "print('counted', hits['total'])")
SUBMIT = "SUBMIT(answer=str(hits['total']))"


def count_agent(messages: list[dict[str, str]]) -> Any:
    fields = output_fields(messages)
    if not fields:  # llm_query's plain prompt
        return "yes"
    history = "\n".join(m["content"] for m in messages[1:]).replace(COUNT, "")
    return {name: (SUBMIT if "counted" in history else COUNT) if name == "code" else "count, then submit"
            for name in fields}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, rust_file) -> Path:
    text = rust_file.read_text()
    n = text.count("pub async fn")
    meta = {"source_path": str(rust_file), "suite": "code", "level": 2}
    tasks = [MemoryTask("define", "How many public async functions does file.rs define?", text, "crate:tokio", n,
                        "numeric", dict(meta)),
             MemoryTask("off-by-one", "How many public async functions are in file.rs?", text, "crate:tokio", n + 1,
                        "numeric", dict(meta)),
             MemoryTask("count", "Count the public async functions of file.rs", text, "crate:tokio", n, "numeric",
                        dict(meta))]
    run = run_experiment("E1", lm=make_lm("scripted", script=count_agent), task_list=tasks,
                         runs_dir=tmp_path_factory.mktemp("runs"), progress=False)
    return run.run_dir


def _calls(run_dir: Path, row: dict[str, Any]) -> list[Any]:
    return read_calls(run_dir / "trajectories" / row["trajectory_id"] / "lm_calls.jsonl")


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_an_exported_run_reads_back_with_every_sample_score_token_count_and_step(run_dir, tmp_path, suffix):
    from inspect_ai.log import read_eval_log, resolve_sample_attachments

    from rlmlab.executors import Trajectory

    out = export_inspect(run_dir, tmp_path / f"run{suffix}")
    log = read_eval_log(str(out))
    rows = read_results(run_dir / "results.jsonl")
    assert [r["success"] for r in rows].count(False) == 1  # the run has a failed task
    assert log.status == "success" and log.eval.task == "E1" and log.eval.run_id == run_dir.name
    prov = json.loads((run_dir / "provenance.json").read_text())
    assert log.eval.revision.commit == prov["environment"]["git_commit"]
    assert log.eval.metadata["rlmlab"]["provenance"]["plugins"] == prov["plugins"]
    # the writer stores a repeated long text once (attachment://<hash>); resolved, each message is whole again
    samples = {(s.id, s.epoch): resolve_sample_attachments(s) for s in log.samples}
    assert len(samples) == len(rows) == 3
    total_in = total_out = 0
    for row in rows:
        s = samples[(f"main/{row['task_id']}", row["rollout"] + 1)]
        traj = Trajectory.read_jsonl(run_dir / "trajectories" / row["trajectory_id"] / "trajectory.jsonl")
        calls = _calls(run_dir, row)
        assert s.input == traj.query and s.target == str(row["expected"])
        score = s.scores["numeric"]  # the judge's name
        assert score.value == ("C" if row["success"] else "I") and score.answer == row["answer"]
        assert score.explanation == row["rationale"]
        usage = s.model_usage["rlmlab/scripted"]
        assert (usage.input_tokens, usage.output_tokens) == (sum(c.input_tokens for c in calls),
                                                            sum(c.output_tokens for c in calls))
        assert usage.input_tokens > 0
        total_in += usage.input_tokens
        total_out += usage.output_tokens
        # the Transcript: every LM call as a model event (exact completion and tokens), every step's code run as a
        # tool event with its output, the sub-LM call inside that tool's span, then the score
        models = [e for e in s.events if e.event == "model"]
        tools = [e for e in s.events if e.event == "tool"]
        assert [(m.output.completion, m.output.usage.input_tokens, m.output.usage.output_tokens, m.role)
                for m in models] == [(c.completion, c.input_tokens, c.output_tokens, c.role) for c in calls]
        assert [m.input[-1].text for m in models] == [c.messages[-1]["content"] for c in calls]
        assert [(t.function, t.arguments["code"], t.result) for t in tools] == [
            ("python", it.code, it.output) for it in traj.iterations]
        assert len(tools) == 2 and "counted" in tools[0].result
        spans = {e.id: e for e in s.events if e.event == "span_begin"}
        sub = [m for m in models if m.role == "sub"]
        assert len(sub) == 1 and spans[sub[0].span_id].type == "tool" and spans[sub[0].span_id].name == "python"
        order = [e.event for e in s.events if e.event in ("model", "tool", "score")]
        assert order == ["model", "tool", "model", "model", "tool", "score"]  # main, code (sub inside), main, code
        assert s.messages[0].text == traj.query and s.messages[-1].text == row["answer"]
        assert [m.role for m in s.messages[1:3]] == ["assistant", "tool"]
        assert s.messages[1].tool_calls[0].arguments["code"] == traj.iterations[0].code
    usage = log.stats.model_usage["rlmlab/scripted"]
    assert (usage.input_tokens, usage.output_tokens) == (total_in, total_out)
    summary = json.loads((run_dir / "summary.json").read_text())
    (scores,) = log.results.scores
    assert scores.name == "numeric" and scores.metrics["accuracy"].value == pytest.approx(2 / 3)
    assert summary["main"]["pass_rate"] == pytest.approx(2 / 3, abs=1e-3)  # the run's own figure (rounded)


def test_rollouts_are_epochs_conditions_are_grouped_and_a_failed_run_is_a_sample_error(tmp_path, rust_file):
    from rlmlab.experiments import inspect_log

    text = rust_file.read_text()
    task = MemoryTask("async", "How many pub async fn are in file.rs?", text, "crate:tokio",
                      text.count("pub async fn"), "numeric", {"source_path": str(rust_file), "suite": "code"})
    two = run_experiment("E7", lm="scripted:probe", task_list=[task], runs_dir=tmp_path, progress=False, rollouts=2)
    log = inspect_log(two.run_dir)
    assert sorted((s.id, s.epoch) for s in log.samples) == [("handle/async", 1), ("handle/async", 2),
                                                           ("naive/async", 1), ("naive/async", 2)]
    assert log.eval.config.epochs == 2
    (scores,) = log.results.scores
    assert scores.scored_samples == 2  # the selected rollout of each task in each condition, as the pass rate
    assert {k: m.group for k, m in scores.metrics.items()} == {
        "accuracy": None, "stderr": None, "accuracy/naive": "accuracy by condition",
        "accuracy/handle": "accuracy by condition"}
    failed = run_experiment("E1", lm="scripted:fail", task_list=[task], runs_dir=tmp_path, progress=False)
    (sample,) = inspect_log(failed.run_dir).samples
    assert "fails every call" in sample.error.message and sample.scores["numeric"].value == "I"
    errors = [e.error for e in sample.events if e.event == "model"]
    assert errors and errors == [c.error for c in _calls(failed.run_dir,
                                                          read_results(failed.run_dir / "results.jsonl")[0])]


def test_a_run_written_before_rows_carried_the_expected_answer_takes_it_from_its_task_file(tmp_path):
    from rlmlab.experiments import inspect_log, load_suite

    run = run_experiment("E1", lm="scripted:probe", suite="arith", tasks=2, runs_dir=tmp_path, progress=False)
    results = run.run_dir / "results.jsonl"
    rows = read_results(results)
    results.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "expected"}) + "\n" for r in rows))
    expected = {t.id: t.expected for t in load_suite("arith", limit=2)}
    assert {s.id.split("/")[-1]: s.target for s in inspect_log(run.run_dir).samples} == {
        k: str(v) for k, v in expected.items()} and all(expected.values())


def test_export_from_the_cli_and_its_one_line_errors(run_dir, tmp_path, monkeypatch):
    out = tmp_path / "logs" / "e1.eval"
    done = CliRunner().invoke(main, ["experiment", "export", str(run_dir), "--format", "inspect", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert out.is_file() and f"inspect view --log-dir {out.parent}" in done.output
    bad = CliRunner().invoke(main, ["experiment", "export", str(run_dir), "--out", str(tmp_path / "e1.txt")])
    assert bad.exit_code == 2 and "expected a file name ending in .eval or .json" in bad.output
    assert len(bad.output.strip().splitlines()) == 1
    not_a_run = CliRunner().invoke(main, ["experiment", "export", str(tmp_path), "--out", str(out)])
    assert not_a_run.exit_code == 2 and "no results" in not_a_run.output
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # as if the extra were not installed
    missing = CliRunner().invoke(main, ["experiment", "export", str(run_dir), "--out", str(tmp_path / "x.eval")])
    assert missing.exit_code == 1 and "pip install 'rlmlab[inspect]'" in missing.output
    assert not (tmp_path / "x.eval").exists()


def test_the_listing_rule_is_inspect_view_s_own(run_dir, tmp_path):
    """``inspect view`` skips a .json log not named as Inspect names its own; the CLI says so, by the same rule."""
    from inspect_ai.log import list_eval_logs

    from rlmlab.experiments import listed_by_inspect_view

    names = ["run.json", "2026-11-25T02-21-45_E1.json", "run.eval"]
    for name in names:
        done = CliRunner().invoke(main, ["experiment", "export", str(run_dir), "--out", str(tmp_path / name)])
        assert done.exit_code == 0 and ("note: inspect view lists" in done.output) == (name == "run.json")
    listed = {Path(log.name).name for log in list_eval_logs(str(tmp_path))}
    assert listed == {n for n in names if listed_by_inspect_view(n)} == set(names[1:])


@pytest.mark.browser
def test_inspect_view_shows_an_exported_sample_s_model_call_and_code_step(run_dir, tmp_path):
    from browser_lab import chromium_page, need_chromium

    need_chromium()
    logs = tmp_path / "logs"
    export_inspect(run_dir, logs / "e1.eval")
    port = free_port()
    inspect = Path(sys.executable).with_name("inspect")
    # the viewer is a web app bundled in the wheel, served from loopback; its data folders go under tmp_path
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    log = (tmp_path / "view.log").open("w")
    server = subprocess.Popen([str(inspect), "view", "--log-dir", str(logs), "--host", "127.0.0.1",
                               "--port", str(port)], stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"inspect view did not start: {(tmp_path / 'view.log').read_text()[-2000:]}")
                time.sleep(0.5)
        with chromium_page() as page:
            offsite: list[str] = []
            page.on("request", lambda r: offsite.append(r.url) if not r.url.startswith(
                (url, "data:", "blob:")) else None)
            page.goto(url)
            if page.get_by_text("e1.eval").count():  # a listing of the folder: open the log
                page.get_by_text("e1.eval").first.click()
            page.get_by_text("main/off-by-one").first.click(timeout=60_000)
            page.get_by_role("tab", name="Transcript").click()
            page.get_by_text("TOOL: PYTHON").first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            assert "MODEL CALL (MAIN): RLMLAB/SCRIPTED" in body  # the step's LM call
            assert body.count("TOOL: PYTHON") == 2  # each step's code run...
            assert "counted" in body and "ctx_find(context" in body  # ...with its code and its output
            # llm_query's call, made while the code ran: the viewer shows a tool span holding model calls as a
            # sub-agent of its own
            assert "SUB-AGENT: PYTHON" in body
            page.get_by_role("tab", name="Scoring").click()
            assert "differs from the expected" in page.inner_text("body")  # the judge's rationale
            assert not offsite, offsite  # nothing fetched from the network
    finally:
        server.send_signal(signal.SIGINT)  # as Ctrl-C in its terminal
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            pytest.fail("inspect view did not stop on SIGINT")
        log.close()
