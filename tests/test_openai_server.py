"""The LiteLLM path against an OpenAI-compatible server on 127.0.0.1 (what vLLM, ollama and llama.cpp's server
speak): an RLM run, an experiment and a teach run from the command line, with the server's token counts recorded.

The server here is a small ``/v1/chat/completions`` endpoint that answers like the scripted probe agent and
reports its own usage numbers, so the test checks that what the server counted is what rlmlab recorded.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

import pytest
from conftest import serving

pytestmark = pytest.mark.server  # three CLI runs through LiteLLM (about 30 s): make test, not make check

from rlmlab import PROJECT_ROOT
from rlmlab.lm._engines import format_fields
from rlmlab.lm._scripts import _probe, output_fields


def _reply(messages: list[dict]) -> str:
    if output_fields(messages):  # a DSPy step (RLM action, extract): the probe agent's fields
        return format_fields(_probe(messages))
    return "I add the numbers.\nAnswer: 4"  # a plain prompt (the teach learner)


@pytest.fixture
def server():
    """(base URL, usage list): each reply's usage as the server reported it."""
    usages: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            text = _reply(body["messages"])
            prompt = sum(len(str(m.get("content", "")).split()) for m in body["messages"])
            usage = {"prompt_tokens": prompt, "completion_tokens": len(text.split()),
                     "total_tokens": prompt + len(text.split())}
            usages.append(usage)
            data = json.dumps({"id": f"c{len(usages)}", "object": "chat.completion", "created": 0,
                               "model": body.get("model"), "usage": usage, "choices": [
                                   {"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    with serving(Handler) as url:
        yield url, usages


class _Result:
    def __init__(self, res):
        self.returncode, self.stdout, self.stderr = res.exit_code, res.output, res.stderr


def _cli(*args: str, env: dict | None = None) -> _Result:
    """The rlmlab command, in this process (the LiteLLM path is the same; no interpreter start-up per run)."""
    from click.testing import CliRunner

    from rlmlab.cli import main

    return _Result(CliRunner().invoke(main, list(args), env={"OPENAI_API_KEY": "not-needed", **(env or {})}))


def test_rlm_run_on_an_openai_compatible_server_records_its_token_counts(server, tmp_path, rust_file):
    from rlmlab.executors import TRAJECTORY_FILE, Trajectory
    from rlmlab.lm import CALLS_FILE, read_calls

    url, usages = server
    proc = _cli("rlm", "run", "How many pub async fn?", str(rust_file), "--lm", "openai/stub-model", "--api-base", url,
                "--max-iters", "3", "--runs-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    [run] = [d for d in tmp_path.iterdir() if (d / TRAJECTORY_FILE).exists()]
    traj = Trajectory.read_jsonl(run / TRAJECTORY_FILE)
    assert traj.answer == "unknown" and traj.lm == "openai/stub-model" and traj.lm_calls == len(usages) == 2
    assert traj.input_tokens == sum(u["prompt_tokens"] for u in usages) > 0
    assert traj.output_tokens == sum(u["completion_tokens"] for u in usages) > 0
    calls = read_calls(run / CALLS_FILE)
    assert [c.input_tokens for c in calls] == [u["prompt_tokens"] for u in usages]
    assert "Your input fields are" in calls[0].messages[0]["content"] and "SUBMIT" in calls[1].completion


def test_an_experiment_on_an_openai_compatible_server_records_tokens_per_task(server, tmp_path):
    from rlmlab.experiments import read_results

    url, usages = server
    proc = _cli("experiment", "run", "E1", "--suite", "arith", "--tasks", "1", "--max-iters", "3", "--lm",
                "openai/stub-model", "--api-base", url, "--runs-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    [row] = read_results(next(tmp_path.glob("E1-*")) / "results.jsonl")
    assert row["lm"] == "openai/stub-model" and row["error"] is None and row["answer"] == "unknown"
    assert row["input_tokens"] == sum(u["prompt_tokens"] for u in usages) > 0 and row["lm_calls"] == len(usages)


def test_a_teach_run_on_an_openai_compatible_server_records_tokens(server, tmp_path):
    from rlmlab.teach import read_traces

    url, usages = server
    out = tmp_path / "traces.json"
    # LiteLLM reads OPENAI_API_BASE for openai/ models: the way to point any command at the server
    proc = _cli("teach", "run", "--provider", "openai/stub-model", "--dataset", str(PROJECT_ROOT / "data/math20.csv"),
                "--limit", "2", "--max-turns", "1", "--mode", "reference", "--out", str(out),
                env={"OPENAI_API_BASE": url})
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert len(read_traces(tmp_path / "traces.reference.rts.json")) == 2
    summary = json.loads((tmp_path / "summary.json").read_text())
    # two items, one turn each; the arms share the first turn (memoised), so each arm counts the same two calls
    assert len(usages) == 2 and summary["provider"] == "openai/stub-model"
    assert [r["tokens"] for r in summary["rows"]] == [sum(u["total_tokens"] for u in usages)] * 3


@pytest.fixture(scope="module")
def llama_server():
    """llama-cpp-python's own OpenAI-compatible server serving the embedded SmolLM2 on 127.0.0.1."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    from rlmlab.lm import default_gguf_path

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(default_gguf_path()),
                             "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
                             "--n_ctx", "8192", "--verbose", "false"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as resp:
                if resp.status == 200:
                    break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {proc.stderr.read()[-2000:]}")
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail("llama_cpp.server did not answer within 120 s")
            time.sleep(0.3)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.mark.local_model
def test_e13_grammar_templates_through_llama_cpp_server_matches_the_in_process_run(llama_server, tmp_path,
                                                                                    monkeypatch):
    """Issue 28 item 2: the step grammar and the injected templates reach llama_cpp.server, so a constrained E13
    run through it sends the prompts the in-process run sends and gets the same replies at temperature 0, none
    off-format. In-process decodes with llama.cpp's GBNF sampler here, as the server does (the default engine,
    llguidance, admits slightly different tokens, so greedy paths can part)."""
    from rlmlab.experiments import read_results, run_experiment
    from rlmlab.lm import read_calls

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    common = dict(conditions=["grammar_templates"], tasks=1, suite="code", max_iters=3, progress=False)
    runs = {"served": run_experiment("E13", lm="openai/smollm2", lm_options={"api_base": llama_server},
                                     runs_dir=tmp_path / "served", **common),
            "local": run_experiment("E13", lm="local", lm_options={"constraint_engine": "gbnf"},
                                    runs_dir=tmp_path / "local", **common)}
    rows = {k: read_results(r.run_dir / "results.jsonl")[0] for k, r in runs.items()}
    calls = {k: read_calls(next(r.run_dir.rglob("lm_calls.jsonl"))) for k, r in runs.items()}
    for k, row in rows.items():
        assert row["error"] is None and row["decoding"] == "grammar" and row["salvaged"] == 0, (k, row)
        assert calls[k] and all(c.error is None for c in calls[k]), (k, [c.error for c in calls[k]])
    assert [c.messages for c in calls["served"]] == [c.messages for c in calls["local"]]  # templates injected alike
    assert [c.completion for c in calls["served"]] == [c.completion for c in calls["local"]]
    assert rows["served"]["answer"] == rows["local"]["answer"]
    traj = next(runs["served"].run_dir.rglob("trajectory.jsonl")).read_text()
    assert "grammar sent to the server in each request (llamacpp)" in traj


def _readme_recipe() -> tuple[str, str]:
    """docs/models.md's two recipe lines: the server start and the rlmlab command that uses it."""
    import re

    text = (PROJECT_ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    [block] = [b for b in blocks if "llama_cpp.server" in b]
    lines = [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]
    [start] = [ln for ln in lines if "-m llama_cpp.server" in ln]
    [command] = [ln for ln in lines if ln.startswith(".venv/bin/rlmlab ")]
    return start, command


@pytest.mark.local_model
def test_the_readme_server_recipe_runs_as_written_without_a_key(tmp_path):
    """Issue 28 item 3: docs/models.md's server command and rlmlab command, run as written with OPENAI_API_KEY unset,
    finish the run with no context-window error. ``.venv/bin/`` is this interpreter's; the port moves only if
    8000 is taken."""
    import os
    import socket
    import subprocess
    import sys
    import time
    import urllib.request
    from pathlib import Path

    from rlmlab.executors import TRAJECTORY_FILE, Trajectory
    from rlmlab.lm import CALLS_FILE, read_calls

    start, command = _readme_recipe()
    assert "--n_ctx" in start and "OPENAI_API_KEY" not in command
    port = 8000
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    bin_dir = str(Path(sys.executable).parent) + "/"
    start = start.replace(".venv/bin/", bin_dir).replace("--port 8000", f"--port {port}")
    command = command.replace(".venv/bin/", bin_dir).replace(":8000/", f":{port}/")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL")}
    env["PYTHONPATH"] = os.pathsep.join([str(PROJECT_ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    log = tmp_path / "server.log"  # a file, not a pipe: the model-loading log would fill a pipe and stall it
    with open(log, "w") as sink:
        server = subprocess.Popen(["bash", "-c", f"exec {start}"], cwd=tmp_path, env=env, stdout=sink, stderr=sink)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                    break
            except OSError:
                if server.poll() is not None:
                    pytest.fail(f"docs/models.md's server command exited: {log.read_text()[-2000:]}")
                if time.monotonic() > deadline:
                    pytest.fail(f"docs/models.md's server command gave no answer in 180 s: {log.read_text()[-2000:]}")
                time.sleep(0.3)
        proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=1800)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "ContextWindowExceeded" not in out and "LMNotConfigured" not in out, out[-3000:]
    [run] = [d for d in (tmp_path / "runs").iterdir() if (d / TRAJECTORY_FILE).exists()]
    traj = Trajectory.read_jsonl(run / TRAJECTORY_FILE)
    calls = read_calls(run / CALLS_FILE)
    assert traj.error is None and traj.answer is not None and traj.decoding == "grammar", out[-3000:]
    assert calls and all(c.error is None for c in calls) and len(calls) == traj.lm_calls
    # the LiteLLM path records the server's own usage per call, and the run's total is their sum
    assert traj.lm == "openai/smollm2" and all(c.input_tokens > 500 and c.output_tokens > 0 for c in calls)
    assert traj.input_tokens == sum(c.input_tokens for c in calls)
    assert calls[0].messages[0]["content"] and calls[0].completion  # the prompt and reply as sent and received


def test_a_rerun_reaches_the_server_again_unless_the_cache_is_asked_for_and_then_says_so(server, tmp_path,
                                                                                          monkeypatch, rust_file):
    """Issue 30: DSPy's on-disk cache answered a repeated `rlm run` with 0 tokens in 0.1 s and nothing said so.
    By default every call is sent (the second run counts what the first counted); with cache=True the repeated
    calls are marked cached and the run's notes say their tokens are not counted."""
    import dspy
    from dspy.clients.cache import Cache

    from rlmlab.executors import TRAJECTORY_FILE, Trajectory
    from rlmlab.lm import CALLS_FILE, make_lm, read_calls

    monkeypatch.setattr(dspy, "cache", Cache(enable_disk_cache=True, enable_memory_cache=True,
                                             disk_cache_dir=str(tmp_path / "dspy-cache")))
    url, usages = server

    def run(where, *extra):
        proc = _cli("rlm", "run", "How many pub async fn?", str(rust_file), "--lm", "openai/stub-model",
                    "--api-base", url, "--max-iters", "3", "--runs-dir", str(where), *extra)
        assert proc.returncode == 0, proc.stderr + proc.stdout
        [run_dir] = [d for d in where.iterdir() if (d / TRAJECTORY_FILE).exists()]
        return Trajectory.read_jsonl(run_dir / TRAJECTORY_FILE), read_calls(run_dir / CALLS_FILE)

    first, _ = run(tmp_path / "a")
    sent = len(usages)
    again, calls = run(tmp_path / "b")
    assert len(usages) == 2 * sent and again.input_tokens == first.input_tokens > 0
    assert not any(c.cached for c in calls) and not any("cache" in n for n in again.notes)

    from rlmlab.executors import run_rlm

    text = rust_file.read_text()
    trajs = [run_rlm("How many pub async fn?", text, lm=make_lm("openai/stub-model", api_base=url, cache=True),
                     max_iters=3, runs_dir=tmp_path / f"c{i}") for i in range(2)]
    assert len(usages) == 3 * sent  # the second cached run sent nothing
    cached = read_calls(next((tmp_path / "c1").rglob(CALLS_FILE)))
    assert cached and all(c.cached for c in cached)
    assert not any(c.cached for c in read_calls(next((tmp_path / "c0").rglob(CALLS_FILE))))
    assert any(f"{len(cached)} of {len(cached)} LM calls were answered from DSPy's cache" in n for n in trajs[1].notes)


@pytest.mark.local_model
def test_a_depth_2_runs_token_totals_equal_what_llama_cpp_server_reported(llama_server, tmp_path, monkeypatch):
    """Issue 54 item 3: every LM call of a recursive run's tree (the root's, its rlm_query child's) reaches the real
    llama_cpp.server through a relay that sums the usage the server reported; the run's totals, its lm_calls.jsonl
    and its iterations' figures all equal it. The relay passes every request and every reply through unchanged but
    one: the root's first step is rewritten to call rlm_query (the 135M model would not choose to recurse), keeping
    the server's usage for it. Every other completion is the model's own."""
    import urllib.request
    from http.server import BaseHTTPRequestHandler

    from rlmlab.executors import run_rlm
    from rlmlab.lm import CALLS_FILE, make_lm, read_calls

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    usages: list[dict] = []
    step = ("[[ ## reasoning ## ]]\nAsk a sub-agent about the first half.\n\n[[ ## code ## ]]\n"
            "print(rlm_query('What is the vault code?', ctx_chunks(context, 2)[0]))\n\n[[ ## completed ## ]]")

    class Relay(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            req = urllib.request.Request(llama_server + self.path.removeprefix("/v1"), data=body,
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=300) as resp:
                reply = json.loads(resp.read())
            usages.append(reply["usage"])
            if len(usages) == 1:
                reply["choices"][0]["message"]["content"] = step
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    text = "alpha\n" * 30 + "the vault code is 7291\n" + "beta\n" * 30
    with serving(Relay) as url:
        lm = make_lm("openai/smollm2", api_base=url, max_tokens=48)
        traj = run_rlm("What is the vault code?", text, lm=lm, runs_dir=tmp_path, max_depth=2, max_iters=1,
                       decoding="free", prompt="compact")  # the short action prompt: fewer tokens to prefill
    assert traj.error is None, traj.error
    [child] = traj.children
    calls = read_calls(tmp_path / traj.run_id / CALLS_FILE)
    assert len(calls) == len(usages) == traj.lm_calls and {c.depth for c in calls} == {0, 1}
    served_in = sum(u["prompt_tokens"] for u in usages)
    served_out = sum(u["completion_tokens"] for u in usages)
    assert (traj.input_tokens, traj.output_tokens) == (served_in, served_out) and served_in > 0
    assert [(c.input_tokens, c.output_tokens) for c in calls] == [(u["prompt_tokens"], u["completion_tokens"])
                                                                  for u in usages]
    assert child.input_tokens == sum(c.input_tokens for c in calls if c.run_id == child.run_id) > 0
    own = [c for c in calls if c.run_id == traj.run_id and c.step == 1]
    assert traj.iterations[0].input_tokens == sum(c.input_tokens for c in own)
