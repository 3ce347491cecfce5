"""Whether a code-suite trajectory is a golden record, by the code oracles (the runner's per-row check)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlmlab.memory import MemoryTask

__all__ = ["golden_check"]


def golden_check(traj_dir: Path) -> Callable[[MemoryTask, str], bool | None]:
    """Whether a code-suite trajectory is a golden record by the code oracles (None for other suites).

    The trajectory is read back from its file, as ``rlmlab oracle validate`` would; a missing file is False.
    One validator per run, so a source's parse is cached across its rollouts.
    """
    validator: Any = None

    def check(task: MemoryTask, trajectory_id: str) -> bool | None:
        nonlocal validator
        if task.meta.get("suite") != "code":
            return None
        from rlmlab.executors import TRAJECTORY_FILE
        from rlmlab.oracle import AnalysisResult, TraceValidator, read_analysis_results

        path = traj_dir / trajectory_id / TRAJECTORY_FILE
        if not path.is_file():
            return False
        found = [r for r in read_analysis_results(path) if isinstance(r, AnalysisResult)]
        validator = validator or TraceValidator()
        return bool(found) and validator.validate(found[-1]).is_golden

    return check
