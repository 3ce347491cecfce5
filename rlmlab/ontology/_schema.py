"""OntologySchema: the facts every L0/L1 artefact is derived from, computed once per graph.

Classes, properties, domains/ranges (``owl:unionOf`` expanded, inherited along
``rdfs:subPropertyOf``), the named class hierarchy, prefixes, and a deterministic
importance score per term. Terms of the meta vocabularies (rdf, rdfs, owl, xsd)
are never "core" terms of an ontology.
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import DCTERMS, OWL, RDF, RDFS, XSD

__all__ = ["OntologySchema", "schema_of", "namespace_of", "META_NAMESPACES", "WELL_KNOWN_PREFIXES"]

XML_NS = "http://www.w3.org/XML/1998/namespace"
META_NAMESPACES = frozenset({str(RDF), str(RDFS), str(OWL), str(XSD), XML_NS})
# Used only for namespaces the graph does not bind itself.
WELL_KNOWN_PREFIXES = {"rdf": str(RDF), "rdfs": str(RDFS), "owl": str(OWL), "xsd": str(XSD), "dct": str(DCTERMS)}

_CLASS_TYPES = (OWL.Class, RDFS.Class)
_RELATION_TYPES = (OWL.ObjectProperty, OWL.DatatypeProperty, RDF.Property)
_LITERAL_RANGES = frozenset({RDFS.Literal, RDF.langString, RDF.PlainLiteral, RDF.XMLLiteral})


def namespace_of(iri: str) -> str:
    """The namespace part of an IRI: up to and including its last ``#``, else its last ``/``."""
    cut = iri.rfind("#")
    if cut < 0:
        cut = iri.rfind("/")
    return iri[: cut + 1] if cut >= 0 else iri


def is_datatype(iri: URIRef) -> bool:
    return str(iri).startswith(str(XSD)) or iri in _LITERAL_RANGES


