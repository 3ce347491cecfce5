"""MemoryBrowser: search, filter and inspect the items of a memory bank (a MemoryStore's SQLite file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ipywidgets as W

from rlmlab.jupyter._widget import RLMLabWidget, esc, html_fields, html_table
from rlmlab.memory import LAYERS, POLARITIES, STATUSES, MemoryItem, MemoryStore, admission_summary
from rlmlab.learning import memory_health

__all__ = ["MemoryBrowser"]

# The item filters the browser offers, in the order of its dropdowns (a subset of the store's FILTERS).
FILTER_NAMES = ("polarity", "layer", "domain", "status")
_ANY = ""  # the dropdowns' value for "no filter" (ipywidgets treats a None value as "nothing selected")
_PRE = "white-space:pre-wrap;margin:2px 0;padding:4px;background:#f6f6f6;max-height:24em;overflow:auto"


def win_rate(item: MemoryItem) -> float | None:
    """wins / uses in [0, 1]; None for an item never judged (uses 0)."""
    return item.wins / item.uses if item.uses else None


def _percent(rate: float | None) -> str:
    return "—" if rate is None else f"{rate:.0%}"


class MemoryBrowser(RLMLabWidget):
    """Search a memory bank with the store's own FTS5 ranking, filter it, and read one item in full.

    ``source`` is a :class:`MemoryStore` or the path of its SQLite file (FileNotFoundError if there is no
    file: the browser never creates a bank). An empty query lists the matching items, most used first;
    a query returns the store's top ``limit`` hits, best first. Filters start at ``status="active"``;
    None means "any". The handlers (``search``, ``select``, ``set_*``) re-read the store, so a bank that
    grows during a run shows its new items on the next call or ``refresh()``.
    """

    css_name = "rlmlab-memory"

    def __init__(self, source: MemoryStore | str | Path, *, limit: int = 50):
        super().__init__()
        if isinstance(source, MemoryStore):
            self.store, self._owns_store = source, False
        else:
            if str(source) != ":memory:" and not Path(source).is_file():
                raise FileNotFoundError(f"{source}: no memory bank here (a MemoryStore SQLite file)")
            self.store, self._owns_store = MemoryStore(source), True
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit: {limit!r} is not allowed; use an integer >= 1")
        self.limit = limit
        self.query = ""
        self.filters: dict[str, str | None] = {"polarity": None, "layer": None, "domain": None, "status": "active"}
        self.results: list[MemoryItem] = []
        self.scores: dict[str, float] = {}  # item id -> store search score (higher is better); empty for a listing
        self.matching = 0  # items the filters admit when listing (the results are the first ``limit``)
        self.selected: MemoryItem | None = None
        self.selected_usage: list[dict[str, Any]] = []
        self.health: dict[str, Any] = {}
        self.domains: list[str] = []
        self._syncing = False
        self._build_view()
        self.refresh()

    # -- handlers ------------------------------------------------------------------------------------------

    def search(self, query: str) -> list[MemoryItem]:
        """Run ``query`` (free text; "" lists items) with the current filters; returns the results."""
        self.query = (query or "").strip()
        self.refresh()
        self._drop_hidden_selection()
        return self.results

    def select(self, item_id: str | None) -> MemoryItem | None:
        """Show one item's full record and usage (None clears); MemoryStoreError for an unknown id."""
        self.selected = self.store.get(item_id) if item_id else None
        self.refresh()
        return self.selected

    def set_polarity(self, polarity: str | None) -> None:
        """Only items of this polarity (one of POLARITIES); None for any."""
        self._set_filter("polarity", polarity, POLARITIES)

    def set_layer(self, layer: str | None) -> None:
        """Only items of this layer (one of LAYERS); None for any."""
        self._set_filter("layer", layer, LAYERS)

    def set_domain(self, domain: str | None) -> None:
        """Only items of this domain (exact id); None for any, including items with no domain."""
        self._set_filter("domain", domain, None)

    def set_status(self, status: str | None) -> None:
        """Only items with this status (one of STATUSES; "active" at start); None for every status."""
        self._set_filter("status", status, STATUSES)

    def open_superseding(self) -> MemoryItem | None:
        """Select the item that superseded the selected one (no change when there is none)."""
        if self.selected is not None and self.selected.superseded_by:
            return self.select(self.selected.superseded_by)
        return self.selected

    def close(self) -> None:
        """Close the store if the browser opened it from a path."""
        if self._owns_store:
            self.store.close()

    def _set_filter(self, name: str, value: str | None, allowed: tuple[str, ...] | None) -> None:
        value = value or None
        if value is not None and allowed is not None and value not in allowed:
            raise ValueError(f"{name}: {value!r} is not allowed; use None or one of {', '.join(allowed)}")
        self.filters[name] = value
        self.refresh()
        self._drop_hidden_selection()

    def _drop_hidden_selection(self) -> None:
        """After a search or a filter that lists nothing, the selected record goes too: a record under "no
        results" reads as a hit. (A search that lists other items keeps it, so a second search does not lose
        the item being read.)"""
        if self.selected is not None and not self.results:
            self.selected, self.selected_usage = None, []
            self._render()
            self.sync_static()

    # -- state -----------------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read the store (header, results, selected record) and re-render the live view."""
        self.health = memory_health(self.store)
        self.domains = self.store.distinct("domain")
        given = dict(self.filters)
        if self.query:
            hits = self.store.search(self.query, k=self.limit, **given)
            self.results = self.store.get_many([h.id for h in hits])
            self.scores = {h.id: h.score for h in hits}
            self.matching = len(hits)
        else:
            listed = sorted(self.store.items(**given), key=lambda it: (-it.uses, -it.wins, it.title.lower(), it.id))
            self.results, self.scores, self.matching = listed[:self.limit], {}, len(listed)
        if self.selected is not None:
            self.selected = self.store.get(self.selected.id)
            self.selected_usage = [u for u in self.store.usage() if u["item_id"] == self.selected.id]
        else:
            self.selected_usage = []
        self._render()

    # -- HTML (shared by the live view and the static form) -------------------------------------------------

    def header_html(self) -> str:
        """One line: the bank's size by status and active polarity, usage and pooled win rate."""
        h = self.health
        by_status = h.get("by_status", {})
        total = sum(by_status.values())
        polarity = ", ".join(f"{p} {n}" for p, n in h.get("active_by_polarity", {}).items())
        others = " · ".join(f"{s} {by_status.get(s, 0)}" for s in STATUSES if s != "active")
        never = h.get("uses", {}).get("never_used")
        return (f"<div style='margin-bottom:4px'><b>{esc(self.store.path)}</b>: {total} items · "
                f"active {h.get('active', 0)} ({esc(polarity)}) · {esc(others)} · "
                f"pooled win rate {_percent(h.get('pooled_win_rate'))} · "
                f"never used {_percent(never)}</div>")

    def summary_html(self) -> str:
        """What the results are: the query or listing, the filters, and how many were found."""
        filters = ", ".join(f"{k}={v}" for k, v in self.filters.items() if v is not None) or "no filters"
        if self.query:
            what = f"top {len(self.results)} matches for <b>{esc(self.query)}</b>"
        else:
            what = f"{len(self.results)} of {self.matching} items, most used first"
        return f"<div style='color:#555;margin:4px 0'>{what} ({esc(filters)})</div>"

    def results_html(self) -> str:
        """The results as a table (title, polarity, wins/uses, win rate, ...)."""
        if not self.results:
            return "<p><i>no items match</i></p>"
        header = ["title", "polarity", "layer", "domain", "status", "wins/uses", "win rate", "id"]
        rows = [[it.title, it.polarity, it.layer, it.domain, it.status, f"{it.wins}/{it.uses}",
                 _percent(win_rate(it)), it.id] for it in self.results]
        if self.scores:
            header.append("score")
            for row, it in zip(rows, self.results):
                row.append(f"{self.scores[it.id]:.2f}")
        return html_table(header, rows, css_class="rlmlab-table rlmlab-memory-results")

    def record_html(self) -> str:
        """The selected item's full record: text, classification, counters, provenance, usage rows."""
        it = self.selected
        if it is None:
            return "<p><i>select an item to see its record</i></p>"
        fields = [("id", it.id), ("polarity", it.polarity), ("role", it.role), ("scope", it.scope),
                  ("layer", it.layer), ("tags", ", ".join(it.tags) or None),
                  ("uses / wins", f"{it.uses} / {it.wins}"), ("win rate", _percent(win_rate(it))),
                  ("admission", admission_summary(it))]
        provenance = [("run id", it.run_id), ("trajectory id", it.trajectory_id), ("domain", it.domain),
                      ("source", it.source), ("created at", it.created_at), ("updated at", it.updated_at),
                      ("status", it.status), ("superseded by", it.superseded_by)]
        usage = html_table(["trajectory id", "run id", "retrieved at", "outcome"],
                           [[u["trajectory_id"], u["run_id"], u["retrieved_at"], u["outcome"] or "not judged"]
                            for u in self.selected_usage], css_class="rlmlab-table rlmlab-memory-usage") \
            if self.selected_usage else "<p><i>never retrieved</i></p>"
        return (f"<div class='rlmlab-memory-record' data-item-id='{esc(it.id)}'>"
                f"<h4 style='margin:6px 0 2px'>{esc(it.title)}</h4>"
                f"<div style='color:#555'>{esc(it.description)}</div>"
                f"<pre style='{_PRE}'>{esc(it.content)}</pre>"
                + (f"<h5 style='margin:6px 0 2px'>Template</h5><pre style='{_PRE}'>{esc(it.template)}</pre>"
                   if it.template else "")
                + f"{html_fields(fields, css_class='rlmlab-memory-fields')}"
                f"<h5 style='margin:6px 0 2px'>Provenance</h5>{html_fields(provenance, css_class='rlmlab-memory-provenance')}"
                f"<h5 style='margin:6px 0 2px'>Usage ({len(self.selected_usage)})</h5>{usage}</div>")

    def static_html(self) -> str:
        return self.header_html() + self.summary_html() + self.results_html() + self.record_html()

    # -- live view -------------------------------------------------------------------------------------------

    def _build_view(self) -> None:
        self.header = W.HTML()
        self.query_box = W.Text(placeholder="search title, description, content, tags", continuous_update=False,
                                layout=W.Layout(width="24em"))
        self.search_button = W.Button(description="Search", icon="search", layout=W.Layout(width="7em"))
        self.filter_menus = {
            "polarity": W.Dropdown(description="polarity"),
            "layer": W.Dropdown(description="layer"),
            "domain": W.Dropdown(description="domain"),
            "status": W.Dropdown(description="status"),
        }
        for menu in self.filter_menus.values():
            menu.layout = W.Layout(width="14em")
            menu.style = {"description_width": "5em"}
        self.summary = W.HTML()
        self.results_list = W.Select(rows=10, layout=W.Layout(width="100%"))
        self.superseding_button = W.Button(description="Open superseding item", layout=W.Layout(display="none"))
        self.record = W.HTML()

        self.query_box.observe(lambda change: self._on_control(self.search, change["new"]), names="value")
        self.search_button.on_click(lambda _: self._on_control(self.search, self.query_box.value))
        setters = {"polarity": self.set_polarity, "layer": self.set_layer, "domain": self.set_domain,
                   "status": self.set_status}
        for name, menu in self.filter_menus.items():
            menu.observe(lambda change, set_=setters[name]: self._on_control(set_, change["new"] or None),
                         names="value")
        self.results_list.observe(lambda change: self._on_control(self.select, change["new"]), names="value")
        self.superseding_button.on_click(lambda _: self._on_control(self.open_superseding))
        self.view.children = [
            self.header,
            W.HBox([self.query_box, self.search_button]),
            W.HBox(list(self.filter_menus.values())),
            self.summary, self.results_list, self.superseding_button, self.record,
        ]

    def _on_control(self, handler: Any, *args: Any) -> None:
        """Run a handler for a user change; changes made while re-rendering are not user changes."""
        if not self._syncing:
            handler(*args)

    def _render(self) -> None:
        choices = {"polarity": POLARITIES, "layer": LAYERS, "domain": tuple(self.domains), "status": STATUSES}
        self._syncing = True
        try:
            self.header.value = self.header_html()
            self.query_box.value = self.query
            for name, menu in self.filter_menus.items():
                values = list(choices[name])
                current = self.filters[name]
                if current is not None and current not in values:
                    values.append(current)  # a domain set by hand that the bank does not hold (yet)
                menu.options = [("any", _ANY)] + [(v, v) for v in values]
                menu.value = current or _ANY
            self.summary.value = self.summary_html()
            self.results_list.options = [(_result_label(it, self.scores.get(it.id)), it.id) for it in self.results]
            in_list = self.selected is not None and any(it.id == self.selected.id for it in self.results)
            if in_list:
                self.results_list.value = self.selected.id
            else:
                self.results_list.index = None
            self.superseding_button.layout.display = (
                "" if self.selected is not None and self.selected.superseded_by else "none")
            self.record.value = self.record_html()
        finally:
            self._syncing = False

    def __repr__(self) -> str:
        return f"<MemoryBrowser {self.store.path!r}: {len(self.results)} results>"


def _result_label(item: MemoryItem, score: float | None) -> str:
    mark = "+" if item.polarity == "success" else "−"
    extra = f" · score {score:.2f}" if score is not None else ""
    status = "" if item.status == "active" else f" [{item.status}]"
    return (f"{mark} {item.title}{status} · {item.polarity} · wins {item.wins}/uses {item.uses} · "
            f"win rate {_percent(win_rate(item))}{extra}")
