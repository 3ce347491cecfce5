"""Precision and recall per hook on a labelled set of agent turns (data/turing_eval.jsonl)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlmlab._paths import PROJECT_ROOT
from rlmlab.turing._protocol import TuringProtocol
from rlmlab.turing._turn import Turn

__all__ = ["EvalCase", "HookScore", "EvalReport", "load_eval_cases", "evaluate", "DEFAULT_EVAL"]

DEFAULT_EVAL = PROJECT_ROOT / "data" / "turing_eval.jsonl"


def _eval_tool_schemas() -> dict[str, dict[str, Any]]:
    from rlmlab.tools import TOOLS, ToolCaps

    return {spec.name: spec.schema_for_caps(ToolCaps()) for spec in TOOLS}




@dataclass
class EvalCase:
    id: str
    turn: Turn
    expected: set[str]


def load_eval_cases(path: str | Path = DEFAULT_EVAL) -> list[EvalCase]:
    """Read labelled turns; a bad line raises ValueError with the file, line number and field."""
    schemas = _eval_tool_schemas()
    cases = []
    for number, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            d = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
        for key in ("id", "phase", "response", "expected"):
            if key not in d:
                raise ValueError(f"{path}:{number}: missing field {key!r}")
        if not isinstance(d["expected"], list):
            raise ValueError(f"{path}:{number}: field 'expected': expected a list of hook names")
        turn = Turn.from_dict(d, session=f"eval-{d['id']}", tool_schemas=schemas)
        cases.append(EvalCase(str(d["id"]), turn, set(d["expected"])))
    return cases


@dataclass
class HookScore:
    hook: str
    tp: int = 0
    fp: int = 0
    fn: int = 0
    positives: int = 0  # lines that expect this hook

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    def to_dict(self) -> dict[str, Any]:
        return {"hook": self.hook, "tp": self.tp, "fp": self.fp, "fn": self.fn, "positives": self.positives,
                "precision": self.precision, "recall": self.recall}


@dataclass
class EvalReport:
    detector: str
    cases: int
    scores: dict[str, HookScore] = field(default_factory=dict)
    mistakes: list[dict[str, Any]] = field(default_factory=list)
    ms_per_turn: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"detector": self.detector, "cases": self.cases, "ms_per_turn": round(self.ms_per_turn, 2),
                "hooks": [s.to_dict() for s in self.scores.values()], "mistakes": self.mistakes}


def evaluate(cases: list[EvalCase], protocol: TuringProtocol, progress: Any = None) -> EvalReport:
    """Run every case through ``protocol`` and score each hook against the labels."""
    names = sorted({h.name for h in protocol.hooks} | {n for c in cases for n in c.expected})
    scores = {n: HookScore(n) for n in names}
    report = EvalReport(protocol.detector.name, len(cases), scores)
    t0 = time.perf_counter()
    for case in cases:
        got = set(protocol.run(case.turn).hooks)
        for name in names:
            s = scores[name]
            s.positives += name in case.expected
            if name in got and name in case.expected:
                s.tp += 1
            elif name in got:
                s.fp += 1
            elif name in case.expected:
                s.fn += 1
        if got != case.expected:
            report.mistakes.append({"id": case.id, "expected": sorted(case.expected), "got": sorted(got)})
        if progress is not None:
            progress()
    report.ms_per_turn = (time.perf_counter() - t0) * 1000 / max(1, len(cases))
    return report
