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
from rlmlab.teach import Exchange, LearnerAnswer

__all__ = ["CodeFirstLearner", "CODE_FIRST_INSTRUCTIONS", "expression_grammar", "question_numbers", "number_counts"]

CODE_FIRST_INSTRUCTIONS = ("Write one Python line that computes the answer from the numbers in the question: "
                           "answer = <arithmetic expression>. Use + - * / and parentheses only.")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_LINE = re.compile(r"answer\s*=\s*([-+*/(). \d]+)")
_ANSWER = re.compile(r"Answer:\s*(-?[\d,]*\.?\d+)")


_WORDS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}


def question_numbers(question: str) -> list[str]:
    """The numbers an expression may use: the question's digits, its number words up to twelve ("Four friends"),
    and 100 when it speaks of a percentage; longest first."""
    found = {n.replace(",", "") for n in _NUMBER.findall(question)}
    found |= {_WORDS[w] for w in re.findall(r"[a-z]+", question.lower()) if w in _WORDS}
    if "%" in question or "percent" in question.lower():
        found.add("100")
    return sorted(found, key=lambda s: (-len(s), s))


def number_counts(question: str) -> dict[str, int]:
    """How often the question gives each of :func:`question_numbers` ("What is 2 + 2?" gives 2 twice; 100 once
    for a percentage)."""
    counts: dict[str, int] = {}
    for n in _NUMBER.findall(question):
        counts[n.replace(",", "")] = counts.get(n.replace(",", ""), 0) + 1
    for w in re.findall(r"[a-z]+", question.lower()):
        if w in _WORDS:
            counts[_WORDS[w]] = counts.get(_WORDS[w], 0) + 1
    if ("%" in question or "percent" in question.lower()) and "100" not in counts:
        counts["100"] = 1
    return {n: counts[n] for n in question_numbers(question)}


TURN_SEED_STRIDE = 1009  # a turn's seed: seed + sample + stride * answers so far (samples of one turn stay apart)
MAX_STATES = 32  # multisets of the question's numbers a grammar tracks; past it, numbers are not counted


def expression_grammar(question: str) -> str:
    """GBNF for ``answer = <expression>`` over :func:`question_numbers` (any integer if there are none).

    Each number is used at most as often as the question gives it (:func:`number_counts`), and with two or more
    numbers at least one operator joins them (AWM's rule: each slot is one variable element of the query). A
    135M model allowed any number anywhere repeats one ("89 * 4 / 4 * 4 * 4" for "89 cards, gives away 4") or
    copies one alone ("answer = 2" for "What is 2 + 2?"). Parentheses group a run of two or more numbers, one level
    deep. A question with so many numbers that their multisets pass :data:`MAX_STATES` keeps the uncounted form
    (any of its numbers, at most 5 operands), still with an operator."""
    counts = number_counts(question)
    if not counts:
        return ('root ::= "answer = " expr\nexpr ::= term (" " op " " term){0,4}\n'
                'term ::= num | "(" expr ")"\nop ::= "+" | "-" | "*" | "/"\nnum ::= [0-9] [0-9]{0,6}\n')
    numbers = list(counts)
    full = tuple(counts[n] for n in numbers)
    if math.prod(c + 1 for c in full) > MAX_STATES:
        num = " | ".join(f'"{n}"' for n in numbers)
        return (f'root ::= "answer = " term (" " op " " term){{1,4}}\nexpr ::= term (" " op " " term){{0,4}}\n'
                f'term ::= num | "(" expr ")"\nop ::= "+" | "-" | "*" | "/"\nnum ::= {num}\n')
    rules: dict[str, str] = {}

    def name(kind: str, *states: tuple[int, ...]) -> str:
        return kind + "-" + "-".join("x".join(map(str, st)) for st in states)

    def minus(st: tuple[int, ...], i: int) -> tuple[int, ...]:
        return st[:i] + (st[i] - 1,) + st[i + 1:]

    def subsets(st: tuple[int, ...]):  # every multiset under st (st itself included)
        out = [()]
        for c in st:
            out = [o + (k,) for o in out for k in range(c + 1)]
        return out

    def flat(a: tuple[int, ...], b: tuple[int, ...]) -> str:  # numbers a - b, each once, joined by operators
        key = name("flat", a, b)
        if key not in rules:
            rules[key] = ""
            alts = []
            for i, n in enumerate(numbers):
                if a[i] > b[i]:
                    rest = minus(a, i)
                    alts.append(f'"{n}"' if rest == b else f'"{n}" " " op " " {flat(rest, b)}')
            rules[key] = " | ".join(alts)
        return key

    def top(a: tuple[int, ...], first: bool) -> str:  # an expression over at most the numbers in a
        key = name("top1" if first else "top", a)
        if key not in rules:
            rules[key] = ""
            alts = []
            for i, n in enumerate(numbers):
                if a[i]:
                    rest = minus(a, i)
                    if not first or sum(a) < 2:
                        alts.append(f'"{n}"')
                    if sum(rest):
                        alts.append(f'"{n}" " " op " " {top(rest, False)}')
            for b in subsets(a):
                if sum(a) - sum(b) >= 2:
                    group = f'"(" {flat(a, b)} ")"'
                    alts.append(group)
                    if sum(b):
                        alts.append(f'{group} " " op " " {top(b, False)}')
            rules[key] = " | ".join(alts)
        return key

    root = top(full, True)
    body = "\n".join(f"{k} ::= {v}" for k, v in rules.items())
    return f'root ::= "answer = " {root}\nop ::= "+" | "-" | "*" | "/"\n{body}\n'


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
        found = _LINE.search(text)
        value = solve_arithmetic(f"What is {found.group(1).strip()}?") if found else None
        if value is None and (said := _ANSWER.search(text)):
            value = said.group(1).replace(",", "")
        line = f"answer = {found.group(1).strip()}" if found else text.strip().split("\n")[0][:200]
        self.logprobs_seen = self.logprobs_seen or bool(lps)
        conf = round(math.exp(sum(lps) / len(lps)), 4) if lps else 0.5
        return LearnerAnswer(f"{line}\nAnswer: {value if value is not None else 'none'}", conf, tin, tout)
