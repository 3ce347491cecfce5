"""Where the project's own files are: the checkout (or source tree) that holds ``data/``, ``configs/`` and
``notebooks/`` beside the package. Relative paths in configs start here, not at the working directory."""

from pathlib import Path

__all__ = ["PROJECT_ROOT"]

PROJECT_ROOT = Path(__file__).resolve().parents[1]
