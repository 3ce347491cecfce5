"""Memory policies on real SQLite files: extraction (heuristic, LLM, contrastive), consolidation, forgetting,
and the memory-health summary."""

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlmlab.errors import ConfigError
from rlmlab.executors._trajectory import IterationRecord, Trajectory
from rlmlab.lm import make_lm
from rlmlab.memory import MemoryItem, MemoryStore
from rlmlab.learning._consolidate import CONSOLIDATORS, ConsolidationAction, merge_contents, similarity
from rlmlab.learning._extract import EXTRACTORS, ExtractionReport, HeuristicExtractor
from rlmlab.learning._extract_llm import EXTRACT_PROMPTS, LLMExtractor, parse_items
from rlmlab.learning._forget import FORGETTERS, BoundedForgetter, memory_health, retention_score
from rlmlab.memory._tasks import MemoryTask, Verdict
from rlmlab.trace import IterationLeakage

# -- hand-built trajectories -------------------------------------------------------------------------------


def step(index, *, code="", output="", calls=(), large=0, turing=()):
    return IterationRecord(
        index=index, reasoning=f"step {index}", code=code, output=output, tool_calls=list(calls),
        leakage=IterationLeakage(iteration=index, stdout_chars=len(output), tool_calls=len(calls),
                                 large_returns=large),
        input_tokens=10, output_tokens=5, elapsed_ms=1, turing=list(turing))


def call(name, error=None, chars=120, **arguments):
    return {"name": name, "arguments": arguments, "result_chars": chars, "error": error}


def traj(run_id, iterations, *, answer=None, submitted=False, error=None):
    return Trajectory(run_id=run_id, query=TASK.query, lm="scripted", context_mode="handle",
                      iterations=iterations, answer=answer, submitted=submitted, error=error)


TASK = MemoryTask(id="t1", query="How many pub async fns are in fs/file.rs?", domain="rust-src", expected="12")
SLICE_ERROR = "start: 10 is after end 5"
WIN = Verdict(True, 1.0, "12 == 12", "exact")
LOSS = Verdict(False, 0.0, "7 != 12", "exact")


def good_run(run_id="run-ok"):
    return traj(run_id, [
        step(1, calls=[call("ctx_stats")]),
        step(2, calls=[call("ctx_find", pattern="pub async fn", k=50)]),
        step(3, calls=[call("ctx_slice", start=0, end=400)]),
        step(4, code="SUBMIT(answer=str(hits['total']))"),
    ], answer="12", submitted=True)


def bad_run(run_id="run-bad"):
    return traj(run_id, [
        step(1, calls=[call("ctx_peek", chars=9000, n=100000)], large=1),
        step(2, calls=[call("ctx_slice", error=SLICE_ERROR, start=10, end=5)], output=f"ToolError: {SLICE_ERROR}"),
        step(3, output="Traceback (most recent call last):\nNameError: name 'hits' is not defined"),
    ], answer="7", submitted=False)


def check_provenance(items, run_id, polarity):
    for item in items:
        assert item.polarity == polarity and item.layer == "L2" and item.source == "extract"
        assert item.domain == "rust-src" and item.run_id == item.trajectory_id == run_id
        assert {"rust-src", "exact"} <= set(item.tags)


# -- heuristic extraction ----------------------------------------------------------------------------------


def test_heuristic_success_names_the_tools_and_answer_form():
    items = EXTRACTORS.make("heuristic").extract(TASK, good_run(), WIN)
    assert 1 <= len(items) <= 3
    check_provenance(items, "run-ok", "success")
    first = items[0]
    assert "ctx_stats → ctx_find → ctx_slice" in first.content and "an integer (12)" in first.content
    assert "ctx_find" in first.title and {"ctx_find", "ctx_slice", "ctx_stats"} <= set(first.tags)


