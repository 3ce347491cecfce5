"""Decoding speed of the embedded model: votes in one batch, and the constraint engines on real step grammars.

One run, one process, the embedded SmolLM2-135M (llama-cpp-python), ratios measured side by side:

1. Real steps: E13's ``grammar_templates`` condition is run for one iteration on level-1/2 even (held-out) tasks
   of the ``code``, ``ontology`` and ``arith`` suites with a scripted LM that records each step's chat messages and
   step grammar (so prompts and grammars are those the executor really builds, templates included).
2. Constrained vs free decode tokens/s on those prompts (each prompt's KV cached in both contexts first, so a
   call's time is its decode): free (llama-cpp-python's chain), ``gbnf-full`` (the grammar over the whole
   vocabulary on every token: the engine before this change), ``gbnf`` (the grammar checked on the sampled
   token, the vocabulary masked only on a rejection: the default now) and ``llguidance`` (the same rule with
   llguidance's masks). Alternating per prompt, same seed and cap.
3. Votes: on each first-step prompt, one sample, five samples one after another (the runner before this change:
   the later four reuse the prompt's KV) and five samples as one batch (``generate_n``), each from a fresh prefill
   (a new task); also how many batched completions equal the sequential ones at the same seeds, and where they
   first differ.
4. Batch scaling: milliseconds per decode call of 1, 2, 3 and 5 sequences on a cached prompt (what a vote's
   decode step costs once the prompt is served from the cache, as for E13's later tasks).
5. E13 per task (``--e13-per-suite``): seconds per task of ``grammar_templates`` (one sample, the mean of a run
   before and one after the votes, after an untimed warm-up run) and ``vote5`` with its first steps batched and
   one by one (sharing switched off: the runner before), and ``vote5`` with ``vote_stop: settled`` (stops once the
   samples left cannot change the majority; its picks must equal ``vote5``'s), same tasks.
6. Acceptance: ``LlamaEngine.accepts`` (llama.cpp's GBNF) vs llguidance on the same texts, valid (completions
   sampled under the grammar) and invalid (each cut short, and with one character changed).

``--smoke``: one arith task, 8-token completions, 2 samples (seconds; checks that it completes and writes its
JSON, never its figures). Numbers go to ``--json`` (default runs/bench/decode.json). Run idle:
``.venv/bin/python benchmarks/decode.py [--smoke]``.
"""
# Its smoke run decodes a few tokens with the embedded model (about 12 s of CPU): make test runs it, make check
# (which runs no model) does not.
# smoke-marks: local_model

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rlmlab.lm import active_constraint, constrained, make_lm  # noqa: E402

SUITES = ("code", "ontology", "arith")


class _Config:
    def __init__(self, temperature: float, max_tokens: int, seed: int | None = None):
        self.temperature, self.max_tokens, self.stop, self.seed = temperature, max_tokens, None, seed


def capture_steps(per_suite: int, suites=SUITES) -> list[dict]:
    """The first step (messages, grammar) of E13 grammar_templates on ``per_suite`` even level-1/2 tasks of each
    suite, recorded from a scripted LM that says it can constrain."""

    from rlmlab.experiments import run_experiment
    from rlmlab.experiments._suites import load_suite

    steps: list[dict] = []

    def script(messages):
        c = active_constraint()
        if c is not None and c.grammar is not None:
            steps.append({"messages": messages, "grammar": c.grammar})
        return {"reasoning": "Plan: submit.", "code": 'SUBMIT(answer="0")'}

    lm = make_lm("scripted", script=script)
    lm.rlmlab_engine.supports_constraints = True  # so the executor builds and pushes its step grammar
    tasks = [t for s in suites for t in load_suite(s, limit=per_suite, levels=[1, 2], parity="even")]
    with tempfile.TemporaryDirectory() as tmp:
        run_experiment("E13", lm=lm, conditions=["grammar_templates"], task_list=tasks, max_iters=1,
                       runs_dir=tmp, progress=False, workers=1)
    for step, task in zip(steps, tasks):
        step["task_id"] = task.id
    return steps


