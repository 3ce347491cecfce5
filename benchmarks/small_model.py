"""What the embedded SmolLM2-135M solves: E13's conditions side by side on the level-1/2 tasks of three suites.

One run, one process, the embedded model (llama-cpp-python, 2 threads):

1. E13 on the level-1 and level-2 tasks of ``code``, ``ontology`` and ``arith``: grammar_templates on every
   one (held-out even tasks first, then the odd ones the templates were written from), grammar and vote5 on the
   even ones (``--all-parities``: every one), and the free baseline, whose steps run to the token cap and whose
   code often hits the step timeout, on the even ones among the first ``--free-per-group`` of each suite x level
   (0 for all). Per condition and per suite x level x parity: pass@1 (mean success over all rollouts),
   maj@N (the majority answer; for single-sample conditions the one rollout) and pass@N (any rollout right),
   tool calls per task, off-format replies (salvaged by the lenient adapter), tokens and seconds per task,
   and the golden-trace yield of TraceValidator on the code suite (share of rollouts accepted as golden).
   A task's *number* is its 1-based position within its (suite, level) group in file order; the seed
   templates (data/packs/step_templates.jsonl) were written from the odd-numbered tasks only, so the
   even-numbered tasks are the held-out figure.
2. Levels 3-5 for the best single-sample condition (by pass@1 on the even tasks), ``--hard-per-group`` tasks
   of each suite x level (default 2; 0 for all).
3. The same conditions (grammar_templates, grammar) on the level-1/2 questions of the paraphrase split
   (``--paraphrase-split``, default dev; written blind, ``data/paraphrase``) of code, ontology and text, up to
   ``--paraphrase-per-group`` per suite x level, printed beside the generated figures (the even tasks): the
   in-distribution and the paraphrase pass@1 side by side, and their gap.
4. Speed: decode tokens/s with and without the step grammar on the same prompt, and seconds per task of the
   grammar condition with llama.cpp's prefix (prompt) cache off and on, on the same tasks.

Numbers go to ``--json`` (default runs/bench/small_model.json). The machine is noisy: run it idle; ratios
are measured side by side in one run. ``--smoke`` (make check) runs each condition on one arith task with the scripted
LM (``scripted:probe``) and skips the speed phases, to check the script itself.
Run:  .venv/bin/python benchmarks/small_model.py [--quick | --smoke]
"""
# smoke-marks: slow

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rlmlab.experiments import load_experiment, load_suite, run_experiment  # noqa: E402
from rlmlab.experiments._suites import SUITES, read_tasks  # noqa: E402

SUITE_NAMES = ("code", "ontology", "arith")


def numbered_tasks(levels: tuple[int, ...], suites=SUITE_NAMES, limit_per_group: int | None = None):
    """(MemoryTask, number) for the tasks of the given levels; number = position within (suite, level)."""
    out = []
    for suite in suites:
        counts: dict[int, int] = defaultdict(int)
        for task in read_tasks(SUITES[suite]):
            counts[task.level] += 1
            if task.level in levels and (limit_per_group is None or counts[task.level] <= limit_per_group):
                out.append((task.to_memory_task(), counts[task.level]))
    return out


def _rate(values):
    return round(mean(values), 3) if values else None


