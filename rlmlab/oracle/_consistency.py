"""Self-consistency for semantic queries: sample the LM three times; if every sample agrees with the answer,
the verdict is ``consensus`` (recorded as such, never as golden: agreement is not proof)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from rlmlab.records import Record

__all__ = ["SelfConsistencyOracle", "ConsensusResult", "answer_similarity"]

_STOP = frozenset("a an the is are was were be of to in on for and or it its this that with as by at from "
                  "does do not no yes which what".split())


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9_]+", text.lower()) if w not in _STOP}


def answer_similarity(a: str, b: str) -> float:
    """Jaccard similarity of the content words of two answers (1.0 for two empty answers)."""
    wa, wb = _content_words(a), _content_words(b)
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


@dataclass(frozen=True)
class ConsensusResult(Record):
    consensus: bool
    agreement: float  # the lowest similarity of a sample to the answer
    samples: list[str] = field(default_factory=list)
    similarities: list[float] = field(default_factory=list)


class SelfConsistencyOracle:
    """Ask ``lm`` the query ``samples`` times (temperature ``temperature``) with the source excerpt in the prompt.

    Consensus when every sample's :func:`answer_similarity` to the agent's
    answer is at least ``threshold``. Sources longer than ``max_source_chars``
    are clipped (the excerpt says so), to fit a small model's context window.
    """

    name = "SelfConsistency"

    def __init__(self, lm: Any, samples: int = 3, threshold: float = 0.5, temperature: float = 0.7,
                 max_source_chars: int = 6000):
        if samples < 2:
            raise ValueError(f"samples: {samples}; self-consistency needs at least 2")
        self.lm, self.samples, self.threshold = lm, samples, threshold
        self.temperature, self.max_source_chars = temperature, max_source_chars

    def check(self, answer: str, query: str, source: str) -> ConsensusResult:
        import dspy

        from rlmlab.lm import LenientChatAdapter

        excerpt = source[: self.max_source_chars]
        if len(source) > self.max_source_chars:
            excerpt += f"\n... [clipped: {len(source) - self.max_source_chars:,} more characters]"
        predict = dspy.Predict("source, query -> answer")
        samples = []
        with dspy.context(lm=self.lm, adapter=LenientChatAdapter()):
            for i in range(self.samples):
                pred = predict(source=excerpt, query=query,
                               config={"rollout_id": i, "temperature": self.temperature})
                samples.append(str(pred.answer))
        sims = [round(answer_similarity(s, answer), 3) for s in samples]
        return ConsensusResult(all(s >= self.threshold for s in sims), min(sims), samples, sims)
