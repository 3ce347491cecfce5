"""Import cost of rlmlab.tools and rlmlab.trace, before issue 20 and now, side by side in one run.

For each module and each tree (the rlmlab of commit ``--before``, extracted with ``git archive``, and this
checkout), ``--rounds`` fresh interpreters run ``python -X importtime -c "import MODULE"``, alternating trees; the
figure is the best round's cumulative time of MODULE as -X importtime reports it, and the wall time of the whole
interpreter run (start-up included). Also listed: which heavy packages each import pulled in (dspy, rdflib, the
memory and ontology packages, rank-bm25, numpy) and the five largest cumulative imports under it.

Times are reported, never asserted.

Run:  .venv/bin/python benchmarks/imports.py [--rounds N] [--before REF] [--json PATH] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _trees import before_tree
from rich.console import Console
from rich.table import Table

PROJECT = Path(__file__).resolve().parents[1]
BEFORE = "53398e0"  # the last commit before issue 20
MODULES = ("rlmlab.tools", "rlmlab.trace")
HEAVY = ("dspy", "rdflib", "rlmlab.memory", "rlmlab.ontology", "rank_bm25", "numpy")



def measure(tree: Path, module: str) -> dict:
    """One fresh interpreter importing ``module`` from ``tree``: -X importtime rows, wall time, heavy packages."""
    code = (f"import sys, json; import {module}; import rlmlab; "
            f"print(json.dumps([rlmlab.__file__, [m for m in {list(HEAVY)!r} if m in sys.modules]]))")
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True,
                         cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
    wall = time.perf_counter() - t0
    where, heavy = json.loads(run.stdout.strip().splitlines()[-1])
    if not where.startswith(str(tree)):
        raise RuntimeError(f"imported {where}, not the rlmlab under {tree}")
    rows = []  # (cumulative us, depth, name)
    for line in run.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cum, name = (part.strip() for part in line[len("import time:"):].split("|"))
        rows.append((int(cum), (len(name) - len(name.lstrip())) // 2, name.strip()))
    total = next(cum for cum, _, name in rows if name == module)
    return {"module_s": total / 1e6, "wall_s": wall, "heavy": heavy,
            "largest": sorted(((c, n) for c, d, n in rows if n.startswith(("rlmlab.", "dspy", "rdflib", "numpy",
                                                                              "rank_bm25"))), reverse=True)[:6]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="fresh interpreters per module and tree (best is kept)")
    ap.add_argument("--before", default=BEFORE, help=f"git ref of the 'before' column (default {BEFORE})")
    ap.add_argument("--json", metavar="PATH", help="default runs/bench/imports.json in the checkout")
    ap.add_argument("--smoke", action="store_true", help="one round (make check); --json defaults to "
                    "runs/bench_smoke/imports.json")
    args = ap.parse_args(argv)
    if args.smoke:
        args.rounds = 1
    path = Path(args.json or ("runs/bench_smoke/imports.json" if args.smoke else PROJECT / "runs/bench/imports.json"))
    console, trees = Console(width=140), {"before": before_tree(args.before), "after": PROJECT}
    try:
        best = measure_all(trees, args.rounds)
    finally:
        shutil.rmtree(trees["before"], ignore_errors=True)
    report(console, best, trees, args)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"rounds": args.rounds, "before": args.before,
                                "best": [{"module": m, "tree": t, **r} for (m, t), r in best.items()]}, indent=1),
                    encoding="utf-8")
    console.print(f"wrote {path}")
    return 0


def measure_all(trees: dict[str, Path], rounds: int) -> dict[tuple[str, str], dict]:
    """Each module's best measurement per tree over ``rounds`` rounds, the trees alternating."""
    best: dict[tuple[str, str], dict] = {}
    for _ in range(rounds):
        for module in MODULES:
            for name, tree in trees.items():
                got = measure(tree, module)
                key = (module, name)
                if key not in best or got["module_s"] < best[key]["module_s"]:
                    best[key] = got
    return best


def report(console: Console, best: dict[tuple[str, str], dict], trees: dict[str, Path], args) -> None:
    table = Table(title=f"Import cost, best of {args.rounds} fresh interpreters each, before (commit {args.before}) "
                        "and after issue 20")
    for col in ("figure", "before", "after", "goal"):
        table.add_column(col, justify="left" if col == "figure" else "right")
    for module in MODULES:
        b, a = best[(module, "before")], best[(module, "after")]
        table.add_row(f"import {module}: -X importtime cumulative (s)", f"{b['module_s']:.3f}", f"{a['module_s']:.3f}",
                      "<= 0.3")
        table.add_row(f"import {module}: interpreter wall time incl. start-up (s)", f"{b['wall_s']:.3f}",
                      f"{a['wall_s']:.3f}", "")
        table.add_row(f"import {module}: heavy packages loaded", ", ".join(b["heavy"]) or "none",
                      ", ".join(a["heavy"]) or "none", "no dspy, rdflib, memory")
    console.print(table)
    for module in MODULES:
        for name in trees:
            parts = ", ".join(f"{n} {c / 1e3:.0f} ms" for c, n in best[(module, name)]["largest"])
            console.print(f"{module} {name}: largest cumulative imports: {parts}")
    console.print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    sys.exit(main())
