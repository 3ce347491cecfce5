"""``rlmlab kernel``: install the rlmlab Jupyter kernel."""

from __future__ import annotations

import click
from rich.console import Console


@click.group()
def kernel() -> None:
    """The rlmlab Jupyter kernel (ipykernel with the rlmlab namespace preloaded)."""


@kernel.command("install")
@click.option("--user", is_flag=True, help="Install for the current user instead of this interpreter's prefix.")
@click.option("--sys-prefix", "sys_prefix", is_flag=True, help="Install into this interpreter's prefix (default).")
@click.option("--prefix", default=None, help="Install under this prefix.")
@click.option("--name", default="rlmlab", show_default=True, help="Kernel name.")
def install(user: bool, sys_prefix: bool, prefix: str | None, name: str) -> None:
    """Write kernel.json pointing at the running interpreter (display name "rlmlab")."""
    from rlmlab.jupyter import install_kernel

    if user and (sys_prefix or prefix):
        raise click.UsageError("--user cannot be combined with --sys-prefix or --prefix")
    path = install_kernel(user=user, prefix=prefix, name=name)
    Console().print(f"installed kernel [bold]{name}[/] in {path}")
