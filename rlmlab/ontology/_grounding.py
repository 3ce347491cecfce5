"""grounding_check: is every IRI and CURIE a text mentions really in the graph?

A mention is a ``<iri>``, a bare ``http(s)://`` IRI, or a CURIE ``prefix:local``.
Prefixes resolve through ``PREFIX p: <ns>`` / ``@prefix p: <ns>`` lines in the text
first, then the graph's own bindings. An IRI is *found* if it occurs in some triple
(subject, predicate or object); a namespace (a declared prefix's IRI, or an IRI
ending in ``#`` or ``/``) is found if some IRI of the graph starts with it.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rdflib import Graph, URIRef

from rlmlab.ontology._loader import as_graph
from rlmlab.ontology._schema import schema_of

__all__ = ["GroundingReport", "grounding_check", "extract_mentions"]

_PREFIX_DECL = re.compile(r"(?:@prefix|PREFIX)\s+([A-Za-z][\w.-]*)?:\s*<([^<>\s]*)>", re.IGNORECASE)
_ANGLE_IRI = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]*:[^<>\s\"]*)>")
_BARE_IRI = re.compile(r"\bhttps?://[^\s<>\"'`]+")
_CURIE = re.compile(r"(?<![\w:/#<@.?$-])([A-Za-z][\w.-]*)?:([A-Za-z_][\w.-]*)")


@dataclass
class GroundingReport:
    """Mentions of a text checked against a graph. ``rate`` is found/total (1.0 when nothing is mentioned)."""

    mentions: list[str] = field(default_factory=list)  # as written, first occurrence order, unique
    found: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)  # missing mention -> why

    @property
    def total(self) -> int:
        return len(self.mentions)

    @property
    def rate(self) -> float:
        return 1.0 if not self.mentions else len(self.found) / len(self.mentions)

    @property
    def ok(self) -> bool:
        return not self.missing

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total": self.total, "rate": self.rate}


def extract_mentions(text: str) -> tuple[dict[str, str], list[tuple[str, str, bool]]]:
    """(prefixes declared in the text, [(mention as written, IRI or "" if its prefix is unknown here, is_namespace)]).

    CURIEs are returned with an empty IRI; :func:`grounding_check` resolves them.
    """
    declared: dict[str, str] = {}
    mentions: list[tuple[str, str, bool]] = []
    blank = list(text)

    def wipe(m: re.Match) -> None:
        blank[m.start():m.end()] = " " * (m.end() - m.start())

    for m in _PREFIX_DECL.finditer(text):
        declared[m.group(1) or ""] = m.group(2)
        mentions.append((m.group(2), m.group(2), True))
        wipe(m)
    rest = "".join(blank)
    for m in _ANGLE_IRI.finditer(rest):
        mentions.append((m.group(0), m.group(1), m.group(1).endswith(("#", "/"))))
        wipe(m)
    rest = "".join(blank)
    for m in _BARE_IRI.finditer(rest):
        iri = m.group(0).rstrip(".,;:)]}!?")
        mentions.append((iri, iri, iri.endswith(("#", "/"))))
        wipe(m)
    rest = "".join(blank)
    for m in _CURIE.finditer(rest):
        if rest.startswith("//", m.end(2)):
            continue
        mentions.append((f"{m.group(1) or ''}:{m.group(2).rstrip('.')}", "", False))
    return declared, mentions


def grounding_check(text: str, graph: Graph | str | Path) -> GroundingReport:
    """Check every IRI/CURIE in ``text`` against ``graph``; unknown prefixes count as missing."""
    schema = schema_of(as_graph(graph))
    declared, mentions = extract_mentions(text)
    prefixes = {p: str(ns) for p, ns in schema.graph.namespaces()}
    prefixes.update(schema.prefixes)
    prefixes.update(declared)
    report = GroundingReport()
    seen: set[str] = set()
    for written, iri, is_ns in mentions:
        if written in seen:
            continue
        seen.add(written)
        report.mentions.append(written)
        reason = None
        if not iri:
            prefix, local = written.split(":", 1)
            if prefix not in prefixes:
                reason = f"prefix {prefix!r}: is not declared in the text or bound in the graph"
            else:
                iri = prefixes[prefix] + local
        if reason is None:
            if is_ns:
                if not any(str(n).startswith(iri) for n in schema.nodes):
                    reason = f"no IRI of the graph is in namespace <{iri}>"
            elif URIRef(iri) not in schema.nodes:
                reason = f"<{iri}> is in no triple of the graph"
        if reason is None:
            report.found.append(written)
        else:
            report.missing.append(written)
            report.reasons[written] = reason
    return report

