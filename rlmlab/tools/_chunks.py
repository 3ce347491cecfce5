"""``ctx_chunks``: a stored payload as handles to consecutive parts, for step code that hands each part to a
sub-run (``rlm_query_batched(prompts, ctx_chunks(context, 8))``) without reading the text itself. Its group is
"recursion": an executor offers it only to a run that may start sub-runs (``max_depth`` >= 2)."""

from __future__ import annotations

from typing import Annotated

from rlmlab.errors import ToolError
from rlmlab.handles import BlobRef, content_key
from rlmlab.tools._registry import tool
from rlmlab.tools._schema import Bounds
from rlmlab.tools._workspace import Workspace

__all__ = ["ctx_chunks", "CHUNKS_MAX"]

CHUNKS_MAX = 256  # most parts one call makes


@tool(cap=lambda caps: CHUNKS_MAX * 160, group="recursion")
def ctx_chunks(ws: Workspace, ref: BlobRef | str, n: Annotated[int, Bounds(minimum=1, maximum=CHUNKS_MAX)]) -> list:
    """Split a payload into n consecutive parts of about equal size, cut at line ends, and return their handles.

    Args:
        ref: a BlobRef or a blob key.
        n: how many parts, 1 to 256 (fewer when the payload has fewer lines).
    """
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= CHUNKS_MAX:
        raise ToolError(f"n: {n!r}; expected an integer from 1 to {CHUNKS_MAX}")
    text = ws.store.get(ref)
    parts = split_lines(text, n)
    fresh = sum(len(p) for p in parts if not ws.store.holds(content_key(p)))
    ws.charge("blob_quota_chars", fresh, ws.caps.blob_quota_chars)
    return [ws.store.put(p) for p in parts]


def split_lines(text: str, n: int) -> list[str]:
    """``text`` as at most ``n`` non-empty consecutive parts of about ``len(text) / n`` characters, each ending at a
    line end (a part holds one line whole when that line is longer than the target); joined, they are ``text``."""
    if not text:
        return [""]
    target = max(1, -(-len(text) // n))
    parts, start = [], 0
    while start < len(text):
        cut = start + target
        if cut >= len(text) or len(parts) == n - 1:
            parts.append(text[start:])
            break
        end = text.find("\n", cut - 1)
        end = len(text) if end < 0 else end + 1
        parts.append(text[start:end])
        start = end
    return parts
