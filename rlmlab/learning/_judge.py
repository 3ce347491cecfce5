"""Judging policy of the ReasoningBank loop: label one trajectory success or failure, with a short rationale.

Deterministic judges first (seed 004, "Stable evaluation"): ``exact`` (normalised string equality),
``numeric`` (final number within a relative tolerance), ``sparql`` (result rows of the agent's query against
a reference query's, on the task's ontology) and ``code`` (the code oracles of :mod:`rlmlab.oracle`). The
``llm`` judge grades with a versioned rubric from :data:`RUBRICS` for tasks no check can decide.

A judge is built by name from :data:`JUDGES` (``JUDGES.make("numeric", rel_tol=1e-3)``) or for a task by
:func:`judge_for`. A judge never raises for a bad answer; it raises ConfigError for a broken task (no
ontology, a reference query that does not run, a source that does not exist), which no rollout can fix.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from rlmlab.errors import ConfigError
from rlmlab.numbers import final_number, format_number, normalise_text
from rlmlab.registry import Registry
from rlmlab.memory import MemoryTask, Verdict

if TYPE_CHECKING:  # rlmlab.executors imports rlmlab.tools, which imports rlmlab.memory
    from rlmlab.executors import Trajectory

__all__ = ["Judge", "JUDGES", "judge_for", "ExactJudge", "NumericJudge", "SparqlJudge", "CodeJudge", "SourceJudge",
           "strip_fences", "acceptable_values", "binary_verdict", "clip_quote", "no_answer_reason", "unjudged_verdict"]

JUDGES: Registry = Registry("judge")

UNVERIFIED_CONFIDENCE = 0.3  # code oracle could not decide: a failure label, but not one to learn much from
_QUOTE = 80  # characters of an answer or expected value quoted in a rationale


@runtime_checkable
class Judge(Protocol):
    """Labels one trajectory of an agent on a task; ``name`` is the judge's registry name."""

    name: str

    def judge(self, task: MemoryTask, trajectory: "Trajectory") -> Verdict: ...


def clip_quote(text: Any, n: int = _QUOTE) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def no_answer_reason(trajectory: "Trajectory", *, errors_fail: bool = True) -> str | None:
    """Why the trajectory has nothing to judge, or None when it has an answer."""
    if errors_fail and trajectory.error:
        return f"The run ended with an error ({clip_quote(trajectory.error)}), so its answer is not judged."
    if trajectory.answer is None or not str(trajectory.answer).strip():
        return "The run gave no answer" + (" (it did not SUBMIT)." if not trajectory.submitted else ".")
    return None


def binary_verdict(name: str, success: bool, rationale: str, confidence: float = 1.0) -> Verdict:
    return Verdict(success=success, score=1.0 if success else 0.0, rationale=rationale, judge=name,
                   confidence=confidence)


def acceptable_values(expected: Any) -> list[Any]:
    return list(expected) if isinstance(expected, (list, tuple)) else [expected]


def unjudged_verdict(name: str, task: MemoryTask, trajectory: "Trajectory") -> Verdict | None:
    """The failing verdict of a task with no expected answer (confidence 0) or a run with no answer; None when the
    answer can be compared."""
    if task.expected is None:
        return binary_verdict(name, False, f"Task {task.id} has no expected answer to compare with.", 0.0)
    why = no_answer_reason(trajectory)
    return binary_verdict(name, False, why) if why else None


# -- exact ------------------------------------------------------------------------------------------------

def _exact_match(answer: str, expected: Any) -> Any | None:
    """The first acceptable value the answer equals after normalisation, or None."""
    got = normalise_text(answer)
    return next((e for e in acceptable_values(expected) if normalise_text(e) == got), None)


@dataclass
class ExactJudge:
    """Normalised string equality of the answer with ``task.expected`` (a string or a list of acceptable ones)."""

    name: str = field(default="exact", init=False)

    def judge(self, task: MemoryTask, trajectory: "Trajectory") -> Verdict:
        unjudged = unjudged_verdict(self.name, task, trajectory)
        if unjudged is not None:
            return unjudged
        hit = _exact_match(trajectory.answer, task.expected)
        if hit is not None:
            return binary_verdict(self.name, True, f"The answer {clip_quote(trajectory.answer)!r} equals the expected "
                                            f"{clip_quote(hit)!r} after normalisation.")
        shown = " or ".join(repr(clip_quote(e, 40)) for e in acceptable_values(task.expected)[:3])
        return binary_verdict(self.name, False, f"The answer {clip_quote(trajectory.answer)!r} differs from the expected {shown}.")


