"""MemoryBrowser and InteractionLogView driven through their handlers and controls, on real SQLite files."""

import html
import re
from pathlib import Path

import pytest

from rlmlab.jupyter._log_view import InteractionLogView
from rlmlab.jupyter._memory_browser import MemoryBrowser
from rlmlab.memory import MemoryItem, MemoryStore, MemoryStoreError, import_pack, read_pack
from rlmlab.turing import Step, ToolCall, TuringProtocol, Turn, load_interaction_log

PACK = Path(__file__).resolve().parents[1] / "data" / "packs" / "rlm_procedures.jsonl"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def fields_of(html_text, css_class):
    """The (name, value) rows of the key/value table with this CSS class, unescaped."""
    table = html_text.split(f"class='{css_class}'", 1)[1].split("</table>", 1)[0]
    return {html.unescape(k): html.unescape(v) for k, v in re.findall(r"<th[^>]*>(.*?)</th><td[^>]*>(.*?)</td>", table)}


# -- memory bank ------------------------------------------------------------------------------------------

ARITHMETIC = MemoryItem(
    title="Check the arithmetic with Python", description="Do sums and percentages in code, not in prose",
    content="Compute totals and percentages in the interpreter and print the result before answering.",
    polarity="success", role="solver", tags=["arithmetic"])
ROUNDING = MemoryItem(
    title="Rounding the final number too early", description="Intermediate rounding changes the answer",
    content="Rounding a percentage before multiplying gave an answer off by one.", polarity="failure",
    role="solver", tags=["arithmetic", "rounding"])


@pytest.fixture
def bank(tmp_path):
    """A bank file: the real rlm_procedures pack plus two learned items with judged usage, one pack item
    superseded by a learned one. Returns (path, pack items, a superseded pack item's id)."""
    path = tmp_path / "memory.main.sqlite"
    pack = read_pack(PACK)
    with MemoryStore(path, run_id="run-7", trajectory_id="traj-a", domain="math") as store:
        assert len(import_pack(store, PACK).added) == len(pack)
        store.add_many([ARITHMETIC, ROUNDING])  # provenance from the binding
        store.record_usage([ARITHMETIC.id, ROUNDING.id], trajectory_id="traj-a")
        store.record_outcome("traj-a", False)
        store.record_usage([ARITHMETIC.id], trajectory_id="traj-b", run_id="run-8")
        store.record_outcome("traj-b", True)
        old = pack[0].id
        store.set_status([old], "superseded", superseded_by=ARITHMETIC.id)
    return path, pack, old


def test_memory_header_counts_the_bank_by_status_and_polarity(bank):
    path, pack, _ = bank
    browser = MemoryBrowser(str(path))
    active = [it for it in pack[1:]] + [ARITHMETIC, ROUNDING]
    n_success = sum(it.polarity == "success" for it in active)
    header = browser.header_html()
    assert f"{len(pack) + 2} items" in header
    assert f"active {len(active)} (success {n_success}, failure {len(active) - n_success})" in header
    assert "superseded 1" in header and "forgotten 0" in header
    assert "pooled win rate 33%" in header  # 1 win over 3 judged uses
    browser.close()


def test_memory_listing_and_search_use_the_store(bank):
    path, pack, old = bank
    browser = MemoryBrowser(path)
    # An empty query lists active items, most used first.
    assert len(browser.results) == len(pack) + 1 and old not in {it.id for it in browser.results}
    assert [it.id for it in browser.results[:2]] == [ARITHMETIC.id, ROUNDING.id]
    found = browser.search("  tool error recovery ")
    with MemoryStore(path) as store:
        expected = [h.id for h in store.search("tool error recovery", k=50)]
    assert [it.id for it in found] == expected and expected  # the store's own ranking, unchanged
    assert browser.query == "tool error recovery" and browser.query_box.value == "tool error recovery"
    assert set(browser.scores) == set(expected)
    assert browser.search("zzqxv") == []
    assert "no items match" in browser.static_html()
    assert browser.search("") and browser.scores == {}
    browser.close()


