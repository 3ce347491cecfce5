"""Which fillings of a SPARQL template can be right: those whose query returns rows over the attached ontology.

A template such as ``SELECT ?value WHERE { {{resource:curie}} {{property:property}} ?value }`` fits a query naming
two properties ("the inverse recorded with prov:inverse for prov:wasDerivedFrom") two ways, and the step grammar
lets a small model pick either; only one of them matches a triple of the graph. The ontology is the closed
vocabulary here (as the oracles are for code): :func:`sparql_keeper` runs every filling's SELECT once, in one
bounded child process, and keeps those with at least one row. When none has a row, or the check fails or runs out
of time, every filling stays: an empty answer may be the right one, and the check only ever narrows a choice.
A query's answer is remembered per graph (the ontology is only read), so a task's later steps and the next tasks
over the same graph do not fork again for the same fillings.
"""

from __future__ import annotations

import ast
import itertools
import logging
import weakref
from collections.abc import Callable
from typing import Any

from rlmlab.errors import ToolError
from rlmlab.tools import run_bounded

__all__ = ["sparql_keeper", "sparql_strings"]

_SECONDS = 5.0  # for every filling of one template together
_MEMORY_MB = 512
_MAX_FILLINGS = 64  # more are kept unchecked
_log = logging.getLogger("rlmlab.executors")
_ROWS: dict[int, dict[str, bool]] = {}  # id(graph) -> SELECT text -> has a row; dropped with the graph


def _known(graph: Any) -> dict[str, bool]:
    """The remembered answers for ``graph`` (by identity: rdflib hashes a graph by its name, not its triples)."""
    key = id(graph)
    if key not in _ROWS:
        _ROWS[key] = {}
        weakref.finalize(graph, _ROWS.pop, key, None)
    return _ROWS[key]


def sparql_strings(code: str) -> list[str]:
    """The string constants of ``code`` that are SPARQL SELECT queries (none if it does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and n.value.lstrip().upper().startswith("SELECT")]


def _with_rows(graph: Any, queries: list[str]) -> list[bool]:
    """Per query: whether it has at least one row (a query that fails has none)."""
    out = []
    for q in queries:
        try:
            out.append(any(True for _ in itertools.islice(iter(graph.query(q)), 1)))
        except Exception:  # a parse error or an unknown prefix: no rows
            out.append(False)
    return out


def sparql_keeper(graph: Any) -> Callable[[list[str]], list[str]]:
    """A ``keep`` for :func:`template_rule`: the fillings whose SPARQL returns rows over ``graph`` (all of them when
    they hold no SPARQL, when none returns rows, or when the check cannot finish in a few seconds)."""

    def keep(fillings: list[str]) -> list[str]:
        queries = [sparql_strings(f) for f in fillings[:_MAX_FILLINGS]]
        if not any(queries):
            return fillings
        known = _known(graph)
        new = list(dict.fromkeys(q for qs in queries for q in qs if q not in known))
        if new:
            import rdflib.plugins.sparql  # noqa: F401 - the SPARQL parser loads once here, not in every child

            try:
                rows = run_bounded(_with_rows, graph, new, seconds=_SECONDS, memory_mb=_MEMORY_MB,
                                   what="template check")
            except (ToolError, RuntimeError) as exc:
                _log.info("SPARQL template check skipped: %s", exc)
                return fillings
            known.update(zip(new, rows))
        kept = [f for f, qs in zip(fillings, queries) if qs and all(known[q] for q in qs)]
        return (kept + fillings[_MAX_FILLINGS:]) or fillings

    return keep
