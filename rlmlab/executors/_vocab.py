"""Closed vocabularies for tool arguments a small model cannot write freely: GBNF rules that replace a free string.

A 135M model asked to write a tree-sitter query or a SPARQL query as free text misspells node kinds, invents
prefixes and unbalances parentheses, so the call fails and nothing is learnt. Under the step grammar those
arguments instead come from what the oracles define:

- ``ast_query(..., query)``: an s-expression over tree-sitter-rust's named node kinds and field names, three
  levels deep, with captures and an optional ``(#eq? @cap "name")`` on an identifier of the query;
- ``sparql_query(query)``: a SELECT over the question's own CURIEs and a few RDF/OWL basics, each named CURIE
  used, as many columns as the question asks, a count where it asks how many, one FILTER over its own text and
  IRIs (:mod:`._sparql_space`).

Numbers in arithmetic already come from the query (see :mod:`._step_grammar`). Each vocabulary is a dict of
GBNF rules whose first entry is the argument's rule; :func:`argument_vocabularies` gives them by ``tool.arg``.
"""

from __future__ import annotations

from functools import lru_cache
from collections.abc import Sequence
from typing import Any

from rlmlab.executors._gbnf import gbnf_lit
from rlmlab.executors._sparql_space import SPARQL_VARS, question_sparql_rules, sparql_rules

__all__ = ["argument_vocabularies", "ts_query_rules", "named_captures", "sparql_rules", "rust_node_kinds",
           "ontology_terms", "CAPTURES", "SPARQL_VARS"]

CAPTURES = ("name", "type", "field", "param", "item", "x")

# Items with a name of their own, as tree-sitter-rust parses them: the name's node kind and the children that hold
# what a question about the item asks (a function's parameters and return type, a struct's fields, an enum's
# variants, a trait's methods) in the shapes the tree-sitter oracle reads them, each captured under one name, and
# those capture names.
# every parameter the oracle reads (self, name: type, ...): offering "parameter" or "self_parameter" alone only
# offers a part of the list (the model picked self_parameter for fns without self and got no match)
_PARAMS = '"parameters: (parameters (_) @param)"'
_RETURN = '"return_type: (_) @type"'
_FIELDS = '"body: (field_declaration_list " ("(field_declaration) @field" | "(field_declaration name: (field_identifier) @field)") ")"'
_NAMED_ITEMS = {
    "function_item": ("identifier", (_PARAMS, _RETURN, f"{_PARAMS} \" \" {_RETURN}"), ("param", "type")),
    "function_signature_item": ("identifier", (_PARAMS, _RETURN, f"{_PARAMS} \" \" {_RETURN}"), ("param", "type")),
    "struct_item": ("type_identifier", (_FIELDS,), ("field",)),
    "union_item": ("type_identifier", (_FIELDS,), ("field",)),
    "enum_item": ("type_identifier", ('"body: (enum_variant_list " ("(enum_variant) @field" | '
                                      '"(enum_variant name: (identifier) @field)") ")"',), ("field",)),
    "trait_item": ("type_identifier", ('"body: (declaration_list (" ("function_signature_item" | "function_item") '
                                       '" name: (identifier) @item))"',), ("item",)),
    "type_item": ("type_identifier", ('"type: (_) @type"',), ("type",)),
}


_ASKABLE = {"parameters": "param", "return_type": "type"}  # a function's fields a question asks for by its words


def _asked(child: str, asks: Sequence[str] | None) -> bool:
    """Whether a named item's child shape reads only what the question asks (``asks``: fields; None: anything)."""
    return not asks or all(f"{f}:" not in child or f in asks for f in _ASKABLE)


def named_captures(top: Sequence[str], asks: Sequence[str] | None = None) -> tuple[str, ...]:
    """The captures a question about one named item of the ``top`` kinds reads (see ``named`` of
    :func:`ts_query_rules`): a function's ``param`` and ``type`` (only those of the fields in ``asks``), a
    struct's or enum's ``field`` ... ."""
    skip = {cap for f, cap in _ASKABLE.items() if asks and f not in asks}
    caps = tuple(dict.fromkeys(c for k in top if k in _NAMED_ITEMS for c in _NAMED_ITEMS[k][2]))
    return tuple(c for c in caps if c not in skip) or caps


def _alt(options: list[str]) -> str:
    return "(" + " | ".join(options) + ")"


@lru_cache(maxsize=1)
def rust_node_kinds() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """tree-sitter-rust's named, visible node kinds and its field names (sorted, each once); empty without it."""
    try:
        import tree_sitter_rust
        from tree_sitter import Language
    except ImportError:
        return (), ()
    lang = Language(tree_sitter_rust.language())
    kinds = {lang.node_kind_for_id(i) for i in range(lang.node_kind_count)
             if lang.node_kind_is_named(i) and lang.node_kind_is_visible(i)}
    fields = {lang.field_name_for_id(i) for i in range(1, lang.field_count + 1)}
    return tuple(sorted(k for k in kinds if k)), tuple(sorted(f for f in fields if f))