def test_memory_filters(bank):
    path, pack, old = bank
    browser = MemoryBrowser(path)
    browser.set_polarity("failure")
    assert browser.results and {it.polarity for it in browser.results} == {"failure"}
    assert ROUNDING.id in {it.id for it in browser.results}
    browser.set_domain("math")
    assert [it.id for it in browser.results] == [ROUNDING.id]
    assert browser.search("percentage") == [browser.store.get(ROUNDING.id)]
    browser.set_polarity(None)
    assert {it.id for it in browser.search("percentages rounding")} == {ARITHMETIC.id, ROUNDING.id}
    assert [it.id for it in browser.results] == [h.id for h in browser.store.search("percentages rounding", k=50,
                                                                                     domain="math")]
    browser.set_domain(None)
    browser.search("")
    browser.set_status("superseded")
    assert [it.id for it in browser.results] == [old]
    browser.set_status(None)  # every status
    assert len(browser.results) == len(pack) + 2
    browser.set_layer("L3")
    assert browser.results == [] and browser.filters["layer"] == "L3"
    with pytest.raises(ValueError, match="polarity: 'maybe' is not allowed"):
        browser.set_polarity("maybe")
    assert browser.filters["polarity"] is None  # a refused value changes nothing
    browser.close()


def test_memory_select_shows_full_record_with_provenance_and_usage(bank):
    path, _, old = bank
    browser = MemoryBrowser(path)
    item = browser.select(ARITHMETIC.id)
    assert (item.uses, item.wins) == (2, 1)
    record = browser.record_html()
    for text in ("run-7", "traj-a", "math", "api", item.created_at, item.updated_at, "active", "50%",
                 html.escape(ARITHMETIC.content), "run-8", "traj-b", "success", "failure", "Usage (2)"):
        assert text in record, text
    assert fields_of(record, "rlmlab-memory-provenance") == {
        "run id": "run-7", "trajectory id": "traj-a", "domain": "math", "source": "api",
        "created at": item.created_at, "updated at": item.updated_at, "status": "active", "superseded by": "—"}
    assert [u["trajectory_id"] for u in browser.selected_usage] == ["traj-a", "traj-b"]
    assert f"data-item-id='{ARITHMETIC.id}'" in browser.static_html()
    # A superseded pack item: its status and successor are shown, and the button follows the link.
    browser.set_status(None)
    browser.select(old)
    record = browser.record_html()
    provenance = fields_of(record, "rlmlab-memory-provenance")
    assert (provenance["status"], provenance["superseded by"]) == ("superseded", ARITHMETIC.id)
    assert (provenance["source"], provenance["run id"], provenance["domain"]) == ("pack:rlm_procedures", "—", "—")
    assert "never retrieved" in record
    assert browser.superseding_button.layout.display == ""
    assert browser.open_superseding().id == ARITHMETIC.id
    assert browser.superseding_button.layout.display == "none"
    with pytest.raises(MemoryStoreError, match="unknown memory id"):
        browser.select("mem_0000000000000000")
    assert browser.select(None) is None and "select an item" in browser.record_html()
    browser.close()


def test_memory_controls_drive_the_handlers(bank):
    path, _, _ = bank
    browser = MemoryBrowser(MemoryStore(path))
    browser.query_box.value = "rounding percentage"
    assert browser.results and browser.results[0].id == ROUNDING.id
    browser.filter_menus["polarity"].value = "success"
    assert browser.filters["polarity"] == "success" and ROUNDING.id not in {it.id for it in browser.results}
    browser.filter_menus["polarity"].value = ""
    assert browser.filters["polarity"] is None
    assert "math" in [v for _, v in browser.filter_menus["domain"].options]
    browser.results_list.value = ROUNDING.id
    assert browser.selected.id == ROUNDING.id and ROUNDING.title in browser.record.value
    # Re-rendering after a handler keeps the list on the selection and does not select anything by itself.
    browser.search("arithmetic")
    assert browser.selected.id == ROUNDING.id and browser.results_list.value == ROUNDING.id
    browser.search("tool error")
    assert browser.results_list.value is None and browser.selected.id == ROUNDING.id


