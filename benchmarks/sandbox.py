"""What the ``confined`` sandbox costs against ``none`` (today's unconfined worker), side by side in one run.

Three figures, each measured alternating confined / none so that load on the machine falls on both alike:
- worker start: ``RLMLabInterpreter(...).start()`` until the worker's ready message, ``--starts`` times each
  (median, and the ratio confined / none; the goal is <= 1.5);
- per-step overhead: a trivial step (``x = 1``) ``--steps`` times on one live worker of each backend (median ms per
  step and the difference confined - none; the goal is <= 10 ms);
- the bridge's checks (issue 52): a trivial step and a tool call on a confined worker as shipped against the same
  worker read as DSPy reads it (median ms per step, the difference; the goal is <= 1 ms);
- E13's ``grammar_templates`` condition on a few even-numbered level-1/2 tasks under each backend: pass rate and
  seconds per task (the goal: the same pass rate). The scripted LM in ``--smoke`` mode, the embedded model else.

Printed and written to ``--json`` (default runs/bench/sandbox.json; ``--smoke``: runs/bench_smoke/sandbox.json
under the working directory) with ``uptime``'s load. Timing from a loaded machine is noisy: read the ratios.
Run:  .venv/bin/python benchmarks/sandbox.py [--starts 20] [--steps 200] [--tasks 4]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BACKENDS = ("none", "confined")


def start_times(rounds: int) -> dict[str, list[float]]:
    """Seconds from constructing an interpreter to its worker's ready message, alternating backends."""
    from rlmlab.executors import RLMLabInterpreter
    from rlmlab.tools import Workspace

    out: dict[str, list[float]] = {b: [] for b in BACKENDS}
    ws = Workspace()
    for i in range(rounds):
        for backend in (BACKENDS if i % 2 == 0 else BACKENDS[::-1]):
            t0 = time.perf_counter()
            repl = RLMLabInterpreter(ws, step_timeout=30, sandbox=backend)
            repl.start()
            out[backend].append(time.perf_counter() - t0)
            if repl.sandbox_used != backend:
                raise SystemExit(f"sandbox {backend} ran as {repl.sandbox_used}: {repl.sandbox_warning}")
            repl.shutdown()
    return out


def step_times(steps: int) -> dict[str, list[float]]:
    """Seconds per trivial step on one live worker per backend, the backends alternating step by step."""
    from rlmlab.executors import RLMLabInterpreter
    from rlmlab.tools import Workspace

    repls = {b: RLMLabInterpreter(Workspace(), step_timeout=30, sandbox=b) for b in BACKENDS}
    out: dict[str, list[float]] = {b: [] for b in BACKENDS}
    try:
        for repl in repls.values():
            repl.execute("x = 0")  # started and warm
        for i in range(steps):
            for backend in (BACKENDS if i % 2 == 0 else BACKENDS[::-1]):
                t0 = time.perf_counter()
                repls[backend].execute("x = 1")
                out[backend].append(time.perf_counter() - t0)
    finally:
        for repl in repls.values():
            repl.shutdown()
    return out


def bridge_step_times(steps: int) -> dict[str, list[float]]:
    """Seconds per step on two confined workers, alternating: ``checked`` (RLMLabInterpreter as shipped: bounded
    reply reader, every reply tied to its request, tool requests validated) and ``unchecked`` (the same
    interpreter reading replies as DSPy's LocalInterpreter does, the host side before issue 52). Each step is a
    trivial one and one tool call (ctx_peek), so the tool-request checks are timed too."""
    from dspy.primitives.local_interpreter import LocalInterpreter

    from rlmlab.executors import RLMLabInterpreter
    from rlmlab.tools import Workspace

    class Unchecked(RLMLabInterpreter):
        _receive = LocalInterpreter._receive
        _send = LocalInterpreter._send

        def _read_responses(self, process):  # LocalInterpreter's: every line, unbounded (the worker's blank
            for line in process.stdout:       # line before each message skipped, as the shipped reader does)
                if line.strip():
                    self._responses.put(line)
            self._responses.put(None)

        def _with_refusals(self, result):
            return result

    def make(cls):
        ws = Workspace()
        repl = cls(ws, tools={"ctx_peek": ws.bound("ctx_peek")}, step_timeout=30, sandbox="confined",
                   sandbox_policy="required")
        ws.store.put("some text to peek at", "doc")
        return repl

    repls = {"checked": make(RLMLabInterpreter), "unchecked": make(Unchecked)}
    out: dict[str, list[float]] = {b: [] for b in repls}
    try:
        for repl in repls.values():
            repl.execute("x = 0")
        for i in range(steps):
            for name in (("checked", "unchecked") if i % 2 == 0 else ("unchecked", "checked")):
                t0 = time.perf_counter()
                repls[name].execute("x = 1")
                repls[name].execute("p = ctx_peek('doc', n=4)")
                out[name].append((time.perf_counter() - t0) / 2)
    finally:
        for repl in repls.values():
            repl.shutdown()
    return out


