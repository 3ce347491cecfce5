"""Numbers in answers, shared by every package that compares or computes them (a leaf: it imports no rlmlab
package): the final number of a model's answer (:func:`normalise_answer`, :func:`final_number`), answers that
agree (:func:`answers_match`, :func:`vote_key`), text normalisation (:func:`normalise_text`), the exact
arithmetic of the demo model (:func:`solve_arithmetic`, :func:`format_number`) and a bounded evaluator for
arithmetic a model wrote (:func:`evaluate_arithmetic`)."""

from __future__ import annotations

import ast
import math
import operator
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

__all__ = ["normalise_answer", "answers_match", "final_number", "normalise_text", "vote_key", "solve_arithmetic",
           "stated_arithmetic", "format_number", "TOLERANCE", "evaluate_arithmetic", "ArithmeticRefused", "MAX_EXPONENT"]

# Exact tolerance for numeric comparison; answers are compared as Decimals, so this only matters
# for references or answers written with many decimal places.
TOLERANCE = Decimal("1e-9")


# A number not glued to a word or another number on its left ("x2", "v1.2" are not numbers, "5km"
# is 5). A sign glued to a digit or letter on its left is not part of the number ("5-3" yields 5
# and 3, not 5 and -3); _numbers also drops a spaced sign after an operand ("5 - 3").
# Thousands separators must group by three ("1,234,567"); "3,4" is two numbers.
_NUMBER = re.compile(r"(?<![\w.])(?P<sign>[-+]?)(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?!\d)")
# Markers after which the final answer is written, most explicit first; the last occurrence wins
# because models often restate a corrected answer.
_MARKERS = (
    re.compile(r"####"),
    re.compile(r"\\boxed\{"),
    re.compile(r"\banswer\s*(?:is|:|=)", re.IGNORECASE),
)
_CURRENCY = re.compile(r"[$€£]")
_MINUS = re.compile(r"[\u2212\u2013]")  # unicode minus and en dash, as typed in some model output


def _numbers(text: str) -> list[str]:
    out = []
    for m in _NUMBER.finditer(text):
        sign = m.group("sign")
        # "10 - 4" is a subtraction, not 10 and -4: a spaced sign after an operand is binary.
        before = text[:m.start()].rstrip()
        if sign == "+" or (sign and before and (before[-1].isdigit() or before[-1] == ")")):
            sign = ""
        out.append(sign + m.group("num").replace(",", ""))
    return out


def normalise_answer(text: str) -> str | None:
    """The final numeric answer in ``text`` as a canonical string, or None when it holds no number.

    Rules, in order:

    1. Currency signs ($, €, £) are dropped, so "-$5" is -5; a unicode minus counts as "-".
    2. If the text has a marker ("####", "\\boxed{", "answer is", "answer:", "answer ="), the first
       number after the last marker is the answer. A marker followed by no number is ignored.
    3. Otherwise the last number in the text is the answer; a trailing "... = 18" falls under this rule.
    4. Thousands commas are removed ("1,234" -> "1234"); words and units after the number are
       ignored ("18 dollars", "5 km", "20%" -> "20"). A minus is a sign only when it does not
       follow an operand: "5-3" and "5 - 3" hold 5 and 3, while "= -3", "is -3" and "(-3)" hold -3.
    5. The number is written in plain decimal with no trailing zeros: "2.50" -> "2.5", "4.0" -> "4",
       "-0" -> "0", "100" stays "100". Fractions ("3/4") and exponents ("1e5") are not recognised.
    """
    text = _MINUS.sub("-", _CURRENCY.sub("", text))
    chosen: str | None = None
    for marker in _MARKERS:
        hits = list(marker.finditer(text))
        if hits:
            after = _numbers(text[hits[-1].end():])
            if after:
                chosen = after[0]
                break
    if chosen is None:
        found = _numbers(text)
        if not found:
            return None
        chosen = found[-1]
    return _canonical(Decimal(chosen))


def _canonical(value: Decimal) -> str:
    out = format(value.normalize(), "f")
    return "0" if out == "-0" else out


