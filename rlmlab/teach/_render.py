"""Teacher-learner traces and run summaries as tables: rich in the terminal, HTML in a notebook."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich import box
from rich.table import Table

if TYPE_CHECKING:
    from rlmlab.teach._loop import ArmSummary
    from rlmlab.teach._traces import ItemTrace

__all__ = ["trace_table", "trace_html", "summary_table", "summary_html", "TURN_COLUMNS", "SUMMARY_COLUMNS",
           "TURN_CAPTION", "SUMMARY_CAPTION"]

TURN_COLUMNS = ("#", "answer", "self", "bias", "teacher", "template", "ok")
TURN_CAPTION = "self / teacher: the learner's and the teacher's confidence; template: the reprompt sent after it"
SUMMARY_COLUMNS = ("mode", "arm", "accuracy", "r→w", "w→r", "turns", "tokens", "Turing")
SUMMARY_CAPTION = ("r→w: items whose first answer was right and final answer wrong; w→r: the reverse; "
                   "turns: answers per item; Turing: corrections injected into learner turns")


def _short(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _turn_cells(trace: "ItemTrace") -> list[tuple[str, ...]]:
    return [(str(i), _short(t.answer), f"{t.self_conf:.2f}", t.teacher_bias, f"{t.teacher_conf:.2f}",
             t.template or "—", "✓" if t.accuracy else "✗") for i, t in enumerate(trace.turns, 1)]


def _title(trace: "ItemTrace") -> str:
    stop = f", stop: {trace.stop_reason}" if trace.stop_reason else ""
    return (f"{trace.qid}: {_short(trace.question, 100)} (reference {trace.reference}; "
            f"final {'right' if trace.final_accuracy else 'wrong'}{stop})")


def trace_table(trace: "ItemTrace") -> Table:
    """One item's turns, one row per learner answer: what the teacher judged and which template it sent."""
    table = Table(title=_title(trace), title_justify="left", box=box.SIMPLE_HEAD)
    for col in TURN_COLUMNS:
        table.add_column(col, overflow="fold", justify="right" if col in ("#", "self", "teacher") else "left",
                         no_wrap=col == "bias", min_width=24 if col == "answer" else None)
    for row in _turn_cells(trace):
        table.add_row(*row, style=None if row[-1] == "✓" else "red")
    return table


def _html_table(caption: str, columns: Sequence[str], rows: Sequence[Sequence[str]], css_class: str) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>" for row in rows)
    return (f'<table class="{css_class}"><caption style="text-align:left">{html.escape(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def trace_html(trace: "ItemTrace") -> str:
    return (_html_table(_title(trace), TURN_COLUMNS, _turn_cells(trace), "rlmlab-teach-trace")
            + f"<p><small>{html.escape(TURN_CAPTION)}</small></p>")


def _summary_cells(rows: Sequence["ArmSummary"]) -> list[tuple[str, ...]]:
    return [(r.mode, r.arm, f"{r.accuracy:.1%}", str(r.right_to_wrong), str(r.wrong_to_right),
             f"{r.avg_turns:.2f}", f"{r.tokens:,}", str(r.corrections)) for r in rows]


def summary_table(rows: Sequence["ArmSummary"], title: str = "teacher-learner run") -> Table:
    """The run's table: per mode, the single-pass, try-again and bias-aware RTS arms side by side."""
    table = Table(title=title, title_justify="left", caption=SUMMARY_CAPTION, caption_justify="left",
                  box=box.SIMPLE_HEAD)
    for col in SUMMARY_COLUMNS:
        table.add_column(col, justify="left" if col in ("mode", "arm") else "right", no_wrap=col in ("mode", "arm"))
    cells = _summary_cells(rows)
    for i, row in enumerate(cells):
        last_of_mode = i + 1 < len(cells) and cells[i + 1][0] != row[0]
        table.add_row(*row, end_section=last_of_mode)
    return table


def summary_html(rows: Sequence["ArmSummary"], title: str = "teacher-learner run") -> str:
    return (_html_table(title, SUMMARY_COLUMNS, _summary_cells(rows), "rlmlab-teach-summary")
            + f"<p><small>{html.escape(SUMMARY_CAPTION)}</small></p>")
