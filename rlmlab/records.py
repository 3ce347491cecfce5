"""One record helper for the dataclasses rlmlab writes to JSON (a leaf: it imports no rlmlab package).

``class Hit(Record)`` on a dataclass gives ``to_dict()`` (``dataclasses.asdict``), ``from_dict(data)`` (the
dataclass's own fields; a missing one takes its default), ``to_json()`` / ``from_json(text)`` and a
``SCHEMA_VERSION`` to write beside a file of records. A record whose JSON form differs (keys that must become
ints, nested records) overrides ``from_dict`` and calls ``super().from_dict`` with the fixed-up data.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, ClassVar, TypeVar

__all__ = ["Record"]

R = TypeVar("R", bound="Record")


class Record:
    """Mixin for a dataclass that round-trips through JSON."""

    SCHEMA_VERSION: ClassVar[int] = 1

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls: type[R], data: dict[str, Any]) -> R:
        names = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in names})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False)

    @classmethod
    def from_json(cls: type[R], text: str) -> R:
        return cls.from_dict(json.loads(text))
