"""Ontology tasks over PROV-O and SKOS: write a SPARQL SELECT for a label, definition, comment, domain, range,
subclasses, super-properties, inverse, transitive closures, filters and counts.

Each reference SELECT is run by rdflib and kept only when it returns rows (none for the deliberate questions
about terms that do not exist), the same rows with DISTINCT removed, and, for the one-triple kinds, exactly
the objects rdflib's triple lookup gives without SPARQL. Direction cases (domain and range of a property whose
inverse reverses them) come from the properties with an inverse.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from rdflib import OWL, RDF, RDFS, URIRef

from rlmlab.experiments import Task
from rlmlab.ontology import PROV_TTL, SKOS_TTL, load_ontology
from rlmlab.taskgen._common import Candidate, Drop, Kind, phrase

__all__ = ["ontology_kinds", "ONTOLOGIES", "run_reference", "distinct_free"]


@dataclass(frozen=True)
class Onto:
    domain: str  # the task domain: prov or skos
    prefix: str
    ns: str
    path: object
    names: tuple[str, ...]  # how the question names the ontology
    definition: str  # the definition property


ONTOLOGIES = {
    "prov": Onto("prov", "prov", "http://www.w3.org/ns/prov#", PROV_TTL,
                 ("PROV-O (prov:, the W3C PROV ontology)", "the PROV-O ontology (prefix prov:)",
                  "W3C PROV-O (prov:)"), "prov:definition"),
    "skos": Onto("skos", "skos", "http://www.w3.org/2004/02/skos/core#", SKOS_TTL,
                 ("SKOS Core (skos:)", "the SKOS vocabulary (prefix skos:)", "W3C SKOS Core (skos:)"),
                 "skos:definition"),
}
PREAMBLE = ["Write a SPARQL SELECT query over {onto} that returns {what}.",
            "Using {onto}, write a SPARQL SELECT query returning {what}.",
            "Give a SPARQL SELECT query on {onto} that selects {what}."]
NO_ROWS = " If the ontology has no such {thing}, the right query returns no rows."
# Plausible names that neither ontology defines (checked against the graph before use).
MISSING = {
    ("prov", "class"): ["Process", "Event", "Document", "Artifact", "Actor", "Resource", "Task", "Workflow",
                        "Dataset", "Transformation", "Change", "Action", "Step", "Record", "Source"],
    ("prov", "property"): ["wasCausedBy", "wasCreatedBy", "wasModifiedBy", "wasReadBy", "hadInput", "hadOutput",
                           "usedBy", "wasOwnedBy", "wasPerformedBy", "hadParticipant", "wasTriggeredBy",
                           "wasReviewedBy", "hadVersion", "wasCopiedFrom"],
    ("skos", "class"): ["Thesaurus", "Term", "Label", "Taxonomy", "Vocabulary", "Category", "Descriptor"],
    ("skos", "property"): ["hasNarrower", "relatedTo", "hasBroader", "prefName", "hasLabel", "inCollection",
                           "altName", "hasParent"],
}


def header(onto: Onto) -> str:
    return (f"PREFIX {onto.prefix}: <{onto.ns}>\nPREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
            "PREFIX owl: <http://www.w3.org/2002/07/owl#>\nPREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n"
            "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n")


def run_reference(onto_path, query: str) -> Counter:
    """The reference's rows as a multiset (rdflib)."""
    return Counter(tuple(row) for row in load_ontology(onto_path).query(query))


def distinct_free(query: str) -> str:
    return query.replace("SELECT DISTINCT", "SELECT").replace("COUNT(DISTINCT ", "COUNT(")


def _curie(onto: Onto, iri) -> str:
    return f"{onto.prefix}:{str(iri)[len(onto.ns):]}"


def _terms(onto: Onto, *types) -> list[URIRef]:
    g = load_ontology(onto.path)
    found = {s for t in types for s in g.subjects(RDF.type, t) if isinstance(s, URIRef) and str(s).startswith(onto.ns)}
    return sorted(found, key=str)


def _properties(onto: Onto) -> list[URIRef]:
    return _terms(onto, OWL.ObjectProperty, OWL.DatatypeProperty, RDF.Property, OWL.AnnotationProperty)


def _classes(onto: Onto) -> list[URIRef]:
    return _terms(onto, OWL.Class)


