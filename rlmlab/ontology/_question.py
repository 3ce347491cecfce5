"""What a question over an ontology states about its query, read one way for the step grammar and the judge.

"the rdfs:label of prov:Activity" states the triple ``prov:Activity rdfs:label ?value``; "whose rdfs:domain is
exactly prov:Entity" states ``?x rdfs:domain prov:Entity``. The SPARQL step grammar
(``rlmlab.executors._sparql_space``) lets such a term stand only on its side of the property; the key-free
``constraints`` judge (``rlmlab.learning``) fails a query with no triple pattern stating it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Relation", "question_relations", "reaches", "CURIE_PATTERN"]

CURIE_PATTERN = r"[a-z][a-z0-9]*:[A-Za-z_][\w.-]*[\w]"  # a CURIE, as rlmlab.memory's literal reader takes it
_C = CURIE_PATTERN
_OF = re.compile(r"\b(?:the|every|each)\s+(?:distinct\s+)?({c})(?:\s+and\s+(?:the\s+)?({c}))?(?:\s+values?)?\s+of\s+"
                 r"(?:the\s+(?:class|property)\s+)?({c})".format(c=_C))
# "the types (rdf:type) of prov:todo", "the definition (skos:definition) given for skos:Thesaurus"
_PAREN_OF = re.compile(r"\b(?:the|every|each)\s+(?:distinct\s+)?[\w-]+\s+\(({c})\)\s+(?:of|given\s+for)\s+"
                       r"(?:the\s+(?:class|property)\s+)?({c})".format(c=_C))
_WHOSE = re.compile(r"\bwhose\s+({c})\s+is\s+(?:exactly\s+)?({c})".format(c=_C))
# The class and property hierarchies in words: "the direct superclasses of X", "X is a direct rdfs:subPropertyOf
# of" (X above, the answer below it); "the subclasses of X", "a direct rdfs:subClassOf X", "classes below X",
# "a sub-property of X", "how many distinct subclasses X has" (the answer below X).
_ABOVE = re.compile(r"\b(?:super-?class(?:es)?|super-?propert(?:y|ies))\b[^.;]*?\bof\s+({c})|({c})\s+is\s+a\s+"
                    r"(?:direct\s+)?rdfs:sub(?:Class|Property)Of\s+of\b".format(c=_C), re.I)
_BELOW = re.compile(r"\b(?:sub-?class(?:es)?|sub-?propert(?:y|ies))\s+of\s+({c})|\ba\s+(?:direct\s+)?rdfs:sub(?:Class|"
                    r"Property)Of\s+({c})|\b(?:class(?:es)?|propert(?:y|ies))\s+below\s+({c})|\bsub-?(?:class(?:es)?|"
                    r"propert(?:y|ies))\s+({c})\s+has\b|\bsteps\s+below\s+({c})".format(c=_C), re.I)


@dataclass(frozen=True)
class Relation:
    """A triple the question states: ``subject`` or ``object`` is a CURIE of the question, the other a variable
    (None); ``predicate`` is the property."""

    subject: str | None
    predicate: str
    object: str | None
    exact: bool = False  # "whose P is exactly T": T itself, not a class below it


def question_relations(question: str) -> list[Relation]:
    """The relations "the P of T" (``T P ?``, also "the P and the Q of T"), "whose P is T" (``? P T``) and the
    hierarchy stated in words ("the superclasses of T": ``T rdfs:subClassOf ?``; "the sub-properties of T":
    ``? rdfs:subPropertyOf T``) of a question, each once, in that order."""
    out: list[Relation] = []
    for m in _OF.finditer(question or ""):
        out += [Relation(m.group(3), p, None) for p in (m.group(1), m.group(2)) if p]
    for m in _PAREN_OF.finditer(question or ""):
        out.append(Relation(m.group(2), m.group(1), None))
    for m in _WHOSE.finditer(question or ""):
        out.append(Relation(None, m.group(1), m.group(2), exact="exactly" in m.group(0)))
    for m in _ABOVE.finditer(question or ""):
        out.append(Relation(m.group(1) or m.group(2), _hierarchy(m.group(0)), None))
    for m in _BELOW.finditer(question or ""):
        out.append(Relation(None, _hierarchy(m.group(0)), next(g for g in m.groups() if g)))
    return list(dict.fromkeys(out))


_REACH = re.compile(r"\bbelow\b|\btwo\b|\bof\s+(?:the\s+)?(?:a\s+)?direct\s+sub-?class", re.I)


def reaches(question: str) -> bool:
    """Whether the question's answer may lie more than one hierarchy step from a class it names: "below X",
    "two rdfs:subClassOf steps", "the direct subclasses of the direct subclasses of X"."""
    return bool(_REACH.search(question or ""))


def _hierarchy(words: str) -> str:
    return "rdfs:subPropertyOf" if re.search(r"propert|subPropertyOf", words, re.I) else "rdfs:subClassOf"