def answers_match(answer: str, reference: str) -> bool:
    """True when ``answer`` and ``reference`` hold the same final number (within 1e-9).

    A reference with no number (a non-arithmetic question) is compared as text instead: equal after
    trimming and case-folding. An answer with no number never matches a numeric reference.
    """
    ref = normalise_answer(reference)
    if ref is None:
        return answer.strip().casefold() == reference.strip().casefold()
    got = normalise_answer(answer)
    if got is None:
        return False
    try:
        return abs(Decimal(got) - Decimal(ref)) <= TOLERANCE
    except InvalidOperation:  # pragma: no cover - both strings come from _canonical
        return False


_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "«": "»"}


def normalise_text(text: Any) -> str:
    """Case-folded, whitespace-collapsed text without surrounding quotes or a trailing period."""
    out = " ".join(str(text).split()).casefold()
    while True:
        before = out
        out = out.strip().rstrip(".").strip()
        if len(out) >= 2 and _QUOTES.get(out[0]) == out[-1]:
            out = out[1:-1]
        if out == before:
            return out


# a plain fraction "3/4", not part of a path, a date or a decimal ("a/b", "1/2/2020", "1.5/2" are left alone)
_FRACTION = re.compile(r"(?<![\w./])(\d+)/(\d+)(?![\w/]|\.\d)")


def final_number(text: Any) -> Fraction | None:
    """The final number of an answer, exactly, or None when it holds none.

    Follows :func:`normalise_answer` (currency signs and thousands commas dropped, "answer is"
    markers, a trailing "%" ignored, the last number otherwise), and also reads a fraction "3/4" as 0.75.
    Numbers (int, float, Fraction, Decimal) are returned as they are.
    """
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float, Fraction)):
        return Fraction(text)
    from decimal import Decimal

    if isinstance(text, Decimal):
        return Fraction(text)
    text = str(text)
    # replace each fraction by its quotient to 30 places, so normalise_answer's marker and sign rules apply
    text = _FRACTION.sub(lambda m: format(Decimal(int(m[1])) / Decimal(int(m[2])), "f") if int(m[2]) else m[0], text)
    found = normalise_answer(text)
    return None if found is None else Fraction(Decimal(found)).limit_denominator(10**12)


# A whole answer that is one number: sign, currency, thousands commas (grouped by three), decimals, a fraction,
# a trailing "%"; about the shape the judges treat as numeric (rlmlab.learning._judge._agrees).
_NUMERIC = re.compile(r"[-+−]?[$€£]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:/\d+)?\s*%?")


def vote_key(text: Any) -> str | None:
    """The answer as a vote key, or None when there is none (None, or blank after normalising).

    Text is stripped, whitespace-collapsed and case-folded, with surrounding quotes and a trailing period
    removed. An answer that is a single number is written canonically, so "514", "514.0", " 514 ", "$514"
    and "514." agree ("3/4" and "0.75" too); a number inside a sentence ("about 514 apples") stays text.
    """
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


# -- exact arithmetic (the demo provider) ---------------------------------------------------------------

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_WHAT_IS = re.compile(r"^\s*(?:what is|compute|calculate)\s+(.+?)\s*\??\s*$", re.I)
_PERCENT_OF = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*%\s*of\s*(-?\d+(?:\.\d+)?)\s*$", re.I)


