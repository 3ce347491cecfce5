"""The console every table goes to: the terminal's width, or, when output is piped or captured, each table at its
natural width (everything else at 200 columns); or, for ``show`` commands, everything within 100 columns.

Rich lays out for 80 columns when stdout is not a terminal, which cut table cells short ("…") and split numbers
across lines (``1,69`` / ``3``) in logs and notebooks. A log has no width to fit, so a table there is printed as
wide as its widest cells and header words need; text and panels keep 200 columns (they wrap between words).
"""

from __future__ import annotations

import copy
import dataclasses
import os
from typing import Any

from rich.console import Console, Group
from rich.measure import Measurement
from rich.protocol import rich_cast
from rich.table import Table

__all__ = ["wide_console", "PIPED_WIDTH", "FIT_WIDTH", "natural_width", "column_blocks"]

PIPED_WIDTH = 200
FIT_WIDTH = 100  # what `rlmlab rlm show` and `experiment show` keep to in a log unless --wide
_MOST = 100_000  # the widest line a table may get in a log (a table of that width is a bug elsewhere)


def natural_width(console: Console, table: Table) -> int:
    """Columns ``table`` takes with no width limit: its cells and headers unwrapped, plus borders and padding."""
    return Measurement.get(console, console.options.update(max_width=_MOST), table).maximum


def column_blocks(console: Console, table: Table, fit: int) -> list[Table]:
    """``table`` as tables of at most ``fit`` columns each: its leading left-aligned columns (what a row is: a
    condition, task and rollout; at least the first column, in at most half of ``fit``), then as many of the
    other columns, in order, as fit; a cell is never cut, so one column too wide for ``fit`` gets a block as wide
    as it needs. The blocks after the first are titled "(continued)"."""
    keys = 1
    while (keys < len(table.columns) - 1 and table.columns[keys].justify == "left"
           and natural_width(console, _part(table, table.columns[:keys + 1], True)) <= fit // 2):
        keys += 1
    first, rest = table.columns[:keys], table.columns[keys:]
    blocks: list[list[Any]] = [[]]
    for column in rest:
        if blocks[-1] and natural_width(console, _part(table, first + blocks[-1] + [column], True)) > fit:
            blocks.append([])
        blocks[-1].append(column)
    return [_part(table, first + cols, n == 0) for n, cols in enumerate(blocks)]


def _part(table: Table, columns: list[Any], first: bool) -> Table:
    part = copy.copy(table)
    part.columns = [dataclasses.replace(c, _index=i) for i, c in enumerate(columns)]
    if not first:
        part.title = "(continued)" if table.title else None  # (a long title would wrap in a narrow block)
    return part


class _LogConsole(Console):
    """A console writing to a pipe or file: each table (also inside a Group) at its natural width."""

    def print(self, *objects: Any, **kwargs: Any) -> None:  # type: ignore[override]
        objects = tuple(rich_cast(o) for o in objects)  # an object's __rich__ (ExperimentRun's table)
        if kwargs.get("width") is not None or not any(isinstance(o, (Table, Group)) for o in objects):
            super().print(*objects, **kwargs)  # text keeps print's own joining of several objects on a line
            return
        for obj in _flat(objects):
            if isinstance(obj, Table) and self._fit and natural_width(self, obj) > self._fit:
                parts: list[Any] = column_blocks(self, obj, self._fit)
            else:
                parts = [obj]
            for part in parts:
                width = max(self._base, natural_width(self, part)) if isinstance(part, Table) else self._base
                self.width = width
                try:
                    super().print(part, **kwargs)
                finally:
                    self.width = self._base

    def set_base(self, width: int, fit: int | None = None) -> "_LogConsole":
        self._base, self._fit = width, fit
        return self


def _flat(objects: tuple[Any, ...]) -> list[Any]:
    """Groups opened up, so each table in one is measured on its own."""
    out: list[Any] = []
    for obj in objects:
        obj = rich_cast(obj)
        out += _flat(tuple(obj.renderables)) if isinstance(obj, Group) else [obj]
    return out


def wide_console(stderr: bool = False, fit: int | None = None) -> Console:
    """A Console as wide as the terminal, or, when not a terminal, one printing each table at its natural width
    and the rest at :data:`PIPED_WIDTH` columns (or ``COLUMNS`` if that is wider: some environments export
    COLUMNS=80 to every child process). ``fit`` (:data:`FIT_WIDTH`): not a terminal, text and panels wrap at
    ``fit`` columns (or a wider ``COLUMNS``) and a wider table is printed as :func:`column_blocks` of it."""
    probe = Console(stderr=stderr)
    if probe.is_terminal:
        return probe
    try:
        asked = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        asked = 0
    if fit:
        fit = max(fit, asked)
        return _LogConsole(stderr=stderr, width=fit).set_base(fit, fit)
    base = max(PIPED_WIDTH, asked)
    return _LogConsole(stderr=stderr, width=base).set_base(base)
