"""Which file of a multi-file context a line is in: the ``// file: <path>`` headers rlmlab writes before each file
of a directory context (``rlmlab.experiments.FILE_HEADER``). A match of ``ctx_find`` or ``ast_query`` over such a
context carries ``file`` (the path of the last header above it) and ``file_line`` (its line within that file), so
a step can group matches by file or list them as ``path:line`` without finding the headers itself."""

from __future__ import annotations

import bisect
import re

__all__ = ["file_headers", "add_files", "FILE_FIELD_CHARS"]

# A match's file and file_line fields at most (a path is clipped to 256 characters), for the tools' output caps.
FILE_FIELD_CHARS = 320
_PATH_MAX = 256

_HEADER = re.compile(r"(?m)^// file: ([^\n]+)$")


def file_headers(text: str) -> tuple[list[int], list[str]]:
    """(line numbers, paths) of the context's file headers, in order; empty for a single file."""
    if not text.startswith("// file: ") and "\n// file: " not in text:
        return [], []
    lines, paths, line, pos = [], [], 1, 0
    for m in _HEADER.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        lines.append(line)
        paths.append(m.group(1).strip()[:_PATH_MAX])
    return lines, paths


def add_files(text: str, matches: list[dict]) -> list[dict]:
    """``matches`` (dicts with a ``line``), each given ``file`` and ``file_line`` when ``text`` has file headers and
    the match is below one; unchanged otherwise."""
    lines, paths = file_headers(text)
    if not lines:
        return matches
    for m in matches:
        i = bisect.bisect_left(lines, m["line"]) - 1  # the last header strictly above the match's line
        if i >= 0:
            m["file"], m["file_line"] = paths[i], m["line"] - lines[i]
    return matches