# -- set --------------------------------------------------------------------------------------------------

_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")


def answer_items(answer: str) -> list[str]:
    """The items of a list answer: one per line, or, on a single line, separated by commas or semicolons outside
    brackets; bullets, numbering, backticks and surrounding quotes stripped, whitespace collapsed and dropped
    around colons."""
    lines = [ln for ln in str(answer).replace("`", "").splitlines() if ln.strip()]
    if len(lines) == 1:
        lines = _split_outside_brackets(lines[0])
    items = []
    for line in lines:
        item = _BULLET.sub("", line).strip().strip("'\"").rstrip(".;,").strip()
        item = re.sub(r"\s*:\s*", ":", " ".join(item.split()))  # "404: 17", "404:17" and "404 : 17" alike
        if item:
            items.append(item)
    return items


def _split_outside_brackets(line: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(line):
        depth += ch in "<([{"
        depth -= ch in ">)]}" and depth > 0
        if ch in ",;" and depth == 0:
            parts.append(line[start:i])
            start = i + 1
    return parts + [line[start:]]


@dataclass
class SetJudge:
    """The answer's items (see :func:`answer_items`) equal ``task.expected`` (a list) as a set."""

    name: str = field(default="set", init=False)

    def judge(self, task: MemoryTask, trajectory: "Trajectory") -> Verdict:
        if not isinstance(task.expected, (list, tuple)):
            return binary_verdict(self.name, False, f"Task {task.id} has no expected list to compare with.", 0.0)
        why = no_answer_reason(trajectory)
        if why:
            return binary_verdict(self.name, False, why)
        want = {x for e in task.expected for x in answer_items(str(e))}
        got = set(answer_items(trajectory.answer))
        if got == want:
            return binary_verdict(self.name, True, f"The answer's {len(got)} items are the expected ones.")
        missing, extra = sorted(want - got), sorted(got - want)
        return binary_verdict(self.name, False, f"The answer's items differ from the expected {len(want)}: "
                                         f"missing {clip_quote(missing, 80)}, extra {clip_quote(extra, 80)}.")


# -- numeric ----------------------------------------------------------------------------------------------

def _show(value: Fraction) -> str:
    return format_number(value)


def _numeric_match(answer: str, expected: Any, rel_tol: float) -> tuple[Fraction | None, Fraction | None]:
    """(the answer's number, the acceptable expected number it matches or None)."""
    got = final_number(answer)
    if got is None:
        return None, None
    for e in acceptable_values(expected):
        want = final_number(e)
        if want is not None and (got == want or abs(got - want) <= Fraction(rel_tol) * max(abs(got), abs(want))):
            return got, want
    return got, None


@dataclass
class NumericJudge:
    """The answer's final number equals ``task.expected`` within the relative tolerance ``rel_tol``."""

    rel_tol: float = 1e-6
    name: str = field(default="numeric", init=False)

    def __post_init__(self) -> None:
        if not 0.0 <= float(self.rel_tol) < 1.0:
            raise ConfigError(f"judge numeric: rel_tol {self.rel_tol!r} is outside [0, 1)")

    def judge(self, task: MemoryTask, trajectory: "Trajectory") -> Verdict:
        wants = [w for w in (final_number(e) for e in acceptable_values(task.expected)) if w is not None]
        if not wants:
            return binary_verdict(self.name, False, f"Task {task.id} has no numeric expected answer "
                                             f"({clip_quote(task.expected, 40)!r}).", 0.0)
        why = no_answer_reason(trajectory)
        if why:
            return binary_verdict(self.name, False, why)
        got, hit = _numeric_match(trajectory.answer, task.expected, self.rel_tol)
        if got is None:
            return binary_verdict(self.name, False, f"The answer {clip_quote(trajectory.answer)!r} holds no number.")
        if hit is not None:
            return binary_verdict(self.name, True, f"The answer's final number {_show(got)} equals the expected "
                                            f"{_show(hit)} (rel_tol {self.rel_tol:g}).")
        return binary_verdict(self.name, False, f"The answer's final number {_show(got)} differs from the expected "
                                         f"{' or '.join(_show(w) for w in wants[:3])}.")


def _agrees(answer: str, expected: Any) -> tuple[bool, str]:
    """Whether an answer agrees with an expected value: numerically for numbers, else as normalised text."""
    numeric = all(isinstance(e, (int, float)) and not isinstance(e, bool) or
                  isinstance(e, str) and re.fullmatch(r"\s*[-+−]?[$€£]?[\d,]*\.?\d+(?:/\d+)?\s*%?\s*", e)
                  for e in acceptable_values(expected))
    if numeric:
        got, hit = _numeric_match(answer, expected, 1e-6)
        return hit is not None, f"its final number {'none' if got is None else _show(got)}"
    return _exact_match(answer, expected) is not None, "its text"


# -- sparql -----------------------------------------------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*([\w-]*)[^\n]*\n(.*?)```", re.S)


def strip_fences(text: str) -> str:
    """The query inside a ```sparql fence (else the first fence of any language), or the text itself."""
    blocks = _FENCE.findall(text)
    for lang, body in blocks:
        if lang.lower() in ("sparql", "rq"):
            return body.strip()
    return blocks[0][1].strip() if blocks else text.strip().strip("`").strip()


@dataclass(frozen=True)
class _Rows:
    kind: str  # SELECT | ASK | CONSTRUCT | DESCRIBE
    width: int
    rows: Counter  # row tuple -> count
    capped: bool
    names: tuple[str, ...] = ()  # the SELECT variables, in column order
    named: bool = False  # the projection lists its variables (not SELECT *)


# SELECT * names no variables: its column order is rdflib's, not the author's.
_SELECT_STAR = re.compile(r"\bSELECT\s+(?:(?:DISTINCT|REDUCED)\s+)?\*", re.I)


def _run_query(graph: Any, query: str, max_rows: int) -> _Rows:
    result = graph.query(query)
    if result.type == "ASK":
        return _Rows("ASK", 1, Counter([(bool(result.askAnswer),)]), False)
    if result.type == "SELECT":
        names = tuple(str(v) for v in result.vars or [])
        taken = list(itertools.islice(iter(result), max_rows + 1))  # rdflib evaluates SELECT lazily
        return _Rows("SELECT", len(names), Counter(tuple(r) for r in taken[:max_rows]), len(taken) > max_rows,
                     names, not _SELECT_STAR.search(query))
    triples = list(itertools.islice(iter(result.graph or ()), max_rows + 1))
    return _Rows(result.type, 3, Counter(triples[:max_rows]), len(triples) > max_rows)


def _jaccard(a: Counter, b: Counter) -> float:
    union = sum((a | b).values())
    return 1.0 if not union else sum((a & b).values()) / union


def _reorder(rows: Counter, order: Sequence[int]) -> Counter:
    return Counter({tuple(row[i] for i in order): n for row, n in rows.items()})


def _best_columns(got: _Rows, want: _Rows) -> tuple[Counter, str]:
    """The agent's rows with its columns aligned to the reference's, and how ("" when left as they are).

    When the reference's projection names its variables, the columns mean those names: the agent's columns
    are aligned by name when it uses the same names, else compared in SELECT order; no other order is
    tried, because swapping two columns of a directional answer (domain, range) would pass the inverse
    property's answer. Only an unnamed reference (``SELECT *``) has its column order searched (up to 4).
    """
    if got.kind != "SELECT" or got.width < 2:
        return got.rows, ""
    if want.named:
        if set(got.names) == set(want.names) and got.names != want.names:
            return _reorder(got.rows, [got.names.index(n) for n in want.names]), "by name"
        return got.rows, ""
    if got.width > 4:
        return got.rows, ""
    best, best_score = got.rows, _jaccard(got.rows, want.rows)
    for order in itertools.permutations(range(got.width)):
        if best_score == 1.0:
            break
        moved = _reorder(got.rows, order)
        score = _jaccard(moved, want.rows)
        if score > best_score:
            best, best_score = moved, score
    return best, "by search" if best is not got.rows else ""


def _error_text(exc: Exception) -> str:
    detail = " ".join(str(getattr(exc, "msg", None) or exc).split())[:200]
    where = f" at line {exc.lineno}, column {exc.col}" if hasattr(exc, "lineno") and hasattr(exc, "col") else ""
    return f"{detail}{where}"


def _findings_note(query: str, graph: Any) -> str:
    """A sentence naming validate_sparql's findings (missing prefixes are left out: the graph supplies them)."""
    from rlmlab.ontology import validate_sparql

    found = [f for f in validate_sparql(query, graph) if f.kind not in ("syntax_error", "missing_prefix")]
    if not found:
        return ""
    shown = "; ".join(f"{f.kind}: {clip_quote(f.message, 120)}" for f in found[:2])
    more = f" (+{len(found) - 2} more)" if len(found) > 2 else ""
    return f" validate_sparql: {shown}{more}."


@dataclass
class SparqlJudge:
    """The agent's SPARQL query returns the same rows as the reference ``task.expected`` on ``meta["ontology"]``.

    Rows are compared as multisets of tuples, order-insensitive. When the reference's projection names its
    variables, an agent's query with the same names has its columns aligned by name, and one with other
    names is compared in SELECT order; only for ``SELECT *`` references is another column order tried (up to
    4 columns). A reference with no rows asks for an empty answer. score = multiset Jaccard; success = equality.
    At most ``max_rows`` rows of each query are compared; a capped comparison has confidence 0.5.
    """

    max_rows: int = 10_000
    name: str = field(default="sparql", init=False)
    _reference: dict[tuple[str, str], _Rows] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.max_rows, int) or self.max_rows < 1:
            raise ConfigError(f"judge sparql: max_rows {self.max_rows!r} must be a positive integer")

    def _graph(self, task: MemoryTask) -> Any:
        from rlmlab.ontology import load_ontology

        path = task.meta.get("ontology")
        if not path:
            raise ConfigError(f"task {task.id}: the sparql judge needs meta['ontology'] (a .ttl path)")
        return load_ontology(path)

    def _reference_rows(self, task: MemoryTask, graph: Any) -> _Rows:
        if not isinstance(task.expected, str) or not task.expected.strip():
            raise ConfigError(f"task {task.id}: the sparql judge needs expected = a reference SPARQL query")
        key = (str(task.meta["ontology"]), task.expected)
        if key not in self._reference:  # MaTTS judges many rollouts of one task: run the reference once
            try:
                self._reference[key] = _run_query(graph, strip_fences(task.expected), self.max_rows)
            except Exception as exc:  # pyparsing ParseException, rdflib's plain Exception for unknown prefixes
                raise ConfigError(f"task {task.id}: the reference query does not run: {_error_text(exc)}") from None
        return self._reference[key]

    def judge(self, task: MemoryTask, trajectory: "Trajectory") -> Verdict:
        graph = self._graph(task)
        want = self._reference_rows(task, graph)
        why = no_answer_reason(trajectory)
        if why:
            return binary_verdict(self.name, False, why)
        query = strip_fences(trajectory.answer)
        try:
            got = _run_query(graph, query, self.max_rows)
        except Exception as exc:
            return binary_verdict(self.name, False, f"The agent's query does not parse or run: {_error_text(exc)}.")
        notes = _findings_note(query, graph)
        if got.kind != want.kind or got.width != want.width:
            return binary_verdict(self.name, False, f"The agent's query is a {got.kind} of {got.width} column(s); the "
                                             f"reference is a {want.kind} of {want.width}.{notes}")
        rows, moved = _best_columns(got, want)
        score = _jaccard(rows, want.rows)
        success = rows == want.rows
        n_got, n_want, shared = sum(rows.values()), sum(want.rows.values()), sum((rows & want.rows).values())
        if success:
            text = f"The agent's query returns the same {n_want} row(s) as the reference"
        else:
            text = (f"The agent's query returns {n_got} row(s), the reference {n_want}; {shared} agree "
                    f"(Jaccard {score:.2f})")
        text += f" after aligning its columns {moved}." if moved else "."
        capped = got.capped or want.capped
        if capped:
            text += f" Only the first {self.max_rows} rows of each were compared (max_rows)."
        return Verdict(success=success, score=round(score, 4), rationale=text + notes, judge=self.name,
                       confidence=0.5 if capped else 1.0)


