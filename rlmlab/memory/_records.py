"""Records of the memory store: MemoryItem (the ReasoningBank item), Event, Hit, AddResult, StoreStats.

Each round-trips through JSON with ``to_dict``/``from_dict``. ``MemoryItem`` normalises and validates
itself on construction and raises :class:`ItemValidationError` naming the field and what is allowed.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from typing import Any

from rlmlab.memory._errors import ItemValidationError
from rlmlab.memory._literals import query_shape
from rlmlab.memory._templates import TEMPLATE_MAX, TemplateError, check_template
from rlmlab.records import Record
from rlmlab.text import plural

__all__ = ["MemoryItem", "admission_summary",
           "Artifact", "Event", "Hit", "AddResult", "StoreStats", "item_id", "artifact_id",
           "check_filters", "check_k", "POLARITIES", "LAYERS", "LIMITS", "FILTERS", "STATUSES", "check_shape"]

POLARITIES = ("success", "failure")
# L0 (sense card) is derived and L4 (events) has its own table; items belong to the curated/learned layers.
LAYERS = ("L1", "L2", "L3")
# Characters, except tags (a count). Items are short strategies, not documents (L3 artifacts have their own table).
LIMITS = {"title": 200, "description": 500, "content": 4000, "tags": 16, "tag": 40, "domain": 200, "id": 200,
          "template": TEMPLATE_MAX, "shape": 4000, "meta": 2000}

# An item's lifecycle: only active items are searched and injected. Consolidation marks an item
# "superseded" (by the merged item named in ``superseded_by``) or "discarded" (a near-duplicate of an
# active item); forgetting marks it "forgotten". Nothing is deleted, so provenance and usage survive.
STATUSES = ("active", "superseded", "discarded", "forgotten")

# Item fields a search or listing can filter on (exact match; None means no filter).
FILTERS = ("polarity", "role", "domain", "scope", "layer", "status")

# An L3 artifact (a guide, a report) is stored whole; only its packed summary is ever injected.
ARTIFACT_LIMITS = {"title": 200, "content": 500_000, "summary": 4000, "kind": 40}

_SLUG = re.compile(r"^[a-z][a-z0-9_\-]{0,39}$")
_TAG = re.compile(r"^[a-z0-9][a-z0-9_.:\-]{0,39}$")


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def item_id(title: str, content: str) -> str:
    """The content-derived id: ``mem_`` + 16 hex digits of sha256 over the normalised title and content.

    Case and runs of whitespace do not change the id; the description, tags and metadata do not enter it,
    so rewording only the description of a stored strategy is still the same item.
    """
    digest = hashlib.sha256(f"{_norm(title)}\x1f{_norm(content)}".encode("utf-8")).hexdigest()
    return "mem_" + digest[:16]


@dataclass
class MemoryItem:
    """One memory item (ReasoningBank schema) with its counters and provenance.

    ``uses`` counts trajectories that retrieved the item and were judged; ``wins`` those judged successful.
    ``domain`` is the domain/ontology id (None: applies anywhere); ``scope`` a free slug such as "global"
    or "task"; ``source`` says where the item came from ("mem_add", "pack:<name>", "extract"). ``template`` is
    optional code with ``{{name:type}}`` slots (see :mod:`rlmlab.memory._templates`) that a step grammar lets
    the model copy with the slots filled from the query; it does not enter the id. ``shape`` holds the query
    shapes (:func:`rlmlab.memory.query_shape`, one per line) of the tasks the item was learned from or written
    for, so a task of the same shape retrieves it (see :class:`rlmlab.memory.ShapeRetriever`); not in the id.
    ``meta`` is a small JSON object
    (at most ``LIMITS["meta"]`` characters as JSON) of structured facts about the item, such as a learnt
    template's replay admission (``{"admission": {"replay": ..., "repairs": ..., "regressions": ...}}``); it does
    not enter the id either.
    """

    title: str
    description: str
    content: str
    polarity: str
    role: str = "general"
    scope: str = "global"
    layer: str = "L2"
    tags: list[str] = field(default_factory=list)
    domain: str | None = None
    source: str = "api"
    run_id: str | None = None
    trajectory_id: str | None = None
    uses: int = 0
    wins: int = 0
    created_at: str | None = None
    updated_at: str | None = None
    status: str = "active"
    superseded_by: str | None = None
    template: str | None = None
    shape: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    id: str = ""

    def __post_init__(self) -> None:
        for name in ("title", "description", "content"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise ItemValidationError(name, f"expected a string, got {type(value).__name__}")
        # Title and description are shown one per line by mem_search, so whitespace runs collapse to a space.
        self.title = " ".join(self.title.split())
        self.description = " ".join(self.description.split())
        self.content = self.content.strip()
        for name in ("title", "description", "content"):
            value = getattr(self, name)
            if not value:
                raise ItemValidationError(name, "empty; give some text")
            if len(value) > LIMITS[name]:
                raise ItemValidationError(name, f"{len(value)} characters, over the limit of {LIMITS[name]}")
        _check_choice("polarity", self.polarity, POLARITIES)
        _check_choice("layer", self.layer, LAYERS)
        _check_choice("status", self.status, STATUSES)
        if self.superseded_by is not None and (not isinstance(self.superseded_by, str) or not self.superseded_by):
            raise ItemValidationError("superseded_by", f"{self.superseded_by!r} is not allowed; use None or an item id")
        for name in ("role", "scope"):
            value = getattr(self, name)
            if not isinstance(value, str) or not _SLUG.match(value):
                raise ItemValidationError(
                    name, f"{value!r} is not allowed; use a lower-case slug matching {_SLUG.pattern} (e.g. 'general')")
        self.tags = _normalise_tags(self.tags)
        for name in ("domain", "run_id", "trajectory_id"):
            value = getattr(self, name)
            limit = LIMITS["domain" if name == "domain" else "id"]
            if value is not None and (not isinstance(value, str) or not value.strip() or "\n" in value
                                      or len(value) > limit):
                raise ItemValidationError(
                    name, f"{value!r} is not allowed; use None or a one-line id of 1-{limit} characters")
        if not isinstance(self.source, str) or not self.source.strip():
            raise ItemValidationError("source", f"{self.source!r} is not allowed; say where the item came from")
        for name in ("uses", "wins"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ItemValidationError(name, f"{value!r} is not allowed; use an integer >= 0")
        if self.wins > self.uses:
            raise ItemValidationError("wins", f"{self.wins} is more than uses ({self.uses})")
        if self.template is not None:
            try:
                self.template = check_template(self.template)
            except TemplateError as exc:
                raise ItemValidationError("template", str(exc)) from None
        self.shape = check_shape(self.shape)
        self.meta = _check_meta(self.meta)
        if not self.id:
            self.id = item_id(self.title, self.content)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "MemoryItem":
        """Build from a dict; an unknown key or a missing required field raises ItemValidationError."""
        if not isinstance(data, dict):
            raise ItemValidationError("item", f"expected a JSON object, got {type(data).__name__}")
        names = [f.name for f in fields(cls)]
        for key in data:
            if key not in names:
                raise ItemValidationError(key, f"unknown field; allowed: {', '.join(names)}")
        for key in ("title", "description", "content", "polarity"):
            if key not in data:
                raise ItemValidationError(key, "missing; title, description, content and polarity are required")
        return cls(**data)


@lru_cache(maxsize=8192)
def _line_shape(line: str) -> str:
    """query_shape of one stored line, cached: every item read back from a store normalises its shapes again."""
    return query_shape(line)


def check_shape(shape: Any) -> str | None:
    """Shapes one per line, each normalised by query_shape (a raw query becomes its shape), deduplicated in order;
    None for no shape."""
    if shape is None:
        return None
    if not isinstance(shape, str):
        raise ItemValidationError("shape", f"expected a string (query shapes, one per line) or None, "
                                           f"got {type(shape).__name__}")
    lines = list(dict.fromkeys(s for s in (_line_shape(line) for line in shape.splitlines()) if s))
    text = "\n".join(lines)
    if len(text) > LIMITS["shape"]:
        raise ItemValidationError("shape", f"{len(text)} characters, over the limit of {LIMITS['shape']}")
    return text or None


def admission_summary(item: MemoryItem) -> str | None:
    """One line on how a learnt item was admitted (``meta["admission"]``, written by the template extractor):
    "replay passed (exact) · 3 siblings tested: 1 repair, 0 regressions"; None for an item without one."""
    adm = item.meta.get("admission")
    if not isinstance(adm, dict):
        return None
    replay = adm.get("replay")
    parts = ["not replayed" if replay is None else f"replay {'passed' if replay else 'failed'}"
             + (f" ({adm['judge']})" if adm.get("judge") else "")]
    if adm.get("applicable"):
        repairs, regressions = int(adm.get("repairs") or 0), int(adm.get("regressions") or 0)
        parts.append(f"{plural(int(adm['applicable']), 'sibling')} tested: {plural(repairs, 'repair')}, "
                     f"{plural(regressions, 'regression')}")
    if item.meta.get("merged"):
        parts.append(f"{item.meta['merged']} merged in")
    return " · ".join(parts)


def artifact_id(kind: str, content: str) -> str:
    """``art_`` + 16 hex digits of sha256 over the kind and the normalised content."""
    digest = hashlib.sha256(f"{kind}\x1f{_norm(content)}".encode("utf-8")).hexdigest()
    return "art_" + digest[:16]


@dataclass
class Artifact(Record):
    """An L3 materialised artifact: the full text (e.g. an ontology guide from an exploration run) and,
    optionally, a summary written by whoever made it. Only a packed summary (``pack_l3``) is injected.

    ``kind`` is a slug ("guide", "report"); the id derives from kind and content, so storing the same
    artifact twice keeps one row.
    """

    kind: str
    title: str
    content: str
    summary: str | None = None
    domain: str | None = None
    source: str = "api"
    run_id: str | None = None
    trajectory_id: str | None = None
    created_at: str | None = None
    id: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not _SLUG.match(self.kind):
            raise ItemValidationError("kind", f"{self.kind!r} is not allowed; use a lower-case slug such as 'guide'")
        for name in ("title", "content"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ItemValidationError(name, "empty or not a string; give some text")
        self.title = " ".join(self.title.split())
        if self.summary is not None:
            if not isinstance(self.summary, str):
                raise ItemValidationError("summary", f"expected a string or None, got {type(self.summary).__name__}")
            self.summary = self.summary.strip() or None
        for name in ("title", "content", "summary"):
            value = getattr(self, name)
            if value is not None and len(value) > ARTIFACT_LIMITS[name]:
                raise ItemValidationError(name, f"{len(value)} characters, over the limit of {ARTIFACT_LIMITS[name]}")
        for name in ("domain", "run_id", "trajectory_id"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip() or "\n" in value
                                      or len(value) > LIMITS["id"]):
                raise ItemValidationError(name, f"{value!r} is not allowed; use None or a one-line id")
        if not self.id:
            self.id = artifact_id(self.kind, self.content)


@dataclass(frozen=True)
class Hit(Record):
    """A search result: the item's id, title and one-line description, and its score (higher is better)."""

    id: str
    title: str
    description: str
    polarity: str
    role: str
    score: float


