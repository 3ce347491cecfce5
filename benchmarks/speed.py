"""Seconds per solved task with the embedded model: today's code (``--before``, a checkout of main) against this
one, side by side in one run, with llama.cpp's own floor for each task's token counts.

For each tree, in alternating rounds, a worker process (``PYTHONPATH`` = the tree) runs E13's ``grammar_templates``
on the even-numbered (held-out) level-1/2 tasks of code, ontology and arith with the embedded SmolLM2-135M
(2 threads, 256-token cap), then measures llama.cpp's rates in that same process, ``llama-bench`` style:
a fresh prefill of 2,000 tokens (KV cache cleared) and single-token decodes after it, no sampling. A task's floor
is its prefilled prompt tokens / the prefill rate + its completion tokens / the decode rate: what llama.cpp
alone would take for those token counts. For this tree the prefilled tokens come from the trajectory's time
breakdown (tokens served from the prefix cache are not prefilled); main's code records no breakdown, so its
tasks are charged the run's measured cache share.

A task prefills a few hundred new tokens on top of a cached prefix, where llama.cpp runs at another rate than a
fresh 2,000-token prefill, so the floor is also measured at each task's own counts (:func:`replay_floor`,
``llama-bench -d -p -n`` style): every LM call of the task replayed in the same process at its depth (cached
tokens), its prefilled tokens, its sampled tokens one by one and its grammar-forced tokens in a batch. That
floor needs the per-call timing in ``lm_calls.jsonl``, so a tree without it has only the rate-based floor.

Printed and written to ``--json`` (default runs/bench/speed.json): per tree, seconds per task, pass@1,
prompt and completion tokens per task, cached-token share, wall / floor, wall / a fresh 2,000-token prefill,
and this tree's mean time breakdown; then the goals table (after / before).
``--demo`` also runs ``rlmlab demo`` (what ``make demo`` runs, each tree's own defaults, in a process of its own)
and reports agent runs per minute of its wall time.

``--smoke``: the scripted LM, two tasks, this tree only (its worker in this process), no rates: checks the script
runs end to end and writes its JSON, in seconds. Figures from a loaded machine are noisy; read the ratios, measured in one run.
Run:  .venv/bin/python benchmarks/speed.py --before /work/main [--tasks-per-group N] [--rounds 1] [--demo]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from statistics import mean, median

ROOT = Path(__file__).resolve().parents[1]
PREFILL_TOKENS = 2000
DECODE_TOKENS = 48


def _even_tasks(per_group: int | None, smoke: bool) -> list:
    """The even-numbered level-1/2 tasks (number = position within suite x level in file order)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from small_model import numbered_tasks

    tasks = [t for t, n in numbered_tasks((1, 2)) if n % 2 == 0]
    if per_group:
        seen: dict[tuple, int] = {}
        kept = []
        for t in tasks:
            key = (t.meta.get("suite"), t.meta.get("level"))
            seen[key] = seen.get(key, 0) + 1
            if seen[key] <= per_group:
                kept.append(t)
        tasks = kept
    return tasks[:2] if smoke else tasks


def _smoke_lm():
    from rlmlab.lm import make_lm
    from rlmlab.lm._scripts import output_fields

    def script(messages):
        fields = output_fields(messages)
        if fields != ["reasoning", "code"]:
            return {name: "0" for name in fields}
        return {"reasoning": "Question: q Plan: count", "code": "n = ctx_stats(context)\nSUBMIT(answer=n['lines'])"}

    lm = make_lm("scripted", script=script)
    lm.rlmlab_engine.supports_constraints = True  # takes the grammar path (the scripted LM ignores grammars)
    return lm


def llama_rates(engine, repeats: int = 2) -> dict:
    """llama.cpp's prefill and decode rates in this process (tokens/s, the best of ``repeats``): a fresh prefill of
    :data:`PREFILL_TOKENS` tokens, then :data:`DECODE_TOKENS` single-token decodes after it (no sampling)."""
    llm = engine.llm
    text = Path(ROOT / "README.md").read_text(encoding="utf-8")
    tokens = llm.tokenize(text.encode("utf-8"), add_bos=True)
    while len(tokens) < PREFILL_TOKENS + DECODE_TOKENS:
        tokens = tokens + tokens
    prefill, decode = [], []
    with engine._lock:
        for _ in range(repeats):
            llm.reset()
            t0 = time.perf_counter()
            llm.eval(tokens[:PREFILL_TOKENS])
            prefill.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for tok in tokens[PREFILL_TOKENS:PREFILL_TOKENS + DECODE_TOKENS]:
                llm.eval([tok])
            decode.append(time.perf_counter() - t0)
        llm.reset()
    return {"prefill_2000_s": round(min(prefill), 3), "prefill_tok_s": round(PREFILL_TOKENS / min(prefill), 1),
            "decode_tok_s": round(DECODE_TOKENS / min(decode), 1)}


