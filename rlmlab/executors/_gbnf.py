"""GBNF text helpers shared by the step grammar and template fillings: literals, alternatives, rule names and
integer ranges."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["int_range", "gbnf_alt", "gbnf_lit", "gbnf_rule_name"]


def gbnf_lit(text: str) -> str:
    """A GBNF string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def gbnf_alt(options: Iterable[str]) -> str:
    opts = list(dict.fromkeys(options))
    if not opts:
        raise ValueError("empty alternative")
    return opts[0] if len(opts) == 1 else "(" + " | ".join(opts) + ")"


def gbnf_rule_name(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-").lower() or "x"


def _same_length(a: str, b: str) -> str:
    """GBNF for the integers a..b written with the same number of digits (a <= b)."""
    n = len(a)
    if a == b:
        return gbnf_lit(a)
    if a == "0" * n and b == "9" * n:
        return "[0-9]" if n == 1 else f"[0-9]{{{n}}}"
    if n == 1:
        return f"[{a}-{b}]"
    if a[0] == b[0]:
        return f"{gbnf_lit(a[0])} {_same_length(a[1:], b[1:])}"
    parts = [f"{gbnf_lit(a[0])} {_same_length(a[1:], '9' * (n - 1))}"]
    lo, hi = int(a[0]) + 1, int(b[0]) - 1
    if lo <= hi:
        head = gbnf_lit(str(lo)) if lo == hi else f"[{lo}-{hi}]"
        parts.append(f"{head} {_same_length('0' * (n - 1), '9' * (n - 1))}")
    parts.append(f"{gbnf_lit(b[0])} {_same_length('0' * (n - 1), b[1:])}")
    return "(" + " | ".join(parts) + ")"


def int_range(lo: int, hi: int) -> str:
    """A GBNF expression matching exactly the decimal integers lo..hi (no leading zeros; 0 <= lo <= hi)."""
    if lo < 0 or hi < lo:
        raise ValueError(f"int_range: need 0 <= lo <= hi, got {lo}..{hi}")
    parts = []
    for digits in range(len(str(lo)), len(str(hi)) + 1):
        first = 0 if digits == 1 else 10 ** (digits - 1)
        a, b = max(lo, first), min(hi, 10 ** digits - 1)
        if a <= b:
            parts.append(_same_length(str(a), str(b)))
    return gbnf_alt(parts)
