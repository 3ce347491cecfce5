"""Reading a file whose path a tool was given: for step code, only beneath the roots its run declared.

Step code is untrusted, so a path it names is opened the one way that leaves nothing to race: from a descriptor of
a declared root (the task's source tree, the run's scratch directory), one component at a time with
``O_NOFOLLOW``, so no symbolic link is followed anywhere below the root, ``..`` is refused, and every check (a
regular file, one link, its size) is made on the descriptor that is then read. A workspace with no declared roots
(``path_roots=None``) is a person's own namespace: their paths are read as they name them.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from rlmlab.errors import ToolError

__all__ = ["read_path", "source_roots"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)


def source_roots(source_path: str | None) -> tuple[str, ...]:
    """The roots a run on ``source_path`` declares: the directory itself, or a file's directory."""
    if not source_path:
        return ()
    path = Path(source_path).absolute()
    return (str(path if path.is_dir() else path.parent),)


def read_path(roots: tuple[str, ...] | None, path: str, *, arg: str, suffix: str, max_bytes: int) -> tuple[str, str]:
    """(text, label) of the UTF-8 file at ``path``; ToolError (naming ``arg``) for anything refused.

    With ``roots`` (step code's workspace): an absolute path must lie beneath one root, a relative one is taken
    from each root in turn; nothing beneath the root may be a symbolic link; the file must be regular, have one
    link, end in ``suffix`` and hold at most ``max_bytes``. ``roots=None``: the path as a person names it.
    """
    if "\0" in path or not path.isprintable() or len(path) > 4096:
        raise ToolError(f"{arg}: {path[:80]!r} is not a usable path (a NUL, a control character or over 4096 "
                        "characters)")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(f"{arg}: {path[:80]!r} is not a usable path (not valid UTF-8)") from None
    if not path.endswith(suffix):
        raise ToolError(f"{arg}: {path!r} is not a {suffix} file; give a blob key or the path of a {suffix} file")
    if roots is None:
        return _read_own(path, arg=arg, suffix=suffix, max_bytes=max_bytes)
    candidates = [path] if os.path.isabs(path) else [os.path.join(r, path) for r in roots]
    problem = None
    for candidate in candidates:
        for root in roots:
            rel = _beneath(root, candidate)
            if rel is None:
                continue
            try:
                return _read_from(root, rel, arg=arg, shown=path, max_bytes=max_bytes), os.path.normpath(candidate)
            except FileNotFoundError:
                problem = problem or f"{arg}: {path!r} does not exist"
    raise ToolError(problem or f"{arg}: {path!r} is outside the directories this run may read (its source tree "
                               "and its scratch directory); give a blob key or a path beneath them")


def _beneath(root: str, path: str) -> list[str] | None:
    """The components of ``path`` below ``root`` (lexically; ``..`` resolved or refused), or None."""
    root, path = os.path.normpath(root), os.path.normpath(path)
    if path == root:
        return []
    if not path.startswith(root.rstrip("/") + "/"):
        return None
    parts = path[len(root.rstrip("/")) + 1:].split("/")
    return None if ".." in parts else parts


def _read_from(root: str, parts: list[str], *, arg: str, shown: str, max_bytes: int) -> str:
    if not parts:
        raise ToolError(f"{arg}: {shown!r} is a directory")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the root itself: declared by the host
    try:
        for part in parts[:-1]:
            fd = _step(fd, part, _DIR_FLAGS, arg, shown)
        fd = _step(fd, parts[-1], _FILE_FLAGS, arg, shown)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{arg}: {shown!r} is not a regular file")
        if info.st_nlink != 1:
            raise ToolError(f"{arg}: {shown!r} has {info.st_nlink} hard links; only a file with one is read")
        if info.st_size > max_bytes:
            raise ToolError(f"{arg}: {shown!r} is {info.st_size} bytes, over the {max_bytes >> 20} MB a path may "
                            "hold (load it as a blob instead)")
        data = _read_fd(fd, max_bytes)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{arg}: cannot read {shown!r} as UTF-8 text ({exc.reason})") from None


def _step(dir_fd: int, name: str, flags: int, arg: str, shown: str) -> int:
    """Open ``name`` in ``dir_fd`` without following a link; ``dir_fd`` is closed once that succeeded."""
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(dir_fd, name):
            raise ToolError(f"{arg}: {shown!r} goes through a symbolic link ({name!r}); links are not followed "
                            "for step code") from None
        if isinstance(exc, FileNotFoundError):
            raise
        raise ToolError(f"{arg}: cannot open {shown!r} ({os.strerror(exc.errno or 0)})") from None
    os.close(dir_fd)
    return fd


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _read_fd(fd: int, max_bytes: int) -> bytes:
    chunks, total = [], 0
    while total <= max_bytes:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > max_bytes:
        raise ToolError(f"the file grew past {max_bytes >> 20} MB while it was read")
    return b"".join(chunks)


def _read_own(path: str, *, arg: str, suffix: str, max_bytes: int) -> tuple[str, str]:
    """A person's own path: followed where it leads, but never into /proc, /sys or /dev."""
    real = Path(os.path.realpath(path))
    if real.suffix != suffix or real.parts[1:2] in (("proc",), ("sys",), ("dev",)):
        raise ToolError(f"{arg}: {path!r} is not a {suffix} file")
    if not real.is_file():
        raise ToolError(f"{arg}: {path!r} is neither a blob key nor a readable file")
    size = real.stat().st_size
    if size > max_bytes:
        raise ToolError(f"{arg}: {path!r} is {size} bytes, over the {max_bytes >> 20} MB a path may hold (load it "
                        "as a blob instead)")
    try:
        return real.read_text(encoding="utf-8"), str(real)
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolError(f"{arg}: cannot read {real} as UTF-8 text ({exc})") from None
