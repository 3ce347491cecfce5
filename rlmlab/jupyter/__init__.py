"""Jupyter integration: the rlmlab kernel spec, the IPython extension and its magics, and the widgets.

Every widget is ipywidgets 8 with a static HTML form in the same MIME bundle (see ``_widget``):
``BudgetTimeline`` (a ContextTrace), ``TrajectoryExplorer`` (an RLM run), ``RunBrowser`` (an experiment run's rows, each opening its
trajectory), ``TeacherStepper`` (teacher-learner
turns), ``OracleView`` (a validated answer), ``MemoryBrowser`` (a memory bank), ``InteractionLogView``
(the Turing Protocol's log). Widgets are imported on first use, so the kernel starts without ipywidgets work.
"""

from __future__ import annotations

import importlib
from typing import Any

from rlmlab.jupyter._kernelspec import KERNEL_NAME, install_kernel, install_lab_settings, kernel_spec

_WIDGETS = {
    "BudgetTimeline": "rlmlab.jupyter._budget",
    "TrajectoryExplorer": "rlmlab.jupyter._explorer",
    "RunBrowser": "rlmlab.jupyter._run_browser",
    "load_trajectory": "rlmlab.jupyter._explorer",
    "TeacherStepper": "rlmlab.jupyter._stepper",
    "LiveTeachLoop": "rlmlab.jupyter._stepper",
    "StepTurn": "rlmlab.jupyter._stepper",
    "OracleView": "rlmlab.jupyter._oracle_view",
    "MemoryBrowser": "rlmlab.jupyter._memory_browser",
    "InteractionLogView": "rlmlab.jupyter._log_view",
    "RLMLabWidget": "rlmlab.jupyter._widget",
}

__all__ = ["install_kernel", "install_lab_settings", "kernel_spec", *_WIDGETS]


def __getattr__(name: str) -> Any:
    if name in _WIDGETS:
        return getattr(importlib.import_module(_WIDGETS[name]), name)
    raise AttributeError(f"module 'rlmlab.jupyter' has no attribute {name!r}")
