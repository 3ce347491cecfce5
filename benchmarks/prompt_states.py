"""Free decoding with and without stored prompt states (``rlmlab.lm._engines.PROMPT_STATES_BYTES``), side by side.

llama.cpp's own prompt cache keeps the previous call's tokens only. A free-decoding RLM task alternates prompts (its
steps, then an extract step; then the next task's first step, which shares the long instructions), so at each
switch the whole prompt was prefilled again. The engine now keeps a few KV states by prompt prefix
(llama-cpp-python's ``LlamaRAMCache``) and loads the one sharing most of the new prompt.

Each arm runs in its own process (``--worker``), in turn, ``--rounds`` times: the ``rlm`` executor under free
decoding (the scorecard's seed-003 free arm: base instructions, no memory, 3 steps) on the arith suite's first
``--tasks`` tasks with the embedded SmolLM2-135M, on ``--threads`` threads. Printed and written to ``--json``
(default runs/bench/prompt_states.json): seconds per task per arm (all tasks, and tasks after the first), prompt
tokens served from a cache, and whether every completion of the two arms is the same text (it must be: a state
restores the same KV cells).

``--smoke`` (make check; needs the model): three direct calls, prompts A, B, A, in each arm; checks the third
call's completion is the same in both and reports its cached tokens.
Run:  .venv/bin/python benchmarks/prompt_states.py [--tasks 6] [--rounds 1] [--threads 2]
"""
# smoke-marks: local_model

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _worker(arm: str, tasks: int, threads: int, smoke: bool) -> dict:
    import rlmlab.lm._engines as engines

    if arm == "off":
        engines.PROMPT_STATES_BYTES = 0  # a store that keeps nothing: llama.cpp's one-sequence cache alone
    if smoke:
        from rlmlab.lm._engines import LlamaEngine

        eng = LlamaEngine(n_threads=threads, max_tokens=24)
        a = [{"role": "system", "content": "You answer questions about numbers. " * 40},
             {"role": "user", "content": "What is 2 + 3?"}]
        b = [{"role": "system", "content": "You translate words into French. " * 40},
             {"role": "user", "content": "cat"}]
        outs = [eng.generate(m, None) for m in (a, b, a)]
        return {"completions": [o.text for o in outs], "cached": [o.timing.cached_tokens for o in outs],
                "seconds": [o.timing.engine_ms / 1000 for o in outs]}
    from rlmlab.executors import run_rlm
    from rlmlab.experiments import load_suite
    from rlmlab.lm import make_lm
    from rlmlab.memory import BASE_INSTRUCTIONS

    lm = make_lm("local", n_threads=threads)

    runs = ROOT / "runs" / "bench" / f"prompt_states_{arm}"
    seconds, completions, cached, prompt = [], [], 0, 0
    for task in load_suite("arith", limit=tasks):
        t0 = time.perf_counter()
        traj = run_rlm(task.query, task.context, lm=lm, decoding="free", instructions=BASE_INSTRUCTIONS,
                       max_iters=3, run_id=f"{arm}-{task.id}-{int(t0)}", runs_dir=runs)
        seconds.append(time.perf_counter() - t0)
        calls = [json.loads(line) for line in (runs / traj.run_id / "lm_calls.jsonl").open()]
        completions += [c["completion"] for c in calls]
        cached += sum((c.get("timing") or {}).get("cached_tokens", 0) for c in calls)
        prompt += sum(c["input_tokens"] for c in calls)
    return {"seconds": seconds, "completions": completions, "cached": cached, "prompt": prompt}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=6, help="arith tasks per arm (default 6)")
    ap.add_argument("--rounds", type=int, default=1, help="on/off rounds, in turn (default 1)")
    ap.add_argument("--threads", type=int, default=2, help="llama.cpp threads (default 2)")
    ap.add_argument("--json", help="default runs/bench/prompt_states.json (--smoke: runs/bench_smoke/)")
    ap.add_argument("--smoke", action="store_true", help="three direct calls per arm (needs the model)")
    ap.add_argument("--worker", choices=["on", "off"], help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        Path(args.out).write_text(json.dumps(_worker(args.worker, args.tasks, args.threads, args.smoke)))
        return 0
    out = Path(args.json or ("runs/bench_smoke/prompt_states.json" if args.smoke else "runs/bench/prompt_states.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[dict]] = {"on": [], "off": []}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for r in range(1 if args.smoke else args.rounds):
        for arm in ("on", "off") if r % 2 == 0 else ("off", "on"):
            part = out.with_name(f"{out.stem}.{arm}.{r}.json")
            cmd = [sys.executable, __file__, "--worker", arm, "--tasks", str(args.tasks), "--threads",
                   str(args.threads), "--out", str(part)] + (["--smoke"] if args.smoke else [])
            subprocess.run(cmd, check=True, env=env)
            results[arm].append(json.loads(part.read_text()))
            part.unlink()
    same = all(a["completions"] == b["completions"] for a, b in zip(results["on"], results["off"]))
    report: dict = {"same_completions": same, "threads": args.threads, "load": os.getloadavg()[0]}
    for arm, runs in results.items():
        secs = [s for run in runs for s in run["seconds"]]
        later = [s for run in runs for s in run["seconds"][1:]]
        report[arm] = {"seconds_per_task": round(sum(secs) / len(secs), 2),
                       "after_the_first": round(sum(later) / len(later), 2) if later else None,
                       "cached": runs[0]["cached"]}
        if not args.smoke:
            prompt = sum(r["prompt"] for r in runs)
            report[arm]["cached_share"] = round(sum(r["cached"] for r in runs) / max(1, prompt), 3)
    report["off_over_on"] = round(report["off"]["seconds_per_task"] / max(1e-9, report["on"]["seconds_per_task"]), 2)
    out.write_text(json.dumps(report, indent=1))
    for arm in ("off", "on"):
        print(f"{arm:3s}: {report[arm]}")
    print(f"same completions in both arms: {same}; off / on: {report['off_over_on']}x (load {report['load']:.2f})")
    print(f"wrote {out}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
