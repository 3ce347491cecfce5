"""Precision and recall per hook on a labelled set of agent turns (data/turing_eval.jsonl)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlmlab._paths import PROJECT_ROOT
from rlmlab.provenance import note_file
from rlmlab.turing._hooks import BUILTIN_HOOKS
from rlmlab.turing._turn import PHASES, SCOPES, Turn

if TYPE_CHECKING:  # evaluate() is given a protocol; loading labelled turns needs none (the phantom hook loads them)
    from rlmlab.turing._protocol import TuringProtocol

__all__ = ["EvalCase", "HookScore", "EvalReport", "load_eval_cases", "evaluate", "DEFAULT_EVAL", "EVAL_LINE_SCHEMA"]

DEFAULT_EVAL = PROJECT_ROOT / "data" / "turing_eval.jsonl"


def _eval_tool_schemas() -> dict[str, dict[str, Any]]:
    from rlmlab.tools import TOOLS, ToolCaps

    return {spec.name: spec.schema_for_caps(ToolCaps()) for spec in TOOLS}


_CALL = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "minLength": 1}, "arguments": {"type": ["object", "null"]},
    "error": {"type": ["string", "null"]}}}
# One labelled turn of data/turing_eval.jsonl (see data/turing_eval.README.md); other keys (source, note) are notes.
EVAL_LINE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["id", "phase", "response", "expected"],
    "properties": {
        "id": {"type": ["string", "integer"]},
        "phase": {"enum": list(PHASES)},
        "scope": {"enum": list(SCOPES)},
        "response": {"type": "string"},
        "tool_calls": {"type": ["array", "null"], "items": _CALL},
        "history": {"type": ["array", "null"], "items": {"type": "object", "properties": {
            "response": {"type": "string"}, "output": {"type": "string"},
            "tool_calls": {"type": "array", "items": _CALL}}}},
        "objective": {"type": ["string", "null"]},
        "user": {"type": ["string", "null"]},  # the user's message of the turn (Turn.context)
        "final": {"type": "boolean"},
        "expected": {"type": "array", "items": {"type": "string"}},
    },
}

_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number",
               type(None): "null"}


def _schema_problem(error: Any) -> str:
    """A short, one-line reason for a jsonschema error (its own message quotes the whole value)."""
    if error.validator == "type":
        wanted = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        names = [w if w == "null" else f"{'an' if w[0] in 'aeiou' else 'a'} {w}" for w in wanted]
        return f"expected {' or '.join(names)}, got {_JSON_TYPES.get(type(error.instance), 'a value')}"
    if error.validator == "enum":
        return f"{str(error.instance)[:60]!r} is not one of {', '.join(map(str, error.validator_value))}"
    return " ".join(error.message.split())[:200]


@dataclass
class EvalCase:
    id: str
    turn: Turn
    expected: set[str]


def load_eval_cases(path: str | Path = DEFAULT_EVAL, hooks: Iterable[str] | None = None) -> list[EvalCase]:
    """Read labelled turns; a bad line raises ValueError ``path:line: field <name>: problem``.

    Each line is checked against :data:`EVAL_LINE_SCHEMA`, and every name in ``expected`` must be one of
    ``hooks`` (default: the built-in hooks), so a misspelt label cannot score as a silent miss. A file with no
    labelled turn is refused too.
    """
    import jsonschema

    from rlmlab._files import read_jsonl

    known = set(hooks) if hooks is not None else {h.name for h in BUILTIN_HOOKS}
    check = jsonschema.Draft202012Validator(EVAL_LINE_SCHEMA)
    schemas: dict[str, dict[str, Any]] | None = None  # on the first good line: a bad file is refused at once
    cases = []
    path = Path(path)
    note_file(path, "labelled turns")
    for number, d in read_jsonl(path):  # InputFileError path:line for a line that is not a JSON object
        error = next(iter(sorted(check.iter_errors(d), key=lambda e: [str(p) for p in e.absolute_path])), None)
        if error is not None:
            where = ".".join(str(p) for p in error.absolute_path) or "(line)"
            raise ValueError(f"{path}:{number}: field {where}: {_schema_problem(error)}")
        unknown = [name for name in d["expected"] if name not in known]
        if unknown:
            raise ValueError(f"{path}:{number}: field expected: unknown hook {unknown[0]!r}; "
                             f"known: {', '.join(sorted(known))}")
        schemas = _eval_tool_schemas() if schemas is None else schemas
        turn = Turn.from_dict(d, session=f"eval-{d['id']}", tool_schemas=schemas)
        cases.append(EvalCase(str(d["id"]), turn, set(d["expected"])))
    if not cases:
        raise ValueError(f"{path}: no labelled turns; expected one JSON object per line")
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
