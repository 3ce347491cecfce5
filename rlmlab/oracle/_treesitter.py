"""TreeSitterOracle: Rust items, error-handling patterns and s-expression queries from a tree-sitter parse.

Line numbers are 1-based and point at the item's name (the line ``grep -n``
and Universal Ctags report).

Items inside item-level macro bodies (``cfg_fs! { ... }``, ``pin_project! { ... }``) are token trees to
tree-sitter (and invisible to ctags). The oracle re-parses the brace body of every macro invocation in item
position (a file's top level or an impl/trait/mod body) as Rust source placed at its original line and
column, nested macros included, and reports the items found there with ``from_macro`` set to the macro's
name ("cfg_rt", or "cfg_rt > cfg_fs" when nested). Items whose re-parse has errors are dropped (a body that is
not Rust, such as ``thread_local!``'s). :meth:`TreeSitterOracle.query` and the error-pattern counts still read
the file's own tree only. ``benchmarks/macro_items.py`` checks the recovered items against a count made
without tree-sitter.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache, lru_cache
from typing import Any

from rlmlab.oracle._items import (
    AstMatch, AstQueryError, Capture, EnumInfo, ErrorPatternCounts, FieldInfo, FunctionInfo, ImplInfo, Param,
    StructInfo, TraitInfo, VariantInfo,
)
from rlmlab.oracle._source import ParseCache, SourceEntry, rust_language
from rlmlab.oracle._verdicts import normalise_ws

__all__ = [
    "TreeSitterOracle", "AstQueryError", "AstMatch", "FunctionInfo", "Param", "FieldInfo", "StructInfo",
    "VariantInfo", "EnumInfo", "ImplInfo", "TraitInfo", "ErrorPatternCounts", "PANIC_MACROS", "last_segment"]

PANIC_MACROS = frozenset({"panic", "unreachable", "todo", "unimplemented"})


_POSITION = re.compile(r"at row (\d+), column (\d+)")


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _norm(node: Any) -> str | None:
    return normalise_ws(_text(node)) if node is not None else None


def _visibility(node: Any) -> str | None:
    for child in node.children:
        if child.type == "visibility_modifier":
            return normalise_ws(_text(child))
    return None


def last_segment(type_text: str) -> str:
    """``Foo`` for ``crate::a::Foo<T>``, ``&'a mut Foo``, ``dyn Foo``."""
    base = re.sub(r"^(?:&\s*(?:'\w+\s+)?(?:mut\s+)?|dyn\s+|impl\s+)", "", type_text.strip())
    return base.split("<", 1)[0].strip().rsplit("::", 1)[-1].strip()


# Node kinds the extractors read. Every item node has its keyword token as a child ("fn" in a function_item or
# function_signature_item, "struct", "enum", "impl", "trait"), and every macro invocation its "!". So the items
# are found from the keyword's occurrences in the source bytes: the node at each one (C's
# descendant_for_byte_range) is the keyword token only where it is one (not in a comment, string, identifier or
# token tree), and its parent is the item. That touches a few thousand nodes where a query pass visits every
# node of the tree (tokio: ~550,000, 3x the time); ``items_by_query`` is the query pass, kept as the reference
# the tests and benchmarks compare with (identical on tokio and on every crate of Debian's cargo registry).
_ITEM_KINDS = {"function": ("function_item", "function_signature_item"), "struct": ("struct_item",),
               "enum": ("enum_item",), "impl": ("impl_item",), "trait": ("trait_item",)}
_KEYWORDS = [(kw.encode(), re.compile(re.escape(kw.encode()) + rb"(?![A-Za-z0-9_])"), {t: kind for t in _ITEM_KINDS[kind]})
             for kw, kind in (("fn", "function"), ("struct", "struct"), ("enum", "enum"), ("impl", "impl"),
                              ("trait", "trait"))]  # (keyword, its occurrences, {item node type: kind})
_IDENT_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
# Macro invocations in item position (a direct child of the file or of an impl/trait/mod/extern body) may hold
# items; one in expression position (in a fn body) holds none. Collected as "macro".
_MACRO_PARENTS = ("source_file", "declaration_list")
_ITEM_QUERY = " ".join([*(f"({t}) @{name}" for name, types in _ITEM_KINDS.items() for t in types),
                        *(f"({p} (macro_invocation) @macro)" for p in _MACRO_PARENTS)])
