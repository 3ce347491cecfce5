"""Experiment runner costs: E7's prompt leakage (naive vs handle tools) and the runner's overhead per task.

Two measurements in one process, each run through ``rlmlab.experiments.run_experiment`` into a temporary
runs directory:

1. E7 on the ``code`` suite (``--tasks`` tasks, default 10) with the scripted LM ``scripted:probe``: condition
   ``naive`` (the context as a plain string, no bounded tools: DSPy's default RLM) and condition ``handle``
   (a BlobRef handle with the ctx_* tools). Per condition, from ``results.jsonl`` and the trajectories: mean
   prompt characters per iteration (all iterations of all tasks pooled), the same at each iteration index,
   mean total tokens (input + output) per task, mean ``variables_info_chars`` (the largest variable listing
   of a task), iterations and stdout characters. The probe script measures the context once and SUBMITs, so
   every task has two iterations and the gap shows only the variable listing and the tool descriptions in
   the prompt (the handle arm carries its tools' descriptions), not what a real model would print.

2. Runner overhead per task, i.e. wall time minus LM time. E1 (no memory layers, handle tools, one worker)
   is run with the scripted probe LM on ``--tasks`` tasks and on the first ``--local-tasks`` tasks (default
   2), then with ``lm="local"`` (the embedded SmolLM2-135M via llama-cpp-python) on those same tasks. The LM
   object is built before the timer starts (the model load is reported apart), and the LM time is the sum of
   ``LMCall.latency_s`` recorded by the LM's CallRecorder during the run; for the scripted LM it is small but
   subtracted too. Reported: wall, LM and overhead seconds per task and overhead ms per iteration; the share
   of overhead in a local task measured directly (local wall - local LM time) / local wall; and the scripted
   run's per-task overhead on the same tasks as a share of the local per-task wall time. The direct share
   includes the REPL cost of the local run's extra iterations, the scripted one does not.

The machine is noisy: wall times are reported, never asserted, and only ratios measured in the same run
are quoted. Numbers go to ``--json`` (default runs/bench/experiments.json), written once before the local
run (``"complete": false``) so a run killed there keeps the rest, and again at the end.

Run:  .venv/bin/python benchmarks/experiments.py [--tasks 10] [--local-tasks 2] [--skip-local] [--json PATH] [--smoke]
"""
# smoke-marks: slow

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from rlmlab.executors import TRAJECTORY_FILE, Trajectory  # noqa: E402
from rlmlab.experiments import run_experiment  # noqa: E402
from rlmlab.experiments._runner import read_results  # noqa: E402
from rlmlab.lm import make_lm, recorder_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 5) if a is not None and b else None


def e7(tasks: int, runs_dir: Path) -> dict:
    """E7 naive vs handle with the probe LM: per-condition means from the results and the trajectories."""
    run = run_experiment("E7", lm="scripted:probe", suite="code", tasks=tasks, runs_dir=runs_dir, progress=False)
    rows = read_results(run.run_dir / "results.jsonl")
    out: dict = {"run_id": run.run_id, "conditions": {}}
    for cond in dict.fromkeys(r["condition"] for r in rows):
        mine = [r for r in rows if r["condition"] == cond]
        trajs = [Trajectory.read_jsonl(run.run_dir / "trajectories" / r["trajectory_id"] / TRAJECTORY_FILE)
                 for r in mine]
        prompts = [it.leakage.prompt_chars for t in trajs for it in t.iterations]
        by_index: dict[int, list[int]] = {}
        for t in trajs:
            for it in t.iterations:
                by_index.setdefault(it.index, []).append(it.leakage.prompt_chars)
        out["conditions"][cond] = {
            "tasks": len(mine),
            "pass_rate": round(mean(float(r["success"]) for r in mine), 3),
            "iterations": round(mean(r["iterations"] for r in mine), 2),
            "prompt_chars_per_iter": round(mean(prompts), 1),
            "prompt_chars_per_iter_by_index": {i: round(mean(v), 1) for i, v in sorted(by_index.items())},
            "total_tokens_per_task": round(mean(r["input_tokens"] + r["output_tokens"] for r in mine), 1),
            "variables_info_chars": round(mean(r["variables_info_chars"] for r in mine), 1),
            "stdout_chars": round(mean(r["stdout_chars"] for r in mine), 1),
        }
    n, h = out["conditions"]["naive"], out["conditions"]["handle"]
    out["ratio_naive_handle"] = {k: ratio(n[k], h[k]) for k in (
        "prompt_chars_per_iter", "total_tokens_per_task", "variables_info_chars")}
    return out