def test_heuristic_success_records_a_recovery_from_a_tool_error():
    run = good_run()
    run.iterations.insert(2, step(3, calls=[call("ctx_slice", error=SLICE_ERROR, start=10, end=5)]))
    items = HeuristicExtractor().extract(TASK, run, WIN)
    assert all(i.polarity == "success" for i in items)
    assert any(SLICE_ERROR in i.content and "ctx_slice(start=0, end=400)" in i.content for i in items)


def test_heuristic_failure_quotes_the_tool_error_and_other_evidence():
    items = EXTRACTORS.make("heuristic").extract(TASK, bad_run(), LOSS)
    assert len(items) == 3
    check_provenance(items, "run-bad", "failure")
    assert SLICE_ERROR in items[0].content and "ctx_slice(start=10, end=5)" in items[0].content
    text = " ".join(i.content for i in items)
    assert "NameError: name 'hits' is not defined" in text and "9,000 characters" in text
    assert "tool-error" in items[0].tags


def test_heuristic_failure_without_submit_and_turing_violation():
    run = traj("run-t", [
        step(1, calls=[call("ctx_find", pattern="fn")],
             turing=[{"phase": "post", "violations": [{"hook": "grounded_answer", "reason": "value never printed"}],
                      "correction": "Print the value first."}]),
        step(2, code="print(1)", output="1"),
    ], answer="3")
    items = HeuristicExtractor().extract(TASK, run, LOSS)
    text = " ".join(i.content for i in items)
    assert "grounded_answer" in text and "Print the value first." in text
    assert "without SUBMIT" in text and "ctx_find" in text and "'3'" in text


@pytest.mark.parametrize("max_items", [1, 2, 3])
def test_never_more_than_max_items(max_items):
    run = bad_run()
    run.iterations += [step(4 + i, calls=[call(f"tool{i}", error=f"bad argument {i}")]) for i in range(6)]
    for verdict in (LOSS, WIN):
        items = EXTRACTORS.make("heuristic", max_items=max_items).extract(TASK, run, verdict)
        assert 1 <= len(items) <= max_items and len({i.id for i in items}) == len(items)


@pytest.mark.parametrize("bad", [0, 4, 10, True, "3"])
def test_max_items_over_three_is_refused(bad):
    with pytest.raises(ConfigError, match="max_items"):
        EXTRACTORS.make("heuristic", max_items=bad)
    with pytest.raises(ConfigError, match="max_items"):
        LLMExtractor(make_lm("scripted", script=[]), max_items=bad)


def test_no_evidence_no_noise():
    empty = traj("run-empty", [], error="RuntimeError: LM unreachable")
    assert HeuristicExtractor().extract(TASK, empty, LOSS) == []
    assert HeuristicExtractor().extract(TASK, empty, WIN) == []
    # A failure with no tool call and no error: one item at most, and it is about this run.
    quiet = traj("run-quiet", [step(1, code="print(7)", output="7"), step(2, code="SUBMIT(answer='7')")],
                 answer="7", submitted=True)
    items = HeuristicExtractor().extract(TASK, quiet, LOSS)
    assert len(items) == 1 and "7 != 12" in items[0].content and "an integer (7)" in items[0].content
    unsubmitted = traj("run-q2", [step(1, code="x = 1", output="")], answer=None)
    assert len(HeuristicExtractor().extract(TASK, unsubmitted, LOSS)) == 1


# -- LLM extraction ----------------------------------------------------------------------------------------

GOOD_REPLY = """Here are the memories:
```json
[
  {"title": "Count with ctx_find totals", "description": "When a question asks how many matches exist",
   "content": "Call ctx_find with a large k and read the total field instead of counting snippets."},
  {"title": "", "description": "missing title", "content": "This one is invalid."},
  {"title": "Slice around find hits", "description": "When the matches need context",
   "content": "Use the line numbers from ctx_find as ctx_slice bounds."}
]
```"""


