"""GrepOracle: verify pattern-match answers against the real matches of a regex in the source.

The six verdicts and their exact definitions are in :mod:`rlmlab.oracle._verdicts`
(``GrepVerification`` is that enum under the spec's name). Here C is the set
of claimed lines and A the lines that match the query's regex, each compared
as (file, line number, text with whitespace normalised on both sides); a bare
line number compares by number only. Over several files (``GrepOracle.over_files``)
a claim ``path:line:text`` names its file; the path may be relative to the
source root or end with the file's root-relative path. Claims are read by the public
:func:`parse_claims` and count queries told by :func:`is_count_query`, so a view that
marks an answer's lines reads them exactly as the oracle did.

For count queries the claim is a number n against the real count m:
n == m is ``ExactMatch``, n < m ``HasFalseNegatives``, n > m ``HasFalsePositives``,
and an answer with no number ``Mismatch``.
A query with no known intent and no quoted pattern cannot be verified: ``verify``
returns None (never a guess).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rlmlab.oracle._question import Intent
from rlmlab.oracle._source import ParseCache, SourceEntry
from rlmlab.oracle._verdicts import Verification, asks_for_sample, normalise_ws, set_verdict

__all__ = ["GrepVerification", "GrepResult", "GrepOracle", "GrepClaim", "CODE_LINE", "INTENT_PATTERNS",
           "pattern_for_query", "pattern_for_intent", "parse_claim", "parse_claims", "is_count_query"]

GrepVerification = Verification


@dataclass(frozen=True)
class GrepResult:
    """The detailed form: verdict, the regex used, counts, and the false positives and negatives as ``line:text``."""

    verdict: Verification
    pattern: str
    claimed: int
    actual: int
    false_positives: list[str] = field(default_factory=list)
    false_negatives: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        # What asdict gives, without its recursive deep copy (a batch converts every result).
        return {"verdict": self.verdict, "pattern": self.pattern, "claimed": self.claimed, "actual": self.actual,
                "false_positives": list(self.false_positives), "false_negatives": list(self.false_negatives)}


# Lines that are not `//` comments (doc examples are full of `async fn dox()` and `.unwrap()`).
CODE_LINE = r"^(?!\s*//).*"

# Known intents of Rust code queries -> regex (matched per line, like grep -P).
INTENT_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\basync (fn|function)s?\b|\basync functions?\b", re.I), CODE_LINE + r"\basync\s+(unsafe\s+)?fn\b"),
    (re.compile(r"\bunsafe blocks?\b", re.I), CODE_LINE + r"\bunsafe\s*\{"),
    (re.compile(r"\bunsafe (fn|functions?)\b", re.I), CODE_LINE + r"\bunsafe\s+fn\b"),
    (re.compile(r"\btodo comments?\b|\btodos?\b", re.I), r"//.*\b(TODO|FIXME|XXX)\b"),
    (re.compile(r"\berror handling patterns?\b", re.I),
     CODE_LINE + r"(\?\s*;|\.unwrap\(\)|\.expect\(|\bResult<|\bErr\()"),
    (re.compile(r"\bunwrap\b", re.I), CODE_LINE + r"\.unwrap\(\)"),
    (re.compile(r"\bpub(lic)? (functions?|fns?)\b", re.I),
     CODE_LINE + r"\bpub(\([^)]*\))?\s+(const\s+)?(async\s+)?(unsafe\s+)?fn\b"),
    (re.compile(r"\b(functions?|fns)\b", re.I), CODE_LINE + r"\bfn\s+\w+"),
    (re.compile(r"\bstructs?\b", re.I), CODE_LINE + r"\bstruct\s+\w+"),
    (re.compile(r"\benums?\b", re.I), CODE_LINE + r"\benum\s+\w+"),
    (re.compile(r"\btraits?\b", re.I), CODE_LINE + r"\btrait\s+\w+"),
    (re.compile(r"\bimpl(ementation)?s?\b", re.I), r"^\s*(unsafe\s+)?impl\b"),
    (re.compile(r"\bmacros?\b", re.I), CODE_LINE + r"\bmacro_rules!\s*\w+"),
]

# A quote opens where no word character precedes it and closes on the same mark followed by no word
# character, so the apostrophe of "tokio's" neither opens nor closes one.
_QUOTED = re.compile(r"(?<!\w)([\"'`])(.+?)\1(?!\w)")
_MATCHING = re.compile(r"\b(?:matching|named|containing|like)\s+(?:pattern\s+)?[\"'`]?([\w*?.^$\\]+)[\"'`]?", re.I)
# Words before a quote that make it an item's name ("structs named 'Handle'") rather than the pattern itself.
_NAMING = re.compile(r"\b(?:matching|named|called|containing|like|with names?)\s+(?:pattern\s+)?$", re.I)
_COUNT = re.compile(r"^\s*(count|how many)\b|\bhow\s+many\b|\b(?:what|give)\s+(?:is\s+)?the\s+(?:total\s+)?number\s+of\b", re.I)


def is_count_query(query: str) -> bool:
    """Whether the query asks for a count ("Count ...", "How many ..."): the answer is then a number, not lines."""
    return bool(_COUNT.search(query))


def _named_item(intent: str, name: str) -> str:
    """The intent regex up to its item keyword (``...\\bstruct``, ``...\\basync\\s+(unsafe\\s+)?fn``) followed by a
    name containing ``name`` (a regex)."""
    kind = intent
    for tail in (r"\s+\w+", r"\s*\w+", r"\b"):
        if kind.endswith(tail):
            kind = kind[: -len(tail)]
            break
    return rf"{kind}\s+\w*{name}\w*"


@lru_cache(maxsize=4096)  # the classifier and the verifier both ask, and a batch repeats its queries
def pattern_for_query(query: str) -> str | None:
    """The regex a query asks for; None if it asks for none.

    Quoted text is a literal pattern whatever words it contains ("Count occurrences of 'async fn'"), and the
    intent table is read from the words outside quotes only. A quote is an item's name only when the words
    outside quotes name an item kind and the quote follows a naming word ("structs matching 'Handle'").
    """
    quoted = _QUOTED.search(query)
    outside = _QUOTED.sub(" ", query)
    intent = next((regex for rx, regex in INTENT_PATTERNS if rx.search(outside)), None)
    if quoted:
        q = quoted.group(2)
        if intent and _NAMING.search(query[: quoted.start()]):
            return _named_item(intent, re.escape(q))
        return re.escape(q)
    matching = _MATCHING.search(query)
    if matching and intent:
        return _named_item(intent, matching.group(1))
    return intent


_FN_MODIFIERS = [("pub", r"pub(?:\([^)]*\))?\s+"), ("const", r"const\s+"), ("async", r"async\s+"),
                 ("unsafe", r"unsafe\s+"), ("extern", r"extern\s+(?:\"[^\"]*\"\s+)?")]
_ITEM_LINES = {"struct": CODE_LINE + r"\bstruct\s+\w+", "enum": CODE_LINE + r"\benum\s+\w+",
               "trait": CODE_LINE + r"\btrait\s+\w+", "macro": CODE_LINE + r"\bmacro_rules!\s*\w+",
               "unsafe {}": CODE_LINE + r"\bunsafe\s*\{"}


def _fn_line(modifiers: set[str]) -> str:
    """Lines declaring a fn with all of ``modifiers`` (pub, const, async, unsafe), the others allowed between."""
    required = [i for i, (name, _) in enumerate(_FN_MODIFIERS) if name in modifiers]
    parts = [rx if i in required else f"(?:{rx})?" for i, (_, rx) in enumerate(_FN_MODIFIERS)][required[0]:] \
        if required else []
    return CODE_LINE + r"\b" + "".join(parts) + r"fn\s+\w+"


def pattern_for_intent(intent: Intent, query: str) -> str | None:
    """The per-line regex for what a read question counts or lists (:class:`~rlmlab.oracle.Intent`);
    :func:`pattern_for_query` for subjects tree-sitter has no items of (comments, quoted text); None when the
    question narrows its items in a way one line cannot show (named traits or types, owners, name patterns,
    excluded names, tests): the tree-sitter facts check those."""
    subject = intent.subject or ""
    words = subject.replace("#[test]", "test").split()
    call = re.fullmatch(r"\.(\w+)\(\)", subject)
    item = "call" if call else subject if subject == "unsafe {}" else (words[-1] if words else "")
    if item in ("fn", "impl", "struct", "enum", "trait", "type", "call", "unsafe {}"):
        narrowed = intent.targets or intent.context or intent.name_pattern or intent.excluded \
            or "no_tests" in intent.rules or "plain_pub" in intent.rules \
            or {"test", "free", "inherent", "trait"} & set(words[:-1])
        if narrowed or item == "type":
            return None
    if call:
        return CODE_LINE + rf"\.{re.escape(call.group(1))}\(" + (r"\)" if call.group(1) == "unwrap" else "")
    if subject in _ITEM_LINES:
        return _ITEM_LINES[subject]
    if item == "fn":
        return _fn_line(set(words[:-1]))
    if item == "impl":
        return r"^\s*unsafe\s+impl\b" if "unsafe" in words else r"^\s*(unsafe\s+)?impl\b"
    if item in _ITEM_LINES and len(words) == 1:
        return _ITEM_LINES[item]
    if subject == "text" and intent.targets:  # lines that mention an identifier of the source: the whole word
        return rf"\b{re.escape(intent.targets[0])}\b"
    return pattern_for_query(query)


# Ground truth is computed over a file's whole text: a literal every match must contain (found with sre's
# parser, e.g. "async" in ^(?!\s*//).*\basync\s+fn\b, or one of .unwrap() .expect( Result< ... for the
# error-handling pattern) is searched in C over the text, and only lines holding one are tested with the
# pattern, which is the per-line regex as before, so results are grep's line for line. (One MULTILINE
# pattern over the whole text was measured slower: Python's re tries every offset, and ^(?!...).* re-scans
# each line.) A pattern with no such literal, or a text with line breaks other than \n (str.splitlines splits
# on those, grep does not), is tested on every line.
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _required(items: Any) -> frozenset[str] | None:
    """Literals of which every match of the parsed sequence ``items`` contains one, or None if none is known."""
    from re import _constants as c  # noqa: PLC0415  (the parser's opcodes; stable across 3.11-3.13)

    best: frozenset[str] | None = None
    run: list[str] = []

    def consider(found: frozenset[str] | None) -> None:
        nonlocal best
        if found and (best is None or min(map(len, found)) > min(map(len, best))):
            best = found

    for op, arg in list(items) + [(None, None)]:
        if op is c.LITERAL:
            run.append(chr(arg))
            continue
        if run:
            consider(frozenset(["".join(run)]))
            run = []
        if op is c.SUBPATTERN:
            if arg[1] & re.IGNORECASE:  # (?i:...): a literal would be case-sensitive
                continue
            consider(_required(arg[3]))
        elif op is c.BRANCH:
            alts = [_required(b) for b in arg[1]]
            if all(alts):
                consider(frozenset().union(*alts))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and arg[0] >= 1:
            consider(_required(arg[2]))
    return best


@lru_cache(maxsize=256)
def _prefilter(pattern: str) -> tuple[re.Pattern[str], tuple[re.Pattern[str], ...] | None]:
    """The per-line regex and the literals every match contains one of, one regex each (None: test every line).

    One regex per literal, not one alternation: re finds a single literal with a fast scan, an alternation
    by trying every offset."""
    from re import _parser  # noqa: PLC0415

    rx = re.compile(pattern)
    try:
        parsed = _parser.parse(pattern)
    except re.error:
        return rx, None
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return rx, None
    found = _required(parsed)
    if not found or "\n" in "".join(found):
        return rx, None
    return rx, tuple(re.compile(re.escape(lit)) for lit in sorted(found))


def _matching_lines(entry: SourceEntry, pattern: str) -> list[tuple[int, str]]:
    """(line, text) of every line of ``entry`` that ``pattern`` matches, memoised on the entry for a batch."""
    key = f"grep:{pattern}"
    found = entry.memo.get(key)
    if found is not None:
        return found
    rx, literals = _prefilter(pattern)
    text = entry.text
    plain = entry.memo.get("newline_only")
    if plain is None:
        plain = entry.memo["newline_only"] = _OTHER_BREAKS.search(text) is None
    if literals is None or not plain:
        found = [(i, line) for i, line in enumerate(entry.lines, 1) if rx.search(line)]
    else:
        found, number, counted, end = [], 1, 0, -1
        hits = [m.start() for lit in literals for m in lit.finditer(text)]
        for pos in sorted(hits) if len(literals) > 1 else hits:
            if pos <= end:  # another literal on a line already tested
                continue
            number += text.count("\n", counted, pos)
            start, end = text.rfind("\n", 0, pos) + 1, text.find("\n", pos)
            if end < 0:
                end = len(text)
            counted = pos
            line = text[start:end]
            if rx.search(line):
                found.append((number, line))
    entry.memo[key] = found
    return found


def _line_text(text: str) -> str:
    """A line as compared: whitespace normalised, a trailing ``{`` dropped (agents often quote without it)."""
    return normalise_ws(text).removesuffix("{").rstrip()


_CLAIM = re.compile(r"^\s*(?:(?P<path>[^:\s]+):)?(?P<line>\d+)(?::(?P<text>.*))?\s*$")


@dataclass(frozen=True)
class GrepClaim:
    """One claimed line of an answer, ``[path:]line[:text]``.

    ``raw`` is the claim as written (surrounding whitespace stripped); it is how a false positive is reported.
    ``path`` and ``text`` are None when the claim leaves them out; ``text`` is as written (not normalised).
    """

    raw: str
    line: int
    path: str | None = None
    text: str | None = None


def parse_claim(line: str) -> GrepClaim | None:
    """The claim on one answer line, or None when the line is not a claim (prose)."""
    m = _CLAIM.match(line)
    if m is None:
        return None
    return GrepClaim(m.group(0).strip(), int(m.group("line")), m.group("path"), m.group("text"))


_NUMBER_LIST = re.compile(r"\s*\d+(?:\s*[,;]\s*(?:and\s+)?\d+)+\s*[.]?\s*")


def parse_claims(answer: str) -> list[GrepClaim]:
    """The claims of an answer in the order written; blank and prose lines are skipped, as the oracle skips them.
    An answer that is only line numbers separated by commas ("53, 63, 71") claims those lines."""
    if _NUMBER_LIST.fullmatch(answer):
        return [GrepClaim(n, int(n)) for n in re.findall(r"\d+", answer)]
    return [c for c in (parse_claim(ln) for ln in answer.splitlines() if ln.strip()) if c is not None]


class GrepOracle:
    """Ground truth by regex over one source text, or over several files with :meth:`over_files`."""

    def __init__(self, source: str, path: str | None = None, cache: ParseCache | None = None):
        entry = cache.entry(source) if cache is not None else SourceEntry.of(source)
        self.files: list[tuple[str | None, SourceEntry]] = [(path, entry)]
        self.multi = False

    @classmethod
    def over_files(cls, files: Mapping[str, str], cache: ParseCache | None = None) -> "GrepOracle":
        """An oracle over several files: ``{relative path: text}``; claims must then name their file."""
        oracle = cls.__new__(cls)
        oracle.files = [(path, cache.entry(text) if cache is not None else SourceEntry.of(text))
                        for path, text in sorted(files.items())]
        oracle.multi = True
        return oracle

    @property
    def path(self) -> str | None:
        return None if self.multi else self.files[0][0]

    @property
    def lines(self) -> list[str]:
        return self.files[0][1].lines

    def ground_truth(self, pattern: str) -> list[tuple[int, str]]:
        """(line, text) of every matching line of the first (or only) file."""
        return list(_matching_lines(self.files[0][1], pattern))

    def ground_truth_all(self, pattern: str) -> list[tuple[str | None, int, str]]:
        """(path, line, text) of every matching line of every file, in path then line order.

        Computed once per (file, regex) over the file's whole text and kept on its SourceEntry, so the claims of
        a batch sharing a ParseCache share it. Lines are as grep -P sees them (a match never crosses a line end).
        """
        return [(path, i, line) for path, entry in self.files for i, line in _matching_lines(entry, pattern)]

    def _file_index(self, path: str | None) -> int | None:
        """The file a claimed path names: the exact relative path, else the longest file path the claim ends
        with (claims may carry a longer prefix), else the only file whose path ends with the claim."""
        if not self.multi:
            return 0
        if path is None:
            return None
        claim = path.replace("\\", "/").removeprefix("./")
        rels = [(rel or "").replace("\\", "/") for rel, _ in self.files]
        if claim in rels:
            return rels.index(claim)
        longer = [(len(rel), i) for i, rel in enumerate(rels) if claim.endswith("/" + rel)]
        if longer:
            return max(longer)[1]
        shorter = [i for i, rel in enumerate(rels) if rel.endswith("/" + claim)]
        return shorter[0] if len(shorter) == 1 else None

    def verify(self, answer: str, query: str) -> Verification | None:
        result = self.verify_detailed(answer, query)
        return None if result is None else result.verdict

    def verify_detailed(self, answer: str, query: str, *, pattern: str | None = None,
                        count: bool | None = None) -> GrepResult | None:
        """The detailed verdict; ``pattern`` and ``count`` default to what :func:`pattern_for_query` and
        :func:`is_count_query` read from the query."""
        pattern = pattern if pattern is not None else pattern_for_query(query)
        if pattern is None:
            return None
        actual = self.ground_truth_all(pattern)
        if count if count is not None else is_count_query(query):
            m = re.search(r"-?\d+", answer)
            if m is None:
                return GrepResult(Verification.Mismatch, pattern, 0, len(actual))
            n = int(m.group(0))
            verdict = (Verification.ExactMatch if n == len(actual) else
                       Verification.HasFalseNegatives if n < len(actual) else Verification.HasFalsePositives)
            return GrepResult(verdict, pattern, n, len(actual))
        index_of = {path: i for i, (path, _) in enumerate(self.files)}
        by_key = {(index_of[path], i): _line_text(t) for path, i, t in actual}
        claims = parse_claims(answer)
        hits, fps = [], []
        for c in claims:
            key = (self._file_index(c.path), c.line)
            ok = key in by_key and (c.text is None or _line_text(c.text) == by_key[key])
            if ok:
                hits.append(key)
            else:
                fps.append(c.raw)
        order = [(index_of[path], i) for path, i, _ in actual]
        verdict = set_verdict(hits, len(fps), order, asks_for_sample(query))
        seen = set(hits)
        fns = [f"{path + ':' if self.multi else ''}{i}:{t.strip()}" for path, i, t in actual
               if (index_of[path], i) not in seen]
        return GrepResult(verdict, pattern, len(claims), len(actual), fps, fns)
