"""How far a key-free judge can stand in for the reference judge: precision and recall over (task, answers).

The reference judge (``judge_for(task)``, which reads the answer key) is the truth here. A key-free verdict is
a true positive when both pass an answer, a false positive when only the key-free judge does (it would teach
the bank a wrong procedure), a false negative when only the reference does (a lost lesson). An abstention
("cannot judge", confidence 0) counts as not passed and is also counted apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlmlab.memory import MemoryTask
from rlmlab.records import Record
from rlmlab.learning._judge import judge_for
from rlmlab.learning._judge_keyfree import judge_rollouts, keyfree_judge_for, keyfree_kind
from rlmlab.learning._judge_oracle import CANNOT_JUDGE

__all__ = ["JudgeAgreement", "judge_agreement", "AgreementCase"]

# (task, the answers of its rollouts: one for a judge of single answers, N for a vote, a label for the report)
AgreementCase = tuple[MemoryTask, Sequence[Any], str]
_COUNTS = ("tp", "fp", "fn", "tn", "abstain")


@dataclass
class JudgeAgreement(Record):
    """Counts per group (tp, fp, fn, tn, abstain) of one key-free judge against the reference, and one row per
    judged answer (task id, label, answer, both verdicts and rationales)."""

    judge: str
    groups: dict[str, dict[str, int]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)

    def _total(self, group: str | None) -> dict[str, int]:
        parts = [self.groups[group]] if group else list(self.groups.values())
        return {c: sum(p[c] for p in parts) for c in _COUNTS}

    def precision(self, group: str | None = None) -> float | None:
        """tp / (tp + fp): of the answers the key-free judge passed, the share the reference passes; None if it
        passed none."""
        t = self._total(group)
        return None if not t["tp"] + t["fp"] else t["tp"] / (t["tp"] + t["fp"])

    def recall(self, group: str | None = None) -> float | None:
        """tp / (tp + fn): of the answers the reference passes, the share the key-free judge passed too."""
        t = self._total(group)
        return None if not t["tp"] + t["fn"] else t["tp"] / (t["tp"] + t["fn"])

    def counts(self, group: str | None = None) -> dict[str, int]:
        return self._total(group)


def judge_agreement(cases: Iterable[AgreementCase], *, judge_for_task: Callable[[MemoryTask], Any] = keyfree_judge_for,
                    reference_for: Callable[[MemoryTask], Any] = judge_for,
                    group_of: Callable[[MemoryTask, str], str] = lambda task, label: keyfree_kind(task),
                    ) -> dict[str, JudgeAgreement]:
    """Each key-free judge's agreement with the reference over ``cases``, keyed by the key-free judge's name.

    Every answer of a case is one rollout of its task: a vote sees them together (``judge_rollouts``); the
    reference judges each alone. ``group_of(task, label)`` names the report's group (default: the task's kind).
    A judge that raises ConfigError for a task (no source, no ontology) is not caught: the case is broken.
    """
    from rlmlab.executors import Trajectory

    out: dict[str, JudgeAgreement] = {}
    for task, answers, label in cases:
        trajs = [Trajectory(run_id=f"agreement-{task.id}-{i}", query=task.query, lm="given", context_mode="handle",
                            answer=None if a is None else str(a), submitted=a is not None)
                 for i, a in enumerate(answers)]
        keyfree = judge_for_task(task)
        reference = reference_for(task)
        verdicts = judge_rollouts(keyfree, task, trajs)
        report = out.setdefault(keyfree.name, JudgeAgreement(keyfree.name))
        counts = report.groups.setdefault(group_of(task, label), dict.fromkeys(_COUNTS, 0))
        for traj, mine in zip(trajs, verdicts):
            truth = reference.judge(task, traj)
            abstained = mine.confidence == 0.0 and mine.rationale.startswith(CANNOT_JUDGE)
            counts["abstain"] += abstained
            cell = ("tp" if truth.success else "fp") if mine.success else ("fn" if truth.success else "tn")
            counts[cell] += 1
            report.rows.append({"task_id": task.id, "label": label, "answer": traj.answer, "cell": cell,
                                "keyfree": mine.success, "reference": truth.success, "abstained": abstained,
                                "keyfree_rationale": mine.rationale, "reference_rationale": truth.rationale})
    return out
