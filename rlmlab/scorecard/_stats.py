"""Paired comparisons of two arms over the same items: the difference, its 95% interval, the verdict.

Binary outcomes (pass/fail per item) use Newcombe's interval for the difference of paired proportions (Newcombe
1998, method 10: Wilson score limits of each arm combined with the phi correlation); continuous outcomes (tokens,
turns, ECE per item) use a seeded paired bootstrap of the mean difference. The verdict reads the interval against the
claim's direction; a "cannot tell" says how many items would decide it at the observed effect (for pass rates the n
at which Newcombe's interval of the same proportions decides; otherwise the normal approximation of the paired
difference's spread), stated so it is not mistaken for a power calculation.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Z95", "DIRECTIONS", "VERDICTS", "Comparison", "wilson", "newcombe_paired", "paired_binary",
           "paired_continuous", "paired_bootstrap", "verdict", "n_to_decide", "n_to_decide_paired"]

Z95 = 1.959963984540054  # the standard normal's 97.5% point
# greater: arm a beats arm b; less: arm a is below arm b; no_worse: a does not fall below b by more than the
# margin; equal: a and b agree within the margin (the oracle against the reference judge)
DIRECTIONS = ("greater", "less", "no_worse", "equal")
VERDICTS = ("holds", "contradicted", "cannot tell")


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion; (0, 1) for n = 0."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_paired(both: int, a_only: int, b_only: int, neither: int, z: float = Z95) -> tuple[float, float, float]:
    """(difference, low, high) of p_a - p_b for paired binary outcomes counted as a 2x2 table.

    ``both``: items both arms pass; ``a_only``: a passes, b fails; ``b_only``; ``neither``. Newcombe (1998) method 10.
    ValueError for a negative count or an empty table.
    """
    counts = (both, a_only, b_only, neither)
    if any(c < 0 for c in counts):
        raise ValueError(f"newcombe_paired: counts must be >= 0, got {counts}")
    n = sum(counts)
    if n == 0:
        raise ValueError("newcombe_paired: no items")
    pa, pb = (both + a_only) / n, (both + b_only) / n
    la, ua = wilson(both + a_only, n, z)
    lb, ub = wilson(both + b_only, n, z)
    margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
    phi = 0.0
    if margins > 0:
        cross = both * neither - a_only * b_only
        # Newcombe's continuity-corrected phi: shrink a positive association by n/2, keep a negative one
        corrected = max(cross - n / 2, 0.0) if cross > 0 else cross
        phi = corrected / math.sqrt(margins)
    d = pa - pb
    low = d - math.sqrt(max(0.0, (pa - la) ** 2 - 2 * phi * (pa - la) * (ub - pb) + (ub - pb) ** 2))
    high = d + math.sqrt(max(0.0, (ua - pa) ** 2 - 2 * phi * (ua - pa) * (pb - lb) + (pb - lb) ** 2))
    return d, max(-1.0, low), min(1.0, high)


def paired_bootstrap(diffs: Sequence[float], *, reps: int = 2000, seed: int = 0,
                     level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the mean of ``diffs`` (one paired difference per item) from ``reps`` resamples of
    the items, seeded so a rerun gives the same interval. ValueError for no items."""
    if not diffs:
        raise ValueError("paired_bootstrap: no items")
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(reps))
    tail = (1 - level) / 2
    return means[int(math.floor(tail * (reps - 1)))], means[int(math.ceil((1 - tail) * (reps - 1)))]


def verdict(low: float, high: float, direction: str = "greater", margin: float = 0.0) -> str:
    """``holds``, ``contradicted`` or ``cannot tell`` for an interval of (a - b) and a claim's direction.

    greater: holds if low > 0, contradicted if high < 0. less: the mirror. no_worse: contradicted if high < 0 (a
    decided drop), holds if low > -margin. equal: contradicted if the interval excludes 0 (the arms differ), holds
    if it lies inside (-margin, margin).
    """
    if direction == "greater":
        return "holds" if low > 0 else "contradicted" if high < 0 else "cannot tell"
    if direction == "less":
        return "holds" if high < 0 else "contradicted" if low > 0 else "cannot tell"
    if direction == "no_worse":
        return "contradicted" if high < 0 else "holds" if low > -margin else "cannot tell"
    if direction == "equal":
        if low > 0 or high < 0:
            return "contradicted"
        return "holds" if -margin < low and high < margin else "cannot tell"
    raise ValueError(f"direction {direction!r}; use one of {', '.join(DIRECTIONS)}")


