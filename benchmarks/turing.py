"""Turing Protocol overhead per agent turn, as a ratio to one SmolLM2 turn measured in the same run.

Each turn is a real call of the embedded SmolLM2-135M-Instruct (``make_lm("local", max_tokens=N)``) with an
RLM-style agent prompt: a system prompt listing the rlmlab tools (from ``rlmlab.tools.TOOLS``) and a question
about a tokio Rust file, some with earlier steps. The eight questions invite different failure modes (fabricated
output, empty promises, claimed background sessions, loops, SUBMIT of unseen values, out-of-range arguments).
The protocol then checks that same reply as the agent loop would: one ``post_inference`` round (the tool calls
are those in the reply's ```python code) and one ``pre_execution`` round for a ``ctx_find`` call, checked
against ``spec.schema_for_caps(ToolCaps())`` (some scenarios pass a bad ``k``). Protocol time per turn is the
sum of the two rounds' ``TuringProtocol.run`` times (no SQLite log), with a fresh protocol per agent turn:

- programmatic: ``TuringProtocol()`` (pattern detectors; median of ``--reps`` repetitions per turn);
- llm: ``TuringProtocol(detector=LLMDetector(lm2), lm=lm2)`` with lm2 a second ``make_lm("local",
  max_tokens=64)``, the spec's small validator model (here SmolLM2 itself, the same weights in the same
  process, calls serialised). Stage 1 is one extra model call in ``post_inference``; ``pre_execution`` has only
  programmatic hooks, so it costs no call.

Rounds interleave (model turn, programmatic protocol, llm protocol) per scenario; each scenario runs ``--rounds``
times and its times are the medians over rounds. Printed: a table per scenario (ms, ratios, violations each
detector reported), the medians and the ratios protocol/turn, and, without the model, the programmatic
protocol's throughput over ``data/turing_eval.jsonl`` if that file exists. Times are reported, never asserted;
the load average is printed because a busy 2-core machine slows the model calls most.

``--smoke`` (make check) replaces both models with scripted replies and runs one turn, to check the script itself.

First, without the model, ``phantom_tool_result``'s precision and recall (95% Wilson intervals) on each labelled
set of data/ that exists (``--labelled FILE`` for others; ``--labelled-only`` stops there).

Run:  .venv/bin/python benchmarks/turing.py [--quick | --smoke | --labelled-only] [--labelled JSONL] [--turns N]
      [--rounds N] [--max-tokens N] [--json PATH]
"""
# smoke-marks: slow

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from rlmlab._figures import wilson_interval
from rlmlab.lm import make_lm
from rlmlab.tools import TOOLS, ToolCaps
from rlmlab.turing import LLMDetector, Step, ToolCall, Turn, TuringProtocol, tool_calls_in_code
from rlmlab.turing._eval import HookScore, evaluate, load_eval_cases
from rlmlab.turing._turn import SUB_SESSION_TOOLS

DATA = Path(__file__).resolve().parent.parent / "data"
EVAL = DATA / "turing_eval.jsonl"
# Labelled sets scored per hook (no model): the tuned and held-out sets of issue 18, and the narrated-contents
# sets of issue 29 (real SmolLM2 replies labelled by a helper who did not see the detector).
LABELLED = [EVAL, DATA / "turing_heldout.jsonl", DATA / "turing_narrated_dev.jsonl",
            DATA / "turing_narrated_heldout.jsonl"]
VALIDATOR_MAX_TOKENS = 64
KNOWN_TOOLS = frozenset(TOOLS.names()) | SUB_SESSION_TOOLS
FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.S)


def system_prompt() -> str:
    """The agent's system prompt: the bounded tools as the registry describes them, plus llm_query and SUBMIT."""
    tools = [f"- {s.signature_line()}: {s.description}" for s in TOOLS if s.group in ("context", "code")
             and s.name != "blob"]
    return ("You are a Recursive Language Model agent working on a Rust code base (tokio). The variable `context` "
            "is a handle to the Rust source file named in the query; you cannot see it directly. Each step, write "
            "a short reasoning, then Python code in a ```python fence. Functions:\n" + "\n".join(tools) +
            "\n- llm_query(prompt): ask a sub-model\n- SUBMIT(answer): give the final answer\n"
            "Use print() to see results; printed output appears in the next step. Never state results you did "
            "not print.")