def test_llm_extraction_parses_fenced_json_and_drops_invalid_items():
    prompts = []

    def script(messages):
        prompts.append(messages[-1]["content"])
        return GOOD_REPLY

    extractor = EXTRACTORS.make("llm", lm=make_lm("scripted", script=script))
    report = extractor.extract_with_report(TASK, good_run(), WIN)
    assert isinstance(report, ExtractionReport) and not report.fallback
    assert [i.title for i in report.items] == ["Count with ctx_find totals", "Slice around find hits"]
    assert report.dropped == [{"index": 1, "reason": "title: missing or not a non-empty string"}]
    check_provenance(report.items, "run-ok", "success")
    assert all("llm" in i.tags for i in report.items) and report.prompt_version == "extract_v1"
    assert json.loads(json.dumps(report.to_dict()))["items"][0]["title"] == "Count with ctx_find totals"
    # The prompt was the versioned success template with the trajectory rendered into it.
    (prompt,) = prompts
    assert "SUCCESS. 12 == 12" in prompt and "FAILURE" not in prompt and "pattern='pub async fn'" not in prompt
    assert "--- step 2" in prompt and "submitted=True answer='12'" in prompt and TASK.query in prompt


def test_llm_extraction_over_long_fields_and_extra_items_are_dropped():
    items = [{"title": f"Strategy {i}", "description": "d", "content": f"Use tool{i} first."} for i in range(4)]
    items.insert(0, {"title": "x" * 500, "description": "d", "content": "c"})
    report = LLMExtractor(make_lm("scripted", script=[json.dumps(items)])).extract_with_report(TASK, bad_run(), LOSS)
    assert [i.title for i in report.items] == ["Strategy 0", "Strategy 1", "Strategy 2"]
    assert all(i.polarity == "failure" for i in report.items)
    reasons = [d["reason"] for d in report.dropped]
    assert "over the extraction limit" in reasons[0] and reasons[1] == "over max_items=3"


def test_llm_garbage_falls_back_to_heuristic():
    lm = make_lm("scripted", script=["I cannot help with that.", "[1, 2]"])
    extractor = LLMExtractor(lm)
    report = extractor.extract_with_report(TASK, bad_run(), LOSS)
    assert report.fallback and "no JSON array in the reply" in report.notes
    assert [i.id for i in report.items] == [i.id for i in HeuristicExtractor().extract(TASK, bad_run(), LOSS)]
    report = extractor.extract_with_report(TASK, bad_run(), LOSS)  # an array without objects
    assert report.fallback and len(report.dropped) == 2 and report.items


def test_llm_empty_list_means_nothing_to_keep():
    report = LLMExtractor(make_lm("scripted", script=["```\n[]\n```"])).extract_with_report(TASK, good_run(), WIN)
    assert report.items == [] and not report.fallback


def test_parse_items_finds_the_first_array():
    assert parse_items('noise [not json] then [{"a": 1}] and [2]')[0] == [{"a": 1}]
    assert parse_items('{"title": "t"}')[0] == [{"title": "t"}]
    assert parse_items("nothing")[0] is None
    assert set(EXTRACT_PROMPTS["extract_v1"]) == {"success", "failure", "contrastive"}


# -- contrastive extraction --------------------------------------------------------------------------------


def test_heuristic_contrastive_two_successes_one_failure():
    rollouts = [(bad_run("roll-3"), Verdict(False, 0.1, "7 != 12", "exact")),
                (good_run("roll-1"), Verdict(True, 0.9, "ok", "exact")),
                (good_run("roll-2"), Verdict(True, 1.0, "ok", "exact"))]
    items = EXTRACTORS.make("heuristic").contrastive(TASK, rollouts)
    assert 2 <= len(items) <= 3 and all("contrastive" in i.tags for i in items)
    wins = [i for i in items if i.polarity == "success"]
    losses = [i for i in items if i.polarity == "failure"]
    assert len(wins) == 1 and wins[0].run_id == "roll-2"  # the best success
    assert "ctx_stats" in wins[0].content and "ctx_find" in wins[0].title and "never called" in wins[0].content
    assert losses and all(i.run_id == "roll-3" for i in losses)
    assert any("9,000 characters" in i.content or SLICE_ERROR in i.content or "NameError" in i.content
               for i in losses)


