"""Where the project's own files are: the checkout (or source tree) that holds ``data/``, ``configs/`` and
``notebooks/`` beside the package. Relative paths in configs start here, not at the working directory."""

import os
import shlex
import shutil
import sys
from pathlib import Path

__all__ = ["PROJECT_ROOT", "RUNS_ENV", "in_checkout", "runs_home", "rlmlab_command"]

RUNS_ENV = "RLMLAB_RUNS_DIR"

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def in_checkout(path: str | Path) -> str | None:
    """``path`` relative to the checkout, POSIX style ("data/tasks/e14/arith_train.jsonl"); None outside it."""
    try:
        return Path(path).resolve().relative_to(PROJECT_ROOT).as_posix()
    except ValueError:
        return None


def runs_home() -> Path:
    """The directory runs go to when no runs directory is given, the same for the CLI, the magics and the guides.

    ``$RLMLAB_RUNS_DIR`` when set; else ``<checkout>/runs`` when the working directory is inside the checkout
    (JupyterLab starts a guide in ``notebooks/``, the CLI is run from the top: both write to ``<checkout>/runs``);
    else ``./runs``. Absolute; not created here.
    """
    if os.environ.get(RUNS_ENV):
        return Path(os.environ[RUNS_ENV]).expanduser().resolve()
    here = Path.cwd().resolve()
    return PROJECT_ROOT / "runs" if here == PROJECT_ROOT or PROJECT_ROOT in here.parents else here / "runs"


def rlmlab_command() -> str:
    """How to type ``rlmlab`` here, for a printed hint a user copies: ``rlmlab`` when that name on PATH is this
    environment's (an activated venv); else this environment's script, relative to the working directory when under
    it (``.venv/bin/rlmlab`` in the checkout, as the README writes it); else ``<python> -m rlmlab.cli``."""
    script = Path(sys.executable).parent / "rlmlab"
    if not script.is_file():
        return f"{shlex.quote(sys.executable)} -m rlmlab.cli"
    found = shutil.which("rlmlab")
    if found and Path(found).resolve() == script.resolve():
        return "rlmlab"
    try:
        shown = script.relative_to(Path.cwd())
    except ValueError:
        shown = script
    return shlex.quote(str(shown))
