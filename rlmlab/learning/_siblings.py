"""Siblings for the intervention test: earlier stream tasks asked the same way, with how the bank did on them.

SkillGen admits a skill when replaying it on sibling tasks repairs at least as many as it breaks. A stream has
few tasks with exactly the same query shape (phrasings vary), so a sibling is an earlier task whose shape is
like this one's (:func:`rlmlab.memory.shape_similarity`); the intervention test then keeps only those the
template can be filled for.
"""

from __future__ import annotations

from collections.abc import Sequence

from rlmlab.learning._replay import Sibling
from rlmlab.memory import MemoryTask, query_shape, shape_similarity

__all__ = ["nearest_siblings", "SIBLING_SIMILARITY"]

# Measured on the train streams only (100 tasks per suite): shapes of one generated kind phrased differently
# have a median similarity of about 0.7, shapes of different kinds of the code suite about 0.2 (0.4 at p90).
SIBLING_SIMILARITY = 0.6


def nearest_siblings(task: MemoryTask, history: Sequence[tuple[MemoryTask, bool]], k: int = 4,
                     min_similarity: float = SIBLING_SIMILARITY) -> list[Sibling]:
    """Up to ``k`` earlier tasks of ``history`` (task, solved) whose query shape is at least ``min_similarity``
    like ``task``'s, most alike first (the most recent on ties); ``task`` itself and its repeats are skipped."""
    mine = query_shape(task.query)
    scored = []
    for pos, (other, solved) in enumerate(history):
        if other.id == task.id or other.query == task.query:
            continue
        sim = shape_similarity(mine, query_shape(other.query))
        if sim >= min_similarity:
            scored.append((sim, pos, Sibling(other, solved)))
    scored.sort(key=lambda x: (-x[0], -x[1]))
    return [s for _, _, s in scored[:k]]
