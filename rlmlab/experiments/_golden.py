"""Whether a code-suite trajectory is a golden record, by the code oracles (the runner's per-row check)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlmlab.memory import MemoryTask

__all__ = ["golden_check"]


def golden_check(traj_dir: Path) -> Callable[[MemoryTask, str], bool | None]:
    """Whether a code-suite trajectory is a golden record by the code oracles (None for other suites, where no
    oracle can decide the task's kind of question, and for a task with no source to check against).

    The trajectory's FINAL answer is read back from its file, as ``rlmlab oracle validate`` would (a missing file,
    or one without a final answer, is False), and checked against the task's source by the ``oracle`` judge
    (:class:`rlmlab.learning.OracleJudge`): the narrower question first (a return type, whether a file defines an
    item, by tree-sitter facts; an aggregate over a module's files), then the grep and tree-sitter oracles. Before,
    the trace validator alone read "Does P define struct X?" and "Which file has the most unsafe blocks?" as a
    listing of structs or unsafe lines, and a correct "yes" or file name failed (E1 on 120 code-train tasks: the
    golden verdict passed 72% where the answer key passed 83%). One judge per run, so a source's parse is cached
    across its rollouts.
    """
    judge: Any = None

    def check(task: MemoryTask, trajectory_id: str) -> bool | None:
        nonlocal judge
        if task.meta.get("suite") != "code":
            return None
        from rlmlab.errors import ConfigError
        from rlmlab.executors import TRAJECTORY_FILE
        from rlmlab.learning import OracleJudge
        from rlmlab.oracle import AnalysisResult, read_analysis_results

        path = traj_dir / trajectory_id / TRAJECTORY_FILE
        if not path.is_file():
            return False
        found = [r for r in read_analysis_results(path) if isinstance(r, AnalysisResult)]
        if not found:
            return False
        judge = judge or OracleJudge()
        try:
            verdict = judge.verify(task, str(found[-1].answer or ""))
        except ConfigError:  # no source to check against (a task given in code without meta["source_path"])
            return None
        if verdict.confidence == 0:  # cannot judge: no oracle applies to this kind of question
            return None
        return verdict.success

    return check
