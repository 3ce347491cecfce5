"""The console every table goes to: the terminal's width, or 200 columns when output is piped or captured.

Rich lays out for 80 columns when stdout is not a terminal, which cut table cells short ("…") in logs and
notebooks; tables built here also fold long cells instead of cutting them.
"""

from __future__ import annotations

import os

from rich.console import Console

__all__ = ["wide_console", "PIPED_WIDTH"]

PIPED_WIDTH = 200


def wide_console(stderr: bool = False) -> Console:
    """A Console as wide as the terminal, or, when not a terminal, :data:`PIPED_WIDTH` columns (or ``COLUMNS``
    if that is wider: some environments export COLUMNS=80 to every child process)."""
    probe = Console(stderr=stderr)
    if probe.is_terminal:
        return probe
    try:
        asked = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        asked = 0
    return Console(stderr=stderr, width=max(PIPED_WIDTH, asked))
