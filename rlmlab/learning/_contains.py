"""The ``contains`` judge: a short answer that states the expected value (how long-context benchmarks score a
retrieved value: RULER's string match), registered in :data:`rlmlab.learning.JUDGES`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlmlab.learning._judge import JUDGES, acceptable_values, binary_verdict, clip_quote, unjudged_verdict
from rlmlab.memory import MemoryTask, Verdict

if TYPE_CHECKING:
    from rlmlab.executors import Trajectory

__all__ = ["ContainsJudge", "CONTAINS_MAX_WORDS"]

CONTAINS_MAX_WORDS = 40  # an answer longer than this is a dump of the text, not an answer that states a value


def _states(answer: str, value: Any) -> bool:
    """Whether ``answer`` holds ``value`` as a whole token: case-insensitively, not inside a longer word."""
    text = str(value).strip()
    return bool(text) and re.search(r"(?<![\w-])" + re.escape(text) + r"(?![\w-])", answer, re.IGNORECASE) is not None


@dataclass
class ContainsJudge:
    """The answer states ``task.expected`` (or one of a list of acceptable values) as a whole token, in at most
    :data:`CONTAINS_MAX_WORDS` words: "The password is Tundra2982." passes for ``Tundra2982``, the way long-context
    benchmarks (RULER's string match) score a retrieved value; a dump of the text that happens to hold it does not."""

    name: str = field(default="contains", init=False)

    def judge(self, task: MemoryTask, trajectory: "Trajectory") -> Verdict:
        unjudged = unjudged_verdict(self.name, task, trajectory)
        if unjudged is not None:
            return unjudged
        answer = str(trajectory.answer)
        words = len(answer.split())
        if words > CONTAINS_MAX_WORDS:
            return binary_verdict(self.name, False, f"The answer has {words} words: a dump of the text, not an answer "
                                             f"(at most {CONTAINS_MAX_WORDS}).")
        hit = next((e for e in acceptable_values(task.expected) if _states(answer, e)), None)
        if hit is not None:
            return binary_verdict(self.name, True, f"The answer {clip_quote(answer)!r} states {clip_quote(hit)!r}.")
        shown = " or ".join(repr(clip_quote(e, 40)) for e in acceptable_values(task.expected)[:3])
        return binary_verdict(self.name, False, f"The answer {clip_quote(answer)!r} does not state {shown}.")


@JUDGES.register("contains")
def _contains() -> ContainsJudge:
    """The answer states task.expected as a whole token in a short answer (a retrieved value in a sentence)."""
    return ContainsJudge()
