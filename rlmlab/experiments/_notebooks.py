"""The experiment notebooks (``notebooks/``): one papermill notebook per experiment family.

``run_notebook("E7", {"lm": "local", "tasks": 10})`` picks E7's family notebook, checks the parameters
against its ``parameters`` cell, executes it through papermill on the ``rlmlab`` kernel with
``run_dir`` set to a fresh ``runs/<run-id>/``, and writes the executed notebook there, next to the
results it produced. A failing cell still leaves the executed notebook (with the traceback) behind.
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlmlab._paths import PROJECT_ROOT, rlmlab_command, runs_home
from rlmlab.errors import ConfigError, RLMLabError

__all__ = ["NOTEBOOKS_DIR", "FAMILIES", "MAIN_JOB", "notebook_for", "notebook_parameters", "run_notebook",
           "NotebookRun", "NotebookFailed", "parse_parameter"]

NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
MAIN_JOB = "main_job.ipynb"  # make demo's notebook: several experiments side by side

# Notebook file -> the experiments it runs (its parameters cell holds one of them as the default).
FAMILIES: dict[str, tuple[str, ...]] = {
    "exp_layer_ablation.ipynb": ("E1", "E2", "E3", "E4", "E5", "E6"),
    "exp_prompt_leakage.ipynb": ("E7",),
    "exp_integration_mode.ipynb": ("E8",),
    "exp_closed_loop.ipynb": ("E9", "E10", "E11"),
    "exp_matts.ipynb": ("E12",),
    "exp_small_model.ipynb": ("E13",),
    "exp_learning.ipynb": ("E14",),
    "exp_long_context.ipynb": ("E15",),
}


def notebook_for(experiment: str) -> Path:
    """The family notebook of ``experiment`` ("E7"), or ``experiment`` itself if it names a notebook file."""
    if experiment.endswith(".ipynb"):
        path = Path(experiment)
        path = path if path.exists() else NOTEBOOKS_DIR / experiment
        if not path.exists():
            raise ConfigError(f"notebook {experiment}: no such file (looked in . and {NOTEBOOKS_DIR})")
        return path
    for name, ids in FAMILIES.items():
        if experiment.upper() in ids:
            return NOTEBOOKS_DIR / name
    known = ", ".join(e for ids in FAMILIES.values() for e in ids)
    raise ConfigError(f"experiment {experiment!r} has no notebook; known: {known}, or a .ipynb path")


def notebook_parameters(path: str | Path) -> dict[str, Any]:
    """The ``parameters`` cell's names and default values (papermill's reading of it).

    ConfigError naming the file (and line) when it is not UTF-8 JSON or not a notebook papermill can read.
    """
    import papermill as pm

    from rlmlab._files import json_problem, read_text, strict_json
    from rlmlab.errors import InputFileError

    try:
        doc = strict_json(read_text(path))
    except InputFileError as exc:
        raise ConfigError(str(exc)) from None
    except ValueError as exc:
        line = f":{exc.lineno}" if getattr(exc, "lineno", None) else ""
        raise ConfigError(f"{path}{line}: {json_problem(exc)}; expected a Jupyter notebook") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        raise ConfigError(f"{path}: cells: missing or not a list; expected a Jupyter notebook (nbformat 4)")
    try:
        params = pm.inspect_notebook(str(path))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:  # nbformat's and papermill's reading errors
        raise ConfigError(f"{path}: not a notebook papermill can read ({type(exc).__name__}: {exc})") from None
    if not params:
        raise ConfigError(f"{path}: no cell tagged 'parameters'")
    return {name: p["default"] for name, p in params.items()}


def parse_parameter(text: str) -> Any:
    """A ``-p NAME VALUE`` value: a Python literal (10, None, ["E1", "E6"]) or else the text itself."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


class NotebookFailed(RLMLabError):
    """A cell raised; the message names the cell, the error and the executed notebook holding the traceback."""


@dataclass
class NotebookRun:
    """An executed notebook: where it is and the run directory it wrote."""

    notebook: Path
    run_dir: Path
    parameters: dict[str, Any]


def _check_kernel(kernel: str) -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    if kernel not in KernelSpecManager().find_kernel_specs():
        raise ConfigError(f"Jupyter kernel {kernel!r} is not installed: run "
                          f"`{rlmlab_command()} kernel install --sys-prefix` "
                          "(make demo and make test do)")


