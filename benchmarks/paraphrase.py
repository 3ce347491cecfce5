"""Generated questions against questions in a researcher's own words: E13's conditions on both, side by side.

For each suite asked (code, ontology, text), one run of E13's conditions on the generated suite (``data/tasks``;
text has none) and on a paraphrase split (``data/paraphrase``: ``--split dev`` to tune on, ``--split test`` to
report once). Printed and written to ``--json``: pass rate per suite x split x condition with the 95% Wilson
interval, the gap (generated minus paraphrase), and the paraphrase pass rate per level and per kind, with the
share of runs that ended in an error.

Run:  .venv/bin/python benchmarks/paraphrase.py [--suites code,text] [--split dev] [--conditions grammar,grammar_templates]
      [--limit N] [--smoke]
``--smoke`` runs one task of each split with the scripted LM (the code suite unless ``--suites`` says), to check
the script itself (make check).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rlmlab.experiments import SUITES, load_experiment, load_suite, run_experiment  # noqa: E402
from rlmlab.scorecard import wilson  # noqa: E402

GENERATED = {"code": "code", "ontology": "ontology", "text": None}


def _run(exp, lm, tasks, condition: str, runs_dir: str) -> list[dict]:
    run = run_experiment(exp, lm=lm, task_list=tasks, conditions=[condition], runs_dir=runs_dir, progress=False)
    return [json.loads(x) for x in (run.run_dir / "results.jsonl").read_text().splitlines() if x.strip()]


def _rate(rows: list[dict]) -> dict:
    n, k = len(rows), sum(bool(r["success"]) for r in rows)
    lo, hi = wilson(k, n) if n else (0.0, 0.0)
    return {"n": n, "passed": k, "rate": round(k / n, 3) if n else None, "ci95": [round(lo, 3), round(hi, 3)],
            "errors": sum(bool(r.get("error")) for r in rows)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suites", default=None, help="default code,ontology,text (--smoke: code)")
    ap.add_argument("--split", choices=("dev", "test", "dev2"), default="dev", help="dev2: code only (writer C)")
    ap.add_argument("--conditions", default="grammar,grammar_templates")
    ap.add_argument("--limit", type=int, default=None, help="tasks per suite and split (round-robin over levels)")
    ap.add_argument("--no-generated", action="store_true", help="only the paraphrase split")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    args.suites = args.suites or ("code" if args.smoke else "code,ontology,text")
    out_path = Path(args.json or ("runs/bench_smoke/paraphrase.json" if args.smoke else
                                  ROOT / f"runs/bench/paraphrase_{args.split}.json"))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    runs_dir = str(out_path.parent / "paraphrase_runs")
    if args.smoke:
        from rlmlab.lm import make_lm

        lm, limit = make_lm("scripted:probe"), 1
    else:
        from rlmlab.lm import make_lm

        lm, limit = make_lm("local", max_tokens=256, n_threads=2), args.limit
    exp = load_experiment("E13")
    conditions = [c for c in args.conditions.split(",") if c]
    result: dict = {"split": args.split, "smoke": args.smoke, "conditions": conditions, "suites": {}}
    t0 = time.perf_counter()
    for suite in [s for s in args.suites.split(",") if s]:
        if f"{suite}-paraphrase-{args.split}" not in SUITES:
            print(f"{suite}: no {args.split} paraphrase split; skipped")
            continue
        splits = {"paraphrase": load_suite(f"{suite}-paraphrase-{args.split}", limit=limit)}
        if GENERATED[suite] and not args.no_generated:
            splits["generated"] = load_suite(GENERATED[suite], limit=limit)
        entry: dict = {}
        for name, tasks in splits.items():
            meta = {t.id: t.meta for t in tasks}
            for condition in conditions:
                rows = _run(exp, lm, tasks, condition, runs_dir)
                cell = _rate(rows)
                if name == "paraphrase":
                    by: dict = defaultdict(list)
                    for r in rows:
                        m = meta.get(r["task_id"], {})
                        by[f"L{m.get('level')}"].append(r)
                        by[f"kind:{m.get('kind')}"].append(r)
                    cell["by"] = {k: _rate(v) for k, v in sorted(by.items())}
                entry.setdefault(condition, {})[name] = cell
                print(f"{suite:9} {name:10} {condition:18} {cell['passed']:3}/{cell['n']:<3} "
                      f"{cell['rate']}  errors {cell['errors']}", flush=True)
        for condition, cells in entry.items():
            if "generated" in cells and cells["generated"]["rate"] is not None:
                cells["gap"] = round(cells["generated"]["rate"] - cells["paraphrase"]["rate"], 3)
        result["suites"][suite] = entry
    result["seconds"] = round(time.perf_counter() - t0, 1)
    out_path.write_text(json.dumps(result, indent=1))
    print(f"wrote {out_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
