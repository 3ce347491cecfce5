"""JSONL memory packs: curated or exported items, one JSON object per line, ids derived from content.

The format is described in ``data/packs/README.md``. Export is stable (sorted by id, fixed key order),
so exporting an imported pack reproduces the file byte for byte; importing is all-or-nothing and a
second import of the same pack adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlmlab.provenance import note_file
from rlmlab._files import read_jsonl, write_jsonl
from rlmlab.errors import InputFileError
from rlmlab.memory._errors import ItemValidationError, PackError
from rlmlab.memory._records import MemoryItem
from rlmlab.memory._store import MemoryStore
from rlmlab.records import Record

__all__ = ["PACK_FIELDS", "OMIT_WHEN_NONE", "ImportReport", "read_pack", "import_pack", "export_pack", "pack_record"]

# Key order of an exported line. Counters (uses, wins) and updated_at belong to a bank, not to a pack.
PACK_FIELDS = ("id", "title", "description", "content", "template", "shape", "polarity", "role", "scope", "layer",
               "tags", "domain", "source", "run_id", "trajectory_id", "created_at")
# Written only when set, so packs from before a field existed still export byte for byte.
OMIT_WHEN_NONE = ("template", "shape")
_REQUIRED = ("title", "description", "content", "polarity")
# data/packs/sparql_antipatterns.jsonl is also the ontology's L1 list (rlmlab.ontology.load_antipatterns) and keeps
# that shape: an "ap-..." id, title, description, content and no polarity. Such a line imports as a failure
# guardrail (what not to do in SPARQL), tagged with its ap- id so an ontology finding can be traced to the item.
_ANTIPATTERN_KEYS = frozenset({"id", "title", "description", "content"})


def _antipattern_item(data: dict[str, Any]) -> dict[str, Any] | None:
    """The pack record of an anti-pattern line, or None when the line is not one."""
    if not (isinstance(data.get("id"), str) and data["id"].startswith("ap-") and set(data) <= _ANTIPATTERN_KEYS):
        return None
    return {"title": data.get("title"), "description": data.get("description"), "content": data.get("content"),
            "polarity": "failure", "tags": ["sparql", "anti-pattern", data["id"]]}


@dataclass(frozen=True)
class ImportReport(Record):
    """What an import did: ids written (``added``) and ids already in the store (``existing``)."""

    path: str
    added: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)


def pack_record(item: MemoryItem) -> dict[str, Any]:
    """The pack line of an item: the ``PACK_FIELDS`` in that order, those of ``OMIT_WHEN_NONE`` only when set."""
    data = item.to_dict()
    return {name: data[name] for name in PACK_FIELDS if not (name in OMIT_WHEN_NONE and data[name] is None)}


def read_pack(path: str | Path) -> list[MemoryItem]:
    """Parse and validate a pack; PackError ``path:line: message`` for the first malformed line.

    Blank lines are skipped. A line without ``source`` gets ``pack:<file stem>``. A line's ``id``, when
    given, must equal the id derived from its title and content; an id seen on an earlier line is an error.
    An anti-pattern line (``{"id": "ap-...", "title", "description", "content"}``, the shape of
    ``sparql_antipatterns.jsonl``) becomes a failure item tagged ``sparql``, ``anti-pattern`` and its ap- id.
    A line that is not UTF-8 or not strict JSON (NaN, Infinity) is a PackError too.
    """
    path = Path(path)
    note_file(path, "pack")
    items: list[MemoryItem] = []
    first_line: dict[str, int] = {}
    try:
        numbered = list(read_jsonl(path))
    except InputFileError as exc:
        raise PackError(str(exc)) from None
    for lineno, data in numbered:
        where = f"{path}:{lineno}"
        data = _antipattern_item(data) or data
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


def import_pack(store: MemoryStore, path: str | Path, items: Sequence[MemoryItem] | None = None) -> ImportReport:
    """Validate the whole pack, then add its items in one transaction, keeping their provenance as written.

    ``items`` are the pack's items when already read (the CLI reads every pack before it opens the store).
    """
    items = read_pack(path) if items is None else items
    results = store.add_many(items, use_binding=False)
    return ImportReport(str(path), [r.id for r in results if r.created], [r.id for r in results if not r.created])


def export_pack(store: MemoryStore, path: str | Path, **filters: str | None) -> int:
    """Write the store's items (optionally filtered, as ``MemoryStore.items``) sorted by id; returns the count."""
    return write_jsonl(path, (pack_record(item) for item in store.items(**filters)))
