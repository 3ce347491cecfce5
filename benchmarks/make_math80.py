"""Write ``data/math80.csv``: ``data/math20.csv`` then 60 generated word problems, the teacher-learner items the
scorecard's seed-002 rows use past 20.

Seed 002 measures its loop on Math-20 (arithmetic and short word problems). Past 20 items the scorecard used the
GSM8K sample, on which the embedded model's code-first learner solves none (0/60 in session 13), so every arm
ties at 0 and no reprompt can show an effect. The 60 items added here are rlmlab.taskgen's arithmetic families of
one to three steps (bare arithmetic, percent of, one step, change, share, savings, trip), drawn with a fixed seed
and taken round-robin by family; each answer is computed exactly and recomputed from its expression
(``rlmlab tasks generate`` drops any that disagree). Deterministic: the same file on every run.

    python benchmarks/make_math80.py            # rewrite data/math80.csv
    python benchmarks/make_math80.py --check    # exit 1 if the committed file differs
    python benchmarks/make_math80.py --smoke    # build it, write runs/bench_smoke/make_math80.json, touch nothing
"""
# smoke-marks: slow

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "math80.csv"
FAMILIES = ("bare_arithmetic", "percent_of", "one_step", "change", "share", "savings", "trip")
SEED, ADDED = 2002, 60


def build() -> str:
    sys.path.insert(0, str(ROOT))
    from rlmlab.taskgen import generate_tasks

    tasks = generate_tasks("arith", n=300, seed=SEED).train
    by_family = {f: [t for t in tasks if t.kind == f] for f in FAMILIES}
    picked = []
    while len(picked) < ADDED:
        for f in FAMILIES:
            if by_family[f] and len(picked) < ADDED:
                picked.append(by_family[f].pop(0))
    buf = io.StringIO()
    buf.write((ROOT / "data" / "math20.csv").read_text(encoding="utf-8"))
    w = csv.writer(buf, lineterminator="\n")
    for t in picked:
        w.writerow([" ".join(t.query.split()), t.expected])
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    ap.add_argument("--smoke", action="store_true",
                    help="build the file and write runs/bench_smoke/make_math80.json (items, up to date) only")
    args = ap.parse_args(argv)
    text = build()
    if args.smoke:
        out = Path("runs/bench_smoke/make_math80.json")  # under the working directory, as every smoke run
        out.parent.mkdir(parents=True, exist_ok=True)
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        out.write_text(json.dumps({"items": text.count("\n") - 1, "up_to_date": same}) + "\n", encoding="utf-8")
        print(f"{text.count(chr(10)) - 1} items; {OUT.relative_to(ROOT)} {'up to date' if same else 'differs'}")
        return 0
    if args.check:
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        print(f"{OUT.relative_to(ROOT)}: {'up to date' if same else 'differs from what this script writes'}")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} ({text.count(chr(10)) - 1} items)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
