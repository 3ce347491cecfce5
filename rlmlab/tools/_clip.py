"""Clipping text by the size a tool result is measured in: characters of JSON (quotes and escapes included)."""

from __future__ import annotations

import json

__all__ = ["json_width", "clip_json"]


def json_width(text: str) -> int:
    """Characters ``text`` takes as a JSON string, quotes included (how Workspace.call measures results)."""
    return len(json.dumps(text, ensure_ascii=False))


def clip_json(text: str, n: int, mark: str = "") -> str:
    """The longest prefix of ``text`` (then ``mark`` if it was cut) whose JSON string form takes at most ``n``
    characters. Control characters and quotes take several characters each, so a cut prefix can be short."""
    if json_width(text) <= n:
        return text
    out, used = [], json_width(mark)  # the quotes and the mark
    for ch in text:
        width = json_width(ch) - 2
        if used + width > n:
            break
        out.append(ch)
        used += width
    return "".join(out) + mark