@dataclass(frozen=True)
class Event(Record):
    """One L4 event-log row; ``payload`` is any JSON object."""

    id: int
    kind: str
    payload: dict[str, Any]
    domain: str | None
    run_id: str | None
    trajectory_id: str | None
    created_at: str


@dataclass(frozen=True)
class AddResult(Record):
    """What ``MemoryStore.add`` did: the item's id, and whether a new row was written (False: already stored)."""

    id: str
    created: bool


@dataclass(frozen=True)
class StoreStats(Record):
    """Counts of a memory store (``items`` counts every status; ``by_*`` other than ``by_status`` count active
    items only); ``db_bytes`` is page_count * page_size (the WAL file is not counted)."""

    path: str
    items: int
    by_polarity: dict[str, int]
    by_role: dict[str, int]
    by_domain: dict[str, int]
    by_layer: dict[str, int]
    by_status: dict[str, int]
    artifacts: int
    events: int
    usage_rows: int
    db_bytes: int


def check_filters(filters: dict[str, Any]) -> dict[str, str]:
    """The filters that are set; ItemValidationError for an unknown filter name or a bad polarity/layer value."""
    out = {}
    for name, value in filters.items():
        if name not in FILTERS:
            raise ItemValidationError(name, f"unknown filter; allowed: {', '.join(FILTERS)}")
        if value is None:
            continue
        if name == "polarity":
            _check_choice(name, value, POLARITIES)
        elif name == "layer":
            _check_choice(name, value, LAYERS)
        elif name == "status":
            _check_choice(name, value, STATUSES)
        elif not isinstance(value, str):
            raise ItemValidationError(name, f"expected a string or None, got {type(value).__name__}")
        out[name] = value
    return out