def _candidate(onto: Onto, kind: str, level: int, rng: random.Random, what: str, select: str,
               units: tuple[str, ...], *, empty: bool = False, objects: set | None = None,
               names_term: bool = True) -> Candidate | Drop:
    """Run the reference; a Candidate when its rows are as the kind requires, else a Drop saying why."""
    query = header(onto) + select
    rows = run_reference(onto.path, query)
    plain = run_reference(onto.path, distinct_free(query))
    if empty != (not rows):
        return Drop(kind, "reference returns rows" if empty else "not asked: the reference returns no rows", select)
    if plain != rows or any(n > 1 for n in rows.values()):
        return Drop(kind, "rows change without DISTINCT", select)
    if objects is not None and set(rows) != {(o,) for o in objects}:
        return Drop(kind, "SPARQL rows differ from the triple lookup", select)
    thing = "property" if kind.startswith(("missing_domain", "missing_range")) else "term"
    text = phrase(rng, PREAMBLE, onto=rng.choice(onto.names), what=what)
    if empty or (names_term and rng.random() < 0.25):  # the no-rows sentence alone must not give the answer away
        text += NO_ROWS.format(thing=thing)
    note = f"reference returns {sum(rows.values())} row(s), the same with DISTINCT dropped"
    return Candidate(Task(id="pending", suite="ontology", level=level, query=text, checker="sparql", expected=query,
                          domain=onto.domain, note=note), units)


# kind -> (level, predicate CURIE, phrasings of what is returned, the column); one triple per term.
LOOKUPS = {
    "label": (1, "rdfs:label", ["the rdfs:label of {t} (one column: the label)",
                                "the label (rdfs:label) of {t}; one column, the label"], "label"),
    "definition": (1, None, ["the {dp} of {t} (one column: the definition text)",
                             "the definition ({dp}) given for {t}; one column"], "definition"),
    "comment": (1, "rdfs:comment", ["the rdfs:comment of {t} (one column: the comment)",
                                    "every rdfs:comment attached to {t} (one column)"], "comment"),
    "category": (1, "prov:category", ["every prov:category value of {t} (one column: the category)",
                                      "the prov:category of {t}; one column"], "category"),
    "inverse_name": (1, "prov:inverse", ["the name of the inverse property recorded with prov:inverse for {t} "
                                         "(one column)", "the prov:inverse name of {t} (one column)"], "inverse"),
    "scope_note": (1, "skos:scopeNote", ["the skos:scopeNote of {t} (one column: the note)",
                                         "the scope note (skos:scopeNote) given for {t}; one column"], "note"),
    "types": (1, "rdf:type", ["every rdf:type of {t} (one column: the type)",
                              "the types (rdf:type) of {t}; one column"], "type"),
    "domain": (2, "rdfs:domain", ["the rdfs:domain of {t} (one column)", "the domain (rdfs:domain) of the "
                                  "property {t}; one column"], "domain"),
    "range": (2, "rdfs:range", ["the rdfs:range of {t} (one column)", "the range (rdfs:range) of the property "
                                "{t}; one column"], "range"),
    "super_properties": (2, "rdfs:subPropertyOf", ["the direct super-properties (rdfs:subPropertyOf) of {t} (one "
                                                   "column)", "the properties {t} is a direct rdfs:subPropertyOf of "
                                                   "(one column)"], "super"),
    "inverse_of": (2, "owl:inverseOf", ["the property declared as owl:inverseOf of {t}, i.e. {t} owl:inverseOf "
                                        "?inverse (one column)",
                                        "the value of owl:inverseOf on {t} (the triple {t} owl:inverseOf ?inverse; "
                                        "one column)"], "inverse"),
}
_PRED = {"rdfs:label": RDFS.label, "rdfs:comment": RDFS.comment, "rdf:type": RDF.type, "rdfs:domain": RDFS.domain,
         "rdfs:range": RDFS.range, "rdfs:subPropertyOf": RDFS.subPropertyOf, "owl:inverseOf": OWL.inverseOf}


