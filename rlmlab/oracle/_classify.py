"""Query classification: which kind of query this is, and so which oracle can check it.

With the source at hand (``sources``, or an ``intent`` already read from it) the question reader decides
(:func:`~rlmlab.oracle.read_question`): questions about items go to the tree-sitter oracle, lines and text
searches to the grep oracle, and a question the reader cannot decide is ``Unknown`` (the validator reports it
unverified, with the reader's reason). Only the rules of kind ``Semantic`` ("explain ...", "why does ...") are
asked first: the reader knows no such kind.

Without a source the rules decide: they are tried in priority order (lowest first); the first that matches
decides. The defaults follow the spec's table, with structural rules before pattern-match ones so that "list
all fields of X" is structural. Add a rule with ``QUERY_RULES.register(QueryRule.regex(...))``.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass

from rlmlab.oracle._aggregate import FACT_SUBJECTS
from rlmlab.oracle._grep import pattern_for_query
from rlmlab.oracle._question import Intent, Sources, read_question
from rlmlab.oracle._source import ParseCache
from rlmlab.oracle._structural import structural_target

__all__ = ["QueryKind", "QueryRule", "QueryClassifier", "QUERY_RULES", "classify_query", "oracle_kind"]


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
    rule: str | None  # the rule that decided, "reader" when the question reader did
    intent: Intent | None = None


def _subject_item(intent: Intent) -> str | None:
    subject = intent.subject or ""
    if subject.startswith(".") and subject.endswith("()"):
        return "call"
    return "unsafe {}" if subject == "unsafe {}" else (subject.split()[-1] if subject else None)


def oracle_kind(intent: Intent) -> QueryKind:
    """The oracle a read question goes to: Unknown when undecided; PatternMatch for lines, text searches and
    counts or lists of what tree-sitter gives no items of (comments, macros); Structural otherwise."""
    if not intent.decided:
        return QueryKind.Unknown
    if intent.kind in ("count", "list") and (intent.unit == "lines" or _subject_item(intent) not in FACT_SUBJECTS):
        return QueryKind.PatternMatch
    if intent.kind == "list" and _subject_item(intent) in ("call", "unsafe {}"):
        return QueryKind.PatternMatch  # such items have no names: they are listed as lines
    if intent.kind == "count" and _subject_item(intent) == "unsafe {}":
        return QueryKind.PatternMatch  # counted as the lines that open one, as the grep oracle always has
    return QueryKind.Structural


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

    def classify(self, query: str, sources: Sources | None = None, *, intent: Intent | None = None,
                 cache: ParseCache | None = None) -> Classification:
        """The kind of ``query``: read against ``sources`` (or from ``intent``) when given, else by the rules."""
        if intent is not None or sources is not None:
            for rule in self.rules:
                if rule.kind is QueryKind.Semantic and rule.matches(query):
                    return Classification(rule.kind, rule.name, intent)
            intent = intent if intent is not None else read_question(query, sources, cache=cache)
            return Classification(oracle_kind(intent), "reader", intent)
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


def classify_query(query: str, sources: Sources | None = None) -> QueryKind:
    """The kind of ``query``; read against ``sources`` when given (see the module docstring)."""
    return QUERY_RULES.classify(query, sources).kind
