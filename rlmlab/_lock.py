"""One writer per run directory: a lock file held for the life of whatever writes the directory.

The lock is the operating system's (``flock`` through :mod:`filelock`), so it goes away with its holder: a
process that is killed leaves no stale lock behind, only the file, which the next holder reuses. The holder
writes its pid into the file after it has the lock, so a refused process can say who holds it; that text is
read only while the lock is held, so an old pid left by a killed holder is never reported.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rlmlab.errors import RunLockedError

__all__ = ["LOCK_FILE", "lock_run_dir", "lock_holder"]

LOCK_FILE = "run.lock"


def lock_holder(directory: str | Path) -> int | None:
    """The pid written in ``directory``'s lock file (None when there is none or it is unreadable)."""
    try:
        text = (Path(directory) / LOCK_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


@contextmanager
def lock_run_dir(directory: str | Path) -> Iterator[Path]:
    """Hold ``directory``'s lock (creating the directory) for the ``with`` block; yields the lock file's path.

    Never waits: if another process (or another thread of this one) holds it, raises RunLockedError naming the
    directory and the holder's pid. Released when the block ends, however it ends. A block that raises (a bad
    suite, model or config found after locking; Ctrl-C before anything was written) leaves no directory behind
    when this call made it and it holds nothing but the lock file.
    """
    from filelock import FileLock, Timeout

    directory = Path(directory)
    # the outermost directory this call creates: a failed start removes it (``runs/`` too in a fresh folder)
    made = next((d for d in reversed((directory, *directory.parents)) if not d.exists()), None)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / LOCK_FILE
    lock = FileLock(str(path), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise RunLockedError(directory, lock_holder(directory)) from None
    try:
        # A second descriptor: writing or closing it leaves the flock (held on filelock's descriptor) in place.
        with open(path, "w", encoding="ascii") as fh:
            fh.write(f"{os.getpid()}\n")
        yield path
    except BaseException:
        lock.release()
        if made is not None:
            _remove_if_only_lock(directory, made)
        raise
    finally:
        lock.release()  # a second release of a released lock does nothing


def _remove_if_only_lock(directory: Path, made: Path) -> None:
    """Remove ``directory`` if its one entry is the lock file (a run that failed before writing anything), then
    its parents up to ``made`` while they are empty."""
    try:
        if [p.name for p in directory.iterdir()] == [LOCK_FILE]:
            (directory / LOCK_FILE).unlink()
            directory.rmdir()
            while directory != made:
                directory = directory.parent
                directory.rmdir()  # OSError when not empty: another run's, or someone else's
    except OSError:  # someone else wrote there meanwhile: theirs to keep
        pass