def _lookup_stream(onto: Onto, kind: str):
    level, pred, forms, column = LOOKUPS[kind]

    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        g = load_ontology(onto.path)
        p = pred or onto.definition
        iri = _PRED.get(p) or URIRef(onto.ns + p.split(":", 1)[1])
        subjects = _properties(onto) if level == 2 else _properties(onto) + _classes(onto)
        terms = [t for t in subjects if any(isinstance(o, URIRef) if level == 2 else True for o in g.objects(t, iri))]
        rng.shuffle(terms)
        for term in terms:
            objects = set(g.objects(term, iri))
            if level == 2:
                objects = {o for o in objects if isinstance(o, URIRef)}
                where = f"{{ {_curie(onto, term)} {p} ?{column} . FILTER(isIRI(?{column})) }}"
            else:
                where = f"{{ {_curie(onto, term)} {p} ?{column} }}"
            what = phrase(rng, forms, t=_curie(onto, term), dp=onto.definition)
            yield _candidate(onto, kind, level, rng, what, f"SELECT ?{column} WHERE {where}", (_curie(onto, term),),
                             objects=objects)
    return stream


DOMAIN_RANGE = ["the rdfs:domain and rdfs:range of {t} (two columns: ?domain then ?range)",
                "the domain and the range of the property {t}, in that order (two columns: domain, range)"]


def _missing_stream(onto: Onto, kind: str):
    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        g = load_ontology(onto.path)
        thing = "property" if kind == "missing_domain_range" else "class"
        names = list(MISSING[(onto.domain, thing)])
        rng.shuffle(names)
        for name in names:
            iri = URIRef(onto.ns + name)
            if (iri, None, None) in g or (None, None, iri) in g:
                yield Drop(kind, "the made-up term exists", name)
                continue
            t = f"{onto.prefix}:{name}"
            # asked as the kinds about real terms are, so the phrasing does not give the empty answer away
            if kind == "missing_label":
                what = phrase(rng, LOOKUPS["label"][2], t=t)
                select = f"SELECT ?label WHERE {{ {t} rdfs:label ?label }}"
            elif kind == "missing_definition":
                what = phrase(rng, LOOKUPS["definition"][2], t=t, dp=onto.definition)
                select = f"SELECT ?definition WHERE {{ {t} {onto.definition} ?definition }}"
            else:
                what = phrase(rng, DOMAIN_RANGE, t=t)
                select = f"SELECT ?domain ?range WHERE {{ {t} rdfs:domain ?domain ; rdfs:range ?range }}"
            yield _candidate(onto, kind, 1 if kind != "missing_domain_range" else 2, rng, what, select, (t,),
                             empty=True)
    return stream


def _domain_range_stream(onto: Onto):
    """Both columns, in order: the properties with an inverse come first (their inverse has them reversed)."""
    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        g = load_ontology(onto.path)
        props = [p for p in _properties(onto) if any(isinstance(o, URIRef) for o in g.objects(p, RDFS.domain))
                 and any(isinstance(o, URIRef) for o in g.objects(p, RDFS.range))]
        inverse = {s for s, o in g.subject_objects(OWL.inverseOf)} | {o for s, o in g.subject_objects(OWL.inverseOf)}
        rng.shuffle(props)
        props.sort(key=lambda p: p not in inverse)
        for p in props:
            t = _curie(onto, p)
            yield _candidate(onto, "domain_range", 2, rng, phrase(rng, DOMAIN_RANGE, t=t),
                             f"SELECT ?domain ?range WHERE {{ {t} rdfs:domain ?domain ; rdfs:range ?range . "
                             "FILTER(isIRI(?domain) && isIRI(?range)) }", (t,))
    return stream


