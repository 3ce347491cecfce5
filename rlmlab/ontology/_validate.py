"""validate_sparql: deterministic L1 checks of a SPARQL query against an ontology, before it runs.

The query is parsed with rdflib's SPARQL parser and translated to its algebra; the
checks read the triple patterns. Findings are warnings about the query, not errors of
this function: it returns ``[]`` for a clean query and never raises for a bad one.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from pyparsing import ParseException, ParseResults
from rdflib import BNode, Graph, Literal, URIRef, Variable
from rdflib.namespace import OWL, RDF, RDFS, XSD
from rdflib.paths import Path as PropertyPath
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.parserutils import CompValue

from rlmlab.ontology._constraints import PropertyConstraint, constraints_from_graph
from rlmlab.ontology._loader import as_graph
from rlmlab.ontology._schema import WELL_KNOWN_PREFIXES, namespace_of, schema_of
from rlmlab.records import Record

__all__ = ["Finding", "validate_sparql", "FINDING_KINDS"]

# finding kind -> id of the anti-pattern in data/packs/sparql_antipatterns.jsonl it is an instance of
FINDING_KINDS = {
    "syntax_error": None,
    "missing_prefix": "ap-missing-prefix",
    "unknown_property": "ap-invented-term",
    "unknown_class": "ap-invented-term",
    "type_is_property": "ap-type-is-property",
    "domain_violation": "ap-domain-mismatch",
    "range_violation": "ap-range-mismatch",
    "missing_limit": "ap-select-no-limit",
    "cartesian_product": "ap-cartesian-product",
    "string_iri_filter": "ap-filter-str-iri",
}
_CLOSED_NAMESPACES = {str(ns): ns for ns in (RDF, RDFS, OWL, XSD)}  # rdflib knows every term of these
_ANY_CLASS = {str(OWL.Thing), str(RDFS.Resource)}
_STR_IRI_FILTER = re.compile(r"STR\s*\(\s*[?$]\w+\s*\)\s*!?=\s*[\"']\s*(?:https?|urn):", re.IGNORECASE)


@dataclass(frozen=True)
class Finding(Record):
    """One problem in a query: ``kind`` (a key of FINDING_KINDS), a message for the model, the term concerned."""

    kind: str
    message: str
    term: str | None = None
    line: int | None = None  # 1-based, syntax errors only
    col: int | None = None
    antipattern: str | None = None  # id in the anti-pattern pack


@dataclass
class _Context:
    """What the checks need, from a graph (full) or from a constraint list (no instance typing)."""

    constraints: dict[str, PropertyConstraint]
    known: set[str]  # every IRI the ontology knows
    classes: set[str]
    properties: set[str]
    own_namespaces: set[str]
    prefixes: dict[str, str]
    curie_map: dict[str, str] = field(default_factory=dict)  # namespace -> prefix, for messages
    graph: Graph | None = None

    @classmethod
    def of(cls, source: Graph | str | Path | Sequence[PropertyConstraint]) -> "_Context":
        if isinstance(source, (Graph, str, Path)):
            schema = schema_of(as_graph(source))
            cons = {c.property: c for c in constraints_from_graph(schema.graph)}
            props = {str(p) for p in (*schema.relations, *schema.annotations)}
            props.update(str(p) for p in schema.graph.subjects(RDF.type, OWL.AnnotationProperty) if isinstance(p, URIRef))
            prefixes = {**WELL_KNOWN_PREFIXES, **{p: str(ns) for p, ns in schema.graph.namespaces()}, **schema.prefixes}
            return cls(cons, {str(n) for n in schema.nodes}, {str(c) for c in schema.classes}, props,
                       set(schema.own_namespaces), prefixes, {ns: p for p, ns in schema.prefixes.items()}, schema.graph)
        cons = {c.property: c for c in source}
        classes = {x for c in cons.values() for x in (*c.domain_ok, *c.range_ok)}
        own = {namespace_of(p) for p in cons}
        curie_map = {}
        for c in cons.values():  # the packed line starts with the property's CURIE: recover its prefix
            name = c.text.split(": ", 1)[0]
            if ":" in name and not name.startswith("<") and c.property.endswith(name.split(":", 1)[1]):
                curie_map[namespace_of(c.property)] = name.split(":", 1)[0]
        prefixes = {**WELL_KNOWN_PREFIXES, **{p: ns for ns, p in curie_map.items()}}
        for p, ns in WELL_KNOWN_PREFIXES.items():
            curie_map.setdefault(ns, p)
        return cls(cons, set(cons) | classes, classes, set(cons), own, prefixes, curie_map)

    def curie(self, term: Any) -> str:
        text = str(term)
        ns = namespace_of(text)
        return f"{self.curie_map[ns]}:{text[len(ns):]}" if ns in self.curie_map else f"<{text}>"

    def unknown(self, iri: str) -> bool:
        ns = namespace_of(iri)
        if ns in _CLOSED_NAMESPACES:
            return not (URIRef(iri) in _CLOSED_NAMESPACES[ns] or re.fullmatch(r"_\d+", iri[len(ns):]))
        return ns in self.own_namespaces and iri not in self.known

    def suggest(self, iri: str, pool: Iterable[str]) -> str:
        ns = namespace_of(iri)
        if ns in _CLOSED_NAMESPACES:
            pool = [ns + name for name in getattr(_CLOSED_NAMESPACES[ns], "__annotations__", {})]
        local = {p[len(ns):]: p for p in pool if namespace_of(p) == ns}
        best = difflib.get_close_matches(iri[len(ns):], sorted(local), n=1, cutoff=0.6)
        return f"; did you mean {self.curie(local[best[0]])}?" if best else ""


def _finding(kind: str, message: str, term: str | None = None, **extra: Any) -> Finding:
    return Finding(kind, message, term, antipattern=FINDING_KINDS.get(kind), **extra)


def _walk(node: Any) -> Iterator[CompValue]:
    """Every CompValue in a parse tree or algebra, depth first."""
    if isinstance(node, CompValue):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, (list, tuple, ParseResults)):
        for value in node:
            yield from _walk(value)


def _path_iris(path: Any) -> Iterator[URIRef]:
    if isinstance(path, URIRef):
        yield path
    elif isinstance(path, PropertyPath):
        for name in ("args", "arg", "path"):
            sub = getattr(path, name, None)
            for part in sub if isinstance(sub, (list, tuple)) else [sub] if sub is not None else []:
                yield from _path_iris(part)


def _vars_in(node: Any) -> set[Any]:
    found: set[Any] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, (Variable, BNode)):
            found.add(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, ParseResults, set)):
            stack.extend(item)
    return found


def _merge(groups: list[set[Any]]) -> list[set[Any]]:
    """Union overlapping sets until none overlap (order-stable)."""
    out: list[set[Any]] = []
    for g in groups:
        g = set(g)
        keep = []
        for o in out:
            if o & g:
                g |= o
            else:
                keep.append(o)
        out = keep + [g]
    return [g for g in out if g]


def _pattern_nodes(triple: tuple[Any, Any, Any]) -> set[Any]:
    """What links a triple pattern to others: its variables and blank nodes, and its subject if an IRI.

    A shared subject IRI (<s> p ?x . <s> q ?y) joins patterns; a shared object IRI does not,
    since ?a a C . ?b a C is a cross product of all Cs with themselves.
    """
    nodes = _vars_in(list(triple))
    if isinstance(triple[0], URIRef):
        nodes.add(triple[0])
    return nodes


def _components(node: Any, report: list[set[Any]]) -> list[set[Any]]:
    """Variable sets that are joined to one another inside ``node``; disconnected union branches go to ``report``."""
    if not isinstance(node, CompValue):
        return []
    name = node.name
    if name == "BGP":
        return _merge([_pattern_nodes(t) for t in node.triples if _pattern_nodes(t)])
    if name == "Union":
        for branch in (node.p1, node.p2):
            comps = _components(branch, report)
            if len(comps) > 1:
                report.extend(comps)
        return [set().union(*(_vars_in(node.p1), _vars_in(node.p2)))]
    if name == "Minus":
        return _components(node.p1, report)
    if name == "ToMultiSet" and isinstance(node.p, CompValue) and node.p.name != "values":
        return [set(node.p.PV or _vars_in(node.p))]  # a sub-select joins on its projected variables
    groups: list[set[Any]] = []
    for key in ("p", "p1", "p2"):
        groups += _components(getattr(node, key), report)
    if name in ("Filter", "Extend", "LeftJoin") or name.startswith("values"):
        for key in ("expr", "var", "res"):
            value = getattr(node, key)
            if value is not None:
                groups.append(_vars_in(value) | ({value} if isinstance(value, Variable) else set()))
    return _merge(groups)


def validate_sparql(query: str,
                    graph_or_constraints: Graph | str | Path | Sequence[PropertyConstraint]) -> list[Finding]:
    """Check a query against an ontology (a Graph, an ontology file, or constraints from :func:`constraints_from_graph`).

    Kinds, in report order: ``syntax_error`` (with the parser's line/col; nothing else is
    checked), ``missing_prefix``, ``unknown_property``, ``unknown_class``, ``type_is_property``,
    ``domain_violation``, ``range_violation`` (a variable typed ``?x a C`` whose class is
    neither a sub- nor a superclass of any declared domain/range class; literals for object
    properties; with a graph, also IRIs whose rdf:type in the graph does not fit),
    ``string_iri_filter``, ``cartesian_product``, ``missing_limit`` (a SELECT without
    LIMIT, unless it only aggregates without GROUP BY).
    """
    ctx = _Context.of(graph_or_constraints)
    try:
        parsed = parseQuery(query)
    except ParseException as exc:
        return [_finding("syntax_error", f"SPARQL syntax error: {exc.msg} at line {exc.lineno}, column {exc.col}: "
                         f"{exc.line.strip()[:120]!r}", exc.line.strip()[:120] or None, line=exc.lineno, col=exc.col)]
    findings: list[Finding] = []
    declared = {d.prefix or "" for d in _walk(parsed[0]) if d.name == "PrefixDecl"}
    used = sorted({n.prefix or "" for n in _walk(parsed[1]) if n.name == "pname"})
    for prefix in used:
        if prefix not in declared:
            known = f" (e.g. PREFIX {prefix}: <{ctx.prefixes[prefix]}>)" if prefix in ctx.prefixes else ""
            findings.append(_finding("missing_prefix", f"prefix {prefix}: is used but not declared{known}", f"{prefix}:"))
    try:
        algebra = translateQuery(parsed, initNs=ctx.prefixes).algebra
    except Exception as exc:  # rdflib raises plain Exception for an unknown prefix and scoping errors
        if not findings:
            findings.append(_finding("syntax_error", f"SPARQL error: {exc}", None))
        return findings

    triples = [t for node in _walk(algebra) if node.name == "BGP" for t in node.triples]
    if algebra.name == "ConstructQuery" and algebra.template:
        triples += list(algebra.template)
    findings += _term_findings(ctx, triples)
    findings += _type_findings(ctx, triples)
    if _STR_IRI_FILTER.search(query):
        findings.append(_finding("string_iri_filter", "FILTER compares STR(?x) with an IRI string; compare the IRI "
                                 "itself (?x = prefix:Name) or use VALUES", None))
    report: list[set[Any]] = []
    in_patterns = {n for t in triples for n in _pattern_nodes(t)}
    top = [c for c in _components(algebra.p, report) if c & in_patterns]  # drop BIND/aggregate-only results
    for comps in ([top] if len(top) > 1 else []) + ([report] if report else []):
        names = " / ".join(" ".join(sorted(f"?{v}" for v in c if isinstance(v, Variable))) or "[]" for c in comps)
        findings.append(_finding("cartesian_product", f"triple patterns fall into {len(comps)} groups that share no "
                                 f"variable ({names}): their rows are multiplied", None))
    if algebra.name == "SelectQuery" and not _has_limit(algebra) and not _single_row(algebra):
        star = " *" if not parsed[1].projection else ""
        findings.append(_finding("missing_limit", f"SELECT{star} without LIMIT: add LIMIT n so the result stays "
                                 "bounded", None))
    return findings


def _term_findings(ctx: _Context, triples: list[tuple[Any, Any, Any]]) -> list[Finding]:
    out, seen = [], set()
    for s, p, o in triples:
        for iri in _path_iris(p):
            if str(iri) not in seen and ctx.unknown(str(iri)):
                seen.add(str(iri))
                out.append(_finding("unknown_property", f"{ctx.curie(iri)} is not a property of the ontology"
                                    f"{ctx.suggest(str(iri), ctx.properties)}", str(iri)))
        if p == RDF.type and isinstance(o, URIRef):
            if str(o) in ctx.properties and str(o) not in ctx.classes:
                out.append(_finding("type_is_property", f"{ctx.curie(o)} is a property, not a class: "
                                    f"'a {ctx.curie(o)}' never matches; use it as a predicate", str(o)))
            elif str(o) not in seen and ctx.unknown(str(o)):
                seen.add(str(o))
                out.append(_finding("unknown_class", f"{ctx.curie(o)} is not a class of the ontology"
                                    f"{ctx.suggest(str(o), ctx.classes)}", str(o)))
    return out


def _types(ctx: _Context, triples: list[tuple[Any, Any, Any]]) -> dict[Any, set[str]]:
    """Classes each variable is typed with (``?x a C``), and with a graph, rdf:types of IRIs in the query."""
    types: dict[Any, set[str]] = {}
    for s, p, o in triples:
        if p == RDF.type and isinstance(o, URIRef) and isinstance(s, (Variable, BNode)):
            types.setdefault(s, set()).add(str(o))
    if ctx.graph is not None:
        for s, _, o in triples:
            for term in (s, o):
                if isinstance(term, URIRef) and term not in types:
                    named = {str(t) for t in ctx.graph.objects(term, RDF.type) if isinstance(t, URIRef)}
                    if named:
                        types[term] = named
    return types


def _fits(ctx: _Context, types: set[str], ok: tuple[str, ...]) -> bool:
    """Could a resource with these types be in the domain/range? Unknown (non-ontology) classes give the benefit of the doubt."""
    judged = [t for t in types if t in ctx.classes or namespace_of(t) in _CLOSED_NAMESPACES]
    if not judged or any(t in _ANY_CLASS for t in types):
        return True
    return any(t in ok for t in judged)


def _type_findings(ctx: _Context, triples: list[tuple[Any, Any, Any]]) -> list[Finding]:
    types = _types(ctx, triples)
    out = []
    for s, p, o in triples:
        con = ctx.constraints.get(str(p)) if isinstance(p, URIRef) else None
        if con is None:
            continue
        if con.domain and s in types and not _fits(ctx, types[s], con.domain_ok):
            out.append(_finding("domain_violation", f"{_show(ctx, s)} is a {_classes(ctx, types[s])} but "
                                f"{ctx.curie(p)} expects a subject of class {_classes(ctx, con.domain)}", str(p)))
        if not con.range:
            continue
        if isinstance(o, Literal) and not con.range_is_literal:
            out.append(_finding("range_violation", f"{ctx.curie(p)} expects an IRI of class {_classes(ctx, con.range)}, "
                                f"not the literal {o.n3()[:60]}", str(p)))
        elif isinstance(o, URIRef) and con.range_is_literal:
            out.append(_finding("range_violation", f"{ctx.curie(p)} expects a literal ({_classes(ctx, con.range)}), "
                                f"not the IRI {ctx.curie(o)}", str(p)))
        elif o in types and not _fits(ctx, types[o], con.range_ok):
            out.append(_finding("range_violation", f"{_show(ctx, o)} is a {_classes(ctx, types[o])} but "
                                f"{ctx.curie(p)} expects an object of class {_classes(ctx, con.range)}", str(p)))
    return out


def _show(ctx: _Context, term: Any) -> str:
    return f"?{term}" if isinstance(term, Variable) else ctx.curie(term) if isinstance(term, URIRef) else term.n3()


def _classes(ctx: _Context, classes: Iterable[str]) -> str:
    return "|".join(ctx.curie(c) for c in sorted(classes))


_MODIFIERS = ("Project", "Distinct", "Reduced", "OrderBy", "Slice", "ToMultiSet")


def _has_limit(algebra: CompValue) -> bool:
    node = algebra.p
    while isinstance(node, CompValue) and node.name in _MODIFIERS:
        if node.name == "Slice" and node.length is not None:
            return True
        node = node.p
    return False


def _single_row(algebra: CompValue) -> bool:
    """An aggregate without GROUP BY (SELECT (COUNT(*) AS ?n) ...) gives exactly one row."""
    node = algebra.p
    while isinstance(node, CompValue):
        if node.name == "Group":
            return node.expr is None
        if node.name not in (*_MODIFIERS, "Extend", "Filter", "AggregateJoin"):
            return False
        node = node.p
    return False