def e13(tasks: int, smoke: bool, runs_dir: str) -> dict[str, dict]:
    """E13's grammar_templates on ``tasks`` even-numbered level-1/2 tasks under each backend: pass rate, s/task."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from small_model import numbered_tasks
    from speed import _smoke_lm

    from rlmlab.experiments import load_experiment, run_experiment
    from rlmlab.lm import make_lm

    chosen = [t for t, n in numbered_tasks((1, 2)) if n % 2 == 0][:tasks]
    lm = _smoke_lm() if smoke else make_lm("local", max_tokens=256, n_threads=2)
    base = load_experiment("E13")
    out = {}
    for backend in BACKENDS:
        exp = dataclasses.replace(base, conditions=tuple(dataclasses.replace(c, sandbox=backend, sandbox_policy="required")
                                                         for c in base.conditions))
        t0 = time.perf_counter()
        run = run_experiment(exp, lm=lm, task_list=chosen, conditions=["grammar_templates"], runs_dir=runs_dir,
                             progress=False)
        wall = time.perf_counter() - t0
        rows = [json.loads(x) for x in (run.run_dir / "results.jsonl").read_text().splitlines() if x.strip()]
        out[backend] = {"tasks": len(rows), "passed": sum(bool(r["success"]) for r in rows),
                        "pass_rate": round(sum(bool(r["success"]) for r in rows) / max(len(rows), 1), 3),
                        "s_per_task": round(wall / max(len(rows), 1), 2),
                        "errors": [r.get("error") for r in rows if r.get("error")]}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--starts", type=int, default=20, help="worker starts per backend")
    ap.add_argument("--steps", type=int, default=200, help="trivial steps per backend")
    ap.add_argument("--tasks", type=int, default=4, help="E13 tasks per backend (0: skip)")
    ap.add_argument("--smoke", action="store_true", help="scripted LM, tiny counts (seconds)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.smoke:
        args.starts, args.steps, args.tasks = 2, 10, min(args.tasks, 1)
    out_path = Path(args.json or ("runs/bench_smoke/sandbox.json" if args.smoke else ROOT / "runs/bench/sandbox.json"))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    from rlmlab.sandbox import choose_sandbox

    confined = choose_sandbox("confined", "best_effort")
    result: dict = {"smoke": args.smoke, "load": os.getloadavg(), "cpus": os.cpu_count(),
                    "confined": confined.backend.describe() if confined.name == "confined" else confined.warning}
    if confined.name != "confined":  # nothing to compare: say so in the JSON rather than measure none twice
        result["skipped"] = f"confined is unavailable here: {confined.warning}"
        out_path.write_text(json.dumps(result, indent=1))
        print(result["skipped"])
        return 0
    starts = start_times(args.starts)
    steps = step_times(args.steps)
    result["start_s"] = {b: round(median(v), 4) for b, v in starts.items()}
    result["start_ratio"] = round(result["start_s"]["confined"] / result["start_s"]["none"], 2)
    result["step_ms"] = {b: round(1000 * median(v), 3) for b, v in steps.items()}
    result["step_overhead_ms"] = round(result["step_ms"]["confined"] - result["step_ms"]["none"], 3)
    bridge = bridge_step_times(args.steps)
    result["bridge_step_ms"] = {b: round(1000 * median(v), 3) for b, v in bridge.items()}
    result["bridge_overhead_ms"] = round(result["bridge_step_ms"]["checked"] - result["bridge_step_ms"]["unchecked"], 3)
    if args.tasks:
        result["e13"] = e13(args.tasks, args.smoke, str(out_path.parent / "sandbox_runs"))
    result["load_after"] = os.getloadavg()
    out_path.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
