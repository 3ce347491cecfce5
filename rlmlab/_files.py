"""Reading and writing files safely.

Writes: atomic (a temp file renamed into place, so a crash never leaves half a file), or JSONL appended one whole,
flushed record at a time (:class:`JsonlWriter`, for outputs that must survive Ctrl-C). Reads: UTF-8 text and YAML
whose failures are one-line errors naming the file and line (:class:`~rlmlab.errors.InputFileError`,
:class:`~rlmlab.errors.ConfigError`), and JSON read as strict parsers read it (:func:`strict_json`).
"""

from __future__ import annotations

import json
import math
import os
import signal
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["write_atomic", "write_jsonl", "read_jsonl", "read_yaml", "read_text", "decode_line", "strict_json", "json_problem",
           "finite", "JsonlWriter"]


def write_atomic(path: str | Path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """One JSON object per line; returns how many were written."""
    lines = [json.dumps(record, ensure_ascii=False) + "\n" for record in records]
    write_atomic(path, "".join(lines))
    return len(lines)


def read_yaml(path: str | Path) -> Any:
    """A YAML file's document ({} when empty). A missing, unreadable or non-UTF-8 file, or invalid YAML, raises
    ConfigError naming the file (and the line, where there is one)."""
    import yaml

    from rlmlab.errors import ConfigError, InputFileError

    try:
        text = read_text(path)
    except InputFileError as exc:
        raise ConfigError(str(exc)) from None
    try:
        return yaml.safe_load(text) or {}
    except yaml.MarkedYAMLError as exc:
        line = f":{exc.problem_mark.line + 1}" if exc.problem_mark is not None else ""
        raise ConfigError(f"{path}{line}: invalid YAML: {exc.problem}") from None
    except yaml.YAMLError as exc:  # e.g. a control character the reader refuses
        raise ConfigError(f"{path}: invalid YAML: {' '.join(str(exc).split())}") from None
    except (ValueError, RecursionError) as exc:  # an int of over 4300 digits, nesting too deep
        raise ConfigError(f"{path}: invalid YAML: {exc or type(exc).__name__}") from None


def unreadable(path: Path, exc: OSError) -> Any:
    """The InputFileError for a file that could not be opened: missing, a directory, or unreadable."""
    from rlmlab.errors import InputFileError

    if isinstance(exc, FileNotFoundError):
        return InputFileError(path, None, "no such file")
    if isinstance(exc, IsADirectoryError):
        return InputFileError(path, None, "a directory; expected a file")
    return InputFileError(path, None, f"cannot read it ({exc.strerror or exc})")


def read_text(path: str | Path) -> str:
    """The UTF-8 text of a file. InputFileError (``path[:line]: problem``) for a missing file, a directory, a file
    that cannot be read, or bytes that are not UTF-8 (naming the line of the first bad byte)."""
    from rlmlab.errors import InputFileError

    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise unreadable(path, exc) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputFileError(path, line, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column {column})") from None


def read_jsonl(path: str | Path, *, objects: bool = True, torn_tail: bool = False,
               errors: str = "raise") -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line of a JSONL file, read as it streams: the one JSONL reader.

    A line that is not UTF-8, not strict JSON (NaN, Infinity, 1e999 are refused) or, with ``objects``, not a JSON
    object raises :class:`~rlmlab.errors.InputFileError` (``path:line: problem``), or with ``errors="yield"`` is
    yielded as ``(line number, InputFileError)`` and reading goes on. With ``torn_tail`` a bad last line (one a killed writer left half written) is skipped silently.
    A missing file, a directory or an unreadable one is an InputFileError with no line.
    """
    from rlmlab.errors import InputFileError

    path = Path(path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise unreadable(path, exc) from None
    with fh:
        for number, raw in enumerate(fh, 1):
            try:
                text = decode_line(raw).rstrip("\r\n")
                if not text.strip():
                    continue
                value = strict_json(text)
                if objects and not isinstance(value, dict):
                    raise ValueError(f"expected a JSON object, got {_JSON_NAMES.get(type(value), 'a value')}")
            except ValueError as exc:
                error = InputFileError(path, number, json_problem(exc))
                if errors == "yield":
                    yield number, error
                elif not (torn_tail and not raw.endswith(b"\n")):  # only the last line can lack its newline
                    raise error from None
                continue
            yield number, value


_JSON_NAMES = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "true or false",
               type(None): "null"}


def decode_line(raw: bytes) -> str:
    """One line read in binary mode, as text; ValueError naming the first byte that is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (strict parsers reject it); write a number or null")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is too large for a JSON number (it reads as infinity)")
    return value


def strict_json(text: str | bytes) -> Any:
    """``json.loads`` as strict parsers read JSON: ``NaN``, ``Infinity`` and numbers too large for a float
    (``1e999``) are refused. Raises ValueError: a ``json.JSONDecodeError`` (with ``lineno``) for bad syntax."""
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def json_problem(exc: ValueError) -> str:
    """A one-line reason for a :func:`strict_json` failure ("not JSON (Expecting value at column 3)")."""
    if isinstance(exc, json.JSONDecodeError):
        where = f"line {exc.lineno} column {exc.colno}" if exc.lineno > 1 else f"column {exc.colno}"
        return f"not JSON ({exc.msg} at {where})"
    return " ".join(str(exc).split())


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float (at any depth of dicts, lists and tuples) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold SIGINT while a record is written (and counted), so Ctrl-C lands between records and never inside one.
    Nests: an inner block restores the mask the outer one set."""
    hold = hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
    if hold:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if hold:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


class JsonlWriter:
    """Records written to a JSONL file as they come: one line each, flushed at once, so a kill or Ctrl-C keeps
    every record written so far and never half of one. Strict JSON: a NaN or infinite float is written as null.

    ``mode`` "w" starts the file afresh (as a new run's output should), "a" appends to it. Use as a context manager.
    """

    def __init__(self, path: str | Path, mode: str = "w"):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, mode, encoding="utf-8")
        self.count = 0

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(finite(record), ensure_ascii=False, allow_nan=False) + "\n"
        with interrupts_deferred():  # the count moves with the line: Ctrl-C lands before both or after both
            self._file.write(line)
            self._file.flush()
            self.count += 1

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "JsonlWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
