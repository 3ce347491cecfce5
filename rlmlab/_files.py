"""Atomic file writes (a temp file renamed into place, so a crash never leaves half a file) and YAML reads."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["write_atomic", "write_jsonl", "read_yaml"]


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
    """A YAML file's document ({} when empty); invalid YAML raises ConfigError naming the file and line."""
    import yaml

    from rlmlab.errors import ConfigError

    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except yaml.MarkedYAMLError as exc:
        line = f":{exc.problem_mark.line + 1}" if exc.problem_mark is not None else ""
        raise ConfigError(f"{path}{line}: invalid YAML: {exc.problem}") from None