# kind -> (level, term set, phrasings, SELECT with {t}); the term is the unit of the split.
RELATIONS = {
    "subclasses": (2, "class", ["the direct subclasses of {t} (one column: the subclass)",
                                "every class that is a direct rdfs:subClassOf {t} (one column)"],
                   "SELECT ?class WHERE {{ ?class rdfs:subClassOf {t} }}"),
    "superclasses": (2, "class", ["the named (IRI, not blank-node) direct superclasses of {t} (one column)",
                                  "the direct superclasses of {t} that are IRIs, not blank nodes (one column)"],
                     "SELECT ?super WHERE {{ {t} rdfs:subClassOf ?super . FILTER(isIRI(?super)) }}"),
    "sub_properties": (2, "property", ["the direct sub-properties of {t}, i.e. ?property rdfs:subPropertyOf {t} "
                                       "(one column)",
                                       "every property that is a direct rdfs:subPropertyOf {t} (one column: the "
                                       "property)"],
                       "SELECT ?property WHERE {{ ?property rdfs:subPropertyOf {t} }}"),
    "properties_with_domain": (2, "class", ["the properties whose rdfs:domain is exactly {t} (one column: the "
                                            "property)", "every property with rdfs:domain {t} (one column)"],
                               "SELECT ?property WHERE {{ ?property rdfs:domain {t} }}"),
    "properties_with_range": (2, "class", ["the properties whose rdfs:range is exactly {t} (one column: the "
                                           "property)", "every property with rdfs:range {t} (one column)"],
                              "SELECT ?property WHERE {{ ?property rdfs:range {t} }}"),
    "two_step_subclasses": (3, "class", ["the classes exactly two rdfs:subClassOf steps below {t}, i.e. a direct "
                                         "subclass of a direct subclass (one column: the class)",
                                         "the direct subclasses of the direct subclasses of {t} (two rdfs:subClassOf "
                                         "steps; one column: the class)"],
                            "SELECT ?class WHERE {{ ?class rdfs:subClassOf ?middle . ?middle rdfs:subClassOf {t} }}"),
    "subclasses_transitive": (3, "class", ["every distinct class below {t} at any depth, via one or more "
                                           "rdfs:subClassOf steps (one column: the class, each once)",
                                           "all the distinct subclasses of {t}, direct or indirect "
                                           "(rdfs:subClassOf+; one column, each class once)"],
                              "SELECT DISTINCT ?class WHERE {{ ?class rdfs:subClassOf+ {t} }}"),
    "superclasses_transitive": (3, "class", ["every distinct named (IRI) superclass of {t} at any depth, via one or "
                                             "more rdfs:subClassOf steps (one column, each once)",
                                             "all the distinct superclasses of {t} that are IRIs, direct or indirect "
                                             "(rdfs:subClassOf+; one column, each once)"],
                                "SELECT DISTINCT ?super WHERE {{ {t} rdfs:subClassOf+ ?super . "
                                "FILTER(isIRI(?super)) }}"),
    "sub_properties_transitive": (3, "property", ["every distinct property that is a sub-property of {t} at any "
                                                  "depth, via one or more rdfs:subPropertyOf steps (one column, "
                                                  "each once)",
                                                  "all the distinct sub-properties of {t}, direct or indirect "
                                                  "(rdfs:subPropertyOf+; one column, each once)"],
                                  "SELECT DISTINCT ?property WHERE {{ ?property rdfs:subPropertyOf+ {t} }}"),
    "properties_domain_below": (3, "class", ["the properties whose rdfs:domain is a direct subclass of {t}, with "
                                             "that domain (two columns: property, domain)",
                                             "each property together with its rdfs:domain, where that domain is a "
                                             "direct subclass of {t} (two columns: property, domain)"],
                                "SELECT ?property ?domain WHERE {{ ?property rdfs:domain ?domain . "
                                "?domain rdfs:subClassOf {t} }}"),
    "properties_range_below": (3, "class", ["the distinct properties whose rdfs:range is {t} or a class below {t} "
                                            "at any depth (one column: the property, each once)",
                                            "every distinct property with an rdfs:range of {t} or of any subclass of "
                                            "{t}, direct or indirect (one column, each property once)"],
                               "SELECT DISTINCT ?property WHERE {{ ?property rdfs:range ?range . "
                               "?range rdfs:subClassOf* {t} }}"),
    "count_properties_with_domain": (5, "class", ["the number of distinct properties whose rdfs:domain is exactly "
                                                  "{t} (one column, one row: the count)",
                                                  "how many distinct properties have rdfs:domain {t} (one row, one "
                                                  "column: the count)"],
                                     "SELECT (COUNT(DISTINCT ?property) AS ?n) WHERE {{ ?property rdfs:domain {t} }}"),
    "count_properties_with_range": (5, "class", ["the number of distinct properties whose rdfs:range is exactly {t} "
                                                 "(one column, one row: the count)",
                                                 "how many distinct properties have rdfs:range {t} (one row, one "
                                                 "column: the count)"],
                                    "SELECT (COUNT(DISTINCT ?property) AS ?n) WHERE {{ ?property rdfs:range {t} }}"),
    "count_direct_subclasses": (5, "class", ["the number of direct subclasses of {t} (one column, one row: the "
                                             "count)", "how many classes are a direct rdfs:subClassOf {t} (one row, "
                                             "one column: the count)"],
                                "SELECT (COUNT(DISTINCT ?class) AS ?n) WHERE {{ ?class rdfs:subClassOf {t} }}"),
    "count_subclasses_transitive": (5, "class", ["the number of distinct classes below {t} at any depth, via "
                                                 "rdfs:subClassOf+ (one column, one row: the count)",
                                                 "how many distinct subclasses {t} has, direct or indirect "
                                                 "(rdfs:subClassOf+; one row, one column: the count)"],
                                    "SELECT (COUNT(DISTINCT ?class) AS ?n) WHERE {{ ?class rdfs:subClassOf+ {t} }}"),
}


