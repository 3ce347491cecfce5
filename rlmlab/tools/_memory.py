"""Memory tools: two-phase bounded reads (mem_search, mem_get, mem_quote) and quiet writes (mem_add, event_log).

Reads follow "handles, not payloads": mem_search returns ids, titles and one-line descriptions only;
mem_get fetches at most ``mem_get_max`` full items; mem_quote returns a bounded excerpt. Writes print
nothing and return a small dict. mem_get and mem_quote link the items read to the store's bound
trajectory (``MemoryStore.record_usage``), so a later ``record_outcome`` updates their uses/wins.

The store comes from the workspace's ``extras["memory"]`` (set by :func:`attach_memory`), else the process
default set by :func:`set_default_store`. With none, every memory tool raises ToolError saying how to attach one.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal

from rlmlab.errors import ToolError
from rlmlab.handles import encode_handles
from rlmlab.tools._registry import tool
from rlmlab.tools._schema import Bounds
from rlmlab.tools._workspace import Workspace

# The memory package (and rank-bm25, numpy, the ontology under it) is imported when a memory tool is first
# called, not when rlmlab.tools is imported: most workspaces never use memory.
if TYPE_CHECKING:
    from rlmlab.memory import MemoryItem, MemoryStore

__all__ = ["mem_search", "mem_get", "mem_quote", "mem_add", "event_log", "attach_memory", "set_default_store",
           "memory_of", "MEMORY_CAP_DEFAULTS"]

MEMORY_KEY = "memory"
# ws.extras: id -> MemoryItem this run proposed with mem_add (rlmlab.memory.propose_candidate)
CANDIDATES_KEY = "mem_candidates"
READ_ONLY_KEY = "memory_read_only"  # ws.extras: True when the run may not write the bank at all (a frozen loop)

# Defaults of the memory tools' caps (the ToolCaps fields of the same names), for callers without a workspace.
MEMORY_CAP_DEFAULTS = {
    "mem_search_k_max": 20,  # mem_search: largest k
    "mem_get_max": 3,  # mem_get: most ids per call
    "mem_quote_max": 2000,  # mem_quote: largest max_chars
    "event_max_chars": 8000,  # event_log: largest event, in characters of JSON
    "event_log_quota_chars": 2_000_000,  # event_log: all events of one workspace, in characters of JSON
    "mem_add_max": 50,  # mem_add: most calls per workspace
}

_TITLE_CLIP, _DESC_CLIP = 120, 160  # mem_search shows titles and descriptions cut to these (characters)
_OVERHEAD = 512
# Workspace.call measures results as JSON text; escapes (\n, \") can double a character, so caps on text
# fields are multiplied by this.
_JSON = 2
_HIT_CHARS = _JSON * (_TITLE_CLIP + _DESC_CLIP + 1) + 200


@cache
def _item_chars() -> int:
    """Largest mem_get item as JSON text, from the memory records' field limits (imported on first use)."""
    from rlmlab.memory import LIMITS

    return _JSON * (LIMITS["title"] + LIMITS["description"] + LIMITS["content"] + LIMITS["domain"]
                    + LIMITS["template"] + LIMITS["meta"] + LIMITS["tags"] * (LIMITS["tag"] + 4)) + 400

_default_store: MemoryStore | None = None


def _cap(caps: Any, name: str) -> int:
    return int(getattr(caps, name, MEMORY_CAP_DEFAULTS[name]))


def _bounds(name: str) -> Bounds:
    return Bounds(minimum=1, cap=name)


def attach_memory(ws: Workspace, store: MemoryStore | None, *, read_only: bool = False) -> None:
    """Give a workspace its memory store (None detaches it). ``read_only``: mem_add keeps what the run proposes
    in the workspace and logs nothing to the store (a frozen bank's test phase)."""
    if store is None:
        ws.extras.pop(MEMORY_KEY, None)
        ws.extras.pop(READ_ONLY_KEY, None)
    else:
        ws.extras[MEMORY_KEY] = store
        ws.extras[READ_ONLY_KEY] = bool(read_only)


def set_default_store(store: MemoryStore | None) -> None:
    """The store used by workspaces that have none attached (None clears it)."""
    global _default_store
    _default_store = store


