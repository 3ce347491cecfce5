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

__all__ = ["SELECTIONS", "VOTE_STOPS", "majority", "select_rollout", "settled", "settling_size", "batch_seeds"]

SELECTIONS = ("score", "vote")
VOTE_STOPS = ("all", "settled")  # run every sample, or stop once the rest cannot change the majority

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


def settled(answers: Sequence[Any], total: int) -> bool:
    """True when the first ``len(answers)`` of ``total`` rollouts already fix :func:`majority`'s pick, whatever
    the other rollouts answer: the vote can stop there and choose the same rollout as the full vote.

    The leader (``majority`` of the answers so far) keeps its count c and may only gain; any other answer, seen
    or not yet seen, may gain every remaining rollout r. The pick is fixed when no other answer can end above c,
    nor level with c while having appeared before the leader (ties go to the first to appear). With no answer
    yet, nothing is settled (unless no rollout remains).
    """
    if total < len(answers):
        raise ValueError(f"settled: {len(answers)} answers of a vote of {total}")
    remaining = total - len(answers)
    if remaining == 0:
        return True
    keys = [vote_key(a) for a in answers]
    counts = Counter(k for k in keys if k is not None)
    if not counts:
        return False
    lead = keys[majority(answers)]
    first = {k: keys.index(k) for k in counts}
    c = counts[lead]
    if remaining > c:  # an answer not seen yet could pass the leader (level with it, it loses: it came later)
        return False
    return all(n + remaining < c or (n + remaining == c and first[k] > first[lead])
               for k, n in counts.items() if k != lead)


def settling_size(total: int) -> int:
    """The fewest rollouts that can settle a vote of ``total`` (all agreeing): more than half."""
    return total // 2 + 1


def batch_seeds(samples: int, rollout: int, vote_stop: str = "all") -> range:
    """The seeds whose first steps rollout ``rollout`` (0-based; its seed is ``rollout + 1``) of a vote over
    ``samples`` decodes in one batch: all of them, or with ``vote_stop`` "settled" the fewest that can settle the
    vote (seeds 1..m, :func:`settling_size`) and then the rest (m+1..N), decoded only if it has not settled."""
    if vote_stop != "settled":
        return range(1, samples + 1)
    m = settling_size(samples)
    return range(1, m + 1) if rollout < m else range(m + 1, samples + 1)


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
