"""Claim rows: one registered entry per seed claim, each a function that runs two arms on the same items.

A claim's ``measure(ctx)`` returns :class:`Paired` outcomes (item i of arm a pairs with item i of arm b) or
:class:`NotMeasured` with the reason, never a made-up number. Entries register with :func:`claim` in
:data:`CLAIMS` (the one registry core, :mod:`rlmlab.registry`), so ``CLAIMS.make(name)`` builds a
:class:`Claim` stamped with its :class:`~rlmlab.registry.PluginRef`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from rlmlab.registry import Registry
from rlmlab.scorecard._stats import DIRECTIONS

__all__ = ["CLAIMS", "SEEDS", "Claim", "Paired", "NotMeasured", "claim", "PARAPHRASE_SPLIT"]

SEEDS = ("001", "002", "003", "004")
# A claim registered with ``paraphrase=True`` (the experiment rows on the code and ontology suites) gets a twin,
# ``<name>.paraphrase``, that runs the same two arms on the suite's questions written blind in a researcher's own
# words (``<suite>-paraphrase-test``, data/paraphrase/), so the table shows both pass rates side by side.
PARAPHRASE_SPLIT = "test"


@dataclass
class Paired:
    """Outcomes of two arms on the same items, in item order. ``kind`` "binary" (pass/fail) or "continuous".
    ``runs`` names the run ids (or folders) the outcomes were read from, so a row can be traced to its runs."""

    a: list[Any]
    b: list[Any]
    items: list[str]
    kind: str = "binary"
    runs: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # counts beside the comparison (hook firings, ...)

    def __post_init__(self) -> None:
        if not (len(self.a) == len(self.b) == len(self.items)):
            raise ValueError(f"Paired: {len(self.a)} a, {len(self.b)} b and {len(self.items)} item ids must match")


@dataclass(frozen=True)
class NotMeasured:
    """A row that cannot be measured yet, and why (an arm rlmlab does not have, an input that is missing)."""

    reason: str


@dataclass(frozen=True)
class Claim:
    """One seed claim: ``seed`` (001-004), the claim in one sentence (``quoted`` when copied from the seed),
    the comparison ``arm a vs arm b``, the direction a - b must take for the claim to hold (see
    :func:`~rlmlab.scorecard.verdict`) with its margin, and ``measure(ctx) -> Paired | NotMeasured``."""

    name: str
    seed: str
    claim: str
    comparison: str
    measure: Callable[[Any], Paired | NotMeasured]
    direction: str = "greater"
    margin: float = 0.0
    quoted: bool = True
    metric: str = "pass rate"


CLAIMS: Registry = Registry("scorecard claim")


def claim(name: str, *, seed: str, text: str, comparison: str, direction: str = "greater", margin: float = 0.0,
          quoted: bool = True, metric: str = "pass rate",
          paraphrase: bool = False) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Register ``measure(ctx)`` as the claim ``name``; with ``paraphrase`` also ``<name>.paraphrase``, the same
    measure on the paraphrase test split of each arm's suite (``ctx.paraphrase`` set). Checked at registration:
    ValueError for an unknown seed or direction, or a margin outside [0, 1)."""
    if seed not in SEEDS:
        raise ValueError(f"claim {name!r}: seed {seed!r}; use one of {', '.join(SEEDS)}")
    if direction not in DIRECTIONS:
        raise ValueError(f"claim {name!r}: direction {direction!r}; use one of {', '.join(DIRECTIONS)}")
    if not 0 <= margin < 1:
        raise ValueError(f"claim {name!r}: margin {margin!r}; use a number in [0, 1)")

    def decorate(measure: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def factory() -> Claim:
            return Claim(name, seed, text, comparison, measure, direction, margin, quoted, metric)

        factory.__doc__ = f"{seed}: {text}"
        CLAIMS.register(name, factory)
        if paraphrase:
            def twin() -> Claim:
                return Claim(f"{name}.paraphrase", seed, text, f"{comparison}, paraphrase {PARAPHRASE_SPLIT} split",
                             _on_paraphrase(measure), direction, margin, quoted, metric)

            twin.__doc__ = f"{seed}: {text} (on questions in a researcher's own words)"
            CLAIMS.register(f"{name}.paraphrase", twin)
        return measure

    return decorate


def _on_paraphrase(measure: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def on_paraphrase(ctx: Any) -> Any:
        if ctx.suite:
            return NotMeasured(f"--suite {ctx.suite} replaces every arm's suite, so there is no paraphrase split "
                               "to run on")
        return measure(replace(ctx, paraphrase=PARAPHRASE_SPLIT))  # shares the context's arms and cache

    return on_paraphrase
