"""How the pattern validators read a reply: its prose without fenced code, and a pattern's first un-negated match."""

from __future__ import annotations

import re

__all__ = ["reply_prose", "first_unnegated"]


def reply_prose(text: str) -> str:
    """The reply without fenced code (claims and promises live in the prose)."""
    return re.sub(r"```.*?(```|\Z)", " ", text, flags=re.S)


_NEGATION = re.compile(r"\b(?:no|not|never|nothing|didn't|did\s+not|haven't|have\s+not|wasn't|won't|cannot|can't|"
                       r"kein\w*|nicht|pas|aucun\w*|ningún|ninguna)\b", re.I)


def first_unnegated(rx: re.Pattern[str], text: str) -> str | None:
    """The first match not negated earlier in its sentence ("No background session was started" is no claim)."""
    for m in rx.finditer(text):
        start = max(text.rfind(".", 0, m.start()), text.rfind("\n", 0, m.start()), text.rfind("!", 0, m.start()))
        if not _NEGATION.search(text[start + 1:m.start()] + " " + m.group(0).split()[0]):
            return m.group(0).strip()
    return None
