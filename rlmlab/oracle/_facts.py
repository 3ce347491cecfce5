"""Facts about parsed sources beyond the item extractors: the names a question may refer to, type aliases, test
functions, derived traits, method calls and unsafe blocks, each memoised on the source's :class:`SourceEntry`.

A name "occurs in the source" when the source defines a function, struct, enum, trait or type alias of that
name, or names it as the type or the trait of an impl block (``impl Display for Version`` in display.rs makes
both names occur there, though ``Version`` is defined elsewhere) or as a derived trait (``#[derive(Clone)]``).
Macro names, modules, locals and words in comments or strings are not names here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
import re
from typing import Any

from rlmlab.oracle._treesitter import TreeSitterOracle, walk_nodes

__all__ = ["NameIndex", "NAME_KINDS", "TYPE_KINDS", "TRAIT_KINDS", "type_aliases", "is_test_fn", "in_test_code",
           "method_calls", "unsafe_blocks", "derived_traits", "last_segment"]

# What a name can be: a definition ("fn", "struct", "enum", "trait", "type") or a use in an impl header.
NAME_KINDS = ("fn", "struct", "enum", "trait", "type", "impl_type", "impl_trait")
TYPE_KINDS = frozenset({"struct", "enum", "type", "impl_type"})
TRAIT_KINDS = frozenset({"trait", "impl_trait"})
_ATTRIBUTE = re.compile(r"#\[\s*([\w:]+)")
_DERIVE = re.compile(r"derive\s*\(([^)]*)\)")
_UNSAFE_BLOCK = re.compile(r"^(?!\s*//).*\bunsafe\s*\{")


def last_segment(name: str) -> str:
    """``get2_mut`` for ``Slab::get2_mut``, ``Sender`` for ``Sender<T>``."""
    return name.split("<", 1)[0].strip().rsplit("::", 1)[-1]


def _memo(oracle: TreeSitterOracle, key: str, make: Any) -> Any:
    memo = oracle.entry.memo
    if key not in memo:
        memo[key] = make()
    return memo[key]


def type_aliases(oracle: TreeSitterOracle) -> list[tuple[int, str]]:
    """(line, name) of every ``type Name = ...;`` item of the file (associated types of traits and impls
    excluded: they are not aliases a module declares)."""
    def make() -> list[tuple[int, str]]:
        out = []
        for node in walk_nodes(oracle.root, "type_item"):
            if node.parent is not None and node.parent.type == "declaration_list" and node.parent.parent is not None \
                    and node.parent.parent.type in ("impl_item", "trait_item"):
                continue
            name = node.child_by_field_name("name")
            if name is not None:
                out.append((name.start_point[0] + 1, name.text.decode("utf-8", "replace")))
        return out
    return _memo(oracle, "type_aliases", make)


def _test_regions(oracle: TreeSitterOracle) -> list[tuple[int, int]]:
    """(first, last) lines of every ``#[cfg(test)]`` module."""
    def make() -> list[tuple[int, int]]:
        out = []
        for node in walk_nodes(oracle.root, "mod_item"):
            prev = node.prev_named_sibling
            while prev is not None and prev.type == "attribute_item":
                if b"cfg(test)" in prev.text.replace(b" ", b""):
                    out.append((node.start_point[0] + 1, node.end_point[0] + 1))
                    break
                prev = prev.prev_named_sibling
        return out
    return _memo(oracle, "test_regions", make)


def is_test_fn(oracle: TreeSitterOracle, line: int) -> bool:
    """Whether the function whose name is on ``line`` carries a ``#[test]`` attribute (or a ``...::test`` one
    such as ``#[tokio::test]``): the attribute and comment lines right above it are read, up to the first other
    line."""
    lines = oracle.entry.lines
    i = line - 2
    while i >= 0:
        text = lines[i].strip()
        if text.startswith("#["):
            head = _ATTRIBUTE.match(text)
            if head and (head.group(1) == "test" or head.group(1).endswith("::test")):
                return True
        elif not text.startswith("//"):
            return False
        i -= 1
    return False


def in_test_code(oracle: TreeSitterOracle, line: int) -> bool:
    """Whether ``line`` lies in a ``#[cfg(test)]`` module."""
    return any(a <= line <= b for a, b in _test_regions(oracle))