# -- code -------------------------------------------------------------------------------------------------

@dataclass
class SourceJudge:
    """A judge that reads the task's source, ``meta["source_path"]`` (a Rust file or a crate directory, relative to
    ``source_root`` if given), through one :class:`rlmlab.oracle.TraceValidator` of its own."""

    source_root: str | None = None
    name: str = field(default="source", init=False)  # each judge's own
    _validator: Any = field(default=None, init=False, repr=False, compare=False)

    def task_source(self, task: MemoryTask) -> tuple[str, Any]:
        """``meta["source_path"]`` and the validator's resolution of it; a ConfigError when the task names no
        source or the source is missing."""
        from rlmlab.oracle import SourceMissing, TraceValidator

        if self._validator is None:  # one validator per judge: its parse cache spans the rollouts of a task
            self._validator = TraceValidator(self.source_root)
        source_path = task.meta.get("source_path")
        if not source_path:
            raise ConfigError(f"task {task.id}: the {self.name} judge needs meta['source_path'] (a Rust file or "
                              f"crate)")
        try:
            return source_path, self._validator.resolve(source_path)
        except SourceMissing as exc:
            raise ConfigError(f"task {task.id}: {exc}") from None


@dataclass
class CodeJudge(SourceJudge):
    """The code oracles (:class:`rlmlab.oracle.TraceValidator`) verify the answer to ``task.query`` against
    ``meta["source_path"]`` (a Rust file or a crate directory, relative to ``source_root`` if given).

    Verified -> success; contradicted -> failure; cannot verify -> failure with confidence 0.3. With
    ``task.expected`` the answer must also agree with it (numerically for a number, else as normalised text).
    """

    name: str = field(default="code", init=False)

    def judge(self, task: MemoryTask, trajectory: "Trajectory") -> Verdict:
        from rlmlab.oracle import AnalysisResult

        source_path, _ = self.task_source(task)
        why = no_answer_reason(trajectory)
        if why:
            return binary_verdict(self.name, False, why)
        # the task's query, not the trajectory's: the agent may have been prompted with extra context
        outcome = self._validator.validate(AnalysisResult(task.query, trajectory.answer, source_path=source_path,
                                                          trace_id=trajectory.run_id))
        if outcome.status == "Golden":
            verdict = binary_verdict(self.name, True, f"{outcome.method} verified the answer ({outcome.verdict}).")
        elif outcome.status == "Failed":
            return binary_verdict(self.name, False, f"The oracle contradicts the answer: {clip_quote(outcome.reason, 240)}.")
        else:
            verdict = binary_verdict(self.name, False, f"The oracle could not decide: {clip_quote(outcome.reason, 200)}.",
                              UNVERIFIED_CONFIDENCE)
        if task.expected is None:
            return verdict
        agrees, what = _agrees(trajectory.answer, task.expected)
        if agrees:
            return Verdict(**{**verdict.to_dict(), "rationale": f"{verdict.rationale} It agrees with the expected "
                                                                  f"answer."})
        return binary_verdict(self.name, False, f"{verdict.rationale[:-1]}, but {what} does not agree with the expected "
                                         f"{clip_quote(task.expected, 40)!r}.", verdict.confidence)


