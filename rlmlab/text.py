"""Small text helpers shared by packages on different layers (a leaf: it imports no rlmlab package)."""

from __future__ import annotations

__all__ = ["cut_lines", "plural"]


def cut_lines(text: str, budget: int) -> str:
    """Whole lines from the top that fit in ``budget`` characters (never a cut term)."""
    out, used = [], 0
    for line in text.split("\n"):
        extra = len(line) + (1 if out else 0)
        if used + extra > budget:
            break
        out.append(line)
        used += extra
    return "\n".join(out)


def plural(n: int, word: str, many: str | None = None) -> str:
    """A count as a reader reads it: ``n`` (with thousands separators) and ``word``, plural unless ``n`` is 1:
    "1 iteration", "0 iterations", "1,200 tokens"; ``many`` is the plural when it is not ``word`` + "s"
    (``plural(2, "match", "matches")``)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"