@dataclass
class OntologySchema:
    """Structural facts of one graph. Build with :func:`schema_of` (cached); treat as read-only."""

    graph: Graph
    nodes: frozenset[URIRef] = field(init=False)

    def __post_init__(self) -> None:
        g = self.graph
        nodes: set[URIRef] = set()
        for triple in g:
            nodes.update(t for t in triple if isinstance(t, URIRef))
        self.nodes = frozenset(nodes)

    # -- vocabulary ---------------------------------------------------------------------------------

    @cached_property
    def prefixes(self) -> dict[str, str]:
        """prefix -> namespace for every namespace the graph's IRIs use and a prefix is known for.

        One prefix per namespace: the graph's own binding (non-empty, shortest, then
        alphabetical), else a well-known one.
        """
        used = {namespace_of(str(n)) for n in self.nodes}
        best: dict[str, str] = {}
        bound = sorted(((p, str(ns)) for p, ns in self.graph.namespaces() if p), key=lambda x: (len(x[0]), x[0]))
        for prefix, ns in bound + sorted(WELL_KNOWN_PREFIXES.items()):
            if ns in used and ns not in best.values() and prefix not in best:
                best[prefix] = ns
        return dict(sorted(best.items()))

    def curie(self, iri: URIRef | str) -> str:
        """``prov:Entity`` if a prefix covers the IRI's namespace (and the local name is plain), else ``<iri>``."""
        iri = str(iri)
        ns = namespace_of(iri)
        local = iri[len(ns):]
        if local and (local[0].isalpha() or local[0] == "_") and all(c.isalnum() or c in "_-" for c in local):
            for prefix, pns in self.prefixes.items():
                if pns == ns:
                    return f"{prefix}:{local}"
        return f"<{iri}>"

    def is_meta(self, iri: URIRef) -> bool:
        return namespace_of(str(iri)) in META_NAMESPACES

    @cached_property
    def _schema_subjects(self) -> frozenset[URIRef]:
        """Subjects declared as a class, a property or an ontology: the schema, as opposed to instance data."""
        types = (*_CLASS_TYPES, *_RELATION_TYPES, OWL.AnnotationProperty, OWL.Ontology, RDFS.Datatype)
        return frozenset(s for t in types for s in self.graph.subjects(RDF.type, t) if isinstance(s, URIRef))

    def _instance_triples(self):
        """Triples about instances: a named subject that is neither declared schema nor a meta-vocabulary term."""
        for s, p, o in self.graph:
            if isinstance(s, URIRef) and s not in self._schema_subjects and not self.is_meta(s):
                yield s, p, o

    @cached_property
    def classes(self) -> tuple[URIRef, ...]:
        """Named classes outside the meta vocabularies (declared, in rdfs:subClassOf, or used in rdf:type), by IRI."""
        found = {c for t in _CLASS_TYPES for c in self.graph.subjects(RDF.type, t)}
        found.update(o for o in self.graph.objects(None, RDFS.subClassOf))
        found.update(s for s in self.graph.subjects(RDFS.subClassOf, None))
        found.update(o for _, p, o in self._instance_triples() if p == RDF.type)
        return tuple(sorted(c for c in found if isinstance(c, URIRef) and not self.is_meta(c)))

    @cached_property
    def relations(self) -> tuple[URIRef, ...]:
        """Object, datatype and plain rdf:Property properties outside the meta vocabularies, sorted by IRI.

        Predicates used on instance data count too, so a graph without a schema still has relations.
        """
        found = {p for t in _RELATION_TYPES for p in self.graph.subjects(RDF.type, t)}
        annotation_only = set(self.graph.subjects(RDF.type, OWL.AnnotationProperty)) - found
        found.update(p for _, p, _ in self._instance_triples() if p not in annotation_only)
        return tuple(sorted(p for p in found if isinstance(p, URIRef) and not self.is_meta(p)))

    @cached_property
    def annotations(self) -> tuple[URIRef, ...]:
        """Annotation-only properties outside the meta vocabularies, sorted by IRI."""
        rel = set(self.relations)
        found = set(self.graph.subjects(RDF.type, OWL.AnnotationProperty))
        return tuple(sorted(p for p in found if isinstance(p, URIRef) and p not in rel and not self.is_meta(p)))

    @cached_property
    def own_namespaces(self) -> tuple[str, ...]:
        """Namespaces that define classes or properties, by number of such terms (desc), then IRI."""
        counts = Counter(namespace_of(str(t)) for t in (*self.classes, *self.relations, *self.annotations))
        return tuple(ns for ns, _ in sorted(counts.items(), key=lambda x: (-x[1], x[0])))

    # -- hierarchy -----------------------------------------------------------------------------------

    @cached_property
    def superclasses(self) -> dict[URIRef, frozenset[URIRef]]:
        """Direct named superclasses of each class (owl:Thing and blank nodes left out)."""
        out: dict[URIRef, set[URIRef]] = {c: set() for c in self.classes}
        for s, o in self.graph.subject_objects(RDFS.subClassOf):
            if isinstance(s, URIRef) and isinstance(o, URIRef) and o != OWL.Thing and s != o:
                out.setdefault(s, set()).add(o)
        return {c: frozenset(v) for c, v in out.items()}

    @cached_property
    def _ancestors(self) -> dict[URIRef, frozenset[URIRef]]:
        memo: dict[URIRef, frozenset[URIRef]] = {}

        def up(c: URIRef, seen: frozenset[URIRef]) -> frozenset[URIRef]:
            if c in memo:
                return memo[c]
            acc: set[URIRef] = set()
            for sup in self.superclasses.get(c, ()):
                if sup not in seen:
                    acc.add(sup)
                    acc.update(up(sup, seen | {sup}))
            memo[c] = frozenset(acc)
            return memo[c]

        return {c: up(c, frozenset({c})) for c in self.superclasses}

    def ancestors(self, cls: URIRef) -> frozenset[URIRef]:
        """All named superclasses of ``cls`` (transitive, without ``cls`` itself)."""
        return self._ancestors.get(cls, frozenset())

    @cached_property
    def _descendants(self) -> dict[URIRef, frozenset[URIRef]]:
        down: dict[URIRef, set[URIRef]] = {}
        for c, ups in self._ancestors.items():
            for u in ups:
                down.setdefault(u, set()).add(c)
        return {c: frozenset(v) for c, v in down.items()}

    def descendants(self, cls: URIRef) -> frozenset[URIRef]:
        return self._descendants.get(cls, frozenset())

    def compatible(self, cls: URIRef, other: URIRef) -> bool:
        """True if one class is the other or a subclass of it (an instance could be both)."""
        if cls == other or OWL.Thing in (cls, other) or RDFS.Resource in (cls, other):
            return True
        return other in self.ancestors(cls) or cls in self.ancestors(other)

    @cached_property
    def roots(self) -> tuple[URIRef, ...]:
        """Classes with subclasses but no named superclass; most descendants first, then IRI."""
        found = [c for c in self.classes if not self.superclasses.get(c) and self.descendants(c)]
        return tuple(sorted(found, key=lambda c: (-len(self.descendants(c)), str(c))))

    # -- domain / range ------------------------------------------------------------------------------

    def _class_alternatives(self, node: URIRef | BNode | Literal) -> list[URIRef]:
        """A named class, or the named members of an ``owl:unionOf`` class expression; [] otherwise."""
        if isinstance(node, URIRef):
            return [node]
        if isinstance(node, BNode):
            out: list[URIRef] = []
            for lst in self.graph.objects(node, OWL.unionOf):
                for member in Collection(self.graph, lst):
                    out.extend(self._class_alternatives(member))
            return out
        return []

    def _declared(self, prop: URIRef, axis: URIRef) -> tuple[URIRef, ...]:
        alts: set[URIRef] = set()
        for node in self.graph.objects(prop, axis):
            alts.update(self._class_alternatives(node))
        alts.discard(OWL.Thing)
        return tuple(sorted(alts))

    def _inherited(self, prop: URIRef, axis: URIRef) -> tuple[tuple[URIRef, ...], URIRef | None]:
        """Declared alternatives of ``prop``, else of its nearest super-property that has some (breadth first)."""
        own = self._declared(prop, axis)
        if own:
            return own, None
        seen, frontier = {prop}, [prop]
        while frontier:
            nxt: list[URIRef] = []
            for p in frontier:
                for sup in sorted(o for o in self.graph.objects(p, RDFS.subPropertyOf) if isinstance(o, URIRef)):
                    if sup in seen:
                        continue
                    seen.add(sup)
                    found = self._declared(sup, axis)
                    if found:
                        return found, sup
                    nxt.append(sup)
            frontier = nxt
        return (), None

    def domain(self, prop: URIRef) -> tuple[tuple[URIRef, ...], URIRef | None]:
        """(domain classes, any one of which fits; the super-property they come from or None)."""
        return self._inherited(prop, RDFS.domain)

    def range(self, prop: URIRef) -> tuple[tuple[URIRef, ...], URIRef | None]:
        return self._inherited(prop, RDFS.range)

    # -- importance ----------------------------------------------------------------------------------

    @cached_property
    def scores(self) -> Counter[URIRef]:
        """Triples mentioning each IRI as subject or object, plus its uses as the predicate of instance data.

        A predicate used on schema terms (labels, definitions of classes) does not count, so
        an annotation vocabulary does not outrank the relations an ontology is about.
        """
        score: Counter[URIRef] = Counter()
        for s, p, o in self.graph:
            for t in {s, o}:
                if isinstance(t, URIRef):
                    score[t] += 1
        for _, p, _ in self._instance_triples():
            score[p] += 1
        return score

    def ranked(self, terms: tuple[URIRef, ...]) -> list[URIRef]:
        """``terms`` by score (desc), ties by IRI: the deterministic order of every card and brief."""
        return sorted(terms, key=lambda t: (-self.scores[t], str(t)))

    @cached_property
    def label(self) -> str | None:
        """The ontology's rdfs:label or dct:title (English or untagged first), else None."""
        for onto in sorted(o for o in self.graph.subjects(RDF.type, OWL.Ontology) if isinstance(o, URIRef)):
            for pred in (RDFS.label, DCTERMS.title):
                values = sorted(self.graph.objects(onto, pred), key=lambda v: (getattr(v, "language", None) not in (None, "en"), str(v)))
                if values:
                    return " ".join(str(values[0]).split())
        return None


_SCHEMAS: dict[int, tuple[weakref.ref, int, OntologySchema]] = {}
_LOCK = threading.Lock()


def schema_of(graph: Graph) -> OntologySchema:
    """The cached :class:`OntologySchema` of ``graph`` (rebuilt if the graph's size changed)."""
    with _LOCK:
        hit = _SCHEMAS.get(id(graph))
        if hit is not None and hit[0]() is graph and hit[1] == len(graph):
            return hit[2]
    schema = OntologySchema(graph)
    with _LOCK:
        for key in [k for k, (ref, _, _) in _SCHEMAS.items() if ref() is None]:
            del _SCHEMAS[key]
        _SCHEMAS[id(graph)] = (weakref.ref(graph), len(graph), schema)
    return schema