def timed_e1(lm, tasks: int, runs_dir: Path) -> dict:
    """E1 with ``lm`` (an LM object, already loaded) on ``tasks`` tasks: wall, LM and overhead time per task."""
    rec = recorder_of(lm)
    mark, t0 = rec.mark(), time.perf_counter()
    run = run_experiment("E1", lm=lm, suite="code", tasks=tasks, workers=1, runs_dir=runs_dir, progress=False)
    wall = time.perf_counter() - t0
    calls = rec.since(mark)
    rows = read_results(run.run_dir / "results.jsonl")
    lm_s = sum(c.latency_s for c in calls)
    iters = sum(r["iterations"] for r in rows)
    return {
        "tasks": len(rows), "task_ids": [r["task_id"] for r in rows], "iterations": iters,
        "lm_calls": len(calls), "passed": sum(bool(r["success"]) for r in rows),
        "wall_s": round(wall, 3), "lm_s": round(lm_s, 3),
        "wall_s_per_task": round(wall / len(rows), 3), "lm_s_per_task": round(lm_s / len(rows), 3),
        "overhead_s_per_task": round((wall - lm_s) / len(rows), 3),
        "overhead_ms_per_iter": round(1000 * (wall - lm_s) / iters, 1) if iters else None,
    }


def overhead_share(cost: dict, tasks: int, local_tasks: int) -> None:
    """Add the shares of runner overhead in a local task to ``cost`` (it has the local run)."""
    loc, matched = cost["runs"][f"local x{local_tasks}"], cost["runs"][f"scripted x{local_tasks}"]
    cost["share_direct"] = ratio(loc["wall_s"] - loc["lm_s"], loc["wall_s"])
    cost["share_scripted"] = ratio(matched["overhead_s_per_task"], loc["wall_s_per_task"])
    cost["share_scripted_all"] = ratio(cost["runs"][f"scripted x{tasks}"]["overhead_s_per_task"],
                                       loc["wall_s_per_task"])


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


def e7_tables(leak: dict, tasks: int) -> list[Table]:
    table = Table(title=f"E7 on the code suite, scripted:probe, {tasks} tasks: naive vs handle tools",
                  title_justify="left")
    keys = [("tasks", "tasks"), ("pass_rate", "pass"), ("iterations", "iters/task"),
            ("prompt_chars_per_iter", "prompt ch/iter"), ("total_tokens_per_task", "tokens/task"),
            ("variables_info_chars", "vars info ch"), ("stdout_chars", "stdout ch/task")]
    table.add_column("condition")
    for _, label in keys:
        table.add_column(label, justify="right")
    for cond, s in leak["conditions"].items():
        table.add_row(cond, *(f"{s[k]:,}" for k, _ in keys))
    table.add_row("naive/handle", "", "", "", *(f"{leak['ratio_naive_handle'][k]:.3f}x" for k in (
        "prompt_chars_per_iter", "total_tokens_per_task", "variables_info_chars")), "")
    per_iter = Table(title="E7 mean prompt characters at each iteration", title_justify="left")
    per_iter.add_column("condition")
    indices = sorted({i for s in leak["conditions"].values() for i in s["prompt_chars_per_iter_by_index"]})
    for i in indices:
        per_iter.add_column(f"iter {i}", justify="right")
    for cond, s in leak["conditions"].items():
        per_iter.add_row(cond, *(f"{s['prompt_chars_per_iter_by_index'].get(i, 0):,}" for i in indices))
    return [table, per_iter]


