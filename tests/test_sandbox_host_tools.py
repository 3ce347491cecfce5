"""Step code that reaches the host through the REPL's tools, which run on the host unconfined (a second red-team
round, written by a helper who never saw the sandbox's code; its draft corpus was tests/redteam_tools_corpus.py).

Three escapes it found, closed here and judged on the host (a host canary in the output, a host listener reached,
the session still answering): ``ast_query`` read any host path (the host's ``/proc/self/environ`` gave its API
keys, ``~/.ssh``, a project's ``.env``), ``sparql_query``'s ``SERVICE <url>`` made the host fetch a URL (a read
file's text went out in its query string), and a handle with a non-int ``n`` stopped the interpreter for good.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from redteam_host import Host, execute, sandbox_used

pytestmark = pytest.mark.sandbox

PROJECT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def confined(tmp_path_factory):
    from rlmlab.tools._sparql import attach_ontology

    host = Host(tmp_path_factory.mktemp("hosttools"))
    ws = host.workspace()
    attach_ontology(ws, str(PROJECT / "data" / "ontology" / "prov.ttl"))
    from rlmlab.executors import RLMLabInterpreter

    tools = {spec.name: ws.bound(spec.name) for spec in ws.registry}  # every registered tool, as a task binds them
    interp = RLMLabInterpreter(ws, tools=tools, step_timeout=20.0, sandbox="confined", sandbox_policy="required")
    interp.start()
    assert sandbox_used(interp) == "confined"
    yield host, interp
    interp.shutdown()
    host.close()


def _run(interp, code: str, **variables) -> str:
    return execute(interp, code, variables)


def _leaked(host: Host, out: str) -> list[str]:
    return [k for k, v in host.canaries.items() if v in out]


@pytest.mark.parametrize("target", ["canary_file", "ssh_key", "/proc/self/environ", "/etc/passwd"])
def test_ast_query_reads_no_host_file_but_rust_source(confined, target):
    host, interp = confined
    path = str(getattr(host, target)) if not target.startswith("/") else target
    out = _run(interp, "print(ast_query(P, '(_) @s', k=100))", P=path)
    assert not _leaked(host, out) and "not a Rust source file" in out, out[:300]
    assert _run(interp, "print(1 + 1)").strip() == "2"  # the session goes on


def test_ast_query_follows_no_link_and_reads_only_beneath_the_roots(confined, tmp_path):
    host, interp = confined
    link = Path(interp.scratch_dir) / "innocent.rs"
    link.unlink(missing_ok=True)
    os.symlink(host.canary_file, link)
    out = _run(interp, "print(ast_query(P, '(_) @s', k=100))", P=str(link))
    assert not _leaked(host, out) and "symbolic link" in out, out[:300]
    rust = tmp_path / "lib.rs"  # a Rust file outside the run's roots (issue 52: it was read before)
    rust.write_text("pub fn visible() -> u8 { 1 }\n")
    out = _run(interp, "print(ast_query(P, '(function_item name: (identifier) @n)'))", P=str(rust))
    assert "outside the directories this run may read" in out, out[:300]
    (Path(interp.scratch_dir) / "lib.rs").write_text(rust.read_text())
    out = _run(interp, "print(ast_query('lib.rs', '(function_item name: (identifier) @n)')['matches'][0]['captures'])")
    assert "visible" in out  # a Rust file in scratch is read by path


def test_sparql_service_fetches_nothing_from_the_host(confined):
    host, interp = confined
    before = host.tcp.count
    url = f"http://127.0.0.1:{host.tcp.address[1]}/sparql"
    out = _run(interp, "print(sparql_query('SELECT * WHERE { SERVICE <' + URL + '> { ?s ?p ?o } } LIMIT 1'))",
               URL=url)
    assert host.tcp.count == before, "the host fetched the SERVICE URL"
    assert "SERVICE" in out and "network" in out, out[:300]
    out = _run(interp, "print(sparql_query('SELECT ?c WHERE { ?c a owl:Class } LIMIT 2')['rows'])")
    assert out.strip() == "2"  # local queries still answer


@pytest.mark.parametrize("n", ["'zz'", "[1]", "None", "True"])
def test_a_malformed_handle_is_the_steps_error_and_the_session_goes_on(confined, n):
    host, interp = confined
    out = _run(interp, f"print(ctx_peek({{'__blobref__': True, 'key': 'deploy_notes', 'n': {n}}}))")
    assert "expected an int" in out and not _leaked(host, out), out[:300]
    assert _run(interp, "print(1 + 1)").strip() == "2"


# -- blobs are the run's own, and what a step adds to the host is bounded (the round's "still open" four) --------


def test_a_step_reads_only_its_own_blobs_not_another_runs_in_the_same_store(confined):
    host, interp = confined
    out = _run(interp, "try:\n    ctx_peek('no-such-key')\nexcept Exception as e:\n    print(e)")
    listed = out.split("known keys: ")[1].split(", ")
    assert "context" in listed and "deploy_notes" not in out, out[:300]  # the listing is the run's own
    for code in ("print(ctx_peek('deploy_notes', n=200))", "print(ctx_slice(BlobRef('deploy_notes', 1), 0, 400))",
                 "print(ctx_find({'__blobref__': True, 'key': 'deploy_notes', 'n': 5}, 'notes'))",
                 "print(ast_query(BlobRef('deploy_notes', 9), '(_) @s'))"):
        out = _run(interp, code)
        assert "unknown blob key 'deploy_notes'" in out and not _leaked(host, out), (code, out[:300])
    assert host.canaries["BLOB"] in host._ws.store.base.get("deploy_notes")  # it is in the store file all along
    assert "this run's own context" in _run(interp, "print(ctx_peek('context', n=100)['preview'])")
    out = _run(interp, "r = blob('made by the step ' * 3)\nprint(ctx_peek(r.key, n=16)['preview'])")
    assert out.strip() == "made by the step", out  # and what it stores itself


def _file_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in (path, Path(str(path) + "-wal")) if p.exists()) / 2**20


def test_blob_growth_stops_at_the_runs_quota(confined):
    host, interp = confined
    caps = host._ws.caps
    saved = caps.blob_max_chars, caps.blob_quota_chars
    caps.blob_max_chars, caps.blob_quota_chars = 1_000_000, 3_000_000
    host._ws.usage.clear()
    before = _file_mb(host.stores["BLOB"])
    try:
        out = _run(interp, "print(blob('x' * 1_000_001))")
        assert "over the cap of 1000000" in out, out[:300]
        out = _run(interp, "n = 0\ntry:\n    for i in range(10):\n        blob(str(i) * 1_000_000); n += 1\n"
                           "except Exception as e:\n    print(n, e)")
        assert out.startswith("3 ") and "blob_quota_chars" in out, out[:300]
        assert _run(interp, "print(blob('0' * 1_000_000).n)").strip() == "1000000"  # the same payload again: free
    finally:
        caps.blob_max_chars, caps.blob_quota_chars = saved
    assert _file_mb(host.stores["BLOB"]) - before < 4.5


def test_event_log_and_agenda_stop_at_their_caps(confined):
    host, interp = confined
    host._ws.usage.clear()
    out = _run(interp, "n = 0\ntry:\n    while True:\n        event_log({'x': 'y' * 7900}); n += 1\n"
                       "except Exception as e:\n    print(n, e)")
    n = int(out.split()[0])
    assert 240 <= n <= 253 and "event_log_quota_chars" in out, out[:300]  # 2,000,000 characters of ~7,910
    out = _run(interp, "n = 0\ntry:\n    while True:\n        agenda('add', 'x'); n += 1\n"
                       "except Exception as e:\n    print(n, e)")
    assert out.startswith("200 ") and "agenda_max" in out, out[:300]
    assert _run(interp, "print(agenda('list')['open'])").strip() == "200"
