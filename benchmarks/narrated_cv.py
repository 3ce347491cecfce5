"""phantom_tool_result on the narrated-contents sets, by prompt family: does the detector generalise or memorise?

The detector is hand-written rules, nothing is fitted, so leaving one prompt family (one scenario: one user
message and its setup, four SmolLM2 replies) out and scoring it equals scoring that family with the rules as they
are. What this shows is how evenly the rules cover the families: a detector that memorised some phrasings has
high recall on a few families and none on others. Printed, for each split (dev, old held-out) and both together:
P/R with 95% Wilson intervals; over the families with a positive, the macro recall (each family weighs the same),
the lowest family recall and how many families are below 0.5; the families with a false positive; and P/R per
scenario kind (phantom, read, pasted, promise, general, example, name; see data/turing_narrated.README.md).

Run with the package under test first on the path, so main and a branch can be compared on the same files:
    PYTHONPATH=/work/main .venv/bin/python benchmarks/narrated_cv.py [--json PATH] [--files A.jsonl B.jsonl]
``--smoke`` scores the first 16 dev turns and writes runs/bench_smoke/narrated_cv.json (checks the script).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections import defaultdict
from pathlib import Path

from rlmlab._figures import wilson_interval
from rlmlab.turing import TuringProtocol
from rlmlab.turing._eval import load_eval_cases

DATA = Path(__file__).resolve().parent.parent / "data"
FILES = [DATA / "turing_narrated_dev.jsonl", DATA / "turing_narrated_heldout.jsonl"]
HOOK = "phantom_tool_result"


def _pr(rows: list[tuple[bool, bool]]) -> dict:
    tp = sum(e and g for e, g in rows)
    fp = sum(g and not e for e, g in rows)
    fn = sum(e and not g for e, g in rows)
    p_lo, p_hi = wilson_interval(tp, tp + fp) if tp + fp else (0.0, 1.0)
    r_lo, r_hi = wilson_interval(tp, tp + fn) if tp + fn else (0.0, 1.0)
    return {"n": len(rows), "tp": tp, "fp": fp, "fn": fn,
            "precision": tp / (tp + fp) if tp + fp else None, "p_ci": [round(p_lo, 2), round(p_hi, 2)],
            "recall": tp / (tp + fn) if tp + fn else None, "r_ci": [round(r_lo, 2), round(r_hi, 2)]}


def _fmt(s: dict) -> str:
    p = "-" if s["precision"] is None else f"{s['precision']:.2f} {s['p_ci']}"
    r = "-" if s["recall"] is None else f"{s['recall']:.2f} {s['r_ci']}"
    return f"n {s['n']:3d}  TP {s['tp']:2d} FP {s['fp']:2d} FN {s['fn']:2d}  P {p}  R {r}"


def score(files: list[Path], limit: int | None = None) -> tuple[list[dict], float]:
    """One row per labelled turn: split, family (scenario), kind, expected, got; and ms per turn."""
    protocol, rows, spent = TuringProtocol(), [], 0.0
    for path in files:
        notes = {json.loads(line)["id"]: json.loads(line)["note"] for line in path.open()}
        for case in load_eval_cases(path)[:limit]:
            t0 = time.perf_counter()
            got = HOOK in protocol.run(case.turn).hooks
            spent += time.perf_counter() - t0
            kind = re.match(r"\w[\w ]*\((\w+)", notes[case.id])
            rows.append({"split": path.stem.replace("turing_narrated_", ""), "id": case.id,
                         "family": case.id.split("_t")[0].removeprefix("narr-"), "kind": kind.group(1) if kind else "",
                         "expected": HOOK in case.expected, "got": got})
    return rows, 1000 * spent / max(1, len(rows))


def report(rows: list[dict]) -> dict:
    out: dict = {}
    for split in sorted({r["split"] for r in rows}) + ["both"]:
        part = [r for r in rows if split in (r["split"], "both")]
        fams: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
        kinds: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
        for r in part:
            fams[r["family"]].append((r["expected"], r["got"]))
            kinds[r["kind"]].append((r["expected"], r["got"]))
        recalls = {f: _pr(v)["recall"] for f, v in fams.items() if any(e for e, _ in v)}
        out[split] = {
            "overall": _pr([(r["expected"], r["got"]) for r in part]),
            "families": len(fams), "families_with_positive": len(recalls),
            "macro_recall": round(statistics.mean(recalls.values()), 3) if recalls else None,
            "min_family_recall": round(min(recalls.values()), 3) if recalls else None,
            "families_recall_below_0.5": sorted(f for f, v in recalls.items() if v < 0.5),
            "families_with_fp": sorted(f for f, v in fams.items() if any(g and not e for e, g in v)),
            "by_kind": {k: _pr(v) for k, v in sorted(kinds.items())},
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", nargs="*", type=Path, default=FILES)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--smoke", action="store_true", help="16 dev turns; writes runs/bench_smoke/narrated_cv.json")
    args = ap.parse_args()
    if args.smoke:
        args.files, args.json = FILES[:1], args.json or Path("runs/bench_smoke/narrated_cv.json")
        args.json.parent.mkdir(parents=True, exist_ok=True)
    rows, ms = score(args.files, 16 if args.smoke else None)
    rep = report(rows)
    for split, s in rep.items():
        print(f"{split:8s} {_fmt(s['overall'])}")
        print(f"         families {s['families']} ({s['families_with_positive']} with a positive): macro recall "
              f"{s['macro_recall']}, lowest {s['min_family_recall']}, below 0.5: {s['families_recall_below_0.5']}; "
              f"with a false positive: {s['families_with_fp']}")
        for kind, k in s["by_kind"].items():
            print(f"         {kind:8s} {_fmt(k)}")
    print(f"cost: {ms:.2f} ms per turn (whole programmatic protocol, {len(rows)} turns)")
    if args.json:
        args.json.write_text(json.dumps({"report": rep, "ms_per_turn": ms, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