def _timed(fn, cpu: list | None = None):
    """``fn()`` and its wall seconds; its process CPU seconds are appended to ``cpu`` when given (with one
    llama.cpp thread, CPU time is the work itself, much less disturbed by other jobs than wall time)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    if cpu is not None:
        cpu.append(time.process_time() - c0)
    return out, time.perf_counter() - t0


def decode_speed(engines: dict, steps: list[dict], max_tokens: int) -> dict:
    """Tokens/s per engine over the steps' prompts (prompt KV cached first), alternating engines per prompt."""
    totals = {name: {"tokens": 0, "seconds": 0.0, "cpu_seconds": 0.0, "grammar_s": 0.0} for name in engines}
    samples: dict[str, list[str]] = {name: [] for name in engines}
    cfg = _Config(0.7, max_tokens, seed=1)
    for step in steps:
        for name, eng in engines.items():
            grammar = None if name == "free" else step["grammar"]
            with constrained(grammar=grammar) if grammar else _null():
                eng.generate(step["messages"], _Config(0.0, 1, 1))  # caches the prompt's KV in its context
                cpu: list[float] = []
                out, secs = _timed(lambda: eng.generate(step["messages"], cfg), cpu)
            totals[name]["tokens"] += out.output_tokens
            totals[name]["seconds"] += secs
            totals[name]["cpu_seconds"] += cpu[0]
            if name in ("gbnf", "llguidance"):  # the low-level path times its grammar work
                totals[name]["grammar_s"] += eng.last_timing.get("grammar_s", 0.0)
            samples[name].append(out.text)
    result = {name: {"tokens": t["tokens"], "seconds": round(t["seconds"], 2),
                     "tokens_per_s": round(t["tokens"] / t["seconds"], 1) if t["seconds"] else None,
                     "tokens_per_cpu_s": round(t["tokens"] / t["cpu_seconds"], 1) if t["cpu_seconds"] else None,
                     **({"grammar_ms_per_token": round(1000 * t["grammar_s"] / t["tokens"], 2)}
                        if t["grammar_s"] and t["tokens"] else {})}
              for name, t in totals.items()}
    for name in engines:
        for rate in ("tokens_per_s", "tokens_per_cpu_s"):
            free, mine = result["free"][rate], result[name][rate]
            if name != "free" and free and mine:
                result[name][rate.replace("tokens_per", "over_free")] = round(mine / free, 2)
    return {"engines": result, "texts": samples}


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def votes(engine, steps: list[dict], n: int, max_tokens: int) -> dict:
    """Seconds for one sample, N sequential samples and N batched samples of each first step (fresh prefill each),
    and how many batched completions equal the sequential ones at the same seeds."""
    seeds = list(range(1, n + 1))
    rows = []
    for step in steps:
        cpu: list[float] = []
        with constrained(grammar=step["grammar"]):
            cfg = lambda s: _Config(0.7, max_tokens, s)  # noqa: E731
            engine.prompt_cache = False  # every variant starts as a new task would: the whole prompt prefilled
            one, t_one = _timed(lambda: engine.generate(step["messages"], cfg(1)), cpu)
            batched, t_batch = _timed(lambda: engine.generate_n(step["messages"], cfg(None), seeds), cpu)
            engine.prompt_cache = True  # the runner before: rollouts 2..N reuse the prompt's KV
            engine.generate(step["messages"], _Config(0.0, 1, 1))  # the first rollout's prefill, timed in one_s
            sequential, t_seq = _timed(lambda: [engine.generate(step["messages"], cfg(s)) for s in seeds], cpu)
        first_diff = []
        for b, s in zip(batched, sequential):
            i = next((i for i, (x, y) in enumerate(zip(b.text, s.text)) if x != y), None)
            first_diff.append(None if b.text == s.text else (i if i is not None else min(len(b.text), len(s.text))))
        rows.append({"task_id": step["task_id"], "prompt_tokens": one.input_tokens, "one_s": round(t_one, 2),
                     "sequential_s": round(t_one + t_seq - (t_seq / n), 2), "batched_s": round(t_batch, 2),
                     "one_cpu_s": round(cpu[0], 2), "batched_cpu_s": round(cpu[1], 2),
                     "sequential_cpu_s": round(cpu[0] + cpu[2] - cpu[2] / n, 2),
                     "tokens_batched": [c.output_tokens for c in batched],
                     "equal_to_sequential": sum(d is None for d in first_diff), "first_diff_chars": first_diff,
                     "distinct_answers": len({c.text for c in batched})})
    one, one_cpu = sum(r["one_s"] for r in rows), sum(r["one_cpu_s"] for r in rows)
    return {"n": n, "tasks": rows, "one_s": round(one, 2),
            "sequential_over_one": round(sum(r["sequential_s"] for r in rows) / one, 2),
            "batched_over_one": round(sum(r["batched_s"] for r in rows) / one, 2),
            "sequential_over_one_cpu": round(sum(r["sequential_cpu_s"] for r in rows) / one_cpu, 2),
            "batched_over_one_cpu": round(sum(r["batched_cpu_s"] for r in rows) / one_cpu, 2),
            "equal_to_sequential": f"{sum(r['equal_to_sequential'] for r in rows)}/{n * len(rows)}"}