def test_contrastive_with_one_side_extracts_from_the_best():
    h = HeuristicExtractor()
    only_wins = [(good_run("a"), Verdict(True, 0.5, "ok", "exact")), (good_run("b"), Verdict(True, 0.8, "ok", "exact"))]
    report = h.contrastive_with_report(TASK, only_wins)
    assert report.items and all(i.run_id == "b" for i in report.items) and "one-sided" in report.notes[0]
    only_losses = [(bad_run("c"), LOSS)]
    assert [i.id for i in h.contrastive(TASK, only_losses)] == [i.id for i in h.extract(TASK, bad_run("c"), LOSS)]
    assert h.contrastive(TASK, []) == []


def test_llm_contrastive_uses_the_contrastive_prompt_and_polarity_field():
    reply = json.dumps([
        {"title": "Find before slicing", "description": "d", "content": "Successes called ctx_find first.",
         "polarity": "success"},
        {"title": "Never peek the whole file", "description": "d", "content": "ctx_peek with n=100000 leaked.",
         "polarity": "failure"},
        {"title": "No polarity", "description": "d", "content": "c"},
    ])
    seen = []

    def script(messages):
        seen.append(messages[-1]["content"])
        return reply

    rollouts = [(good_run("w1"), WIN), (good_run("w2"), WIN), (bad_run("l1"), LOSS)]
    report = LLMExtractor(make_lm("scripted", script=script)).contrastive_with_report(TASK, rollouts)
    assert "Compare the successful attempts" in seen[0] and "Attempt 3 (FAILURE" in seen[0]
    assert [(i.polarity, i.run_id) for i in report.items] == [("success", "w1"), ("failure", "l1")]
    assert report.dropped[0]["index"] == 2 and "polarity" in report.dropped[0]["reason"]


# -- consolidation -----------------------------------------------------------------------------------------


def item(title, content, polarity="success", **kw):
    kw.setdefault("domain", "rust-src")
    kw.setdefault("source", "extract")
    return MemoryItem(title=title, description=f"About {title.lower()}", content=content, polarity=polarity, **kw)


BASE = item("Find then slice by lines",
            "Call ctx_find to get line numbers, then ctx_slice with unit lines to read the surrounding function.",
            uses=4, wins=3)


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "mem.db") as s:
        s.add(BASE)
        yield s


def events(store):
    return [e.payload for e in store.events(kind="consolidation")]


def test_consolidate_exact_repeat_is_duplicate(store):
    (act,) = CONSOLIDATORS.make("consolidate").persist(store, [replace(BASE, uses=0, wins=0)])
    assert act.action == "duplicate" and act.target_ids == [BASE.id] and act.result_id == BASE.id
    assert len(store) == 1 and events(store) == [act.to_dict()]


def test_consolidate_near_duplicate_is_discarded_but_kept_for_audit(store):
    cand = item("Find, then slice by lines", BASE.content + " Works on Rust files.")
    assert similarity(cand, BASE) >= 0.8
    (act,) = CONSOLIDATORS.make("consolidate").persist(store, [cand])
    assert act.action == "discard" and act.target_ids == [BASE.id] and act.similarity >= 0.8
    assert store.get(cand.id).status == "discarded" and [i.id for i in store.items()] == [BASE.id]
    assert events(store)[0]["action"] == "discard"


def test_consolidate_same_title_new_content_supersedes(store):
    cand = item("Find then slice BY LINES.", "Prefer ast_query over a regex when the question is about Rust items.")
    (act,) = CONSOLIDATORS.make("consolidate").persist(store, [cand])
    assert act.action == "supersede" and act.target_ids == [BASE.id] and act.result_id == cand.id
    old = store.get(BASE.id)
    assert old.status == "superseded" and old.superseded_by == cand.id
    assert [i.id for i in store.items()] == [cand.id]
    assert events(store) == [act.to_dict()]


