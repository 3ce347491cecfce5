"""Run tests/redteam_tools_corpus.py's attempts under the `confined` backend; one line per attempt.

    .venv/bin/python tests/redteam_tools_run.py [NAME ...]

It re-executes itself once with canary API keys in its *exec-time* environment (as a shell `export` would put
them), makes every target a canary in a fresh temp dir (removed at the end), and judges each attempt on the host.
"""

from __future__ import annotations

import http.server
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from redteam_host import ENV_NAMES, Host, canary  # noqa: E402

if os.environ.get("RT_TOOLS_CHILD") != "1":
    env = dict(os.environ, RT_TOOLS_CHILD="1")
    for i, name in enumerate(ENV_NAMES):
        env[name] = canary("ENV" + str(i))
    os.execve(sys.executable, [sys.executable, *sys.argv], env)

from redteam_tools_corpus import ATTEMPTS, PRELUDE  # noqa: E402


class _Log(http.server.BaseHTTPRequestHandler):
    log: list[str] = []

    def do_GET(self):  # noqa: N802
        _Log.log.append(self.requestline)
        self.send_response(500)
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *a):
        pass


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(str(path) + "-wal")) if p.exists())


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main() -> None:
    only = set(sys.argv[1:])
    root = Path(tempfile.mkdtemp(prefix="rt-tools-"))
    cwd = root / "host-cwd"
    cwd.mkdir()
    cwd_canary = canary("CWD")
    (cwd / ".env").write_text(f"OPENAI_API_KEY={cwd_canary}\n")
    os.chdir(cwd)  # the host's cwd (a real run: the project dir)
    host = Host(root / "host")
    for name in ENV_NAMES:
        host.canaries[name] = os.environ[name]
    ws = host.workspace()
    from rlmlab.executors import RLMLabInterpreter
    from rlmlab.tools import attach_ontology

    attach_ontology(ws, str(Path(__file__).resolve().parents[1] / "data" / "ontology" / "prov.ttl"))  # a run with an ontology (the SPARQL suite)
    tools = {spec.name: ws.bound(spec.name) for spec in ws.registry}  # as rlmlab.learning._recall does
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Log)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    passwd_line = Path("/etc/passwd").read_text().splitlines()[0]
    interps: dict[float, RLMLabInterpreter] = {}

    def interp_for(t: float) -> RLMLabInterpreter:
        if t not in interps:
            it = RLMLabInterpreter(ws, tools=tools, output_fields=[{"name": "answer", "type": "str"}],
                                   step_timeout=t, sandbox="confined", sandbox_policy="required")
            it.start()
            assert it.sandbox_used == "confined", it.sandbox_used
            interps[t] = it
        return interps[t]

    def state() -> dict:
        return {"counts": host.counts(), "blob_db": _size(host.stores["BLOB"]), "mem_db": _size(host.stores["MEMDB"]),
                "rss": _rss(), "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                "mem_items": len(host.memory.items()), "agenda": len(ws.extras.get("agenda", []))}

    print(f"{'attempt':28} {'result':8} evidence")
    try:
        for a in ATTEMPTS:
            if only and a.name not in only:
                continue
            interp = interp_for(a.step_timeout)
            variables = {**host.variables(), "SCRATCH": str(interp.scratch_dir), "HTTP_PORT": httpd.server_address[1]}
            ctx = SimpleNamespace(host=host, canaries=host.canaries, output="", raised=None, before=state(),
                                  after=None, http_log=_Log.log, cwd_canary=cwd_canary, wall=0.0, extra={},
                                  passwd_line=passwd_line, result_type="", result_repr="")
            _Log.log = []
            ctx.http_log = _Log.log
            t0 = time.monotonic()
            try:
                result = interp.execute(PRELUDE + a.code, variables)
                ctx.result_type, ctx.result_repr = type(result).__name__, repr(result)
                ctx.output = result if isinstance(result, str) else repr(result)
            except Exception as exc:  # noqa: BLE001
                ctx.raised = exc
                ctx.output = f"[raised] {type(exc).__name__}: {exc}"
            ctx.wall = time.monotonic() - t0
            time.sleep(0.2)
            ctx.after = state()
            ctx.http_log = list(_Log.log)
            if a.name == "mem_add_poison":
                ctx.extra["poison_found"] = any("rt-poison" in it.content for it in
                                                (host.memory.get(h.id) for h in host.memory.search("rust task", 6)))
            if a.name == "protocol_line_forgery":
                ctx.extra["printed_missing"] = ctx.output.count("FORGED") < 10 and "MARK-END" in ctx.output
            if a.name == "ctx_slice_lines_amplify":
                ctx.extra["sent_mb"] = 24
            try:
                evidence = a.check(ctx)
            except Exception as exc:  # noqa: BLE001
                evidence = None
                ctx.output += f"\n[check failed: {exc!r}]"
            try:
                alive = interp.execute("print(6 * 7)").strip() == "42"
            except Exception:  # noqa: BLE001
                alive = False
            if not alive:
                interp.shutdown()
                interps.pop(a.step_timeout, None)
            verdict = ("DESIGN" if a.design else "ESCAPED") if evidence else "held"
            note = evidence or ("output: " + " ".join(ctx.output.split())[:150])
            print(f"{a.name:28} {verdict:8} {note}{'' if alive else ' [REPL did not answer next step]'}",
                  flush=True)
            if os.environ.get("RT_VERBOSE"):
                print("   ", ctx.output[:3000].replace("\n", "\n    "))
            host.restore_stores()
            host.ensure_helper()
    except Exception:
        traceback.print_exc()
    finally:
        for it in interps.values():
            it.shutdown()
        httpd.shutdown()
        host.close()
        os.chdir("/")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