def tables(rows: list[dict], numbers: dict[str, int]) -> dict:
    """Per condition and group (suite, level, parity, and 'all'/'even'/'odd'): the figures of the docstring."""
    by_task: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        by_task[(r["condition"], r["task_id"])].append(r)
    groups: dict[tuple[str, str], list[list[dict]]] = defaultdict(list)
    for (cond, tid), rs in by_task.items():
        r0 = rs[0]
        parity = "odd" if numbers[tid] % 2 else "even"
        for g in ("all", parity, f"{r0['suite']}", f"{r0['suite']} L{r0['level']}",
                  f"{r0['suite']} L{r0['level']} {parity}"):
            groups[(cond, g)].append(rs)
    out: dict = defaultdict(dict)
    for (cond, g), tasks in groups.items():
        golden = [r["golden"] for rs in tasks for r in rs if r.get("golden") is not None]
        out[cond][g] = {
            "tasks": len(tasks),
            "pass_at_1": _rate([float(r["success"]) for rs in tasks for r in rs]),
            "maj_at_n": _rate([float(next(r for r in rs if r["best"])["success"]) for rs in tasks]),
            "pass_at_n": _rate([float(any(r["success"] for r in rs)) for rs in tasks]),
            "tool_calls_per_task": _rate([sum(r["tool_calls"] for r in rs) for rs in tasks]),
            "off_format": sum(r.get("salvaged", 0) for rs in tasks for r in rs),
            "tokens_per_task": _rate([sum(r["input_tokens"] + r["output_tokens"] for r in rs) for rs in tasks]),
            "seconds_per_task": _rate([sum(r["elapsed_ms"] for r in rs) / 1000 for rs in tasks]),
            "golden_yield": _rate([float(x) for x in golden]),
        }
    return out


PARAPHRASE_SUITES = ("code", "ontology", "text")


def paraphrase_tasks(split: str, per_group: int, suites=PARAPHRASE_SUITES) -> list:
    """The level-1/2 questions of each suite's paraphrase split, the first ``per_group`` of each level."""
    out = []
    for suite in suites:
        counts: dict[int, int] = defaultdict(int)
        for task in load_suite(f"{suite}-paraphrase-{split}", levels=(1, 2)):
            counts[task.meta["level"]] += 1
            if counts[task.meta["level"]] <= per_group:
                out.append(task)
    return out


def side_by_side(generated: list[dict], paraphrase: list[dict], numbers: dict[str, int], split: str) -> dict:
    """Per condition and suite: pass@1 on the generated held-out (even) level-1/2 tasks and on the paraphrase
    split's level-1/2 questions, and the gap (generated minus paraphrase, in points)."""
    out: dict = defaultdict(dict)
    for cond in dict.fromkeys(r["condition"] for r in paraphrase):
        for suite in PARAPHRASE_SUITES:
            gen = [float(r["success"]) for r in generated if r["condition"] == cond and r["suite"] == suite
                   and numbers.get(r["task_id"], 1) % 2 == 0]
            par = [r for r in paraphrase if r["condition"] == cond
                   and r["suite"] == suite]
            if not par and not gen:
                continue
            g, p = _rate(gen), _rate([float(r["success"]) for r in par])
            out[cond][suite] = {"generated_pass_at_1": g, "generated_tasks": len(gen),
                                f"paraphrase_{split}_pass_at_1": p, "paraphrase_tasks": len(par),
                                "undecided": sum(bool(r.get("undecided")) for r in par),
                                "gap_points": None if g is None or p is None else round(100 * (g - p), 1)}
    return out


def print_side_by_side(figures: dict) -> None:
    print("\n## generated (held-out, levels 1-2) vs paraphrase (levels 1-2), pass@1\n")
    print("| condition | suite | generated | tasks | paraphrase | tasks | undecided | gap (points) |")
    print("|---|---|---|---|---|---|---|---|")
    for cond, per in figures.items():
        for suite, f in per.items():
            para = next(v for k, v in f.items() if k.startswith("paraphrase_") and k.endswith("pass_at_1"))
            print(f"| {cond} | {suite} | {f['generated_pass_at_1']} | {f['generated_tasks']} | {para} | "
                  f"{f['paraphrase_tasks']} | {f['undecided']} | {f['gap_points']} |")


def print_table(title: str, figures: dict, groups: list[str]) -> None:
    print(f"\n## {title}\n")
    cols = ["pass_at_1", "maj_at_n", "pass_at_n", "tool_calls_per_task", "off_format", "tokens_per_task",
            "seconds_per_task", "golden_yield"]
    print("| condition | group | tasks | " + " | ".join(cols) + " |")
    print("|---|---|---|" + "---|" * len(cols))
    for cond, per in figures.items():
        for g in groups:
            if g in per:
                f = per[g]
                print(f"| {cond} | {g} | {f['tasks']} | " + " | ".join("-" if f[c] is None else f"{f[c]:g}"
                                                                       for c in cols) + " |")


