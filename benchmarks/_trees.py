"""The rlmlab of an earlier commit, for benchmarks that measure it beside this checkout (``--before REF``)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def before_tree(ref: str) -> Path:
    """The rlmlab package of commit ``ref``, extracted into a temporary directory (a path for PYTHONPATH)."""
    out = Path(tempfile.mkdtemp(prefix="rlmlab-before-"))
    archive = subprocess.run(["git", "-C", str(PROJECT), "archive", ref, "rlmlab"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out
