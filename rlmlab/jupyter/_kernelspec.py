"""The ``rlmlab`` Jupyter kernel (ipykernel with the rlmlab extension loaded at start), and the JupyterLab setting
that makes its widgets survive a reopened notebook.

Without the widget manager's ``saveState``, a notebook saved in JupyterLab keeps only each widget's model id, so
reopening it (or restarting its kernel) shows "Error displaying widget: model not found", and Lab never falls back
to the static HTML beside it. :func:`install_lab_settings` turns ``saveState`` on for the environment, as a Lab
settings override; ``rlmlab kernel install`` (which ``make install`` runs) does both.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["KERNEL_NAME", "kernel_spec", "install_kernel", "install_lab_settings", "LAB_OVERRIDES", "lab_settings_dir"]

KERNEL_NAME = "rlmlab"

# Lab settings rlmlab needs: save each widget's state in the notebook on save, so it renders when reopened.
LAB_OVERRIDES = {"@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": True}}


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


def lab_settings_dir(prefix: str | None = None) -> Path:
    """JupyterLab's application settings directory for an environment prefix (default: this interpreter's):
    ``{prefix}/share/jupyter/lab/settings``, where Lab reads ``overrides.json``."""
    return Path(prefix or sys.prefix) / "share" / "jupyter" / "lab" / "settings"


def install_lab_settings(settings_dir: str | Path | None = None, *, prefix: str | None = None) -> Path:
    """Merge :data:`LAB_OVERRIDES` into ``overrides.json`` in ``settings_dir`` (default: :func:`lab_settings_dir`
    of ``prefix``) and return its path. Other plug-ins' settings and other keys of the widget manager's are kept;
    a file that is not a JSON object raises ValueError naming it, and is left as it was."""
    folder = Path(settings_dir) if settings_dir is not None else lab_settings_dir(prefix)
    path = folder / "overrides.json"
    current: dict[str, Any] = {}
    if path.is_file():
        try:
            current = json.loads(path.read_text(encoding="utf-8") or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not JSON ({exc}); add {json.dumps(LAB_OVERRIDES)} to it by hand") from None
        if not isinstance(current, dict):
            raise ValueError(f"{path}: not a JSON object; add {json.dumps(LAB_OVERRIDES)} to it by hand")
    merged = dict(current)
    for plugin, settings in LAB_OVERRIDES.items():
        merged[plugin] = {**(merged.get(plugin) or {}), **settings}
    if merged != current or not path.is_file():
        from rlmlab._files import write_atomic

        write_atomic(path, json.dumps(merged, indent=2) + "\n")
    return path
