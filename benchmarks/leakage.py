"""Prompt leakage: the context as a plain string (DSPy's default) versus a BlobRef handle.

One scripted RLM program (12 iterations, the last one SUBMITs) explores a
deterministic 400,000-character log twice in the same process: once with
``context`` as a plain ``str`` and plain Python (``len``, slicing,
``re.finditer``, ``splitlines``), once with ``context`` as a ``BlobRef`` and
the equivalent ``ctx_stats`` / ``ctx_peek`` / ``ctx_slice`` / ``ctx_find``
call, printing the text field it returns. The string arm is DSPy's default
RLM (no rlmlab tools are offered); the handle arm has the rlmlab tools and
their descriptions in its prompt. Corresponding steps have the same intent
(size, head, find the needle, excerpts around it, counts, grep, tail).

Measured per iteration (from ``IterationRecord.leakage``): characters of the
main model's prompt (system + history + variable listing), the step's stdout
characters and the variable-listing characters. The scripted LM counts tokens
deterministically, so the numbers are reproducible; wall times are not
reported. Note that DSPy never puts the whole string into the prompt: the
variable listing shows a 1,000-character head+tail preview, so what differs
between the modes is mostly what each step prints (and that stays in the
history, cut at ``max_output_chars`` per step). Printed: a table per iteration, the string/handle prompt ratio at
iterations 1, 5 and 10, and totals over the run.

``--smoke`` (make check) runs 4 of the 12 steps on a 40,000-character log, to check the script itself.

Run:  .venv/bin/python benchmarks/leakage.py [--json PATH] [--smoke]
"""
# smoke-marks: slow

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from rlmlab.executors import run_rlm
from rlmlab.lm import make_lm
from rlmlab.tools import ToolRegistry

CONTEXT_CHARS = 400_000
RID = "7f3a9c21"  # the request id on the needle (FATAL) lines
QUERY = "Which request id caused the FATAL errors, and how many FATAL lines are there?"
MARKS = (1, 5, 10)
SMOKE_STEPS = (0, 2, 6, 11)  # size, find the FATAL lines, the request id, SUBMIT: each uses only the ones before


def build_context(n_chars: int = CONTEXT_CHARS, seed: int = 7) -> str:
    """Log-like lines from a seeded generator; three FATAL needles share one request id."""
    rng = random.Random(seed)
    svcs = ["auth", "billing", "search", "gateway", "profile", "cart"]
    paths = ["/api/v1/users", "/api/v1/orders", "/api/v1/items", "/health", "/api/v2/search"]
    lines, size, i = [], 0, 0
    scale = n_chars / CONTEXT_CHARS  # a shorter log keeps its three needles, at the same share of its lines
    needles = {int(1000 * scale): "panic: ledger invariant violated",
               int(2600 * scale): "panic: double charge detected",
               int(4300 * scale): "panic: ledger invariant violated (retry)"}
    while size < n_chars:
        ts = f"2024-03-05T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.{rng.randrange(1000):03d}Z"
        rid = f"{rng.getrandbits(32):08x}"
        if rid == RID:
            continue
        svc = rng.choice(svcs)
        if i in needles:
            line = f"{ts} FATAL req={RID} svc=billing {needles[i]}"
        elif rng.random() < 0.007:
            line = f"{ts} WARN  req={rid} svc={svc} upstream timeout after {rng.choice([3000, 5000])}ms"
        elif rng.random() < 0.03:
            line = f"{ts} ERROR req={rid} svc={svc} {rng.choice(paths)} code={rng.choice([500, 502, 503])}"
        else:
            line = (f"{ts} INFO  req={rid} svc={svc} GET {rng.choice(paths)}/{rng.randrange(10**5)} "
                    f"200 {rng.randrange(1, 400)}ms")
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines)[:n_chars]


def step(reasoning: str, code: str) -> dict[str, str]:
    return {"reasoning": reasoning, "code": code}


STRING_PROGRAM = [
    step("How big is the context?", "print(len(context))\nprint(context.count('\\n') + 1)"),
    step("Look at the start.", "print(context[:2000])"),
    step("Find the FATAL lines.", "import re\nhits = [m.start() for m in re.finditer(r'FATAL', context)]\n"
         "print(len(hits), hits)\nfor i in hits:\n    print(i, context[max(0, i - 40):i + 45])"),
    step("Excerpt around the first FATAL.", "print(context[hits[0] - 500:hits[0] + 500])"),
    step("Excerpt around the last FATAL.", "print(context[hits[-1] - 500:hits[-1] + 500])"),
    step("Count log levels.", "print({lvl: context.count(lvl) for lvl in ['INFO', 'WARN', 'ERROR', 'FATAL']})"),
    step("Which request id? Where else does it occur?",
         "rid = re.search(r'req=(\\w+)', context[hits[0]:hits[0] + 200]).group(1)\nprint(rid)\n"
         "for m in re.finditer(re.escape(rid), context):\n    print(m.start(), context[m.start() - 40:m.end() + 40])"),
    step("Lines around the first FATAL.", "lines = context.splitlines()\nn = context.count('\\n', 0, hits[0])\n"
         "print('\\n'.join(lines[n - 15:n + 16]))"),
    step("Grep the timeout warnings.", "print('\\n'.join(l for l in context.splitlines() if 'timeout' in l))"),
    step("Look at the end.", "print(context[-1000:])"),
    step("Summarise.", "print(rid, len(hits))"),
    step("Done.", "SUBMIT(answer=f'req={rid}, {len(hits)} FATAL lines')"),
]