COUNTED = {"count_properties_with_domain": "properties_with_domain", "count_properties_with_range":
           "properties_with_range", "count_direct_subclasses": "subclasses",
           "count_subclasses_transitive": "subclasses_transitive"}  # a count kind -> the set it counts


def _relation_stream(onto: Onto, kind: str):
    level, what_terms, forms, select = RELATIONS[kind]

    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        terms = _classes(onto) if what_terms == "class" else _properties(onto)
        rng.shuffle(terms)
        g = load_ontology(onto.path)
        for term in terms:
            t = _curie(onto, term)
            if kind in COUNTED:  # a count of zero still returns one row; ask only about non-empty sets
                if not run_reference(onto.path, header(onto) + RELATIONS[COUNTED[kind]][3].format(t=t)):
                    continue
            if kind == "subclasses_transitive" and not set(g.subjects(RDFS.subClassOf, term)):
                continue
            yield _candidate(onto, kind, level, rng, phrase(rng, forms, t=t), select.format(t=t), (t,))
    return stream


def _between_stream(onto: Onto):
    """Properties from class A to class B: pairs in both directions where the reverse also has properties."""
    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        g = load_ontology(onto.path)
        pairs = Counter()
        for p in _properties(onto):
            for d in g.objects(p, RDFS.domain):
                for r in g.objects(p, RDFS.range):
                    if isinstance(d, URIRef) and isinstance(r, URIRef) and str(d).startswith(onto.ns) \
                            and str(r).startswith(onto.ns):
                        pairs[(d, r)] += 1
        keys = sorted(pairs, key=lambda k: (k[1], k[0]) not in pairs)  # pairs whose reverse exists first
        rng.shuffle(keys)
        keys.sort(key=lambda k: (k[1], k[0]) not in pairs)
        for d, r in keys:
            a, b = _curie(onto, d), _curie(onto, r)
            what = phrase(rng, ["the properties whose rdfs:domain is {a} and whose rdfs:range is {b} (one column: "
                                "the property)", "the properties going from {a} (rdfs:domain) to {b} (rdfs:range); "
                                "one column"], a=a, b=b)
            yield _candidate(onto, "properties_between", 3, rng, what,
                             f"SELECT ?property WHERE {{ ?property rdfs:domain {a} ; rdfs:range {b} }}", (a, b))
    return stream


def _words(onto: Onto, predicate) -> list[str]:
    g = load_ontology(onto.path)
    words = Counter(w for s in _classes(onto) + _properties(onto) for o in g.objects(s, predicate)
                    for w in set(re.findall(r"[A-Za-z]{5,}", str(o))))
    return sorted(w for w, n in words.items() if 2 <= n <= 12)


