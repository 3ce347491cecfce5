"""Where the project's own files are: the checkout (or source tree) that holds ``data/``, ``configs/`` and
``notebooks/`` beside the package. Relative paths in configs start here, not at the working directory."""

import os
from pathlib import Path

__all__ = ["PROJECT_ROOT", "RUNS_ENV", "in_checkout", "runs_home"]

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
