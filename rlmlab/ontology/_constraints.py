"""L1 schema constraints: domain/range per property, curated SPARQL anti-patterns, and their packer.

``pack_constraints`` is the L1 packer of the layer cake: a compact constraint list plus
anti-pattern bullets, never longer than its budget (default 1000 characters).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Iterable, Mapping

from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF

from rlmlab.errors import ConfigError
from rlmlab._paths import PROJECT_ROOT
from rlmlab.ontology._loader import as_graph
from rlmlab.ontology._schema import OntologySchema, is_datatype, schema_of
from rlmlab.records import Record

__all__ = [
    "PropertyConstraint", "constraints_from_graph", "AntiPattern", "load_antipatterns", "pack_constraints",
    "DEFAULT_ANTIPATTERNS", "CONSTRAINTS_BUDGET",
]

DEFAULT_ANTIPATTERNS = PROJECT_ROOT / "data" / "packs" / "sparql_antipatterns.jsonl"
CONSTRAINTS_BUDGET = 1000  # characters; the spec's L1 packer budget
_CONSTRAINT_SHARE = 0.6  # of the budget, before the anti-patterns; unused room passes on
_BULLET_MAX = 200  # characters of one anti-pattern bullet


@dataclass(frozen=True)
class PropertyConstraint:
    """Domain and range of one property. Terms are full IRIs; ``text`` is the packed line in CURIEs.

    ``domain``/``range`` are alternatives (``owl:unionOf`` expanded): a subject fits if it is
    compatible with any one. ``domain_ok``/``range_ok`` list every class compatible with
    them under ``rdfs:subClassOf`` (the class itself, its sub- and superclasses), so a
    query can be checked against constraints alone, without the graph.
    """

    property: str
    kind: str  # "object", "datatype" or "property"
    domain: tuple[str, ...]
    range: tuple[str, ...]
    domain_from: str | None  # the super-property the domain is inherited from, if any
    range_from: str | None
    domain_ok: tuple[str, ...]
    range_ok: tuple[str, ...]
    text: str  # "prov:used: prov:Activity -> prov:Entity"

    @property
    def range_is_literal(self) -> bool:
        """True if every range alternative is a datatype (xsd:*, rdfs:Literal)."""
        return bool(self.range) and all(is_datatype(URIRef(r)) for r in self.range)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PropertyConstraint":
        values = {f.name: data[f.name] for f in fields(cls)}
        for name in ("domain", "range", "domain_ok", "range_ok"):
            values[name] = tuple(values[name])
        return cls(**values)


def _compatible_set(schema: OntologySchema, classes: tuple[URIRef, ...]) -> tuple[str, ...]:
    ok: set[URIRef] = set()
    for cls in classes:
        ok.add(cls)
        ok.update(schema.ancestors(cls))
        ok.update(schema.descendants(cls))
    return tuple(sorted(str(c) for c in ok))


def constraints_from_graph(source: Graph | str | Path) -> list[PropertyConstraint]:
    """One :class:`PropertyConstraint` per object/datatype/rdf:Property property, most-mentioned first.

    Domains come from ``rdfs:domain`` (``owl:unionOf`` members are alternatives;
    several ``rdfs:domain`` statements are read permissively as alternatives too). A
    property without its own domain inherits the nearest super-property's. Same for ranges.
    """
    schema = schema_of(as_graph(source))
    out = []
    for prop in schema.ranked(schema.relations):
        (dom, dom_from), (rng, rng_from) = schema.domain(prop), schema.range(prop)
        kinds = set(schema.graph.objects(prop, RDF.type))
        kind = "object" if OWL.ObjectProperty in kinds else "datatype" if OWL.DatatypeProperty in kinds else "property"
        c = schema.curie
        text = f"{c(prop)}: {'|'.join(c(x) for x in dom) or '?'} -> {'|'.join(c(x) for x in rng) or '?'}"
        out.append(PropertyConstraint(
            property=str(prop), kind=kind,
            domain=tuple(str(x) for x in dom), range=tuple(str(x) for x in rng),
            domain_from=str(dom_from) if dom_from else None, range_from=str(rng_from) if rng_from else None,
            domain_ok=_compatible_set(schema, dom), range_ok=_compatible_set(schema, rng), text=text,
        ))
    return out


@dataclass(frozen=True)
class AntiPattern(Record):
    """One curated SPARQL anti-pattern: ``content`` is the one-line guardrail a packer injects (<= 100 chars by
    convention); ``description`` explains it for people and longer briefs."""

    id: str
    title: str
    description: str
    content: str


def load_antipatterns(path: str | Path = DEFAULT_ANTIPATTERNS) -> list[AntiPattern]:
    """Anti-patterns from a JSONL file (one object a line with id, title, description, content).

    A malformed line is rejected at load with ConfigError naming the file, line and field.
    """
    from rlmlab._files import read_jsonl

    path = Path(path)
    out, ids = [], set()
    for n, data in read_jsonl(path):  # InputFileError (a ConfigError) names the file and line
        for name in ("id", "title", "description", "content"):
            if not isinstance(data.get(name), str) or not data[name].strip():
                raise ConfigError(f"{path}:{n}: field {name!r} must be a non-empty string")
        if data["id"] in ids:
            raise ConfigError(f"{path}:{n}: field 'id': {data['id']!r} is repeated")
        ids.add(data["id"])
        out.append(AntiPattern(data["id"], data["title"], data["description"], data["content"]))
    return out


def _constraint_lines(items: Iterable[PropertyConstraint | str]) -> list[str]:
    """Packed lines: constraints sharing a signature become one ``D -> R: p1 p2 ...`` line, in first-seen order.

    Strings pass through as lines of their own; constraints with neither domain nor range are left out.
    """
    lines: list[str | list[str]] = []
    groups: dict[str, list[str]] = {}
    for item in items:
        if not isinstance(item, PropertyConstraint):
            lines.append(str(item))
            continue
        if not item.domain and not item.range:
            continue
        name, signature = item.text.split(": ", 1)
        if signature not in groups:
            groups[signature] = [signature]
            lines.append(groups[signature])
        groups[signature].append(name)
    return [ln if isinstance(ln, str) else f"{ln[0]}: {' '.join(ln[1:])}" for ln in lines]


def _bullet(item: AntiPattern | Mapping[str, Any] | str) -> str:
    if isinstance(item, AntiPattern):
        text = f"- {item.content}"
    elif isinstance(item, Mapping):
        text = f"- {item.get('content') or item.get('title', '')}"
    else:
        text = f"- {item}"
    text = " ".join(text.split())
    return text if len(text) <= _BULLET_MAX else text[: _BULLET_MAX - 1] + "…"


def _fit(title: str, lines: list[str], allowance: int) -> tuple[list[str], int]:
    """(title + the leading lines that fit in ``allowance`` chars joined by newlines, lines shown).

    A ``(+N more)`` line counts what was left out, when it fits. Nothing at all if no line fits.
    """
    if not lines or allowance < len(title):
        return [], 0
    out, used = [title], len(title)
    for i, line in enumerate(lines):
        rest = len(lines) - i - 1
        marker = len(f"\n(+{rest} more)") if rest else 0
        if used + 1 + len(line) + marker <= allowance:
            out.append(line)
            used += 1 + len(line)
            continue
        if i == 0:
            return [], 0
        out.append(f"(+{len(lines) - i} more)")  # fits: room for it was kept when line i-1 went in
        return out, i
    return out, len(lines)


def pack_constraints(
    constraints: Iterable[PropertyConstraint | str],
    antipatterns: Iterable[AntiPattern | Mapping[str, Any] | str] = (),
    budget: int = CONSTRAINTS_BUDGET,
) -> str:
    """The L1 payload: constraint lines (in the given order) then anti-pattern bullets, at most ``budget`` chars.

    Constraints with the same domain and range share a line (``prov:Entity -> prov:Agent: prov:wasAttributedTo``);
    an anti-pattern is the bullet ``- <content>``.

    Constraints get 60% of the budget first and anti-patterns the rest; room one part
    does not use goes to the other. Items are whole lines; what does not fit is counted
    in a ``(+N more)`` line. Constraints with neither domain nor range are left out.
    Returns "" if no item fits.
    """
    budget = max(0, int(budget))
    cons = _constraint_lines(constraints)
    bullets = [_bullet(a) for a in antipatterns]
    c_title, a_title = "Domain -> range: properties", "Avoid:"
    first, shown = _fit(c_title, cons, int(budget * _CONSTRAINT_SHARE) if bullets else budget)
    second, _ = _fit(a_title, bullets, budget - len("\n".join(first)) - (2 if first else 0))
    if shown < len(cons):  # constraints were cut: let them use what the bullets left over
        first, _ = _fit(c_title, cons, budget - (len("\n".join(second)) + 2 if second else 0))
    return "\n\n".join("\n".join(part) for part in (first, second) if part)
