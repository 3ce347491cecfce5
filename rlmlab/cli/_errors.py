"""Bad input is one line, exit code 2: shared by the command modules."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from rlmlab.errors import ConfigError, InputFileError, RunLockedError

__all__ = ["InputError", "Interrupted", "EXIT_INTERRUPTED", "cli_error", "interrupts_in_one_line"]

EXIT_INTERRUPTED = 130  # the shell's code for a process ended by SIGINT (128 + 2)
_MAX_CHARS = 600  # a message, not a dump of the input


class InputError(click.ClickException):
    """A file, a line in it or an option's value is not what the command needs.

    Printed as one line, ``Error: <message>`` (newlines folded, long messages clipped), with exit code 2 as click
    gives usage errors, but without the usage text: the message names the file and line or the option.
    """

    exit_code = 2

    def __init__(self, message: object):
        text = " ".join(str(message).split())
        super().__init__(text if len(text) <= _MAX_CHARS else text[:_MAX_CHARS - 3] + "...")


class Interrupted(click.ClickException):
    """Ctrl-C: one line saying what was kept, exit code 130."""

    exit_code = EXIT_INTERRUPTED


def cli_error(exc: Exception) -> click.ClickException:
    """``exc`` as a one-line error: exit code 2 when the command was refused before doing anything (bad input, a
    run directory in use by another process), else 1 (a run that failed)."""
    if isinstance(exc, (ConfigError, InputFileError, RunLockedError)):
        return InputError(exc)
    return click.ClickException(str(exc))


@contextmanager
def interrupts_in_one_line() -> Iterator[None]:
    """A run command's body: Ctrl-C (SIGINT, also when the shell started the command with it ignored) ends it
    with one line saying what was saved (exit code 130), not click's "Aborted!" or a traceback."""
    from rlmlab._interrupt import honour_sigint
    from rlmlab.errors import RunInterrupted

    honour_sigint()
    try:
        yield
    except RunInterrupted as exc:
        raise Interrupted(str(exc)) from None
    except KeyboardInterrupt:
        raise Interrupted("interrupted before the run started; nothing was written") from None
