"""Teacher-learner loop: single pass vs try-again vs bias-aware RTS, both teacher modes, on the same items.

Runs, in one process:

1. the demo provider (the seeded simulator of ``rlmlab/teach/_learner.py``) on ``data/math20.csv`` with the
   defaults of ``configs/run.yaml`` (error rate 0.1, seed 0, max 3 turns), plus the mean over ``--seeds``
   seeds, and the loop's speed with that provider (learner turns per second, all six arms);
2. the embedded SmolLM2-135M-Instruct (``provider local``; self-confidence from its token log-probabilities)
   on ``data/math20.csv`` and on the first ``--gsm8k`` items of ``data/gsm8k_train_500.jsonl``, both modes,
   ``--max-turns`` answers per item (default 2, as the issue's example command).

Each arm's accuracy, right→wrong and wrong→right flips, average turns and tokens are printed as tables, with
the ratio RTS/single of accuracy measured in the same run. Traces and summary.json go under ``--out``
(default ``runs/bench_teach``). The local model's first turn is memoised, so the three arms share it. Times are
reported, never asserted.

``--smoke`` (make check): the demo provider only, 2 seeds, results under runs/bench_smoke/.

Run:  .venv/bin/python benchmarks/teach.py [--quick | --smoke] [--gsm8k N] [--max-turns N] [--no-local] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402

from rlmlab.teach import RunConfig, run_teach  # noqa: E402


def _ratios(report) -> dict[str, float | None]:
    out = {}
    for mode in report.config.modes:
        single = report.row(mode, "single").accuracy
        out[mode] = round(report.row(mode, "rts").accuracy / single, 3) if single else None
    return out


def demo_section(console: Console, seeds: int, out: Path) -> dict:
    report = run_teach(RunConfig(traces_out=str(out / "demo_math20" / "traces.json")))
    console.print(report)
    t0, turns = time.perf_counter(), 0
    means: dict[tuple[str, str], list[float]] = {}
    for seed in range(seeds):
        r = run_teach(RunConfig(seed=seed), write=False)
        turns += r.turns
        for row in r.rows:
            means.setdefault((row.mode, row.arm), []).append(row.accuracy)
    speed = turns / (time.perf_counter() - t0)
    mean = {f"{m}/{a}": round(statistics.mean(v), 3) for (m, a), v in means.items()}
    console.print(f"demo, mean accuracy over {seeds} seeds: {mean}")
    console.print(f"demo loop speed: {speed:,.0f} learner turns/s ({turns} turns, six arms x {seeds} seeds)")
    return {"seed0": report.to_dict(), "mean_over_seeds": mean, "turns_per_second": round(speed, 1),
            "rts_over_single": _ratios(report)}


def local_section(console: Console, dataset: str, limit: int, max_turns: int, out: Path, name: str) -> dict:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    cfg = RunConfig(demo_mode=False, provider="local", dataset=dataset, limit=limit, max_turns=max_turns,
                    traces_out=str(out / name / "traces.json"))
    with Progress(TextColumn(f"{name} " + "{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as bar:
        task = bar.add_task("", total=limit * 6)
        report = run_teach(cfg, progress=lambda label: bar.update(task, advance=1, description=label))
    console.print(report)
    d = report.to_dict()
    console.print(f"{name}: {report.turns} learner turns recorded in {report.seconds:.0f} s "
                  f"(first turns shared by the arms); RTS/single accuracy: {_ratios(report)}")
    return {**d, "rts_over_single": _ratios(report)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 math20 items and 3 GSM8K items with the local model")
    ap.add_argument("--gsm8k", type=int, default=100, help="GSM8K items for the local model")
    ap.add_argument("--max-turns", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=20, help="demo seeds averaged")
    ap.add_argument("--no-local", action="store_true", help="only the demo provider")
    ap.add_argument("--out", default=None, help="traces (default runs/bench_teach)")
    ap.add_argument("--json", default=None, help="write all results here")
    ap.add_argument("--smoke", action="store_true", help="demo provider, 2 seeds, seconds (make check)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.seeds, args.no_local = 2, True
        args.json = args.json or "runs/bench_smoke/teach.json"
    args.out = args.out or ("runs/bench_smoke/teach" if args.smoke else "runs/bench_teach")
    console = Console()
    out = Path(args.out)
    console.print(f"load average at start: {os.getloadavg()}")
    results = {"demo_math20": demo_section(console, args.seeds, out)}
    if not args.no_local:
        math_n = 3 if args.quick else 20
        gsm_n = 3 if args.quick else args.gsm8k
        results["local_math20"] = local_section(console, "data/math20.csv", math_n, args.max_turns, out,
                                                "local_math20")
        results["local_gsm8k"] = local_section(console, "data/gsm8k_train_500.jsonl", gsm_n, args.max_turns, out,
                                               f"local_gsm8k{gsm_n}")
    console.print(f"load average at end: {os.getloadavg()}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
