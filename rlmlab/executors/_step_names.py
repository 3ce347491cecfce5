"""What earlier steps of a run left for the next step's grammar: the names their code assigned, which of them hold a
whole tool result (and which tool's), and the numbers their output printed."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rlmlab.memory import numbers_in

__all__ = ["output_numbers", "assigned_names", "whole_results", "result_tools"]


def output_numbers(text: str, limit: int = 40) -> list[str]:
    """Numbers printed in a step's output (the first ``limit``), which the next steps may write as literals."""
    return list(dict.fromkeys(numbers_in(text)))[:limit]


def assigned_names(code: str) -> list[str]:
    """Names a piece of code assigns at the start of a line (``x = ...``), in order; for the next step's scope."""
    return list(dict.fromkeys(m.group(1) for m in re.finditer(r"(?m)^([A-Za-z_]\w*)\s*=(?!=)", code)))


def result_tools(code: str, tools: Iterable[str]) -> dict[str, str | None]:
    """Each name the code assigns at the start of a line, by its last assignment: the tool whose whole result it
    holds (``hits = ctx_find(...)``: "ctx_find"), or None for anything else (``n = ctx_find(...)["total"]``)."""
    call = re.compile(r"(%s)\(.*\)" % "|".join(map(re.escape, tools))) if tools else None
    last: dict[str, str | None] = {}
    for m in re.finditer(r"(?m)^([A-Za-z_]\w*)\s*=(?!=)\s*(.*)$", code):
        last.pop(m.group(1), None)
        found = call.fullmatch(m.group(2).strip()) if call else None
        last[m.group(1)] = found.group(1) if found else None
    return last


def whole_results(code: str, tools: Iterable[str]) -> tuple[list[str], list[str]]:
    """(names the code leaves holding a whole tool result, names it assigns anything else), by each name's last
    assignment at the start of a line: ``hits = ctx_find(...)`` is whole, ``n = ctx_find(...)["total"]`` is not."""
    held = result_tools(code, tools)
    return [n for n, t in held.items() if t], [n for n, t in held.items() if not t]
