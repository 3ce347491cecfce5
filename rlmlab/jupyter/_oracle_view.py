"""OracleView: a validated FINAL answer, claimed lines against actual lines, with its false positives and negatives.

The oracle results keep the false positives and negatives but not the full actual list, so the merged list is
rebuilt from them: claimed = the answer's claims (parsed as the oracle parsed them), actual = the claims that are
not false positives plus the false negatives. Precision and recall are not in the results either; they are
computed here from the marked rows, and only where the answer is a set of items (not for counts, signatures or
yes/no answers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ipywidgets as W

from rlmlab.jupyter._widget import RLMLabWidget, esc
# the oracle's own claim and count-query parsers, so the marks here agree with its verdict
from rlmlab.oracle import GOOD_VERDICTS, OracleResult, Verification, is_count_query, parse_claim, parse_claims

__all__ = ["ComparedItem", "OracleView", "compare_claims", "MATCH", "FALSE_POSITIVE", "FALSE_NEGATIVE", "PARTIAL"]

MATCH, FALSE_POSITIVE, FALSE_NEGATIVE, PARTIAL = "match", "false_positive", "false_negative", "partial"

# status -> (text marker, row background, what it means); the marker keeps the list readable without colour
MARKS = {
    MATCH: ("✓ match", "", "claimed and in the source"),
    FALSE_POSITIVE: ("✗ FP", "#fde2e1", "false positive: claimed, not in the source"),
    FALSE_NEGATIVE: ("○ FN", "#fff1c2", "false negative: in the source, not claimed"),
    PARTIAL: ("≈ partial", "#e8eefc", "claimed and partly right (see the FP/FN parts)"),
}
_SET_ASPECTS = ("fields", "parameters", "implementors", "traits_of")
_STATUS_COLOUR = {"Golden": "#1a7f37", "Failed": "#b42318", "Unverified": "#666", "Consensus": "#1f5fbf"}


@dataclass(frozen=True)
class ComparedItem:
    """One row of the merged list: a claim, an actual item, or both. ``line``/``path`` only for grep claims."""

    status: str  # MATCH | FALSE_POSITIVE | FALSE_NEGATIVE | PARTIAL
    text: str  # as claimed (match, false positive, partial) or as in the source (false negative)
    line: int | None = None
    path: str | None = None
    note: str = ""

    @property
    def claimed(self) -> bool:
        return self.status != FALSE_NEGATIVE

    @property
    def actual(self) -> bool:
        return self.status != FALSE_POSITIVE


def _grep_rows(detail: Mapping[str, Any], answer: str | None) -> list[ComparedItem]:
    fps = list(detail.get("false_positives") or [])
    rows = []
    if answer is not None:
        for claim in parse_claims(answer):  # prose around the claims is skipped, as the oracle skips it
            wrong = claim.raw in fps
            if wrong:
                fps.remove(claim.raw)
            rows.append(ComparedItem(FALSE_POSITIVE if wrong else MATCH, (claim.text or "").strip() or claim.raw,
                                     claim.line, claim.path))
    # false positives the answer does not show as a claim line (no answer given): listed as the oracle wrote them
    rows += [ComparedItem(FALSE_POSITIVE, fp) for fp in fps]
    for fn in detail.get("false_negatives") or []:
        missed = parse_claim(fn)
        rows.append(ComparedItem(FALSE_NEGATIVE, (missed.text or "").strip(), missed.line, missed.path)
                    if missed else ComparedItem(FALSE_NEGATIVE, fn))
    return sorted(rows, key=lambda r: (r.line is None, r.line or 0))


def _structural_rows(detail: Mapping[str, Any]) -> list[ComparedItem]:
    fps, expected = list(detail.get("false_positives") or []), set(detail.get("expected") or [])
    rows = []
    for claim in detail.get("claimed") or []:
        wrong = claim in fps
        if wrong:
            fps.remove(claim)
        rows.append(ComparedItem(FALSE_POSITIVE if wrong else MATCH, claim))
    # what is left names part of a claim (a signature's modifier), not a whole claimed item
    parts = [ComparedItem(FALSE_POSITIVE, fp, note="part of a claim") for fp in fps]
    parts += [ComparedItem(FALSE_NEGATIVE, fn, note="" if fn in expected else "part of the expected item")
              for fn in detail.get("false_negatives") or [] if fn not in expected]
    if parts:
        rows = [ComparedItem(PARTIAL, r.text) if r.status == MATCH else r for r in rows]
    rows += parts
    rows += [ComparedItem(FALSE_NEGATIVE, fn) for fn in detail.get("false_negatives") or [] if fn in expected]
    return rows


def compare_claims(detail: Mapping[str, Any], answer: str | None = None, query: str | None = None
                   ) -> list[ComparedItem]:
    """The merged claimed/actual list of a GrepResult or StructuralResult (as ``to_dict()`` or an OracleResult's
    ``detail``); empty for a count query, a consensus check or a result without detail."""
    if "pattern" in detail:
        return [] if query is not None and is_count_query(query) else _grep_rows(detail, answer)
    if "aspect" in detail:
        return _structural_rows(detail)
    return []


def _verdict_name(value: Any) -> str | None:
    return value.value if isinstance(value, Verification) else (None if value is None else str(value))


class OracleView(RLMLabWidget):
    """One validated answer: status, verdict, and the merged claimed/actual list with FP and FN marked.

    ``result``: an :class:`~rlmlab.oracle.OracleResult` (what ``TraceValidator.validate`` returns, golden or not),
    or an oracle's detailed result (``GrepResult``, ``StructuralResult``). ``answer`` and ``query`` default to the
    result's trace; a grep result without the answer lists only its false positives and negatives.
    """

    css_name = "rlmlab-oracle"
    FILTERS = {"all": None, "false positives": FALSE_POSITIVE, "false negatives": FALSE_NEGATIVE, "matches": MATCH}

    def __init__(self, result: Any, *, answer: str | None = None, query: str | None = None):
        super().__init__()
        self.result = result
        if isinstance(result, OracleResult):
            trace = result.trace
            self.status, self.method, self.reason = result.status, result.method, result.reason
            self.verdict = _verdict_name(result.verdict)
            self.detail: dict[str, Any] = dict(result.detail)
            answer = answer if answer is not None else (trace.answer if trace else None)
            query = query if query is not None else (trace.query if trace else None)
        elif hasattr(result, "to_dict") and hasattr(result, "verdict"):
            self.detail = result.to_dict()
            self.verdict = _verdict_name(result.verdict)
            self.status = None
            self.method = "GrepOracle" if "pattern" in self.detail else "TreeSitterOracle"
            self.reason = ""
        else:
            raise TypeError(f"result: expected an OracleResult, GrepResult or StructuralResult, "
                            f"got {type(result).__name__}")
        self.answer, self.query = answer, query
        self.rows = compare_claims(self.detail, answer, query)
        self.filter = W.ToggleButtons(options=list(self.FILTERS), value="all", tooltips=[
            "every row", "claimed, not in the source", "in the source, not claimed", "claimed and in the source"])
        self.filter.add_class("rlmlab-oracle-filter")
        self.filter.observe(lambda _: self.refresh(), names="value")
        self.summary = W.HTML()
        self.table = W.HTML()
        self.view.children = [self.summary, self.filter, self.table]
        self.refresh()

    # -- figures --------------------------------------------------------------------------------------------

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.rows)

    @property
    def is_set_answer(self) -> bool:
        """Whether the answer is a set of items (lines, fields, ...), where precision and recall mean something."""
        return bool(self.rows) and ("pattern" in self.detail or self.detail.get("aspect") in _SET_ASPECTS)

    @property
    def precision(self) -> float | None:
        """Matches over claims, in [0, 1]; None when not a set answer or nothing was claimed."""
        claimed = self.count(MATCH) + self.count(FALSE_POSITIVE)
        return self.count(MATCH) / claimed if self.is_set_answer and claimed else None

    @property
    def recall(self) -> float | None:
        """Matches over actual items, in [0, 1]; None when not a set answer or the source has none."""
        actual = self.count(MATCH) + self.count(FALSE_NEGATIVE)
        return self.count(MATCH) / actual if self.is_set_answer and actual else None

    # -- rendering ------------------------------------------------------------------------------------------

    def refresh(self) -> None:
        self.summary.value = self._summary_html()
        self.filter.layout.display = None if self.rows else "none"
        self.table.value = self._rows_html(self.FILTERS[self.filter.value])

    def _summary_html(self) -> str:
        good = self.verdict in {v.value for v in GOOD_VERDICTS}
        verdict = (f"<b style='color:{'#1a7f37' if good else '#b42318'}'>{esc(self.verdict)}</b>"
                   if self.verdict else "<i>no verdict</i>")
        status = (f"<b style='color:{_STATUS_COLOUR.get(self.status, '#333')}'>{esc(self.status)}</b> · "
                  if self.status else "")
        lines = [f"<div class='rlmlab-oracle-verdict'>{status}verdict: {verdict}"
                 f"{f' · oracle: {esc(self.method)}' if self.method else ''}</div>"]
        if self.query:
            lines.append(f"<div>query: {esc(self.query)}</div>")
        figures = []
        if isinstance(self.detail.get("claimed"), int):  # grep: counts of claimed and actual lines
            figures.append(f"claimed {self.detail['claimed']}, actual {self.detail.get('actual')}")
        if self.rows:
            figures.append(f"{self.count(FALSE_POSITIVE)} false positive(s), {self.count(FALSE_NEGATIVE)} "
                           f"false negative(s)")
        if self.precision is not None or self.recall is not None:
            fmt = lambda x: "—" if x is None else f"{x:.2f}"  # noqa: E731
            figures.append(f"precision {fmt(self.precision)}, recall {fmt(self.recall)}")
        if figures:
            lines.append(f"<div>{' · '.join(figures)}</div>")
        if self.detail.get("aspect") == "signature" and self.detail.get("expected"):
            lines.append("<div>expected: " + "; ".join(f"<code>{esc(s)}</code>" for s in self.detail["expected"])
                         + "</div>")
        if self.detail.get("note"):
            lines.append(f"<div>note: {esc(self.detail['note'])}</div>")
        if self.reason and (self.status != "Failed" or not self.rows):  # a failed reason repeats the rows
            lines.append(f"<div style='color:#555'>reason: {esc(self.reason)}</div>")
        if not self.rows and "pattern" in self.detail and self.query and is_count_query(self.query):
            lines.append("<div style='color:#555'>a count query: the answer is a number, no lines to list</div>")
        return "".join(lines)

    def _rows_html(self, only: str | None = None) -> str:
        if not self.rows:
            return ""
        grep = "pattern" in self.detail
        head = ["mark", "line", "claimed (answer)", "actual (source)"] if grep else \
            ["mark", "claimed (answer)", "actual (source)"]
        th = "".join(f"<th style='text-align:left;padding:2px 8px;border-bottom:1px solid #999'>{esc(h)}</th>"
                     for h in head)
        body = []
        for r in self.rows:
            if only is not None and r.status != only:
                continue
            mark, background, meaning = MARKS[r.status]
            text = f"<code>{esc(r.text)}</code>" + (f" <small>({esc(r.note)})</small>" if r.note else "")
            claimed = text if r.claimed else "<i>— not claimed</i>"
            actual = ({MATCH: "<i>= same</i>", PARTIAL: "<i>≈ partly</i>"}.get(r.status, text) if r.actual
                      else "<i>— not in source</i>")
            line = f"{esc(r.path) + ':' if r.path else ''}{r.line if r.line is not None else '—'}"
            where = [line] if grep else []
            cells = [f"<b style='white-space:nowrap'>{esc(mark)}</b>", *where, claimed, actual]
            tds = "".join(f"<td style='padding:2px 8px;vertical-align:top'>{c}</td>" for c in cells)
            body.append(f"<tr class='rlmlab-{r.status.replace('_', '-')}' title='{esc(meaning)}' "
                        f"style='background:{background or 'transparent'}'>{tds}</tr>")
        if not body:
            body.append(f"<tr><td colspan='{len(head)}' style='padding:2px 8px'><i>none</i></td></tr>")
        legend = " · ".join(f"<span style='background:{bg or 'transparent'};padding:0 4px'><b>{esc(m)}</b></span> "
                            f"{esc(meaning)}" for m, bg, meaning in MARKS.values())
        return (f"<table class='rlmlab-oracle-rows' style='border-collapse:collapse'><thead><tr>{th}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table><p><small>{legend}</small></p>")

    def static_html(self) -> str:
        """The summary and every row (the filter is a live-view control only)."""
        return self._summary_html() + self._rows_html()

    def __repr__(self) -> str:
        return f"<OracleView {self.status or ''} {self.verdict or 'no verdict'}>".replace("  ", " ")
