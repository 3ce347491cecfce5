"""Code-first answers: the learner writes one arithmetic expression over the question's numbers, the host computes it.

:func:`expression_grammar` is the GBNF a constrained model decodes under: ``answer = <expression>`` whose literals
are the numbers the question gives (:func:`question_numbers`), joined by ``+ - * /`` and one level of parentheses,
of bounded length. :func:`read_expression` takes the expression out of a reply, and :func:`code_answer` writes the
answer a reader can follow, ``<expression> = <value>``, with the value from
:func:`rlmlab.numbers.evaluate_arithmetic` (the expression is parsed with ``ast``, never run). The judge
(:func:`rlmlab.numbers.normalise_answer`) reads the last number of such an answer, which is the value.

Used by :class:`rlmlab.teach.LMLearner` (``decoding="code"``) and the scorecard's code-first learner.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from rlmlab.numbers import ArithmeticRefused, evaluate_arithmetic, format_number

__all__ = ["CODE_INSTRUCTIONS", "MAX_STATES", "TURN_SEED_STRIDE", "code_answer", "expression_grammar",
           "number_counts", "question_numbers", "read_expression"]

CODE_INSTRUCTIONS = ("Write one Python line that computes the answer from the numbers in the question: "
                     "answer = <arithmetic expression>. Use + - * / and parentheses only.")
TURN_SEED_STRIDE = 1009  # a turn's seed: seed + sample + stride * answers so far (samples of one turn stay apart)
MAX_STATES = 32  # multisets of the question's numbers a grammar tracks; past it, numbers are not counted

_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
# the expression of an "answer = ..." line: digits, dots, spaces, parentheses and the four operators
_LINE = re.compile(r"answer\s*=\s*([-+*/(). \d]+)")
_WORDS = {w: str(i) for i, w in
          enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}

# The literals are the numbers the question itself gives: its digits, its number words up to twelve ("Four
# friends") and 100 when it speaks of a percentage (the only constant its own words name). No other constants
# (0-10, 60, 24, 7, 1000): a 135M model offered numbers the question does not give puts them in where they do not
# belong, as it repeats a number it may use freely ("89 * 4 / 4 * 4 * 4" for "89 cards, gives away 4"); a
# question that needs a unit conversion the question does not state cannot be answered in this form.


def number_counts(question: str) -> dict[str, int]:
    """How often the question gives each number an expression may use ("What is 2 + 2?" gives 2 twice): its
    digits, its number words up to twelve ("Four friends"), and 100 (once) when it speaks of a percentage;
    longest first."""
    found = [n.replace(",", "") for n in _NUMBER.findall(question)]
    found += [_WORDS[w] for w in re.findall(r"[a-z]+", question.lower()) if w in _WORDS]
    if ("%" in question or "percent" in question.lower()) and "100" not in found:
        found.append("100")
    counts = Counter(found)
    return {n: counts[n] for n in sorted(counts, key=lambda s: (-len(s), s))}


def question_numbers(question: str) -> list[str]:
    """The numbers an expression may use (:func:`number_counts`' keys), longest first."""
    return list(number_counts(question))


# the two forms without counted numbers: at most 5 terms, each a number or a parenthesised run of 2 to 5 numbers
_UNCOUNTED = ('term ::= num | "(" num (" " op " " num){{1,4}} ")"\nop ::= "+" | "-" | "*" | "/"\nnum ::= {num}\n')


def expression_grammar(question: str) -> str:
    """GBNF for ``answer = <expression>`` over :func:`question_numbers` (any integer of up to 7 digits if there
    are none).

    Each number is used at most as often as the question gives it (:func:`number_counts`), and with two or more
    numbers at least one operator joins them (AWM's rule: each slot is one variable element of the query). A
    135M model allowed any number anywhere repeats one ("89 * 4 / 4 * 4 * 4" for "89 cards, gives away 4") or
    copies one alone ("answer = 2" for "What is 2 + 2?"). Parentheses group a run of two or more numbers, one level
    deep. A question with so many numbers that their multisets pass :data:`MAX_STATES` keeps the uncounted form
    (any of its numbers, at most 5 terms, still with an operator). Every form is of bounded length."""
    counts = number_counts(question)
    if not counts:
        return 'root ::= "answer = " term (" " op " " term){0,4}\n' + _UNCOUNTED.format(num="[0-9] [0-9]{0,6}")
    numbers = list(counts)
    full = tuple(counts[n] for n in numbers)
    if math.prod(c + 1 for c in full) > MAX_STATES:
        return ('root ::= "answer = " term (" " op " " term){1,4}\n'
                + _UNCOUNTED.format(num=" | ".join(f'"{n}"' for n in numbers)))
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


def read_expression(text: str) -> str | None:
    """The expression of the first ``answer = <expression>`` line in a reply, spaces trimmed; None if none."""
    found = _LINE.search(text)
    expression = found.group(1).strip() if found else ""
    return expression or None


def code_answer(expression: str | None) -> str:
    """The learner's answer for ``expression``: ``"<expression> = <value>"`` (the judge reads the value, the last
    number), or ``"no answer (<reason>)"`` with no digit in it when there is no value (no expression, not plain
    arithmetic, division by zero, out of bounds), so the judge reads no number from the expression."""
    if expression is None:
        return "no answer (no expression)"
    try:
        value = evaluate_arithmetic(expression)
    except ArithmeticRefused as exc:
        reason = str(exc)
        # the refusal's kind, without the numbers in its message
        kind = next((k for k in ("division by zero", "out of bounds") if reason.startswith(k)), "not computable")
        return f"no answer ({kind})"
    return f"{expression} = {format_number(value)}"
