"""traces.json, seed 002's record of a teacher-learner run: its schema, the per-item records, the writer and the
reader (the loop writes it; ``ExpectedGain`` and ``teach show`` read it)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlmlab._files import json_problem, read_text, strict_json, write_atomic

__all__ = ["TurnRecord", "ItemTrace", "write_traces", "read_traces", "load_traces_doc", "TRACES_SCHEMA"]

_TURN = {"type": "object", "additionalProperties": False,
         "required": ["answer", "self_conf", "teacher_bias", "teacher_conf", "template", "accuracy"],
         "properties": {"answer": {"type": "string"}, "self_conf": {"type": "number", "minimum": 0, "maximum": 1},
                        "teacher_bias": {"type": "string"},
                        "teacher_conf": {"type": "number", "minimum": 0, "maximum": 1},
                        "template": {"type": ["string", "null"]}, "accuracy": {"enum": [0, 1]}}}
TRACES_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["summary", "traces"],
    "properties": {
        "summary": {"type": "object", "additionalProperties": False, "required": ["items", "final_accuracy_mean"],
                    "properties": {"items": {"type": "integer", "minimum": 0},
                                   "final_accuracy_mean": {"type": "number", "minimum": 0, "maximum": 1}}},
        "traces": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["qid", "question", "reference", "turns", "final_accuracy"],
            "properties": {"qid": {"type": "string"}, "question": {"type": "string"},
                           "reference": {"type": "string"}, "turns": {"type": "array", "minItems": 1, "items": _TURN},
                           "final_accuracy": {"enum": [0, 1]}}}},
    },
}
"""JSON Schema of seed 002's traces.json (summary plus per-turn records)."""


@dataclass
class TurnRecord:
    """One turn, with exactly the spec's trace fields."""

    answer: str
    self_conf: float
    teacher_bias: str
    teacher_conf: float
    template: str | None
    accuracy: int


@dataclass
class ItemTrace:
    qid: str
    question: str
    reference: str
    turns: list[TurnRecord] = field(default_factory=list)
    final_accuracy: int = 0
    # not in the spec's record; kept beside it for the summary table
    stop_reason: str = ""
    tokens: int = 0
    corrections: int = 0  # Turing Protocol corrections in the learner's turns

    def spec_record(self) -> dict[str, Any]:
        return {"qid": self.qid, "question": self.question, "reference": self.reference,
                "turns": [asdict(t) for t in self.turns], "final_accuracy": self.final_accuracy}

    def __rich__(self) -> Any:
        from rlmlab.teach._render import trace_table

        return trace_table(self)

    def _repr_html_(self) -> str:
        from rlmlab.teach._render import trace_html

        return trace_html(self)


def write_traces(path: str | Path, traces: Sequence[ItemTrace]) -> Path:
    """traces.json exactly in the spec's format: a summary (items, final_accuracy_mean) and per-item records."""
    doc = {"summary": {"items": len(traces),
                       "final_accuracy_mean": round(sum(t.final_accuracy for t in traces) / max(1, len(traces)), 4)},
           "traces": [t.spec_record() for t in traces]}
    return write_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False))


def load_traces_doc(path: str | Path, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """A traces.json as a dict, checked against ``schema`` (default :data:`TRACES_SCHEMA`). InputFileError naming
    the file (and the line, or the field) for a file that is missing, not UTF-8, not strict JSON or not in the
    format."""
    import jsonschema

    from rlmlab.errors import InputFileError

    path = Path(path)
    try:
        doc = strict_json(read_text(path))
    except ValueError as exc:
        if isinstance(exc, InputFileError):
            raise
        raise InputFileError(path, getattr(exc, "lineno", None), json_problem(exc)) from None
    check = jsonschema.Draft202012Validator(TRACES_SCHEMA if schema is None else schema)
    error = jsonschema.exceptions.best_match(check.iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        message = " ".join(error.message.split())
        raise InputFileError(path, None, f"{where}: {message[:200]} (expected seed 002's traces.json format)")
    return doc


def read_traces(path: str | Path) -> list[ItemTrace]:
    """Load a traces.json, checked against :data:`TRACES_SCHEMA`; a bad file raises InputFileError naming the file
    and line or field."""
    doc = load_traces_doc(path)
    out = []
    for rec in doc["traces"]:
        trace = ItemTrace(rec["qid"], rec["question"], rec["reference"], [TurnRecord(**t) for t in rec["turns"]],
                          rec["final_accuracy"])
        out.append(trace)
    return out
