"""Packers: one per layer, each with an explicit character budget it never exceeds.

L0 (sense card, <= 600) and L1 (constraints and anti-patterns, <= 1000) wrap the ontology/crate cards
and ``pack_constraints``; L2 packs the top-K success strategies and top-K failure guardrails, each
polarity with its own share of the budget; L3 packs an artifact's summary (<= 1000), never its full text.
Every packer returns a :class:`Packed` saying what went in, what was left out and how long it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rlmlab.memory._records import Artifact, MemoryItem
from rlmlab.text import cut_lines

__all__ = ["Packed", "DEFAULT_BUDGETS", "pack_text", "pack_l2", "pack_l3", "summarise_markdown", "clip_words"]

# Characters per layer: L0 and L1 are the spec's; L2 is configurable (its default fits 3 + 2 items with
# ~250 characters of content each); L3 is the spec's guide-summary budget (E4 used 935).
DEFAULT_BUDGETS = {"L0": 600, "L1": 1000, "L2": 1500, "L3": 1000}

_L2_HEADERS = {"success": "Strategies that worked before:", "failure": "Guardrails from past failures:"}


@dataclass
class Packed:
    """A packer's output: the ``text`` to inject (``len(text) <= budget``) and what went into it.

    ``item_ids`` are the items or artifact packed, in order; ``dropped`` the ones given but left out for
    lack of room; ``clipped`` the ones whose content was shortened.
    """

    layer: str
    text: str
    budget: int
    item_ids: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    clipped: list[str] = field(default_factory=list)
    source: str = ""

    def __post_init__(self) -> None:
        if len(self.text) > self.budget:  # a packer bug, never the caller's input
            raise AssertionError(f"{self.layer} packer produced {len(self.text)} characters over its budget {self.budget}")

    @property
    def chars(self) -> int:
        return len(self.text)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "chars": self.chars}


def _check_budget(budget: Any) -> int:
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ValueError(f"budget: {budget!r} is not allowed; use an integer number of characters >= 0")
    return budget


def clip_words(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters, "…" marking a cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ""
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def pack_text(layer: str, text: str, budget: int, *, source: str = "") -> Packed:
    """A ready-made payload (a sense card, a constraint list) cut to whole lines within ``budget``."""
    budget = _check_budget(budget)
    return Packed(layer, cut_lines(text.strip(), budget), budget, source=source)


def pack_l2(successes: Sequence[MemoryItem], failures: Sequence[MemoryItem], budget: int = DEFAULT_BUDGETS["L2"], *,
            k_success: int = 3, k_failure: int = 2, content_chars: int = 300) -> Packed:
    """The L2 payload: up to ``k_success`` strategies, then up to ``k_failure`` guardrails, within ``budget``.

    Items are taken in the order given (the retrieval policy's ranking). Each polarity gets a share of
    the budget proportional to its item count, and room one leaves passes to the other, so long
    strategies cannot crowd out every guardrail. Within a section every item first gets its line
    ``- title: description`` (cut to the room left, or dropped when under 20 characters would remain);
    the room still left is then shared evenly among the items for up to ``content_chars`` of content each.
    """
    budget = _check_budget(budget)
    groups = [("success", list(successes)[:max(k_success, 0)]), ("failure", list(failures)[:max(k_failure, 0)])]
    given = [it.id for _, items in groups for it in items]
    total = sum(len(items) for _, items in groups) or 1
    blocks: list[str] = []
    packed: list[str] = []
    clipped: list[str] = []
    used = carry = 0
    for gi, (polarity, items) in enumerate(groups):
        if not items:
            continue
        last = all(not later for _, later in groups[gi + 1:])
        share = budget - used if last else int(budget * len(items) / total) + carry
        sep = 2 if blocks else 0  # a blank line between the two sections
        room = min(share, budget - used) - sep
        block, ids, cut = _l2_section(_L2_HEADERS[polarity], items, room, content_chars)
        if block:
            blocks.append(block)
            packed += ids
            clipped += cut
            used += sep + len(block)
            carry = max(share - sep - len(block), 0)
        else:
            carry = share
    text = cut_lines("\n\n".join(blocks), budget)
    return Packed("L2", text, budget, packed, [i for i in given if i not in packed], clipped, source="memory")


def _l2_section(header: str, items: list[MemoryItem], room: int, content_chars: int
                ) -> tuple[str, list[str], list[str]]:
    """One polarity's block within ``room`` characters: (text, ids packed, ids shortened); ("", [], []) if none fit."""
    room -= len(header)
    heads: list[tuple[MemoryItem, str]] = []
    clipped: list[str] = []
    for it in items:
        full = f"- {it.title}: {it.description}"
        head = clip_words(full, min(240, room - 1))
        if len(head) < 20:
            continue
        if head != full:
            clipped.append(it.id)
        heads.append((it, head))
        room -= len(head) + 1
    if not heads:
        return "", [], []
    lines: list[str] = []
    for n, (it, head) in enumerate(heads):
        lines.append(head)
        limit = min(content_chars, room // (len(heads) - n) - 3)
        body = clip_words(it.content, limit) if limit >= 12 else ""
        if body:
            lines.append("  " + body)
            room -= len(body) + 3
        if body != " ".join(it.content.split()) and it.id not in clipped:
            clipped.append(it.id)
    return "\n".join([header, *lines]), [it.id for it, _ in heads], clipped


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)")


def _md_blocks(text: str) -> list[tuple[str, str]]:
    """(kind, text) blocks of Markdown: "heading", "bullet" (with its continuation lines) or "para"
    (hard-wrapped lines joined); fenced code and blank lines are left out."""
    blocks: list[tuple[str, str]] = []
    in_fence = False
    for raw in text.splitlines():
        if raw.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if not raw.strip():
            blocks.append(("blank", ""))
            continue
        m, b = _HEADING.match(raw), _BULLET.match(raw)
        if m:
            blocks.append(("heading", m.group(1)))
        elif b:
            blocks.append(("bullet", b.group(1)))
        elif blocks and blocks[-1][0] in ("bullet", "para"):
            kind, prev = blocks[-1]
            blocks[-1] = (kind, f"{prev} {raw.strip()}")
        else:
            blocks.append(("para", raw.strip()))
    return [blk for blk in blocks if blk[0] != "blank"]


def summarise_markdown(text: str, budget: int, *, line_chars: int = 160) -> str:
    """A deterministic extractive summary of a Markdown guide, at most ``budget`` characters.

    Lines are chosen in tiers and printed in document order: first each section's heading together with
    the first sentence of its first paragraph (a section is taken whole or not at all, in order), then
    bullet points, then the first sentence of later paragraphs; a line is taken only if it still fits.
    Each line is cut to ``line_chars`` at a word boundary. Fenced code blocks are left out; hard-wrapped
    paragraphs and bullets are joined first.
    """
    budget = _check_budget(budget)
    entries: list[tuple[int, int, int, str]] = []  # (tier, group, position, line); tier 0 groups go together
    first_in_section, group = True, -1
    for pos, (kind, body) in enumerate(_md_blocks(text)):
        if kind == "heading":
            group = pos
            entries.append((0, group, pos, clip_words(body, line_chars - 1) + ":"))
            first_in_section = True
        elif kind == "bullet":
            entries.append((1, pos, pos, "- " + clip_words(body, line_chars - 2)))
        else:
            s = _SENTENCE.match(body)
            line = clip_words(s.group(1) if s else body, line_chars)
            entries.append((0, group, pos, line) if first_in_section else (2, pos, pos, line))
            first_in_section = False
    chosen: set[int] = set()
    used = -1  # the first line has no newline before it
    for tier in range(3):
        groups: dict[int, list[tuple[int, str]]] = {}
        for t, g, pos, line in entries:
            if t == tier:
                groups.setdefault(g, []).append((pos, line))
        for lines in groups.values():
            cost = sum(len(line) + 1 for _, line in lines)
            if used + cost <= budget:
                chosen.update(pos for pos, _ in lines)
                used += cost
    return "\n".join(line for _, _, pos, line in entries if pos in chosen)


def pack_l3(artifact: Artifact, budget: int = DEFAULT_BUDGETS["L3"]) -> Packed:
    """The L3 payload of an artifact: a title line and its summary (the artifact's own if it has one,
    else :func:`summarise_markdown` of the content), within ``budget``. The full content is never injected."""
    budget = _check_budget(budget)
    head = clip_words(f"{artifact.kind.capitalize()}: {artifact.title}", min(200, budget))
    room = budget - len(head) - 1
    if room <= 0:
        return Packed("L3", cut_lines(head, budget), budget, [artifact.id] if head else [], source=artifact.kind)
    if artifact.summary:
        body, clipped = cut_lines(artifact.summary, room), len(artifact.summary) > room
    else:
        body, clipped = summarise_markdown(artifact.content, room), True
    text = f"{head}\n{body}" if body else head
    return Packed("L3", text, budget, [artifact.id], [], [artifact.id] if clipped else [], source=artifact.kind)
