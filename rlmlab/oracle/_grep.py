"""GrepOracle: verify pattern-match answers against the real matches of a regex in the source.

Verdicts (mutually exclusive and exhaustive). Let C be the claimed lines and A
the actual matching lines, each compared as (line number, text with
whitespace normalised); bare line numbers compare by number only. Then:

- ``ExactMatch``: C == A and the claims are in source order (also: both empty).
- ``UnorderedMatch``: C == A, in another order.
- ``SubsetMatch``: C is a non-empty strict subset of A and the query asks for a sample
  ("some", "examples", "first N", "a few").
- ``HasFalseNegatives``: C is a non-empty strict subset of A and the query asks for all.
- ``HasFalsePositives``: C has lines not in A, and shares at least one line with A.
- ``Mismatch``: C and A share no line, and at least one of them is non-empty.

For count queries the claim is a number n against the real count m:
n == m is ``ExactMatch``, n < m ``HasFalseNegatives``, n > m ``HasFalsePositives``.
A query with no known intent and no quoted pattern cannot be verified: ``verify``
returns None (never a guess).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

__all__ = ["GrepVerification", "GrepResult", "GrepOracle", "INTENT_PATTERNS", "pattern_for_query"]


class GrepVerification(str, enum.Enum):
    ExactMatch = "ExactMatch"
    UnorderedMatch = "UnorderedMatch"
    SubsetMatch = "SubsetMatch"
    HasFalsePositives = "HasFalsePositives"
    HasFalseNegatives = "HasFalseNegatives"
    Mismatch = "Mismatch"


@dataclass(frozen=True)
class GrepResult:
    """The detailed form: verdict, the pattern used, false positives and false negatives (as ``line:text``)."""

    verdict: GrepVerification
    pattern: str
    claimed: int
    actual: int
    false_positives: list[str] = field(default_factory=list)
    false_negatives: list[str] = field(default_factory=list)


# Known intents of Rust code queries -> regex (matched per line).
INTENT_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\basync (fn|function)s?\b|\basync functions?\b", re.I), r"\basync\s+(unsafe\s+)?fn\b"),
    (re.compile(r"\bunsafe blocks?\b", re.I), r"\bunsafe\s*\{"),
    (re.compile(r"\bunsafe (fn|functions?)\b", re.I), r"\bunsafe\s+fn\b"),
    (re.compile(r"\btodo comments?\b|\btodos?\b", re.I), r"//.*\b(TODO|FIXME|XXX)\b"),
    (re.compile(r"\berror handling patterns?\b", re.I), r"\?\s*;|\.unwrap\(\)|\.expect\(|\bResult<|\bErr\("),
    (re.compile(r"\bunwrap\b", re.I), r"\.unwrap\(\)"),
    (re.compile(r"\bpub(lic)? functions?\b", re.I), r"\bpub(\([^)]*\))?\s+(const\s+)?(async\s+)?(unsafe\s+)?fn\b"),
    (re.compile(r"\b(functions?|fns)\b", re.I), r"\bfn\s+\w+"),
    (re.compile(r"\bstructs?\b", re.I), r"\bstruct\s+\w+"),
    (re.compile(r"\benums?\b", re.I), r"\benum\s+\w+"),
    (re.compile(r"\btraits?\b", re.I), r"\btrait\s+\w+"),
    (re.compile(r"\bimpl(ementation)?s?\b", re.I), r"^\s*(unsafe\s+)?impl\b"),
    (re.compile(r"\bmacros?\b", re.I), r"\bmacro_rules!\s*\w+"),
]

_QUOTED = re.compile(r"[\"'`]([^\"'`]+)[\"'`]")
_MATCHING = re.compile(r"\b(?:matching|named|containing|like)\s+(?:pattern\s+)?[\"'`]?([\w*?.^$\\]+)[\"'`]?", re.I)
_SAMPLE = re.compile(r"\b(some|examples?|first\s+\d+|a few|sample|any)\b", re.I)
_COUNT = re.compile(r"^\s*(count|how many)\b", re.I)


def _named_item(intent: str, name: str) -> str:
    """The item kind of an intent regex (``\\bstruct``) followed by a name containing ``name`` (a regex)."""
    kind = intent.split(r"\s+")[0]
    return rf"{kind}\s+\w*{name}\w*"


def pattern_for_query(query: str) -> str | None:
    """The regex a query asks for: a quoted pattern wins, then the intent table; None if neither applies."""
    quoted = _QUOTED.search(query)
    intent = next((regex for rx, regex in INTENT_PATTERNS if rx.search(query)), None)
    if quoted:
        q = quoted.group(1)
        if intent and re.search(r"\bstructs?\b|\benums?\b|\btraits?\b|\bfn\b|functions?", query, re.I):
            # "structs matching 'Handle'": the item kind from the table, the name from the quote.
            return _named_item(intent, re.escape(q))
        return re.escape(q)
    matching = _MATCHING.search(query)
    if matching and intent:
        return _named_item(intent, matching.group(1))
    return intent


def _norm(text: str) -> str:
    return " ".join(text.split())


_CLAIM = re.compile(r"^\s*(?:(?P<path>[^:\s]+):)?(?P<line>\d+)(?::(?P<text>.*))?\s*$")


class GrepOracle:
    """Ground truth by regex over one source text; see the module docstring for the verdicts."""

    def __init__(self, source: str, path: str | None = None):
        self.source, self.path = source, path
        self.lines = source.splitlines()

    def ground_truth(self, pattern: str) -> list[tuple[int, str]]:
        rx = re.compile(pattern)
        return [(i, line) for i, line in enumerate(self.lines, 1) if rx.search(line)]

    def verify(self, answer: str, query: str) -> GrepVerification | None:
        result = self.verify_detailed(answer, query)
        return None if result is None else result.verdict

    def verify_detailed(self, answer: str, query: str) -> GrepResult | None:
        pattern = pattern_for_query(query)
        if pattern is None:
            return None
        actual = self.ground_truth(pattern)
        if _COUNT.search(query):
            m = re.search(r"-?\d+", answer)
            if m is None:
                return GrepResult(GrepVerification.Mismatch, pattern, 0, len(actual))
            n = int(m.group(0))
            verdict = (GrepVerification.ExactMatch if n == len(actual) else
                       GrepVerification.HasFalseNegatives if n < len(actual) else GrepVerification.HasFalsePositives)
            return GrepResult(verdict, pattern, n, len(actual))
        claims = [m for m in (_CLAIM.match(ln) for ln in answer.splitlines() if ln.strip()) if m]
        by_line = {i: _norm(t) for i, t in actual}
        claimed_keys, fps = [], []
        for c in claims:
            line, text = int(c.group("line")), c.group("text")
            ok = line in by_line and (text is None or _norm(text) == by_line[line])
            (claimed_keys if ok else fps).append(line if ok else f"{line}:{(text or '').strip()}")
        hits = set(claimed_keys)
        fns = [f"{i}:{t.strip()}" for i, t in actual if i not in hits]
        if fps:
            verdict = GrepVerification.HasFalsePositives if hits else GrepVerification.Mismatch
        elif not fns:
            in_order = claimed_keys == sorted(claimed_keys)
            verdict = GrepVerification.ExactMatch if in_order else GrepVerification.UnorderedMatch
        elif not hits:
            verdict = GrepVerification.Mismatch
        else:
            verdict = GrepVerification.SubsetMatch if _SAMPLE.search(query) else GrepVerification.HasFalseNegatives
        return GrepResult(verdict, pattern, len(claims), len(actual), fps, fns)
