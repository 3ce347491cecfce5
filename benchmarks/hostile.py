"""Hostile inputs to the REPL tools: worst-case wall time and peak memory of each call.

Each case runs in a fresh Python process so its peak resident memory (host, and the tool's forked child) is its
own. Run on an idle machine: ``.venv/bin/python benchmarks/hostile.py [--json PATH] [--smoke]``. ``--smoke`` (make
check) runs one small, benign call of each tool instead, to check the script itself.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]

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
SMOKE_CASES = {
    "ctx_find 'x' on 1 kB of newlines": ("ctx_find", "'\\n' * 1000 + 'x'", ("x",)),
    "ast_query on 2 kB of Rust": ("ast_query", "'fn a() { let x = 1; }\\n' * 100",
                                  ("(function_item name: (identifier) @n)",)),
    "sparql_query LIMIT 1": ("sparql_query", None, ("SELECT * WHERE { ?a ?b ?c } LIMIT 1",)),
}

CHILD = r"""
import json, resource, sys, time
from rlmlab.tools import Workspace
from rlmlab.tools._sparql import attach_ontology
name, payload, args, ontology = json.loads(sys.argv[1])
ws = Workspace()
call = []
if payload is not None:
    call.append(ws.store.put(eval(payload)))
else:
    attach_ontology(ws, ontology)
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="PATH", help="default runs/bench/hostile.json in the checkout")
    ap.add_argument("--smoke", action="store_true", help="one small call per tool, seconds (make check); --json "
                    "defaults to runs/bench_smoke/hostile.json")
    args = ap.parse_args(argv)
    path = Path(args.json or ("runs/bench_smoke/hostile.json" if args.smoke else PROJECT / "runs/bench/hostile.json"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT), os.environ.get("PYTHONPATH")]))}
    ontology = str(PROJECT / "data" / "ontology" / "prov.ttl")
    results, failed = {}, 0
    print(f"{'case':42} {'wall s':>7} {'host MB':>8} {'child MB':>8}  outcome")
    for label, (name, payload, call_args) in (SMOKE_CASES if args.smoke else CASES).items():
        res = subprocess.run([sys.executable, "-c", CHILD, json.dumps([name, payload, call_args, ontology])],
                             capture_output=True, text=True, timeout=600, env=env)
        if res.returncode:
            failed += 1
            results[label] = {"failed": res.stderr.strip().splitlines()[-1:]}
            print(f"{label:42} failed: {results[label]['failed']}")
            continue
        r = results[label] = json.loads(res.stdout.strip().splitlines()[-1])
        print(f"{label:42} {r['wall']:7.2f} {r['host_mb']:8.0f} {r['child_mb']:8.0f}  {r['outcome']}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"smoke": args.smoke, "cases": results}, indent=1), encoding="utf-8")
    print(f"wrote {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
