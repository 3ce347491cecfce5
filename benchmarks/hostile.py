"""Hostile inputs to the REPL tools: worst-case wall time and peak memory of each call.

Each case runs in a fresh Python process so its peak resident memory (host, and the tool's forked child) is its
own. Run on an idle machine: ``.venv/bin/python benchmarks/hostile.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys

CASES = {
    "ctx_find (a+)+$ on 41 chars": ("ctx_find", "'a' * 41 + '!'", ("(a+)+$",)),
    "ctx_find (a|aa)+$ on 49 chars": ("ctx_find", "'a' * 48 + 'b'", ("(a|aa)+$",)),
    "ctx_find 'x' on 50 MB of newlines": ("ctx_find", "'\\n' * 50_000_000", ("x",)),
    "ctx_find (?m)^ on 50 MB of newlines": ("ctx_find", "'\\n' * 50_000_000", ("(?m)^",)),
    "ast_query on 50 MB of Rust": ("ast_query", "'fn a() { let x = 1; }\\n' * 2_300_000",
                                   ("(function_item name: (identifier) @n)",)),
    "sparql_query ?a ?b ?c . ?d ?e ?f ORDER BY": ("sparql_query", None,
                                                  ("SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?a ?d LIMIT 1",)),
}

CHILD = r"""
import json, resource, sys, time
from rlmlab.tools import Workspace
from rlmlab.tools._sparql import attach_ontology
name, payload, args = json.loads(sys.argv[1])
ws = Workspace()
call = []
if payload is not None:
    call.append(ws.store.put(eval(payload)))
else:
    attach_ontology(ws, "data/ontology/prov.ttl")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
try:
    out = ws.call(name, *call, *args)
    outcome = f"total {out['total']}" if "total" in out else f"rows {out['rows']}"
    if out.get("total_complete") is False:
        outcome += " (lower bound)"
except Exception as exc:
    outcome = f"{type(exc).__name__}: {str(exc)[:70]}"
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "host_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "payload_mb": before / 1024,
                  "child_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, "outcome": outcome}))
"""


def main() -> None:
    print(f"{'case':42} {'wall s':>7} {'host MB':>8} {'child MB':>8}  outcome")
    for label, (name, payload, args) in CASES.items():
        res = subprocess.run([sys.executable, "-c", CHILD, json.dumps([name, payload, args])],
                             capture_output=True, text=True, timeout=600)
        if res.returncode:
            print(f"{label:42} failed: {res.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(res.stdout.strip().splitlines()[-1])
        print(f"{label:42} {r['wall']:7.2f} {r['host_mb']:8.0f} {r['child_mb']:8.0f}  {r['outcome']}")


if __name__ == "__main__":
    main()
