"""Ontology loaders by file suffix, and a per-process cache so each file is parsed once.

The cache key is (resolved path, mtime in ns, size): editing a file reloads it, and two
spellings of one path share the parse. Graphs are built with ``bind_namespaces="none"``,
so their prefixes are the file's own, not rdflib's long default list.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from rdflib import Graph

from rlmlab.provenance import note_file
from rlmlab._paths import PROJECT_ROOT
from rlmlab.errors import ConfigError
from rlmlab.registry import Registry

__all__ = [
    "ONTOLOGY_DIR", "PROV_TTL", "SKOS_TTL", "LOADERS", "loader", "load_ontology", "as_graph",
    "ontology_cache_info", "clear_ontology_cache",
]

ONTOLOGY_DIR = PROJECT_ROOT / "data" / "ontology"
PROV_TTL = ONTOLOGY_DIR / "prov.ttl"
SKOS_TTL = ONTOLOGY_DIR / "skos.ttl"

Loader = Callable[[Path], Graph]

# suffix (lower case, with the dot) -> function that parses such a file
LOADERS: Registry = Registry("ontology loader")


def loader(*suffixes: str) -> Callable[[Loader], Loader]:
    """Register a loader for files ending in ``suffixes`` (".ttl"); a suffix may have one loader."""

    def decorate(func: Loader) -> Loader:
        for suffix in suffixes:
            if not suffix.startswith("."):
                raise ValueError(f"loader {func.__name__}: suffix {suffix!r} must start with a dot")
            LOADERS.register(suffix.lower(), func)
        return func

    return decorate


def _rdflib_loader(fmt: str) -> Loader:
    def parse(path: Path) -> Graph:
        return Graph(bind_namespaces="none").parse(str(path), format=fmt)

    parse.__name__ = f"rdflib_{fmt.replace('-', '_')}"
    return parse


loader(".ttl", ".turtle")(_rdflib_loader("turtle"))
loader(".nt")(_rdflib_loader("nt"))
loader(".n3")(_rdflib_loader("n3"))
loader(".rdf", ".owl", ".xml")(_rdflib_loader("xml"))
loader(".jsonld", ".json-ld")(_rdflib_loader("json-ld"))
loader(".trig")(_rdflib_loader("trig"))


@dataclass
class _CacheStats:
    hits: int = 0
    parses: int = 0


_CACHE: dict[tuple[str, int, int], Graph] = {}
_STATS = _CacheStats()
_LOCK = threading.Lock()


def load_ontology(path: str | Path) -> Graph:
    """The parsed graph of an ontology file, parsed at most once per (path, mtime, size) in this process.

    Callers share the returned graph: do not add triples to it (copy it first).
    Raises ConfigError for a missing file or a suffix without a loader; rdflib's
    parse error propagates for a malformed file.
    """
    path = Path(path).expanduser().resolve()
    try:
        st = path.stat()
    except OSError as exc:
        raise ConfigError(f"ontology file {path}: cannot read it ({exc.strerror})") from None
    note_file(path, "ontology")
    parse = LOADERS.factory(path.suffix.lower()) if path.suffix.lower() in LOADERS else None
    if parse is None:
        raise ConfigError(f"ontology file {path}: no loader for suffix {path.suffix!r}; known: {', '.join(sorted(LOADERS))}")
    key = (str(path), st.st_mtime_ns, st.st_size)
    with _LOCK:
        if key in _CACHE:
            _STATS.hits += 1
            return _CACHE[key]
    graph = parse(path)
    with _LOCK:
        for old in [k for k in _CACHE if k[0] == key[0]]:  # an edited file replaces its stale parse
            del _CACHE[old]
        _CACHE[key] = graph
        _STATS.parses += 1
    return graph


def as_graph(source: Graph | str | Path) -> Graph:
    """``source`` itself if it is a Graph, else :func:`load_ontology` of it."""
    return source if isinstance(source, Graph) else load_ontology(source)


def ontology_cache_info() -> dict[str, int]:
    """Entries, cache hits and parses since the process started (or the last clear)."""
    with _LOCK:
        return {"entries": len(_CACHE), "hits": _STATS.hits, "parses": _STATS.parses}


def clear_ontology_cache() -> None:
    with _LOCK:
        _CACHE.clear()
        _STATS.hits = _STATS.parses = 0