def format_number(value: Fraction) -> str:
    """An exact value as a short decimal: ``4``, ``2.5``, ``-7``; a non-terminating fraction to 6 places."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.6f}".rstrip("0").rstrip(".")


def _eval(node: ast.AST) -> Fraction:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _eval(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left), _eval(node.right))
    raise ValueError(f"not plain arithmetic: {ast.dump(node)[:60]}")


def solve_arithmetic(question: str) -> str | None:
    """The exact answer to an arithmetic question, or None when the question is not one (a word problem)."""
    m = _WHAT_IS.match(question)
    if not m:
        return None
    expr = m.group(1).replace("×", "*").replace("÷", "/")
    pct = _PERCENT_OF.match(expr)
    try:
        if pct:
            return format_number(Fraction(pct.group(1)) * Fraction(pct.group(2)) / 100)
        return format_number(_eval(ast.parse(expr, mode="eval")))
    except (SyntaxError, ValueError, ZeroDivisionError):
        return None


_HOW_MUCH = re.compile(r"^\s*how much is\s+", re.I)
_PERCENT_WORD = re.compile(r"(\d)\s*(?:percent|per cent)\b", re.I)
_INSTRUCTION = re.compile(r"(?<=[.?])\s+(?:answer|give|reply|respond)\b[^.?]*[.?]?\s*$", re.I)


def stated_arithmetic(question: str) -> str | None:
    """The exact value of the arithmetic a question states as its whole task, or None for a word problem.

    :func:`solve_arithmetic`, also for "How much is X?", "N percent of M" and a trailing instruction sentence
    ("Calculate 3 * 4. Answer with a number."): a question that is its own computation, so its answer can be
    checked without an answer key.
    """
    text = _INSTRUCTION.sub("", question.strip())
    text = _PERCENT_WORD.sub(r"\1%", _HOW_MUCH.sub("What is ", text))
    return solve_arithmetic(text.rstrip(" ."))


# -- bounded arithmetic over untrusted text (a model's expression) ------------------------------------------------

class ArithmeticRefused(ValueError):
    """:func:`evaluate_arithmetic` gives no value: not plain arithmetic, division by zero, or out of bounds."""


_SAFE_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
             ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
MAX_EXPONENT = 64  # the largest power evaluate_arithmetic computes (and only if the result stays in bounds)


def _bounded(value: Fraction, limit: Fraction) -> Fraction:
    """``value``, or ArithmeticRefused when its size or its denominator passes ``limit``."""
    if abs(value) > limit or value.denominator > limit:
        raise ArithmeticRefused(f"out of bounds (|value| or its denominator over {format_number(limit)})")
    return value


def _power(base: Fraction, exponent: Fraction, limit: Fraction) -> Fraction:
    """``base ** exponent`` for a whole exponent up to MAX_EXPONENT in size, refused before it is computed when
    the numerator or denominator of the result would pass ``limit`` (so ``9 ** 9 ** 9`` costs nothing)."""
    if exponent.denominator != 1 or abs(exponent) > MAX_EXPONENT:
        raise ArithmeticRefused(f"a power needs a whole exponent of at most {MAX_EXPONENT}")
    if base == 0 and exponent < 0:
        raise ArithmeticRefused("division by zero")
    e = abs(int(exponent))
    biggest = max(abs(base.numerator), base.denominator)
    if biggest > 1 and e * math.log10(biggest) > math.log10(limit) + 1:
        raise ArithmeticRefused(f"out of bounds (a power over {format_number(limit)})")
    return base ** int(exponent)


def evaluate_arithmetic(expression: str, *, limit: int = 10**12, max_chars: int = 300) -> Fraction:
    """The exact value of ``expression``, arithmetic that a model wrote (untrusted: never ``eval``-ed).

    The text is parsed with :mod:`ast` and only these nodes are evaluated, with :class:`~fractions.Fraction`:
    int and float literals, unary ``+``/``-``, binary ``+ - * / // % **`` and parentheses. Anything else (a
    name, a call, an attribute, a string, a comparison, ...) raises :class:`ArithmeticRefused`, as do division by
    zero, a text over ``max_chars`` characters, a power whose exponent is not whole or passes
    :data:`MAX_EXPONENT`, and any literal or intermediate value whose size or denominator passes ``limit``.
    """
    if len(expression) > max_chars:
        raise ArithmeticRefused(f"longer than {max_chars} characters")
    bound = Fraction(limit)
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ArithmeticRefused("not an arithmetic expression") from None

    def value(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if (isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
                and not isinstance(node.value, bool)):
            if isinstance(node.value, float) and not math.isfinite(node.value):
                raise ArithmeticRefused("out of bounds (a literal that is not finite)")
            return _bounded(Fraction(str(node.value)), bound)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = value(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp) and type(node.op) in _SAFE_OPS:
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Pow):
                return _bounded(_power(left, right, bound), bound)
            try:
                return _bounded(Fraction(_SAFE_OPS[type(node.op)](left, right)), bound)
            except ZeroDivisionError:
                raise ArithmeticRefused("division by zero") from None
        raise ArithmeticRefused(f"not plain arithmetic: {type(node).__name__} is not allowed")

    try:
        return value(tree)
    except RecursionError:
        raise ArithmeticRefused("nested too deeply") from None