def derived_traits(oracle: TreeSitterOracle) -> dict[str, set[str]]:
    """Type name -> the traits its ``#[derive(...)]`` attributes name (last path segments)."""
    def make() -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for node in walk_nodes(oracle.root, "struct_item", "enum_item", "union_item"):
            name = node.child_by_field_name("name")
            prev = node.prev_named_sibling
            while name is not None and prev is not None and prev.type in ("attribute_item", "line_comment",
                                                                          "block_comment"):
                text = prev.text.decode("utf-8", "replace")
                for args in _DERIVE.findall(text):
                    out.setdefault(name.text.decode("utf-8", "replace"), set()).update(
                        last_segment(t) for t in re.findall(r"[\w:]+", args))
                prev = prev.prev_named_sibling
        return out
    return _memo(oracle, "derived_traits", make)


def method_calls(oracle: TreeSitterOracle, name: str) -> list[int]:
    """Lines of every call ``x.name(...)`` in code (comments, doc examples and strings are not code), one entry
    per call."""
    def make() -> dict[str, list[int]]:
        calls: dict[str, list[int]] = {}
        for node in walk_nodes(oracle.root, "call_expression"):
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "field_expression":
                method = fn.child_by_field_name("field")
                if method is not None:
                    calls.setdefault(method.text.decode("utf-8", "replace"), []).append(method.start_point[0] + 1)
        return calls
    return _memo(oracle, "method_calls", make).get(name, [])


def unsafe_blocks(oracle: TreeSitterOracle) -> list[int]:
    """Lines that open an ``unsafe { ... }`` block, as the grep oracle counts them: code lines (not ``//``
    comments) holding ``unsafe {``, those in macro_rules bodies included (tree-sitter sees those only as tokens).
    One entry per line."""
    return _memo(oracle, "unsafe_blocks",
                 lambda: [i for i, line in enumerate(oracle.entry.lines, 1) if _UNSAFE_BLOCK.search(line)])


_INDEXES: dict[tuple[tuple[str | None, str], ...], "NameIndex"] = {}
_INDEXES_KEPT = 64


@dataclass
class NameIndex:
    """Which kinds of item each name is in a set of parsed files (see the module docstring), and where."""

    kinds: dict[str, set[str]] = field(default_factory=dict)
    where: dict[tuple[str, str], set[str | None]] = field(default_factory=dict)  # (name, kind) -> files

    @classmethod
    def of(cls, oracles: Sequence[TreeSitterOracle]) -> "NameIndex":
        """The index of the files, memoised by their paths and content hashes (a batch asks about one tree
        again and again)."""
        key = tuple((o.path, o.entry.sha256) for o in oracles)
        found = _INDEXES.get(key)
        if found is None:
            found = _INDEXES[key] = cls._build(oracles)
            while len(_INDEXES) > _INDEXES_KEPT:
                del _INDEXES[next(iter(_INDEXES))]
        return found

    @classmethod
    def _build(cls, oracles: Sequence[TreeSitterOracle]) -> "NameIndex":
        index = cls()
        for o in oracles:
            index._add_all(o.path, "fn", (f.name for f in o.get_functions()))
            index._add_all(o.path, "struct", (s.name for s in o.get_structs()))
            index._add_all(o.path, "enum", (e.name for e in o.get_enums()))
            index._add_all(o.path, "trait", (t.name for t in o.get_traits()))
            index._add_all(o.path, "type", (name for _, name in type_aliases(o)))
            for impl in o.get_impls():
                index._add(o.path, "impl_type", impl.type_name)
                if impl.trait_name:
                    index._add(o.path, "impl_trait", impl.trait_name)
            for typ, traits in derived_traits(o).items():  # a derive implements the trait too
                index._add_all(o.path, "impl_trait", traits)
        return index

    def _add_all(self, path: str | None, kind: str, names: Iterable[str]) -> None:
        for name in names:
            self._add(path, kind, name)

    def _add(self, path: str | None, kind: str, name: str) -> None:
        if name:
            self.kinds.setdefault(name, set()).add(kind)
            self.where.setdefault((name, kind), set()).add(path)

    def kinds_of(self, word: str) -> frozenset[str]:
        """The kinds the word's last path segment names here (empty: it names nothing)."""
        return frozenset(self.kinds.get(last_segment(word), ()))

    def files_defining(self, name: str, kinds: Iterable[str]) -> set[str | None]:
        return set().union(*(self.where.get((name, k), set()) for k in kinds))