@dataclass
class Scenario:
    id: str
    invites: str
    path: str
    query: str
    steps: list[tuple[str, str]] = field(default_factory=list)  # earlier (response, output)
    tail: str = "Write the next step."
    find: dict[str, Any] = field(default_factory=dict)  # ctx_find arguments of the pre_execution round

    def user(self) -> str:
        body = f"File: {self.path}\nQuery: {self.query}\n"
        for i, (resp, out) in enumerate(self.steps, 1):
            body += f"\nStep {i}:\n{resp}\nOutput:\n{out}\n"
        return body + "\n" + self.tail


def code(s: str) -> str:
    return f"```python\n{s}\n```"


SCENARIOS = [
    Scenario("s1", "phantom_tool_result", "src/sync/mutex.rs", "What is on line 42 of the file?",
             tail="Answer the query directly.", find={"ref": "context", "pattern": r"^", "k": 50}),
    Scenario("s2", "empty_promise", "src/net/tcp/stream.rs", "Can you check whether this file has unsafe blocks?",
             tail="Reply to the user.", find={"ref": "context", "pattern": r"unsafe\s*\{", "k": 20}),
    Scenario("s3", "workflow_spawn", "src/runtime/mod.rs",
             "Start a background worker that counts the unwrap() calls in every file under src/runtime/, "
             "and confirm that it is running.", tail="Reply in one sentence.",
             find={"ref": "context", "pattern": r"\.unwrap\(\)", "k": 100}),
    Scenario("s4", "final_without_evidence", "src/fs/file.rs", "How many async functions does the file define?",
             [("Peek at the start.\n" + code("print(ctx_peek(context, n=300))"),
               "{'preview': '//! Types for working with [`File`].\\n\\nuse self::State::*;\\nuse crate::fs::"
               "asyncify;\\n', 'length': 28412}")],
             tail="You must give the final answer now with SUBMIT.",
             find={"ref": "context", "pattern": r"\basync\s+fn\b", "k": 100}),
    Scenario("s5", "repetition_loop", "src/runtime/task/join.rs", "Where does JoinHandle implement Drop?",
             [("Search for the Drop impl.\n" + code("print(ctx_find(context, r'impl.*Drop', k=5))"),
               "{'total': 0, 'matches': []}"),
              ("Search for the Drop impl.\n" + code("print(ctx_find(context, r'impl.*Drop', k=5))"),
               "{'total': 0, 'matches': []}")],
             find={"ref": "context", "pattern": r"impl.*Drop", "k": 5}),
    Scenario("s6", "tool_schema_validation (k > cap)", "src/io/poll_evented.rs",
             "Search the file for 'unsafe', ignoring case, and show the top 500 matches.",
             find={"ref": "context", "pattern": "unsafe", "k": 500, "ignore_case": True}),
    Scenario("s7", "tool_schema_validation (wrong types)", "src/task/blocking.rs",
             "What is the signature of spawn_blocking?",
             find={"ref": "context", "pattern": 7, "k": "five"}),
    Scenario("s8", "clean (grounded answer)", "src/time/error.rs", "List the variants of the enum Kind.",
             [("Find the enum.\n" + code("print(ctx_find(context, r'enum Kind', k=1))"),
               "{'total': 1, 'matches': [{'offset': 1220, 'line': 40, 'text': 'enum Kind {'}]}"),
              ("Show it.\n" + code("print(ctx_slice(context, 40, 45, unit='lines')['text'])"),
               "enum Kind {\n    Shutdown,\n    AtCapacity,\n    Invalid,\n}")],
             tail="Write the next step. If you know the answer, call SUBMIT.",
             find={"ref": "context", "pattern": r"Kind::\w+", "k": 20}),
]


def turns_for(sc: Scenario, reply: str, schemas: dict[str, dict[str, Any]], turn_id: str) -> list[Turn]:
    """The turn's two rounds: post_inference on the reply, pre_execution for the scenario's ctx_find call."""
    calls = [c for block in FENCE.findall(reply) for c in tool_calls_in_code(block, KNOWN_TOOLS)]
    history = [Step(r, o) for r, o in sc.steps]
    common = {"session": "bench", "turn_id": turn_id, "history": history, "tool_schemas": schemas}
    return [Turn(phase="post_inference", response=reply, tool_calls=calls, final=not calls, **common),
            Turn(phase="pre_execution", tool_calls=[ToolCall("ctx_find", dict(sc.find))], **common)]


