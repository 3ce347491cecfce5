"""The console every table goes to: the terminal's width, or, when output is piped or captured, each table at its
natural width (everything else at 200 columns).

Rich lays out for 80 columns when stdout is not a terminal, which cut table cells short ("…") and split numbers
across lines (``1,69`` / ``3``) in logs and notebooks. A log has no width to fit, so a table there is printed as
wide as its widest cells and header words need; text and panels keep 200 columns (they wrap between words).
"""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console, Group
from rich.measure import Measurement
from rich.protocol import rich_cast
from rich.table import Table

__all__ = ["wide_console", "PIPED_WIDTH", "natural_width"]

PIPED_WIDTH = 200
_MOST = 100_000  # the widest line a table may get in a log (a table of that width is a bug elsewhere)


def natural_width(console: Console, table: Table) -> int:
    """Columns ``table`` takes with no width limit: its cells and headers unwrapped, plus borders and padding."""
    return Measurement.get(console, console.options.update(max_width=_MOST), table).maximum


class _LogConsole(Console):
    """A console writing to a pipe or file: each table (also inside a Group) at its natural width."""

    def print(self, *objects: Any, **kwargs: Any) -> None:  # type: ignore[override]
        objects = tuple(rich_cast(o) for o in objects)  # an object's __rich__ (ExperimentRun's table)
        if kwargs.get("width") is not None or not any(isinstance(o, (Table, Group)) for o in objects):
            super().print(*objects, **kwargs)  # text keeps print's own joining of several objects on a line
            return
        for obj in _flat(objects):
            width = max(self._base, natural_width(self, obj)) if isinstance(obj, Table) else self._base
            self.width = width
            try:
                super().print(obj, **kwargs)
            finally:
                self.width = self._base

    def set_base(self, width: int) -> "_LogConsole":
        self._base = width
        return self


def _flat(objects: tuple[Any, ...]) -> list[Any]:
    """Groups opened up, so each table in one is measured on its own."""
    out: list[Any] = []
    for obj in objects:
        obj = rich_cast(obj)
        out += _flat(tuple(obj.renderables)) if isinstance(obj, Group) else [obj]
    return out


def wide_console(stderr: bool = False) -> Console:
    """A Console as wide as the terminal, or, when not a terminal, one printing each table at its natural width
    and the rest at :data:`PIPED_WIDTH` columns (or ``COLUMNS`` if that is wider: some environments export
    COLUMNS=80 to every child process)."""
    probe = Console(stderr=stderr)
    if probe.is_terminal:
        return probe
    try:
        asked = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        asked = 0
    base = max(PIPED_WIDTH, asked)
    return _LogConsole(stderr=stderr, width=base).set_base(base)
