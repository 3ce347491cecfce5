"""InteractionLogView: the Turing Protocol's interaction log as a filterable table of validation rounds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import ipywidgets as W

from rlmlab.jupyter._widget import RLMLabWidget, esc, html_fields, html_table
from rlmlab.turing import INTERACTION_LOG_COLUMNS, PHASES, SCOPES, load_interaction_log

__all__ = ["InteractionLogView"]

_ANY = ""  # the dropdowns' value for "no filter" (ipywidgets treats a None value as "nothing selected")
_PRE = "white-space:pre-wrap;margin:2px 0;padding:4px;background:#f6f6f6;max-height:20em;overflow:auto"


def round_time(row: dict[str, Any]) -> str:
    """The round's ``ts`` (seconds since the epoch) as ``YYYY-MM-DD HH:MM:SS`` in UTC."""
    return datetime.fromtimestamp(row["ts"], timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def violation_hooks(row: dict[str, Any]) -> list[str]:
    """The hooks that confirmed a violation in this round (Stage 2), in the order logged."""
    return [v["hook"] for v in row["violations"]]


class InteractionLogView(RLMLabWidget):
    """Browse the rounds of a Turing Protocol interaction log and read one round's three stages.

    ``source`` is the log's SQLite file (FileNotFoundError if there is none; ``reload()`` re-reads it) or the
    rows themselves as ``load_interaction_log`` returns them (ValueError naming the row and the missing field
    otherwise). Filters: ``hook`` keeps rounds where that hook confirmed a violation (as ``rlmlab turing log
    --hook``), ``scope``, ``phase`` and ``session`` (the RLM run id) match exactly, ``only_violations``
    keeps rounds with a confirmed violation. The table shows the newest ``limit`` matching rounds, oldest first.
    """

    css_name = "rlmlab-turing-log"

    def __init__(self, source: str | Path | Sequence[dict[str, Any]], *, limit: int = 200):
        super().__init__()
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit: {limit!r} is not allowed; use an integer >= 1")
        self.limit = limit
        self.db_path: Path | None = None
        if isinstance(source, (str, Path)):
            self.db_path = Path(source)
            self.all_rounds = load_interaction_log(self.db_path)
        else:
            self.all_rounds = _checked_rows(source)
        self.filters: dict[str, str | None] = {"hook": None, "scope": None, "phase": None, "session": None}
        self.only_violations = False
        self.rounds: list[dict[str, Any]] = []
        self.matching = 0  # rounds the filters admit (``rounds`` holds the newest ``limit`` of them)
        self.selected: dict[str, Any] | None = None
        self._syncing = False
        self._build_view()
        self.refresh()

    # -- handlers ------------------------------------------------------------------------------------------

    def set_hook(self, hook: str | None) -> None:
        """Only rounds where ``hook`` confirmed a violation; None for any."""
        self.filters["hook"] = hook or None
        self.refresh()

    def set_scope(self, scope: str | None) -> None:
        """Only rounds of this scope ("main" or "sub_session"); None for any."""
        self._set_choice("scope", scope, SCOPES)

    def set_phase(self, phase: str | None) -> None:
        """Only rounds of this phase (one of PHASES); None for any."""
        self._set_choice("phase", phase, PHASES)

    def set_session(self, session: str | None) -> None:
        """Only rounds of this session (an RLM run id); None for any."""
        self.filters["session"] = session or None
        self.refresh()

    def set_only_violations(self, only: bool) -> None:
        """Keep only rounds with at least one confirmed violation."""
        self.only_violations = bool(only)
        self.refresh()

    def select(self, round_id: int | None) -> dict[str, Any] | None:
        """Show one round's detections, validations and correction (None clears); ValueError for an unknown id."""
        if round_id is None:
            self.selected = None
        else:
            found = [r for r in self.all_rounds if r["id"] == round_id]
            if not found:
                raise ValueError(f"round {round_id!r}: not in this log")
            self.selected = found[0]
        self.refresh()
        return self.selected

    def reload(self) -> None:
        """Re-read the log file (rounds written since); the selection is kept when its round is still there."""
        if self.db_path is not None:
            self.all_rounds = load_interaction_log(self.db_path)
            if self.selected is not None:
                self.selected = next((r for r in self.all_rounds if r["id"] == self.selected["id"]), None)
        self.refresh()

    def _set_choice(self, name: str, value: str | None, allowed: tuple[str, ...]) -> None:
        value = value or None
        if value is not None and value not in allowed:
            raise ValueError(f"{name}: {value!r} is not allowed; use None or one of {', '.join(allowed)}")
        self.filters[name] = value
        self.refresh()

    # -- state -----------------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Apply the filters to the loaded rounds and re-render the live view (``reload`` re-reads the file)."""
        f = self.filters
        kept = [r for r in self.all_rounds
                if (f["hook"] is None or f["hook"] in violation_hooks(r))
                and (f["scope"] is None or r["scope"] == f["scope"])
                and (f["phase"] is None or r["phase"] == f["phase"])
                and (f["session"] is None or r["session"] == f["session"])
                and (not self.only_violations or r["violations"])]
        self.matching = len(kept)
        self.rounds = kept[-self.limit:]
        self._render()

    # -- HTML (shared by the live view and the static form) -------------------------------------------------

    def header_html(self) -> str:
        """One line: where the log is, how many rounds, violations and corrections, and sessions."""
        rounds = self.all_rounds
        flagged = sum(1 for r in rounds if r["violations"])
        corrected = sum(1 for r in rounds if r["correction"])
        sessions = len({r["session"] for r in rounds})
        where = esc(self.db_path) if self.db_path is not None else "interaction log (rows)"
        return (f"<div style='margin-bottom:4px'><b>{where}</b>: {len(rounds)} rounds · {flagged} with confirmed "
                f"violations · {corrected} corrections injected · {sessions} sessions</div>")

    def summary_html(self) -> str:
        """How many rounds are shown, and under which filters."""
        filters = [f"{k}={v}" for k, v in self.filters.items() if v is not None]
        if self.only_violations:
            filters.append("only with violations")
        return (f"<div style='color:#555;margin:4px 0'>{len(self.rounds)} of {self.matching} matching rounds "
                f"({esc(', '.join(filters) or 'no filters')})</div>")

    def rounds_html(self) -> str:
        """The shown rounds as a table."""
        if not self.rounds:
            return "<p><i>no rounds match</i></p>"
        rows = [[r["id"], round_time(r), r["session"], r["turn_id"], r["phase"], r["scope"], ", ".join(r["hooks"]),
                 ", ".join(violation_hooks(r)) or "—", "yes" if r["correction"] else "no", f"{r['elapsed_ms']:.1f}"]
                for r in self.rounds]
        return html_table(["round", "time (UTC)", "session", "turn", "phase", "scope", "hooks checked",
                           "confirmed violations", "correction injected", "ms"], rows,
                          css_class="rlmlab-table rlmlab-turing-rounds")

    def details_html(self) -> str:
        """The selected round: the turn it saw, Stage 1 detections, Stage 2 validations, Stage 3 correction."""
        r = self.selected
        if r is None:
            return "<p><i>select a round to see its stages</i></p>"
        turn = r["input_context"] if isinstance(r["input_context"], dict) else {}
        calls = "; ".join(f"{c.get('name')}({_arguments(c.get('arguments'))})" for c in turn.get("tool_calls") or [])
        context = [("round", r["id"]), ("time (UTC)", round_time(r)), ("session", r["session"]),
                   ("turn", r["turn_id"]), ("phase", r["phase"]), ("scope", r["scope"]),
                   ("detector", r["detector"]), ("hooks checked", ", ".join(r["hooks"])),
                   ("tool calls", calls or "none"), ("objective", turn.get("objective")),
                   ("earlier steps", len(turn.get("history") or [])), ("elapsed", f"{r['elapsed_ms']:.1f} ms")]
        if r["violations"]:
            validations = html_table(["hook", "reason"], [[v["hook"], v["reason"]] for v in r["violations"]],
                                     css_class="rlmlab-table rlmlab-turing-violations")
        else:
            validations = "<p><i>no violation confirmed</i></p>"
        if r["correction"]:
            correction = f"<pre class='rlmlab-turing-correction' style='{_PRE}'>{esc(r['correction'])}</pre>"
        elif r["violations"]:
            correction = ("<p><i>none injected: each hook corrects once per turn, and these hooks had already "
                          "fired in this turn</i></p>")
        else:
            correction = "<p><i>none injected</i></p>"
        return (f"<div class='rlmlab-turing-round' data-round-id='{esc(r['id'])}'>"
                f"<h4 style='margin:6px 0 2px'>Round {esc(r['id'])}</h4>{html_fields(context, css_class='rlmlab-turing-fields')}"
                f"<h5 style='margin:6px 0 2px'>Reply checked</h5>"
                f"<pre style='{_PRE}'>{esc(turn.get('response', ''))}</pre>"
                f"<h5 style='margin:6px 0 2px'>Stage 1: detection ({esc(r['stage1_status'])})</h5>"
                f"<pre style='{_PRE}'>{esc(r['detection_output'])}</pre>"
                f"<h5 style='margin:6px 0 2px'>Stage 2: validation ({esc(r['stage2_status'])})</h5>{validations}"
                f"<h5 style='margin:6px 0 2px'>Stage 3: correction ({esc(r['stage3_status'])})</h5>{correction}</div>")

    def static_html(self) -> str:
        return self.header_html() + self.summary_html() + self.rounds_html() + self.details_html()

    # -- live view -------------------------------------------------------------------------------------------

    def _build_view(self) -> None:
        self.header = W.HTML()
        self.filter_menus = {name: W.Dropdown(description=name, layout=W.Layout(width="18em"),
                                              style={"description_width": "5em"})
                             for name in ("hook", "scope", "phase", "session")}
        self.violations_toggle = W.Checkbox(description="only with violations", indent=False)
        self.reload_button = W.Button(description="Reload", icon="refresh", layout=W.Layout(
            width="7em", display="" if self.db_path is not None else "none"))
        self.summary = W.HTML()
        self.rounds_list = W.Select(rows=12, layout=W.Layout(width="100%"))
        self.details = W.HTML()

        setters = {"hook": self.set_hook, "scope": self.set_scope, "phase": self.set_phase,
                   "session": self.set_session}
        for name, menu in self.filter_menus.items():
            menu.observe(lambda change, set_=setters[name]: self._on_control(set_, change["new"] or None),
                         names="value")
        self.violations_toggle.observe(lambda change: self._on_control(self.set_only_violations, change["new"]),
                                       names="value")
        self.reload_button.on_click(lambda _: self._on_control(self.reload))
        self.rounds_list.observe(lambda change: self._on_control(self.select, change["new"]), names="value")
        menus = list(self.filter_menus.values())
        self.view.children = [self.header, W.HBox(menus[:2]), W.HBox(menus[2:]),
                              W.HBox([self.violations_toggle, self.reload_button]),
                              self.summary, self.rounds_list, self.details]

    def _on_control(self, handler: Any, *args: Any) -> None:
        """Run a handler for a user change; changes made while re-rendering are not user changes."""
        if not self._syncing:
            handler(*args)

    def _menu_options(self, name: str) -> list[tuple[str, str]]:
        """Dropdown choices from what the log holds; hooks are labelled with their confirmed-violation count."""
        rounds = self.all_rounds
        if name == "hook":
            confirmed = Counter(h for r in rounds for h in set(violation_hooks(r)))
            names = sorted({h for r in rounds for h in r["hooks"]} | set(confirmed))
            options = [(f"{h} ({confirmed[h]})", h) for h in names]
        elif name == "session":
            options = [(s, s) for s in dict.fromkeys(r["session"] for r in rounds)]
        else:
            options = [(v, v) for v in (SCOPES if name == "scope" else PHASES)]
        current = self.filters[name]
        if current is not None and current not in [v for _, v in options]:
            options.append((current, current))  # set by hand, not (yet) in the log
        return [("any", _ANY)] + options

    def _render(self) -> None:
        self._syncing = True
        try:
            self.header.value = self.header_html()
            for name, menu in self.filter_menus.items():
                menu.options = self._menu_options(name)
                menu.value = self.filters[name] or _ANY
            self.violations_toggle.value = self.only_violations
            self.summary.value = self.summary_html()
            self.rounds_list.options = [(_round_label(r), r["id"]) for r in self.rounds]
            shown = self.selected is not None and any(r["id"] == self.selected["id"] for r in self.rounds)
            if shown:
                self.rounds_list.value = self.selected["id"]
            else:
                self.rounds_list.index = None
            self.details.value = self.details_html()
        finally:
            self._syncing = False

    def __repr__(self) -> str:
        return f"<InteractionLogView {len(self.rounds)} of {len(self.all_rounds)} rounds>"


def _checked_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows as given, after checking each has every interaction_log column (JSON columns decoded)."""
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence):
        raise TypeError(f"expected a log path or a list of rows, got {type(rows).__name__}")
    checked = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ValueError(f"row {i}: expected a dict as load_interaction_log returns, got {type(row).__name__}")
        missing = [c for c in INTERACTION_LOG_COLUMNS if c not in row and c != "errors"]  # errors: newer, optional
        if missing:
            raise ValueError(f"row {i}: field {missing[0]} missing; rows need {', '.join(INTERACTION_LOG_COLUMNS)}")
        for key in ("hooks", "violations"):
            if not isinstance(row[key], list):
                raise ValueError(f"row {i}: field {key}: expected a list (decoded JSON), got {type(row[key]).__name__}")
        checked.append(row)
    return checked


def _round_label(row: dict[str, Any]) -> str:
    fired = ", ".join(violation_hooks(row)) or "ok"
    corrected = " · corrected" if row["correction"] else ""
    return (f"#{row['id']} {round_time(row)} · {row['session']} turn {row['turn_id']} · {row['phase']} "
            f"{row['scope']} · {fired}{corrected}")


def _arguments(arguments: Any) -> str:
    if not isinstance(arguments, dict):
        return ""
    text = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return text if len(text) <= 120 else text[:117] + "..."
