"""The demo provider's offline arithmetic: "What is <expression>?" and "<p>% of <n>", computed exactly."""

from __future__ import annotations

import ast
import operator
import re
from fractions import Fraction

__all__ = ["solve_arithmetic", "format_number"]

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
