"""sparql_query: a bounded SPARQL tool over the workspace's ontology graph ("handles, not payloads").

The full result (at most ``limit`` rows) goes to the BlobStore as JSON lines, one object per
row with each variable's value in N3 (``prov:Entity``, ``"x"@en``, ``<iri>``; null if unbound);
the model sees the handle, the row count and a preview of a few clipped rows, never the rows.

The graph comes from ``workspace.extras["ontology"]`` (a rdflib Graph or the path of an
ontology file), set by :func:`attach_ontology`. With none, the tool raises ToolError saying so.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from rlmlab.errors import ConfigError, ToolError
from rlmlab.tools._bounded import run_bounded, time_left
from rlmlab.tools._clip import clip_json
from rlmlab.tools._registry import tool
from rlmlab.tools._schema import Bounds
from rlmlab.tools._workspace import ToolCaps, Workspace

# rdflib (about a tenth of a second with its SPARQL parser) is imported when an ontology is first attached or
# queried, not when rlmlab.tools is imported.
if TYPE_CHECKING:
    from rdflib import Graph

__all__ = ["sparql_query", "attach_ontology", "ontology_of", "ONTOLOGY_KEY", "SPARQL_CAP_DEFAULTS"]

ONTOLOGY_KEY = "ontology"

# Caps of sparql_query, read from the workspace's ToolCaps when it has these fields, else these defaults.
SPARQL_CAP_DEFAULTS = {
    "sparql_limit_max": 10000,  # largest limit: rows kept in the result blob
    "sparql_preview_rows": 5,  # rows shown in the preview
    "sparql_query_max": 4000,  # longest query, in characters
}
_PREVIEW_COLS = 8  # variables shown per preview row (the blob keeps all)
_NAME_CLIP = 40  # characters of a variable name in the preview
_WARNINGS = 3  # validate_sparql findings shown when a query returns no rows
_WARNING_CLIP = 200
_OVERHEAD = 512
_JSON = 2  # Workspace.call measures results as JSON text: escapes (\n, \") can double a character


def _cap(caps: Any, name: str) -> int:
    return int(getattr(caps, name, SPARQL_CAP_DEFAULTS[name]))


def _limit_bounds() -> Bounds:
    # ToolSpec.schema_for_caps reads an x-cap with a plain getattr, so name the cap only once ToolCaps has it.
    if "sparql_limit_max" in getattr(ToolCaps, "__dataclass_fields__", {}):
        return Bounds(minimum=1, cap="sparql_limit_max")
    return Bounds(minimum=1, maximum=SPARQL_CAP_DEFAULTS["sparql_limit_max"])


def _result_cap(caps: Any) -> int:
    cell = caps.snippet_chars + 2 + _NAME_CLIP + 6  # '"name": "value", ' with both clipped by JSON length
    preview = _cap(caps, "sparql_preview_rows") * (_PREVIEW_COLS * cell + 4)
    names = _PREVIEW_COLS * (_NAME_CLIP + 4)
    warnings = _WARNINGS * (_WARNING_CLIP + 4) * _JSON
    return preview + names + warnings + _OVERHEAD


def attach_ontology(ws: Workspace, source: Graph | str | Path | None) -> Graph | None:
    """Give a workspace its ontology graph (a Graph, or a file loaded once per process); None detaches it."""
    if source is None:
        ws.extras.pop(ONTOLOGY_KEY, None)
        return None
    from rlmlab.ontology import as_graph

    graph = as_graph(source)
    ws.extras[ONTOLOGY_KEY] = graph
    return graph


def ontology_of(ws: Workspace) -> Graph:
    """The workspace's ontology graph; ToolError if none is attached or its file cannot be loaded."""
    from rdflib import Graph

    source = ws.extras.get(ONTOLOGY_KEY)
    if source is None:
        raise ToolError("no ontology is loaded in this workspace; attach one with "
                        "rlmlab.tools.attach_ontology(ws, 'data/ontology/prov.ttl')")
    if isinstance(source, Graph):
        return source
    from rlmlab.ontology import load_ontology

    try:
        return load_ontology(source)
    except ConfigError as exc:
        raise ToolError(f"ontology: {exc}") from None


def _clip_json(text: str, n: int) -> str:
    return clip_json(text, n, "…")