HANDLE_PROGRAM = [
    step("How big is the context?", "st = ctx_stats(context)\nprint(st['length'])\nprint(st['lines'])"),
    step("Look at the start.", "print(ctx_peek(context, 2000)['preview'])"),
    step("Find the FATAL lines.", "import re\nr = ctx_find(context, r'FATAL', k=20)\n"
         "hits = [m['offset'] for m in r['matches']]\nprint(r['total'], hits)\n"
         "for m in r['matches']:\n    print(m['offset'], m['text'])"),
    step("Excerpt around the first FATAL.", "print(ctx_slice(context, hits[0] - 500, hits[0] + 500)['text'])"),
    step("Excerpt around the last FATAL.", "print(ctx_slice(context, hits[-1] - 500, hits[-1] + 500)['text'])"),
    step("Count log levels.",
         "print({lvl: ctx_find(context, lvl, k=1)['total'] for lvl in ['INFO', 'WARN', 'ERROR', 'FATAL']})"),
    step("Which request id? Where else does it occur?",
         "rid = re.search(r'req=(\\w+)', r['matches'][0]['text']).group(1)\nprint(rid)\n"
         "print('\\n'.join(f\"{m['line']}:{m['text']}\" for m in ctx_find(context, re.escape(rid))['matches']))"),
    step("Lines around the first FATAL.",
         "n = r['matches'][0]['line']\nprint(ctx_slice(context, n - 15, n + 15, unit='lines')['text'])"),
    step("Grep the timeout warnings.",
         "print('\\n'.join(m['text'] for m in ctx_find(context, 'timeout', k=100)['matches']))"),
    step("Look at the end.", "print(ctx_slice(context, st['length'] - 1000, st['length'])['text'])"),
    step("Summarise.", "print(rid, r['total'])"),
    step("Done.", "SUBMIT(answer=f'req={rid}, {r[\"total\"]} FATAL lines')"),
]


def run(mode: str, context: str, steps: tuple[int, ...] | None = None) -> dict:
    program = STRING_PROGRAM if mode == "string" else HANDLE_PROGRAM
    program = [program[i] for i in steps] if steps else program
    lm = make_lm("scripted", script=program)
    # The string arm is DSPy's default RLM: no rlmlab tools, no handle hint in the prompt.
    tools = ToolRegistry() if mode == "string" else None
    traj = run_rlm(QUERY, context, lm=lm, context_mode=mode, tools=tools, max_iters=len(program),
                   max_output_chars=10_000)
    errors = [(it.index, it.output.strip()[:160]) for it in traj.iterations if "[Error]" in it.output]
    return {"answer": traj.answer, "submitted": traj.submitted, "error": traj.error, "step_errors": errors,
            "iterations": [it.leakage.to_dict() for it in traj.iterations]}


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 3) if b else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="PATH", help="also write the numbers as JSON to PATH")
    ap.add_argument("--smoke", action="store_true", help="4 steps on a 40,000-character log (make check); --json "
                    "defaults to runs/bench_smoke/leakage.json")
    args = ap.parse_args(argv)
    if args.smoke:
        args.json = args.json or "runs/bench_smoke/leakage.json"
    context = build_context(CONTEXT_CHARS // 10 if args.smoke else CONTEXT_CHARS)
    res = {mode: run(mode, context, SMOKE_STEPS if args.smoke else None) for mode in ("string", "handle")}
    s_its, h_its = res["string"]["iterations"], res["handle"]["iterations"]

    console = Console()
    table = Table(title=f"Characters per iteration, {len(context):,}-char context: string vs BlobRef handle")
    for col in ["#", "prompt\nstring", "prompt\nhandle", "ratio\ns/h", "stdout\nstring", "stdout\nhandle",
                "vars info\nstring", "vars info\nhandle"]:
        table.add_column(col, justify="right")
    for s, h in zip(s_its, h_its):
        r = ratio(s["prompt_chars"], h["prompt_chars"])
        table.add_row(str(s["iteration"]), f"{s['prompt_chars']:,}", f"{h['prompt_chars']:,}", f"{r:.2f}",
                      f"{s['stdout_chars']:,}", f"{h['stdout_chars']:,}", f"{s['variables_info_chars']:,}",
                      f"{h['variables_info_chars']:,}")
    console.print(table)

    at = {i: ratio(s_its[i - 1]["prompt_chars"], h_its[i - 1]["prompt_chars"])
          for i in MARKS if i <= min(len(s_its), len(h_its))}
    totals = {mode: {k: sum(it[k] for it in res[mode]["iterations"]) for k in ("prompt_chars", "prompt_tokens")}
              for mode in res}
    total_ratio = {k: ratio(totals["string"][k], totals["handle"][k]) for k in ("prompt_chars", "prompt_tokens")}
    console.print("prompt-chars ratio string/handle at iteration "
                  + ", ".join(f"{i}: {r:.2f}" for i, r in at.items()))
    for k in ("prompt_chars", "prompt_tokens"):
        console.print(f"total {k}: string {totals['string'][k]:,}  handle {totals['handle'][k]:,}  "
                      f"ratio {total_ratio[k]:.2f}")
    for mode, r in res.items():
        console.print(f"{mode}: answer={r['answer']!r} submitted={r['submitted']} error={r['error']}")
        for idx, msg in r["step_errors"]:
            console.print(f"  [yellow]iteration {idx} raised:[/] {msg}")

    if args.json:
        out = {"context_chars": len(context), "query": QUERY, "runs": res, "ratio_at": at,
               "totals": totals, "total_ratio": total_ratio}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
        console.print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