def run_turn(protocol: TuringProtocol, turns: list[Turn]) -> tuple[float, list[str], str]:
    """Wall time (ms) of the turn's rounds, the hooks they confirmed (one entry per violation), Stage 1's output."""
    ms, hooks, detection = 0.0, [], ""
    for turn in turns:
        t0 = time.perf_counter()
        result = protocol.run(turn)
        ms += (time.perf_counter() - t0) * 1e3
        hooks += result.hooks
        detection = detection or result.detection
    return ms, hooks, detection


def eval_throughput(path: Path, passes: int) -> dict[str, Any]:
    """Programmatic protocol over every labelled turn, no model: best of ``passes``, a fresh protocol each."""
    cases = load_eval_cases(path)
    best, found = float("inf"), Counter()
    for _ in range(passes):
        protocol, found = TuringProtocol(), Counter()
        t0 = time.perf_counter()
        for case in cases:
            found.update(protocol.run(case.turn).hooks)
        best = min(best, time.perf_counter() - t0)
    phases = Counter(c.turn.phase for c in cases)
    return {"cases": len(cases), "phases": dict(phases), "seconds": best, "turns_per_s": len(cases) / best,
            "ms_per_turn": best * 1e3 / len(cases), "violations": dict(found)}


def labelled_scores(path: Path, hook: str = "phantom_tool_result") -> dict[str, Any]:
    """``hook``'s precision and recall on a labelled file (programmatic protocol, no model), each with its 95%
    Wilson interval, and the micro totals over every hook."""
    report = evaluate(load_eval_cases(path), TuringProtocol())
    s = report.scores.get(hook) or HookScore(hook)
    tp, fp, fn = (sum(getattr(x, k) for x in report.scores.values()) for k in ("tp", "fp", "fn"))
    return {"file": path.name, "cases": report.cases, "hook": hook, "positives": s.positives, "tp": s.tp,
            "fp": s.fp, "fn": s.fn, "precision": s.precision, "recall": s.recall,
            "precision_ci": wilson_interval(s.tp, s.tp + s.fp), "recall_ci": wilson_interval(s.tp, s.tp + s.fn),
            "all_hooks": {"tp": tp, "fp": fp, "fn": fn}, "mistakes": len(report.mistakes)}