def _filter_stream(onto: Onto, kind: str):
    """FILTERs on labels, IRIs, categories and definitions; the parameter (a word) is the unit."""
    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        if kind == "label_contains":
            params = _words(onto, RDFS.label)
        elif kind == "definition_mentions":
            params = [w.lower() for w in _words(onto, URIRef(onto.ns + onto.definition.split(":")[1]))]
        elif kind == "iri_prefix":
            params = sorted({m.group(0) for p in _properties(onto)
                             if (m := re.match(r"[a-z]+", str(p)[len(onto.ns):]))})
        else:
            g = load_ontology(onto.path)
            params = sorted({str(o) for o in g.objects(None, URIRef(onto.ns + "category"))}) \
                if onto.domain == "prov" else []
        rng.shuffle(params)
        for w in dict.fromkeys(params):
            if kind == "label_contains":
                what = rng.choice([f"the owl:Class resources whose rdfs:label contains the text {w} (one column: "
                                   "the class)", f"every owl:Class whose rdfs:label includes {w} (one column)"])
                select = ("SELECT ?class WHERE { ?class a owl:Class ; rdfs:label ?label . "
                          f'FILTER(CONTAINS(STR(?label), "{w}")) }}')
            elif kind == "definition_mentions":
                what = rng.choice([f"the distinct owl:Class resources whose {onto.definition} mentions the word {w}, "
                                   "in any letter case (one column: the class, each once)",
                                   f"every owl:Class whose {onto.definition} contains {w}, ignoring case (one column, "
                                   "each class once)"])
                select = (f"SELECT DISTINCT ?class WHERE {{ ?class a owl:Class ; {onto.definition} ?definition . "
                          f'FILTER(REGEX(STR(?definition), "{w}", "i")) }}')
            elif kind == "iri_prefix":
                what = rng.choice([f"the owl:ObjectProperty resources whose IRI starts with {onto.ns}{w} (one "
                                   "column: the property)", f"every owl:ObjectProperty whose IRI begins with "
                                   f"{onto.ns}{w} (one column)"])
                select = ("SELECT ?property WHERE { ?property a owl:ObjectProperty . "
                          f'FILTER(STRSTARTS(STR(?property), "{onto.ns}{w}")) }}')
            else:
                what = rng.choice([f"the owl:ObjectProperty resources that have the prov:category value {w} (one "
                                   "column: the property)", f"every owl:ObjectProperty whose prov:category is {w} "
                                   "(one column)"])
                select = ("SELECT ?property WHERE { ?property a owl:ObjectProperty ; prov:category ?category . "
                          f'FILTER(STR(?category) = "{w}") }}')
            yield _candidate(onto, kind, 4, rng, what, select, (f"{kind}:{onto.domain}:{w}",), names_term=False)
    return stream


def _aggregate_stream(onto: Onto):
    """GROUP BY / HAVING / ORDER BY ... LIMIT 1 questions; each threshold or type is its own unit."""
    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        items = [(k, f"the classes with at least {k} direct subclasses, with their number of direct subclasses "
                     "(two columns: class, count)",
                  "SELECT ?super (COUNT(DISTINCT ?class) AS ?n) WHERE { ?class rdfs:subClassOf ?super . "
                  f"FILTER(isIRI(?super)) }} GROUP BY ?super HAVING (COUNT(DISTINCT ?class) >= {k})")
                 for k in (2, 3, 4, 5)]
        items += [(t, f"for each prov:category value, how many {t} resources carry it (two columns: category, count)",
                   f"SELECT ?category (COUNT(DISTINCT ?property) AS ?n) WHERE {{ ?property a {t} ; "
                   "prov:category ?category } GROUP BY ?category")
                  for t in ("owl:ObjectProperty", "owl:DatatypeProperty", "owl:Class")] if onto.domain == "prov" else []
        items += [(t, f"the number of {t} resources in the {onto.prefix} namespace {onto.ns} (one column, one row: "
                      "the count)",
                   f"SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE {{ ?x a {t} . "
                   f"FILTER(STRSTARTS(STR(?x), \"{onto.ns}\")) }}")
                  for t in ("owl:Class", "owl:ObjectProperty", "owl:DatatypeProperty", "owl:AnnotationProperty")]
        rng.shuffle(items)
        for key, what, select in items:
            yield _candidate(onto, "aggregate", 5, rng, what, select, (f"aggregate:{onto.domain}:{key}",),
                             names_term=False)
    return stream


def ontology_kinds(domains: tuple[str, ...] = ("prov", "skos")) -> list[Kind]:
    kinds: list[Kind] = []
    for name in domains:
        onto = ONTOLOGIES[name]
        for kind, (level, pred, _, _) in LOOKUPS.items():
            if pred and pred.split(":")[0] in ("prov", "skos") and pred.split(":")[0] != onto.prefix:
                continue
            kinds.append(Kind(kind, level, _lookup_stream(onto, kind)))
        kinds += [Kind(k, 1 if k != "missing_domain_range" else 2, _missing_stream(onto, k))
                  for k in ("missing_label", "missing_definition", "missing_domain_range")]
        kinds.append(Kind("domain_range", 2, _domain_range_stream(onto)))
        kinds += [Kind(k, spec[0], _relation_stream(onto, k)) for k, spec in RELATIONS.items()]
        kinds.append(Kind("properties_between", 3, _between_stream(onto)))
        kinds += [Kind(k, 4, _filter_stream(onto, k))
                  for k in ("label_contains", "definition_mentions", "iri_prefix", "category_value")]
        kinds.append(Kind("aggregate", 5, _aggregate_stream(onto)))
    return kinds
