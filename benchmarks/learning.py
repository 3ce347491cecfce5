"""E14, learning from scratch, and the goals table of issue 25 with the measured values.

For each suite, E14's conditions run the train stream (``data/tasks/e14/<suite>_train.jsonl``, the first
``--tasks``), then the test split held out by source (``<suite>_test.jsonl``, the first ``--test-tasks``) with each
bank frozen. The goals (one run, idle machine; not timed tests):

- ``learned`` (empty start, no answer key) on the test split: >= ``hand_pack``, and >= ``no_memory`` + 25 points on
  code and ontology, + 10 on arith;
- ``pack_plus_learned`` >= ``hand_pack`` + 15 points on the test split;
- the learning curve rises: the last fifth of the code stream >= the first fifth + 20 points (``learned``);
- >= 90% of stored (learnt) templates pass replay; duplicate templates <= 5% after consolidation;
- key-free judges: precision >= 0.9 against the answer key (``learned``'s rollouts);
- seconds per task under ``learned`` <= 1.3 x ``no_memory``.

With ``--paraphrase-split`` (dev or test; code and ontology), the frozen test phase also runs that paraphrase split
(questions in a researcher's own words, written blind: ``data/paraphrase``), and every condition's test pass@1 is
printed for the generated and the paraphrase questions side by side, with the paired difference ``learned`` minus
``no_memory`` on the paraphrase questions with its 95% interval and verdict (the scorecard's
:func:`~rlmlab.scorecard.paired_binary`, Newcombe's paired interval).

``--smoke`` runs the scripted ``solver`` agent on tiny generated arithmetic files (1 stream and 1 test task) in
seconds and writes its JSON, to check the pipeline, not to measure. Numbers go to ``--json`` (default
runs/bench/learning.json). Run:  .venv/bin/python benchmarks/learning.py --tasks 40 --test-tasks 20
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rlmlab.experiments import SUITES, fifths, learning_line, run_experiment  # noqa: E402
from rlmlab.scorecard import paired_binary  # noqa: E402

DATA = ROOT / "data" / "tasks" / "e14"
# issue 25's test-split margin of learned over no_memory, in points
MARGIN = {"code": 25, "ontology": 25, "arith": 10}


def smoke_data(where: Path) -> Path:
    """Tiny arithmetic train and test files (bare sums the scripted solver can do), in ``where``."""
    for split, pairs in (("train", [(2, 3)]), ("test", [(9, 9)])):
        lines = [{"id": f"{split}-{a}-{b}", "suite": "arith", "level": 1, "query": f"What is {a} + {b}?",
                  "checker": "numeric", "expected": str(a + b), "kind": "bare_add"} for a, b in pairs]
        (where / f"arith_{split}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return where


def combined_test_file(suite: str, data: Path, split: str | None, where: Path, first: int | None = None) -> Path:
    """The suite's generated test split (its ``first`` tasks), followed by its whole paraphrase ``split`` when
    there is one."""
    generated = data / f"{suite}_test.jsonl"
    para = SUITES.get(f"{suite}-paraphrase-{split}") if split else None
    if para is None:
        return generated
    out = where / f"{suite}_test_plus_paraphrase_{split}.jsonl"
    lines = [x for x in generated.read_text().splitlines(keepends=True) if x.strip()]
    out.write_text("".join(lines[:first] if first else lines) + Path(para).read_text())
    return out


def paraphrase_figures(run_dir: Path, paraphrase_ids: set[str]) -> dict:
    """Per condition: the test phase's pass@1 on the generated and on the paraphrase questions (best rollout per
    task), the undecided count, and the paired difference learned - no_memory on the paraphrase questions."""
    rows = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines() if x.strip()]
    best = [r for r in rows if r.get("phase") == "test" and r["best"]]
    out: dict = {}
    for cond in dict.fromkeys(r["condition"] for r in best):
        mine = [r for r in best if r["condition"] == cond]
        gen = [float(r["success"]) for r in mine if r["task_id"] not in paraphrase_ids]
        par = [r for r in mine if r["task_id"] in paraphrase_ids]
        out[cond] = {"generated": round(sum(gen) / len(gen), 3) if gen else None, "generated_tasks": len(gen),
                     "paraphrase": round(sum(r["success"] for r in par) / len(par), 3) if par else None,
                     "paraphrase_tasks": len(par), "undecided": sum(bool(r.get("undecided")) for r in par)}
    by = {c: {r["task_id"]: float(r["success"]) for r in best if r["condition"] == c and r["task_id"] in paraphrase_ids}
          for c in ("learned", "no_memory")}
    both = sorted(set(by["learned"]) & set(by["no_memory"]))
    if both:  # the scorecard's paired comparison of pass/fail outcomes (Newcombe's interval for a paired difference)
        c = paired_binary([by["learned"][t] for t in both], [by["no_memory"][t] for t in both])
        out["learned_minus_no_memory"] = {"tasks": c.n, "mean": round(c.difference, 3),
                                          "ci95": [round(c.ci_low, 3), round(c.ci_high, 3)], "verdict": c.verdict,
                                          "method": c.method}
    return out


def _pts(x: float | None) -> str:
    return "-" if x is None else f"{round(100 * x)}%"


def goals(summaries: dict[str, dict]) -> list[tuple[str, str, bool | None]]:
    """(goal, measured, met) per goal of the issue; met is None where a figure is missing."""
    out: list[tuple[str, str, bool | None]] = []

    def test(suite: str, cond: str) -> float | None:
        return ((summaries.get(suite, {}).get(cond) or {}).get("test") or {}).get("pass_at_1")

    for suite in summaries:
        learned, hand, none, plus = (test(suite, c) for c in ("learned", "hand_pack", "no_memory", "pack_plus_learned"))
        ok = None if None in (learned, hand) else learned >= hand
        out.append((f"{suite}: learned >= hand_pack (test)", f"{_pts(learned)} vs {_pts(hand)}", ok))
        m = MARGIN.get(suite, 10)
        ok = None if None in (learned, none) else learned >= none + m / 100
        out.append((f"{suite}: learned >= no_memory + {m} pts", f"{_pts(learned)} vs {_pts(none)}", ok))
        ok = None if None in (plus, hand) else plus >= hand + 0.15
        out.append((f"{suite}: pack_plus_learned >= hand_pack + 15 pts", f"{_pts(plus)} vs {_pts(hand)}", ok))
    code = (summaries.get("code") or {}).get("learned") or {}
    first, last = fifths(code.get("learning_curve_tasks") or [])
    out.append(("code stream (learned): last fifth >= first fifth + 20 pts", f"{_pts(last)} vs {_pts(first)}",
                None if first is None else last >= first + 0.2))
    banks = [(s.get("bank") or {}) for sums in summaries.values() for c, s in sums.items() if c.startswith("learned")]
    replay = [b["replay_passed"] for b in banks if b.get("replay_passed") is not None]
    dup = [b["duplicate_templates"] for b in banks if b.get("duplicate_templates") is not None]
    out.append(("stored templates passing replay >= 90%", _pts(min(replay)) + " (lowest bank)" if replay else "-",
                min(replay) >= 0.9 if replay else None))
    out.append(("duplicate templates <= 5%", _pts(max(dup)) + " (highest bank)" if dup else "-",
                max(dup) <= 0.05 if dup else None))
    for suite, sums in summaries.items():
        agree = (sums.get("learned") or {}).get("judge_agreement") or {}
        prec = agree.get("precision")
        out.append((f"{suite}: key-free judge precision >= 0.9", "-" if prec is None else f"{prec:.2f} "
                    f"(recall {agree.get('recall')}, {agree.get('rollouts')} rollouts)",
                    None if prec is None else prec >= 0.9))
        spt = [(sums.get(c) or {}).get("seconds_per_task") for c in ("learned", "no_memory")]
        ratio = spt[0] / spt[1] if None not in spt and spt[1] else None
        out.append((f"{suite}: s/task learned <= 1.3 x no_memory", "-" if ratio is None else
                    f"{spt[0]} / {spt[1]} = {ratio:.2f}x", None if ratio is None else ratio <= 1.3))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suites", default="code,ontology,arith")
    ap.add_argument("--tasks", type=int, default=200, help="stream tasks per suite")
    ap.add_argument("--test-tasks", type=int, default=None, help="test tasks per suite (default: the whole split)")
    ap.add_argument("--conditions", default=None, help="comma-separated (default: all six)")
    ap.add_argument("--lm", default="local")
    ap.add_argument("--max-tokens", type=int, default=None)
    ap.add_argument("--max-iters", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: all cores; 1 on a shared machine)")
    ap.add_argument("--data", default=str(DATA), help="directory of <suite>_train.jsonl and <suite>_test.jsonl")
    ap.add_argument("--runs-dir", help="default runs/bench in the checkout; --smoke: runs/bench_smoke")
    ap.add_argument("--json", help="default runs/bench/learning.json in the checkout; --smoke: runs/bench_smoke/")
    ap.add_argument("--smoke", action="store_true", help="scripted solver, tiny arithmetic files: seconds")
    ap.add_argument("--paraphrase-split", choices=("dev", "test"), default=None,
                    help="also test each frozen bank on this paraphrase split (code, ontology), side by side")
    args = ap.parse_args()
    # a smoke run (make check) never overwrites a full run's figures
    base = Path("runs/bench_smoke").resolve() if args.smoke else ROOT / "runs" / "bench"
    args.runs_dir, args.json = args.runs_dir or str(base), args.json or str(base / "learning.json")
    tmp = None
    if args.smoke:
        tmp = tempfile.TemporaryDirectory()
        args.data, args.suites, args.lm, args.tasks = str(smoke_data(Path(tmp.name))), "arith", "scripted:solver", 1
    run_root = Path(args.runs_dir) / f"learning-{time.strftime('%Y%m%d-%H%M%S')}"
    summaries, side, t0 = {}, {}, time.perf_counter()
    scratch = tempfile.TemporaryDirectory()
    for suite in [s.strip() for s in args.suites.split(",") if s.strip()]:
        test_file = combined_test_file(suite, Path(args.data), args.paraphrase_split, Path(scratch.name),
                                       args.test_tasks)
        para_file = SUITES.get(f"{suite}-paraphrase-{args.paraphrase_split}") if args.paraphrase_split else None
        para_ids = {json.loads(x)["id"] for x in Path(para_file).read_text().splitlines() if x.strip()} \
            if para_file else set()
        run = run_experiment(
            "E14", lm=args.lm, suite=str(Path(args.data) / f"{suite}_train.jsonl"), tasks=args.tasks,
            test_suite=str(test_file), test_tasks=None if para_ids else args.test_tasks,
            conditions=args.conditions.split(",") if args.conditions else None, max_iters=args.max_iters,
            lm_options={k: v for k, v in (("max_tokens", args.max_tokens), ("n_threads", args.threads)) if v} or None, run_dir=run_root / suite,
            progress="lines" if not args.smoke else False)
        summaries[suite] = run.summary
        for cond, s in run.summary.items():
            print(suite, learning_line(cond, s), flush=True)
        if para_ids:
            side[suite] = paraphrase_figures(run.run_dir, para_ids)
            print(f"{suite} test pass@1, generated vs paraphrase ({args.paraphrase_split}):", json.dumps(side[suite]),
                  flush=True)
    table = goals(summaries)
    print(f"\n{'goal':<62} {'measured':<40} met")
    for goal, measured, met in table:
        print(f"{goal:<62} {measured:<40} {'-' if met is None else 'yes' if met else 'no'}")
    result = {"params": {k: v for k, v in vars(args).items()}, "seconds": round(time.perf_counter() - t0, 1),
              "run_dir": str(run_root), "summaries": summaries, "paraphrase": side,
              "goals": [{"goal": g, "measured": m, "met": ok} for g, m, ok in table]}
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2))
    print(f"\nwrote {path}")
    if tmp is not None:
        tmp.cleanup()
    scratch.cleanup()


if __name__ == "__main__":
    main()