def replay_floor(engine, calls: list[list[dict]]) -> list[float | None]:
    """llama.cpp alone on each task's own token counts, ``llama-bench -d D -p P -n N`` style: for every LM call of
    a task (``calls``: per task, the ``timing`` dicts of its calls in order), with the KV cache holding the call's
    ``cached_tokens`` (depth D), the seconds to evaluate its ``prefill_tokens`` in batches, its sampled
    ``decode_tokens`` one at a time and its grammar-forced tokens in one batch; summed per task. Filler text stands
    in for the prompt (the cost does not depend on which tokens). None for a task with a call lacking timing."""
    llm = engine.llm
    text = Path(ROOT / "README.md").read_text(encoding="utf-8")
    need = max((t["cached_tokens"] + t["prefill_tokens"] + t["decode_tokens"] + t.get("forced_tokens", 0)
                for task in calls for t in task if t), default=0)
    filler = llm.tokenize(text.encode("utf-8"), add_bos=True)
    while len(filler) < need:
        filler = filler + filler
    floors: list[float | None] = []
    with engine._lock:
        llm.reset()
        for task in calls:
            if not task or any(t is None for t in task):
                floors.append(None)
                continue
            total = 0.0
            for t in task:
                # The KV cache always holds a prefix of ``filler``: cut it to the depth, or extend it untimed.
                depth = t["cached_tokens"]
                if depth <= llm.n_tokens:
                    llm.n_tokens = depth
                else:
                    llm.eval(filler[llm.n_tokens:depth])
                pos = depth
                t0 = time.perf_counter()
                if t["prefill_tokens"]:
                    llm.eval(filler[pos:pos + t["prefill_tokens"]])
                pos += t["prefill_tokens"]
                for tok in filler[pos:pos + t["decode_tokens"]]:
                    llm.eval([tok])
                pos += t["decode_tokens"]
                if t.get("forced_tokens"):
                    llm.eval(filler[pos:pos + t["forced_tokens"]])
                total += time.perf_counter() - t0
            floors.append(round(total, 4))
        llm.reset()
    return floors


def _task_calls(run_dir: Path, rows: list[dict]) -> list[list[dict | None]]:
    """Each row's LM call timings, in call order, from its trajectory's ``lm_calls.jsonl`` (empty when absent)."""
    out = []
    for r in rows:
        f = run_dir / "trajectories" / str(r.get("trajectory_id")) / "lm_calls.jsonl"
        calls = [json.loads(x) for x in f.read_text().splitlines() if x.strip()] if f.exists() else []
        out.append([c.get("timing") for c in calls if not c.get("cached")])
    return out


def worker(args) -> int:
    """Run the tasks with the tree on sys.path and write per-task rows and the rates (one JSON file)."""
    import rlmlab
    from rlmlab.experiments import run_experiment
    from rlmlab.lm import make_lm

    tasks = _even_tasks(args.tasks_per_group, args.smoke)
    lm = _smoke_lm() if args.smoke else make_lm("local", max_tokens=256, n_threads=args.threads)
    engine = lm.rlmlab_engine
    cache_before = getattr(engine, "prompt_cache_tokens", 0)
    out: dict = {"tree": str(Path(rlmlab.__file__).parents[1]), "phases": {}}
    t0 = time.perf_counter()
    run = run_experiment("E13", lm=lm, task_list=tasks, conditions=["grammar_templates"],
                         runs_dir=args.runs_dir, progress="lines")
    out["phases"]["grammar_templates"] = {"wall_s": round(time.perf_counter() - t0, 2), "run_dir": str(run.run_dir)}
    rows = [json.loads(x) for x in (run.run_dir / "results.jsonl").read_text().splitlines() if x.strip()]
    out["rows"] = [{k: r.get(k) for k in ("task_id", "success", "elapsed_ms", "input_tokens", "output_tokens",
                                          "iterations", "timing", "error", "trajectory_id")} for r in rows]
    out["cache_tokens"] = getattr(engine, "prompt_cache_tokens", 0) - cache_before
    out["rates"] = None if args.smoke else llama_rates(engine)
    if not args.smoke:
        floors = replay_floor(engine, _task_calls(run.run_dir, rows))
        for row, floor in zip(out["rows"], floors):
            row["replay_floor_s"] = floor
    if args.demo and not args.smoke:
        out["demo"] = demo_job(args.runs_dir)
    Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


