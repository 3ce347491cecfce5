"""A bound on the scratch directory's total size: RLIMIT_FSIZE caps one file, not how many a step writes.

The host watches the directory while the worker runs and kills the worker (the interpreter then restarts it and
the step reads "WorkerCrash") once the files in it take more than the quota, then empties it. Polling bounds the
overshoot by what the worker writes in one interval (0.1 s).
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["SCRATCH_QUOTA_BYTES", "scratch_bytes", "watch_scratch"]

SCRATCH_QUOTA_BYTES = 256 * 1024 * 1024
_POLL_SECONDS = 0.1


def scratch_bytes(path: Path | str) -> int:
    """Bytes the files under ``path`` occupy on disk (allocated blocks: a sparse file counts what it holds);
    symlinks are not followed."""
    total = 0
    stack = [str(path)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    total += st.st_blocks * 512
        except OSError:
            continue
    return total


def watch_scratch(process: Any, scratch: Path, quota: int = SCRATCH_QUOTA_BYTES,
                  on_exceeded: Any = None) -> threading.Thread:
    """Kill ``process`` (a Popen) when ``scratch`` holds more than ``quota`` bytes, then empty ``scratch``;
    ``on_exceeded(bytes)`` is called first. The thread ends with the process."""

    def run() -> None:
        while process.poll() is None:
            used = scratch_bytes(scratch)
            if used > quota:
                if on_exceeded is not None:
                    on_exceeded(used)
                for kill in (lambda: os.killpg(process.pid, signal.SIGKILL), lambda: process.kill()):
                    try:
                        kill()
                    except (OSError, ProcessLookupError):
                        pass
                process.wait()
                # the worker inside the wrapper dies a moment after it (--die-with-parent): a write of its still
                # in flight can land after a first emptying, so empty again until nothing more appears (<= 1 s)
                try:
                    for _ in range(10):
                        for child in Path(scratch).iterdir():
                            if child.is_dir() and not child.is_symlink():
                                shutil.rmtree(child, ignore_errors=True)
                            else:
                                child.unlink(missing_ok=True)
                        time.sleep(0.1)
                        if not any(Path(scratch).iterdir()):
                            break
                except FileNotFoundError:  # the interpreter shut down meanwhile and removed the directory itself
                    pass
                return
            time.sleep(_POLL_SECONDS)

    thread = threading.Thread(target=run, name="scratch-quota", daemon=True)
    thread.start()
    return thread