@tool(cap=_result_cap, group="ontology")
def sparql_query(
    ws: Workspace,
    query: str,
    limit: Annotated[int, _limit_bounds()] = 100,
) -> dict:
    """Run SPARQL over the loaded ontology; returns a BlobRef to the rows (JSON lines), the row count and a short preview.

    Args:
        query: a SPARQL SELECT, ASK, CONSTRUCT or DESCRIBE query; the ontology's own prefixes may be used undeclared.
        limit: rows to keep in the result blob, 1 to the cap (default cap 10000); evaluation stops after limit rows.
    """
    limit_max = _cap(ws.caps, "sparql_limit_max")
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= limit_max:
        raise ToolError(f"limit: {limit!r} is out of range; allowed 1 to {limit_max}")
    if not isinstance(query, str) or not query.strip():
        raise ToolError("query: empty; give a SPARQL query such as SELECT ?c WHERE { ?c a owl:Class } LIMIT 10")
    query_max = _cap(ws.caps, "sparql_query_max")
    if len(query) > query_max:
        raise ToolError(f"query: {len(query)} characters, over the cap of {query_max}")
    graph = ontology_of(ws)
    import rdflib.plugins.sparql  # the SPARQL engine is loaded here, before the fork

    rdflib.plugins.sparql.SPARQL_LOAD_GRAPHS = False  # a FROM <url> is never fetched for step code

    kind, variables, rows, more = run_bounded(_evaluate, graph, query, limit, seconds=time_left(ws),
                                              memory_mb=ws.caps.tool_memory_mb, what="sparql_query")

    ref = ws.store.put("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    width = ws.caps.snippet_chars + 2
    shown_vars = variables[:_PREVIEW_COLS]
    preview = [
        {_clip_json(v, _NAME_CLIP): (r[v] if r[v] is None or isinstance(r[v], bool) else _clip_json(r[v], width))
         for v in shown_vars}
        for r in rows[: _cap(ws.caps, "sparql_preview_rows")]
    ]
    out: dict[str, Any] = {
        "ref": ref,
        "type": kind,
        "vars": [_clip_json(v, _NAME_CLIP) for v in shown_vars],
        "vars_total": len(variables),
        "rows": len(rows),
        "more": more,
        "preview": preview,
    }
    if not rows:
        out["warnings"] = _warnings(query, graph)
    return out


def _evaluate(graph: Graph, query: str, limit: int) -> tuple[str, list[str], list[dict[str, Any]], bool]:
    """(result type, variables, at most ``limit`` rows in N3, whether there were more); runs in the bounded
    worker, so a query that explodes is stopped there."""
    try:
        result = graph.query(_local_only(graph, query))
        nm = graph.namespace_manager
        if result.type == "ASK":
            return "ASK", ["ask"], [{"ask": bool(result.askAnswer)}], False
        if result.type == "SELECT":
            variables = [str(v) for v in result.vars or []]
            taken = list(itertools.islice(iter(result), limit + 1))  # rdflib evaluates SELECT lazily
            rows = [{v: (None if t is None else t.n3(nm)) for v, t in zip(variables, row)} for row in taken[:limit]]
            return "SELECT", variables, rows, len(taken) > limit
        # CONSTRUCT / DESCRIBE: the result graph's triples, sorted so the blob is deterministic
        triples = sorted(result.graph) if result.graph is not None else []
        rows = [{"s": s.n3(nm), "p": p.n3(nm), "o": o.n3(nm)} for s, p, o in triples[:limit]]
        return result.type, ["s", "p", "o"], rows, len(triples) > limit
    except (MemoryError, RecursionError, ToolError):
        raise
    except Exception as exc:  # pyparsing ParseException, rdflib's plain Exception for unknown prefixes, re.error
        detail = getattr(exc, "msg", None) or str(exc)  # from a regex() filter, ... : all the query's to fix
        where = f" at line {exc.lineno}, column {exc.col}" if hasattr(exc, "lineno") and hasattr(exc, "col") else ""
        raise ToolError(f"query: SPARQL error{where}: {' '.join(str(detail).split())[:300]}") from None


def _local_only(graph: Graph, query: str) -> Any:
    """The query prepared against ``graph``'s prefixes, refused with a ToolError when it has a ``SERVICE`` clause:
    rdflib would fetch that URL from the host (network the step code must not reach: a step sent a file it read
    to a listener in the URL's query string)."""
    from rdflib.plugins.sparql import prepareQuery
    from rdflib.plugins.sparql.algebra import traverse

    prepared = prepareQuery(query, initNs=dict(graph.namespaces()))
    found: list[str] = []

    def visit(node: Any) -> None:
        if getattr(node, "name", None) == "ServiceGraphPattern":
            found.append(str(node.get("term", "")))

    traverse(prepared.algebra, visit)
    if found:
        raise ToolError(f"query: SERVICE <{found[0]}> would fetch from the network; sparql_query answers from the "
                        "attached ontology only")
    return prepared


def _warnings(query: str, graph: Graph) -> list[str]:
    """Why a query may have matched nothing: the first validate_sparql findings, clipped."""
    from rlmlab.ontology import validate_sparql

    findings = [f for f in validate_sparql(query, graph) if f.kind != "missing_prefix"]
    return [f"{f.kind}: {f.message}"[:_WARNING_CLIP] for f in findings[:_WARNINGS]]
