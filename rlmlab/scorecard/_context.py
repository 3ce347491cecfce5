"""What every claim's ``measure`` gets: the LM, the items per claim, where runs go, and the arms already run.

Arms are cached by what defines them (experiment, condition, suite, n; a teacher-learner config), so rows that
share an arm (E2, E3 and E5 against the E1 baseline) run it once per scorecard and pair it many times. In planning
mode (:func:`~rlmlab.scorecard.plan_scorecard`) an arm is recorded with its cost label and not run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from rlmlab.text import plural

__all__ = ["ScoreContext", "experiment_arm", "sized_suite", "paraphrase_suite", "suite_size", "arm_label",
           "LARGER_SUITES"]


@dataclass
class ScoreContext:
    """``lm``: an LM object (every arm shares it, so the embedded model loads once); ``lm_name`` what rows record;
    ``n`` items per claim (an arm has fewer when its suite has fewer); ``quick`` trims agent steps; ``out`` the
    folder runs are written under; ``suite`` overrides every experiment row's suite (None: each config's own);
    ``steps`` caps agent steps in every experiment arm (``quick``: 3); ``workers`` threads an experiment arm's tasks run on where the runner allows (not in learning conditions,
    whose tasks depend on the bank the previous task left). ``arms`` records each arm run: cost label, items,
    seconds. ``planning``: record the arms a row needs without running them."""

    lm: Any
    lm_name: str
    n: int
    out: Path
    quick: bool = False
    suite: str | None = None
    seed: int = 0
    log: Callable[[str], None] = lambda line: None
    cache: dict[Any, Any] = field(default_factory=dict)
    workers: int = 1
    planning: bool = False
    arms: dict[str, dict[str, Any]] = field(default_factory=dict)
    on_arm: Callable[[str, int], None] | None = None  # called before an arm runs, with its label and items

    steps: int | None = None  # at most this many agent steps in every experiment arm (None: each condition's own)
    # continue each experiment arm's newest run of the same parameters under out/runs that this commit ran on a
    # clean tree (cut short: its remaining tasks run; finished: read again), instead of starting it afresh
    resume: bool = False
    # run every experiment arm on its suite's paraphrase split (``<suite>-paraphrase-<split>``: questions written
    # blind in a researcher's own words) instead of the suite itself; the ``.paraphrase`` twin rows set it
    paraphrase: str | None = None

    @property
    def max_iters(self) -> int | None:
        return 3 if self.quick else self.steps  # None: each condition's own

    def cached(self, key: Any, make: Callable[[], Any], *, label: str | None = None, items: int | None = None,
               empty: Any = None) -> Any:
        """``make()`` once per ``key``. With a ``label`` it is an arm: timed into :attr:`arms` (``items`` its item
        count), and in planning mode recorded and answered with ``empty`` instead of run."""
        if key in self.cache:
            return self.cache[key]
        if label is None:
            self.cache[key] = make()
            return self.cache[key]
        n_items = self.n if items is None else items
        if self.planning:
            self.arms.setdefault(label, {"items": n_items, "seconds": None})
            return empty
        if self.on_arm:
            self.on_arm(label, n_items)
        t0 = time.perf_counter()
        self.cache[key] = make()
        self.arms[label] = {"items": n_items, "seconds": round(time.perf_counter() - t0, 1)}
        return self.cache[key]


# The built-in suites hold 30 tasks each; past that a row takes the generated held-out set of the same suite
# (``rlmlab tasks generate``, answers checked twice; data/tasks/README.md), so every row reaches 60 paired items.
LARGER_SUITES = {"code": "data/tasks/e14/code_test.jsonl", "ontology": "data/tasks/e14/ontology_test.jsonl",
                 "arith": "data/tasks/e14/arith_test.jsonl"}


def sized_suite(suite: str, n: int) -> str:
    """``suite``, or its larger generated set (a path) when the built-in suite has fewer than ``n`` tasks."""
    from rlmlab._paths import PROJECT_ROOT
    from rlmlab.experiments import SUITES

    larger = LARGER_SUITES.get(suite)
    if larger is None or suite not in SUITES or not (PROJECT_ROOT / larger).is_file():
        return suite
    return str(PROJECT_ROOT / larger) if n > suite_size(suite) else suite


def paraphrase_suite(suite: str, split: str) -> str:
    """The built-in suite of ``suite``'s questions in a researcher's own words (``code`` -> ``code-paraphrase-test``);
    ConfigError when the suite has none."""
    from rlmlab.errors import ConfigError
    from rlmlab.experiments import SUITES

    name = f"{suite}-paraphrase-{split}"
    if name not in SUITES:
        raise ConfigError(f"suite {suite!r} has no paraphrase {split} split ({name!r} is not a built-in suite)")
    return name


def suite_size(suite: str) -> int | None:
    """Tasks in a built-in suite or a JSONL path (lines that are not blank); None when it cannot be read."""
    from rlmlab.experiments import SUITES

    try:
        with open(SUITES.get(suite, suite), encoding="utf-8") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
        return None


def arm_label(kind: str, name: str, where: str, max_iters: int | None) -> str:
    """The cost model's key of an arm: ``experiment:E1/main@code/max6``: its kind, name, suite and agent steps."""
    return f"{kind}:{name}@{where}" + (f"/max{max_iters}" if max_iters else "")


def experiment_arm(ctx: ScoreContext, experiment: str, condition: str | None = None,
                   suite: str | None = None) -> dict[str, Any]:
    """Run one condition of an experiment on the context's tasks (once per scorecard) and return
    ``{"run_id", "rows": {task_id: results row}, "run_dir", "health": memory health or {}}``: the stream phase's
    best rollout of each task."""
    from rlmlab.experiments import load_experiment, run_experiment

    exp = load_experiment(experiment)
    cond_obj = next((c for c in exp.conditions if c.name == condition), exp.conditions[0])
    cond = condition or cond_obj.name
    suite = ctx.suite or (paraphrase_suite(suite or exp.defaults["suite"], ctx.paraphrase) if ctx.paraphrase
                          else sized_suite(suite or exp.defaults["suite"], ctx.n))

    def run() -> dict[str, Any]:
        import json

        ctx.log(f"  running {experiment}/{cond} on {suite} ({plural(ctx.n, 'task')})")
        done = run_experiment(exp, lm=ctx.lm, suite=suite, tasks=ctx.n, conditions=[cond], workers=ctx.workers,
                              runs_dir=ctx.out / "runs", progress=False, max_iters=ctx.max_iters,
                              resume_latest=ctx.resume)
        from rlmlab.experiments import run_rows

        rows = {r["task_id"]: r for r in run_rows(done.run_dir)
                if r["condition"] == cond and r.get("phase", "stream") == "stream" and r.get("best", True)}
        health = Path(done.run_dir) / f"health.{cond}.json"
        return {"run_id": done.run_id, "rows": rows, "run_dir": str(done.run_dir),
                "health": json.loads(health.read_text(encoding="utf-8")) if health.is_file() else {}}

    return ctx.cached(("experiment", experiment, cond, suite, ctx.n, ctx.max_iters), run,
                      label=arm_label("experiment", f"{experiment}/{cond}", Path(suite).stem,
                                      ctx.max_iters or cond_obj.max_iters),
                      items=min(ctx.n, suite_size(suite) or ctx.n),
                      empty={"run_id": "", "rows": {}, "run_dir": "", "health": {}})
