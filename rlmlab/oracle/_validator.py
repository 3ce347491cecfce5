"""TraceValidator: route each FINAL answer to the oracle its query kind calls for; golden, unverified or failed.

Routing (:mod:`rlmlab.oracle._classify`): the question is read against the
source (:func:`~rlmlab.oracle.read_question`); PatternMatch -> GrepOracle,
Structural -> TreeSitterOracle, Semantic -> SelfConsistency when an LM is
given (verdict ``Consensus``, never golden), else Unverified. A question the
reader cannot decide is Unverified with its reason, never Failed. An answer is
golden when its verdict is ExactMatch, UnorderedMatch, or SubsetMatch for a
query that asked for a sample; any other verdict fails it.

An answer that says nothing is never golden, whatever the oracle: an empty
answer is Unverified, a placeholder (``{answer}``, ``<answer>``, ``TODO``,
``...``, ``N/A``) Failed, and an answer claiming no items (no line, no name, a
count of 0) where the oracle finds none either is Unverified: the oracle's own
reading may be what found nothing.

Sources: pass ``source`` (the text) to ``validate``, or let the validator read
``source_path`` (absolute, or relative to ``source_root``). A directory is a
multi-file source: every ``*.rs`` file under it. With ``use_cache`` (default)
file texts, parses and extractions are cached by content hash for the batch.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlmlab._files import JsonlWriter, finite, write_jsonl
from rlmlab.oracle._answers import claims_nothing, says_nothing
from rlmlab.oracle._classify import QUERY_RULES, QueryClassifier, QueryKind
from rlmlab.oracle._consistency import SelfConsistencyOracle
from rlmlab.oracle._grep import GrepOracle, parse_claims, pattern_for_intent
from rlmlab.oracle._question import Intent, read_question
from rlmlab.oracle._records import AnalysisResult, GoldenTrace, MalformedLine
from rlmlab.oracle._source import ParseCache
from rlmlab.oracle._structural import verify_structural
from rlmlab.oracle._treesitter import TreeSitterOracle
from rlmlab.oracle._verdicts import GOOD_VERDICTS, CannotVerify
from rlmlab.text import plural

__all__ = ["OracleResult", "ValidationStats", "TraceValidator", "SourceMissing", "ORACLES", "OraclePlugin",
           "ResultWriter"]


class SourceMissing(Exception):
    """The source a trace refers to cannot be found or read."""


Sources = list[tuple[str | None, str]]  # (path relative to the source, text); one entry with None for a bare text


@dataclass(frozen=True)
class OraclePlugin:
    """A deterministic oracle for one query kind: ``check(answer, query, sources, cache)`` -> detailed result.

    With ``takes_intent`` the check is also given the question reader's :class:`~rlmlab.oracle.Intent` and the
    parsed files it read (a list of :class:`TreeSitterOracle`, in the order of ``sources``), both None when the
    question was not read."""

    name: str
    kind: QueryKind
    check: Callable[..., Any]
    takes_intent: bool = False


def _grep_check(answer: str, query: str, sources: Sources, cache: ParseCache | None,
                intent: Intent | None = None, parsed: list[TreeSitterOracle] | None = None) -> Any:
    if len(sources) == 1 and sources[0][0] is None:
        oracle = GrepOracle(sources[0][1], cache=cache)
    else:
        oracle = GrepOracle.over_files(dict(sources), cache=cache)
    if intent is None:
        return oracle.verify_detailed(answer, query)
    return oracle.verify_detailed(answer, query, pattern=pattern_for_intent(intent, query),
                                  count=intent.kind == "count")


def _tree_sitter_check(answer: str, query: str, sources: Sources, cache: ParseCache | None,
                       intent: Intent | None = None, parsed: list[TreeSitterOracle] | None = None) -> Any:
    oracles = parsed if parsed is not None else [TreeSitterOracle(text, path, cache=cache) for path, text in sources]
    return verify_structural(oracles, answer, query, intent)


ORACLES: dict[QueryKind, OraclePlugin] = {
    QueryKind.PatternMatch: OraclePlugin("GrepOracle", QueryKind.PatternMatch, _grep_check, takes_intent=True),
    QueryKind.Structural: OraclePlugin("TreeSitterOracle", QueryKind.Structural, _tree_sitter_check,
                                       takes_intent=True),
}


def _grep_or_facts(kind: QueryKind, intent: Intent, query: str, answer: str) -> QueryKind:
    """Items listed as their source lines go to the grep oracle when one line regex finds them all; what such a
    regex cannot narrow (a named trait, an owner, tests) stays with the tree-sitter facts, lines or not."""
    by_line = pattern_for_intent(intent, query) is not None
    if kind is QueryKind.Structural and by_line and intent.kind == "list" and intent.unit != "files" \
            and _line_claims_only(answer):
        return QueryKind.PatternMatch
    if kind is QueryKind.PatternMatch and not by_line and intent.subject not in (None, "text", "comment", "macro"):
        return QueryKind.Structural
    return kind


def _line_claims_only(answer: str) -> bool:
    """Whether every non-blank line of the answer is a ``[path:]line[:text]`` claim."""
    lines = [ln for ln in answer.splitlines() if ln.strip()]
    return bool(lines) and len(parse_claims(answer)) == len(lines)


@dataclass
class OracleResult:
    """``Golden(trace)``, ``Unverified(reason)``, ``Failed(reason, trace)`` or ``Consensus(trace, reason)``."""

    status: str  # "Golden" | "Unverified" | "Failed" | "Consensus"
    reason: str = ""
    trace: GoldenTrace | None = None
    method: str | None = None  # the oracle that decided
    verdict: str | None = None  # the oracle's verdict (ExactMatch, ...), or "consensus"
    detail: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def Golden(cls, trace: GoldenTrace, **kw: Any) -> "OracleResult":  # noqa: N802 (the spec's names)
        return cls("Golden", trace=trace, **kw)

    @classmethod
    def Unverified(cls, reason: str, **kw: Any) -> "OracleResult":  # noqa: N802
        return cls("Unverified", reason=reason, **kw)

    @classmethod
    def Failed(cls, reason: str, trace: GoldenTrace, **kw: Any) -> "OracleResult":  # noqa: N802
        return cls("Failed", reason=reason, trace=trace, **kw)

    @classmethod
    def Consensus(cls, trace: GoldenTrace, reason: str = "", **kw: Any) -> "OracleResult":  # noqa: N802
        return cls("Consensus", reason=reason, trace=trace, **kw)

    @property
    def is_golden(self) -> bool:
        return self.status == "Golden"

    def review_record(self) -> dict[str, Any]:
        """The line a failed (or consensus) result writes to the review file."""
        return {"status": self.status, "reason": self.reason, "method": self.method, "verdict": self.verdict,
                "detail": self.detail, "trace": self.trace.to_dict() if self.trace else None}


def _reason(method: str, verdict: str, detail: dict[str, Any]) -> str:
    parts = [f"{method}: {verdict}"]
    if isinstance(detail.get("claimed"), int) and isinstance(detail.get("actual"), int):
        parts.append(f"claimed {detail['claimed']}, actual {detail['actual']}")
    for key in ("false_positives", "false_negatives"):
        items = detail.get(key) or []
        if items:
            shown = "; ".join(str(i) for i in items[:3]) + (f"; ... ({len(items)} in all)" if len(items) > 3 else "")
            parts.append(f"{key.replace('_', ' ')}: {shown}")
    if detail.get("note"):
        parts.append(detail["note"])
    return " — ".join(parts)


@dataclass
class ValidationStats:
    """Counts of a batch: per status, per oracle and per verdict; the golden and review records."""

    results: list[OracleResult] = field(default_factory=list)
    malformed: list[MalformedLine] = field(default_factory=list)

    def add(self, result: OracleResult) -> None:
        self.results.append(result)

    @property
    def total(self) -> int:
        return len(self.results)

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def by_status(self) -> dict[str, int]:
        return dict(Counter(r.status for r in self.results))

    @property
    def by_oracle(self) -> dict[str, dict[str, int]]:
        table: dict[str, Counter] = defaultdict(Counter)
        for r in self.results:
            table[r.method or "none"][r.status] += 1
        return {k: dict(v) for k, v in table.items()}

    @property
    def by_verdict(self) -> dict[str, int]:
        return dict(Counter(r.verdict for r in self.results if r.verdict))

    @property
    def unverified_reasons(self) -> dict[str, int]:
        """Why results were unverified, most common first."""
        return dict(Counter(r.reason for r in self.results if r.status == "Unverified").most_common())

    @property
    def golden(self) -> list[GoldenTrace]:
        return [r.trace for r in self.results if r.is_golden and r.trace is not None]

    def golden_rate(self) -> float:
        """Golden results over all validated results (malformed lines are not counted)."""
        return len(self.golden) / self.total if self.total else 0.0

    def write_jsonl(self, path: str | Path) -> int:
        """Write the golden traces (the spec's fields only), one per line; returns how many. Strict JSON."""
        return write_jsonl(path, [finite(t.to_dict()) for t in self.golden])

    def write_review_jsonl(self, path: str | Path, include_consensus: bool = True) -> int:
        """Write failed (and consensus) results with their reasons, for a person to review. Strict JSON."""
        wanted = {"Failed", "Consensus"} if include_consensus else {"Failed"}
        return write_jsonl(path, [finite(r.review_record()) for r in self.results if r.status in wanted])

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "golden_rate": round(self.golden_rate(), 4), "by_status": self.by_status,
                "by_oracle": self.by_oracle, "by_verdict": self.by_verdict, "malformed": len(self.malformed)}

    def __rich__(self) -> Any:
        from rich.table import Table

        table = Table(title=f"oracle validation: {self.total} traces, golden rate {self.golden_rate():.1%}")
        statuses = ["Golden", "Failed", "Unverified", "Consensus"]
        table.add_column("oracle")
        for s in statuses:
            table.add_column(s, justify="right")
        for method, counts in sorted(self.by_oracle.items()):
            table.add_row(method, *(str(counts.get(s, 0)) for s in statuses))
        table.add_row("[bold]all[/]", *(f"[bold]{self.count(s)}[/]" for s in statuses))
        if self.malformed:
            table.caption = f"{plural(len(self.malformed), 'malformed line')} skipped"
        return table