def run_notebook(experiment: str, parameters: dict[str, Any] | None = None, *, runs_dir: str | Path | None = None,
                 kernel: str = "rlmlab", progress: bool = True, log_output: bool = False) -> NotebookRun:
    """Execute ``experiment``'s notebook with ``parameters``; returns where the executed notebook is.

    ``progress`` shows papermill's progress bar, except with ``log_output``, which streams the cells' output here
    instead. Ctrl-C (in the main thread) interrupts the kernel's cell, so the run in it saves what it did, then
    raises RunInterrupted naming the run and the executed notebook; a second Ctrl-C stops waiting. Unknown
    parameter names are a ConfigError listing the notebook's. ``run_dir`` defaults to a new
    ``<runs_dir>/<experiment>-<time>-<id>/`` (``runs_dir`` default: :func:`~rlmlab._paths.runs_home`);
    ``experiment`` is passed on unless it names a notebook file.
    """
    import papermill as pm

    from rlmlab.executors import new_run_id

    path = notebook_for(experiment)
    defaults = notebook_parameters(path)
    params = dict(parameters or {})
    if not experiment.endswith(".ipynb") and "experiment" in defaults:
        params.setdefault("experiment", experiment.upper())
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise ConfigError(f"{path.name}: unknown parameter(s) {unknown}; its parameters: {sorted(defaults)}")
    prefix = str(params.get("experiment", path.stem))
    run_dir = Path(params.get("run_dir") or Path(runs_dir or runs_home()) / new_run_id(prefix)).resolve()
    params["run_dir"] = str(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    _check_kernel(kernel)
    out = run_dir / path.name
    kernels: list = []
    try:
        # log_output streams the cells' stdout/stderr here as they run (papermill's own logging needs a handler);
        # then papermill's progress bar is left out: its carriage returns run into the cells' lines (a log gets one
        # long line of "Executing: 25%|..." with the progress lines glued on)
        streams = {"stdout_file": sys.stdout, "stderr_file": sys.stderr} if log_output else {}
        progress = progress and not log_output
        with _interrupting_the_kernel(kernels, run_dir, out) as interrupted:
            pm.execute_notebook(str(path), str(out), parameters=params, kernel_name=kernel, progress_bar=progress,
                                cwd=str(run_dir), kernel_manager_class=_tracked_kernel_manager(kernels), **streams)
    except pm.PapermillExecutionError as exc:
        if interrupted:
            from rlmlab.errors import RunInterrupted
            from rlmlab.experiments._interrupt import without_resume_hint

            # the kernel's line, less its "continue it with the same command and --resume": no notebook command
            # takes --resume (the notebook's run_dir parameter names the run to continue)
            said = without_resume_hint(exc.evalue.strip()) or "interrupted"
            raise RunInterrupted(f"{said}; the executed notebook is {out}", directory=run_dir) from None
        raise NotebookFailed(f"{path.name}: cell {exc.exec_count} failed: {exc.ename}: {exc.evalue}\n"
                             f"the executed notebook, with the traceback, is {out}") from None
    return NotebookRun(out, run_dir, params)


def _tracked_kernel_manager(kernels: list) -> type:
    """nbclient's kernel manager class, noting each instance in ``kernels`` so Ctrl-C can reach the kernel. The
    kernel talks over Unix sockets (IPC) where there are some: over TCP, ipykernel logs a warning about plain-text
    traffic to stderr, and every notebook run printed it (its sockets are on localhost either way)."""
    from jupyter_client.manager import AsyncKernelManager

    class TrackedKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: Any):
            if os.name == "posix":
                kwargs.setdefault("transport", "ipc")
            super().__init__(**kwargs)
            kernels.append(self)

    return TrackedKernelManager


@contextmanager
def _interrupting_the_kernel(kernels: list, run_dir: Path, out: Path) -> Iterator[list]:
    """Ctrl-C while a notebook runs becomes Kernel -> Interrupt: the kernel sits in a session of its own
    (jupyter_client starts it so), so a terminal's Ctrl-C never reaches it, and papermill's reaction to the
    KeyboardInterrupt is to shut the kernel down mid-cell, losing the task in flight and its interruption record.
    Forwarding the signal lets the cell end as an interrupted run does (trajectory so far, interrupted.json, lock
    released); the cell's error then ends the notebook. A second Ctrl-C stops waiting. Yields a list that is
    non-empty once an interrupt was forwarded. Main thread only (signal's rule); elsewhere nothing changes."""
    import signal
    import threading

    forwarded: list = []
    if threading.current_thread() is not threading.main_thread():
        yield forwarded
        return

    def forward(signum: int, frame: object) -> None:
        provisioner = kernels[-1].provisioner if kernels else None
        pgid = getattr(provisioner, "pgid", None)
        if forwarded or not pgid:
            from rlmlab.errors import RunInterrupted

            raise RunInterrupted(f"interrupted without waiting for the notebook's kernel; what its runs saved is "
                                 f"in {run_dir}, the executed notebook so far is {out}", directory=run_dir)
        forwarded.append(signum)
        try:
            os.killpg(pgid, signal.SIGINT)
        except ProcessLookupError:  # the kernel is gone already: nothing to wait for
            raise KeyboardInterrupt from None

    previous = signal.signal(signal.SIGINT, forward)
    try:
        yield forwarded
    finally:
        signal.signal(signal.SIGINT, previous)
