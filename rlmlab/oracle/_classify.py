"""Query classification: which kind of query this is, and so which oracle can check it.

Rules are tried in priority order (lowest first); the first that matches
decides. The defaults follow the spec's table, with structural rules before
pattern-match ones so that "list all fields of X" is structural. Add a rule
with ``QUERY_RULES.register(QueryRule.regex(...))``.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass

from rlmlab.oracle._grep import pattern_for_query
from rlmlab.oracle._structural import structural_target

__all__ = ["QueryKind", "QueryRule", "QueryClassifier", "QUERY_RULES", "classify_query"]


class QueryKind(str, enum.Enum):
    PatternMatch = "PatternMatch"  # -> GrepOracle
    Structural = "Structural"  # -> TreeSitterOracle
    Semantic = "Semantic"  # -> no deterministic oracle (self-consistency at most)
    Unknown = "Unknown"  # no rule matched


@dataclass(frozen=True)
class QueryRule:
    name: str
    kind: QueryKind
    matches: Callable[[str], bool]
    priority: int = 100

    @classmethod
    def regex(cls, name: str, kind: QueryKind, pattern: str, priority: int = 100) -> "QueryRule":
        rx = re.compile(pattern, re.I)
        return cls(name, kind, lambda q: bool(rx.search(q)), priority)


@dataclass(frozen=True)
class Classification:
    kind: QueryKind
    rule: str | None


class QueryClassifier:
    """An ordered registry of :class:`QueryRule`; names are unique."""

    def __init__(self) -> None:
        self._rules: dict[str, QueryRule] = {}

    def register(self, rule: QueryRule, *, replace: bool = False) -> QueryRule:
        if rule.name in self._rules and not replace:
            raise ValueError(f"query rule {rule.name!r} is already registered; pass replace=True to override it")
        self._rules[rule.name] = rule
        return rule

    def unregister(self, name: str) -> None:
        self._rules.pop(name, None)

    @property
    def rules(self) -> list[QueryRule]:
        return sorted(self._rules.values(), key=lambda r: r.priority)

    def classify(self, query: str) -> Classification:
        for rule in self.rules:
            if rule.matches(query):
                return Classification(rule.kind, rule.name)
        return Classification(QueryKind.Unknown, None)


QUERY_RULES = QueryClassifier()
for _rule in [
    QueryRule("structural", QueryKind.Structural, lambda q: structural_target(q) is not None, priority=10),
    # "Explain how X implements fairness" is semantic although it says "implements": explaining comes first.
    QueryRule.regex("explain", QueryKind.Semantic, r"^\s*(explain|describe|summari[sz]e)\b|^\s*why\b", priority=5),
    QueryRule.regex("why-how", QueryKind.Semantic, r"\bwhy\s+(does|is|do)\b|\bwhat\s+is\s+the\s+purpose\b|"
                    r"\bhow\s+does\b", priority=20),
    QueryRule.regex("find-all", QueryKind.PatternMatch, r"\b(find|list|show)\s+all\b", priority=30),
    QueryRule.regex("count", QueryKind.PatternMatch, r"^\s*(count|how\s+many)\b", priority=30),
    QueryRule.regex("search-for", QueryKind.PatternMatch, r"\bsearch\s+for\b|\bgrep\b", priority=30),
    QueryRule("known-intent", QueryKind.PatternMatch, lambda q: pattern_for_query(q) is not None, priority=90),
]:
    QUERY_RULES.register(_rule)


def classify_query(query: str) -> QueryKind:
    return QUERY_RULES.classify(query).kind