def decode_speed(repeats: int = 3) -> dict:
    """Decode tokens/s on one RLM-sized prompt: free vs the step grammar (same prompt, same max_tokens)."""
    from rlmlab.executors._step_grammar import step_grammar
    from rlmlab.lm import constrained, make_lm
    from rlmlab.tools import TOOLS, ToolCaps

    lm = make_lm("local", max_tokens=96)
    engine = lm.rlmlab_engine
    query = "How many async functions are there in fs/file.rs?"
    messages = [{"role": "system", "content": "Reply with [[ ## reasoning ## ]] and [[ ## code ## ]] fields."},
                {"role": "user", "content": query}]
    grammar = step_grammar(TOOLS, ToolCaps(), query=query)
    out = {}
    for name in ("free", "grammar"):
        toks, secs = 0, 0.0
        for i in range(repeats):
            cfg = type("C", (), {"temperature": 0.7, "max_tokens": 96, "stop": None, "seed": i + 1})()
            t0 = time.perf_counter()
            if name == "grammar":
                with constrained(grammar=grammar):
                    c = engine.generate(messages, cfg)
            else:
                c = engine.generate(messages, cfg)
            secs += time.perf_counter() - t0
            toks += c.output_tokens
        out[name] = {"tokens": toks, "seconds": round(secs, 2), "tokens_per_s": round(toks / secs, 1)}
    out["grammar_over_free"] = round(out["grammar"]["tokens_per_s"] / out["free"]["tokens_per_s"], 2)
    return out