def memory_of(ws: Workspace) -> MemoryStore:
    """The workspace's memory store; ToolError if none is attached."""
    # Explicit None checks: a MemoryStore has __len__, so an empty store is falsy.
    store = ws.extras.get(MEMORY_KEY)
    if store is None:
        store = _default_store
    if store is None:
        raise ToolError("memory: no memory store is attached to this workspace; "
                        "attach one with rlmlab.tools.attach_memory(workspace, MemoryStore(path))")
    return store


def _check_range(arg: str, value: Any, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"{arg}: expected an integer from {lo} to {hi}, got {value!r}")
    if not lo <= value <= hi:
        raise ToolError(f"{arg}: {value} is out of range; allowed {lo} to {hi}")


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


@tool(cap=lambda caps: _cap(caps, "mem_search_k_max") * _HIT_CHARS + _OVERHEAD, group="memory")
def mem_search(
    ws: Workspace,
    query: str,
    k: Annotated[int, _bounds("mem_search_k_max")] = 6,
    polarity: Literal["success", "failure"] | None = None,
    role: str | None = None,
) -> dict:
    """Search memory: ids, titles and one-line descriptions of the best k items (no content; use mem_get).

    Args:
        query: free text; punctuation and search operators are ignored.
        k: items to return, 1 to the search cap (default cap 20).
        polarity: "success" (strategies) or "failure" (guardrails); None for both.
        role: only items for this role (e.g. "general"); None for all.
    """
    k_max = _cap(ws.caps, "mem_search_k_max")
    _check_range("k", k, 1, k_max)
    if not isinstance(query, str) or not query.strip():
        raise ToolError("query: empty; give some words to search for")
    q_max = getattr(ws.caps, "pattern_max", 500)
    if len(query) > q_max:
        raise ToolError(f"query: {len(query)} characters, over the cap of {q_max}")
    from rlmlab.memory import ItemValidationError, query_tokens

    try:
        hits = memory_of(ws).search(query, k, polarity=polarity, role=role)
    except ItemValidationError as exc:
        raise ToolError(str(exc)) from None
    out: dict[str, Any] = {
        "hits": [{"id": h.id, "title": _clip(h.title, _TITLE_CLIP), "description": _clip(h.description, _DESC_CLIP),
                  "polarity": h.polarity, "role": h.role} for h in hits],
        "count": len(hits),
    }
    if not query_tokens(query):
        out["note"] = "the query has no searchable words (only stopwords or punctuation)"
    return out


@tool(cap=lambda caps: _cap(caps, "mem_get_max") * _item_chars() + _OVERHEAD, group="memory")
def mem_get(ws: Workspace, ids: list[str] | str) -> dict:
    """Fetch full memory items by id (at most the mem_get cap per call, default 3).

    An item with a code template carries it under "template": Python with {{name:type}} slots to fill from
    the query.

    Args:
        ids: ids from mem_search (a list, or one id as a string).
    """
    if isinstance(ids, str):
        ids = [ids]
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ToolError(f"ids: expected a list of id strings from mem_search, got {ids!r:.80}")
    cap = _cap(ws.caps, "mem_get_max")
    if not ids:
        raise ToolError("ids: empty; pass ids from mem_search")
    if len(ids) > cap:
        raise ToolError(f"ids: {len(ids)} ids requested, over the cap of {cap}; "
                        f"call mem_get with at most {cap} ids at a time")
    from rlmlab.memory import MemoryStoreError

    store = memory_of(ws)
    own = ws.extras.get(CANDIDATES_KEY, {})
    banked = [i for i in ids if i not in own]
    try:
        found = {it.id: it for it in store.get_many(banked)}
    except MemoryStoreError as exc:
        raise ToolError(f"ids: {exc}; ids come from mem_search") from None
    store.record_usage(banked)
    return {"items": [_item_view(found[i] if i in found else own[i]) for i in ids]}


def _item_view(item: MemoryItem) -> dict[str, Any]:
    keep = ("id", "title", "description", "content", "polarity", "role", "scope", "layer", "tags", "domain",
            "uses", "wins")
    data = item.to_dict()
    view = {name: data[name] for name in keep}
    if item.template is not None:  # code with {{name:type}} slots to copy, filling each slot from the query
        view["template"] = item.template
    return view