def n_to_decide(diffs: Sequence[float], direction: str = "greater", margin: float = 0.0,
                z: float = Z95) -> int | None:
    """Items that would decide a ``cannot tell`` at the observed effect: the n at which the normal-approximation
    interval of the mean paired difference, with the observed spread, excludes the claim's bound.

    None when no n would (no observed effect, no spread, or the effect sits on the bound).
    """
    n = len(diffs)
    if n < 2:
        return None
    d = sum(diffs) / n
    sd = math.sqrt(sum((x - d) ** 2 for x in diffs) / (n - 1))
    if direction in ("greater", "less"):
        gap = abs(d)
    elif direction == "no_worse":
        gap = d + margin if d > -margin else abs(d)  # a drop past the margin is decided against the claim
    elif direction == "equal":
        gap = margin - abs(d) if abs(d) < margin else abs(d)
    else:
        raise ValueError(f"direction {direction!r}; use one of {', '.join(DIRECTIONS)}")
    if gap <= 0 or sd == 0:
        return None
    return max(n, math.ceil((z * sd / gap) ** 2))


def n_to_decide_paired(both: int, a_only: int, b_only: int, neither: int, direction: str = "greater",
                       margin: float = 0.0, limit: int = 10_000_000) -> int | None:
    """Items that would decide a ``cannot tell`` of paired pass/fail outcomes at the observed effect: the least
    n at which Newcombe's interval of the 2x2 table scaled to n items (the same four proportions) gives a verdict,
    so the n given is the n the row's own interval decides at. None when no n up to ``limit`` would (no effect,
    or an effect sitting on the claim's bound)."""
    counts = (both, a_only, b_only, neither)
    n0 = sum(counts)
    if n0 == 0:
        return None

    def decided(n: int) -> bool:
        _, low, high = newcombe_paired(*(c * n / n0 for c in counts))
        return verdict(low, high, direction, margin) != "cannot tell"

    if decided(n0):
        return n0
    high = n0
    while not decided(high):  # the interval narrows as n grows at fixed proportions: double, then bisect
        if high >= limit:
            return None
        high = min(limit, high * 2)
    low = high // 2 if high > n0 else n0
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if decided(mid) else (mid, high)
    return high


@dataclass(frozen=True)
class Comparison:
    """A paired comparison of arm a against arm b over ``n`` items: the mean difference a - b (a pass-rate
    difference for binary outcomes) with its 95% interval, and the verdict for the claim's direction."""

    n: int
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    verdict: str
    method: str
    direction: str = "greater"
    margin: float = 0.0
    n_to_decide: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Comparison:
        return cls(**data)


def _check_pairs(a: Sequence[Any], b: Sequence[Any]) -> None:
    if len(a) != len(b):
        raise ValueError(f"paired comparison: arm a has {len(a)} items, arm b {len(b)}; they must be the same items")
    if not a:
        raise ValueError("paired comparison: no items")


def paired_binary(a: Sequence[bool | int], b: Sequence[bool | int], *, direction: str = "greater",
                  margin: float = 0.0, method: str = "newcombe", seed: int = 0) -> Comparison:
    """Compare pass/fail outcomes of arms a and b on the same items (item i of a pairs with item i of b).

    ``method``: "newcombe" (Newcombe 1998 method 10) or "bootstrap" (seeded paired bootstrap). ValueError for arms of
    different lengths, no items or an unknown method.
    """
    _check_pairs(a, b)
    pairs = [(bool(x), bool(y)) for x, y in zip(a, b)]
    diffs = [float(x) - float(y) for x, y in pairs]
    n = len(pairs)
    table = (sum(x and y for x, y in pairs), sum(x and not y for x, y in pairs), sum(y and not x for x, y in pairs),
             sum(not x and not y for x, y in pairs))
    if method == "newcombe":
        d, low, high = newcombe_paired(*table)
    elif method == "bootstrap":
        d = sum(diffs) / n
        low, high = paired_bootstrap(diffs, seed=seed)
    else:
        raise ValueError(f"method {method!r}; use newcombe or bootstrap")
    said = verdict(low, high, direction, margin)
    need = None
    if said == "cannot tell":
        need = (n_to_decide_paired(*table, direction=direction, margin=margin) if method == "newcombe"
                else n_to_decide(diffs, direction, margin))
    return Comparison(n, sum(x for x, _ in pairs) / n, sum(y for _, y in pairs) / n, d, low, high, said, method,
                      direction, margin, need)


def paired_continuous(a: Sequence[float], b: Sequence[float], *, direction: str = "greater", margin: float = 0.0,
                      seed: int = 0, reps: int = 2000) -> Comparison:
    """Compare a continuous outcome (turns, tokens, an error) of arms a and b on the same items by a seeded paired
    bootstrap of the mean difference a - b. ValueError as :func:`paired_binary`."""
    _check_pairs(a, b)
    diffs = [float(x) - float(y) for x, y in zip(a, b)]
    n = len(diffs)
    low, high = paired_bootstrap(diffs, reps=reps, seed=seed)
    said = verdict(low, high, direction, margin)
    return Comparison(n, sum(map(float, a)) / n, sum(map(float, b)) / n, sum(diffs) / n, low, high, said,
                      "bootstrap", direction, margin,
                      n_to_decide(diffs, direction, margin) if said == "cannot tell" else None)
