"""Learners: answer a question (and any reprompts) and report a self-confidence in [0, 1].

- :class:`DemoLearner` is a seeded **simulator** of a learner, for offline runs and tests. It gets the right
  answer from a ``solve`` function (by default: the item's reference, standing in for "the learner could compute
  it") and, with probability ``error_rate`` on the first turn, makes one of the mistakes the teacher exists to
  catch: anchoring on a number from the question, an absolute claim, a post-hoc story, or a wrong answer it then
  sticks to. A reprompt whose template targets its mistake fixes it with probability ``fix_targeted``, any other
  reprompt with ``fix_generic``; a reprompt of a right answer breaks it with probability ``churn`` unless the
  template is ``calming_focus_v1``. All draws come from ``random.Random(f"{seed}:{qid}:{turn}")``.
- :class:`LMLearner` asks a DSPy LM. Self-confidence: the geometric mean of the token probabilities of the
  final number when the engine returns log-probabilities (the local llama.cpp engine does), else a
  ``Confidence: x`` the model states, else 0.5.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rlmlab.teach._data import normalise_answer

__all__ = ["LearnerAnswer", "Exchange", "DemoLearner", "LMLearner", "ERROR_KINDS", "TARGETS"]

ERROR_KINDS = ("anchoring", "absolute", "post_hoc", "sticky")
# which template targets which simulated mistake
TARGETS = {"anchoring": "counter_anchor_v1", "absolute": "quantify_uncertainty_v1",
           "post_hoc": "recompute_no_story_v1", "sticky": "devils_advocate_v1"}


@dataclass
class LearnerAnswer:
    answer: str
    self_conf: float
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class Exchange:
    """What the learner has seen so far for one question: its answers and the reprompts it got."""

    question: str
    qid: str = ""
    answers: list[str] = field(default_factory=list)
    reprompts: list[tuple[str, str]] = field(default_factory=list)  # (template id, text)


def _number(text: str) -> str:
    return normalise_answer(text) or text.strip()


class DemoLearner:
    """The seeded simulator described in the module docstring (not a model of any real learner)."""

    def __init__(self, solve: Callable[[str], str], *, error_rate: float = 0.1, fix_targeted: float = 0.8,
                 fix_generic: float = 0.5, churn: float = 0.1, seed: int = 0):
        self.solve, self.error_rate, self.seed = solve, error_rate, seed
        self.fix_targeted, self.fix_generic, self.churn = fix_targeted, fix_generic, churn
        self._mistake: dict[str, str] = {}

    def _rng(self, ex: Exchange) -> random.Random:
        return random.Random(f"{self.seed}:{ex.qid or ex.question}:{len(ex.answers)}")

    def _wrong(self, kind: str, ex: Exchange, right: str, rng: random.Random) -> LearnerAnswer:
        numbers = re.findall(r"\d+(?:\.\d+)?", ex.question)
        off = str(int(float(right)) + rng.choice([-10, -2, -1, 1, 2, 10])) if _is_num(right) else "0"
        if kind == "anchoring" and numbers:
            return LearnerAnswer(f"The answer is {numbers[rng.randrange(len(numbers))]}.", 0.85)
        if kind == "absolute":
            return LearnerAnswer(f"This kind of problem always works out the same way, so the answer is {off}.", 0.6)
        if kind == "post_hoc":
            return LearnerAnswer(f"It is {off}, obvious because the numbers fit.", 0.75)
        return LearnerAnswer(f"I get {off}.", 0.65)

    def answer(self, ex: Exchange) -> LearnerAnswer:
        rng = self._rng(ex)
        right = _number(self.solve(ex.question))
        key = ex.qid or ex.question
        if not ex.answers:  # first turn
            if rng.random() < self.error_rate:
                kind = ERROR_KINDS[rng.randrange(len(ERROR_KINDS))]
                self._mistake[key] = kind
                return self._wrong(kind, ex, right, rng)
            self._mistake.pop(key, None)
            return LearnerAnswer(f"The answer is {right}.", 0.9)
        template = ex.reprompts[-1][0] if ex.reprompts else ""
        was_right = _number(ex.answers[-1]) == right
        if was_right:
            if template != "calming_focus_v1" and rng.random() < self.churn:
                return LearnerAnswer(f"On second thought, {_off_by_one(right)}.", 0.5)
            return LearnerAnswer(f"The answer is {right}.", 0.92)
        kind = self._mistake.get(key, "sticky")
        fix = self.fix_targeted if TARGETS.get(kind) == template else self.fix_generic
        if kind == "sticky" and template != TARGETS["sticky"]:
            fix /= 2  # it sticks to its first answer unless made to argue against it
        if rng.random() < fix:
            return LearnerAnswer(f"Recomputing: the answer is {right}.", 0.8)
        return LearnerAnswer(ex.answers[-1], 0.7)


def _is_num(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _off_by_one(right: str) -> str:
    return str(int(float(right)) + 1) if _is_num(right) else right + "?"


_CONF = re.compile(r"confidence\s*[:=]\s*([01](?:\.\d+)?)", re.I)

LEARNER_INSTRUCTIONS = ("Solve the problem. Show short working, then end with a line 'Answer: <number>'.")


class LMLearner:
    """A learner on any DSPy LM (``make_lm("local")``, a LiteLLM model string, ...)."""

    def __init__(self, lm: Any, temperature: float = 0.0):
        self.lm, self.temperature = lm, temperature

    def messages(self, ex: Exchange) -> list[dict[str, str]]:
        msgs = [{"role": "system", "content": LEARNER_INSTRUCTIONS}, {"role": "user", "content": ex.question}]
        for answer, (_, text) in zip(ex.answers, ex.reprompts):
            msgs += [{"role": "assistant", "content": answer}, {"role": "user", "content": text}]
        return msgs

    def answer(self, ex: Exchange) -> LearnerAnswer:
        engine = getattr(self.lm, "rlmlab_engine", None)
        msgs = self.messages(ex)
        if engine is not None and hasattr(engine, "generate"):
            kwargs = {"logprobs": True} if "logprobs" in engine.generate.__code__.co_varnames else {}
            config = _Config(self.temperature)
            done = engine.generate(msgs, config, **kwargs)
            text, lps = done.text, done.token_logprobs
            tokens = (done.input_tokens, done.output_tokens)
        else:
            out = self.lm(messages=msgs, temperature=self.temperature)
            text, lps, tokens = str(out[0]), [], (0, 0)
        return LearnerAnswer(text.strip(), _self_confidence(text, lps), *tokens)


@dataclass
class _Config:
    """The slice of DSPy's request config the engines read."""

    temperature: float
    max_tokens: int | None = None
    stop: list[str] | None = None


def _self_confidence(text: str, logprobs: list[float]) -> float:
    if logprobs:
        # the probability the model gave its own tokens: geometric mean over the tail that holds the answer
        tail = logprobs[-8:]
        return round(math.exp(sum(tail) / len(tail)), 4)
    m = _CONF.search(text)
    return float(m.group(1)) if m else 0.5
