"""``rlmlab repl``: a terminal REPL with the rlmlab namespace."""

from __future__ import annotations

import code
import sys

import click
from rich.console import Console
from rich.pretty import Pretty

from rlmlab.cli._errors import InputError

BANNER = ("rlmlab REPL: handles, not payloads. tools() lists the tools; blob(text) stores text and returns a BlobRef. "
          "Tab completes names; rlmlab errors show one line (traceback() shows the last one in full).")


class _Console(code.InteractiveConsole):
    """The standard console, except that rlmlab's own errors (a ToolError's message names the argument and its
    allowed range) print as one line; ``traceback()`` prints the last one's frames."""

    last: BaseException | None = None

    def showtraceback(self) -> None:
        from rlmlab.errors import RLMLabError

        _, value, _ = sys.exc_info()
        if isinstance(value, RLMLabError):
            type(self).last = value
            self.write(f"{type(value).__name__}: {value}\n")
            return
        super().showtraceback()


def _print_last() -> None:
    import traceback

    if _Console.last is None:
        print("no rlmlab error yet")
        return
    traceback.print_exception(_Console.last)


def _enable_completion(ns: dict) -> None:
    """Tab completion over the namespace (readline is missing on some platforms: then none)."""
    try:
        import readline
        import rlcompleter
    except ImportError:  # pragma: no cover - Windows without pyreadline
        return
    readline.set_completer(rlcompleter.Completer(ns).complete)
    readline.parse_and_bind("tab: complete")


@click.command()
@click.option("--store", "store_path", default=None, type=click.Path(dir_okay=False),
              help="SQLite file that keeps blobs across sessions.")
def repl(store_path: str | None) -> None:
    """Start a Python REPL whose namespace holds the rlmlab tools (rich output, tab completion)."""
    import sqlite3

    from rlmlab.namespace import build_namespace

    console = Console()
    try:
        ns = build_namespace(store_path=store_path)
    except sqlite3.DatabaseError as exc:  # a file that is not SQLite, or a SQLite file of something else
        raise InputError(f"--store {store_path}: not a SQLite database of blobs ({exc})") from None
    ns["traceback"] = _print_last

    def displayhook(value: object) -> None:
        if value is None:
            return
        ns["_"] = value
        console.print(value if hasattr(value, "__rich__") else Pretty(value))

    sys.displayhook = displayhook
    _enable_completion(ns)
    _Console(locals=ns).interact(banner=BANNER, exitmsg="")