_ERROR_KINDS = ("type_identifier", "try_expression", "match_arm", "call_expression", "macro_invocation")


def walk_nodes(root: Any, *types: str):
    """Every node of the given types below ``root``, in source order, by a Python TreeCursor walk."""
    wanted = set(types)
    cursor = root.walk()
    visited = False
    while True:
        if not visited:
            if cursor.node.type in wanted:
                yield cursor.node
            if cursor.goto_first_child():
                continue
        if cursor.goto_next_sibling():
            visited = False
            continue
        if not cursor.goto_parent():
            return
        visited = True


@cache
def _compiled(source: str) -> Any:
    """A query of the oracle's own, compiled once per process."""
    import tree_sitter

    return tree_sitter.Query(rust_language(), source)


def _kinds_query(kinds: tuple[tuple[str, str], ...]) -> Any:
    """A compiled query capturing each (node type, capture name) pair."""
    return _compiled(" ".join(f"({t}) @{name}" for t, name in kinds))


def _compiled_user_query(s_expression: str) -> Any:
    """The compiled query, or AstQueryError with the row and column tree-sitter reports."""
    import tree_sitter

    try:
        return _user_query(s_expression)
    except tree_sitter.QueryError as exc:
        message = str(exc)
        lines = s_expression.splitlines() or [""]
        pos = _POSITION.search(message)
        if pos:  # tree-sitter counts the column in bytes; the caret goes under the character
            row, column = int(pos.group(1)), int(pos.group(2))
            line = lines[row] if row < len(lines) else ""
            column = len(line.encode("utf-8")[:column].decode("utf-8", "ignore"))
            raise AstQueryError(s_expression, message, row, column) from None
        unclosed = _first_unclosed(s_expression)
        if unclosed is not None:  # "Unexpected EOF" of an unbalanced query: the bracket never closed, not the end
            char = lines[unclosed[0]][unclosed[1]]
            raise AstQueryError(s_expression, f"{message}: this {char} is never closed", *unclosed) from None
        raise AstQueryError(s_expression, message, len(lines) - 1, len(lines[-1])) from None


def _first_unclosed(s_expression: str) -> tuple[int, int] | None:
    """(row, column) of the first ( or [ of a query that is never closed, outside strings and ; comments."""
    opened: list[tuple[int, int]] = []
    for row, line in enumerate(s_expression.splitlines()):
        quoted = escaped = False
        for column, char in enumerate(line):
            if quoted:
                quoted, escaped = (escaped or char != '"'), (not escaped and char == "\\")
            elif char == '"':
                quoted = True
            elif char == ";":
                break
            elif char in "([":
                opened.append((row, column))
            elif char in ")]" and opened:
                opened.pop()
    return opened[0] if opened else None


@lru_cache(maxsize=256)
def _user_query(s_expression: str) -> Any:
    """A compiled user query (ast_query, TreeSitterOracle.query); QueryError is raised, not cached."""
    import tree_sitter

    return tree_sitter.Query(rust_language(), s_expression)


def _in_order(nodes: list[Any]) -> list[Any]:
    return sorted(nodes, key=lambda n: (n.start_byte, -n.end_byte))


