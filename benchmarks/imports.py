"""Import cost of rlmlab.tools and rlmlab.trace, before issue 20 and now, side by side in one run.

For each module and each tree (the rlmlab of commit ``--before``, extracted with ``git archive``, and this
checkout), ``--rounds`` fresh interpreters run ``python -X importtime -c "import MODULE"``, alternating trees; the
figure is the best round's cumulative time of MODULE as -X importtime reports it, and the wall time of the whole
interpreter run (start-up included). Also listed: which heavy packages each import pulled in (dspy, rdflib, the
memory and ontology packages, rank-bm25, numpy) and the five largest cumulative imports under it.

Times are reported, never asserted.

Run:  .venv/bin/python benchmarks/imports.py [--rounds N] [--before REF]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

PROJECT = Path(__file__).resolve().parents[1]
BEFORE = "53398e0"  # the last commit before issue 20
MODULES = ("rlmlab.tools", "rlmlab.trace")
HEAVY = ("dspy", "rdflib", "rlmlab.memory", "rlmlab.ontology", "rank_bm25", "numpy")


def before_tree(ref: str) -> Path:
    """The rlmlab package of commit ``ref`` in a temporary directory (a path for PYTHONPATH)."""
    out = Path(tempfile.mkdtemp(prefix="rlmlab-before-"))
    archive = subprocess.run(["git", "-C", str(PROJECT), "archive", ref, "rlmlab"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out


def measure(tree: Path, module: str) -> dict:
    """One fresh interpreter importing ``module`` from ``tree``: -X importtime rows, wall time, heavy packages."""
    code = (f"import sys, json; import {module}; import rlmlab; "
            f"print(json.dumps([rlmlab.__file__, [m for m in {list(HEAVY)!r} if m in sys.modules]]))")
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True,
                         cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
    wall = time.perf_counter() - t0
    import json

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
    args = ap.parse_args(argv)
    console, trees = Console(width=140), {"before": before_tree(args.before), "after": PROJECT}
    console.print(f"load average at start: {os.getloadavg()}")
    best: dict[tuple[str, str], dict] = {}
    for _ in range(args.rounds):
        for module in MODULES:
            for name, tree in trees.items():
                got = measure(tree, module)
                key = (module, name)
                if key not in best or got["module_s"] < best[key]["module_s"]:
                    best[key] = got
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
