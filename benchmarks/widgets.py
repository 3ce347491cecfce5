"""Responsiveness of the trace widgets: BudgetTimeline on 1,000 context events, TrajectoryExplorer on 50 steps.

Inputs, generated (seeded) in the process, no LM and no kernel:

* a ``ContextTrace`` of ``--events`` events (default 1,000) over ``--iterations`` iterations (default 50): a
  SystemPrompt at iteration 0, then per iteration an AssistantCode, GrepResults, ToolCall/ToolResult pairs,
  the odd LlmQueryResult and an ExecutionOutput, token sizes drawn like a real RLM run's (tens to hundreds),
  a Final at the end. Events are built before timing, with their tokens given, so the tokenizer is not timed.
* a ``Trajectory`` of ``--iterations`` IterationRecords: reasoning of 1-4 sentences, 2-12 lines of ctx_* code,
  outputs of 20-6,000 characters (Rust-like lines or grep JSON), 0-4 tool calls, leakage counters that grow with
  the history, a Turing round with a correction on about one step in eight, and the trace above. It is also
  written as trajectory.jsonl to time loading from a path.

Measured, each ``--rounds`` times (median and best reported), in one process:

1. BudgetTimeline: construction (includes the first render), ``refresh()``, a mode toggle, ``static_html()``
   (time and size) and ``_repr_mimebundle_()``.
2. TrajectoryExplorer: construction from the object and from the run directory (JSONL read included),
   ``select(i)`` on a fresh explorer (each step rendered for the first time, pygments included) and again once
   cached, ``next()``, ``static_html()`` cold and warm (time and size).
3. The live path: logging the events into a fresh trace with nothing subscribed, with a no-op listener, with a
   ``BudgetTimeline(live=True)`` at the default throttle (200 ms) and with the throttle off (a render per event).
   The logging loop and ``close()`` (unsubscribe and the final render) are timed apart. Arms run interleaved
   per round (the unthrottled arm only in the first ``--slow-rounds``); the ratios of loop and of loop +
   close() to the arm with nothing subscribed are printed. Renders per arm are counted.

Times are reported, never asserted. Raw numbers go to ``--out``/results.json (default runs/bench_widgets).

Run:  .venv/bin/python benchmarks/widgets.py [--events 1000] [--iterations 50] [--rounds 15] [--seed 0] [--smoke]
(``--smoke``, run by make check: 62 events over 20 iterations, one round, into runs/bench_smoke/widgets.)
"""
# smoke-marks: slow

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from rlmlab.executors import TRAJECTORY_FILE, IterationRecord, Trajectory  # noqa: E402
from rlmlab.jupyter._budget import BudgetTimeline  # noqa: E402
from rlmlab.jupyter._explorer import TrajectoryExplorer  # noqa: E402
from rlmlab.trace import ContextEvent, ContextTrace, IterationLeakage  # noqa: E402

WORDS = ("async fn open read write poll buffer file handle context slice find count lines match total pattern "
         "result tokio spawn blocking future pin self mut ref std io error path metadata").split()
CODE_LINES = [
    "hits = ctx_find(context, r'pub async fn', k=50)",
    "print(hits['total'])",
    "for m in hits['matches'][:10]:\n    print(m['line'], m['text'])",
    "s = ctx_stats(context)\nprint(s['lines'], s['length'])",
    "part = ctx_slice(context, {a}, {b})\nprint(part['text'][:500])",
    "head = ctx_peek(context, 400)['preview']\nprint(head)",
    "names = [m['text'].split('fn ')[1].split('(')[0] for m in hits['matches']]",
    "print(len(names), names[:5])",
    "summary = llm_query('Summarise: ' + part['text'][:2000])\nprint(summary)",
    "counts = {{}}\nfor m in hits['matches']:\n    counts[m['line'] // 100] = counts.get(m['line'] // 100, 0) + 1",
    "print(sorted(counts.items()))",
]


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def make_events(rng: random.Random, n_events: int, n_iterations: int) -> list[ContextEvent]:
    """``n_events`` events: SystemPrompt, then per iteration code, tool traffic and output, then Final."""
    events = [ContextEvent.system_prompt(words(rng, 40), tokens=rng.randint(1200, 1800))]
    per_iteration = (n_events - 2) // n_iterations
    extra = (n_events - 2) - per_iteration * n_iterations
    for i in range(1, n_iterations + 1):
        budget = per_iteration + (1 if i <= extra else 0)
        step = [ContextEvent.assistant_code(words(rng, 20), tokens=rng.randint(40, 220), iteration=i)]
        while len(step) < budget - 1:
            roll = rng.random()
            if roll < 0.45:
                step.append(ContextEvent.grep_result("pub async fn", rng.randint(0, 60), rng.randint(30, 600),
                                                     content=words(rng, 30), iteration=i))
            elif roll < 0.9 and len(step) < budget - 2:
                step.append(ContextEvent.tool_call("ctx_slice", '{"start": 0, "end": 2000}', tokens=12, iteration=i))
                step.append(ContextEvent.tool_result("ctx_slice", words(rng, 30), tokens=rng.randint(50, 700),
                                                     iteration=i))
            else:
                step.append(ContextEvent.llm_query_result(words(rng, 30), tokens=rng.randint(40, 300), iteration=i))
        step.append(ContextEvent.execution_output(words(rng, 20), tokens=rng.randint(5, 900), iteration=i))
        events += step[:budget]
    events.append(ContextEvent.final("There are 12 public async functions.", tokens=9, iteration=n_iterations))
    return events


