"""rlmlab errors as one-line CLI errors."""

from __future__ import annotations

import click

from rlmlab.errors import RunLockedError

__all__ = ["cli_error"]


def cli_error(exc: Exception) -> click.ClickException:
    """``exc`` as a one-line error: exit code 2 when the command was refused before doing anything (a run
    directory in use by another process), else 1."""
    error = click.ClickException(str(exc))
    if isinstance(exc, RunLockedError):
        error.exit_code = 2
    return error