def test_consolidate_similar_item_is_merged_with_counters_summed(store):
    cand = item("Locate matches before slicing",
                BASE.content + " Check the total count before slicing and print it.", uses=1, wins=0)
    assert 0.5 <= similarity(cand, BASE) < 0.8
    (act,) = CONSOLIDATORS.make("consolidate").persist(store, [cand])
    assert act.action == "merge" and act.target_ids == [BASE.id]
    (merged,) = store.items()
    assert act.result_id == merged.id and merged.title == BASE.title and merged.source == "merge"
    assert merged.content == BASE.content + " Check the total count before slicing and print it."
    assert (merged.uses, merged.wins) == (5, 3)
    assert store.get(BASE.id).superseded_by == merged.id and store.get(cand.id).superseded_by == merged.id
    assert events(store)[0]["result_id"] == merged.id


def test_consolidate_unrelated_other_polarity_or_domain_is_added(store):
    cands = [item("Check the arithmetic with Python", "Compute totals in the interpreter and print them."),
             item(BASE.title, BASE.content + " Never skip it.", "failure"),  # other polarity: not compared
             item("Find then slice by lines", "Different content entirely for another ontology.", domain="owl")]
    acts = CONSOLIDATORS.make("consolidate").persist(store, cands)
    assert [a.action for a in acts] == ["add", "add", "add"]
    assert len(store.items()) == 4 and store.get(BASE.id).status == "active"
    assert [e["action"] for e in events(store)] == ["add", "add", "add"]


def test_consolidate_never_supersedes_or_merges_pack_items(tmp_path):
    with MemoryStore(tmp_path / "mem.db") as s:
        pack = replace(BASE, source="pack:rlm_procedures")
        s.add(pack)
        cand = item("Find then slice by lines", "A revision of a curated strategy that should not replace it.")
        (act,) = CONSOLIDATORS.make("consolidate").persist(s, [cand])
        assert act.action == "add" and "protected" in act.reason
        assert s.get(pack.id).status == "active"


def test_append_adds_all_and_marks_exact_repeats(store):
    near = item("Find, then slice by lines", BASE.content + " Works on Rust files.")
    acts = CONSOLIDATORS.make("append").persist(store, [near, near, BASE])
    assert [a.action for a in acts] == ["add", "duplicate", "duplicate"]
    assert len(store.items()) == 2 and len(events(store)) == 3


def test_thresholds_are_validated_and_actions_round_trip():
    for kwargs in ({"dup_threshold": 0.5, "merge_threshold": 0.5}, {"dup_threshold": 1.2},
                   {"merge_threshold": 0.0}, {"dup_threshold": "high"}):
        with pytest.raises(ConfigError):
            CONSOLIDATORS.make("consolidate", **kwargs)
    act = ConsolidationAction("merge", "mem_a", ["mem_b"], 0.6, "similar", "mem_c", "consolidate")
    assert ConsolidationAction.from_dict(json.loads(json.dumps(act.to_dict()))) == act
    assert merge_contents("A one. B two.", "B two. C three.") == "A one. B two. C three."


# -- forgetting --------------------------------------------------------------------------------------------


def test_bounded_forgetting_by_retention_score(tmp_path):
    with MemoryStore(tmp_path / "mem.db") as s:
        s.add_many([item(f"S{i}", f"success strategy number {i}.", uses=u, wins=w)
                    for i, (u, w) in enumerate([(10, 9), (10, 1), (0, 0), (4, 0)])]
                   + [item(f"F{i}", f"failure guardrail number {i}.", "failure", uses=5, wins=0) for i in range(2)]
                   + [item("P", "curated guardrail.", "failure", source="pack:demo")])
        acts = FORGETTERS.make("bounded", max_items=4, floors={"success": 1, "failure": 2}).forget(s)
        # 7 active, bound 4. Lowest scores: F0/F1 (1/7), then S1 and S3 (1/6). The failures may lose only one:
        # the protected pack item counts towards their floor of 2 but can never be forgotten itself.
        forgotten = sorted(s.get(a.item_id).title for a in acts)
        assert [a.action for a in acts] == ["forget"] * 3
        assert forgotten in (["F0", "S1", "S3"], ["F1", "S1", "S3"])
        assert sorted(i.title for i in s.items())[-3:] == ["P", "S0", "S2"] and len(s.items()) == 4
        assert [e.payload for e in s.events(kind="forget")] == [a.to_dict() for a in acts]
        assert FORGETTERS.make("none").forget(s) == []
        assert BoundedForgetter(max_items=4).forget(s) == []  # already within the bound: nothing logged


