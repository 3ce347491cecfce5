"""``rlmlab repl``: a terminal REPL with the rlmlab namespace."""

from __future__ import annotations

import code
import sys

import click
from rich.console import Console
from rich.pretty import Pretty

BANNER = "rlmlab REPL: handles, not payloads. tools() lists the tools; blob(text) stores text and returns a BlobRef."


@click.command()
@click.option("--store", "store_path", default=None, type=click.Path(dir_okay=False),
              help="SQLite file that keeps blobs across sessions.")
def repl(store_path: str | None) -> None:
    """Start a Python REPL whose namespace holds the rlmlab tools (rich output)."""
    from rlmlab.namespace import build_namespace

    console = Console()
    ns = build_namespace(store_path=store_path)

    def displayhook(value: object) -> None:
        if value is None:
            return
        ns["_"] = value
        console.print(value if hasattr(value, "__rich__") else Pretty(value))

    sys.displayhook = displayhook
    code.interact(banner=BANNER, local=ns, exitmsg="")
