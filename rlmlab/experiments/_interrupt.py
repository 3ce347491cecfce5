"""An experiment run cut short by Ctrl-C (or Kernel -> Interrupt): what it kept, recorded beside its results.

The runner writes ``interrupted.json`` (a :class:`RunInterruption`) when a run stops on KeyboardInterrupt, after
the rows of every finished task are in ``results.jsonl`` and the agent run that was cut short has written its
trajectory (marked ``interrupted``); the lock is released as the run ends. A resume that finishes removes it.
``rlmlab experiment show`` prints it above the tables.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlmlab._files import write_atomic
from rlmlab.errors import InputFileError, RunInterrupted
from rlmlab.records import Record
from rlmlab.text import plural

__all__ = ["INTERRUPTED_FILE", "RunInterruption", "read_interruption", "record_interruption", "clear_interruption",
           "without_resume_hint"]

INTERRUPTED_FILE = "interrupted.json"
_RESUME_HINT = "; continue it with the same command and --resume"


@dataclass(frozen=True)
class RunInterruption(Record):
    """``finished`` of ``tasks`` task runs (condition x task of each phase) had their rows written when Ctrl-C
    stopped run ``run_id`` of ``experiment`` at ``at`` (seconds since the epoch). ``trajectory`` is the agent run
    cut short (its directory; its trajectory.jsonl says ``interrupted``), when one was running in this thread."""

    experiment: str
    run_id: str
    finished: int
    tasks: int
    at: float = 0.0
    trajectory: str | None = None

    def line(self, run_dir: str | Path) -> str:
        """The one line a user reads: how far it got, where it is, how to go on."""
        return (f"interrupted after {self.finished} of {plural(self.tasks, 'task')}; run saved in {run_dir}; "
                f"{_RESUME_HINT.removeprefix('; ')} {self.run_id} (Python: resume={self.run_id!r})")


def without_resume_hint(line: str) -> str:
    """An interruption line less its "continue it with ... --resume ID" tail: for a caller (a notebook, the
    scorecard) whose own command continues the run another way."""
    return line.split(_RESUME_HINT, 1)[0]


def record_interruption(run_dir: Path, experiment: str, run_id: str, finished: int, tasks: int,
                        exc: BaseException) -> RunInterrupted:
    """Write ``interrupted.json`` and return the RunInterrupted to raise (its message is the record's line)."""
    where = getattr(exc, "directory", None)
    record = RunInterruption(experiment, run_id, finished, tasks, at=round(time.time(), 3),
                             trajectory=str(where) if where is not None else None)
    write_atomic(run_dir / INTERRUPTED_FILE, record.to_json() + "\n")
    return RunInterrupted(record.line(run_dir), directory=run_dir, trajectory=getattr(exc, "trajectory", None))


def read_interruption(run_dir: str | Path) -> RunInterruption | None:
    """The run's interruption record, or None when it was not interrupted (or a resume has finished it).
    InputFileError naming the file when it is not such a record."""
    path = Path(run_dir) / INTERRUPTED_FILE
    if not path.is_file():
        return None
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        return RunInterruption.from_dict(data)
    except (ValueError, TypeError, AttributeError) as exc:
        raise InputFileError(path, None, f"not an interruption record ({exc})") from None


def clear_interruption(run_dir: Path) -> None:
    """A run that has now finished is no longer interrupted."""
    (run_dir / INTERRUPTED_FILE).unlink(missing_ok=True)
