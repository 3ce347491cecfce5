"""The ``rlmlab`` Jupyter kernel: ipykernel with the rlmlab extension loaded at start."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["KERNEL_NAME", "kernel_spec", "install_kernel"]

KERNEL_NAME = "rlmlab"


def kernel_spec(python: str = "python") -> dict[str, Any]:
    """kernel.json content; ``python`` is the interpreter the kernel runs on."""
    return {
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}", "--ext=rlmlab"],
        "display_name": "rlmlab",
        "language": "python",
        "metadata": {"debugger": True},
    }


def install_kernel(*, user: bool = False, prefix: str | None = None, name: str = KERNEL_NAME) -> str:
    """Install the kernel spec for the running interpreter; returns the directory it was written to.

    Default location: this interpreter's prefix (the venv), so notebooks run
    from the venv find it; ``user=True`` writes to the user's Jupyter dir.
    """
    from jupyter_client.kernelspec import KernelSpecManager

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "kernel.json").write_text(json.dumps(kernel_spec(sys.executable), indent=1) + "\n")
        if not user and prefix is None:
            prefix = sys.prefix
        return KernelSpecManager().install_kernel_spec(tmp, name, user=user, prefix=prefix)