def ts_query_rules(idents: list[str], *, top: Sequence[str] | None = None, inner: Sequence[str] | None = None,
                   fields: Sequence[str] | None = None, named: bool = False,
                   asks: Sequence[str] | None = None) -> dict[str, str] | None:
    """GBNF rules of a Python string literal holding a tree-sitter query (single-quoted, so the ``#eq?`` value can
    be double-quoted); ``idents`` are the names an ``#eq?`` may compare with. ``top`` (the outer pattern's node
    kinds), ``inner`` (nested patterns' kinds) and ``fields`` narrow the vocabulary; a name tree-sitter-rust does
    not have is dropped, and a list left empty means no narrowing. ``named`` (a question about one item the query
    names) makes the outer pattern read that item only: an item kind with a name (``_`` for kinds alike), its first
    child ``name: (identifier) @name`` (the kind tree-sitter-rust gives that item's name), then one or two of the
    fields that item has (a function's ``parameters`` and ``return_type``, a struct's or enum's ``body``: what a
    question about it asks; with ``asks``, a function's ``parameters`` or ``return_type`` only when asked) and it
    ends with ``(#eq? @name "X")`` over ``idents``, so a bare ``(function_item)`` that lists every function is not a step.
    None without tree-sitter-rust."""
    kinds, all_fields = rust_node_kinds()
    if not kinds:
        return None
    real = set(kinds)
    top_kinds = [k for k in (top or ()) if k in real] or list(kinds)
    inner_kinds = [k for k in (inner or ()) if k in real] or list(kinds)
    fields = [f for f in (fields or ()) if f in set(all_fields)] or list(all_fields)
    cap = _alt([gbnf_lit(c) for c in CAPTURES])
    rules = {
        "ts-q": "\"'\" ts-pat1 \"'\"",
        "ts-pat1": '"(" ts-top (" " ts-child1){0,3} ts-pred? ")" (" @" ts-cap)?',
        "ts-child1": '(ts-field ": ")? ts-pat2',
        "ts-pat2": '"(" ts-kind (" " ts-child2){0,2} ")" (" @" ts-cap)?',
        "ts-child2": '(ts-field ": ")? ts-pat3',
        "ts-pat3": '"(" ts-kind ")" (" @" ts-cap)?',
        "ts-top": _alt(['"_"', *(gbnf_lit(k) for k in top_kinds)]),
        "ts-kind": _alt(['"_"', *(gbnf_lit(k) for k in inner_kinds)]),
        "ts-field": _alt([gbnf_lit(f) for f in fields]),
        "ts-cap": cap,
    }
    # item kinds whose names are alike become one wildcard head: "(_ name: (identifier) @name return_type: ...)"
    # reads a fn and a trait's fn declaration alike, where a choice between the two kinds misleads
    groups: dict[str, list[str]] = {}
    for k in (top_kinds if idents and named else []):
        if k in _NAMED_ITEMS:
            groups.setdefault(_NAMED_ITEMS[k][0], []).append(k)
    if groups:
        heads = []
        for i, (name_kind, kinds) in enumerate(groups.items()):
            kind = kinds[0] if len(kinds) == 1 else "_"
            children = list(dict.fromkeys(c for k in kinds for c in _NAMED_ITEMS[k][1]))
            children = [c for c in children if _asked(c, asks)] or children
            rules[f"ts-head-{i}"] = f'{gbnf_lit(f"{kind} name: ({name_kind}) @name ")} {_alt(children)}'
            heads.append(f"ts-head-{i}")
        rules["ts-pat1"] = '"(" ' + _alt(heads) + ' " (#eq? @name \\"" ts-ident "\\"))"'
        rules["ts-ident"] = _alt([gbnf_lit(i) for i in idents])
    elif idents:
        rules["ts-pred"] = '" (#eq? @" ts-cap " \\"" ts-ident "\\")"'
        rules["ts-ident"] = _alt([gbnf_lit(i) for i in idents])
    else:
        rules["ts-pat1"] = rules["ts-pat1"].replace(" ts-pred?", "")
    return rules


def ontology_terms(graph: Any, limit: int = 600) -> tuple[str, ...]:
    """The graph's terms as CURIEs of its declared prefixes (subjects, predicates and IRI objects whose namespace
    has a prefix), sorted, at most ``limit``; terms without a prefix are left out (the tool resolves prefixes only)."""
    from rdflib import URIRef

    prefixes = sorted(((str(ns), p) for p, ns in graph.namespaces() if p), key=lambda x: -len(x[0]))
    out: set[str] = set()
    for triple in graph:
        for node in triple:
            if not isinstance(node, URIRef):
                continue
            iri = str(node)
            for ns, prefix in prefixes:
                local = iri[len(ns):]
                if iri.startswith(ns) and local and local.replace("_", "a").replace("-", "a").isalnum():
                    out.add(f"{prefix}:{local}")
                    break
    return tuple(sorted(out)[:limit])


def argument_vocabularies(workspace: Any, slots: dict[str, list[str]], query: str = "") -> dict[str, dict[str, str]]:
    """The closed vocabularies of the workspace's tools, by ``"tool.arg"``: tree-sitter queries when ``ast_query``
    is registered, SPARQL when ``sparql_query`` is and an ontology is attached. ``slots`` are the query's literals
    by type (``query_slots``): identifiers for ``#eq?``, CURIEs for SPARQL terms."""
    names = {spec.name for spec in workspace.registry}
    out: dict[str, dict[str, str]] = {}
    if "ast_query" in names:
        rules = ts_query_rules(list(slots.get("ident") or [])[:24])
        if rules is not None:
            out["ast_query.query"] = rules
    if "sparql_query" in names:
        from rdflib import Graph

        # attach_ontology keeps the loaded Graph under "ontology"; none (a code or arith task): nothing to offer
        graph = workspace.extras.get("ontology")
        if isinstance(graph, Graph) and len(graph):
            out["sparql_query.query"] = question_sparql_rules(query, slots)
    return out