def demo_job(runs_dir: str) -> dict:
    """``rlmlab demo`` as ``make demo`` runs it (this tree's defaults: the main job notebook, model load, E13's
    comparison and E14's learning part), in a process of its own: agent runs (result rows) per minute of wall time."""
    import re

    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "demo", "--runs-dir", runs_dir], capture_output=True,
                          text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"rlmlab demo failed ({proc.returncode}): {proc.stderr[-2000:]}")
    notebook = Path(re.search(r"executed notebook: (\S+)", proc.stdout).group(1))
    counts = {f.parent.name: sum(1 for x in f.read_text().splitlines() if x.strip())
              for f in sorted(notebook.parent.glob("*/results.jsonl"))}
    n = sum(counts.values())
    return {"runs": counts, "tasks": n, "wall_s": round(wall, 1), "tasks_per_min": round(n / wall * 60, 2),
            "run_dir": str(notebook.parent)}


def _figures(w: dict) -> dict:
    """One worker's figures: per task means, floors and ratios."""
    rows, rates = w["rows"], w.get("rates")
    n = len(rows)
    prompt = sum(r["input_tokens"] for r in rows)
    timed = [r["timing"] for r in rows if r.get("timing")]
    cached = sum(t["cached_tokens"] for t in timed) if timed else w.get("cache_tokens", 0)
    share = cached / prompt if prompt else None
    f: dict = {"tasks": n, "pass_at_1": round(mean(float(r["success"]) for r in rows), 3),
               "seconds_per_task": round(mean(r["elapsed_ms"] for r in rows) / 1000, 2),
               "prompt_tokens_per_task": round(prompt / n, 1),
               "completion_tokens_per_task": round(mean(r["output_tokens"] for r in rows), 1),
               "cached_share": round(share, 3) if share is not None else None,
               "iterations_per_task": round(mean(r["iterations"] for r in rows), 2),
               "errors": sum(1 for r in rows if r.get("error"))}
    if timed:
        from rlmlab.executors import TIME_PARTS

        f["breakdown_s_per_task"] = {k.removesuffix("_ms"): round(mean(t[k] for t in timed) / 1000, 3)
                                     for k in ("wall_ms", *TIME_PARTS)}
    if rates:
        ratios = []
        for r in rows:
            t = r.get("timing")
            prefilled = t["prefill_tokens"] if t else r["input_tokens"] * (1 - (share or 0))
            decoded = t["decode_tokens"] if t else r["output_tokens"]
            floor = prefilled / rates["prefill_tok_s"] + decoded / rates["decode_tok_s"]
            ratios.append(r["elapsed_ms"] / 1000 / floor if floor else None)
        f["wall_over_floor"] = round(median(x for x in ratios if x is not None), 2)
        replayed = [r["elapsed_ms"] / 1000 / r["replay_floor_s"] for r in rows if r.get("replay_floor_s")]
        if replayed:
            f["wall_over_replay_floor"] = round(median(replayed), 2)
            f["replay_floor_s_per_task"] = round(mean(r["replay_floor_s"] for r in rows if r.get("replay_floor_s")), 3)
        f["wall_over_fresh_2000_prefill"] = round(f["seconds_per_task"] / rates["prefill_2000_s"], 3)
        f["rates"] = rates
    if w.get("demo"):
        f["demo"] = w["demo"]
    return f


def _run_worker(tree: Path, args, round_no: int, name: str) -> dict:
    out = Path(args.runs_dir) / f"speed-{name}-{round_no}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--out", str(out), "--runs-dir", args.runs_dir]
    cmd += ["--tasks-per-group", str(args.tasks_per_group)] if args.tasks_per_group else []
    cmd += ["--smoke"] if args.smoke else []
    cmd += ["--threads", str(args.threads)]
    cmd += ["--demo"] if args.demo else []
    env = {**os.environ, "PYTHONPATH": str(tree)}
    print(f"== round {round_no}: {name} ({tree})", flush=True)
    if args.smoke:  # this tree only, nothing timed: in this process, saving an interpreter's imports
        worker(argparse.Namespace(**{**vars(args), "out": str(out)}))
    else:
        subprocess.run(cmd, env=env, check=True, cwd=str(tree))
    return json.loads(out.read_text())


