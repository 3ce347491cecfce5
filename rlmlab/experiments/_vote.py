"""Picking one rollout of a task: by the judge's score, or by a majority vote over the answers.

A vote needs no reference and no oracle: rollouts that give the same answer (after
:func:`normalise_answer`) back each other, so a sampled small model can beat its own single rollout
without anything knowing the expected answer. ``score`` is the MaTTS rule (E12): the judge's highest score.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rlmlab.errors import ConfigError

__all__ = ["SELECTIONS", "normalise_answer", "majority", "select_rollout"]

SELECTIONS = ("score", "vote")

# A whole answer that is one number: sign, currency, thousands commas (grouped by three), decimals, a fraction,
# a trailing "%"; about the shape the judges treat as numeric (rlmlab.memory._judge._agrees).
_NUMERIC = re.compile(r"[-+−]?[$€£]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:/\d+)?\s*%?")


def normalise_answer(text: Any) -> str | None:
    """The answer as a vote key, or None when there is none (None, or blank after normalising).

    Text is stripped, whitespace-collapsed and case-folded, with surrounding quotes and a trailing period
    removed. An answer that is a single number is written canonically, so "514", "514.0", " 514 ", "$514"
    and "514." agree ("3/4" and "0.75" too); a number inside a sentence ("about 514 apples") stays text.
    """
    from rlmlab.memory._judge import final_number, normalise_text
    from rlmlab.teach._arith import format_number

    if text is None:
        return None
    out = normalise_text(text)
    if not out:
        return None
    if _NUMERIC.fullmatch(out):
        value = final_number(out)
        if value is not None:
            return format_number(value)
    return out


def majority(answers: Sequence[Any]) -> int:
    """Index of the rollout whose normalised answer is the most frequent.

    Ties go to the first rollout that gave one of the tied answers; rollouts with no answer do not vote;
    when none answered, rollout 0. Raises ValueError for an empty sequence (there is nothing to pick).
    """
    if not answers:
        raise ValueError("majority: no rollouts to choose from")
    keys = [normalise_answer(a) for a in answers]
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