def test_memory_browser_refuses_a_missing_bank(tmp_path):
    missing = tmp_path / "nope.sqlite"
    with pytest.raises(FileNotFoundError, match="no memory bank"):
        MemoryBrowser(missing)
    assert not missing.exists()


def test_memory_mimebundle_has_widget_view_and_static_html(bank):
    path, _, _ = bank
    browser = MemoryBrowser(path)
    browser.search("arithmetic")
    browser.select(ARITHMETIC.id)
    bundle = browser._repr_mimebundle_()
    assert WIDGET_MIME in bundle and bundle[WIDGET_MIME]["model_id"] == browser.view.model_id
    static = bundle["text/html"]
    assert "rlmlab-memory" in static and "rlmlab-memory-results" in static and "rlmlab-memory-provenance" in static
    assert "traj-a" in static and "<script" not in static
    assert "rlmlab-memory" in browser.view._dom_classes
    browser.close()


# -- interaction log --------------------------------------------------------------------------------------

PHANTOM = "I searched the file and found 3 async functions, at lines 156, 196 and 249."


def post(response, scope="main", **kw):
    return Turn("post_inference", scope=scope, response=response, **kw)


@pytest.fixture
def turing_log(tmp_path):
    """A real log: five rounds over two sessions; returns (db path, the RoundResults in order)."""
    db = tmp_path / "turing.sqlite"
    protocol = TuringProtocol(log=db)
    turns = [
        post(PHANTOM, session="run-1", turn_id="1"),
        post("The answer is 4.", session="run-1", turn_id="2",
             history=[Step("print(4)", "4")], tool_calls=[ToolCall("ctx_find", {"pattern": "fn"})]),
        post("I'll check the log for errors.", session="run-2", turn_id="1"),
        Turn("pre_execution", scope="sub_session", session="run-2", turn_id="2",
             tool_calls=[ToolCall("agenda", {"action": "complete", "item": "1"})], objective="close item 1"),
        post(PHANTOM, session="run-1", turn_id="1"),  # same turn again: confirmed, but no second correction
    ]
    results = [protocol.run(t) for t in turns]
    protocol.log.close()
    assert [r.hooks for r in results] == [["phantom_tool_result"], [], ["empty_promise"], ["agenda_complete"],
                                          ["phantom_tool_result"]]
    return db, results


def test_log_view_filters(turing_log):
    db, _ = turing_log
    view = InteractionLogView(db)
    ids = [r["id"] for r in load_interaction_log(db)]
    assert [r["id"] for r in view.rounds] == ids and len(ids) == 5
    view.set_hook("phantom_tool_result")
    assert [r["id"] for r in view.rounds] == [r["id"] for r in load_interaction_log(db, hook="phantom_tool_result")]
    assert [r["id"] for r in view.rounds] == [ids[0], ids[4]]
    assert "2 of 2 matching rounds (hook=phantom_tool_result)" in view.summary_html()
    view.set_hook(None)
    view.set_only_violations(True)
    assert [r["id"] for r in view.rounds] == [ids[0], ids[2], ids[3], ids[4]]
    view.set_scope("sub_session")
    assert [r["turn_id"] for r in view.rounds] == ["2"] and view.rounds[0]["phase"] == "pre_execution"
    view.set_scope(None)
    view.set_session("run-2")
    assert [r["id"] for r in view.rounds] == [ids[2], ids[3]]
    view.set_phase("post_inference")
    assert [r["id"] for r in view.rounds] == [ids[2]]
    with pytest.raises(ValueError, match="scope: 'side' is not allowed"):
        view.set_scope("side")
    table = view.rounds_html()
    assert table.count("<tr>") == 2 and "<td style='padding:2px 8px;vertical-align:top'>empty_promise</td>" in table


def test_log_view_table_columns(turing_log):
    db, _ = turing_log
    view = InteractionLogView(db)
    table = view.rounds_html()
    assert "hooks checked" in table and "confirmed violations" in table and "correction injected" in table
    assert table.count("<td style='padding:2px 8px;vertical-align:top'>yes</td>") == 3  # rounds 1, 3, 4
    assert "5 rounds · 4 with confirmed violations · 3 corrections injected · 2 sessions" in view.header_html()
    hook_labels = dict((v, k) for k, v in view.filter_menus["hook"].options)
    assert hook_labels["phantom_tool_result"] == "phantom_tool_result (2)"
    assert hook_labels["workflow_spawn"] == "workflow_spawn (0)"  # checked, never confirmed


