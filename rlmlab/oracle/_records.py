"""Records the validator reads and writes: analysis results in, golden traces out, malformed lines reported."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from rlmlab._files import read_jsonl
from rlmlab.errors import InputFileError
from rlmlab.records import Record

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
            if key in kwargs and (not isinstance(kwargs[key], (int, float)) or isinstance(kwargs[key], bool)):
                raise ValueError(f"field {key!r}: expected a number, got {str(kwargs[key])[:40]!r}")
        for key in ("source_path", "trace_id"):  # a path or id that is not text cannot be resolved or recorded
            if kwargs.get(key) is not None and not isinstance(kwargs[key], str):
                raise ValueError(f"field {key!r}: expected a string or null, got {type(kwargs[key]).__name__}")
        if kwargs.get("answer") is not None:
            kwargs["answer"] = str(kwargs["answer"])
        return cls(**kwargs)


@dataclass
class GoldenTrace(Record):
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


def read_analysis_results(path: str | Path) -> Iterator[AnalysisResult | MalformedLine]:
    """Analysis results from a JSONL file, or from every ``trajectory.jsonl`` under a directory.

    A file may hold flat records (one JSON object per line with ``query`` and
    ``answer``) and executor trajectories (a ``run`` line, ``iteration`` lines,
    a ``final`` line), mixed. A line that is not JSON, or not a usable record,
    is yielded as a :class:`MalformedLine` with its line number; reading goes on. So is a line that is not UTF-8,
    or that holds NaN, Infinity or a number too large for a float (strict JSON parsers reject them).
    """
    for file in _trajectory_files(Path(path)):
        run: tuple[int, dict[str, Any]] | None = None
        with contextlib.closing(read_jsonl(file, errors="yield")) as lines:
            for number, record in lines:
                if isinstance(record, InputFileError):  # not UTF-8, not strict JSON, not an object: reading goes on
                    yield MalformedLine(str(file), number, record.problem)
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
