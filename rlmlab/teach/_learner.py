"""Learners: answer a question (and any reprompts) and report a self-confidence in [0, 1].

- :class:`DemoLearner` is a seeded **simulator** of a learner, for offline runs and tests (the spec's demo
  provider). It computes arithmetic questions itself (:func:`solve_arithmetic`); for anything else it asks a
  ``knowledge`` function (the runner passes the dataset's references, standing in for "the learner could work it
  out"). With probability ``error_rate`` on the first turn it makes one of the mistakes the teacher exists to
  catch: anchoring on a number from the question, an absolute claim, a post-hoc story, or a wrong answer it then
  sticks to. A reprompt whose template targets its mistake fixes it with probability ``fix_targeted``, any other
  reprompt with ``fix_generic``; a reprompt of a right answer breaks it with probability ``churn`` unless the
  template is ``calming_focus_v1``. All draws come from ``random.Random(f"{seed}:{qid}:{turn}:{sample}")``.
- :class:`LMLearner` asks a DSPy LM, in one of :data:`DECODINGS`: ``code`` (the model writes ``answer =
  <expression>`` over the question's numbers under :func:`~rlmlab.teach.expression_grammar`; the host computes
  it safely and the answer reads ``<expression> = <value>``), ``grammar`` (free working then ``Answer: <number>``
  under :data:`LEARNER_GRAMMAR`) or ``free``; an LM that cannot follow a grammar runs ``free``. Self-confidence:
  the geometric mean of the probabilities the model gave the tokens of its final answer's number (in ``code``:
  of its expression; the last 8 tokens if it cannot be located) when the engine returns log-probabilities (the
  local llama.cpp engine does), else a ``Confidence: x`` the model states, else 0.5. With a Turing Protocol its
  reply is checked (post_inference) and, on a violation, regenerated once with the correction.
- :class:`VotingLearner` asks ``k`` samples of another learner and answers with the majority, reporting the
  vote share.
"""

from __future__ import annotations

from contextlib import nullcontext

import math
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rlmlab.numbers import solve_arithmetic
from rlmlab.teach._data import normalise_answer
from rlmlab.teach._expression import (
    CODE_INSTRUCTIONS, TURN_SEED_STRIDE, code_answer, expression_grammar, read_expression,
)

__all__ = ["LearnerAnswer", "Exchange", "DemoLearner", "LMLearner", "VotingLearner", "ERROR_KINDS", "TARGETS",
           "LEARNER_INSTRUCTIONS", "DECODINGS"]

DECODINGS = ("code", "grammar", "free")  # LMLearner's decodings (see the module docstring)

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
    vote_share: float | None = None  # VotingLearner: the majority's share of the k samples
    corrections: int = 0  # Turing Protocol corrections injected into this turn


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

    def __init__(self, knowledge: Callable[[str], str | None] | None = None, *, error_rate: float = 0.1,
                 fix_targeted: float = 0.8, fix_generic: float = 0.5, churn: float = 0.1, seed: int = 0):
        self.knowledge, self.error_rate, self.seed = knowledge, error_rate, seed
        self.fix_targeted, self.fix_generic, self.churn = fix_targeted, fix_generic, churn
        self._mistake: dict[tuple[str, int], str] = {}

    def solve(self, question: str) -> str | None:
        found = solve_arithmetic(question)
        return found if found is not None or self.knowledge is None else self.knowledge(question)

    def _rng(self, ex: Exchange, sample: int) -> random.Random:
        return random.Random(f"{self.seed}:{ex.qid or ex.question}:{len(ex.answers)}:{sample}")

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

    def answer(self, ex: Exchange, sample: int = 0) -> LearnerAnswer:
        rng = self._rng(ex, sample)
        solved = self.solve(ex.question)
        if solved is None:
            return LearnerAnswer("I cannot work this one out.", 0.2)
        right = _number(solved)
        key = (ex.qid or ex.question, sample)
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
# The reply format of LEARNER_INSTRUCTIONS as GBNF: up to 6 lines of working (200 characters each, so a reply
# cannot run on until the token cap cuts off its answer), then the answer line with a number.
LEARNER_GRAMMAR = r"""root ::= line{0,6} "Answer: " num
line ::= [^\n]{1,200} "\n"
num ::= "-"? [0-9] [0-9,]{0,15} ("." [0-9]{1,6})?
"""


