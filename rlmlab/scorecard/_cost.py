"""The scorecard's cost model: which arms a set of rows runs (each shared arm once), how many items each, and the
projected seconds from measured seconds per item, printed before a run starts and checked against as it goes.

Seconds per item come, first, from a previous scorecard in the same folder (its ``arms``: what this machine took)
and otherwise from :data:`MEASURED`, the embedded model's figures on this project's 2-core machine. An arm neither
knows is priced from the same arm at another step cap, scaled by the steps (the embedded model fails most tasks,
and a failing task runs to the cap), else from the same arm on another suite (an E12 item is three rollouts on
any suite), else at the median of its kind; the plan says which.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from rlmlab.text import plural

__all__ = ["MEASURED", "MEASURED_NOTE", "ESTIMATED", "ArmCost", "Plan", "plan_scorecard", "arm_costs"]

# Seconds per item of each arm on the embedded model (SmolLM2-135M Q4_1, llama-cpp-python, 2 threads on 2 cores),
# workers=1, from `rlmlab scorecard --quick` (n=4, at most 3 agent steps, idle: nothing else running, 2026-12-02
# 20:33 UTC, benchmarks/scorecard_procs.py's one-process run), in 15 min 54 s wall; an arm two rows share ran once
# (the code-first teach arms, under a second there, keep their 2026-11-25 figures). That session's machine ran every
# arm 1.2-1.9x slower than the one of 16:27 the same day (11 min 11 s): the "2-core machine" is not always the same
# hardware, so a previous scorecard.json in --out, this machine's own figures, prices first. Runs at
# other step caps are priced by scaling (see _price). Free decoding's cost is mostly its tasks that run to the
# 512-token cap on every step, so its figure at n=60 is higher than at n=4 (the n=60 scorecard's own arms, when
# its scorecard.json is in --out, price those).
MEASURED_NOTE = "rlmlab scorecard --quick, n=4, idle, workers=1, SmolLM2-135M Q4_1 on 2 threads, 2026-12-02 20:33 UTC"
MEASURED: dict[str, float] = {
    "experiment:E1/main@code/max3": 9.4, "experiment:E1/main@ontology/max3": 2.1,
    "experiment:E2/main@ontology/max3": 2.9, "experiment:E3/main@ontology/max3": 3.0,
    "experiment:E4/main@ontology/max3": 3.0, "experiment:E5/main@code/max3": 10.3,
    "experiment:E6/main@code/max3": 13.4, "experiment:E7/handle@code/max3": 6.0, "experiment:E7/naive@code/max3": 0.2,
    "experiment:E8/auto_inject@code/max3": 9.2, "experiment:E8/tool_mediated@code/max3": 6.5,
    "experiment:E9/main@code/max3": 7.3, "experiment:E10/main@code/max3": 7.3, "experiment:E11/main@code/max3": 7.9,
    "experiment:E12/best_only@code/max3": 20.7, "experiment:E12/contrastive@code/max3": 22.1,
    "experiment:E13/free@arith/max3": 51.3, "experiment:E13/grammar@arith/max3": 2.3,
    "experiment:E13/grammar_templates@arith/max3": 2.5, "experiment:E13/vote5@arith/max3": 4.2,
    "agent:free.turing@arith/max3": 18.4, "agent:free.plain@arith/max3": 13.2, "agent:grammar.turing@arith/max3": 3.0,
    "agent:grammar.plain@arith/max3": 2.2, "teach:code_first.single@math20": 0.4, "teach:code_first.rts@math20": 0.5,
    "teach:code_first.try_again@math20": 0.5, "teach:code_first.rts.no_stop@math20": 0.5,
    "teach:lm_free.single.turing@math20": 5.5, "teach:lm_free.single@math20": 2.5,
}
# Arms not yet timed on an idle machine, priced from the nearest arm that was, and why (a plan names the source):
# a run writes every arm's own figure into its scorecard.json, which the next plan in that folder uses instead.
ESTIMATED: dict[str, tuple[float, str]] = {
    # GSM8K items (n > 20) were timed only on the shared machine (load 5-8): single 8.0 s, RTS 26.3 s per item;
    # divided by 5 (the E1 code arm ran 2.2x its idle figure at load 2.5)
    "teach:code_first.single@gsm8k_train_500": (1.6, "shared-machine time / 5"),
    "teach:code_first.rts@gsm8k_train_500": (5.3, "shared-machine time / 5"),
    "teach:code_first.try_again@gsm8k_train_500": (5.3, "RTS's figure: as many turns"),
    "teach:code_first.rts.no_stop@gsm8k_train_500": (5.3, "RTS's figure, at least: it runs to max turns"),
    "teach:lm_free.single@gsm8k_train_500": (1.6, "the code-first single pass's figure"),
    "teach:lm_free.single.turing@gsm8k_train_500": (1.6, "the code-first single pass's figure"),
    # math80 (n 21-80) is math20 plus generated word problems of its kind: priced at math20's idle figures
    "teach:code_first.single@math80": (0.4, "math20's figure: items of its kind"),
    "teach:code_first.rts@math80": (0.5, "math20's figure: items of its kind"),
    "teach:code_first.try_again@math80": (0.5, "math20's figure: items of its kind"),
    "teach:code_first.rts.no_stop@math80": (0.5, "math20's figure: items of its kind"),
    "teach:lm_free.single@math80": (1.8, "math20's figure: items of its kind"),
    "teach:lm_free.single.turing@math80": (4.1, "math20's figure: items of its kind"),
}


@dataclass(frozen=True)
class ArmCost:
    """One arm of a plan: ``items`` to run at ``s_per_item`` seconds, and where that figure came from
    (``previous`` run in this folder, ``measured`` or ``estimate: why`` from the tables, ``scaled from /maxK``
    steps, or ``guess``: the median of its kind)."""

    label: str
    items: int
    s_per_item: float
    source: str

    @property
    def seconds(self) -> float:
        return self.items * self.s_per_item


@dataclass
class Plan:
    """The arms a scorecard runs, in order, with the projected total (seconds) and the rows it serves."""

    arms: list[ArmCost]
    rows: list[str]
    n: int
    shared: dict[str, list[str]] = field(default_factory=dict)  # arm label -> the rows that pair it

    @property
    def seconds(self) -> float:
        return sum(a.seconds for a in self.arms)

    @property
    def items(self) -> int:
        return sum(a.items for a in self.arms)

    def summary(self) -> str:
        reused = sum(len(r) - 1 for r in self.shared.values() if len(r) > 1)
        guessed = [a.label for a in self.arms if a.source == "guess"]
        line = (f"plan: {plural(len(self.rows), 'row')}, {plural(len(self.arms), 'arm')} "
                f"({plural(reused, 'arm run')} saved by sharing), "
                f"{plural(self.items, 'item')}, projected {_minutes(self.seconds)}")
        return line + (f"; {plural(len(guessed), 'arm')} with no figure yet, priced at their kind's median" if guessed
                       else "")

    def lines(self) -> list[str]:
        return [f"  {a.label}: {plural(a.items, 'item')} x {a.s_per_item:.1f} s = {_minutes(a.seconds)} ({a.source}); "
                f"rows {', '.join(self.shared.get(a.label, []))}" for a in self.arms]


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def arm_costs(previous: str | Path | None = None) -> dict[str, tuple[float, str]]:
    """Seconds per item by arm label: :data:`MEASURED`, overridden by the ``arms`` of a previous scorecard.json
    (a file or its folder; ignored when missing or unreadable, since a plan must not stop a run)."""
    costs = {k: (v, f"estimate: {why}") for k, (v, why) in ESTIMATED.items()}
    costs.update({k: (v, "measured") for k, v in MEASURED.items()})
    if previous is not None:
        path = Path(previous)
        path = path / "scorecard.json" if path.is_dir() else path
        try:
            arms = json.loads(path.read_text(encoding="utf-8")).get("arms") or {}
        except (OSError, ValueError):
            arms = {}
        for label, got in arms.items():
            if got.get("seconds") is not None and got.get("items"):
                costs[label] = (got["seconds"] / got["items"], "previous")
    return costs


def _cap(label: str) -> str:
    return label.rsplit("/", 1)[1] if "/max" in label else ""


def _steps(label: str) -> int | None:
    tail = label.rsplit("/max", 1)[1] if "/max" in label else ""
    return int(tail) if tail.isdigit() else None


def _price(label: str, costs: dict[str, tuple[float, str]]) -> tuple[float, str]:
    if label in costs:
        return costs[label]
    family = label.replace("_test", "")  # the generated held-out set costs what its built-in suite does
    if family in costs:
        return costs[family][0], costs[family][1] + " (built-in suite)"
    steps = _steps(family)
    if steps:  # the same arm at another step cap: the embedded model fails most tasks, which run to the cap
        other = [(k, v) for k, (v, _) in costs.items() if _steps(k) and k.rsplit("/max", 1)[0] ==
                 family.rsplit("/max", 1)[0]]
        if other:
            k, v = other[0]
            return round(v * steps / _steps(k), 2), f"scaled from /max{_steps(k)}"
    arm, cap = family.split("@", 1)[0], _cap(family)
    if "@" in family:  # the same arm on another suite: an E12 item is its rollouts wherever it runs
        other = [(k, v) for k, (v, _) in costs.items() if "@" in k and k.split("@", 1)[0] == arm and _cap(k) == cap]
        if other:
            k, v = other[0]
            return v, f"the same arm on {k.split('@', 1)[1].rsplit('/', 1)[0]}"
    kind = label.split(":", 1)[0]
    same = [v for k, (v, _) in costs.items() if k.split(":", 1)[0] == kind and _cap(k) == _cap(label)]
    every = same or [v for v, _ in costs.values()] or [10.0]
    return statistics.median(every), "guess"


def plan_scorecard(entries: Sequence[Any], ctx: Any, previous: str | Path | None = None) -> Plan:
    """The arms ``entries`` (claims) need on ``ctx`` (a :class:`~rlmlab.scorecard.ScoreContext`), found by running
    each row's ``measure`` in planning mode (arms recorded, none run), priced by :func:`arm_costs`."""
    probe = replace(ctx, planning=True, arms={}, cache={}, log=lambda line: None, on_arm=None)
    shared: dict[str, list[str]] = {}
    items: dict[str, int] = {}
    for entry in entries:
        probe.cache, probe.arms = {}, {}  # every row's arms, even those an earlier row already asked for
        try:
            entry.measure(probe)
        except Exception:  # noqa: BLE001 - a row that cannot plan still runs (and says why) in the real pass
            pass
        for label, got in probe.arms.items():
            shared.setdefault(label, []).append(entry.name)
            items[label] = got["items"]
    costs = arm_costs(previous)
    arms = [ArmCost(label, items[label], *_price(label, costs)) for label in shared]
    return Plan(arms, [e.name for e in entries], probe.n, shared)
