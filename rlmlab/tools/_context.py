"""Bounded context-inspection tools: blob, ctx_stats, ctx_peek, ctx_slice, ctx_find.

Each returns a JSON-serialisable dict, prints nothing, and refuses (ToolError)
rather than silently clamping a request outside its caps.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from functools import lru_cache
from typing import Annotated, Any, Literal

from rlmlab.errors import ToolError
from rlmlab.handles import BlobRef, content_key
from rlmlab.tools._bounded import time_left
from rlmlab.tools._clip import clip_json, json_width
from rlmlab.tools._files import FILE_FIELD_CHARS, add_files
from rlmlab.tools._registry import tool
from rlmlab.tools._schema import Bounds
from rlmlab.tools._workspace import Workspace

__all__ = ["blob", "ctx_stats", "ctx_peek", "ctx_slice", "ctx_find", "check_range"]

# JSON keys, quoting and escapes around a bounded text field.
_OVERHEAD = 512


@tool(cap=256, group="context")
def blob(ws: Workspace, payload: str, name: str | None = None) -> BlobRef:
    """Store a payload and return its BlobRef handle.

    A person's namespace refuses a payload that is the path of an existing file, naming the call that stores the
    file's text (``blob(open(path).read(), name=...)``). Step code's payload is stored as given: the host's files
    are never looked at for it.

    Args:
        payload: the text to store.
        name: key to store it under; default is a content hash. A name holding other text gives key name@<sha12>.
    """
    if not isinstance(payload, str):
        raise ToolError(f"payload: expected a str, got {type(payload).__name__}")
    if ws.path_roots is None and _names_a_file(payload):
        raise ToolError(f"payload: {payload!r} is the path of a file, and blob stores the text it is given; store "
                        f"the file's text with blob(open({payload!r}).read(), name={os.path.basename(payload)!r})")
    if len(payload) > ws.caps.blob_max_chars:
        raise ToolError(f"payload: {len(payload)} characters, over the cap of {ws.caps.blob_max_chars}; store "
                        "less (a slice, or what you computed from it)")
    if name is None:
        key = content_key(payload)
        if ws.store.holds(key):  # already this run's: nothing new to keep
            return BlobRef(key, len(payload))
    ws.charge("blob_quota_chars", len(payload), ws.caps.blob_quota_chars)
    return ws.store.put(payload, name)


def _names_a_file(payload: str) -> bool:
    """Whether ``payload`` is one line naming an existing regular file (a person's own path, never step code's)."""
    if not payload or len(payload) > 4096 or not payload.isprintable() or payload != payload.strip():
        return False
    try:
        return os.path.isfile(payload)
    except (OSError, ValueError):
        return False


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
    check_range("n", n, 0, ws.caps.peek_max)
    text = ws.store.get(ref)
    preview = clip_json(text[:n], 2 * ws.caps.peek_max)  # control characters take six characters each in JSON
    return {"key": _key(ref), "length": len(text), "preview": preview, "truncated": len(text) > len(preview)}


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
        excerpt = clip_json(text[start:end], 2 * ws.caps.slice_max)
        out = {"key": _key(ref), "unit": unit, "start": start, "end": min(start + len(excerpt), len(text)),
               "text": excerpt}
        if len(excerpt) < len(text[start:end]):
            out["clipped"] = True  # escapes (control characters, quotes) made the excerpt too large as JSON
        return out
    if start < 1:
        raise ToolError("start: line numbers start at 1")
    if end - start + 1 > ws.caps.slice_lines_max:
        raise ToolError(
            f"end: slice of {end - start + 1} lines is over the cap of {ws.caps.slice_lines_max}; "
            f"use end <= start + {ws.caps.slice_lines_max - 1}"
        )
    chars_cap = ws.caps.slice_lines_max * 200
    lines = _lines(text, start, end, chars_cap)
    excerpt = "".join(lines)
    if len(excerpt) > chars_cap or json_width(excerpt) > 2 * chars_cap:
        raise ToolError(
            f"end: lines {start}-{end} hold {len(excerpt)} characters, over the cap of "
            f"{chars_cap}; ask for fewer lines"
        )
    return {"key": _key(ref), "unit": unit, "start": start, "end": start + len(lines) - 1, "text": excerpt}


@tool(cap=lambda caps: caps.find_k_max * (caps.snippet_chars * 2 + 64 + FILE_FIELD_CHARS) + 2 * caps.pattern_max + _OVERHEAD,
      group="context")
def ctx_find(
    ws: Workspace,
    ref: BlobRef | str,
    pattern: str,
    k: Annotated[int, Bounds(minimum=1, cap="find_k_max")] = 20,
    ignore_case: bool = False,
) -> dict:
    """Offsets, line numbers and the matching line (clipped) of the first k regex matches, and the total count.

    Over several files (``// file: <path>`` headers) a match also has ``file`` and ``file_line``.

    Args:
        ref: a BlobRef or a blob key.
        pattern: a regular expression in Python re syntax, run with a time limit.
        k: matches to return, 1 to the find cap (default cap 100).
        ignore_case: match without regard to case.
    """
    check_range("k", k, 1, ws.caps.find_k_max)
    if not pattern:
        raise ToolError("pattern: empty; give a regular expression")
    if len(pattern) > ws.caps.pattern_max:
        raise ToolError(f"pattern: {len(pattern)} characters, over the cap of {ws.caps.pattern_max}")
    rx = _compile(pattern, ignore_case)
    text = ws.store.get(ref)
    seconds = time_left(ws)
    if seconds <= 0:
        raise ToolError("ctx_find: no time left in this step; end the step and try again in the next one")
    width = 2 * ws.caps.snippet_chars
    matches, total, line, pos = [], 0, 1, 0
    complete = True
    deadline = time.monotonic() + seconds
    try:  # one pass: the first k matches are kept, the rest only counted (memory stays bounded)
        for m in rx.finditer(text, timeout=seconds):
            total += 1
            if not total & 0xFFFF and time.monotonic() > deadline:  # counting many matches: the same time limit
                raise TimeoutError
            if len(matches) < k:
                line += text.count("\n", pos, m.start())
                pos = m.start()
                lo = text.rfind("\n", 0, pos) + 1
                hi = text.find("\n", pos)
                hi = len(text) if hi == -1 else hi
                if hi - lo > width:  # clip a long line to a window that starts a little before the match
                    lo = max(lo, min(pos - ws.caps.snippet_chars // 4, hi - width))
                    hi = lo + width
                matches.append({"offset": pos, "line": line, "text": clip_json(text[lo:hi], width + 2)})
    except TimeoutError:
        if not matches:
            raise ToolError(f"pattern: {pattern!r} did not finish within {seconds:.3g} s (nested repeats such as "
                            "(a+)+ backtrack without end); simplify it or search a smaller slice") from None
        complete = False
    out = {"key": _key(ref), "pattern": pattern, "total": total, "matches": add_files(text, matches),
           "truncated": total > k}
    if not complete:
        out["total_complete"] = False  # counting stopped at the time limit: total is a lower bound
    return out


# What str.splitlines breaks lines at ("\r\n" is one break).
_BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_BREAK_RE = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_CHUNK = 1 << 20


def _lines(text: str, start: int, end: int, cap: int) -> list[str]:
    """``text.splitlines(keepends=True)[start - 1:end]`` without splitting the whole text: lines are counted in
    chunks by ``str.count`` and only a window of ``cap`` + 2 characters from line ``start`` is split (a longer
    excerpt is over the cap either way). A 24 MB blob of newlines took 12 times its size in host memory before."""
    pos, need, n = 0, start - 1, len(text)
    while need > 0:
        if pos >= n:
            return []
        hi = min(n, pos + _CHUNK)
        while hi < n and text[hi - 1] == "\r":  # keep a "\r\n" inside one chunk
            hi += 1
        found = sum(text.count(b, pos, hi) for b in _BREAKS) - text.count("\r\n", pos, hi)
        if found < need:
            need, pos = need - found, hi
            continue
        for m in _BREAK_RE.finditer(text, pos, hi):
            need -= 1
            if need == 0:
                pos = m.end()
                break
    if pos >= n:
        return []
    return text[pos: pos + cap + 2].splitlines(keepends=True)[: end - start + 1]


@lru_cache(maxsize=128)
def _compile(pattern: str, ignore_case: bool) -> Any:
    """The pattern compiled by the ``regex`` package (re-compatible syntax; matching honours a timeout, which
    the standard library's re cannot)."""
    import regex

    try:
        return regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
    except (regex.error, OverflowError, RecursionError) as exc:
        raise ToolError(f"pattern: invalid regular expression {pattern!r}: {exc}") from None


def _key(ref: BlobRef | str) -> str:
    return ref.key if isinstance(ref, BlobRef) else str(ref)


def check_range(arg: str, value: int, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"{arg}: expected an integer from {lo} to {hi}, got {value!r}")
    if not lo <= value <= hi:
        raise ToolError(f"{arg}: {value} is out of range; allowed {lo} to {hi}")