def overhead_table(cost: dict) -> Table:
    table = Table(title="E1 on the code suite, one worker: runner overhead = wall - LM time", title_justify="left")
    for col in ["run", "tasks", "iters", "LM calls", "pass", "wall s/task", "LM s/task", "overhead s/task",
                "overhead ms/iter"]:
        table.add_column(col, justify="left" if col == "run" else "right")
    for name, r in cost["runs"].items():
        table.add_row(name, str(r["tasks"]), str(r["iterations"]), str(r["lm_calls"]), str(r["passed"]),
                      f"{r['wall_s_per_task']:.3f}", f"{r['lm_s_per_task']:.3f}", f"{r['overhead_s_per_task']:.3f}",
                      f"{r['overhead_ms_per_iter']:.1f}")
    return table


def ratio_lines(leak: dict, cost: dict, args: argparse.Namespace) -> list[str]:
    rn = leak["ratio_naive_handle"]
    lines = [f"E7 prompt chars/iter naive/handle = {rn['prompt_chars_per_iter']:.2f}x",
             f"E7 total tokens/task naive/handle = {rn['total_tokens_per_task']:.2f}x",
             f"E7 variables_info_chars naive/handle = {rn['variables_info_chars']:.2f}x"]
    if "share_direct" not in cost:
        return lines + ["runner overhead share of a local task: not measured (--skip-local)"]
    return lines + [
        f"runner overhead share of a local task (local wall - LM time) = {pct(cost['share_direct'])}",
        f"runner overhead share of a local task (scripted x{args.local_tasks} overhead / local wall) = "
        f"{pct(cost['share_scripted'])}",
        f"runner overhead share of a local task (scripted x{args.tasks} overhead / local wall) = "
        f"{pct(cost['share_scripted_all'])}"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=10, help="code-suite tasks for E7 and the scripted E1 runs")
    ap.add_argument("--local-tasks", type=int, default=2,
                    help="tasks for the local SmolLM2 run (minutes each on 2 cores)")
    ap.add_argument("--skip-local", action="store_true", help="skip the local-model run")
    ap.add_argument("--json", metavar="PATH", help="default runs/bench/experiments.json in the checkout")
    ap.add_argument("--smoke", action="store_true", help="a check that the script runs (make check): one task, no "
                    "local model, seconds; --json defaults to runs/bench_smoke/experiments.json")
    args = ap.parse_args(argv)
    if args.smoke:
        args.tasks, args.local_tasks, args.skip_local = 1, 1, True
    args.json = args.json or ("runs/bench_smoke/experiments.json" if args.smoke
                              else str(ROOT / "runs" / "bench" / "experiments.json"))
    console, t_start = Console(), time.perf_counter()
    if not console.is_terminal:  # a log file: wide enough for the tables
        console.width = 120
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    out: dict = {"args": vars(args), "complete": False}

    def save() -> None:  # after every phase, so a run killed in the local phase keeps the rest
        out["bench_elapsed_s"] = round(time.perf_counter() - t_start, 1)
        path.write_text(json.dumps(out, indent=2), encoding="utf-8")

    with tempfile.TemporaryDirectory(prefix="bench-exp-") as tmp:
        out["e7"] = e7(args.tasks, Path(tmp))
        for table in e7_tables(out["e7"], args.tasks):
            console.print(table)
        scripted = make_lm("scripted:probe")
        cost = out["overhead"] = {"runs": {f"scripted x{n}": timed_e1(scripted, n, Path(tmp))
                                           for n in dict.fromkeys([args.tasks, args.local_tasks])}}
        save()
        if not args.skip_local:
            console.print(overhead_table(cost))
            console.print(f"running E1 with the local model on {args.local_tasks} task(s) ...")
            t0 = time.perf_counter()
            local = make_lm("local")
            cost["local_load_s"] = round(time.perf_counter() - t0, 2)
            cost["runs"][f"local x{args.local_tasks}"] = timed_e1(local, args.local_tasks, Path(tmp))
            overhead_share(cost, args.tasks, args.local_tasks)
    console.print(overhead_table(cost))
    if "local_load_s" in cost:
        console.print(f"local model load (not counted): {cost['local_load_s']:.2f} s")
    out["ratio_lines"] = ratio_lines(out["e7"], cost, args)
    print("\n".join(out["ratio_lines"]))
    out["complete"] = True
    save()
    console.print(f"wrote {path} ({out['bench_elapsed_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
