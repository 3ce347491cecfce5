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
@click.option("--lab-settings/--no-lab-settings", default=True, show_default=True,
              help="Also turn on JupyterLab's widget saveState (overrides.json of the prefix), so saved notebooks "
                   "reopen with their widgets.")
def install(user: bool, sys_prefix: bool, prefix: str | None, name: str, lab_settings: bool) -> None:
    """Write kernel.json pointing at the running interpreter (display name "rlmlab"), and the Lab setting that
    saves widget state in notebooks."""
    from rlmlab.jupyter import install_kernel, install_lab_settings

    if user and (sys_prefix or prefix):
        raise click.UsageError("--user cannot be combined with --sys-prefix or --prefix")
    path = install_kernel(user=user, prefix=prefix, name=name)
    console = Console()
    console.print(f"installed kernel [bold]{name}[/] in {path}", soft_wrap=True)
    if not lab_settings:
        return
    if user:  # Lab reads overrides per environment; a user install leaves the environment alone
        console.print("JupyterLab: turn on Settings > Jupyter Widgets > Save Jupyter widget state, or run "
                      "`rlmlab kernel install --sys-prefix` in the environment Lab runs from", soft_wrap=True)
        return
    try:
        overrides = install_lab_settings(prefix=prefix)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"kernel installed, but not the Lab setting: {exc}") from None
    console.print(f"JupyterLab saves widget state in notebooks: {overrides}", soft_wrap=True)
