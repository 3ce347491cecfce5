"""agenda: a worker's task list (add, list, complete); completing an item asks for the evidence."""

from __future__ import annotations

from typing import Literal

from rlmlab.errors import ToolError
from rlmlab.tools._registry import tool
from rlmlab.tools._workspace import Workspace

__all__ = ["agenda"]


@tool(cap=4096, group="agenda")
def agenda(ws: Workspace, action: Literal["add", "list", "complete"], item: str | None = None,
           reason: str | None = None) -> dict:
    """Keep a task list: add an item, list items, or complete one with the reason it is done.

    Args:
        action: "add", "list" or "complete".
        item: the item text (add) or the item's text or number (complete).
        reason: for complete: concrete, verifiable evidence that the item is finished.
    """
    items: list[dict] = ws.extras.setdefault("agenda", [])
    if action == "add":
        if not item or not item.strip():
            raise ToolError("item: empty; give the task to add")
        if len(items) >= ws.caps.agenda_max:
            raise ToolError(f"agenda: {len(items)} items, the cap (ToolCaps.agenda_max); complete or reuse items "
                            "instead of adding more")
        items.append({"n": len(items) + 1, "item": item.strip()[:200], "done": False, "reason": None})
        return {"added": items[-1], "open": sum(not i["done"] for i in items)}
    if action == "complete":
        match = next((i for i in items if str(i["n"]) == str(item) or i["item"] == item), None)
        if match is None:
            raise ToolError(f"item: no agenda item {item!r}; items: {[i['n'] for i in items]}")
        match.update(done=True, reason=(reason or "")[:300])
        return {"completed": match, "open": sum(not i["done"] for i in items)}
    if action != "list":
        raise ToolError(f"action: {action!r}; use 'add', 'list' or 'complete'")
    return {"items": items[-20:], "open": sum(not i["done"] for i in items)}