class LMLearner:
    """A learner on any DSPy LM (``make_lm("local")``, a LiteLLM model string, ...).

    ``seed`` + the sample number seeds each call, so the ``k`` samples of a :class:`VotingLearner` differ when
    ``temperature`` > 0; in ``code`` decoding each turn adds :data:`~rlmlab.teach.TURN_SEED_STRIDE` x the answers
    so far (under a narrow grammar the same draws after a reprompt gave the same expression). Replies are memoised
    per (conversation, temperature, seed): the arms of one run share the first turn instead of paying for it
    three times. In ``code`` decoding the conversation shows the learner's earlier answers as the lines it wrote
    (``answer = <expression>``) and each reprompt as the user's next message.
    """

    def __init__(self, lm: Any, *, temperature: float = 0.0, max_tokens: int = 256, seed: int = 0,
                 turing: Any = None, memo: bool = True, decoding: str = "code"):
        from rlmlab.lm import can_constrain

        if decoding not in DECODINGS:
            raise ValueError(f"decoding: {decoding!r}; use {', '.join(DECODINGS)}")
        self.lm, self.temperature, self.max_tokens, self.seed = lm, temperature, max_tokens, seed
        # what the learner really uses: an LM that cannot follow a grammar (LiteLLM, scripted) runs free
        self.decoding = decoding if decoding == "free" or can_constrain(lm) else "free"
        self.turing = turing
        self._memo: dict[tuple, LearnerAnswer] | None = {} if memo else None

    def messages(self, ex: Exchange) -> list[dict[str, str]]:
        code = self.decoding == "code"
        msgs = [{"role": "system", "content": CODE_INSTRUCTIONS if code else LEARNER_INSTRUCTIONS},
                {"role": "user", "content": ex.question}]
        for answer, (_, text) in zip(ex.answers, ex.reprompts):
            msgs += [{"role": "assistant", "content": _written(answer) if code else answer},
                     {"role": "user", "content": text}]
        return msgs

    def answer(self, ex: Exchange, sample: int = 0) -> LearnerAnswer:
        msgs = self.messages(ex)
        seed = self.seed + sample + (TURN_SEED_STRIDE * len(ex.answers) if self.decoding == "code" else 0)
        key = (tuple((m["role"], m["content"]) for m in msgs), self.temperature, seed)
        if self._memo is not None and key in self._memo:
            return self._memo[key]
        grammar = (expression_grammar(ex.question) if self.decoding == "code"
                   else LEARNER_GRAMMAR if self.decoding == "grammar" else None)
        text, lps, pieces, tin, tout = self._generate(msgs, seed, grammar)
        corrections = 0
        if self.turing is not None:
            from rlmlab.turing import Turn

            # no history: repeating an earlier answer is the teacher's call (Confirmation), not a repetition loop
            turn = Turn("post_inference", response=text, objective=ex.question, session=ex.qid or "teach",
                        turn_id=f"{len(ex.answers)}.{sample}")
            verdict = self.turing.run(turn)
            if verdict.correction:
                corrections = 1
                msgs = msgs + [{"role": "assistant", "content": text}, {"role": "user", "content": verdict.correction}]
                text, lps, pieces, more_in, more_out = self._generate(msgs, seed, grammar)
                tin, tout = tin + more_in, tout + more_out
        if self.decoding == "code":
            # the host computes the expression (parsed, never run): "<expression> = <value>" or "no answer (...)"
            expression = read_expression(text)
            reply = LearnerAnswer(code_answer(expression), _self_confidence(text, lps, pieces, target=expression),
                                  tin, tout, corrections=corrections)
        else:
            reply = LearnerAnswer(text.strip(), _self_confidence(text, lps, pieces), tin, tout,
                                  corrections=corrections)
        if self._memo is not None:
            self._memo[key] = reply
        return reply

    def _generate(self, msgs: list[dict[str, str]], seed: int,
                  grammar: str | None) -> tuple[str, list[float], list[str], int, int]:
        """Text, per-token log-probabilities and token texts (when the engine gives them), tokens in and out;
        decoded under ``grammar`` (GBNF) when it is not None."""
        from rlmlab.lm import constrained

        engine = getattr(self.lm, "rlmlab_engine", None)
        if engine is not None and hasattr(engine, "generate"):
            kwargs = {"logprobs": True} if "logprobs" in engine.generate.__code__.co_varnames else {}
            with constrained(grammar=grammar) if grammar is not None else nullcontext():
                done = engine.generate(msgs, _Config(self.temperature, self.max_tokens, seed=seed), **kwargs)
            return (done.text, list(done.token_logprobs or []), list(getattr(done, "tokens", None) or []),
                    done.input_tokens, done.output_tokens)
        # any other DSPy LM: the conversation as one prompt (lm(str) is DSPy's stable call); a LiteLLM model on a
        # server that constrains (ServerLM) reads the grammar from the constrained() block
        prompt = "\n\n".join(f"{m['role'].upper()}: {m['content']}" for m in msgs) + "\n\nASSISTANT:"
        with constrained(grammar=grammar) if grammar is not None else nullcontext():
            out = self.lm(prompt, temperature=self.temperature, max_tokens=self.max_tokens)
        usage = (getattr(self.lm, "history", None) or [{}])[-1].get("usage") or {}
        return str(out[0]), [], [], int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


