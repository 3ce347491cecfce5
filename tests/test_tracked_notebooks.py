"""Tracked notebooks keep no run: no outputs, execution counts or saved widget state (JupyterLab's autosave writes
them into the guides when one is run in place). A unit test, so make check catches a notebook saved after a run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from rlmlab import PROJECT_ROOT


def kept_state(path: Path) -> list[str]:
    """What a run or an autosave left in a notebook: outputs, execution counts, saved widget state."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = [f"{path.name}: cell {n}: {what}" for n, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
             for what, kept in (("outputs", c.get("outputs")), ("execution_count", c.get("execution_count")))
             if kept]
    return found + [f"{path.name}: metadata.{key}" for key in ("widgets", "papermill") if key in nb["metadata"]]


def tracked_notebooks() -> list[Path]:
    # studies/ keeps executed notebooks on purpose (a scorecard is its outputs); the guides and tests/data do not
    listed = subprocess.run(["git", "ls-files", "*.ipynb"], cwd=PROJECT_ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    return [PROJECT_ROOT / p for p in listed if not p.startswith("studies/")]


def test_tracked_notebooks_keep_no_outputs_execution_counts_or_widget_state():
    notebooks = tracked_notebooks()
    assert {"00_tour.ipynb", "01_explore_traces.ipynb", "exp_learning.ipynb"} <= {p.name for p in notebooks}
    kept = [line for path in notebooks for line in kept_state(path)]
    assert not kept, ("JupyterLab's autosave kept a run in a tracked notebook; clear it (Edit > Clear Outputs of All "
                      "Cells, or jupyter nbconvert --clear-output --inplace FILE) and drop metadata.widgets: "
                      + "; ".join(kept[:5]))


def test_the_check_sees_what_an_autosave_keeps(tmp_path):
    nb = json.loads((PROJECT_ROOT / "notebooks" / "02_teacher_learner.ipynb").read_text())
    clean = tmp_path / "clean.ipynb"
    clean.write_text(json.dumps(nb))
    assert kept_state(clean) == []
    code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    code["execution_count"] = 1
    nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {}}
    saved = tmp_path / "saved.ipynb"
    saved.write_text(json.dumps(nb))
    assert kept_state(saved) == ["saved.ipynb: cell 1: execution_count", "saved.ipynb: metadata.widgets"]
