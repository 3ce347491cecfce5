"""The scorecard as a rich table (terminal), an HTML table (notebook) and one forest plot of the intervals."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["scorecard_table", "scorecard_html", "scorecard_markdown", "plot_scorecard", "VERDICT_STYLE"]

VERDICT_STYLE = {"holds": "green", "contradicted": "red", "cannot tell": "yellow", "not measured": "dim"}


def _cells(row: Any) -> list[str]:
    if row.verdict == "not measured":
        return [row.seed, row.name, _compared(row), "0", "", "", f"not measured: {row.reason}"]
    interval = f"[{row.ci_low:+.3f}, {row.ci_high:+.3f}]"
    said = row.verdict
    if row.verdict == "cannot tell":
        said += (f" (n={row.n_to_decide} would decide it)" if row.n_to_decide
                 else " (no effect observed: no n decides it)")
    note = _note(row)
    return [row.seed, row.name, _compared(row), str(row.n), f"{row.difference:+.3f}", interval,
            said + (f"; {note}" if note else "")]


def _note(row: Any) -> str:
    """What the verdict cannot show by itself: a protocol that never acted makes its two arms the same runs, so a
    "holds" there says the protocol did no harm by doing nothing."""
    extra = getattr(row, "extra", None) or {}
    if extra.get("break_even"):
        return str(extra["break_even"])
    if "corrections" in extra and not extra["corrections"]:
        fired = extra.get("firings") or 0
        return ("no hook fired and no correction was injected: the arms ran alike" if not fired
                else f"hooks fired {fired} times but no correction was injected")
    return ""


def _compared(row: Any) -> str:
    """The comparison, and the suite its arms ran on when a --suite replaced each config's own."""
    suite = getattr(row, "suite", None)
    return row.comparison + (f" (on {Path(suite).stem})" if suite else "")


HEADERS = ["seed", "claim", "comparison (a vs b)", "n", "a - b", "95% interval", "verdict"]


def scorecard_table(rows: Sequence[Any], title: str = "") -> Any:
    """A rich Table: one line per claim; the claim's sentence under its name, the verdict coloured."""
    from rich.table import Table

    table = Table(title=title or None, show_lines=True)
    for h in HEADERS:
        table.add_column(h, overflow="fold", justify="right" if h in ("n", "a - b") else "left")
    for row in rows:
        cells = _cells(row)
        cells[1] = f"{row.name}\n[dim]{'“' + row.claim + '”' if row.quoted else row.claim}[/dim]"
        if row.metric != "pass rate":
            cells[2] += f" [dim]({row.metric})[/dim]"
        cells[-1] = f"[{VERDICT_STYLE.get(row.verdict, 'white')}]{cells[-1]}[/]"
        table.add_row(*cells)
    return table


def scorecard_html(rows: Sequence[Any]) -> str:
    """The same table as HTML (a notebook's display)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADERS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in _cells(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def scorecard_markdown(rows: Sequence[Any]) -> str:
    """The same table as Markdown, with each row's arms' pass rates (or metric means), the commit that measured it
    and the date: rows measured in parts stay traceable."""
    head = ["seed", "claim", "comparison (a vs b)", "n", "a / b", "a - b [95% interval]", "verdict", "measured"]

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = _cells(row)
        means = (f"{row.mean_a:.2f} / {row.mean_b:.2f}" if row.mean_a is not None and row.mean_b is not None
                 else "")
        diff = f"{cells[4]} {cells[5]}".strip()
        comparison = _compared(row) + ("" if row.metric == "pass rate" else f" ({row.metric})")
        when = " ".join(x for x in (row.commit or "", (row.finished or "")[:10]) if x)
        lines.append("| " + " | ".join(cell(c) for c in (row.seed, row.name, comparison, cells[3], means, diff,
                                                         cells[6], when)) + " |")
    return "\n".join(lines) + "\n"


def plot_scorecard(rows: Sequence[Any], save_to: str | Path | None = None) -> Any:
    """A forest plot: each measured claim's difference (a - b) with its 95% interval, coloured by verdict, and 0
    marked. Rows not measured are listed on the y axis without a point. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    colours = {"holds": "tab:green", "contradicted": "tab:red", "cannot tell": "tab:orange"}
    fig, ax = plt.subplots(figsize=(8, 0.4 * max(3, len(rows)) + 1))
    for y, row in enumerate(reversed(list(rows))):
        if row.verdict == "not measured":
            ax.text(0, y, "not measured", ha="center", va="center", fontsize=8, color="grey")
            continue
        ax.errorbar(row.difference, y, xerr=[[row.difference - row.ci_low], [row.ci_high - row.difference]],
                    fmt="o", color=colours.get(row.verdict, "black"), capsize=3)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [f"{r.name} (n={r.n})" for r in reversed(list(rows))], fontsize=8)
    ax.set_xlabel("difference a - b (pass rate, or the row's metric), 95% interval")
    ax.set_title("Seed claims: paired effect and interval", fontsize=10)
    fig.tight_layout()
    if save_to is not None:
        fig.savefig(save_to, dpi=120)
    return fig
