"""Trajectory records of an executor run (rlm, react, scratchpad), written as JSONL under runs/<run-id>/."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rlmlab._files import read_jsonl, write_jsonl
from rlmlab.errors import InputFileError
from rlmlab.trace import ContextTrace, IterationLeakage

__all__ = ["IterationRecord", "Trajectory", "TRAJECTORY_FILE"]

TRAJECTORY_FILE = "trajectory.jsonl"


def clip_output(text: str, max_chars: int) -> str:
    """``text`` as shown to the model: at most ``max_chars`` characters (head and tail), saying how much was cut."""
    if len(text) <= max_chars:
        return text
    head = max_chars // 2
    tail = max_chars - head
    return f"{text[:head]}\n\n... ({len(text) - max_chars:,} of {len(text):,} characters omitted) ...\n\n" + (
        text[-tail:] if tail else "")


@dataclass
class IterationRecord:
    """One REPL iteration: what the model wrote, what ran, what came back, and what it cost."""

    index: int
    reasoning: str
    code: str
    output: str
    tool_calls: list[dict[str, Any]]
    leakage: IterationLeakage
    input_tokens: int
    output_tokens: int
    elapsed_ms: int
    turing: list[dict[str, Any]] = field(default_factory=list)  # Turing rounds with violations in this step
    # ``output`` is stored as the model was shown it (at most the executor's max_output_chars, head and tail);
    # this is the full size (None in runs written before outputs were clipped).
    output_chars: int | None = None
    children: list[str] = field(default_factory=list)  # run ids of the rlm_query sub-runs this step started

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["type"] = "iteration"
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "IterationRecord":
        d = {k: v for k, v in d.items() if k != "type"}
        d["leakage"] = IterationLeakage(**d["leakage"])
        return cls(**d)


@dataclass
class Trajectory:
    """A whole executor run (rlm, react or scratchpad). Line 1 of the JSONL is the ``run`` header, then one
    line per iteration, then the ``context_trace`` line (runs written before the context tracer have none),
    then ``final``."""

    run_id: str
    query: str
    lm: str
    context_mode: str
    context_ref: str | None = None
    source_path: str | None = None
    started: float = 0.0
    iterations: list[IterationRecord] = field(default_factory=list)
    answer: str | None = None
    final_reasoning: str = ""
    submitted: bool = False  # True when the model called SUBMIT; False for the extract fallback or an error
    elapsed_ms: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    lm_calls: int = 0
    subcalls: int = 0
    salvaged_replies: int = 0  # model replies off DSPy's format that the lenient adapter salvaged
    error: str | None = None
    context_trace: ContextTrace | None = None  # tokens that entered the context, per kind and iteration
    executor: str = "rlm"  # the registered executor that ran it; runs written before executors had names were rlm
    decoding: str = "free"  # "grammar": every step was constrained to the step grammar (see _step_grammar)
    notes: list[str] = field(default_factory=list)  # things the run's reader should know (e.g. a grammar ignored)
    # Where the wall time went (TimeBreakdown.to_dict(), see _timing); None in runs written before it was kept.
    timing: dict[str, Any] | None = None
    prompt: str = "full"  # the action prompt: "full" (DSPy's RLM instructions) or "compact" (see _prompt)
    # True when Ctrl-C (or Kernel -> Interrupt) ended the run: ``iterations`` are the steps finished before it
    interrupted: bool = False
    sandbox: str | None = None  # the sandbox backend the step code ran under (rlmlab.sandbox); None: no REPL, or older
    # why the run stopped before an answer when a budget ended it: "budget (max_tokens)", ...; None otherwise
    stopped: str | None = None
    # a recursive run's tree: 0 for the run a caller started; a sub-run (rlm_query) is its parent's depth + 1,
    # with the parent's run id and the parent's step that started it
    depth: int = 0
    parent_id: str | None = None
    parent_step: int | None = None
    children: list["Trajectory"] = field(default_factory=list)  # sub-runs, in the order they ended

    # 1: files written before the header carried a version (read the same way); 3: "prompt" and "timing" added;
    # 4: "interrupted" and "sandbox" added; 5: "stopped" added; 6: "depth", "parent_id", "parent_step" and
    # "child" lines (a sub-run's whole records, nested) added
    SCHEMA_VERSION: ClassVar[int] = 6

    def header(self) -> dict[str, Any]:
        return {"type": "run", "schema_version": self.SCHEMA_VERSION, "run_id": self.run_id, "query": self.query, "lm": self.lm,
                "context_mode": self.context_mode, "context_ref": self.context_ref,
                "source_path": self.source_path, "started": self.started, "executor": self.executor,
                "decoding": self.decoding, "prompt": self.prompt, "sandbox": self.sandbox, "depth": self.depth,
                "parent_id": self.parent_id, "parent_step": self.parent_step}

    def final(self) -> dict[str, Any]:
        return {"type": "final", "answer": self.answer, "final_reasoning": self.final_reasoning,
                "submitted": self.submitted, "iterations": len(self.iterations), "subcalls": self.subcalls,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "lm_calls": self.lm_calls, "elapsed_ms": self.elapsed_ms,
                "salvaged_replies": self.salvaged_replies, "error": self.error, "notes": list(self.notes),
                "timing": self.timing, "interrupted": self.interrupted, "stopped": self.stopped}

    def to_records(self) -> list[dict[str, Any]]:
        trace = [] if self.context_trace is None else [{"type": "context_trace", **self.context_trace.to_dict()}]
        children = [{"type": "child", "records": c.to_records()} for c in self.children]
        return [self.header(), *(it.to_dict() for it in self.iterations), *children, *trace, self.final()]

    def walk(self) -> list["Trajectory"]:
        """This run and every sub-run beneath it, depth first."""
        return [self, *(t for c in self.children for t in c.walk())]

    def write_jsonl(self, path: str | Path) -> Path:
        write_jsonl(path, self.to_records())
        return Path(path)

    @classmethod
    def read_jsonl(cls, path: str | Path) -> "Trajectory":
        path = Path(path)
        return cls.from_records(list(read_jsonl(path)), path)

    @classmethod
    def from_records(cls, records: list[tuple[int | None, dict[str, Any]]], path: Path) -> "Trajectory":
        """A trajectory from its (line number, record) pairs; a damaged record raises InputFileError naming
        ``path`` and the line (a sub-run's records are checked the same way, under its parent's line)."""
        header: dict[str, Any] | None = None
        iterations: list[IterationRecord] = []
        children: list[Trajectory] = []
        final: dict[str, Any] = {}
        trace: ContextTrace | None = None
        for lineno, rec in records:
            kind = rec.get("type") if isinstance(rec, dict) else None
            if not isinstance(kind, str):
                raise InputFileError(path, lineno, "not a trajectory record (no 'type')")
            if kind == "run":
                header = rec
            elif kind == "iteration":
                iterations.append(IterationRecord.from_dict(rec))
            elif kind == "child":
                sub = rec.get("records")
                if not isinstance(sub, list):
                    raise InputFileError(path, lineno, "malformed child record (no 'records' list)")
                children.append(cls.from_records([(lineno, r) for r in sub], path))
            elif kind == "context_trace":
                try:
                    trace = ContextTrace.from_dict({k: v for k, v in rec.items() if k != "type"})
                except (KeyError, TypeError, ValueError) as exc:
                    raise InputFileError(path, lineno, f"malformed context_trace record ({exc!r})") from None
            elif kind == "final":
                final = rec
        if header is None:
            raise InputFileError(path, None, "no 'run' header line")
        version = header.get("schema_version", 1)
        if not isinstance(version, int) or version > cls.SCHEMA_VERSION:
            raise InputFileError(path, None, f"trajectory schema_version {version!r} is newer than this rlmlab reads "
                                             f"({cls.SCHEMA_VERSION}); open it with the rlmlab that wrote it")
        header = {k: v for k, v in header.items() if k not in ("type", "schema_version")}
        final = {k: v for k, v in final.items() if k not in ("type", "iterations")}
        return cls(**header, iterations=iterations, **final, context_trace=trace, children=children)
