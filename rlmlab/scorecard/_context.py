"""What every claim's ``measure`` gets: the LM, the items per claim, where runs go, and the arms already run.

Arms are cached by what defines them (experiment, condition, suite, n; a teacher-learner config), so rows that
share an arm (E2, E3 and E5 against the E1 baseline) run it once per scorecard.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ScoreContext", "experiment_arm"]


@dataclass
class ScoreContext:
    """``lm``: an LM object (every arm shares it, so the embedded model loads once); ``lm_name`` what rows record;
    ``n`` items per claim (an arm has fewer when its suite has fewer); ``quick`` trims agent steps; ``out`` the
    folder runs are written under; ``suite`` overrides every experiment row's suite (None: each config's own)."""

    lm: Any
    lm_name: str
    n: int
    out: Path
    quick: bool = False
    suite: str | None = None
    seed: int = 0
    log: Callable[[str], None] = lambda line: None
    cache: dict[Any, Any] = field(default_factory=dict)

    @property
    def max_iters(self) -> int | None:
        return 3 if self.quick else None  # None: each condition's own

    def cached(self, key: Any, make: Callable[[], Any]) -> Any:
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]


def experiment_arm(ctx: ScoreContext, experiment: str, condition: str | None = None,
                   suite: str | None = None) -> dict[str, Any]:
    """Run one condition of an experiment on the context's tasks (once per scorecard) and return
    ``{"run_id", "rows": {task_id: results row}}``: the stream phase's best rollout of each task."""
    from rlmlab.experiments import load_experiment, run_experiment

    exp = load_experiment(experiment)
    cond = condition or exp.conditions[0].name
    suite = ctx.suite or suite or exp.defaults["suite"]

    def run() -> dict[str, Any]:
        ctx.log(f"  running {experiment}/{cond} on {suite} ({ctx.n} tasks)")
        done = run_experiment(exp, lm=ctx.lm, suite=suite, tasks=ctx.n, conditions=[cond], workers=1,
                              runs_dir=ctx.out / "runs", progress=False, max_iters=ctx.max_iters)
        from rlmlab.experiments import run_rows

        rows = {r["task_id"]: r for r in run_rows(done.run_dir)
                if r["condition"] == cond and r.get("phase", "stream") == "stream" and r.get("best", True)}
        return {"run_id": done.run_id, "rows": rows}

    return ctx.cached(("experiment", experiment, cond, suite, ctx.n, ctx.max_iters), run)
