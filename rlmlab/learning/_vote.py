"""Picking one rollout of a task: by the judge's score, or by a majority vote over the answers.

A vote needs no reference and no oracle: rollouts that give the same answer (after
:func:`rlmlab.numbers.vote_key`) back each other, so a sampled small model can beat its own single rollout
without anything knowing the expected answer. ``score`` is the MaTTS rule (E12): the judge's highest score.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from rlmlab.errors import ConfigError
from rlmlab.numbers import vote_key

__all__ = ["SELECTIONS", "majority", "select_rollout"]

SELECTIONS = ("score", "vote")

def majority(answers: Sequence[Any]) -> int:
    """Index of the rollout whose normalised answer is the most frequent.

    Ties go to the first rollout that gave one of the tied answers; rollouts with no answer do not vote;
    when none answered, rollout 0. Raises ValueError for an empty sequence (there is nothing to pick).
    """
    if not answers:
        raise ValueError("majority: no rollouts to choose from")
    keys = [vote_key(a) for a in answers]
    counts = Counter(k for k in keys if k is not None)
    if not counts:
        return 0
    top = max(counts.values())
    return next(i for i, k in enumerate(keys) if k is not None and counts[k] == top)


def select_rollout(selection: str, answers: Sequence[Any], scores: Sequence[float]) -> int:
    """The chosen rollout: ``score`` (highest judge score, then the first) or ``vote`` (:func:`majority`)."""
    if selection not in SELECTIONS:
        raise ConfigError(f"selection: {selection!r}; use one of {', '.join(SELECTIONS)}")
    if len(answers) != len(scores) or not answers:
        raise ValueError(f"select_rollout: {len(answers)} answers and {len(scores)} scores; need as many of each, "
                         "at least one")
    if selection == "vote":
        return majority(answers)
    return max(range(len(scores)), key=lambda i: (scores[i], -i))
