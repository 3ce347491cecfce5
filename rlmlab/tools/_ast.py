"""ast_query: tree-sitter queries over Rust source held in a blob or a file, with bounded results."""

from __future__ import annotations

from typing import Annotated

from rlmlab.errors import ToolError
from rlmlab.handles import BlobRef
from rlmlab.tools._bounded import run_bounded, time_left
from rlmlab.tools._clip import clip_json
from rlmlab.tools._files import FILE_FIELD_CHARS, add_files
from rlmlab.tools._paths import read_path
from rlmlab.tools._context import check_range
from rlmlab.tools._registry import tool
from rlmlab.tools._schema import Bounds
from rlmlab.tools._workspace import Workspace

__all__ = ["ast_query"]


_MAX_FILE_BYTES = 64 << 20  # a path's file is read whole on the host


def _source_of(ws: Workspace, ref_or_path: BlobRef | str) -> tuple[str, str]:
    """(text, label) of a BlobRef, a blob key, or a file path (read as :func:`read_path` allows)."""
    if isinstance(ref_or_path, BlobRef):
        return ws.store.get(ref_or_path), ref_or_path.key
    if not isinstance(ref_or_path, str):
        raise ToolError(f"ref_or_path: {type(ref_or_path).__name__}; expected a BlobRef, a blob key or a .rs path")
    if ref_or_path in ws.store:
        return ws.store.get(ref_or_path), ref_or_path
    if not ref_or_path.endswith(".rs"):
        raise ToolError(f"ref_or_path: {ref_or_path!r} is not a Rust source file (.rs) nor a blob key; "
                        "ast_query reads only those by path (give other text as a blob)")
    return read_path(ws.path_roots, ref_or_path, arg="ref_or_path", suffix=".rs", max_bytes=_MAX_FILE_BYTES)


@tool(cap=lambda caps: caps.find_k_max * (caps.captures_max * (caps.snippet_chars + 48) + 4 * caps.snippet_chars
                                        + 80 + FILE_FIELD_CHARS) + 512, group="code")
def ast_query(
    ws: Workspace,
    ref_or_path: BlobRef | str,
    query: str,
    k: Annotated[int, Bounds(minimum=1, cap="find_k_max")] = 20,
) -> dict:
    """Run a tree-sitter query (s-expression) over Rust source; first k matches with line numbers and captures.

    A match also has its line's ``text`` and, over several files (``// file:`` headers), ``file`` and ``file_line``.

    Args:
        ref_or_path: a BlobRef, a blob key, or the path of a Rust file.
        query: a tree-sitter query, e.g. "(function_item name: (identifier) @name)".
        k: matches to return, 1 to the find cap (default cap 100).
    """
    import rlmlab.oracle  # noqa: F401 - tree-sitter is loaded here, before the fork, not in each worker

    check_range("k", k, 1, ws.caps.find_k_max)
    if not query.strip():
        raise ToolError("query: empty; give a tree-sitter s-expression such as (function_item name: (identifier) @name)")
    if len(query) > ws.caps.pattern_max:
        raise ToolError(f"query: {len(query)} characters, over the cap of {ws.caps.pattern_max}")
    text, label = _source_of(ws, ref_or_path)
    total, matches = run_bounded(_first_matches, text, label, query, k, ws.caps.snippet_chars,
                                 ws.caps.captures_max, ws.extras.get("parse_cache"),
                                 seconds=time_left(ws), memory_mb=ws.caps.tool_memory_mb, what="ast_query")
    return {"source": label, "query": query, "total": total, "matches": add_files(text, matches), "truncated": total > k}


def _first_matches(text: str, label: str, query: str, k: int, width: int, captures_max: int,
                   cache: object) -> tuple[int, list[dict]]:
    """(number of matches, the first k as the tool shows them); runs in the bounded worker."""
    from rlmlab.oracle import AstQueryError, TreeSitterOracle

    oracle = TreeSitterOracle(text, label, cache=cache)
    try:
        total, found = oracle.query_first(query, k)
    except AstQueryError as exc:
        raise ToolError(f"query: {exc}") from None
    matches = []
    lines = oracle.entry.lines if found else []  # the parsed source's own lines, split once and kept with it
    for m in found:
        shown: dict[str, list[str]] = {}
        for name, c in [(name, c) for name, cs in m.captures.items() for c in cs][:captures_max]:
            shown.setdefault(name, []).append(clip_json(" ".join(c.text.split())[:width], width + 2))
        line = lines[m.line - 1] if 0 < m.line <= len(lines) else ""
        matches.append({"line": m.line, "text": clip_json(line[:2 * width], 2 * width + 2),
                        "captures": {n: v[0] if len(v) == 1 else v for n, v in shown.items()}})
    return total, matches
