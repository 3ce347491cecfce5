"""The scorecard in one process on every core against one process per core (``rlmlab scorecard --procs``), side by side.

The embedded model decodes one call at a time. One process gives llama.cpp both cores; ``--procs 2`` runs two
processes pinned to one core each, each with its own model, claims that share an arm in the same process. This
runs the same ``rlmlab scorecard --quick`` (the embedded SmolLM2-135M, ``--n`` items, the claims in ``--claims``,
default all) once each way, in turn, into fresh folders under runs/bench/scorecard_procs/, and prints each way's
wall seconds, their ratio, and whether every row's n, difference and verdict is the same both ways. Run it on an
idle machine: the two ways are measured in the same run so their ratio means something on a noisy one.

``--smoke`` (make check): the scripted LM by name, n=1, two claims with no arm in common, procs 1 and 2, each way's
``rlmlab scorecard`` run in this process (procs 2 still starts its two children); checks the rows match and writes
the JSON (under runs/bench_smoke/ of the working folder).
Run:  .venv/bin/python benchmarks/scorecard_procs.py [--n 4] [--claims s004.*] [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _way(procs: int, lm: str, n: int, claims: str | None, out: Path, here: bool = False) -> dict:
    """One way's rows and wall seconds: ``rlmlab scorecard`` in a process of its own, or in this one (``here``: the
    smoke, which saves an interpreter's imports per way and times nothing)."""
    shutil.rmtree(out, ignore_errors=True)
    args = ["scorecard", "--lm", lm, "--n", str(n), "--out", str(out), "--procs", str(procs), "--json"] + \
           (["--quick"] if lm == "local" else []) + (["--claims", claims] if claims else [])
    t0 = time.perf_counter()
    if here:
        from rlmlab.cli import main as cli

        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            cli.main(args, standalone_mode=False)
        stdout = printed.getvalue()
    else:
        done = subprocess.run([sys.executable, "-m", "rlmlab.cli", *args], capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"procs={procs} failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
        stdout = done.stdout
    seconds = time.perf_counter() - t0
    rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return {"procs": procs, "seconds": round(seconds, 1), "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--claims", default=None, help="comma-separated claim names (default: every claim)")
    ap.add_argument("--json", type=Path, default=None,
                    help="default runs/bench/scorecard_procs.json (--smoke: runs/bench_smoke/ in the working folder)")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    lm, n, claims = ("scripted:probe", 1, "s004.E7,s004.E8") if args.smoke else ("local", args.n, args.claims)
    base = (Path("runs/bench_smoke") if args.smoke else ROOT / "runs" / "bench").resolve() / "scorecard_procs"
    args.json = args.json or base.with_suffix(".json")
    ways = [_way(p, lm, n, claims, base / f"procs{p}", here=args.smoke) for p in (1, 2)]
    key = [[(r["claim"], r["n"], r["difference"], r["verdict"]) for r in w["rows"]] for w in ways]
    same = key[0] == key[1]
    ratio = ways[0]["seconds"] / ways[1]["seconds"] if ways[1]["seconds"] else None
    for w in ways:
        print(f"procs={w['procs']}: {w['seconds']:.1f} s wall, {len(w['rows'])} rows")
    print(f"one process / two processes: {ratio:.2f}x; rows the same both ways: {same}")
    if not same:
        for a, b in zip(*key):
            if a != b:
                print(f"  differs: {a} vs {b}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"lm": lm, "n": n, "claims": claims, "ways": ways, "ratio": ratio,
                                     "same_rows": same}, indent=2))
    if args.smoke and not same:
        sys.exit("smoke: the two ways' rows differ")


if __name__ == "__main__":
    main()