def check_k(k: Any) -> None:
    """ItemValidationError unless ``k`` (a result count) is an integer >= 1."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ItemValidationError("k", f"{k!r} is not allowed; use an integer >= 1")


def _check_meta(meta: Any) -> dict[str, Any]:
    """``meta`` as a JSON-safe dict (None gives {}); ItemValidationError for another type, a value JSON cannot hold
    or more than ``LIMITS["meta"]`` characters of JSON."""
    if meta is None:
        return {}
    if not isinstance(meta, dict) or not all(isinstance(k, str) for k in meta):
        raise ItemValidationError("meta", f"expected a JSON object with string keys, got {type(meta).__name__}")
    try:
        text = json.dumps(meta, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise ItemValidationError("meta", f"not JSON: {exc}") from None
    if len(text) > LIMITS["meta"]:
        raise ItemValidationError("meta", f"{len(text)} characters of JSON, over the limit of {LIMITS['meta']}")
    return json.loads(text)  # a copy: the item does not share nested objects with the caller


def _check_choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ItemValidationError(name, f"{value!r} is not allowed; use one of {', '.join(repr(a) for a in allowed)}")


def _normalise_tags(tags: Any) -> list[str]:
    """Lower-cased, deduplicated and sorted, so the same tags in another order are the same item on export."""
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = [t for t in tags.split(",")]
    if not isinstance(tags, (list, tuple)):
        raise ItemValidationError("tags", f"expected a list of strings, got {type(tags).__name__}")
    out = set()
    for tag in tags:
        if not isinstance(tag, str):
            raise ItemValidationError("tags", f"{tag!r} is not a string")
        tag = tag.strip().lower()
        if not tag:
            continue
        if not _TAG.match(tag):
            raise ItemValidationError("tags", f"{tag!r} is not allowed; tags match {_TAG.pattern}")
        out.add(tag)
    if len(out) > LIMITS["tags"]:
        raise ItemValidationError("tags", f"{len(out)} tags, over the limit of {LIMITS['tags']}")
    return sorted(out)
