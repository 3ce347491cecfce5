"""Atomic file writes: a temp file renamed into place, so a crash never leaves half a file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["write_atomic", "write_jsonl"]


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