def test_bounded_forgetting_reports_an_unreachable_bound(tmp_path):
    with MemoryStore(tmp_path / "mem.db") as s:
        s.add_many([item(f"P{i}", f"curated {i}.", source="pack:demo") for i in range(3)]
                   + [item("X", "extracted.", uses=3)])
        acts = BoundedForgetter(max_items=1, floors={"success": 0, "failure": 0}).forget(s)
        assert [a.action for a in acts] == ["forget", "unreachable"]
        assert "3 are protected" in acts[1].reason and "2 over the bound of 1" in acts[1].reason
        assert len(s.items()) == 3 and len(s.events(kind="forget")) == 2


def test_bounded_options_are_validated():
    with pytest.raises(ConfigError, match="sum"):
        BoundedForgetter(max_items=3, floors={"success": 2, "failure": 2})
    with pytest.raises(ConfigError, match="polarity"):
        BoundedForgetter(floors={"neutral": 1})
    with pytest.raises(ConfigError):
        FORGETTERS.make("bounded", max_items=-1)
    assert retention_score(item("a", "b", uses=0, wins=0)) == 0.5


BANK = st.lists(st.tuples(st.sampled_from(["success", "failure"]), st.integers(0, 6), st.integers(0, 6),
                          st.booleans()), max_size=14)


@settings(max_examples=50, deadline=None)
@given(bank=BANK, max_items=st.integers(0, 10), f_success=st.integers(0, 5), f_failure=st.integers(0, 5))
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_bounded_forgetting_properties(bank, max_items, f_success, f_failure):
    if f_success + f_failure > max_items:
        f_success, f_failure = min(f_success, max_items), max(0, min(f_failure, max_items - f_success))
    floors = {"success": f_success, "failure": f_failure}
    with MemoryStore(":memory:") as s:
        s.add_many([item(f"item {i}", f"content {i}.", pol, uses=u + w, wins=w,
                         source="pack:demo" if protected else "extract")
                    for i, (pol, u, w, protected) in enumerate(bank)])
        before = s.items()
        acts = BoundedForgetter(max_items=max_items, floors=floors).forget(s)
        after = s.items()
        ids_after = {i.id for i in after}
        forgotten = [i for i in before if i.id not in ids_after]
        # Protected pack items are never forgotten; forgotten items have the status, nothing else changed.
        assert all(not i.source.startswith("pack:") for i in forgotten)
        assert {i.id for i in s.items(status="forgotten")} == {i.id for i in forgotten}
        for pol in ("success", "failure"):
            n_before = sum(i.polarity == pol for i in before)
            n_after = sum(i.polarity == pol for i in after)
            assert n_after >= min(floors[pol], n_before)
            # Within a polarity, every forgotten item scores no higher than every kept unprotected one.
            gone = [retention_score(i) for i in forgotten if i.polarity == pol]
            kept = [retention_score(i) for i in after if i.polarity == pol and not i.source.startswith("pack:")]
            assert not gone or not kept or max(gone) <= min(kept)
        # The bound holds unless floors and protection forbid it; then the run says so.
        removable = sum(min(sum(i.polarity == pol and not i.source.startswith("pack:") for i in before),
                            max(0, sum(i.polarity == pol for i in before) - floors[pol]))
                        for pol in ("success", "failure"))
        expected = len(before) if len(before) <= max_items else max(max_items, len(before) - removable)
        assert len(after) == expected
        unreachable = [a for a in acts if a.action == "unreachable"]
        assert bool(unreachable) == (len(after) > max_items)
        assert len(s.events(kind="forget")) == len(acts)


