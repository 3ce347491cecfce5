"""Where the project's own files are: the checkout (or source tree) that holds ``data/``, ``configs/`` and
``notebooks/`` beside the package. Relative paths in configs start here, not at the working directory."""

from pathlib import Path

__all__ = ["PROJECT_ROOT", "in_checkout"]

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def in_checkout(path: str | Path) -> str | None:
    """``path`` relative to the checkout, POSIX style ("data/tasks/e14/arith_train.jsonl"); None outside it."""
    try:
        return Path(path).resolve().relative_to(PROJECT_ROOT).as_posix()
    except ValueError:
        return None