class ResultWriter:
    """Golden traces to ``out`` and failed (and consensus) results to ``review``, each written as it is decided: one
    line, flushed at once, so Ctrl-C or a kill keeps every record decided so far. Strict JSON (a NaN or infinite
    value is written as null). Both files are started afresh. Use as a context manager; pass :meth:`write` as
    ``batch_validate``'s ``progress``.
    """

    def __init__(self, out: str | Path, review: str | Path, include_consensus: bool = True):
        self.wanted = {"Failed", "Consensus"} if include_consensus else {"Failed"}
        self._golden = JsonlWriter(out)
        self._review = JsonlWriter(review)

    @property
    def golden(self) -> int:
        return self._golden.count

    @property
    def review(self) -> int:
        return self._review.count

    def write(self, result: OracleResult) -> None:
        if result.is_golden and result.trace is not None:
            self._golden.write(result.trace.to_dict())
        elif result.status in self.wanted:
            self._review.write(result.review_record())

    def close(self) -> None:
        self._golden.close()
        self._review.close()

    def __enter__(self) -> "ResultWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TraceValidator:
    """Validate FINAL answers against the source; see the module docstring for routing and sources."""

    def __init__(self, source_root: str | Path | None = None, *, use_cache: bool = True, lm: Any = None,
                 consistency: SelfConsistencyOracle | None = None, classifier: QueryClassifier = QUERY_RULES,
                 oracles: dict[QueryKind, OraclePlugin] | None = None, suffix: str = ".rs",
                 read_questions: bool = True):
        self.source_root = Path(source_root) if source_root is not None else None
        self.cache = ParseCache() if use_cache else None
        self._files: dict[tuple[str, int, int], str] = {}
        self._batch: dict[str | None, tuple[Sources, str | None]] | None = None  # resolve() memo during a batch
        self.consistency = consistency or (SelfConsistencyOracle(lm) if lm is not None else None)
        self.classifier, self.oracles, self.suffix = classifier, oracles or ORACLES, suffix
        # False: the classifier's rules alone route the question, as before the question reader (for comparisons)
        self.read_questions = read_questions

    # -- sources --------------------------------------------------------------------------------------

    def _read(self, path: Path) -> str:
        try:
            st = path.stat()
            key = (str(path), st.st_mtime_ns, st.st_size)
            if self.cache is not None and key in self._files:
                return self._files[key]
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SourceMissing(f"cannot read {path}: {exc}") from None
        if self.cache is not None:
            self._files[key] = text
        return text

    def resolve(self, source_path: str | None) -> tuple[Sources, str | None]:
        """(sources, the path to record) for a trace's source path; raises SourceMissing.

        Within ``batch_validate`` (with the cache on) a path is resolved once: its files are listed, stat'ed and
        read on first use, and later claims about it reuse them (sources are taken not to change during a batch).
        """
        if self._batch is not None and source_path in self._batch:
            return self._batch[source_path]
        found = self._resolve(source_path)
        if self._batch is not None:
            self._batch[source_path] = found
        return found

    def _resolve(self, source_path: str | None) -> tuple[Sources, str | None]:
        if source_path is None:
            if self.source_root is None:
                raise SourceMissing("the trace names no source_path and no source root was given")
            path = self.source_root
        else:
            path = Path(source_path)
            if not path.is_absolute() and self.source_root is not None:
                path = self.source_root / path
                if not path.resolve().is_relative_to(self.source_root.resolve()):
                    raise SourceMissing(f"source_path {source_path!r} points outside the source root "
                                        f"{self.source_root}; give a path below it")
        if path.is_file():
            return [(None, self._read(path))], source_path or str(path)
        if path.is_dir():
            files = sorted(p for p in path.rglob(f"*{self.suffix}") if p.is_file())
            if not files:
                raise SourceMissing(f"no *{self.suffix} files under {path}")
            return [(str(p.relative_to(path)), self._read(p)) for p in files], source_path or str(path)
        where = f" (source root {self.source_root})" if self.source_root is not None else ""
        raise SourceMissing(f"source not found: {source_path or path}{where}")

    # -- validation -----------------------------------------------------------------------------------

    def validate(self, analysis_result: Any, source: str | None = None,
                 source_path: str | None = None) -> OracleResult:
        """Validate one result (an :class:`AnalysisResult`, an executor Trajectory, or a dict)."""
        result = _as_result(analysis_result)
        source_path = source_path or result.source_path
        if result.answer is None or not result.answer.strip():
            return OracleResult.Unverified("no FINAL answer (the run ended without one)")
        try:
            sources, recorded_path = ([(None, source)], source_path) if source is not None else \
                self.resolve(source_path)
        except SourceMissing as exc:
            return OracleResult.Unverified(str(exc))
        trace_of = lambda method: GoldenTrace.of(result, method, recorded_path)  # noqa: E731
        empty = says_nothing(result.answer)
        if empty:
            return OracleResult.Failed(empty, trace_of("AnswerCheck"), method="AnswerCheck", verdict="Placeholder")
        parsed = [TreeSitterOracle(text, path, cache=self.cache) for path, text in sources] \
            if self.read_questions else None
        intent = read_question(result.query, parsed) if parsed is not None else None
        kind = self.classifier.classify(result.query, intent=intent).kind if intent is not None else \
            self.classifier.classify(result.query).kind
        if kind is QueryKind.Semantic:
            return self._semantic(result, sources, trace_of)
        if intent is not None and not intent.decided:
            return OracleResult.Unverified(f"the question reader is undecided: {intent.reason}",
                                           method="QuestionReader", detail={"intent": intent.to_dict()})
        if intent is not None and intent.kind in ("list", "count"):
            kind = _grep_or_facts(kind, intent, result.query, result.answer)
        return self._check(kind, result, sources, intent, parsed, trace_of)

    def _semantic(self, result: AnalysisResult, sources: Sources, trace_of: Callable[[str], GoldenTrace]
                  ) -> OracleResult:
        if self.consistency is None:
            return OracleResult.Unverified("semantic query: no deterministic oracle (pass an LM for "
                                           "self-consistency)")
        text = "\n\n".join(f"// {p}\n{t}" if p else t for p, t in sources)
        check = self.consistency.check(result.answer, result.query, text)
        if check.consensus:
            return OracleResult.Consensus(trace_of(self.consistency.name),
                                          f"{len(check.samples)} samples agree (lowest similarity "
                                          f"{check.agreement:.2f})", method=self.consistency.name,
                                          verdict="consensus", detail=check.to_dict())
        return OracleResult.Unverified(f"semantic query: no consensus (lowest similarity {check.agreement:.2f})",
                                       method=self.consistency.name, verdict="no-consensus", detail=check.to_dict())

    def _check(self, kind: QueryKind, result: AnalysisResult, sources: Sources, intent: Intent | None,
               parsed: list[TreeSitterOracle] | None, trace_of: Callable[[str], GoldenTrace]) -> OracleResult:
        if intent is not None and intent.files:  # the question names one file of the tree: check that file
            keep = [i for i, (path, _) in enumerate(sources) if path in intent.files]
            sources = [sources[i] for i in keep]
            parsed = [parsed[i] for i in keep] if parsed is not None else None
        plugin = self.oracles.get(kind)
        if plugin is None:
            return OracleResult.Unverified(f"no oracle for {kind.value} queries: {result.query!r}")
        try:
            if plugin.takes_intent:
                detailed = plugin.check(result.answer, result.query, sources, self.cache, intent, parsed)
            else:
                detailed = plugin.check(result.answer, result.query, sources, self.cache)
        except CannotVerify as exc:
            return OracleResult.Unverified(f"{plugin.name}: {exc}", method=plugin.name)
        if detailed is None:
            return OracleResult.Unverified(f"{plugin.name} cannot turn the query into a check: {result.query!r}",
                                           method=plugin.name)
        detail = detailed.to_dict()
        verdict = detailed.verdict.value
        if detailed.verdict in GOOD_VERDICTS:
            if claims_nothing(detail):
                return OracleResult.Unverified(f"{plugin.name}: the answer claims no items and the oracle finds "
                                               "none: nothing to verify", method=plugin.name, verdict=verdict,
                                               detail=detail)
            return OracleResult.Golden(trace_of(plugin.name), method=plugin.name, verdict=verdict, detail=detail)
        return OracleResult.Failed(_reason(plugin.name, verdict, detail), trace_of(plugin.name), method=plugin.name,
                                   verdict=verdict, detail=detail)

    def batch_validate(self, results: Iterable[Any], progress: Callable[[OracleResult], None] | None = None
                       ) -> ValidationStats:
        """Validate many results; a :class:`MalformedLine` in the input is counted and skipped.

        An item may be a result as for :meth:`validate`, or a tuple ``(result, source, source_path)``.
        """
        stats = ValidationStats()
        self._batch = {} if self.cache is not None else None
        try:
            for item in results:
                if isinstance(item, MalformedLine):
                    stats.malformed.append(item)
                    continue
                outcome = self.validate(*item) if isinstance(item, tuple) else self.validate(item)
                stats.add(outcome)
                if progress is not None:
                    progress(outcome)
        finally:
            self._batch = None
        return stats


def _as_result(value: Any) -> AnalysisResult:
    if isinstance(value, AnalysisResult):
        return value
    if isinstance(value, dict):
        return AnalysisResult.from_dict(value)
    if hasattr(value, "iterations") and hasattr(value, "run_id"):
        return AnalysisResult.from_trajectory(value)
    raise TypeError(f"analysis_result: expected an AnalysisResult, a Trajectory or a dict, got {type(value).__name__}")
