"""Seed 004's closed loop (E10-E12) and the small-model decoding experiment (E13), each against the condition the
experiment adds one thing to: E10 consolidation over E9's append-only bank, E11 forgetting over E10, E12's N
rollouts over E10's one and its contrastive extraction over best-only, E13's grammar over free decoding, templates
over the bare grammar and vote@5 over one sample. Rows pair the two conditions by task id (``success``: the task's
deterministic check) and carry the arms' memory health (duplicate rate, active bank) beside the comparison.
"""

from __future__ import annotations

from typing import Any

from rlmlab.scorecard._claims import Paired, claim
from rlmlab.scorecard._context import ScoreContext, experiment_arm

__all__ = ["pair_conditions"]

_HEALTH = ("duplicate_rate", "active", "forgotten_events")


def pair_conditions(ctx: ScoreContext, a: tuple[str, str | None], b: tuple[str, str | None]) -> Paired:
    """Paired success of (experiment, condition) ``a`` against ``b``, both on ``a``'s suite; ``extra`` holds each
    arm's memory health figures (``a.duplicate_rate``, ``b.active``, ...) where the arm keeps a bank."""
    from rlmlab.experiments import load_experiment

    suite = load_experiment(a[0]).defaults["suite"]
    arm_a, arm_b = experiment_arm(ctx, a[0], a[1], suite), experiment_arm(ctx, b[0], b[1], suite)
    items = [t for t in arm_a["rows"] if t in arm_b["rows"]]
    extra = {f"{side}.{k}": arm["health"][k] for side, arm in (("a", arm_a), ("b", arm_b))
             for k in _HEALTH if arm.get("health", {}).get(k) is not None}
    return Paired([bool(arm_a["rows"][t]["success"]) for t in items],
                  [bool(arm_b["rows"][t]["success"]) for t in items], items,
                  runs=sorted({arm_a["run_id"], arm_b["run_id"]}), extra=extra)


def _rows(a: tuple[str, str | None], b: tuple[str, str | None]) -> Any:
    return lambda ctx: pair_conditions(ctx, a, b)


# the loop's additions manage the bank; the seed claims no gain in success from them, only that they keep it
# clean, so each must not cost success (within 5 points) while the duplicate rate is shown beside it
claim("s004.E10", seed="004", paraphrase=True, comparison="E10 consolidation vs E9 append-only", direction="no_worse", margin=0.05,
      text="Merge/supersede/discard decisions per new memory item; track duplicate rate")(_rows(("E10", None),
                                                                                                ("E9", None)))
claim("s004.E11", seed="004", paraphrase=True, comparison="E11 forgetting (bounded bank) vs E10", direction="no_worse", margin=0.05,
      text="Bound active memory size; keep floors for both success and failure items")(_rows(("E11", None),
                                                                                             ("E10", None)))
claim("s004.E12-rollouts", seed="004", paraphrase=True, comparison="E12 best of 3 rollouts (best-only extraction) vs E10 one rollout",
      text="Run N rollouts per task; select best by judge")(_rows(("E12", "best_only"), ("E10", None)))
claim("s004.E12-contrastive", seed="004", paraphrase=True, comparison="E12 contrastive extraction vs best-only extraction",
      text="v1: contrastive extraction using all rollouts (success vs failure)")(_rows(("E12", "contrastive"),
                                                                                    ("E12", "best_only")))
claim("s004.E13-grammar", seed="004", comparison="E13 grammar-constrained steps vs free decoding", quoted=False,
      text="Constraining each agent step to the workspace tools' grammar lets the embedded model solve tasks that "
           "free decoding does not.")(_rows(("E13", "grammar"), ("E13", "free")))
claim("s004.E13-templates", seed="004", comparison="E13 grammar + L2 code templates vs grammar alone", quoted=False,
      text="Copyable code templates from memory (L2 success strategies joining the grammar) raise success over the "
           "bare step grammar.")(_rows(("E13", "grammar_templates"), ("E13", "grammar")))
claim("s004.E13-vote5", seed="004", comparison="E13 vote@5 (templates) vs one sample (templates)", quoted=False,
      text="A majority vote over 5 sampled rollouts raises success over one greedy rollout, with no reference and "
           "no judge.")(_rows(("E13", "vote5"), ("E13", "grammar_templates")))
