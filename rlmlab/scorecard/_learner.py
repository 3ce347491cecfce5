"""A teacher-learner learner that can answer: code-first decoding of one arithmetic expression, computed exactly.

The model writes ``answer = <expression>`` over the question's own numbers (on the embedded model a grammar allows
nothing else); rlmlab evaluates the expression with exact fractions and replies ``Answer: <value>``, so the teacher
judges a number the model chose how to compute, not one it tried to calculate in its head. The teacher's reprompts
reach it as the user's next message, as with :class:`rlmlab.teach.LMLearner`.
"""

from __future__ import annotations

import math
import re
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from rlmlab.numbers import solve_arithmetic
from rlmlab.teach import (
    CODE_INSTRUCTIONS, TURN_SEED_STRIDE, Exchange, LearnerAnswer, expression_grammar, number_counts, question_numbers,
    read_expression,
)

__all__ = ["CodeFirstLearner", "CODE_FIRST_INSTRUCTIONS", "expression_grammar", "question_numbers", "number_counts"]

CODE_FIRST_INSTRUCTIONS = CODE_INSTRUCTIONS
_ANSWER = re.compile(r"Answer:\s*(-?[\d,]*\.?\d+)")


@dataclass
class _Config:  # the slice of DSPy's request config the engines read
    temperature: float
    max_tokens: int | None = None
    stop: list[str] | None = None
    seed: int | None = None


class CodeFirstLearner:
    """``answer(Exchange) -> LearnerAnswer`` from one constrained expression per turn (see the module docstring).

    ``decoding`` "grammar" constrains the expression where the LM can follow a grammar (the embedded model, a
    llama.cpp server); elsewhere it runs free and the reply's ``answer = ...`` line (or its ``Answer:`` line) is read.
    Self-confidence is the geometric mean probability of the expression's tokens (0.5 when the LM gives none).
    """

    def __init__(self, lm: Any, *, temperature: float = 0.0, max_tokens: int = 48, seed: int = 0,
                 decoding: str = "grammar"):
        from rlmlab.lm import can_constrain

        if decoding not in ("grammar", "free"):
            raise ValueError(f"decoding: {decoding!r}; use grammar or free")
        self.lm, self.temperature, self.max_tokens, self.seed = lm, temperature, max_tokens, seed
        self.decoding = decoding if decoding == "free" or can_constrain(lm) else "free"
        self.logprobs_seen = False  # whether any reply's confidence came from the model (else the 0.5 fallback)
        # replies memoised per (conversation, temperature, seed), as LMLearner's: the arms of one scorecard share
        # the first turn's reply exactly, so paired arms differ only by what the teacher did after it
        self._memo: dict[tuple[Any, ...], LearnerAnswer] = {}

    def messages(self, ex: Exchange) -> list[dict[str, str]]:
        msgs = [{"role": "system", "content": CODE_FIRST_INSTRUCTIONS}, {"role": "user", "content": ex.question}]
        for answer, (_, text) in zip(ex.answers, ex.reprompts):
            msgs += [{"role": "assistant", "content": answer.split("\n")[0]}, {"role": "user", "content": text}]
        return msgs

    def answer(self, ex: Exchange, sample: int = 0) -> LearnerAnswer:
        msgs = self.messages(ex)
        # each turn draws its own seed: with one seed for every turn a reprompted conversation replays the same
        # random draws, and at temperature 0.3 the 135M learner then wrote the same expression after every reprompt
        seed = self.seed + sample + TURN_SEED_STRIDE * len(ex.answers)
        key = (tuple((m["role"], m["content"]) for m in msgs), self.temperature, seed)
        if key not in self._memo:
            self._memo[key] = self._answer(msgs, ex.question, seed)
        return self._memo[key]

    def _answer(self, msgs: list[dict[str, str]], question: str, seed: int) -> LearnerAnswer:
        from rlmlab.lm import constrained

        engine = getattr(self.lm, "rlmlab_engine", None)
        if engine is not None and hasattr(engine, "generate"):
            kwargs = {"logprobs": True} if "logprobs" in engine.generate.__code__.co_varnames else {}
            grammar = constrained(grammar=expression_grammar(question)) if self.decoding == "grammar" else None
            with grammar or nullcontext():
                done = engine.generate(msgs, _Config(self.temperature, self.max_tokens, seed=seed),
                                       **kwargs)
            text, lps, tin, tout = done.text, list(done.token_logprobs or []), done.input_tokens, done.output_tokens
        else:  # a LiteLLM model: the conversation as one prompt
            prompt = "\n\n".join(f"{m['role'].upper()}: {m['content']}" for m in msgs) + "\n\nASSISTANT:"
            text, lps, tin, tout = str(self.lm(prompt, temperature=self.temperature,
                                                max_tokens=self.max_tokens)[0]), [], 0, 0
        expression = read_expression(text)
        value = solve_arithmetic(f"What is {expression}?") if expression else None
        if value is None and (said := _ANSWER.search(text)):
            value = said.group(1).replace(",", "")
        line = f"answer = {expression}" if expression else text.strip().split("\n")[0][:200]
        self.logprobs_seen = self.logprobs_seen or bool(lps)
        conf = round(math.exp(sum(lps) / len(lps)), 4) if lps else 0.5
        return LearnerAnswer(f"{line}\nAnswer: {value if value is not None else 'none'}", conf, tin, tout)