# -- registry ---------------------------------------------------------------------------------------------

@JUDGES.register("exact")
def _exact() -> ExactJudge:
    """Normalised string equality with task.expected (a string or a list of acceptable strings)."""
    return ExactJudge()


@JUDGES.register("set")
def _set() -> SetJudge:
    """The answer's items (one per line, or comma-separated) equal task.expected (a list) as a set."""
    return SetJudge()


@JUDGES.register("numeric")
def _numeric(rel_tol: float = 1e-6) -> NumericJudge:
    """Final number of the answer equals task.expected within rel_tol."""
    return NumericJudge(rel_tol)


@JUDGES.register("sparql")
def _sparql(max_rows: int = 10_000) -> SparqlJudge:
    """Rows of the agent's SPARQL equal the reference query's on meta['ontology']."""
    return SparqlJudge(max_rows)


@JUDGES.register("code")
def _code(source_root: str | None = None) -> CodeJudge:
    """Code oracles verify the answer about meta['source_path'] (Rust)."""
    return CodeJudge(source_root)


def judge_for(task: MemoryTask, *, lm: Any = None, **options: Any) -> Judge:
    """The judge ``task.check`` names, built with ``options``; ``lm`` goes only to judges whose factory takes one.

    ConfigError for an unknown name (listing the registered ones) or bad options.
    """
    if lm is not None and JUDGES.accepts(task.check, "lm"):  # accepts: ConfigError for an unknown name
        options = {**options, "lm": lm}
    return JUDGES.make(task.check, **options)