class TreeSitterOracle:
    """Structural facts about one Rust source text.

    ``cache`` (a :class:`ParseCache`) shares parses and extractions between
    oracles built on the same text.
    """

    def __init__(self, source: str, path: str | None = None, cache: ParseCache | None = None):
        self.path = path
        self.entry: SourceEntry = cache.entry(source) if cache is not None else SourceEntry.of(source)
        self._in_macro = False  # a re-parsed macro body: items whose parse has errors are dropped

    @property
    def source(self) -> str:
        return self.entry.text

    @property
    def root(self) -> Any:
        return self.entry.tree.root_node

    @property
    def has_parse_errors(self) -> bool:
        return self.root.has_error

    def _nodes(self, name: str) -> list[Any]:
        """Nodes of one item kind of ``_ITEM_KINDS`` (or "macro": item-position macro invocations) in source
        order, found from their keywords (see ``_KEYWORDS``)."""
        return self._memo("item_nodes", self._items_by_keyword).get(name, [])

    def _items_by_keyword(self) -> dict[str, list[Any]]:
        data, root = self._utf8(), self.root
        found: dict[str, list[Any]] = {}
        for keyword, pattern, parents in _KEYWORDS:
            kind = keyword.decode()
            for m in pattern.finditer(data):
                start = m.start()
                if start and data[start - 1] in _IDENT_BYTES:
                    continue  # the tail of a longer identifier
                token = root.descendant_for_byte_range(start, start + len(keyword))
                if token.type == kind and (item := token.parent) is not None and item.type in parents:
                    found.setdefault(parents[item.type], []).append(item)
        bang = data.find(b"!")
        while bang >= 0:
            token = root.descendant_for_byte_range(bang, bang + 1)
            if token.type == "!" and (call := token.parent) is not None and call.type == "macro_invocation" \
                    and call.parent is not None and call.parent.type in _MACRO_PARENTS:
                found.setdefault("macro", []).append(call)
            bang = data.find(b"!", bang + 1)
        return {name: _in_order(nodes) for name, nodes in found.items()}

    def items_by_query(self) -> dict[str, list[Any]]:
        """The nodes ``_nodes`` finds, by one tree-sitter query pass over the whole tree (the reference)."""
        import tree_sitter

        captured = tree_sitter.QueryCursor(_compiled(_ITEM_QUERY)).captures(self.root)
        return {name: _in_order(nodes) for name, nodes in captured.items()}

    def _utf8(self) -> bytes:
        """The source as the bytes tree-sitter parsed (node offsets index these)."""
        return self._memo("utf8", lambda: self.source.encode("utf-8", "surrogatepass"))

    def _memo(self, key: str, make: Any) -> Any:
        if key not in self.entry.memo:
            self.entry.memo[key] = make()
        return self.entry.memo[key]

    # -- extractors ---------------------------------------------------------------------------------

    def get_functions(self) -> list[FunctionInfo]:
        return self._memo("functions", lambda: self._with_macro_items(
            [self._function(n) for n in self._items("function")],
            TreeSitterOracle.get_functions, enclosing=True))

    def get_structs(self) -> list[StructInfo]:
        return self._memo("structs", lambda: self._with_macro_items(
            [self._struct(n) for n in self._items("struct")], TreeSitterOracle.get_structs))

    def get_enums(self) -> list[EnumInfo]:
        return self._memo("enums", lambda: self._with_macro_items(
            [self._enum(n) for n in self._items("enum")], TreeSitterOracle.get_enums))

    def get_impls(self) -> list[ImplInfo]:
        return self._memo("impls", lambda: self._with_macro_items(
            [self._impl(n) for n in self._items("impl")], TreeSitterOracle.get_impls))

    def get_traits(self) -> list[TraitInfo]:
        return self._memo("traits", lambda: self._with_macro_items(
            [self._trait(n) for n in self._items("trait")], TreeSitterOracle.get_traits))

    def _items(self, name: str) -> list[Any]:
        """The nodes of one item kind (see :meth:`_nodes`); in a re-parsed macro body, only those parsed cleanly."""
        return [node for node in self._nodes(name) if not (self._in_macro and node.has_error)]

    # -- items inside item-level macro bodies -------------------------------------------------------

    def macro_bodies(self) -> list[tuple[str, "TreeSitterOracle", str | None]]:
        """(macro name, oracle over its brace body re-parsed in place, enclosing impl/trait or None) for each
        macro invocation in item position, in source order. Nested invocations are the sub-oracles' own."""
        return self._memo("macro_bodies", self._find_macro_bodies)

    def _find_macro_bodies(self) -> list[tuple[str, "TreeSitterOracle", str | None]]:
        raw = self._utf8()
        out = []
        for node in self._nodes("macro"):
            body = next((c for c in node.children if c.type == "token_tree"), None)
            if body is None or raw[body.start_byte:body.start_byte + 1] != b"{":
                continue
            name = _text(node.child_by_field_name("macro")).rsplit("::", 1)[-1]
            row, column = body.start_point  # column in bytes: padding with one space per byte keeps the lines
            inner = raw[body.start_byte + 1:body.end_byte - 1].decode("utf-8", "surrogatepass")
            sub = TreeSitterOracle("\n" * row + " " * (column + 1) + inner, self.path)
            sub._in_macro = True
            out.append((name, sub, self._enclosing(node)))
        return out

    def _with_macro_items(self, own: list[Any], extract: Any, enclosing: bool = False) -> list[Any]:
        found = list(own)
        for name, sub, outer in self.macro_bodies():
            for item in extract(sub):
                changes: dict[str, Any] = {"from_macro": name if item.from_macro is None
                                           else f"{name} > {item.from_macro}"}
                if enclosing and item.enclosing is None and outer is not None:
                    changes["enclosing"] = outer  # a method in `impl X { cfg_io! { fn read() } }` belongs to X
                found.append(replace(item, **changes))
        return sorted(found, key=lambda item: item.line) if len(found) != len(own) else found

    def count_error_patterns(self) -> ErrorPatternCounts:
        return self._memo("errors", self._count_error_patterns)

    def _function(self, node: Any) -> FunctionInfo:
        modifiers = next((c for c in node.children if c.type == "function_modifiers"), None)
        keywords = {c.type for c in modifiers.children} if modifiers is not None else set()
        params_node = node.child_by_field_name("parameters")
        parameters = []
        for p in params_node.named_children if params_node is not None else []:
            if p.type == "self_parameter":
                parameters.append(Param(normalise_ws(_text(p)), None))
            elif p.type == "parameter":
                parameters.append(Param(_norm(p.child_by_field_name("pattern")) or "",
                                        _norm(p.child_by_field_name("type"))))
            elif p.type == "variadic_parameter":
                parameters.append(Param("...", None))
        body = node.child_by_field_name("body")
        end = body.start_byte if body is not None else node.end_byte
        data = self._utf8()
        signature = normalise_ws(data[node.start_byte:end].decode("utf-8", "replace")).rstrip(";").strip()
        name = node.child_by_field_name("name")
        return FunctionInfo(
            line=name.start_point[0] + 1, name=_text(name),
            params=normalise_ws(_text(params_node))[1:-1] if params_node is not None else "",
            parameters=tuple(parameters), return_type=_norm(node.child_by_field_name("return_type")),
            is_async="async" in keywords, is_unsafe="unsafe" in keywords, is_const="const" in keywords,
            visibility=_visibility(node), enclosing=self._enclosing(node), has_body=body is not None,
            signature=signature,
        )

    @staticmethod
    def _enclosing(node: Any) -> str | None:
        parent = node.parent
        while parent is not None:
            if parent.type == "impl_item":
                trait, typ = parent.child_by_field_name("trait"), parent.child_by_field_name("type")
                return f"impl {_norm(trait)} for {_norm(typ)}" if trait is not None else f"impl {_norm(typ)}"
            if parent.type == "trait_item":
                return f"trait {_text(parent.child_by_field_name('name'))}"
            if parent.type in ("function_item", "mod_item"):
                return None
            parent = parent.parent
        return None

    @staticmethod
    def _fields(body: Any) -> tuple[str, tuple[FieldInfo, ...]]:
        if body is None:
            return "unit", ()
        if body.type == "field_declaration_list":
            return "named", tuple(FieldInfo(_text(f.child_by_field_name("name")), _norm(f.child_by_field_name("type")),
                                            _visibility(f))
                                  for f in body.named_children if f.type == "field_declaration")
        # ordered_field_declaration_list: (pub T, U); types are the `type` children in order
        fields, vis = [], None
        for child in body.named_children:
            if child.type == "visibility_modifier":
                vis = normalise_ws(_text(child))
            elif child.type not in ("attribute_item", "line_comment", "block_comment"):
                fields.append(FieldInfo(str(len(fields)), normalise_ws(_text(child)), vis))
                vis = None
        return "tuple", tuple(fields)

    def _struct(self, node: Any) -> StructInfo:
        name = node.child_by_field_name("name")
        kind, fields = self._fields(node.child_by_field_name("body"))
        return StructInfo(name.start_point[0] + 1, _text(name), _visibility(node), kind, fields)

    def _enum(self, node: Any) -> EnumInfo:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        variants = []
        for v in body.named_children if body is not None else []:
            if v.type == "enum_variant":
                kind, fields = self._fields(v.child_by_field_name("body"))
                variants.append(VariantInfo(_text(v.child_by_field_name("name")), kind, fields))
        return EnumInfo(name.start_point[0] + 1, _text(name), _visibility(node), tuple(variants))

    @staticmethod
    def _method_names(body: Any) -> tuple[str, ...]:
        if body is None:
            return ()
        return tuple(_text(c.child_by_field_name("name")) for c in body.named_children
                     if c.type in ("function_item", "function_signature_item"))

    def _impl(self, node: Any) -> ImplInfo:
        typ, trait = node.child_by_field_name("type"), node.child_by_field_name("trait")
        type_text, trait_text = _norm(typ) or "", _norm(trait)
        return ImplInfo(
            line=typ.start_point[0] + 1 if typ is not None else node.start_point[0] + 1,
            type=type_text, type_name=last_segment(type_text), trait=trait_text,
            trait_name=last_segment(trait_text) if trait_text else None,
            negative=any(c.type == "!" for c in node.children),
            methods=self._method_names(node.child_by_field_name("body")),
            is_unsafe=any(c.type == "unsafe" for c in node.children),
        )

    def _trait(self, node: Any) -> TraitInfo:
        name = node.child_by_field_name("name")
        return TraitInfo(name.start_point[0] + 1, _text(name), _visibility(node),
                         (_norm(node.child_by_field_name("bounds")) or "").lstrip(":").strip() or None,
                         self._method_names(node.child_by_field_name("body")))

    def _count_error_patterns(self) -> ErrorPatternCounts:
        result_types = question_marks = arms = unwraps = expects = panics = 0
        import tree_sitter

        q = _kinds_query(tuple((t, t) for t in _ERROR_KINDS))
        for node in (n for nodes in tree_sitter.QueryCursor(q).captures(self.root).values() for n in nodes):
            kind = node.type
            if kind == "type_identifier":
                # Result in type position: bare, generic (Result<T, E>) or as a path's last segment (io::Result<T>,
                # a scoped_type_identifier). The name of a `type Result<T> = ...` alias is a definition, not a use.
                parent = node.parent
                if _text(node) == "Result" and not (parent.type == "type_item"
                                                    and parent.child_by_field_name("name") == node):
                    result_types += 1
            elif kind == "try_expression":
                question_marks += 1
            elif kind == "match_arm":
                pattern = node.child_by_field_name("pattern")
                head = pattern.named_children[0] if pattern is not None and pattern.named_children else None
                if head is not None and head.type == "tuple_struct_pattern":
                    ctor = _text(head.child_by_field_name("type")).rsplit("::", 1)[-1]
                    arms += ctor in ("Ok", "Err")
            elif kind == "call_expression":
                fn = node.child_by_field_name("function")
                if fn is not None and fn.type == "field_expression":
                    method = _text(fn.child_by_field_name("field"))
                    unwraps += method == "unwrap"
                    expects += method == "expect"
            else:
                macro = _text(node.child_by_field_name("macro")).rsplit("::", 1)[-1]
                panics += macro in PANIC_MACROS
        return ErrorPatternCounts(result_types, question_marks, arms, unwraps, expects, panics)

    # -- queries ------------------------------------------------------------------------------------

    def query(self, s_expression: str) -> list[AstMatch]:
        """Every match of a tree-sitter query, with its first line and named captures, in source order."""
        return self.query_first(s_expression, None)[1]

    def query_first(self, s_expression: str, k: int | None) -> tuple[int, list[AstMatch]]:
        """(number of matches, the first ``k`` of them in source order); all of them when ``k`` is None.

        Only the ``k`` kept matches have their captures' text read, so a query with millions of matches counts
        them in bounded memory.
        """
        import heapq

        import tree_sitter

        q = _compiled_user_query(s_expression)
        kept: list[tuple[int, int, int, dict[str, list[Any]]]] = []  # (-line, -seq, ...): a max-heap
        total = 0
        for seq, (index, captured) in enumerate(tree_sitter.QueryCursor(q).matches(self.root)):
            total += 1
            line = min((n.start_point[0] + 1 for nodes in captured.values() for n in nodes), default=0)
            if k is None or len(kept) < k:
                heapq.heappush(kept, (-line, -seq, index, captured))
            elif (line, seq) < (-kept[0][0], -kept[0][1]):
                heapq.heapreplace(kept, (-line, -seq, index, captured))
        out = []
        for neg_line, _, index, captured in sorted(kept, key=lambda e: (-e[0], -e[1])):
            caps = {name: [Capture(_text(n), n.start_point[0] + 1, n.start_point[1] + 1) for n in nodes]
                    for name, nodes in captured.items()}
            out.append(AstMatch(index, -neg_line, caps))
        return total, out
