"""Small text helpers shared by packages on different layers (a leaf: it imports no rlmlab package)."""

from __future__ import annotations

__all__ = ["cut_lines"]


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