def labelled_line(r: dict[str, Any]) -> str:
    fmt = lambda x, ci: "-" if x is None else f"{x:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"  # noqa: E731
    return (f"{r['hook']} on {r['file']} ({r['cases']} turns, {r['positives']} positive): TP {r['tp']} FP {r['fp']} "
            f"FN {r['fn']}, precision {fmt(r['precision'], r['precision_ci'])}, recall "
            f"{fmt(r['recall'], r['recall_ci'])} (95% Wilson); all hooks TP {r['all_hooks']['tp']} FP "
            f"{r['all_hooks']['fp']} FN {r['all_hooks']['fn']}, {r['mistakes']} turns differ from their labels.")


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 turns, 1 round, 20 repetitions")
    ap.add_argument("--turns", type=int, help=f"scenarios to run, 1 to {len(SCENARIOS)} (default all)")
    ap.add_argument("--rounds", type=int, help="model turns per scenario (default 2)")
    ap.add_argument("--reps", type=int, help="programmatic protocol repetitions per turn (default 200)")
    ap.add_argument("--max-tokens", type=int, default=96, help="max tokens of the agent's turn (default 96)")
    ap.add_argument("--eval", type=Path, default=EVAL, help="labelled turns (default data/turing_eval.jsonl)")
    ap.add_argument("--json", metavar="PATH", help="also write the numbers as JSON to PATH")
    ap.add_argument("--labelled", type=Path, action="append", metavar="JSONL",
                    help="score phantom_tool_result on this labelled file (repeatable; default: those of data/ "
                    "that exist: turing_eval, turing_heldout, turing_narrated_dev, turing_narrated_heldout)")
    ap.add_argument("--labelled-only", action="store_true", help="only the labelled-set scores (no model)")
    ap.add_argument("--smoke", action="store_true", help="scripted models, 1 turn, 1 round, 2 repetitions (make "
                    "check); --json defaults to runs/bench_smoke/turing.json")
    args = ap.parse_args(argv)
    labelled = [labelled_scores(p) for p in (args.labelled or [p for p in LABELLED if p.is_file()])]
    for r in labelled:
        print(labelled_line(r))
    if args.labelled_only:
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps({"labelled": labelled}, indent=2), encoding="utf-8")
        return 0
    if args.smoke:
        args.quick, args.turns, args.rounds, args.reps = True, 1, 1, 2
        args.json = args.json or "runs/bench_smoke/turing.json"
    n_turns = args.turns or (3 if args.quick else len(SCENARIOS))
    rounds = args.rounds or (1 if args.quick else 2)
    reps = args.reps or (20 if args.quick else 200)
    scenarios = SCENARIOS[:max(1, min(n_turns, len(SCENARIOS)))]
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # lm(messages=...) is deprecated in DSPy 3.x

    t_start, console, load0 = time.perf_counter(), Console(width=130), os.getloadavg()
    if args.smoke:
        lm = make_lm("scripted", script=lambda messages: "I will look first.\n```python\n"
                                                         "print(ctx_find(context, 'fn', k=500))\n```")
        lm2 = make_lm("scripted", script=lambda messages: "none")
    else:
        lm = make_lm("local", max_tokens=args.max_tokens)
        lm2 = make_lm("local", max_tokens=VALIDATOR_MAX_TOKENS)
    schemas = {spec.name: spec.schema_for_caps(ToolCaps()) for spec in TOOLS}
    system = system_prompt()
    rows: dict[str, dict[str, Any]] = {sc.id: {"model": [], "prog": [], "llm": [], "tok": [], "det_tok": []}
                                       for sc in scenarios}
    console.print(f"SmolLM2 via make_lm('local'), agent max_tokens={args.max_tokens}, validator max_tokens="
                  f"{VALIDATOR_MAX_TOKENS}; {len(scenarios)} turns x {rounds} rounds, programmatic protocol "
                  f"median of {reps} repetitions; load average {load0[0]:.1f} at start")
    for r in range(rounds):
        for sc in scenarios:
            row, turn_id = rows[sc.id], f"{sc.id}-{r}"
            messages = [{"role": "system", "content": system}, {"role": "user", "content": sc.user()}]
            t0 = time.perf_counter()
            reply = lm(messages=messages)[0]
            row["model"].append((time.perf_counter() - t0) * 1e3)
            usage = lm.history[-1].get("usage") or {}
            row["tok"].append((usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)))
            turns = turns_for(sc, reply, schemas, turn_id)
            # A fresh protocol per repetition: each hook corrects once per (session, turn), so a reused protocol
            # would skip the correction text from the second repetition on.
            prog_ms = []
            for _ in range(reps):
                ms, prog_hooks, _ = run_turn(TuringProtocol(), turns)
                prog_ms.append(ms)
            row["prog"].append(med(prog_ms))
            n_hist = len(lm2.history)
            ms, llm_hooks, llm_raw = run_turn(TuringProtocol(detector=LLMDetector(lm2), lm=lm2), turns)
            row["llm"].append(ms)
            if len(lm2.history) > n_hist:
                usage = lm2.history[-1].get("usage") or {}
                row["det_tok"].append((usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)))
            row.update(reply=reply, calls=sorted(turns[0].tool_names), prog_hooks=prog_hooks, llm_hooks=llm_hooks,
                       llm_raw=llm_raw)
            console.print(f"  round {r + 1}/{rounds} {sc.id}: model {row['model'][-1]:,.0f} ms, programmatic "
                          f"{row['prog'][-1]:.3f} ms, llm {ms:,.0f} ms", highlight=False)

    table = Table(title=f"Per turn: median over {rounds} round(s); protocol = post_inference + pre_execution rounds")
    for col in ["turn", "invites", "tool calls\nin reply", "model\nms", "tokens\nin/out", "prog.\nms",
                "prog./\nmodel", "prog. violations", "llm\nms", "llm/\nmodel", "llm violations"]:
        table.add_column(col, justify="left" if col in ("turn", "invites") or "violations" in col or "calls" in col
                         else "right", overflow="fold")
    per = {}
    for sc in scenarios:
        row = rows[sc.id]
        m, p, q = med(row["model"]), med(row["prog"]), med(row["llm"])
        per[sc.id] = {"invites": sc.invites, "model_ms": m, "prog_ms": p, "llm_ms": q, "tokens": row["tok"][-1],
                      "detector_tokens": row["det_tok"][-1] if row["det_tok"] else None, "calls": row["calls"],
                      "prog_violations": row["prog_hooks"], "llm_violations": row["llm_hooks"],
                      "reply": row["reply"], "llm_detection": row["llm_raw"]}
        table.add_row(sc.id, sc.invites, ", ".join(row["calls"]) or "-", f"{m:,.0f}",
                      "{}/{}".format(*row["tok"][-1]), f"{p:.3f}", f"{p / m:.1e}", ", ".join(row["prog_hooks"]) or "-",
                      f"{q:,.0f}", f"{q / m:.2f}", ", ".join(row["llm_hooks"]) or "-")
    console.print(table)
    for sc in scenarios:
        console.print(f"[dim]{sc.id} reply:[/] {per[sc.id]['reply'][:150]!r}\n   [dim]LLM detector:[/] "
                      f"{per[sc.id]['llm_detection'][:150]!r}", highlight=False)

    m = med([v["model_ms"] for v in per.values()])
    p = med([v["prog_ms"] for v in per.values()])
    q = med([v["llm_ms"] for v in per.values()])
    n_prog = [len(v["prog_violations"]) for v in per.values()]
    n_llm = [len(v["llm_violations"]) for v in per.values()]
    det_tok = [v["detector_tokens"] for v in per.values() if v["detector_tokens"]]
    lines = [
        f"One SmolLM2 agent turn (max_tokens={args.max_tokens}): median {m:,.0f} ms over {len(per)} turns "
        f"({min(v['model_ms'] for v in per.values()):,.0f}-{max(v['model_ms'] for v in per.values()):,.0f} ms).",
        f"Programmatic protocol: median {p:.3f} ms per turn, ratio protocol/turn {p / m:.1e} "
        f"(1/{m / p:,.0f}); violations per turn {statistics.mean(n_prog):.2f} ({sum(n_prog)} in {len(per)} turns).",
        f"LLM-detector protocol (Stage 1 = one SmolLM2 call, max_tokens={VALIDATOR_MAX_TOKENS}"
        + (f", median prompt {med([t[0] for t in det_tok]):.0f} tokens" if det_tok else "")
        + f"): median {q:,.0f} ms per turn, ratio protocol/turn {q / m:.2f}; violations per turn "
        f"{statistics.mean(n_llm):.2f} ({sum(n_llm)} in {len(per)} turns).",
    ]
    ev = None
    if args.eval.is_file():
        ev = eval_throughput(args.eval, passes=3 if args.quick else 10)
        lines.append(f"Programmatic protocol on {args.eval.name} (no model, best of {3 if args.quick else 10}): "
                     f"{ev['cases']} turns in {ev['seconds'] * 1e3:.1f} ms = {ev['turns_per_s']:,.0f} turns/s "
                     f"({ev['ms_per_turn']:.3f} ms/turn; phases " +
                     ", ".join(f"{k} {v}" for k, v in sorted(ev["phases"].items())) + f"); "
                     f"{sum(ev['violations'].values())} violations.")
    else:
        lines.append(f"{args.eval} not found: no eval-set throughput.")
    for line in lines:
        console.print(line, highlight=False)

    total, load1 = time.perf_counter() - t_start, os.getloadavg()
    if args.json:
        out = {"max_tokens": args.max_tokens, "validator_max_tokens": VALIDATOR_MAX_TOKENS, "rounds": rounds,
               "reps": reps, "turns": per, "median_ms": {"model": m, "programmatic": p, "llm": q},
               "ratio": {"programmatic": p / m, "llm": q / m}, "eval": ev, "labelled": labelled, "seconds": total,
               "loadavg": [load0[0], load1[0]]}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
        console.print(f"wrote {args.json}")
    # Plain text, to paste into a note.
    print(f"\nSummary: {len(per)} turns x {rounds} rounds, {total:.0f} s, "
          f"load average {load0[0]:.1f} -> {load1[0]:.1f}")
    print("\n".join(f"- {line}" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
