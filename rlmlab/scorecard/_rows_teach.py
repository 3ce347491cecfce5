"""Seed 002's claims on the teacher-learner loop, with a learner that can answer (:class:`CodeFirstLearner`).

Arms run with :func:`rlmlab.teach.run_arm` on the same items and one learner (its replies to the same conversation
are the same, so arms differ only by what the teacher does); each arm's traces are written under
``<out>/teach/`` in the seed's traces.json format.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from rlmlab.scorecard._claims import NotMeasured, Paired, claim
from rlmlab.scorecard._context import ScoreContext, arm_label
from rlmlab.text import plural

__all__ = ["teach_items", "teach_arm"]

SMALL_SET = "data/math20.csv"  # seed 002's 20 arithmetic items
# math20 then 60 generated word problems of one to three steps (data/make_math80.py): items of math20's kind,
# since on GSM8K the embedded model's learner solves none and every arm ties at 0; past 80, the GSM8K sample
MEDIUM_SET = "data/math80.csv"
LARGE_SET = "data/gsm8k_train_500.jsonl"
NO_STOP = dict(stop_on_match=False, stop_on_two_non_improvements=False, negative_expected_gain_threshold=-math.inf)


def teach_items(ctx: ScoreContext) -> tuple[str, list[Any]]:
    """(dataset, its first n items): math20 when n <= 20, math80 when n <= 80, else the GSM8K sample."""
    from rlmlab._paths import PROJECT_ROOT
    from rlmlab.teach import load_dataset

    name = teach_set(ctx.n)
    return name, load_dataset(PROJECT_ROOT / name, limit=ctx.n)


def teach_set(n: int) -> str:
    """The dataset the seed-002 rows take their first ``n`` items from."""
    return SMALL_SET if n <= 20 else MEDIUM_SET if n <= 80 else LARGE_SET


def _learner(ctx: ScoreContext, kind: str, turing: bool) -> Any:
    from rlmlab._paths import PROJECT_ROOT
    from rlmlab.scorecard._learner import CodeFirstLearner
    from rlmlab.teach import LMLearner

    def make() -> Any:
        from rlmlab.teach import load_run_config

        # the learner samples at seed 002's learner temperature (configs/run.yaml: learner_math 0.3), as `rlmlab
        # teach run` does; a greedy learner repeats its expression after every reprompt, so no reprompt could help
        temperature = load_run_config(PROJECT_ROOT / "configs" / "run.yaml").learner_temperature
        protocol = None
        if turing:
            from rlmlab.turing import TuringProtocol

            protocol = TuringProtocol.from_config(log=ctx.out / "teach" / "turing.sqlite")
        if kind == "code_first":
            return CodeFirstLearner(ctx.lm, temperature=temperature, seed=ctx.seed)
        return LMLearner(ctx.lm, temperature=temperature, seed=ctx.seed, decoding="free", turing=protocol)

    return ctx.cached(("learner", kind, turing), make)


def teach_arm(ctx: ScoreContext, arm: str, *, learner: str = "code_first", stop: bool = True,
              turing: bool = False) -> dict[str, Any]:
    """Run ``arm`` (single, try_again, rts) in reference mode once per scorecard; ``{"run_id", "traces"}`` with the
    traces by qid. ``stop`` False: no STOP rule but max turns."""
    from rlmlab.teach import StopRules, load_stop_rules, run_arm, write_traces
    from rlmlab._paths import PROJECT_ROOT

    def run() -> dict[str, Any]:
        dataset, items = teach_items(ctx)
        label = f"{learner}.{arm}" + ("" if stop else ".no_stop") + (".turing" if turing else "")
        ctx.log(f"  running teach {label} on {dataset} ({plural(len(items), 'item')})")
        rules = load_stop_rules(PROJECT_ROOT / "configs" / "stop_rules.yaml")
        if not stop:
            rules = StopRules(max_turns=rules.max_turns, **NO_STOP)
        traces, _ = run_arm(items, _learner(ctx, learner, turing), arm=arm, mode="reference", rules=rules)
        path = write_traces(Path(ctx.out) / "teach" / f"traces.{label}.json", traces)
        return {"run_id": str(path.relative_to(ctx.out)), "traces": {t.qid: t for t in traces}}

    label = f"{learner}.{arm}" + ("" if stop else ".no_stop") + (".turing" if turing else "")
    where = Path(teach_set(ctx.n)).stem
    return ctx.cached(("teach", arm, learner, stop, turing, ctx.n), run, label=arm_label("teach", label, where, None),
                      empty={"run_id": "", "traces": {}})


def _pair(ctx: ScoreContext, a: dict[str, Any], b: dict[str, Any], value: Any, kind: str = "binary") -> Paired:
    items = [q for q in a["traces"] if q in b["traces"]]
    return Paired([value(a["traces"][q]) for q in items], [value(b["traces"][q]) for q in items], items, kind,
                  runs=sorted({a["run_id"], b["run_id"]}))


def _accuracy(trace: Any) -> bool:
    return bool(trace.final_accuracy)


@claim("s002.rts-vs-single", seed="002", comparison="RTS (bias-aware reprompts) vs single pass, code-first learner",
       text="**Improvement**: +5% from bias-aware reprompting")
def _rts_single(ctx: ScoreContext) -> Paired:
    return _pair(ctx, teach_arm(ctx, "rts"), teach_arm(ctx, "single"), _accuracy)


@claim("s002.rts-vs-try-again", seed="002", comparison="RTS vs generic try-again reprompt, code-first learner",
       quoted=False, text="Bias-aware reprompt templates beat a generic reprompt on the same items.")
def _rts_try_again(ctx: ScoreContext) -> Paired:
    return _pair(ctx, teach_arm(ctx, "rts"), teach_arm(ctx, "try_again"), _accuracy)


@claim("s002.stop-turns", seed="002", comparison="RTS with STOP rules vs RTS to max turns: turns per item",
       direction="less", metric="turns",
       text="The teacher stops reprompting when ANY condition is met")
def _stop_turns(ctx: ScoreContext) -> Paired:
    return _pair(ctx, teach_arm(ctx, "rts"), teach_arm(ctx, "rts", stop=False), lambda t: float(len(t.turns)),
                 "continuous")


@claim("s002.stop-accuracy", seed="002", comparison="RTS with STOP rules vs RTS to max turns: accuracy",
       direction="no_worse", margin=0.05, quoted=False,
       text="Stopping early (STOP rules) keeps the accuracy of reprompting to the turn limit.")
def _stop_accuracy(ctx: ScoreContext) -> Paired:
    return _pair(ctx, teach_arm(ctx, "rts"), teach_arm(ctx, "rts", stop=False), _accuracy)


@claim("s002.calibration", seed="002", comparison="learner self-confidence vs first-answer accuracy (mean gap)",
       direction="equal", margin=0.1, metric="confidence - accuracy",
       text="**Learner self-confidence**: Reported by learner-bot (0-1)")
def _calibration(ctx: ScoreContext) -> Paired | NotMeasured:
    arm = teach_arm(ctx, "single")
    if not _learner(ctx, "code_first", False).logprobs_seen:
        return NotMeasured("the LM gives no token log-probabilities, so self-confidence is a constant 0.5")
    items = list(arm["traces"])
    conf = [float(arm["traces"][q].turns[0].self_conf) for q in items]
    right = [float(arm["traces"][q].turns[0].accuracy) for q in items]
    return Paired(conf, right, items, "continuous", runs=[arm["run_id"]], extra={"ece": expected_calibration(conf, right)})


def expected_calibration(conf: list[float], right: list[float], bins: int = 10) -> float | None:
    """ECE: the item-weighted mean |accuracy - confidence| over ``bins`` equal-width confidence bins."""
    if not conf:
        return None
    total = 0.0
    for k in range(bins):
        idx = [i for i, c in enumerate(conf) if (k / bins <= c < (k + 1) / bins) or (k == bins - 1 and c == 1.0)]
        if idx:
            total += len(idx) * abs(sum(right[i] for i in idx) / len(idx) - sum(conf[i] for i in idx) / len(idx))
    return round(total / len(conf), 4)


@claim("s003.teach", seed="003", comparison="Turing on vs off, free-decoding learner (single pass)",
       direction="no_worse", margin=0.05,
       text="the protocol catches these failure modes programmatically and injects concise corrections so the "
            "model can self-correct in the same conversation turn.")
def _turing_teach(ctx: ScoreContext) -> Paired:
    on = teach_arm(ctx, "single", learner="lm_free", turing=True)
    off = teach_arm(ctx, "single", learner="lm_free")
    paired = _pair(ctx, on, off, _accuracy)
    paired.extra["corrections"] = sum(t.corrections for t in on["traces"].values())
    return paired
