"""Records the validator reads and writes: analysis results in, golden traces out, malformed lines reported."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

__all__ = ["AnalysisResult", "GoldenTrace", "MalformedLine", "read_analysis_results", "GOLDEN_FIELDS"]


@dataclass
class AnalysisResult:
    """An RLM agent's FINAL answer to a query about source code, with what it cost."""

    query: str
    answer: str | None
    iterations: int = 0
    subcalls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    elapsed_ms: int = 0
    source_path: str | None = None
    trace_id: str = ""
    timestamp: int = 0

    def __post_init__(self) -> None:
        self.trace_id = self.trace_id or str(uuid.uuid4())
        self.timestamp = int(self.timestamp or time.time())

    @classmethod
    def from_trajectory(cls, traj: Any) -> "AnalysisResult":
        """From an executor :class:`~rlmlab.executors.Trajectory`."""
        return cls(query=traj.query, answer=traj.answer, iterations=len(traj.iterations), subcalls=traj.subcalls,
                   input_tokens=traj.input_tokens, output_tokens=traj.output_tokens, elapsed_ms=traj.elapsed_ms,
                   source_path=traj.source_path, trace_id=traj.run_id, timestamp=int(traj.started))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "AnalysisResult":
        """From a flat record; raises ValueError naming a missing or mistyped field."""
        for key in ("query", "answer"):
            if key not in d:
                raise ValueError(f"missing field {key!r}")
        if not isinstance(d["query"], str):
            raise ValueError(f"field 'query': expected a string, got {type(d['query']).__name__}")
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in known}
        for key in ("iterations", "subcalls", "input_tokens", "output_tokens", "elapsed_ms", "timestamp"):
            if key in kwargs and not isinstance(kwargs[key], (int, float)):
                raise ValueError(f"field {key!r}: expected a number, got {kwargs[key]!r}")
        if kwargs.get("answer") is not None:
            kwargs["answer"] = str(kwargs["answer"])
        return cls(**kwargs)


@dataclass
class GoldenTrace:
    """A verified trace: exactly the JSONL fields of the spec, for SFT data."""

    query: str
    answer: str
    iterations: int
    subcalls: int
    input_tokens: int
    output_tokens: int
    elapsed_ms: int
    source_path: str | None
    verification_method: str
    timestamp: int
    trace_id: str

    @classmethod
    def of(cls, result: AnalysisResult, method: str, source_path: str | None) -> "GoldenTrace":
        return cls(result.query, result.answer or "", result.iterations, result.subcalls, result.input_tokens,
                   result.output_tokens, result.elapsed_ms, source_path, method, result.timestamp, result.trace_id)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


GOLDEN_FIELDS = tuple(f.name for f in fields(GoldenTrace))


@dataclass(frozen=True)
class MalformedLine:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def _trajectory_files(path: Path) -> list[Path]:
    return sorted(path.rglob("trajectory.jsonl")) if path.is_dir() else [path]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (strict parsers reject it); write a number or null")


def read_analysis_results(path: str | Path) -> Iterator[AnalysisResult | MalformedLine]:
    """Analysis results from a JSONL file, or from every ``trajectory.jsonl`` under a directory.

    A file may hold flat records (one JSON object per line with ``query`` and
    ``answer``) and executor trajectories (a ``run`` line, ``iteration`` lines,
    a ``final`` line), mixed. A line that is not JSON, or not a usable record,
    is yielded as a :class:`MalformedLine` with its line number; reading goes on.
    """
    for file in _trajectory_files(Path(path)):
        run: tuple[int, dict[str, Any]] | None = None
        with open(file, encoding="utf-8") as fh:
            for number, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw, parse_constant=_refuse_constant)
                except json.JSONDecodeError as exc:
                    yield MalformedLine(str(file), number, f"not JSON ({exc.msg} at column {exc.colno})")
                    continue
                except ValueError as exc:  # NaN / Infinity: Python reads them, strict JSON parsers do not
                    yield MalformedLine(str(file), number, str(exc))
                    continue
                if not isinstance(record, dict):
                    yield MalformedLine(str(file), number, f"expected a JSON object, got {type(record).__name__}")
                    continue
                kind = record.get("type")
                if kind == "run":
                    if run is not None:
                        yield MalformedLine(str(file), run[0], "trajectory has no 'final' line")
                    run = (number, record)
                elif kind == "final":
                    if run is None:
                        yield MalformedLine(str(file), number, "'final' line without a 'run' line before it")
                        continue
                    header = run[1]
                    run = None
                    try:
                        yield AnalysisResult.from_dict({
                            "query": header.get("query"), "answer": record.get("answer"),
                            "iterations": record.get("iterations", 0), "subcalls": record.get("subcalls", 0),
                            "input_tokens": record.get("input_tokens", 0),
                            "output_tokens": record.get("output_tokens", 0),
                            "elapsed_ms": record.get("elapsed_ms", 0), "source_path": header.get("source_path"),
                            "trace_id": header.get("run_id") or "", "timestamp": header.get("started") or 0})
                    except (TypeError, ValueError) as exc:
                        yield MalformedLine(str(file), number, f"trajectory: {exc}")
                elif kind in ("iteration", "context_trace"):
                    continue
                elif kind is None:
                    try:
                        yield AnalysisResult.from_dict(record)
                    except (TypeError, ValueError) as exc:
                        yield MalformedLine(str(file), number, str(exc))
                else:
                    yield MalformedLine(str(file), number, f"unknown record type {kind!r}")
        if run is not None:
            yield MalformedLine(str(file), run[0], "trajectory has no 'final' line")