def test_log_view_selected_round_shows_stages_and_correction(turing_log):
    db, results = turing_log
    view = InteractionLogView(db)
    first, repeat = view.rounds[0]["id"], view.rounds[4]["id"]
    view.select(first)
    details = view.details_html()
    assert html.escape(results[0].correction) in details
    assert "[TURING CORRECTION]" in details and "No tool was called this turn" in details
    assert html.escape(results[0].violations[0].reason) in details
    assert "Stage 1: detection (violation_detected)" in details and "phantom_tool_result:" in details
    assert html.escape(PHANTOM) in details
    view.select(repeat)
    details = view.details_html()
    assert "Stage 3: correction (ok)" in details and "already fired in this turn" in details
    assert "rlmlab-turing-correction" not in details
    sub = view.select(view.rounds[3]["id"])
    assert sub["scope"] == "sub_session"
    details = view.details_html()
    assert "agenda(action=&#x27;complete&#x27;, item=&#x27;1&#x27;)" in details and "close item 1" in details
    assert html.escape(results[3].correction) in details
    with pytest.raises(ValueError, match="round 999"):
        view.select(999)


def test_log_view_controls_and_selection_follow_filters(turing_log):
    db, _ = turing_log
    view = InteractionLogView(db)
    view.filter_menus["hook"].value = "empty_promise"
    assert view.filters["hook"] == "empty_promise" and [r["session"] for r in view.rounds] == ["run-2"]
    view.rounds_list.value = view.rounds[0]["id"]
    assert view.selected["id"] == view.rounds[0]["id"] and "empty_promise" in view.details.value
    view.violations_toggle.value = True
    assert view.only_violations and view.selected is not None
    view.filter_menus["hook"].value = "phantom_tool_result"  # the selected round is filtered out of the list
    assert view.rounds_list.index is None and view.selected["session"] == "run-2"
    view.filter_menus["hook"].value = ""
    assert view.filters["hook"] is None and len(view.rounds) == 4


def test_log_view_from_rows_reload_and_checks(turing_log):
    db, _ = turing_log
    rows = load_interaction_log(db)
    from_rows = InteractionLogView(rows)
    assert from_rows.rounds_html() == InteractionLogView(db).rounds_html()
    assert "interaction log (rows)" in from_rows.header_html()
    assert from_rows.reload_button.layout.display == "none"
    broken = [dict(rows[0])]
    del broken[0]["correction"]
    with pytest.raises(ValueError, match="row 0: field correction missing"):
        InteractionLogView(broken)
    with pytest.raises(FileNotFoundError, match="no interaction log"):
        InteractionLogView(db.parent / "none.sqlite")
    view = InteractionLogView(db, limit=2)
    assert [r["id"] for r in view.rounds] == [rows[3]["id"], rows[4]["id"]]  # the newest two
    view.select(rows[4]["id"])
    TuringProtocol(log=db).run(post("I will search the file for async functions.", session="run-3"))
    view.reload()
    assert len(view.all_rounds) == 6 and view.rounds[-1]["session"] == "run-3"
    assert view.selected["id"] == rows[4]["id"]


def test_log_view_mimebundle_has_widget_view_and_static_html(turing_log):
    db, _ = turing_log
    view = InteractionLogView(db)
    view.set_hook("empty_promise")
    view.select(view.rounds[0]["id"])
    bundle = view._repr_mimebundle_()
    assert WIDGET_MIME in bundle and bundle[WIDGET_MIME]["model_id"] == view.view.model_id
    static = bundle["text/html"]
    assert "rlmlab-turing-log" in static and "rlmlab-turing-rounds" in static
    assert "You said you would act but made no tool call" in static and "<script" not in static
    assert "run-1" not in static.split("rlmlab-turing-rounds", 1)[1].split("</table>", 1)[0]
    assert "rlmlab-turing-log" in view.view._dom_classes