def make_trace(events: list[ContextEvent], **kwargs: Any) -> ContextTrace:
    trace = ContextTrace(**kwargs)
    for e in events:
        trace.log_event(e)
    return trace


def rust_output(rng: random.Random, chars: int) -> str:
    lines, n = [], 0
    while n < chars:
        line = f"{rng.randint(1, 900)}:    pub async fn {rng.choice(WORDS)}_{rng.choice(WORDS)}(&self) -> io::Result<()> {{"
        lines.append(line)
        n += len(line) + 1
    return "\n".join(lines)[:chars]


def make_trajectory(rng: random.Random, n_iterations: int, trace: ContextTrace) -> Trajectory:
    records, prompt_chars = [], 6000
    for i in range(1, n_iterations + 1):
        code = "\n".join(rng.choice(CODE_LINES).format(a=rng.randint(0, 9000), b=rng.randint(9000, 20000))
                         for _ in range(rng.randint(1, 5)))
        tools = [{"name": rng.choice(["ctx_find", "ctx_slice", "ctx_peek", "ctx_stats"]),
                  "arguments": {"ref": {"__blobref__": True, "key": "context", "n": 24351},
                                "pattern": "pub async fn", "k": 50},
                  "result_chars": rng.randint(20, 9000), "error": None if rng.random() > 0.1 else "ToolError: bad"}
                 for _ in range(rng.randint(0, 4))]
        output = rust_output(rng, rng.choice([20, 200, 800, 2000, 6000]))
        turing = []
        if rng.random() < 0.125:
            turing = [{"phase": "post_inference", "hooks": ["phantom_tool_result"],
                       "reasons": ["the reply presents data as obtained from a tool, but no tool was called"],
                       "correction": "[TURING CORRECTION] Call the tool and use its real output.", "kill": False}]
        prompt_chars += len(code) + min(len(output), 10_000) + 300
        records.append(IterationRecord(
            index=i, reasoning=". ".join(words(rng, 14).capitalize() for _ in range(rng.randint(1, 4))) + ".",
            code=code, output=output, tool_calls=tools,
            leakage=IterationLeakage(iteration=i, stdout_chars=len(output), variables_info_chars=384,
                                     tool_calls=len(tools), large_returns=sum(t["result_chars"] > 2000 for t in tools),
                                     sub_llm_calls=code.count("llm_query"), prompt_chars=prompt_chars,
                                     prompt_tokens=prompt_chars // 4, completion_tokens=rng.randint(30, 200)),
            input_tokens=prompt_chars // 4, output_tokens=rng.randint(30, 200), elapsed_ms=rng.randint(300, 9000),
            turing=turing))
    return Trajectory(run_id="bench-widgets", query="How many `pub async fn` are in this file?", lm="synthetic",
                      context_mode="handle", context_ref="context", iterations=records,
                      answer="There are 12 public async functions.", submitted=True,
                      input_tokens=sum(r.input_tokens for r in records),
                      output_tokens=sum(r.output_tokens for r in records), lm_calls=n_iterations,
                      context_trace=trace)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Milliseconds of one call (callers collect garbage once per round, not per call: a full collection with
    dspy and ipywidgets loaded takes tens of milliseconds)."""
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000, out


def stats(samples: list[float]) -> dict[str, float]:
    return {"median_ms": statistics.median(samples), "best_ms": min(samples), "n": len(samples)}


def bench_timeline(events: list[ContextEvent], rounds: int) -> dict[str, Any]:
    trace = make_trace(events)
    samples: dict[str, list[float]] = {k: [] for k in ("build", "refresh", "toggle mode", "static_html",
                                                        "_repr_mimebundle_")}
    size = 0
    for _ in range(rounds):
        gc.collect()
        ms, widget = timed(lambda: BudgetTimeline(trace))
        samples["build"].append(ms)
        samples["refresh"].append(timed(widget.refresh)[0])
        samples["toggle mode"].append(timed(lambda: widget.set_mode("per_iteration"))[0])
        widget.set_mode("cumulative")
        ms, page = timed(widget.static_html)
        samples["static_html"].append(ms)
        size = len(page.encode())
        samples["_repr_mimebundle_"].append(timed(widget._repr_mimebundle_)[0])
    return {"ops": {k: stats(v) for k, v in samples.items()}, "static_html_bytes": size,
            "segments": widget.chart.value.count("<rect class='rlmlab-seg'")}


def bench_explorer(traj: Trajectory, run_dir: Path, rounds: int) -> dict[str, Any]:
    n = len(traj.iterations)
    samples: dict[str, list[float]] = {k: [] for k in ("build (object)", "build (run dir, JSONL read)",
                                                        "select, first visit", "select, cached", "next",
                                                        "static_html, cold", "static_html, warm")}
    size = 0
    for _ in range(rounds):
        gc.collect()
        samples["build (object)"].append(timed(lambda: TrajectoryExplorer(traj))[0])
        ms, explorer = timed(lambda: TrajectoryExplorer(run_dir))
        samples["build (run dir, JSONL read)"].append(ms)
        order = list(range(1, n)) + [0]  # position 0 was rendered by the constructor
        samples["select, first visit"] += [timed(lambda i=i: explorer.select(i))[0] for i in order]
        samples["select, cached"] += [timed(lambda i=i: explorer.select(i))[0] for i in order]
        explorer.select(0)
        samples["next"] += [timed(explorer.next)[0] for _ in range(n - 1)]
        cold = TrajectoryExplorer(traj)
        ms, page = timed(cold.static_html)
        samples["static_html, cold"].append(ms)
        samples["static_html, warm"].append(timed(cold.static_html)[0])
        size = len(page.encode())
    return {"ops": {k: stats(v) for k, v in samples.items()}, "static_html_bytes": size}


def bench_live(events: list[ContextEvent], rounds: int, slow_rounds: int) -> dict[str, Any]:
    """Log every event into a fresh trace per arm, arms interleaved within each round. Each arm returns the
    logging loop's milliseconds, close()'s (the widget's final render; 0 without a widget) and the renders
    done after construction. The unthrottled arm (a render per event, seconds per round) runs only in the
    first ``slow_rounds`` rounds."""

    def arm(listener: str | None = None, throttle_ms: float = 0.0) -> Callable[[], tuple[float, float, int]]:
        def run() -> tuple[float, float, int]:
            trace = ContextTrace()
            widget = BudgetTimeline(trace, live=True, throttle_ms=throttle_ms) if listener == "widget" else None
            if listener == "no-op":
                trace.subscribe(lambda event: None)
            gc.collect()
            t0 = time.perf_counter()
            for e in events:
                trace.log_event(e)
            t1 = time.perf_counter()
            if widget is not None:
                widget.close()
            t2 = time.perf_counter()
            return (t1 - t0) * 1000, (t2 - t1) * 1000, widget.renders - 1 if widget is not None else 0
        return run

    arms = {"nothing subscribed": arm(), "no-op listener": arm("no-op"),
            "live BudgetTimeline, throttle 200 ms": arm("widget", 200.0),
            "live BudgetTimeline, throttle off": arm("widget", 0.0)}
    loop: dict[str, list[float]] = {k: [] for k in arms}
    close: dict[str, list[float]] = {k: [] for k in arms}
    renders: dict[str, list[int]] = {k: [] for k in arms}
    for r in range(rounds):
        for name, run in arms.items():
            if name.endswith("throttle off") and r >= slow_rounds:
                continue
            ms_loop, ms_close, n = run()
            loop[name].append(ms_loop)
            close[name].append(ms_close)
            renders[name].append(n)
    base = statistics.median(loop["nothing subscribed"])
    out = {}
    for name in arms:
        total = [a + b for a, b in zip(loop[name], close[name])]
        out[name] = {"loop": stats(loop[name]), "close": stats(close[name]), "total": stats(total),
                     "renders_median": statistics.median(renders[name]),
                     "loop_ratio": statistics.median(loop[name]) / base,
                     "total_ratio": statistics.median(total) / base}
    return out


def report(console: Console, results: dict[str, Any], args: argparse.Namespace) -> None:
    tl = results["timeline"]
    table = Table(title=f"BudgetTimeline on {args.events:,} events over {args.iterations} iterations "
                        f"({tl['segments']} bar segments)")
    for col in ("operation", "median ms", "best ms"):
        table.add_column(col, justify="left" if col == "operation" else "right")
    for name, s in tl["ops"].items():
        table.add_row(name, f"{s['median_ms']:.2f}", f"{s['best_ms']:.2f}")
    table.caption = f"static_html: {tl['static_html_bytes'] / 1024:,.1f} KiB"
    console.print(table)

    ex = results["explorer"]
    table = Table(title=f"TrajectoryExplorer on {args.iterations} iterations")
    for col in ("operation", "median ms", "best ms", "samples"):
        table.add_column(col, justify="left" if col == "operation" else "right")
    for name, s in ex["ops"].items():
        table.add_row(name, f"{s['median_ms']:.3f}", f"{s['best_ms']:.3f}", str(s["n"]))
    table.caption = f"static_html: {ex['static_html_bytes'] / 1024:,.1f} KiB (every iteration)"
    console.print(table)

    table = Table(title=f"Logging {args.events:,} events into a ContextTrace (medians; {args.rounds} rounds "
                        f"interleaved, {args.slow_rounds} for the unthrottled arm)")
    for col in ("arm", "loop ms", "µs per event", "close() ms", "total ms", "renders",
                "loop × nothing", "total × nothing"):
        table.add_column(col, justify="left" if col == "arm" else "right")
    for name, s in results["live"].items():
        table.add_row(name, f"{s['loop']['median_ms']:.2f}", f"{1000 * s['loop']['median_ms'] / args.events:.2f}",
                      f"{s['close']['median_ms']:.2f}", f"{s['total']['median_ms']:.2f}",
                      f"{s['renders_median']:,.0f}", f"{s['loop_ratio']:.1f}×", f"{s['total_ratio']:.1f}×")
    table.caption = ("close() unsubscribes and does the final render; renders are counted after construction, "
                     "close() included")
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1000, help="context events in the trace")
    ap.add_argument("--iterations", type=int, default=50, help="iterations of the trace and the trajectory")
    ap.add_argument("--rounds", type=int, default=15, help="repetitions of every measurement")
    ap.add_argument("--slow-rounds", type=int, default=3,
                    help="rounds of the live arm with the throttle off (a render per event: seconds per round)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="where results.json goes (default runs/bench_widgets)")
    ap.add_argument("--smoke", action="store_true", help="62 events, 20 iterations, 1 round, seconds (make check)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.events, args.iterations, args.rounds, args.slow_rounds = 62, 20, 1, 1
    args.out = args.out or Path("runs/bench_smoke/widgets" if args.smoke else "runs/bench_widgets")
    if args.events < args.iterations * 3 + 2:
        ap.error(f"--events {args.events}: need at least 3 per iteration plus 2 ({args.iterations * 3 + 2})")
    console, t_start = Console(width=150), time.perf_counter()
    console.print(f"load average at start: {os.getloadavg()}; Python {platform.python_version()}, "
                  f"{os.cpu_count()} CPUs")
    rng = random.Random(args.seed)
    events = make_events(rng, args.events, args.iterations)
    traj = make_trajectory(rng, args.iterations, make_trace(events))
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / traj.run_id
        traj.write_jsonl(run_dir / TRAJECTORY_FILE)
        results = {"timeline": bench_timeline(events, args.rounds),
                   "explorer": bench_explorer(traj, run_dir, args.rounds),
                   "live": bench_live(events, args.rounds, min(args.slow_rounds, args.rounds))}
    report(console, results, args)
    total = time.perf_counter() - t_start
    console.print(f"load average at end: {os.getloadavg()}; total {total:.1f} s")
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "results.json"
    out.write_text(json.dumps({
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "environment": {"python": platform.python_version(), "cpus": os.cpu_count(),
                        "loadavg_end": os.getloadavg()},
        "inputs": {"events": len(events), "trajectory_iterations": len(traj.iterations),
                   "trajectory_output_chars": sum(len(it.output) for it in traj.iterations)},
        "total_seconds": total, "results": results}, indent=1))
    console.print(f"raw results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
