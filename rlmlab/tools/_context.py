"""Bounded context-inspection tools: blob, ctx_stats, ctx_peek, ctx_slice, ctx_find.

Each returns a JSON-serialisable dict, prints nothing, and refuses (ToolError)
rather than silently clamping a request outside its caps.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from typing import Annotated, Literal

from rlmlab.errors import ToolError
from rlmlab.handles import BlobRef
from rlmlab.tools._registry import tool
from rlmlab.tools._schema import Bounds
from rlmlab.tools._workspace import Workspace

__all__ = ["blob", "ctx_stats", "ctx_peek", "ctx_slice", "ctx_find"]

# JSON keys, quoting and escapes around a bounded text field.
_OVERHEAD = 512


@tool(cap=256, group="context")
def blob(ws: Workspace, payload: str, name: str | None = None) -> BlobRef:
    """Store a payload and return its BlobRef handle.

    Args:
        payload: the text to store.
        name: key to store it under; default is a content hash.
    """
    return ws.store.put(payload, name)


@tool(cap=_OVERHEAD, group="context")
def ctx_stats(ws: Workspace, ref: BlobRef | str) -> dict:
    """Length, line count and sha256 of a stored payload.

    Args:
        ref: a BlobRef or a blob key.
    """
    text = ws.store.get(ref)
    return {
        "key": _key(ref),
        "length": len(text),
        "lines": text.count("\n") + (1 if text and not text.endswith("\n") else 0),
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
    }


@tool(cap=lambda caps: 2 * caps.peek_max + _OVERHEAD, group="context")
def ctx_peek(ws: Workspace, ref: BlobRef | str, n: Annotated[int, Bounds(minimum=0, cap="peek_max")] = 200) -> dict:
    """The first n characters of a payload.

    Args:
        ref: a BlobRef or a blob key.
        n: characters to show, 0 to the peek cap (default cap 2000).
    """
    _check_range("n", n, 0, ws.caps.peek_max)
    text = ws.store.get(ref)
    return {"key": _key(ref), "length": len(text), "preview": text[:n], "truncated": len(text) > n}


@tool(cap=lambda caps: 2 * max(caps.slice_max, caps.slice_lines_max * 200) + _OVERHEAD, group="context")
def ctx_slice(
    ws: Workspace,
    ref: BlobRef | str,
    start: Annotated[int, Bounds(minimum=0)],
    end: Annotated[int, Bounds(minimum=0)],
    unit: Literal["chars", "lines"] = "chars",
) -> dict:
    """A bounded excerpt: characters [start, end) or lines start..end (1-based, inclusive).

    Args:
        ref: a BlobRef or a blob key.
        start: first character offset (0-based) or first line (1-based).
        end: character offset one past the end, or last line (inclusive).
        unit: "chars" (default) or "lines".
    """
    text = ws.store.get(ref)
    if unit not in ("chars", "lines"):
        raise ToolError(f"unit: {unit!r} is not allowed; use 'chars' or 'lines'")
    if start < 0:
        raise ToolError(f"start: {start} is negative; it must be >= {0 if unit == 'chars' else 1}")
    if start > end:
        raise ToolError(f"start: {start} is after end {end}; need start <= end")
    if unit == "chars":
        if end - start > ws.caps.slice_max:
            raise ToolError(
                f"end: slice of {end - start} characters is over the cap of {ws.caps.slice_max}; "
                f"use end <= start + {ws.caps.slice_max}"
            )
        return {"key": _key(ref), "unit": unit, "start": start, "end": min(end, len(text)), "text": text[start:end]}
    if start < 1:
        raise ToolError("start: line numbers start at 1")
    if end - start + 1 > ws.caps.slice_lines_max:
        raise ToolError(
            f"end: slice of {end - start + 1} lines is over the cap of {ws.caps.slice_lines_max}; "
            f"use end <= start + {ws.caps.slice_lines_max - 1}"
        )
    lines = text.splitlines(keepends=True)[start - 1 : end]
    excerpt = "".join(lines)
    if len(excerpt) > ws.caps.slice_lines_max * 200:
        raise ToolError(
            f"end: lines {start}-{end} hold {len(excerpt)} characters, over the cap of "
            f"{ws.caps.slice_lines_max * 200}; ask for fewer lines"
        )
    return {"key": _key(ref), "unit": unit, "start": start, "end": start + len(lines) - 1, "text": excerpt}


@tool(cap=lambda caps: caps.find_k_max * (caps.snippet_chars * 2 + 64) + _OVERHEAD, group="context")
def ctx_find(
    ws: Workspace,
    ref: BlobRef | str,
    pattern: str,
    k: Annotated[int, Bounds(minimum=1, cap="find_k_max")] = 20,
    ignore_case: bool = False,
) -> dict:
    """Offsets, line numbers and the matching line (clipped) of the first k regex matches, and the total count.

    Args:
        ref: a BlobRef or a blob key.
        pattern: a Python regular expression.
        k: matches to return, 1 to the find cap (default cap 100).
        ignore_case: match without regard to case.
    """
    _check_range("k", k, 1, ws.caps.find_k_max)
    if not pattern:
        raise ToolError("pattern: empty; give a regular expression")
    if len(pattern) > ws.caps.pattern_max:
        raise ToolError(f"pattern: {len(pattern)} characters, over the cap of {ws.caps.pattern_max}")
    try:
        rx = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"pattern: invalid regular expression {pattern!r}: {exc}") from None
    text = ws.store.get(ref)
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    width = 2 * ws.caps.snippet_chars
    matches, total = [], 0
    for m in rx.finditer(text):
        total += 1
        if len(matches) < k:
            line = bisect.bisect_right(line_starts, m.start())
            lo = line_starts[line - 1]
            hi = text.find("\n", lo)
            hi = len(text) if hi == -1 else hi
            if hi - lo > width:  # clip a long line to a window that starts a little before the match
                lo = max(lo, min(m.start() - ws.caps.snippet_chars // 4, hi - width))
                hi = lo + width
            matches.append({"offset": m.start(), "line": line, "text": text[lo:hi]})
    return {"key": _key(ref), "pattern": pattern, "total": total, "matches": matches, "truncated": total > k}


def _key(ref: BlobRef | str) -> str:
    return ref.key if isinstance(ref, BlobRef) else str(ref)


def _check_range(arg: str, value: int, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"{arg}: expected an integer from {lo} to {hi}, got {value!r}")
    if not lo <= value <= hi:
        raise ToolError(f"{arg}: {value} is out of range; allowed {lo} to {hi}")
