"""Start time of the REPL worker (one per run, and per restart), before and after, side by side in one run.

Every ``run_rlm`` starts a worker process for the model's code: under ``confined`` (bubblewrap, Landlock, rlimits)
by default, ``none`` when asked. For each tree (the rlmlab of commit ``--before``, extracted with ``git archive``,
and this checkout) and each sandbox, a fresh interpreter imports that tree's ``RLMLabInterpreter`` and times
``--starts`` worker starts (``start()`` until the worker says it is ready; one step runs after each, to prove it
serves); rounds alternate the trees. Printed: each tree's median start in milliseconds and the ratio after/before.
Times are reported, never asserted. Run on an idle machine:
    .venv/bin/python benchmarks/worker_start.py [--rounds 3] [--starts 10] [--before REF] [--json PATH]
``--smoke`` (make check): this checkout only, in this process, two starts per sandbox; writes its JSON under
runs/bench_smoke/ of the working folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _trees import before_tree

PROJECT = Path(__file__).resolve().parents[1]
BEFORE = "d5376d3"  # the worker started with site and imported the whole handles package (the blob store's sqlite3)
SANDBOXES = ("confined", "none")

# Runs in the measured tree's own interpreter (PYTHONPATH=tree): prints the start times, in seconds, as JSON.
PROBE = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
from rlmlab.executors._interpreter import RLMLabInterpreter
times = []
for _ in range({starts}):
    it = RLMLabInterpreter(sandbox={sandbox!r})
    t0 = time.perf_counter()
    it.start()
    times.append(time.perf_counter() - t0)
    assert "2" in str(it.execute("print(1 + 1)")), "the worker did not serve a step"
    it.shutdown()
print(json.dumps(times))
"""



def starts_in_child(tree: Path, sandbox: str, starts: int) -> list[float]:
    """``starts`` worker start times (s) measured by a fresh interpreter running ``tree``'s rlmlab."""
    run = subprocess.run([sys.executable, "-c", PROBE.format(starts=starts, sandbox=sandbox)], capture_output=True,
                         text=True, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
    if run.returncode:
        raise SystemExit(f"worker_start: {tree} ({sandbox}): {run.stderr.strip().splitlines()[-1:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def starts_here(sandbox: str, starts: int) -> list[float]:
    """``starts`` worker start times (s) of this checkout, measured in this process (--smoke)."""
    scope: dict = {}
    code = PROBE.format(starts=starts, sandbox=sandbox).replace("print(json.dumps(times))", "")
    exec(compile(code, "worker_start probe", "exec"), scope)  # noqa: S102 - this file's own probe text
    return scope["times"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="fresh interpreters per tree and sandbox (alternating)")
    ap.add_argument("--starts", type=int, default=10, help="worker starts per interpreter")
    ap.add_argument("--before", default=BEFORE, help=f"git ref of the 'before' column (default {BEFORE})")
    ap.add_argument("--json", metavar="PATH", help="default runs/bench/worker_start.json in the checkout; --smoke: "
                    "runs/bench_smoke/worker_start.json in the working folder")
    ap.add_argument("--smoke", action="store_true", help="this checkout only, two starts per sandbox (make check)")
    args = ap.parse_args(argv)
    path = Path(args.json or ("runs/bench_smoke/worker_start.json" if args.smoke
                              else PROJECT / "runs/bench/worker_start.json"))
    times: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    t0 = time.perf_counter()
    if args.smoke:
        sys.path.insert(0, str(PROJECT))  # this checkout's rlmlab, as the probe imports it
        times = {"after": {sb: starts_here(sb, 2) for sb in SANDBOXES}}
    else:
        trees = {"before": before_tree(args.before), "after": PROJECT}
        try:
            for _ in range(args.rounds):
                for sandbox in SANDBOXES:
                    for name, tree in trees.items():
                        times[name].setdefault(sandbox, []).extend(starts_in_child(tree, sandbox, args.starts))
        finally:
            shutil.rmtree(trees["before"], ignore_errors=True)
    medians = {name: {sb: round(statistics.median(v) * 1000, 1) for sb, v in by.items()} for name, by in times.items()}
    print("REPL worker start, median ms: " + ("this checkout, 2 starts per sandbox (smoke)" if args.smoke else
                                              f"{args.rounds} rounds x {args.starts} starts; before = {args.before}"))
    for sandbox in SANDBOXES:
        after = medians["after"][sandbox]
        before = medians.get("before", {}).get(sandbox)
        ratio = f"  after/before {after / before:.2f}" if before else ""
        print(f"  {sandbox:<9} before {before if before is not None else '-':>7}  after {after:>7}{ratio}")
    print(f"load average at end: {os.getloadavg()}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"smoke": args.smoke, "before": None if args.smoke else args.before,
                                "seconds": round(time.perf_counter() - t0, 1), "median_ms": medians,
                                "times_s": times}, indent=1), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
