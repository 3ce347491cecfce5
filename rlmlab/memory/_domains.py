"""Domains: what a ``domain_id`` names, so the ContextBuilder can find the L0 sense card and L1 constraints.

An ontology domain is a Turtle/RDF file (built in: ``prov`` and ``skos``, vendored under data/ontology/);
a crate domain is a Rust source directory (``crate:<name>`` finds the newest Debian ``librust-<name>-dev``
sources under /usr/share/cargo/registry; ``dir:<path>`` names any directory, relative to the current one).
``register_domain`` adds others; a path works as an id too.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlmlab.errors import ConfigError

__all__ = ["Domain", "DOMAINS", "register_domain", "resolve_domain", "CARGO_REGISTRY"]

CARGO_REGISTRY = Path("/usr/share/cargo/registry")
_ONTOLOGY_SUFFIXES = (".ttl", ".owl", ".rdf", ".nt", ".n3", ".jsonld", ".xml")


@dataclass(frozen=True)
class Domain:
    """A domain id and its source: ``kind`` "ontology" (an RDF file), "crate" (a Rust ``src`` directory) or
    "document" (a plain text file: a log, a table, a README)."""

    id: str
    kind: str
    source: Path

    def __post_init__(self) -> None:
        if self.kind not in ("ontology", "crate", "document"):
            raise ConfigError(f"domain {self.id!r}: kind {self.kind!r}; use 'ontology', 'crate' or 'document'")

    def sense_card(self, budget: int) -> str:
        """The L0 card: ``sense_card`` of the ontology, ``crate_sense_card`` of the crate, or a document's name,
        size and first line."""
        from rlmlab.ontology import crate_sense_card, sense_card

        if self.kind == "document":
            return _document_card(self.source, budget)
        return sense_card(self.source, budget) if self.kind == "ontology" else crate_sense_card(self.source, budget)

    def constraints(self) -> list[Any]:
        """Domain/range constraints of an ontology (a crate has none)."""
        from rlmlab.ontology import constraints_from_graph

        return constraints_from_graph(self.source) if self.kind == "ontology" else []

    def antipatterns(self) -> list[Any]:
        """The curated SPARQL anti-patterns for an ontology (a crate's guardrails are L1 memory items)."""
        from rlmlab.ontology import load_antipatterns

        return load_antipatterns() if self.kind == "ontology" else []

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "kind": self.kind, "source": str(self.source)}


def _builtin() -> dict[str, Domain]:
    from rlmlab.ontology import PROV_TTL, SKOS_TTL

    return {"prov": Domain("prov", "ontology", PROV_TTL), "skos": Domain("skos", "ontology", SKOS_TTL)}


DOMAINS: dict[str, Domain] = _builtin()


def _document_card(path: Path, budget: int) -> str:
    """A text document at a glance: its name, lines and characters, and its first line (a table's header)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    card = f"Document {path.name}: {text.count(chr(10)) + 1} lines, {len(text)} characters. First line: {first}"
    return card[: max(budget * 4, 80)]


def register_domain(domain: Domain) -> Domain:
    """Make ``domain.id`` resolvable; registering another source under a known id is an error."""
    known = DOMAINS.get(domain.id)
    if known is not None and known != domain:
        raise ConfigError(f"domain {domain.id!r} is already registered as {known.kind} {known.source}")
    DOMAINS[domain.id] = domain
    return domain


def _version_key(path: str) -> tuple[int, ...]:
    version = re.search(r"-(\d+(?:\.\d+)*)", Path(path).parent.name)
    return tuple(int(x) for x in version.group(1).split(".")) if version else ()


def resolve_domain(domain_id: str) -> Domain:
    """The Domain for an id: a registered one, ``crate:<name>``, ``dir:<path>``, an ontology file path or a crate
    directory.

    ConfigError says what was tried when nothing matches.
    """
    if not isinstance(domain_id, str) or not domain_id.strip():
        raise ConfigError(f"domain: {domain_id!r}; give a domain id such as 'prov' or 'crate:tokio'")
    if domain_id in DOMAINS:
        return DOMAINS[domain_id]
    if domain_id.startswith("crate:"):
        name = domain_id[len("crate:"):]
        found = sorted(glob.glob(str(CARGO_REGISTRY / f"{glob.escape(name)}-[0-9]*" / "src")), key=_version_key)
        if not found:
            raise ConfigError(f"domain {domain_id!r}: no {CARGO_REGISTRY}/{name}-<version>/src; "
                              f"install it with: apt-get install librust-{name.replace('_', '-')}-dev")
        return Domain(domain_id, "crate", Path(found[-1]))
    if domain_id.startswith("doc:"):  # a plain text document (a log, a table, a README) by its path
        where = Path(domain_id[len("doc:"):]).expanduser()
        if not where.is_file():
            raise ConfigError(f"domain {domain_id!r}: {where} is not a file; 'doc:<path>' names a text document")
        return Domain(domain_id, "document", where)
    if domain_id.startswith("dir:"):
        where = Path(domain_id[len("dir:"):]).expanduser()
        if not where.is_dir():
            raise ConfigError(f"domain {domain_id!r}: {where} is not a directory; 'dir:<path>' names a directory "
                              "of Rust sources")
        return Domain(domain_id, "crate", where)
    path = Path(domain_id)
    if path.is_file() and path.suffix.lower() in _ONTOLOGY_SUFFIXES:
        return Domain(domain_id, "ontology", path)
    if path.is_dir():
        return Domain(domain_id, "crate", path)
    raise ConfigError(f"domain: unknown {domain_id!r}; registered: {', '.join(sorted(DOMAINS))}; "
                      "or use 'crate:<name>', 'dir:<path>', an ontology file or a Rust source directory")