def _merge(workers: list[dict]) -> dict:
    """Rounds of one tree as one worker (rows concatenated, rates: the best seen)."""
    merged = {"rows": [r for w in workers for r in w["rows"]], "cache_tokens": sum(w["cache_tokens"] for w in workers)}
    rates = [w["rates"] for w in workers if w.get("rates")]
    if rates:
        merged["rates"] = {"prefill_2000_s": min(r["prefill_2000_s"] for r in rates),
                           "prefill_tok_s": max(r["prefill_tok_s"] for r in rates),
                           "decode_tok_s": max(r["decode_tok_s"] for r in rates)}
    demos = [w["demo"] for w in workers if w.get("demo")]
    if demos:
        merged["demo"] = demos[-1]
    return merged


def goals(before: dict, after: dict) -> list[list]:
    def ratio(key):
        b, a = before.get(key), after.get(key)
        return round(a / b, 3) if a is not None and b else None

    table = [["seconds per task (grammar_templates, even L1/2)", before["seconds_per_task"],
              after["seconds_per_task"], ratio("seconds_per_task"), "after/before <= 0.333"],
             ["pass@1", before["pass_at_1"], after["pass_at_1"], ratio("pass_at_1"), "after >= before"],
             ["completion tokens per task", before["completion_tokens_per_task"],
              after["completion_tokens_per_task"], ratio("completion_tokens_per_task"), "-"],
             ["prompt tokens per task", before["prompt_tokens_per_task"], after["prompt_tokens_per_task"],
              ratio("prompt_tokens_per_task"), "-"],
             ["cached-token share", before["cached_share"], after["cached_share"], None, "-"]]
    if "wall_over_floor" in after and "wall_over_floor" in before:
        table += [["wall / llama.cpp floor from the 2,000-token rates (median)", before["wall_over_floor"],
                   after["wall_over_floor"], None, "-"],
                  ["wall / llama.cpp floor at each task's own depth and token counts (median)",
                   before.get("wall_over_replay_floor"), after.get("wall_over_replay_floor"), None, "after <= 1.5"],
                  ["wall / fresh 2,000-token prefill", before["wall_over_fresh_2000_prefill"],
                   after["wall_over_fresh_2000_prefill"], None, "after <= 0.4"]]
    if "demo" in before and "demo" in after:
        table.append(["demo agent tasks per minute", before["demo"]["tasks_per_min"], after["demo"]["tasks_per_min"],
                      round(after["demo"]["tasks_per_min"] / before["demo"]["tasks_per_min"], 2), "after/before >= 3"])
    return table


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, default=None, help="a checkout of main to compare with (e.g. /work/main)")
    ap.add_argument("--json", help="default runs/bench/speed.json in the checkout; --smoke: runs/bench_smoke/")
    ap.add_argument("--runs-dir", help="default runs/bench in the checkout; --smoke: runs/bench_smoke")
    ap.add_argument("--tasks-per-group", type=int, default=0, help="even tasks per suite x level (0: all)")
    ap.add_argument("--threads", type=int, default=2,
                    help="llama.cpp threads (1 on a machine other jobs hold: 2 threads then wait on each other)")
    ap.add_argument("--rounds", type=int, default=1, help="alternating before/after rounds")
    ap.add_argument("--demo", action="store_true", help="also time rlmlab demo's default job in each tree")
    ap.add_argument("--smoke", action="store_true", help="scripted LM, 2 tasks, this tree only (seconds)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    # a smoke run (make check) never overwrites a full run's figures
    base = Path("runs/bench_smoke").resolve() if args.smoke else ROOT / "runs" / "bench"
    args.runs_dir, args.json = args.runs_dir or str(base), args.json or str(base / "speed.json")
    Path(args.runs_dir).mkdir(parents=True, exist_ok=True)
    if args.worker:
        return worker(args)
    trees = {"after": ROOT} if args.smoke or args.before is None else {"before": args.before.resolve(), "after": ROOT}
    got: dict[str, list[dict]] = {name: [] for name in trees}
    load = [os.getloadavg()[0]]
    for i in range(args.rounds):
        for name, tree in trees.items():  # alternating, so drifting load hits both alike
            got[name].append(_run_worker(tree, args, i, name))
            load.append(os.getloadavg()[0])
    result = {"complete": True, "smoke": args.smoke, "threads": args.threads,
              "tasks_per_group": args.tasks_per_group, "load_1min": [round(x, 2) for x in load],
              "cpus": os.cpu_count(), "trees": {k: str(v) for k, v in trees.items()},
              "figures": {name: _figures(_merge(ws)) for name, ws in got.items()}}
    if "before" in result["figures"]:
        result["goals"] = goals(result["figures"]["before"], result["figures"]["after"])
        print("\n| goal | before | after | after/before | target |\n|---|---|---|---|---|")
        for row in result["goals"]:
            print("| " + " | ".join("-" if x is None else str(x) for x in row) + " |")
    print(json.dumps(result["figures"], indent=1))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
