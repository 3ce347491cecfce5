"""The SPARQL judge on the issue-18 ontology tasks (empty answers, direction): verdicts for the reference and
for wrong answers an agent plausibly writes (the inverse property, columns swapped, other names, a guess).

Tasks are read straight from data/tasks/ontology.jsonl, so the script also runs against an older rlmlab
(``PYTHONPATH=<old checkout> python benchmarks/sparql_judge_cases.py``) to compare judges.

Run:  .venv/bin/python benchmarks/sparql_judge_cases.py [--json PATH] [--smoke]   (--smoke: the first two tasks)
"""
# smoke-marks: slow

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rlmlab.executors import Trajectory
from rlmlab.memory import MemoryTask
from rlmlab.learning._judge import SparqlJudge

ROOT = Path(__file__).resolve().parent.parent
PROV = "PREFIX prov: <http://www.w3.org/ns/prov#>\nPREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
SKOS = "PREFIX skos: <http://www.w3.org/2004/02/skos/core#>\nPREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
DR = "SELECT {a} {b} WHERE {{ {p} rdfs:domain ?{d} ; rdfs:range ?{r} }}"

# task id -> [(label, answer, should it pass)]
CASES = {
    "onto-l1-07": [("empty, other var name", PROV + "SELECT ?l WHERE { prov:Process rdfs:label ?l }", True),
                   ("guess: prov:Activity's label", PROV + "SELECT ?l WHERE { prov:Activity rdfs:label ?l }", False)],
    "onto-l1-08": [("empty", SKOS + "SELECT ?d WHERE { skos:Thesaurus skos:definition ?d }", True),
                   ("guess: skos:ConceptScheme", SKOS + "SELECT ?d WHERE { skos:ConceptScheme skos:definition ?d }",
                    False)],
    "onto-l2-07": [("empty", PROV + DR.format(a="?domain", b="?range", p="prov:wasCausedBy", d="domain", r="range"),
                    True),
                   ("guess: prov:wasInfluencedBy",
                    PROV + DR.format(a="?domain", b="?range", p="prov:wasInfluencedBy", d="domain", r="range"), False)],
    "onto-l2-08": [("right, columns swapped by name",
                    PROV + DR.format(a="?range", b="?domain", p="prov:generated", d="domain", r="range"), True),
                   ("inverse prov:wasGeneratedBy",
                    PROV + DR.format(a="?domain", b="?range", p="prov:wasGeneratedBy", d="domain", r="range"), False),
                   ("inverse, columns swapped",
                    PROV + DR.format(a="?range", b="?domain", p="prov:wasGeneratedBy", d="domain", r="range"), False),
                   ("inverse, other names",
                    PROV + DR.format(a="?d", b="?r", p="prov:wasGeneratedBy", d="d", r="r"), False)],
    "onto-l2-09": [("inverse skos:topConceptOf",
                    SKOS + DR.format(a="?domain", b="?range", p="skos:topConceptOf", d="domain", r="range"), False)],
    "onto-l3-07": [("direction reversed",
                    PROV + "SELECT ?property WHERE { ?property rdfs:domain prov:Activity ; rdfs:range prov:Entity }",
                    False)],
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="PATH", help="default runs/bench/sparql_judge_cases.json in the checkout")
    ap.add_argument("--smoke", action="store_true", help="the first two tasks (make check); --json defaults to "
                    "runs/bench_smoke/sparql_judge_cases.json")
    args = ap.parse_args(argv)
    out = Path(args.json or ("runs/bench_smoke/sparql_judge_cases.json" if args.smoke
                             else ROOT / "runs" / "bench" / "sparql_judge_cases.json"))
    chosen = dict(list(CASES.items())[:2]) if args.smoke else CASES
    judge = SparqlJudge()
    rows = [json.loads(line) for line in (ROOT / "data" / "tasks" / "ontology.jsonl").read_text().splitlines()
            if line.strip()]
    tasks = {d["id"]: d for d in rows if d["id"] in chosen}
    right = total = 0
    verdicts = []
    for tid, cases in chosen.items():
        d = tasks[tid]
        task = MemoryTask(tid, d["query"], expected=d["expected"], check="sparql",
                          meta={"ontology": str(ROOT / "data" / "ontology" / f"{d['domain']}.ttl")})
        for label, answer, should in [("reference", d["expected"], True), *cases]:
            traj = Trajectory(run_id="t", query=d["query"], lm="x", context_mode="handle", answer=answer,
                              submitted=True)
            v = judge.judge(task, traj)
            total += 1
            right += v.success == should
            mark = "ok " if v.success == should else "WRONG"
            verdicts.append({"task": tid, "case": label, "should_pass": should, "success": v.success,
                             "score": v.score, "rationale": v.rationale})
            print(f"{mark} {tid:<11} {label:<32} success={v.success!s:<5} score={v.score:<5} {v.rationale[:90]}")
    print(f"{right}/{total} verdicts as they should be")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"right": right, "total": total, "verdicts": verdicts}, indent=1), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
