"""The teacher's judgement: which cognitive bias an answer shows, and how confident everyone is.

Bias heuristics and teacher confidences follow seed 002's table. With a
reference (``reference`` mode) a matching answer is ``None`` (0.95) and other
wrong answers default to ``Confirmation``. Without one (``reference_free``
mode) the teacher sees only cues: the same heuristics, ``Confirmation`` when
the learner repeats an earlier answer, and otherwise ``None`` with a neutral
0.5 (no evidence either way).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from rlmlab.teach._data import answers_match, normalise_answer

__all__ = ["BIASES", "BiasResult", "detect_bias", "combine_confidence", "bucket", "TEACHER_CONFIDENCE"]

BIASES = ("Anchoring", "Availability/Bandwagon", "Hindsight", "Overgeneralization", "Confirmation", "None")

TEACHER_CONFIDENCE = {"Anchoring": 0.7, "Availability/Bandwagon": 0.7, "Hindsight": 0.65,
                      "Overgeneralization": 0.65, "Confirmation": 0.6, "None": 0.95}
NO_CUE_CONFIDENCE = 0.5  # reference_free: no cue found is not evidence of a right answer

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_SOCIAL = re.compile(r"\b(everyone|everybody|commonly|popular|most people|widely (?:known|believed)|"
                     r"as (?:we all|everyone) know)\b", re.I)
_POSTHOC = re.compile(r"\b(obvious(?:ly)? because|clearly since|it was obvious|of course it|"
                      r"naturally(?:,)? because|as expected since|in hindsight)\b", re.I)
_ABSOLUTE = re.compile(r"\b(always|never|all cases|in every case|without exception|every time|impossible)\b", re.I)


@dataclass(frozen=True)
class BiasResult:
    bias: str
    teacher_conf: float
    cue: str = ""  # what triggered it

    def to_dict(self) -> dict:
        return asdict(self)


def _numbers(text: str) -> list[str]:
    """Every number of a text, in the canonical form ``normalise_answer`` gives answers."""
    return [n for n in (normalise_answer(x) for x in _NUMBER.findall(text.replace(",", ""))) if n is not None]


def detect_bias(question: str, answer: str, reference: str | None = None,
                previous_answers: Sequence[str] = ()) -> BiasResult:
    """The bias an answer shows, with the teacher's confidence (see the module docstring for the two modes)."""
    final = normalise_answer(answer)
    if reference is not None:
        if final is not None and answers_match(answer, reference):
            return BiasResult("None", TEACHER_CONFIDENCE["None"], "answer matches the reference")
    if final is not None and final in _numbers(question):
        return BiasResult("Anchoring", TEACHER_CONFIDENCE["Anchoring"], f"answer {final} is a number from the question")
    m = _SOCIAL.search(answer)
    if m:
        return BiasResult("Availability/Bandwagon", TEACHER_CONFIDENCE["Availability/Bandwagon"], m.group(0))
    m = _POSTHOC.search(answer)
    if m:
        return BiasResult("Hindsight", TEACHER_CONFIDENCE["Hindsight"], m.group(0))
    m = _ABSOLUTE.search(answer)
    if m:  # reference mode reaches here only for wrong answers
        return BiasResult("Overgeneralization", TEACHER_CONFIDENCE["Overgeneralization"], m.group(0))
    if reference is not None:
        return BiasResult("Confirmation", TEACHER_CONFIDENCE["Confirmation"], "incorrect answer")
    if final is not None and any(normalise_answer(p) == final for p in previous_answers):
        return BiasResult("Confirmation", TEACHER_CONFIDENCE["Confirmation"], f"repeats the earlier answer {final}")
    return BiasResult("None", NO_CUE_CONFIDENCE, "no bias cue")


def combine_confidence(*signals: float | None) -> float:
    """The mean of the available signals (learner self-confidence, teacher confidence, vote share); 0.5 if none."""
    present = [float(s) for s in signals if s is not None]
    for s in present:
        if not 0.0 <= s <= 1.0:
            raise ValueError(f"confidence signal {s} is outside [0, 1]")
    return sum(present) / len(present) if present else 0.5


def bucket(confidence: float) -> str:
    """``low`` below 0.4, ``mid`` from 0.4 to 0.7 inclusive, ``high`` above 0.7."""
    if confidence < 0.4:
        return "low"
    return "mid" if confidence <= 0.7 else "high"