# -- memory health -----------------------------------------------------------------------------------------


def test_memory_health_numbers(tmp_path):
    with MemoryStore(tmp_path / "mem.db") as s:
        s.add_many([item("A", "alpha strategy.", uses=4, wins=3), item("B", "beta strategy.", uses=2, wins=0),
                    item("C", "gamma guardrail.", "failure"), item("D", "delta guardrail.", "failure", uses=2,
                                                                    wins=2)])
        consolidator = CONSOLIDATORS.make("consolidate")
        consolidator.persist(s, [item("A", "alpha strategy."),  # duplicate
                                 item("E", "epsilon zeta eta theta iota kappa lambda."),  # add
                                 item("Epsilon", "epsilon zeta eta theta iota kappa lambda.")])  # discard
        health = memory_health(s)
        assert health["active"] == 5 and health["active_by_polarity"] == {"success": 3, "failure": 2}
        assert health["consolidation"] == {"add": 1, "discard": 1, "duplicate": 1}
        assert health["duplicate_rate"] == pytest.approx(2 / 3) and health["novelty_rate"] == pytest.approx(1 / 3)
        # uses over active items: [0, 0, 2, 2, 4]
        assert health["uses"] == {"min": 0.0, "p25": 0.0, "median": 2.0, "p75": 2.0, "max": 4.0, "mean": 1.6,
                                  "never_used": 0.4}
        assert health["mean_win_rate"] == pytest.approx((3 / 4 + 0 / 2 + 2 / 2) / 3)
        assert health["pooled_win_rate"] == pytest.approx(5 / 8)
        assert health["by_status"] == {"active": 5, "discarded": 1}
        assert health["win_rate_drift"] is None  # no judged uses recorded yet
        json.dumps(health)


def test_win_rate_drift_compares_the_earlier_and_later_judged_uses(tmp_path):
    with MemoryStore(tmp_path / "mem.db") as s:
        s.add_many([item("A", "alpha strategy."), item("B", "beta strategy.")])
        ids = [it.id for it in s.items()]
        for n, success in enumerate([False, False, True, True, True]):  # the bank starts helping later
            s.record_usage(ids[:1] if n % 2 else ids, trajectory_id=f"t{n}")
            s.record_outcome(f"t{n}", success)
        drift = memory_health(s)["win_rate_drift"]
        # judged uses in order: t0 x2 fail, t1 fail, t2 x2 win, t3 win, t4 x2 win -> earlier 4: 1/4 win, later 4: 4/4
        assert drift == {"judged_uses": 8, "earlier": 0.25, "later": 1.0, "drift": 0.75}


def test_meter_counted_large_return_names_the_step_tool():
    run = traj("run-l", [step(1, calls=[{"name": "ctx_slice", "arguments": {"start": 0, "end": 90000}}], large=1)])
    (first, *_) = HeuristicExtractor().extract(TASK, run, LOSS)
    assert first.title.startswith("Bound ctx_slice output") and "ctx_slice(start=0, end=90000)" in first.content


def test_extract_consolidate_forget_pipeline(tmp_path):
    with MemoryStore(tmp_path / "mem.db") as s:
        extractor, consolidator = EXTRACTORS.make("heuristic"), CONSOLIDATORS.make("consolidate")
        for _ in range(2):  # the same failure twice: the second extraction adds nothing
            consolidator.persist(s, extractor.extract(TASK, bad_run(), LOSS))
        consolidator.persist(s, extractor.extract(TASK, good_run(), WIN))
        assert memory_health(s)["duplicate_rate"] == pytest.approx(3 / 7)
        FORGETTERS.make("bounded", max_items=2, floors={"success": 1, "failure": 1}).forget(s)
        assert sorted(i.polarity for i in s.items()) == ["failure", "success"]