@tool(cap=lambda caps: _JSON * _cap(caps, "mem_quote_max") + _OVERHEAD, group="memory")
def mem_quote(
    ws: Workspace,
    id: str,
    max_chars: Annotated[int, _bounds("mem_quote_max")] = 500,
    start: Annotated[int, Bounds(minimum=0)] = 0,
) -> dict:
    """A bounded excerpt of one item's content: characters [start, start + max_chars).

    Args:
        id: an id from mem_search.
        max_chars: characters to return, 1 to the quote cap (default cap 2000).
        start: offset in the content to start from (0-based).
    """
    _check_range("max_chars", max_chars, 1, _cap(ws.caps, "mem_quote_max"))
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise ToolError(f"start: {start!r} is not allowed; use an integer >= 0")
    from rlmlab.memory import MemoryStoreError

    store = memory_of(ws)
    own = ws.extras.get(CANDIDATES_KEY, {})
    try:
        item = own[id] if isinstance(id, str) and id in own else store.get(id)
    except MemoryStoreError as exc:
        raise ToolError(f"id: {exc}; ids come from mem_search") from None
    if item.id not in own:
        store.record_usage([id])
    text = item.content[start : start + max_chars]
    return {"id": item.id, "start": start, "end": start + len(text), "length": len(item.content), "text": text,
            "truncated": start + len(text) < len(item.content)}


@tool(cap=256, group="memory")
def mem_add(
    ws: Workspace,
    title: str,
    description: str,
    content: str,
    polarity: Literal["success", "failure"],
    role: str = "general",
    tags: list[str] | None = None,
    scope: str = "global",
) -> dict:
    """Propose a memory item; returns its id, whether it was new, and its status.

    From a model's run the item is a candidate: this run can read it with mem_get, but no search or later run
    sees it until the run's judge accepts the run (or a person admits it). An item the bank already holds, or
    one added from a person's own namespace, is "active".

    Args:
        title: short name of the strategy or guardrail (at most 200 characters).
        description: one line saying when it applies (at most 500 characters).
        content: the strategy itself (at most 4000 characters).
        polarity: "success" for a strategy that worked, "failure" for a guardrail against a mistake.
        role: who it is for, a lower-case slug such as "general".
        tags: a few lower-case keywords.
        scope: where it applies, a lower-case slug such as "global" or "task".
    """
    from rlmlab.memory import ItemValidationError, MemoryItem, propose_candidate

    ws.charge("mem_add_max", 1, _cap(ws.caps, "mem_add_max"), unit="calls")
    store = memory_of(ws)
    try:
        item = MemoryItem(title=title, description=description, content=content, polarity=polarity, role=role,
                          tags=tags or [], scope=scope, source="mem_add")
    except ItemValidationError as exc:
        raise ToolError(str(exc)) from None
    if item.id in store:
        return {"id": item.id, "created": False, "status": "active"}
    if ws.store.open:  # a person's own namespace (rlmlab repl, %load_ext rlmlab): no model wrote it
        return {**store.add(item).to_dict(), "status": "active"}
    own = ws.extras.setdefault(CANDIDATES_KEY, {})
    created = item.id not in own
    if created and not ws.extras.get(READ_ONLY_KEY):  # a frozen bank (a test phase) keeps them in the run only
        created = propose_candidate(store, item).created
    own.setdefault(item.id, item)
    return {"id": item.id, "created": created, "status": "candidate"}


@tool(cap=128, group="memory")
def event_log(ws: Workspace, obj: dict, kind: str = "note") -> dict:
    """Append an object to the event log (stored, never shown back); returns the event id.

    Args:
        obj: a JSON object to record (BlobRefs are stored as handles).
        kind: a short label for the event, e.g. "note" or "hypothesis".
    """
    if not isinstance(obj, dict):
        raise ToolError(f"obj: expected a dict (JSON object), got {type(obj).__name__}")
    payload = encode_handles(obj)
    try:
        size = len(json.dumps(payload, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ToolError(f"obj: not JSON-serialisable: {exc}") from None
    cap = _cap(ws.caps, "event_max_chars")
    if size > cap:
        raise ToolError(f"obj: {size} characters of JSON, over the cap of {cap}; log a smaller object or a BlobRef")
    ws.charge("event_log_quota_chars", size, _cap(ws.caps, "event_log_quota_chars"))
    from rlmlab.memory import ItemValidationError

    try:
        event_id = memory_of(ws).log_event(kind, payload)
    except ItemValidationError as exc:
        raise ToolError(str(exc)) from None
    return {"event_id": event_id, "kind": kind.strip()}
