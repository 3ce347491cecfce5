"""Which fillings of a SPARQL template can be right: those whose query returns rows over the attached ontology.

A template such as ``SELECT ?value WHERE { {{resource:curie}} {{property:property}} ?value }`` fits a query naming
two properties ("the inverse recorded with prov:inverse for prov:wasDerivedFrom") two ways, and the step grammar
lets a small model pick either; only one of them matches a triple of the graph. The ontology is the closed
vocabulary here (as the oracles are for code): :func:`sparql_keeper` runs every filling's SELECT once, in one
bounded child process, and keeps those with at least one row. When none has a row, or the check fails or runs out
of time, every filling stays: an empty answer may be the right one, and the check only ever narrows a choice.
"""

from __future__ import annotations

import ast
import itertools
import logging
from collections.abc import Callable
from typing import Any

from rlmlab.errors import ToolError
from rlmlab.tools import run_bounded

__all__ = ["sparql_keeper", "sparql_strings"]

_SECONDS = 5.0  # for every filling of one template together
_MEMORY_MB = 512
_MAX_FILLINGS = 64  # more are kept unchecked
_log = logging.getLogger("rlmlab.executors")


def sparql_strings(code: str) -> list[str]:
    """The string constants of ``code`` that are SPARQL SELECT queries (none if it does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and n.value.lstrip().upper().startswith("SELECT")]


def _with_rows(graph: Any, queries: list[list[str]]) -> list[bool]:
    """Per filling: every one of its SELECT queries has at least one row (a query that fails has none)."""
    out = []
    for qs in queries:
        ok = bool(qs)
        for q in qs:
            try:
                ok = ok and any(True for _ in itertools.islice(iter(graph.query(q)), 1))
            except Exception:  # a parse error or an unknown prefix: no rows
                ok = False
        out.append(ok)
    return out


def sparql_keeper(graph: Any) -> Callable[[list[str]], list[str]]:
    """A ``keep`` for :func:`template_rule`: the fillings whose SPARQL returns rows over ``graph`` (all of them when
    they hold no SPARQL, when none returns rows, or when the check cannot finish in a few seconds)."""

    def keep(fillings: list[str]) -> list[str]:
        queries = [sparql_strings(f) for f in fillings[:_MAX_FILLINGS]]
        if not any(queries):
            return fillings
        import rdflib.plugins.sparql  # noqa: F401 - the SPARQL parser loads once here, not in every child

        try:
            rows = run_bounded(_with_rows, graph, queries, seconds=_SECONDS, memory_mb=_MEMORY_MB,
                               what="template check")
        except (ToolError, RuntimeError) as exc:
            _log.info("SPARQL template check skipped: %s", exc)
            return fillings
        kept = [f for f, ok in zip(fillings, rows) if ok] + fillings[_MAX_FILLINGS:]
        return kept or fillings

    return keep
