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


def test_ast_query_follows_a_link_to_where_it_leads(confined, tmp_path):
    host, interp = confined
    link = Path(interp.scratch_dir) / "innocent.rs"
    link.unlink(missing_ok=True)
    os.symlink(host.canary_file, link)
    out = _run(interp, "print(ast_query(P, '(_) @s', k=100))", P=str(link))
    assert not _leaked(host, out) and "not a Rust source file" in out, out[:300]
    rust = tmp_path / "lib.rs"
    rust.write_text("pub fn visible() -> u8 { 1 }\n")
    out = _run(interp, "print(ast_query(P, '(function_item name: (identifier) @n)')['matches'][0]['captures'])",
               P=str(rust))
    assert "visible" in out  # a Rust file by path still works


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