def _mutations(text: str) -> list[str]:
    """Invalid variants of a valid step text: cut short, and one character changed in the middle."""
    out = []
    if len(text) > 4:
        out.append(text[: len(text) // 2])
        mid = len(text) // 2
        out.append(text[:mid] + ("#" if text[mid] != "#" else "@") + text[mid + 1:])
    return out


def acceptance(engine, steps: list[dict], max_tokens: int) -> dict:
    """Verdicts of llama.cpp's GBNF (LlamaEngine.accepts) and llguidance on the same texts, and where they differ:
    per step, the completions of two seeds sampled under its grammar (valid when they ended, not cut by the cap)
    and two mutations of each (invalid)."""
    from rlmlab.lm._guidance import guidance_accepts

    decoder = engine._decoder()
    rows, differ = [], []
    for step in steps:
        with constrained(grammar=step["grammar"]):
            outs = engine.generate_n(step["messages"], _Config(0.7, max_tokens), [11, 12])
        cases = [(c.text, c.finish_reason == "stop") for c in outs]
        cases += [(m, False) for c in outs for m in _mutations(c.text)]
        for text, expect in cases:
            gbnf = engine.accepts(step["grammar"], text)
            toks = engine.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
            llg = guidance_accepts(decoder, step["grammar"], toks, engine.llm.token_eos())
            rows.append((gbnf, llg, expect))
            if gbnf != llg:
                differ.append({"task_id": step["task_id"], "text": text, "gbnf": gbnf, "llguidance": llg})
    return {"texts": len(rows), "agree": sum(g == l for g, l, _ in rows),
            "gbnf_accepts_valid": sum(g for g, _, e in rows if e),
            "llguidance_accepts_valid": sum(l for _, l, e in rows if e),
            "valid": sum(e for *_, e in rows), "gbnf_rejects_invalid": sum(not g for g, _, e in rows if not e),
            "llguidance_rejects_invalid": sum(not l for _, l, e in rows if not e), "differ": differ[:10]}


def e13_votes(per_suite: int, options: dict, runs_dir: str, suites=SUITES, fresh: bool = True) -> dict:
    """Seconds per task of E13's grammar_templates (one sample) and vote5 with its first steps batched and, for
    the before figure, one by one (the engine's sharing switched off), on the same tasks, one after another."""
    import rlmlab.lm._engines as engines
    from dataclasses import replace

    from rlmlab.experiments import load_experiment, read_results, run_experiment
    from rlmlab.experiments._suites import load_suite

    tasks = [t for s in suites for t in load_suite(s, limit=per_suite, levels=[1, 2], parity="even")]
    lm = make_lm("local", **options)
    share = engines.claim_shared_call
    out: dict = {"tasks": len(tasks)}
    # A first, untimed run warms the model's contexts; then one sample is timed before and after the votes.
    exp = load_experiment("E13")  # with vote5_settled: vote5 stopping once the samples left cannot change it
    exp = replace(exp, conditions=(*exp.conditions, replace(exp.condition("vote5"), name="vote5_settled",
                                                             vote_stop="settled")))
    plan = [("warm_up", "grammar_templates", True), ("one_sample", "grammar_templates", True),
            ("vote5_batched", "vote5", True), ("vote5_settled", "vote5_settled", True),
            ("vote5_sequential", "vote5", False), ("vote5_settled_sequential", "vote5_settled", False),
            ("one_sample_again", "grammar_templates", True)]
    for label, cond, shared in plan:
        if fresh:  # each run prefills its prompts as a new task would, not from the run before's KV cache
            lm.rlmlab_engine._decoder().forget()
            lm.rlmlab_engine.llm.reset()
        engines.claim_shared_call = share if shared else (lambda seed, temperature: None)
        try:
            t0 = time.perf_counter()
            run = run_experiment(exp, lm=lm, conditions=[cond], task_list=tasks, runs_dir=runs_dir, progress=False,
                                 workers=1)
            secs = time.perf_counter() - t0
        finally:
            engines.claim_shared_call = share
        out[label] = {"s_per_task": round(secs / len(tasks), 1), "maj_at_n": run.summary[cond].get("maj_at_n"),
                      "pass_at_1": run.summary[cond].get("pass_at_1"),
                      "rollouts_run": run.summary[cond].get("mean_rollouts_run"),
                      "picks": [r["answer"] for r in read_results(run.run_dir / "results.jsonl") if r["best"]]}
        print(label, out[label], flush=True)
    out["one_sample"]["s_per_task"] = round((out["one_sample"]["s_per_task"]
                                             + out.pop("one_sample_again")["s_per_task"]) / 2, 1)
    one = out["one_sample"]["s_per_task"]
    out["vote5_batched_over_one"] = round(out["vote5_batched"]["s_per_task"] / one, 2)
    out["vote5_sequential_over_one"] = round(out["vote5_sequential"]["s_per_task"] / one, 2)
    out["vote5_settled_over_one"] = round(out["vote5_settled"]["s_per_task"] / one, 2)
    out["vote5_settled_sequential_over_one"] = round(out["vote5_settled_sequential"]["s_per_task"] / one, 2)
    # the early stop is exact over the same samples; a batch of 3 (then 2) may round a sample differently from a
    # batch of 5 (llama.cpp's batched numerics), so this counts the tasks where both picked the same answer
    out["settled_same_pick"] = sum(a == b for a, b in zip(out["vote5_settled"]["picks"], out["vote5_batched"]["picks"]))
    out["served_from_batch"] = lm.rlmlab_engine.shared.served
    return out


def batch_scaling(engine, steps: list[dict], max_tokens: int, sizes=(1, 2, 3, 5)) -> dict:
    """Milliseconds per ``llama_decode`` call of an N-sequence batch (N in ``sizes``) on each step's prompt with
    its KV cached, as E13's later tasks run: what one decode step of a vote costs against one sample's."""
    import rlmlab.lm._batch as batch

    spent = {"ms": 0.0, "calls": 0}
    real = batch.BatchDecoder._decode

    def timed(self):
        t0 = time.perf_counter()
        real(self)
        spent["ms"] += 1000 * (time.perf_counter() - t0)
        spent["calls"] += 1

    per: dict[int, list[float]] = {n: [] for n in sizes}
    batch.BatchDecoder._decode = timed
    try:
        for step in steps:
            with constrained(grammar=step["grammar"]):
                engine.generate_n(step["messages"], _Config(0.0, 1, 1), [1])  # the prompt's KV, untimed
                for n in sizes:
                    spent.update(ms=0.0, calls=0)
                    engine.generate_n(step["messages"], _Config(0.7, max_tokens, None), list(range(1, n + 1)))
                    per[n].append(spent["ms"] / max(1, spent["calls"]))
    finally:
        batch.BatchDecoder._decode = real
    ms = {n: round(statistics.median(v), 1) for n, v in per.items() if v}
    return {"ms_per_decode": ms, "over_one": {n: round(v / ms[sizes[0]], 2) for n, v in ms.items()}}


def grammar_sizes(steps: list[dict]) -> dict:
    sizes = [len(s["grammar"]) for s in steps]
    return {"steps": len(steps), "grammar_chars_median": int(statistics.median(sizes)) if sizes else 0,
            "grammar_chars_max": max(sizes, default=0)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="default runs/bench/decode.json in the checkout; --smoke: runs/bench_smoke/")
    ap.add_argument("--smoke", action="store_true", help="one arith task, 8 tokens, 2 samples (seconds)")
    ap.add_argument("--per-suite", type=int, default=2, help="even level-1/2 tasks per suite")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: every core)")
    ap.add_argument("--e13-per-suite", type=int, default=1,
                    help="even level-1/2 tasks per suite for E13's one sample vs vote5 per task (0: skip)")
    ap.add_argument("--e13-suites", default=",".join(SUITES), help="suites of the E13 phase (comma-separated)")
    ap.add_argument("--skip-decode", action="store_true", help="only the E13 phase")
    ap.add_argument("--e13-cached", action="store_true",
                    help="let each E13 run reuse the KV cache of the run before (default: every run prefills afresh)")
    args = ap.parse_args()
    # a smoke run (make check) never overwrites a full run's figures
    args.json = args.json or str(Path("runs/bench_smoke") if args.smoke else ROOT / "runs" / "bench") + "/decode.json"
    if args.smoke:
        args.per_suite, args.max_tokens, args.samples, args.threads = 1, 8, 2, 1
    out: dict = {"complete": False, "smoke": args.smoke, "load_before": os.getloadavg()}
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        path.write_text(json.dumps(out, indent=2))

    steps = capture_steps(args.per_suite, ("arith",) if args.smoke else SUITES)
    if args.smoke:  # a real step grammar on a short prompt: seconds, not a 2,000-token prefill
        steps = [{**s, "messages": [{"role": "user", "content": "Reply."}]} for s in steps]
    out["steps"] = grammar_sizes(steps)
    save()
    options = {"max_tokens": args.max_tokens, "n_threads": args.threads}
    try:
        base = make_lm("local", **options).rlmlab_engine  # votes and E13 use the default constraint engine
        out["default_constraint_engine"] = base.constraint_engine
    except Exception as exc:  # the local extra is not installed: the smoke run still proves the capture
        out.update(complete=True, skipped=f"no local model: {exc}")
        save()
        return 0
    engines = {"free": base,
               "gbnf-full": make_lm("local", constraint_engine="gbnf-full", **options).rlmlab_engine,
               "gbnf": make_lm("local", constraint_engine="gbnf", **options).rlmlab_engine}
    try:
        import llguidance  # noqa: F401

        engines["llguidance"] = make_lm("local", constraint_engine="llguidance", **options).rlmlab_engine
    except ImportError:
        out["llguidance"] = "not installed"
    out["batch_scaling"] = batch_scaling(base, steps[:3], args.max_tokens)
    print("batch scaling:", json.dumps(out["batch_scaling"]), flush=True)
    if args.skip_decode:
        steps = []
    speed = decode_speed(engines, steps, args.max_tokens) if steps else {"engines": {}}
    out["decode"] = speed["engines"]
    print("decode:", json.dumps(out["decode"]), flush=True)
    save()
    if steps:
        out["votes"] = votes(base, steps, args.samples, args.max_tokens)
        print("votes:", json.dumps({k: v for k, v in out["votes"].items() if k != "tasks"}), flush=True)
        save()
    if args.e13_per_suite and not args.smoke:
        with tempfile.TemporaryDirectory() as tmp:
            out["e13"] = e13_votes(args.e13_per_suite, options, tmp, args.e13_suites.split(","),
                                   fresh=not args.e13_cached)
        print("e13:", json.dumps(out["e13"]), flush=True)
        save()
    if "llguidance" in engines and steps:
        out["acceptance"] = acceptance(engines["gbnf"], steps, 8 if args.smoke else 512)
        print("acceptance:", json.dumps({k: v for k, v in out["acceptance"].items() if k != "differ"}), flush=True)
    out["load_after"] = os.getloadavg()
    out["complete"] = True
    save()
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
