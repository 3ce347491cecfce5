"""The six verdicts shared by the code oracles, and the one function that picks a verdict.

Let C be the claimed items and A the actual items (each a hashable key, e.g. a
line number or a field name, after whitespace normalisation on both sides):

- ``ExactMatch``: C == A and the claims are in source order (also: both empty).
- ``UnorderedMatch``: C == A, in another order.
- ``SubsetMatch``: C is a non-empty strict subset of A and the query asks for a
  sample ("some", "examples", "first N", "a few").
- ``HasFalseNegatives``: C is a non-empty strict subset of A and the query asks for all.
- ``HasFalsePositives``: C has items not in A, and shares at least one item with A.
- ``Mismatch``: C and A share no item, and at least one of them is non-empty.

Every pair (C, A) falls in exactly one case.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Hashable, Sequence

__all__ = ["Verification", "GOOD_VERDICTS", "CannotVerify", "set_verdict", "asks_for_sample", "normalise_ws"]


class Verification(str, enum.Enum):
    ExactMatch = "ExactMatch"
    UnorderedMatch = "UnorderedMatch"
    SubsetMatch = "SubsetMatch"
    HasFalsePositives = "HasFalsePositives"
    HasFalseNegatives = "HasFalseNegatives"
    Mismatch = "Mismatch"


# Verdicts that make a trace golden: the answer agrees with the source (a sample only when one was asked for).
GOOD_VERDICTS = frozenset({Verification.ExactMatch, Verification.UnorderedMatch, Verification.SubsetMatch})

_SAMPLE = re.compile(r"\b(some|examples?|first\s+\d+|a few|sample)\b", re.I)
_QUOTED = re.compile(r"[\"'`][^\"'`]*[\"'`]")


class CannotVerify(Exception):
    """The oracle cannot check this answer (the reason says why); the trace is unverified, not failed."""


def asks_for_sample(query: str, names: tuple[str, ...] = ()) -> bool:
    """Whether the query asks for a sample ("some", "examples", "first N", "a few"), not for all.

    Quoted text and the item ``names`` the query is about are ignored: "parameters of some" asks for all.
    """
    text = _QUOTED.sub(" ", query)
    for name in names:
        text = re.sub(rf"\b{re.escape(name)}\b", " ", text)
    return bool(_SAMPLE.search(text))


def normalise_ws(text: str) -> str:
    return " ".join(text.split())


def set_verdict(claimed: Sequence[Hashable], wrong: int, actual: Sequence[Hashable], sample: bool) -> Verification:
    """Verdict for ``claimed`` keys that exist in ``actual``, ``wrong`` claims that do not, and the ``actual`` keys."""
    hits = set(claimed)
    missing = any(a not in hits for a in actual)
    if wrong:
        return Verification.HasFalsePositives if hits else Verification.Mismatch
    if not missing:
        order = {a: i for i, a in enumerate(actual)}
        ranks = [order[c] for c in claimed]
        return Verification.ExactMatch if ranks == sorted(ranks) else Verification.UnorderedMatch
    if not hits:
        return Verification.Mismatch
    return Verification.SubsetMatch if sample else Verification.HasFalseNegatives
