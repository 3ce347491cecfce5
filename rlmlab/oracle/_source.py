"""Source texts and their tree-sitter parses, cached by content hash so a batch parses each file once."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cache
from typing import Any

__all__ = ["SourceEntry", "ParseCache", "rust_language"]


@cache
def rust_language() -> Any:
    import tree_sitter
    import tree_sitter_rust

    return tree_sitter.Language(tree_sitter_rust.language())


@dataclass
class SourceEntry:
    """One source text: its hash, its lines, its parse tree (made on first use) and memoised extractions."""

    text: str
    sha256: str
    memo: dict[str, Any] = field(default_factory=dict)
    _lines: list[str] | None = None
    _tree: Any = None

    @classmethod
    def of(cls, text: str) -> "SourceEntry":
        return cls(text, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.text.splitlines()
        return self._lines

    @property
    def tree(self) -> Any:
        if self._tree is None:
            import tree_sitter

            self._tree = tree_sitter.Parser(rust_language()).parse(self.text.encode("utf-8", "surrogatepass"))
        return self._tree


class ParseCache:
    """Least-recently-used map from content hash to :class:`SourceEntry`; counts hits and parses."""

    def __init__(self, max_entries: int = 512):
        self.max_entries = max_entries
        self._entries: OrderedDict[str, SourceEntry] = OrderedDict()
        self._by_id: dict[int, SourceEntry] = {}  # id(text) -> entry for the very string object an entry holds
        self.hits = self.misses = 0

    def entry(self, text: str) -> SourceEntry:
        # A batch passes the same string objects again and again (TraceValidator keeps the file texts it read):
        # the entry holding that very object is found without hashing the text again.
        known = self._by_id.get(id(text))
        if known is not None and known.text is text and known.sha256 in self._entries:
            self.hits += 1
            self._entries.move_to_end(known.sha256)
            return known
        fresh = SourceEntry.of(text)
        found = self._entries.get(fresh.sha256)
        if found is not None:
            self.hits += 1
            self._entries.move_to_end(fresh.sha256)
            return found
        self.misses += 1
        self._entries[fresh.sha256] = fresh
        self._by_id[id(text)] = fresh
        if len(self._entries) > self.max_entries:
            _, old = self._entries.popitem(last=False)
            if self._by_id.get(id(old.text)) is old:
                del self._by_id[id(old.text)]
        return fresh

    def __len__(self) -> int:
        return len(self._entries)

    def stats(self) -> dict[str, int]:
        return {"entries": len(self._entries), "hits": self.hits, "misses": self.misses}
