"""``rlmlab repl``: a terminal REPL with the rlmlab namespace."""

from __future__ import annotations

import code
import sys

import click
from rich.console import Console
from rich.pretty import Pretty

from rlmlab.cli._errors import InputError

BANNER = "rlmlab REPL: handles, not payloads. tools() lists the tools; blob(text) stores text and returns a BlobRef."


@click.command()
@click.option("--store", "store_path", default=None, type=click.Path(dir_okay=False),
              help="SQLite file that keeps blobs across sessions.")
def repl(store_path: str | None) -> None:
    """Start a Python REPL whose namespace holds the rlmlab tools (rich output)."""
    import sqlite3

    from rlmlab.namespace import build_namespace

    console = Console()
    try:
        ns = build_namespace(store_path=store_path)
    except sqlite3.DatabaseError as exc:  # a file that is not SQLite, or a SQLite file of something else
        raise InputError(f"--store {store_path}: not a SQLite database of blobs ({exc})") from None

    def displayhook(value: object) -> None:
        if value is None:
            return
        ns["_"] = value
        console.print(value if hasattr(value, "__rich__") else Pretty(value))

    sys.displayhook = displayhook
    code.interact(banner=BANNER, local=ns, exitmsg="")
