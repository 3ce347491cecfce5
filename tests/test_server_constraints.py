"""A step grammar reaches an OpenAI-compatible server through the LiteLLM call, in the field that server reads, and a
local server gets a placeholder key, never the environment's real one (issue 28, items 2 and 3).

The server here is a small HTTP endpoint on 127.0.0.1 that records each request's body and key, lists its models
as a llama.cpp, vLLM or Ollama server does, and answers like the scripted probe agent (or, asked for the probe
grammar, as a llama.cpp server that follows grammars does). The real llama_cpp.server is in test_openai_server.py.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

import pytest
from conftest import serving

pytestmark = pytest.mark.server  # HTTP servers on 127.0.0.1 and an E13 run through one (about 1 min): make test

from rlmlab.lm import PLACEHOLDER_KEY, ServerLM, can_constrain, constrained, make_lm
from rlmlab.lm._engines import format_fields
from rlmlab.lm._scripts import _probe, output_fields

GRAMMAR = 'root ::= "yes" | "no"'


def _reply(body: dict) -> str:
    if body.get("grammar") == 'root ::= "7q"':
        return "7q"
    if output_fields(body["messages"]):
        return format_fields(_probe(body["messages"]))
    return "no"


@pytest.fixture
def stub(request):
    """(base URL, requests): each request as (path, Authorization header, JSON body or None)."""
    owned_by, version, *title = getattr(request, "param", ("me", None))
    seen: list[tuple[str, str | None, dict | None]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, obj: dict, status: int = 200) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            seen.append((self.path, self.headers.get("Authorization"), None))
            if self.path == "/v1/models":
                self._send({"object": "list", "data": [{"id": "m", "object": "model", "owned_by": owned_by}]})
            elif self.path == "/version" and version:
                self._send({"version": version})
            elif self.path == "/openapi.json" and title:
                self._send({"openapi": "3.1.0", "info": {"title": title[0]}, "paths": {}})
            else:
                self._send({"error": "not found"}, 404)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.path, self.headers.get("Authorization"), body))
            text = _reply(body)
            self._send({"id": "c", "object": "chat.completion", "created": 0, "model": body.get("model"),
                        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": text}}]})

    with serving(Handler) as url:
        yield url, seen


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    from rlmlab.lm import _server

    monkeypatch.setattr(_server, "_DETECTED", {})  # each stub is a new server on a new port


def _posts(seen):
    return [body for path, _, body in seen if path == "/v1/chat/completions"]


@pytest.mark.parametrize("stub", [("me", None)], indirect=True)
def test_auto_finds_a_llama_cpp_server_by_one_grammar_probe_and_sends_the_grammar_in_grammar(stub):
    url, seen = stub
    lm = make_lm("openai/m", api_base=url)
    assert isinstance(lm, ServerLM) and lm.rlmlab_constrain == "llamacpp" and can_constrain(lm)
    assert len(_posts(seen)) == 1  # the probe, once
    with constrained(grammar=GRAMMAR):
        assert lm("Is it?") == ["no"]
    assert lm("Is it?") == ["no"]
    probe, inside, outside = _posts(seen)
    assert inside["grammar"] == GRAMMAR and inside["repeat_penalty"] == 1.0
    assert "grammar" not in outside and outside["repeat_penalty"] == 1.0  # sampled as the embedded model is
    make_lm("openai/m", api_base=url)
    assert len(_posts(seen)) == 3  # the server's kind is remembered: no second probe


@pytest.mark.parametrize("stub", [("me", None, "🦙 llama.cpp Python API")], indirect=True)
def test_auto_knows_llama_cpp_python_by_its_openapi_title_without_a_model_call(stub):
    url, seen = stub  # a model call would queue behind a busy server's generation
    assert make_lm("openai/m", api_base=url).rlmlab_constrain == "llamacpp" and not _posts(seen)


@pytest.mark.parametrize("stub", [("vllm", "0.11.0")], indirect=True)
def test_vllm_gets_structured_outputs_and_json_schemas(stub):
    url, seen = stub
    lm = make_lm("openai/m", api_base=url)
    assert lm.rlmlab_constrain == "vllm" and not _posts(seen)  # told by /v1/models: no model call to find out
    with constrained(grammar=GRAMMAR):
        lm("Is it?")
    with constrained(json_schema={"type": "object"}):
        lm("Is it?")
    first, second = _posts(seen)
    assert first["structured_outputs"] == {"grammar": GRAMMAR} and second["structured_outputs"] == {
        "json": {"type": "object"}}
    assert "repeat_penalty" not in first


@pytest.mark.parametrize("stub", [("vllm", "0.9.2")], indirect=True)
def test_an_older_vllm_gets_guided_grammar(stub):
    url, seen = stub
    lm = make_lm("openai/m", api_base=url)
    with constrained(grammar=GRAMMAR):
        lm("Is it?")
    assert lm.rlmlab_constrain == "vllm-guided" and _posts(seen)[0]["guided_grammar"] == GRAMMAR


@pytest.mark.parametrize("stub", [("library", None)], indirect=True)
def test_ollama_takes_json_schemas_only_so_a_grammar_run_is_free_and_says_so(stub, tmp_path):
    from rlmlab.executors import run_rlm

    url, seen = stub
    lm = make_lm("openai/m", api_base=url)
    assert lm.rlmlab_constrain == "ollama" and can_constrain(lm, "json_schema") and not can_constrain(lm)
    with constrained(json_schema={"type": "object"}):
        lm("Is it?")
    assert _posts(seen)[0]["response_format"]["json_schema"]["schema"] == {"type": "object"}
    traj = run_rlm("How many lines?", "a\nb\n", lm=lm, max_iters=2, runs_dir=tmp_path)
    assert traj.decoding == "free" and any("grammar ignored" in n for n in traj.notes)
    assert all("grammar" not in b for b in _posts(seen)[1:])


@pytest.mark.parametrize("stub", [("me", None)], indirect=True)
def test_constrain_none_sends_nothing_and_probes_nothing(stub):
    url, seen = stub
    lm = make_lm("openai/m", api_base=url, constrain="none")
    assert not isinstance(lm, ServerLM) and not can_constrain(lm) and not seen
    with pytest.raises(Exception, match="constrain: 'gbnf'"):
        make_lm("openai/m", api_base=url, constrain="gbnf")


def test_a_local_server_gets_a_placeholder_key_and_never_the_environments_real_one(stub, monkeypatch):
    url, seen = stub  # a new prompt each time: DSPy caches answers, and a cached one sends nothing
    # no key anywhere: the placeholder (today: LMNotConfiguredError before anything is sent)
    make_lm("openai/m", api_base=url, constrain="none")("hi 1")
    assert seen[-1][1] == f"Bearer {PLACEHOLDER_KEY}"
    # a real key in the environment is meant for the provider, not for a port on this machine
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-secret")
    make_lm("openai/m", api_base=url, constrain="none")("hi 2")
    assert seen[-1][1] == f"Bearer {PLACEHOLDER_KEY}"
    # ...unless the environment names this server as the provider's address too, or the key is passed
    monkeypatch.setenv("OPENAI_API_BASE", url)
    make_lm("openai/m", api_base=url, constrain="none")("hi 3")
    assert seen[-1][1] == "Bearer sk-real-secret"
    make_lm("openai/m", api_base=url, constrain="none", api_key="sk-passed")("hi 4")
    assert seen[-1][1] == "Bearer sk-passed"


def test_server_api_key_keeps_a_remote_servers_environment_key():
    from rlmlab.lm._server import is_loopback, server_api_key

    assert server_api_key("openai/m", "https://api.example.org/v1") == PLACEHOLDER_KEY  # no key set at all
    assert all(is_loopback(u) for u in ("http://localhost:8000/v1", "http://127.0.0.2:1/v1", "http://[::1]:8/v1"))
    assert not is_loopback("http://10.0.0.5:8000/v1") and not is_loopback("https://api.openai.com/v1")


@pytest.mark.parametrize("stub", [("me", None)], indirect=True)
def test_e13_grammar_templates_on_a_server_sends_the_step_grammar_with_the_templates(stub, tmp_path):
    """What went wrong in issue 28: grammar_templates sent the same prompts as free. Now every action request of
    grammar_templates carries the step grammar, the first with the injected templates in it; free sends none."""
    from rlmlab import PROJECT_ROOT
    from rlmlab.experiments import read_results, run_experiment
    from rlmlab.lm import read_calls

    url, seen = stub
    run = run_experiment("E13", lm="openai/m", lm_options={"api_base": url}, conditions=["free", "grammar_templates"],
                         tasks=1, suite="code", max_iters=2, runs_dir=tmp_path, progress=False)
    rows = {r["condition"]: r for r in read_results(run.run_dir / "results.jsonl")}
    assert rows["grammar_templates"]["decoding"] == "grammar" and rows["free"]["decoding"] == "free"
    bodies = _posts(seen)[1:]  # after the probe
    assert [b for b in bodies if "grammar" not in b], "free sent no request"
    first = next(b for b in bodies if "grammar" in b)["grammar"]
    pack = {json.loads(line)["id"]: json.loads(line) for line in
            (PROJECT_ROOT / "data/packs/step_templates.jsonl").read_text().splitlines() if line.strip()}
    injected = [pack[i]["template"] for i in rows["grammar_templates"]["injected"] if pack.get(i, {}).get("template")]
    assert injected, rows["grammar_templates"]["injected"]
    assert any(_literal_head(t) in first for t in injected), first[-1500:]
    # the prompts differ too: grammar decoding uses the compact action prompt
    calls = {c: read_calls(next(tmp_path.rglob(f"*-{c}-*/lm_calls.jsonl"))) for c in ("free", "grammar_templates")}
    assert calls["free"][0].messages != calls["grammar_templates"][0].messages


def _literal_head(template: str) -> str:
    """The template's text before its first slot or quote, as it appears inside the grammar's string literal."""
    import re

    return re.split(r"[{\"'\\]", template, maxsplit=1)[0][:20]


@pytest.mark.parametrize("stub", [("me", None)], indirect=True)
def test_lm_constrain_on_the_command_line_picks_the_field_without_asking_the_server(stub, tmp_path):
    from click.testing import CliRunner

    from rlmlab.cli import main

    url, seen = stub
    (tmp_path / "f.txt").write_text("a\nb\n")
    res = CliRunner().invoke(main, ["rlm", "run", "How many lines?", str(tmp_path / "f.txt"), "--lm", "openai/m",
                                    "--api-base", url, "--lm-constrain", "vllm", "--max-iters", "1",
                                    "--runs-dir", str(tmp_path / "runs")])
    assert "decoding: grammar (decoding: grammar sent to the server in each request (vllm))" in res.output, res.output
    assert not [p for p, _, _ in seen if p == "/v1/models"]  # told, not probed
    assert "grammar" in _posts(seen)[0]["structured_outputs"]
