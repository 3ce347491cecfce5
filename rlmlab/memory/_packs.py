"""JSONL memory packs: curated or exported items, one JSON object per line, ids derived from content.

The format is described in ``data/packs/README.md``. Export is stable (sorted by id, fixed key order),
so exporting an imported pack reproduces the file byte for byte; importing is all-or-nothing and a
second import of the same pack adds nothing.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlmlab._files import write_jsonl
from rlmlab.memory._errors import ItemValidationError, PackError
from rlmlab.memory._records import MemoryItem
from rlmlab.memory._store import MemoryStore

__all__ = ["PACK_FIELDS", "OMIT_WHEN_NONE", "ImportReport", "read_pack", "import_pack", "export_pack", "pack_record"]

# Key order of an exported line. Counters (uses, wins) and updated_at belong to a bank, not to a pack.
PACK_FIELDS = ("id", "title", "description", "content", "template", "polarity", "role", "scope", "layer", "tags",
               "domain", "source", "run_id", "trajectory_id", "created_at")
# Written only when set, so packs from before a field existed still export byte for byte.
OMIT_WHEN_NONE = ("template",)
_REQUIRED = ("title", "description", "content", "polarity")


@dataclass(frozen=True)
class ImportReport:
    """What an import did: ids written (``added``) and ids already in the store (``existing``)."""

    path: str
    added: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pack_record(item: MemoryItem) -> dict[str, Any]:
    """The pack line of an item: the ``PACK_FIELDS`` in that order, those of ``OMIT_WHEN_NONE`` only when set."""
    data = item.to_dict()
    return {name: data[name] for name in PACK_FIELDS if not (name in OMIT_WHEN_NONE and data[name] is None)}


def read_pack(path: str | Path) -> list[MemoryItem]:
    """Parse and validate a pack; PackError ``path:line: message`` for the first malformed line.

    Blank lines are skipped. A line without ``source`` gets ``pack:<file stem>``. A line's ``id``, when
    given, must equal the id derived from its title and content; an id seen on an earlier line is an error.
    """
    path = Path(path)
    items: list[MemoryItem] = []
    first_line: dict[str, int] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PackError(f"{where}: invalid JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(data, dict):
            raise PackError(f"{where}: expected a JSON object, got {type(data).__name__}")
        unknown = [key for key in data if key not in PACK_FIELDS]
        if unknown:
            raise PackError(f"{where}: {unknown[0]}: unknown field; allowed: {', '.join(PACK_FIELDS)}")
        missing = [key for key in _REQUIRED if key not in data]
        if missing:
            raise PackError(f"{where}: {missing[0]}: missing; {', '.join(_REQUIRED)} are required")
        given_id = data.pop("id", None)
        data.setdefault("source", f"pack:{path.stem}")
        try:
            item = MemoryItem.from_dict(data)
        except ItemValidationError as exc:
            raise PackError(f"{where}: {exc}") from None
        if given_id is not None and given_id != item.id:
            raise PackError(f"{where}: id: {given_id!r} does not match the title and content; their id is "
                            f"{item.id!r} (drop the id to have it derived)")
        if item.id in first_line:
            raise PackError(f"{where}: id: {item.id!r} repeats line {first_line[item.id]} (same title and content)")
        first_line[item.id] = lineno
        items.append(item)
    return items


def import_pack(store: MemoryStore, path: str | Path) -> ImportReport:
    """Validate the whole pack, then add its items in one transaction, keeping their provenance as written."""
    items = read_pack(path)
    results = store.add_many(items, use_binding=False)
    return ImportReport(str(path), [r.id for r in results if r.created], [r.id for r in results if not r.created])


def export_pack(store: MemoryStore, path: str | Path, **filters: str | None) -> int:
    """Write the store's items (optionally filtered, as ``MemoryStore.items``) sorted by id; returns the count."""
    return write_jsonl(path, (pack_record(item) for item in store.items(**filters)))
