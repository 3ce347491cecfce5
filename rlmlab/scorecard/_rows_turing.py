"""Seed 003's claims: the same agent tasks with the Turing Protocol off and on, under free and grammar decoding.

Each arm runs the ``rlm`` executor on the arith suite's first n tasks with the base instructions and no memory,
judged by the task's deterministic check; the protocol arm counts hook firings and corrections.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rlmlab.scorecard._claims import NotMeasured, Paired, claim
from rlmlab.scorecard._context import ScoreContext, arm_label, sized_suite, suite_size
from rlmlab.text import plural

__all__ = ["agent_arm", "excess_corrections"]

SUITE = "arith"  # the suite the embedded model solves some of: an effect on success can show there
# E13's cap on the same suite: there the embedded model's successes come at step 1 or 3 (14 runs of 21 tasks,
# Nov 24-25), and 3 steps leave a correction fired on step 1 two steps to take effect; 6 steps of free decoding
# cost twice as much and add no success
AGENT_MAX_ITERS = 3


TASKS_FILE = "tasks.jsonl"  # an agent arm's record per finished task, so a cut-short arm can go on (--resume)
PARAMS_FILE = "arm.json"  # what the arm ran (label, suite, n, steps, lm) and the commit that ran it


def agent_arm(ctx: ScoreContext, decoding: str, turing: bool) -> dict[str, Any]:
    """Run the arm once per scorecard; ``{"run_id", "success": {task_id: bool}, "firings", "corrections",
    "turns"}``: ``turns`` maps each step a hook fired on (``task_id#step``) to the hooks that fired and, per
    correction injected there, the hooks it answered. Each finished task is written to the run's ``tasks.jsonl``
    as it ends; with ``ctx.resume`` the newest run of the same arm that this commit made on a clean tree goes on
    from there (its tasks are read, not run again)."""
    from rlmlab.executors import new_run_id, run_rlm
    from rlmlab.experiments import load_suite
    from rlmlab.learning import judge_for
    from rlmlab.memory import BASE_INSTRUCTIONS

    suite = ctx.suite or sized_suite(SUITE, ctx.n)
    steps = ctx.max_iters or AGENT_MAX_ITERS
    label = f"{decoding}.{'turing' if turing else 'plain'}"

    def run() -> dict[str, Any]:
        from rlmlab._files import JsonlWriter

        tasks = load_suite(suite, limit=ctx.n)
        ctx.log(f"  running agent {label} on {Path(suite).stem} ({plural(len(tasks), 'task')})")
        protocol = None
        if turing:
            from rlmlab.turing import TuringProtocol

            protocol = TuringProtocol.from_config(log=ctx.out / "turing" / "turing.sqlite")
        params = {"arm": label, "suite": Path(suite).name, "n": ctx.n, "steps": steps, "lm": ctx.lm_name}
        run_dir, done_before = _agent_run_dir(ctx, params) if ctx.resume else (None, {})
        if run_dir is None:
            run_dir = ctx.out / "turing" / new_run_id(f"turing-{label}")
            _write_params(run_dir, params, ctx.out)
        elif done_before:
            ctx.log(f"    continuing {run_dir.name}: {len(done_before)} of {plural(len(tasks), 'task')} done")
        run_id = run_dir.name
        success, firings, corrections, turns = {}, 0, 0, {}
        started = time.monotonic()
        with JsonlWriter(run_dir / TASKS_FILE, mode="a") as out:
            for done, task in enumerate(tasks, 1):
                rec = done_before.get(task.id)
                if rec is None:
                    rec = _agent_task(task, run_rlm(task.query, task.context, lm=ctx.lm, turing=protocol,
                                                    decoding=decoding, instructions=BASE_INSTRUCTIONS,
                                                    max_iters=steps, run_id=f"{run_id}-{task.id}", runs_dir=run_dir,
                                                    source_path=task.meta.get("source_path")), judge_for(task))
                    out.write(rec)
                success[task.id] = rec["success"]
                firings += rec["firings"]
                corrections += rec["corrections"]
                turns.update(rec["turns"])
                if done % 10 == 0 or done == len(tasks):  # an arm of free decoding runs for tens of minutes
                    ctx.log(f"    {done}/{plural(len(tasks), 'task')}, {sum(success.values())} passed, "
                            f"{plural(firings, 'hook firing')}, {time.monotonic() - started:.0f} s")
        return {"run_id": f"turing/{run_id}", "success": success, "firings": firings, "corrections": corrections,
                "turns": turns}

    return ctx.cached(("agent", decoding, turing, suite, ctx.n, steps), run,
                      label=arm_label("agent", label, Path(suite).stem, steps),
                      items=min(ctx.n, suite_size(suite) or ctx.n),
                      empty={"run_id": "", "success": {}, "firings": 0, "corrections": 0, "turns": {}})


def _agent_task(task: Any, traj: Any, judge: Any) -> dict[str, Any]:
    """One finished agent task as its record: success by the task's check, hook firings and corrections, and the
    steps a hook fired on."""
    rounds = [r for rec in traj.iterations for r in (rec.turing or [])]
    turns = {}
    for i, rec in enumerate(traj.iterations):
        fired = [r for r in rec.turing or [] if r.get("violations")]
        if fired:  # the turn's corrections by the hooks that caused them, and the hooks that fired
            turns[f"{task.id}#{i}"] = {
                "fired": sorted({h for r in fired for h in r.get("hooks") or []}),
                "corrected": [sorted(set(r.get("hooks") or [])) for r in fired if r.get("correction")]}
    return {"task_id": task.id, "success": bool(judge.judge(task, traj).success),
            "firings": sum(len(r.get("violations") or []) for r in rounds),
            "corrections": sum(1 for r in rounds if r.get("correction")), "turns": turns}


def _write_params(run_dir: Path, params: dict[str, Any], out: Path) -> None:
    import json

    from rlmlab.provenance import environment

    env = environment(outputs=[out])
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / PARAMS_FILE).write_text(json.dumps({**params, "git_commit": env["git_commit"],
                                                   "git_dirty": env["git_dirty"]}, indent=1) + "\n", encoding="utf-8")


def _agent_run_dir(ctx: ScoreContext, params: dict[str, Any]) -> tuple[Path | None, dict[str, dict[str, Any]]]:
    """The newest agent run under ``out/turing`` with these params that this commit made on a clean tree, and its
    finished tasks by id; (None, {}) when there is none or the tree has uncommitted changes (nothing vouches that
    the code is the one that ran)."""
    import json

    from rlmlab._files import read_jsonl, write_jsonl
    from rlmlab.provenance import environment

    env = environment(outputs=[ctx.out])
    if env.get("git_dirty") is not False:
        return None, {}
    found = []
    for arm_file in (ctx.out / "turing").glob(f"*/{PARAMS_FILE}"):
        try:
            saved = json.loads(arm_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if (saved.get("git_commit") == env["git_commit"] and saved.get("git_dirty") is False
                and all(saved.get(k) == v for k, v in params.items())):
            found.append((arm_file.stat().st_mtime, arm_file.parent))
    if not found:
        return None, {}
    run_dir = max(found)[1]
    path = run_dir / TASKS_FILE
    records = [rec for _, rec in read_jsonl(path, torn_tail=True)] if path.is_file() else []
    write_jsonl(path, records)  # without a line a kill left half written, before more are appended
    return run_dir, {r["task_id"]: r for r in records}


def _on_off(ctx: ScoreContext, decoding: str) -> Paired:
    on, off = agent_arm(ctx, decoding, True), agent_arm(ctx, decoding, False)
    items = [t for t in on["success"] if t in off["success"]]
    return Paired([on["success"][t] for t in items], [off["success"][t] for t in items], items,
                  runs=[on["run_id"], off["run_id"]],
                  extra={"firings": on["firings"], "corrections": on["corrections"]})


_TEXT = ("The result is usable, reliable autonomous behaviour from models that would otherwise be too unreliable for "
         "agentic tasks.")


@claim("s003.agent-free", seed="003", comparison="Turing on vs off, rlm agent, free decoding", direction="no_worse",
       margin=0.05, text=_TEXT)
def _free(ctx: ScoreContext) -> Paired:
    return _on_off(ctx, "free")


@claim("s003.agent-grammar", seed="003", comparison="Turing on vs off, rlm agent, grammar decoding",
       direction="no_worse", margin=0.05, text=_TEXT)
def _grammar(ctx: ScoreContext) -> Paired:
    return _on_off(ctx, "grammar")


@claim("s003.one-correction", seed="003", comparison="corrections beyond one per hook per turn (protocol on) vs none",
       direction="equal", margin=0.05, metric="extra corrections per turn a hook fired in",
       text="Each hook fires **at most once per turn**.")
def _once(ctx: ScoreContext) -> Paired | NotMeasured:
    # the protocol arms of both decodings (the runs s003.agent-free and s003.agent-grammar pair); a turn is one
    # agent step, its rounds the reply and each tool call checked in it
    arms = [agent_arm(ctx, decoding, True) for decoding in ("free", "grammar")]
    turns = {f"{d}:{t}": got for d, arm in zip(("free", "grammar"), arms) for t, got in arm["turns"].items()}
    if not turns and any(arm["run_id"] for arm in arms):
        return NotMeasured(f"no hook fired in {sum(len(a['success']) for a in arms)} protocol-on tasks, so no turn "
                           "can show a hook correcting twice")
    items = sorted(turns)
    by_hook: dict[str, int] = {}
    for t in turns.values():
        for h in t["fired"]:
            by_hook[h] = by_hook.get(h, 0) + 1
    return Paired([float(excess_corrections(turns[i]["corrected"])) for i in items], [0.0] * len(items), items,
                  "continuous", runs=[a["run_id"] for a in arms],
                  extra={"turns_fired": len(items), "turns_by_hook": by_hook,
                         "corrections": sum(len(t["corrected"]) for t in turns.values())})


def excess_corrections(corrected: list[list[str]]) -> int:
    """Corrections beyond the first that one hook caused in one turn: ``corrected`` lists, per correction, the
    hooks it answered."""
    count: dict[str, int] = {}
    for hooks in corrected:
        for h in hooks:
            count[h] = count.get(h, 0) + 1
    return sum(n - 1 for n in count.values() if n > 1)