class VotingLearner:
    """``k`` samples of ``base`` (sample numbers 0..k-1); the majority answer, with its vote share.

    Ties go to the answer seen first. The reply is the majority's first sample with the mean self-confidence of
    the majority; tokens are the sum over all samples.
    """

    def __init__(self, base: Any, k: int):
        if k < 1:
            raise ValueError(f"parallel_learners_k must be >= 1, got {k}")
        self.base, self.k = base, k

    def answer(self, ex: Exchange, sample: int = 0) -> LearnerAnswer:
        replies = [self.base.answer(ex, sample=sample * self.k + i) for i in range(self.k)]
        keys = [normalise_answer(r.answer) or r.answer.strip().lower() for r in replies]
        winner, votes = Counter(keys).most_common(1)[0]
        chosen = [r for r, key in zip(replies, keys) if key == winner]
        return LearnerAnswer(chosen[0].answer, round(sum(r.self_conf for r in chosen) / len(chosen), 4),
                             sum(r.input_tokens for r in replies), sum(r.output_tokens for r in replies),
                             vote_share=votes / self.k, corrections=sum(r.corrections for r in replies))


@dataclass
class _Config:
    """The slice of DSPy's request config the engines read."""

    temperature: float
    max_tokens: int | None = None
    stop: list[str] | None = None
    seed: int | None = None


def _written(answer: str) -> str:
    """The line a code-first learner wrote for its answer ``<expression> = <value>``: ``answer = <expression>``
    (an answer of another form, such as ``no answer (...)``, as it is)."""
    expression, sep, _ = answer.rpartition(" = ")
    return f"answer = {expression}" if sep and read_expression(f"answer = {expression}") == expression else answer


def _self_confidence(text: str, logprobs: list[float], tokens: list[str] = (), target: str | None = None) -> float:
    """The learner's confidence in its answer (see the module docstring for the fallbacks); ``target`` is the text
    whose tokens count (default: the final answer's number)."""
    if logprobs:
        picked = _answer_logprobs(text, logprobs, list(tokens), target) or logprobs[-8:]
        # geometric mean of the probabilities the model gave the tokens of its final answer
        return round(math.exp(sum(picked) / len(picked)), 4)
    m = _CONF.search(text)
    return float(m.group(1)) if m else 0.5


def _answer_logprobs(text: str, logprobs: list[float], tokens: list[str], target: str | None = None) -> list[float]:
    """The log-probabilities of the tokens that spell ``target`` (default: the final answer's number), at its last
    occurrence."""
    answer = target if target is not None else normalise_answer(text)
    if not answer or len(tokens) != len(logprobs):
        return []
    joined = "".join(tokens)
    at = joined.rfind(answer)
    if at < 0:
        return []
    end, spans, pos = at + len(answer), [], 0
    for lp, piece in zip(logprobs, tokens):
        if pos < end and pos + len(piece) > at:
            spans.append(lp)
        pos += len(piece)
    return spans