def _rows(run) -> list[dict]:
    return [json.loads(x) for x in (run.run_dir / "results.jsonl").read_text().splitlines() if x.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="default runs/bench/small_model.json in the checkout")
    ap.add_argument("--runs-dir", help="default runs/bench in the checkout")
    ap.add_argument("--smoke", action="store_true", help="one task, scripted LM, seconds (make check); outputs under "
                    "runs/bench_smoke/ unless --json/--runs-dir say otherwise")
    ap.add_argument("--quick", action="store_true", help="2 tasks per suite and level (a smoke run)")
    ap.add_argument("--free-per-group", type=int, default=2,
                    help="tasks per suite x level for the free baseline (0: all; it is the slow condition)")
    ap.add_argument("--hard-per-group", type=int, default=2, help="tasks per suite x level 3-5 (0: all)")
    ap.add_argument("--skip-hard", action="store_true")
    ap.add_argument("--all-parities", action="store_true",
                    help="run grammar, vote5 and free on the odd tasks too (default: grammar_templates only)")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--paraphrase-split", choices=("dev", "test"), default="dev",
                    help="the paraphrase split beside the generated tasks (test: measured once per change)")
    ap.add_argument("--paraphrase-per-group", type=int, default=3, help="paraphrase questions per suite x level")
    args = ap.parse_args(argv)
    base = Path("runs/bench_smoke") if args.smoke else ROOT / "runs" / "bench"
    args.json, args.runs_dir = args.json or str(base / "small_model.json"), args.runs_dir or str(base)
    lm, suites = ("scripted:probe", ("arith",)) if args.smoke else ("local", SUITE_NAMES)
    lm_options = {"max_tokens": args.max_tokens, "n_threads": 2}
    result: dict = {"complete": False, "phases": {}}
    json_path = Path(args.json)
    json_path.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        json_path.write_text(json.dumps(result, indent=2))

    if not args.smoke:
        result["decode_speed"] = decode_speed()
        print("decode speed:", json.dumps(result["decode_speed"]), flush=True)
        save()

    limit = 2 if args.quick else None
    tasks = numbered_tasks((1, 2), suites=suites, limit_per_group=limit)
    if args.smoke:
        tasks = [tn for tn in tasks if tn[1] == 2][:1]  # one held-out (even) task
    tasks.sort(key=lambda tn: tn[1] % 2)  # the held-out (even) tasks first, so a cut-short run has them
    numbers = {t.id: n for t, n in tasks}
    rows: list[dict] = []
    groups = ["all", "odd", "even"] + [f"{s} L{lv} {p}" for s in SUITE_NAMES for lv in (1, 2) for p in ("odd", "even")]
    even = [(t, n) for t, n in tasks if n % 2 == 0]
    free_tasks = [(t, n) for t, n in numbered_tasks((1, 2), suites=suites,
                                                    limit_per_group=args.free_per_group or None)
                  if args.all_parities or n % 2 == 0]
    free_tasks = free_tasks[:1] if args.smoke else free_tasks
    rest = tasks if args.all_parities else even
    phases = [("grammar_templates", tasks), ("grammar", rest), ("vote5", rest), ("free", free_tasks)]
    for cond, chosen in phases:
        t0 = time.perf_counter()
        run = run_experiment("E13", task_list=[t for t, _ in chosen], lm=lm, lm_options=lm_options,
                             conditions=[cond], runs_dir=args.runs_dir, progress="lines")
        rows += _rows(run)
        result["phases"][cond] = {"run_id": run.run_id, "tasks": len(chosen),
                                  "wall_s": round(time.perf_counter() - t0, 1)}
        result["levels_1_2"] = tables(rows, numbers)
        save()
        print_table(f"E13 on levels 1-2 so far ({cond} done)", result["levels_1_2"], groups)

    # the same conditions on questions in a researcher's own words, beside the generated ones
    para = paraphrase_tasks(args.paraphrase_split, 1 if args.smoke else args.paraphrase_per_group,
                            suites=("code",) if args.smoke else PARAPHRASE_SUITES)
    para_rows: list[dict] = []
    for cond in ("grammar_templates", "grammar"):
        run = run_experiment("E13", task_list=para, lm=lm, lm_options=lm_options, conditions=[cond],
                             runs_dir=args.runs_dir, progress="lines")
        para_rows += _rows(run)
    result["paraphrase"] = side_by_side(rows, para_rows, numbers, args.paraphrase_split)
    save()
    print_side_by_side(result["paraphrase"])

    figures = result["levels_1_2"]
    singles = [c.name for c in load_experiment("E13").conditions if c.samples == 1 and c.name in figures]
    best = max(singles, key=lambda c: (figures[c]["even"]["pass_at_1"] or 0, figures[c]["all"]["pass_at_1"] or 0))
    result["best_single"] = best
    if args.smoke:
        result["complete"] = True
        save()
        print(f"\nwrote {json_path}")
        return 0
    # The prompt cache: the same condition and tasks with llama.cpp's prefix reuse off, then on.
    cache_tasks = [t for t, n in numbered_tasks((1,), suites=("code", "arith"), limit_per_group=2)]
    per_task = {}
    for cache in (False, True):
        r = run_experiment("E13", task_list=cache_tasks, lm="local", conditions=["grammar"],
                           lm_options={**lm_options, "prompt_cache": cache}, runs_dir=args.runs_dir, progress=False)
        per_task["on" if cache else "off"] = r.summary["grammar"]["mean_elapsed_ms"] / 1000
    result["prompt_cache_seconds_per_task"] = {**per_task, "off_over_on": round(per_task["off"] / per_task["on"], 2)}
    print("prompt cache, grammar condition, s/task:", json.dumps(result["prompt_cache_seconds_per_task"]), flush=True)
    save()

    if not args.skip_hard:
        hard = numbered_tasks((3, 4, 5), limit_per_group=args.hard_per_group or None)
        numbers.update({t.id: n for t, n in hard})
        r = run_experiment("E13", task_list=[t for t, _ in hard], lm="local", conditions=[best],
                           lm_options=lm_options, runs_dir=args.runs_dir, progress="lines")
        result["levels_3_5"] = tables(_rows(r), numbers)
        print_table(f"{best} on levels 3-5 ({len(hard)} tasks)", result["levels_3_5"],
                    ["all"] + [f"{s} L{lv}" for s in SUITE_NAMES for lv in (3, 4, 5)])
    result["complete"] = True
    save()
    print(f"\nwrote {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
