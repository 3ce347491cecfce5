"""Records of the ReasoningBank loop: a task, a judge's verdict, and one rollout (trajectory + verdict)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from rlmlab.records import Record

__all__ = ["MemoryTask", "Verdict"]


@dataclass
class MemoryTask(Record):
    """One task for the memory loop.

    ``context`` is the text the agent works on (the executor passes it as a BlobRef handle). ``expected``
    is the reference a deterministic judge compares with: an answer string or number, a reference SPARQL
    query, or facts about source code. ``check`` names the judge to use (a name in ``JUDGES``) when the
    loop is not given one. ``domain`` scopes retrieval and names the L0/L1 sources (see ``DOMAINS``).
    ``meta`` holds judge-specific inputs, e.g. ``{"source_path": ...}`` for the code oracles.
    """

    id: str
    query: str
    context: str = ""
    domain: str | None = None
    expected: Any = None
    check: str = "exact"
    meta: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        # The context is often a whole source file: its size and first line say enough.
        head = self.context.split("\n", 1)[0][:60]
        context = f"<{len(self.context):,} chars: {head!r}{'...' if len(self.context) > len(head) else ''}>"
        expected = repr(self.expected)
        expected = expected if len(expected) <= 80 else expected[:77] + "..."
        return (f"MemoryTask(id={self.id!r}, query={self.query!r}, context={context}, domain={self.domain!r}, "
                f"expected={expected}, check={self.check!r}, meta={{{', '.join(map(repr, self.meta))}}})")


@dataclass(frozen=True)
class Verdict(Record):
    """A judge's label for one trajectory.

    ``score`` in [0, 1] ranks rollouts (MaTTS picks the highest); ``success`` is the label that updates
    item wins and decides the polarity of extracted items. ``judge`` is the registry name; ``rubric`` the
    versioned rubric id of an LLM judge (None for deterministic judges); ``confidence`` in [0, 1].
    """

    success: bool
    score: float
    rationale: str
    judge: str
    rubric: str | None = None
    confidence: float = 1.0

    def __post_init__(self) -> None:
        for name in ("score", "confidence"):
            value = getattr(self, name)
            if not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"Verdict.{name}: {value!r} is outside [0, 1]")
