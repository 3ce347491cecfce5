"""L0 Ont-Sense: a deterministic, grounded sense card (<= 600 chars) and a longer brief (<= 6000 chars).

Both are pure functions of the graph: the same triples give byte-identical text.
Every term is written as a CURIE with a declared prefix (or ``<iri>``), so
:func:`~rlmlab.ontology.grounding_check` can verify each one against the graph.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rdflib import Graph, URIRef
from rdflib.namespace import OWL

from rlmlab.text import cut_lines
from rlmlab.ontology._loader import as_graph
from rlmlab.ontology._schema import OntologySchema, schema_of
from rlmlab.records import Record

__all__ = ["OntSense", "ont_sense", "sense_card", "sense_brief", "fit_card", "cut_lines", "CARD_BUDGET", "BRIEF_BUDGET"]

CARD_BUDGET = 600  # characters; the spec's L0 packer budget
BRIEF_BUDGET = 6000  # characters
_CARD_QUOTAS = {"classes": 8, "props": 8, "roots": 4, "ask": 4}
# When the card is over budget, the section with the most items left loses one; ties go in this order.
_SHRINK_ORDER = ("props", "classes", "ask", "roots")


@dataclass(frozen=True)
class OntSense(Record):
    """What the card and brief are rendered from; lists are in rank order, terms are CURIEs."""

    label: str | None
    triples: int
    namespaces: dict[str, str]  # prefix -> IRI, own namespaces first
    own_prefixes: list[str]  # prefixes of the namespaces that define classes/properties
    classes: list[str]
    relations: list[str]
    annotations: list[str]
    roots: list[tuple[str, int]]  # (class, number of descendants)
    affordances: list[tuple[str, str, str]]  # (domain, property, range) for relations with one of each


def ont_sense(source: Graph | str | Path) -> OntSense:
    """The ranked facts behind :func:`sense_card` and :func:`sense_brief`."""
    schema = schema_of(as_graph(source))
    c = schema.curie
    own = [p for ns in schema.own_namespaces for p, pns in schema.prefixes.items() if pns == ns]
    namespaces = {p: schema.prefixes[p] for p in own}
    namespaces.update((p, ns) for p, ns in schema.prefixes.items() if p not in namespaces)
    # An affordance is a (domain, property, range) pattern one can ask about. They are ranked by the
    # summed scores of the three terms, so relations between the central classes come first, and
    # only the best property per (domain, range) pair is kept, so the card shows varied questions.
    scored = []
    for prop in schema.relations:
        (dom, _), (rng, _) = schema.domain(prop), schema.range(prop)
        if len(dom) == 1 and len(rng) == 1:
            weight = schema.scores[dom[0]] + schema.scores[prop] + schema.scores[rng[0]]
            scored.append((-weight, str(prop), dom[0], prop, rng[0]))
    affordances, pairs = [], set()
    for _, _, d, p, r in sorted(scored):
        if (d, r) not in pairs:
            pairs.add((d, r))
            affordances.append((c(d), c(p), c(r)))
    return OntSense(
        label=schema.label,
        triples=len(schema.graph),
        namespaces=namespaces,
        own_prefixes=own,
        classes=[c(t) for t in schema.ranked(schema.classes)],
        relations=[c(t) for t in schema.ranked(schema.relations)],
        annotations=[c(t) for t in schema.ranked(schema.annotations)],
        roots=[(c(r), len(schema.descendants(r))) for r in schema.roots],
        affordances=affordances,
    )


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _render_card(s: OntSense, q: dict[str, int]) -> str:
    lines = [f"ONT {_clip(s.label or 'ontology', 40)}: {s.triples} triples, {len(s.classes)} classes, "
             f"{len(s.relations)} props"]
    own = s.own_prefixes[:2]
    lines += [f"PREFIX {p}: <{s.namespaces[p]}>" for p in own]
    others = [p for p in s.namespaces if p not in own]
    if others:
        lines.append("also: " + " ".join(others))
    shown = {t for _, t, _ in s.affordances[: q["ask"]]}
    sections = [
        ("classes", [t for t in s.classes]),
        ("props", [t for t in s.relations if t not in shown]),
        ("roots", [f"{r}({n})" for r, n in s.roots]),
        ("ask", [f"{d} {p} {r}" for d, p, r in s.affordances]),
    ]
    for name, items in sections:
        items = items[: q[name]]
        if items:
            lines.append(f"{name}: " + ("; " if name == "ask" else " ").join(items))
    return "\n".join(lines)


def sense_card(source: Graph | str | Path, budget: int = CARD_BUDGET) -> str:
    """The L0 sense card: header, PREFIX lines, top classes/properties, hierarchy roots, affordances.

    At most ``budget`` characters (default 600). Items are dropped from the end of the
    longest section until it fits; the header and prefixes are cut last.
    """
    s = ont_sense(source)
    return fit_card(lambda quotas: _render_card(s, quotas), _CARD_QUOTAS, _SHRINK_ORDER, budget)


def fit_card(render: Callable[[dict[str, int]], str], quotas: dict[str, int], shrink_order: tuple[str, ...],
             budget: int) -> str:
    """``render(quotas)`` within ``budget``: take one item at a time from the section with the largest quota
    (ties: earlier in ``shrink_order``) until it fits, then keep whole lines from the top."""
    quotas = dict(quotas)
    text = render(quotas)
    while len(text) > budget and any(quotas.values()):
        name = max(shrink_order, key=lambda k: (quotas[k], -shrink_order.index(k)))
        quotas[name] -= 1
        text = render(quotas)
    return cut_lines(text, budget)


# -- brief ------------------------------------------------------------------------------------------------


def _hierarchy_lines(schema: OntologySchema) -> list[str]:
    """Roots first, children indented two spaces per level; a class is shown once, under its best-ranked parent."""
    c = schema.curie
    children: dict[URIRef, list[URIRef]] = {}
    for cls in schema.classes:
        parents = schema.ranked(tuple(schema.superclasses.get(cls, ())))
        if parents:
            children.setdefault(parents[0], []).append(cls)
    lines: list[str] = []
    seen: set[URIRef] = set()

    def walk(cls: URIRef, depth: int) -> None:
        if cls in seen:
            return
        seen.add(cls)
        lines.append("  " * depth + c(cls))
        for child in schema.ranked(tuple(children.get(cls, ()))):
            walk(child, depth + 1)

    for root in schema.roots:
        walk(root, 0)
    rest = [cls for cls in schema.ranked(schema.classes) if cls not in seen and cls not in children]
    for cls in rest:
        walk(cls, 0)
    return lines


def _property_lines(schema: OntologySchema) -> list[str]:
    c = schema.curie
    lines = []
    for prop in schema.ranked(schema.relations):
        (dom, dom_from), (rng, rng_from) = schema.domain(prop), schema.range(prop)
        d = "|".join(c(x) for x in dom) or "?"
        r = "|".join(c(x) for x in rng) or "?"
        via = {x for x in (dom_from, rng_from) if x is not None}
        note = f" (via {', '.join(c(x) for x in sorted(via))})" if via else ""
        lines.append(f"{c(prop)}: {d} -> {r}{note}")
    return lines


def _note_lines(schema: OntologySchema) -> list[str]:
    """Short lines, most useful first: the legend, union and missing domains, then disjointness and inverses."""
    c, g = schema.curie, schema.graph
    notes = ["(via X): domain/range inherited from super-property X; '?': none declared; A|B: any one fits"]
    unions = [c(p) for p in schema.relations if len(schema.domain(p)[0]) > 1]
    if unions:
        notes.append("union domains: " + " ".join(unions))
    no_domain = [c(p) for p in schema.relations if not schema.domain(p)[0]]
    if no_domain:
        notes.append("no domain: " + " ".join(no_domain))
    disjoint = sorted({tuple(sorted((c(s), c(o)))) for s, o in g.subject_objects(OWL.disjointWith)
                       if isinstance(s, URIRef) and isinstance(o, URIRef)})
    notes += [f"disjoint: {a} / {b}" for a, b in disjoint]
    inverses = sorted({tuple(sorted((c(s), c(o)))) for s, o in g.subject_objects(OWL.inverseOf)
                       if isinstance(s, URIRef) and isinstance(o, URIRef)})
    notes += [f"inverse: {a} ~ {b}" for a, b in inverses]
    return notes


def sense_brief(source: Graph | str | Path, budget: int = BRIEF_BUDGET) -> str:
    """The longer L0 brief: namespaces, class hierarchy, properties with domain -> range, annotations, notes.

    At most ``budget`` characters (default 6000). Each section gets a share of the
    budget (unused share passes on to later sections); lines past a section's share
    are replaced by one ``... +N more`` line.
    """
    schema = schema_of(as_graph(source))
    s = ont_sense(schema.graph)
    head = [f"# Ont-Sense brief: {_clip(s.label or 'ontology', 80)}",
            f"{s.triples} triples; {len(s.classes)} classes; {len(s.relations)} properties; "
            f"{len(s.annotations)} annotation properties"]
    sections = [
        ("## Namespaces", [f"PREFIX {p}: <{ns}>" for p, ns in s.namespaces.items()], 0.10),
        ("## Class hierarchy (roots first; most-mentioned first)", _hierarchy_lines(schema), 0.30),
        ("## Properties (domain -> range)", _property_lines(schema), 0.40),
        ("## Annotation properties", [" ".join(s.annotations)] if s.annotations else [], 0.05),
        ("## Notes", _note_lines(schema), 0.15),
    ]
    out = "\n".join(head)
    carry = 0
    for i, (title, lines, share) in enumerate(sections):
        if not lines:
            continue
        left = budget - len(out)
        allowance = min(left, int(budget * share) + carry) if i < len(sections) - 1 else left
        block = _fit_block(title, lines, allowance)
        out += block
        carry = max(0, allowance - len(block))
    return cut_lines(out, budget)


def _fit_block(title: str, lines: list[str], allowance: int) -> str:
    """A blank line, ``title`` and the lines that fit in ``allowance`` chars; a "... +N more" line counts the rest."""
    block = f"\n\n{title}"
    if len(block) > allowance:
        return ""
    for i, line in enumerate(lines):
        more = f"\n... +{len(lines) - i - 1} more" if i < len(lines) - 1 else ""
        if len(block) + 1 + len(line) + len(more) > allowance:
            tail = f"\n... +{len(lines) - i} more"
            return block + tail if len(block) + len(tail) <= allowance else block
        block += "\n" + line
    return block
