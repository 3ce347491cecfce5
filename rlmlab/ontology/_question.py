"""What a question over an ontology states about its query, read one way for the step grammar and the judge.

"the rdfs:label of prov:Activity" states the triple ``prov:Activity rdfs:label ?value``; "whose rdfs:domain is
exactly prov:Entity" states ``?x rdfs:domain prov:Entity``. The SPARQL step grammar
(``rlmlab.executors._sparql_space``) lets such a term stand only on its side of the property; the key-free
``constraints`` judge (``rlmlab.learning``) fails a query with no triple pattern stating it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Relation", "question_relations", "stated_values", "reaches", "hierarchy_steps", "text_tests",
           "CURIE_PATTERN"]

CURIE_PATTERN = r"[a-z][a-z0-9]*:[A-Za-z_][\w.-]*[\w]"  # a CURIE, as rlmlab.memory's literal reader takes it
_C = CURIE_PATTERN
_OF = re.compile(r"\b(?:the|every|each)\s+(?:distinct\s+)?({c})(?:\s+and\s+(?:the\s+)?({c}))?(?:\s+values?)?\s+of\s+"
                 r"(?:the\s+(?:class|property)\s+)?({c})".format(c=_C))
# "the types (rdf:type) of prov:todo", "the definition (skos:definition) given for skos:Thesaurus"
_PAREN_OF = re.compile(r"\b(?:the|every|each)\s+(?:distinct\s+)?[\w-]+\s+\(({c})\)\s+(?:of|given\s+for)\s+"
                       r"(?:the\s+(?:class|property)\s+)?({c})".format(c=_C))
_WHOSE = re.compile(r"\bwhose\s+({c})\s+is\s+(?:exactly\s+)?({c})".format(c=_C))
# "the domain and the range of the property P" (RDFS in words), "going from X (rdfs:domain) to Y (rdfs:range)"
_DOMAIN_RANGE = re.compile(r"\bthe\s+(domain|range)(?:\s+and\s+(?:the\s+)?(domain|range))?\s+of\s+"
                           r"(?:the\s+property\s+)?({c})".format(c=_C))
_VALUE_PAREN = re.compile(r"\b(?:from|to)\s+({c})\s+\(({c})\)".format(c=_C))
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
    for m in _DOMAIN_RANGE.finditer(question or ""):
        out += [Relation(m.group(3), f"rdfs:{w}", None) for w in (m.group(1), m.group(2)) if w]
    for m in _VALUE_PAREN.finditer(question or ""):
        out.append(Relation(None, m.group(2), m.group(1)))
    for m in _ABOVE.finditer(question or ""):
        out.append(Relation(m.group(1) or m.group(2), _hierarchy(m.group(0)), None))
    for m in _BELOW.finditer(question or ""):
        out.append(Relation(None, _hierarchy(m.group(0)), next(g for g in m.groups() if g)))
    return list(dict.fromkeys(out))


def stated_values(relations: Sequence[Relation], width: int) -> tuple[list[tuple[str, str]], bool]:
    """The (term, property) pairs the relations state of a named term ("the domain and the range of P": P's
    rdfs:domain, then its rdfs:range), in order, and whether they fill a SELECT of ``width`` columns in that order
    (as many pairs as columns, all of one term). The step grammar and the constraints judge read them alike."""
    stated = list(dict.fromkeys((r.subject, r.predicate) for r in relations if r.subject))
    return stated, len(stated) == width and len({subject for subject, _ in stated}) == 1


_REACH = re.compile(r"\bbelow\b|\btwo\b|\bof\s+(?:the\s+)?(?:a\s+)?direct\s+sub-?class", re.I)


def reaches(question: str) -> bool:
    """Whether the question's answer may lie more than one hierarchy step from a class it names: "below X",
    "two rdfs:subClassOf steps", "the direct subclasses of the direct subclasses of X"."""
    return bool(_REACH.search(question or ""))


_TRANSITIVE = re.compile(r"\bany depth\b|\bindirect\b|\bone or more\b|\btransitive\b|\(rdfs:sub\w+[+*]", re.I)
_CHAIN = re.compile(r"\btwo\b[^.;]*\bsteps\b|\bsub-?class(?:es)?\s+of\s+(?:a|the)\s+direct\s+sub-?class", re.I)
# The text test a question's verb names: "begins with" / "in the prov namespace" STRSTARTS, "ending in" STRENDS,
# "includes" CONTAINS, "mentions" / "ignoring case" a case-blind REGEX, "whose prov:category is qualified" equality.
_TEXT_TESTS = (
    (re.compile(r"\b(?:starts?|begins?|beginning|starting)\s+with\b|\bnamespace\b", re.I), "STRSTARTS"),
    (re.compile(r"\b(?:ends?|ending)\s+(?:with|in)\b", re.I), "STRENDS"),
    (re.compile(r"\b(?:contains?|includes?|including|containing)\b", re.I), "CONTAINS"),
    (re.compile(r"\bmentions?\b|\bmatch(?:es|ing)?\b|\bthe word\b|\bignoring case\b|\bletter case\b|"
                r"\bcase-insensitive", re.I), "REGEX"),
    (re.compile(r"\b(?:value|is)\s+(?![a-z]+:)(?!(?:not|a|an|the|exactly|in|of)\b)[a-z][\w-]*", re.I), "="),
)


# "prov:Agent or a class below prov:Agent", "skos:Concept or of any subclass of skos:Concept": the named term counts
# too, so zero or more steps (rdfs:subClassOf*); "the superclasses of X at any depth" leaves X out (one or more: +)
_SELF = re.compile(r"\b({c})\s+or\s+(?:of\s+)?(?:a|an|any)\s+(?:[\w-]+\s+)?(?:sub-?)?(?:class|propert)\w*\s+(?:below|"
                   r"of|under)\s+\1(?![\w:-])|\(rdfs:sub\w+\*|\bzero or more\b|\bor\s+({c})\s+itself\b".format(c=_C),
                   re.I)


def hierarchy_steps(question: str) -> str:
    """How the question walks a class or property hierarchy: "self" (zero or more steps: the named term or any
    below it, ``rdfs:subClassOf*``), "any" (one or more steps: "at any depth", "direct or indirect",
    ``rdfs:subClassOf+``; the named term itself is not an answer), "chain" (exactly two: "two rdfs:subClassOf
    steps", "the subclasses of the direct subclasses"), "one" (a direct step only) or "" (it does not say)."""
    if _SELF.search(question or ""):
        return "self"
    if _TRANSITIVE.search(question or ""):
        return "any"
    if _CHAIN.search(question or ""):
        return "chain"
    return "one" if re.search(r"\bdirect\b", question or "", re.I) else ""


def text_tests(question: str) -> set[str]:
    """The SPARQL text tests the question's words name (``STRSTARTS``, ``STRENDS``, ``CONTAINS``, ``REGEX``, ``=``);
    empty when it names none."""
    return {name for pattern, name in _TEXT_TESTS if pattern.search(question or "")}


def _hierarchy(words: str) -> str:
    return "rdfs:subPropertyOf" if re.search(r"propert|subPropertyOf", words, re.I) else "rdfs:subClassOf"
