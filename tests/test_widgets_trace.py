"""BudgetTimeline and TrajectoryExplorer driven without a browser: state, handlers, live updates, static HTML."""

import html
import json
import logging
import re
import time

import pytest

from rlmlab.executors import TRAJECTORY_FILE, IterationRecord, Trajectory, run_rlm
from rlmlab.jupyter._budget import DROPPED, BudgetTimeline, timeline_bars
from rlmlab.jupyter._explorer import TrajectoryExplorer
from rlmlab.lm import make_lm
from rlmlab.trace import ContextEvent, ContextTrace, IterationLeakage
from rlmlab.turing import TuringProtocol

from recursive_runs import recursive_run
from helpers import PHANTOM_THEN_REAL

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SEGMENT = re.compile(r"<rect class='rlmlab-seg' data-kind='(\w+)' data-tokens='(\d+)' x='([\d.]+)' y='([\d.]+)' "
                     r"width='[\d.]+' height='([\d.]+)'[^>]*><title>([^<]*)</title>")
BAR = re.compile(r"<g class='rlmlab-bar' data-iteration='(\d+)'>(.*?)</g>", re.S)


def segments(svg):
    """{iteration: [(kind, tokens, bottom_y, top_y, title)]} parsed from the chart."""
    out = {}
    for iteration, body in BAR.findall(svg):
        out[int(iteration)] = [(k, int(t), float(y) + float(h), float(y), html.unescape(title))
                               for k, t, _x, y, h, title in SEGMENT.findall(body)]
    return out


def small_trace():
    trace = ContextTrace(budget_tokens=1000)
    trace.log_event(ContextEvent.system_prompt("system", tokens=100))
    trace.log_event(ContextEvent.assistant_code("hits = ctx_find(...)", tokens=30, iteration=1))
    trace.log_event(ContextEvent.grep_result("async fn", 3, 15, iteration=1))
    trace.log_event(ContextEvent.grep_result("pub fn", 9, 25, iteration=1))
    trace.log_event(ContextEvent.execution_output("3", tokens=50, iteration=1))
    trace.log_event(ContextEvent.tool_call("ctx_peek", '{"n": 9}', tokens=5, iteration=2))
    trace.log_event(ContextEvent.tool_result("ctx_peek", "pub async", tokens=45, iteration=2))
    return trace


# -- BudgetTimeline ---------------------------------------------------------------------------------------------


def test_bars_stack_one_segment_per_kind_with_hover_details_and_budget_line():
    timeline = BudgetTimeline(small_trace())
    bars = segments(timeline.chart.value)
    assert {i: [(k, t) for k, t, *_ in segs] for i, segs in bars.items()} == {
        0: [("SystemPrompt", 100)],
        1: [("GrepResult", 40), ("AssistantCode", 30), ("ExecutionOutput", 50)],
        2: [("ToolCall", 5), ("ToolResult", 45)],
    }
    grep_title = bars[1][0][4]
    assert grep_title.startswith("GrepResult · iteration 1 · 40 tokens · 2 events")
    assert "run total after it 220 (22.0% of budget)" in grep_title
    # Cumulative (waterfall): each bar starts where the previous one ended; segments stack without gaps.
    assert bars[1][0][2] == pytest.approx(bars[0][-1][3], abs=0.02)
    assert bars[2][0][2] == pytest.approx(bars[1][-1][3], abs=0.02)
    assert bars[1][1][2] == pytest.approx(bars[1][0][3], abs=0.02)
    # The budget line is above the run total (270 of 1,000 tokens) and labelled.
    line = re.search(r"<g class='rlmlab-budget-line'><line x1='\d+' y1='([\d.]+)'", timeline.chart.value)
    assert line and float(line.group(1)) < bars[2][-1][3] and "budget 1,000" in timeline.chart.value
    assert "context-trace tokens <b>270</b> / 1,000 trace budget" in timeline.header.value and "<b>27.0%</b>" in timeline.header.value
    assert "0 events dropped" in timeline.header.value
    legend = timeline.legend.value
    assert "data-kind='GrepResult'" in legend and "data-kind='Final'" not in legend and DROPPED not in legend


def test_per_iteration_mode_stands_bars_on_zero_without_budget_line():
    timeline = BudgetTimeline(small_trace())
    timeline.modes.value = "per_iteration"  # what a click on the toggle does
    assert timeline.mode == "per_iteration"
    bars = segments(timeline.chart.value)
    assert bars[0][0][2] == pytest.approx(bars[1][0][2]) == pytest.approx(bars[2][0][2])
    assert "rlmlab-budget-line" not in timeline.chart.value
    timeline.set_mode("cumulative")
    assert timeline.modes.value == "cumulative" and "rlmlab-budget-line" in timeline.chart.value
    with pytest.raises(ValueError, match="mode: 'stacked'"):
        timeline.set_mode("stacked")


def test_ring_buffer_overflow_shows_drop_count_and_exact_bar_heights():
    trace = ContextTrace(budget_tokens=500, max_events=10)
    logged = []
    for i in range(25):
        event = ContextEvent.tool_result("ctx_peek", "r", tokens=i + 1, iteration=i // 5 + 1)
        trace.log_event(event)
        logged.append(event)
    timeline = BudgetTimeline(trace)
    assert "15 events dropped by the ring buffer</span> (25 logged, 10 kept)" in timeline.header.value
    assert "<b>65.0%</b>" in timeline.header.value  # 325 of 500 tokens
    bars = {b.iteration: b for b in timeline_bars(trace)}
    for iteration in range(1, 6):
        exact = sum(e.tokens for e in logged if e.iteration == iteration)
        kept = sum(e.tokens for e in logged[15:] if e.iteration == iteration)
        assert bars[iteration].tokens == sum(s.tokens for s in bars[iteration].segments) == exact
        dropped = [s.tokens for s in bars[iteration].segments if s.kind == DROPPED]
        assert dropped == ([exact - kept] if exact > kept else [])
    drawn = segments(timeline.chart.value)
    assert [k for k, *_ in drawn[1]] == [DROPPED] and "kinds unknown" in drawn[1][0][4]
    assert "url(#rlmlab-budget-dropped)" in timeline.chart.value
    assert "data-kind='dropped'" in timeline.legend.value


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_live_timeline_renders_each_event_when_unthrottled():
    trace = ContextTrace(budget_tokens=1000)
    timeline = BudgetTimeline(trace, live=True, throttle_ms=0)
    assert timeline.live and "no events logged yet" in timeline.chart.value
    trace.log_event(ContextEvent.system_prompt("s", tokens=100))
    assert "no events logged yet" not in timeline.chart.value and "<b>100</b>" in timeline.header.value
    before = timeline.chart.value
    trace.log_event(ContextEvent.grep_result("p", 1, 60, iteration=1))
    assert timeline.chart.value != before and 1 in segments(timeline.chart.value)
    assert timeline.renders == 3  # construction + two events
    timeline.close()
    assert not timeline.live
    renders = timeline.renders
    trace.log_event(ContextEvent.final("a", tokens=5, iteration=1))
    assert timeline.renders == renders and "<b>160</b>" in timeline.header.value  # unsubscribed


def test_live_timeline_throttles_1000_events_and_close_renders_the_final_state():
    trace = ContextTrace(budget_tokens=8000)
    timeline = BudgetTimeline(trace, live=True, throttle_ms=60_000)
    for i in range(1000):
        trace.log_event(ContextEvent.execution_output("o", tokens=i % 9 + 1, iteration=i // 20 + 1))
    assert timeline.renders == 1  # only the construction: every event fell inside the window
    assert "no events logged yet" in timeline.chart.value  # stale until the window ends or close()
    timeline.close()
    fresh = BudgetTimeline(trace)
    assert timeline.renders == 2
    assert timeline.chart.value == fresh.chart.value and timeline.header.value == fresh.header.value
    assert len(segments(timeline.chart.value)) == 50
    assert f"<b>{trace.total_tokens:,}</b>" in timeline.header.value


def test_live_timeline_trailing_render_catches_up_without_refresh():
    trace = ContextTrace(budget_tokens=8000)
    timeline = BudgetTimeline(trace, live=True, throttle_ms=50)
    for i in range(300):
        trace.log_event(ContextEvent.assistant_code("c", tokens=3, iteration=i // 10 + 1))
    expected = BudgetTimeline(trace).chart.value
    deadline = time.monotonic() + 5
    while timeline.chart.value != expected and time.monotonic() < deadline:
        time.sleep(0.01)
    assert timeline.chart.value == expected  # the timer rendered the last events; nobody called refresh()
    assert timeline.renders < 300 // 2
    timeline.close()


def test_trace_listener_errors_are_logged_and_unsubscribe_is_idempotent(caplog):
    trace = ContextTrace()
    seen = []

    def broken(event):
        raise RuntimeError("view gone")

    stop_broken = trace.subscribe(broken)
    stop_seen = trace.subscribe(seen.append)
    with caplog.at_level(logging.ERROR, logger="rlmlab.trace._context_trace"):
        trace.log_event(ContextEvent.final("a", tokens=4, iteration=1))
    assert trace.total_tokens == 4 and [e.tokens for e in seen] == [4]
    assert "listener" in caplog.text and "view gone" in caplog.text
    stop_broken()
    stop_broken()
    stop_seen()
    trace.log_event(ContextEvent.final("b", tokens=1, iteration=1))
    assert len(seen) == 1 and trace.events_logged == 2


def probe_run(rust_file, tmp_path):
    return run_rlm("How many `pub async fn` are in this file?", rust_file.read_text(),
                   lm=make_lm("scripted:probe"), runs_dir=tmp_path, source_path=str(rust_file))


def test_timeline_from_run_dir_json_file_and_bad_paths(rust_file, tmp_path):
    traj = probe_run(rust_file, tmp_path)
    expected = traj.context_trace.summary()
    from_dir = BudgetTimeline.from_file(tmp_path / traj.run_id)
    assert from_dir.trace.summary() == expected
    assert f"<b>{expected.total_tokens:,}</b>" in from_dir.header.value
    assert set(segments(from_dir.chart.value)) == set(expected.tokens_by_iteration) == {0, 1, 2}
    saved = tmp_path / "trace.json"
    saved.write_text(json.dumps(traj.context_trace.to_dict()))
    assert BudgetTimeline.from_file(saved).static_html() == from_dir.static_html()
    with pytest.raises(FileNotFoundError):
        BudgetTimeline.from_file(tmp_path / "nowhere")
    old = Trajectory(run_id="old", query="q", lm="scripted", context_mode="handle", answer="a")
    old.write_jsonl(tmp_path / "old" / TRAJECTORY_FILE)
    with pytest.raises(ValueError, match="no context_trace line"):
        BudgetTimeline.from_file(tmp_path / "old")
    saved.write_text('{"events": []}')
    with pytest.raises(ValueError, match="not a ContextTrace"):
        BudgetTimeline.from_file(saved)


@pytest.mark.slow
def test_a_recursive_run_stacks_its_trees_tokens_by_depth(tmp_path):
    traj = recursive_run(tmp_path)  # max_depth 2: step 1 and step 2 each start a sub-run
    first, second = traj.children
    timeline = BudgetTimeline.from_file(tmp_path / traj.run_id)
    assert timeline.by_depth and [c.run_id for c in timeline.children] == [first.run_id, second.run_id]
    own = traj.context_trace.summary().tokens_by_iteration
    bars = segments(timeline.chart.value)
    # one series per depth: this run's tokens of the iteration, then those of the sub-run it started
    assert {i: [(k, t) for k, t, *_ in segs] for i, segs in bars.items()} == {
        0: [("depth_0", own[0])],
        1: [("depth_0", own[1]), ("depth_1", first.context_trace.summary().total_tokens)],
        2: [("depth_0", own[2]), ("depth_1", second.context_trace.summary().total_tokens)],
        3: [("depth_0", own[3])],
    }
    assert bars[1][1][4].startswith(f"depth 1 · iteration 1 · {first.context_trace.summary().total_tokens:,} "
                                    "tokens · 1 sub-run this iteration started")
    assert bars[1][1][2] == pytest.approx(bars[1][0][3], abs=0.02)  # stacked on this run's own segment
    assert bars[2][0][2] == pytest.approx(bars[1][1][3], abs=0.02)  # cumulative: the tree's running total
    tree = sum(t.context_trace.summary().total_tokens for t in traj.walk())
    assert "rlmlab-budget-line" not in timeline.chart.value  # each run has its own budget
    assert f"the tree's context-trace tokens <b>{tree:,}</b>" in timeline.header.value
    legend = timeline.legend.value
    assert "data-kind='depth_0'" in legend and "data-kind='depth_1'" in legend and "2 sub-runs" in legend
    timeline.set_mode("per_iteration")
    assert segments(timeline.chart.value)[2][0][2] == pytest.approx(segments(timeline.chart.value)[1][0][2])
    assert "stacked by depth" in timeline.static_html() and "rlmlab-budget-kinds" in timeline.static_html()
    assert BudgetTimeline.from_trajectory(traj).static_html() == BudgetTimeline.from_file(
        tmp_path / traj.run_id / TRAJECTORY_FILE).static_html()
    # the same trace without its sub-runs: by kind, against its budget, as before
    plain = BudgetTimeline(traj.context_trace)
    assert not plain.by_depth and "rlmlab-budget-line" in plain.chart.value and "depth_" not in plain.chart.value


def test_timeline_mimebundle_has_widget_view_and_static_html():
    timeline = BudgetTimeline(small_trace())
    bundle = timeline._repr_mimebundle_()
    assert WIDGET_MIME in bundle and bundle[WIDGET_MIME]["model_id"] == timeline.view.model_id
    static = bundle["text/html"]
    assert static.startswith("<div class='rlmlab-budget'") and "<svg" in static and "<script" not in static
    assert "rlmlab-budget-line" in static and "rlmlab-budget-kinds" in static
    assert "rlmlab-budget" in timeline.view._dom_classes


# -- TrajectoryExplorer -----------------------------------------------------------------------------------------


def turing_run(rust_file, tmp_path):
    steps = PHANTOM_THEN_REAL
    return run_rlm("How many async fns?", rust_file.read_text(), lm=make_lm("scripted", script=steps),
                   turing=TuringProtocol(), runs_dir=tmp_path)


def test_explorer_loads_probe_run_from_its_path_and_steps_within_bounds(rust_file, tmp_path):
    traj = probe_run(rust_file, tmp_path)
    explorer = TrajectoryExplorer(tmp_path / traj.run_id / TRAJECTORY_FILE)
    assert explorer.trajectory.run_id == traj.run_id and len(explorer.trajectory.iterations) == 2
    first = traj.iterations[0]
    assert explorer.steps.options[0] == (
        f"1 · 0 tool calls · {first.input_tokens + first.output_tokens:,} LM tokens", 0)
    assert explorer.position == 0 and explorer.prev_button.disabled and not explorer.next_button.disabled
    assert not explorer.prev() and explorer.position == 0
    # The code is highlighted by pygments with inline styles (the builtin `len` is coloured).
    assert re.search(r"<span style=\"color: #[0-9A-Fa-f]+\">len</span>", explorer.detail.value)
    assert "data-iteration='1'" in explorer.detail.value
    explorer.next_button.click()
    assert explorer.position == 1 and explorer.next_button.disabled and "SUBMIT" in explorer.detail.value
    assert not explorer.next() and explorer.position == 1
    assert explorer.prev() and explorer.position == 0 and explorer.steps.value == 0
    explorer.steps.value = 1  # picking in the list
    assert explorer.position == 1 and "data-iteration='2'" in explorer.detail.value
    with pytest.raises(IndexError, match="position 2; this run has 2"):
        explorer.select(2)
    with pytest.raises(IndexError):
        explorer.select(-1)
    assert explorer.position == 1
    assert "unknown" in explorer.final.value and "ended by SUBMIT" in explorer.final.value


def test_explorer_shows_tool_calls_counters_and_turing_correction(rust_file, tmp_path):
    traj = turing_run(rust_file, tmp_path)
    explorer = TrajectoryExplorer(tmp_path / traj.run_id)  # the run directory
    assert explorer.steps.options[0][0].endswith("· Turing ×1")
    assert explorer.steps.options[1][0].startswith("2 · 1 tool call · ")
    first = explorer.detail.value
    assert "phantom_tool_result" in first and "[TURING CORRECTION]" in first and "step kept" in first
    assert "I searched the file" in first and "rlmlab-leakage" in first
    leak = traj.iterations[0].leakage
    assert f"<td style='padding:2px 8px;vertical-align:top'>{leak.prompt_chars:,}</td>" in first
    explorer.select(1)
    second = explorer.detail.value
    assert "rlmlab-tool-calls" in second and "ctx_find" in second and html.escape('"pattern": "async fn"') in second
    assert "no violations" in second
    assert explorer.final.value.count(traj.answer) >= 1


def test_explorer_static_html_holds_every_iteration(rust_file, tmp_path):
    traj = turing_run(rust_file, tmp_path)
    explorer = TrajectoryExplorer(traj)  # the Trajectory object itself
    bundle = explorer._repr_mimebundle_()
    assert WIDGET_MIME in bundle and bundle[WIDGET_MIME]["model_id"] == explorer.view.model_id
    static = bundle["text/html"]
    assert static.startswith("<div class='rlmlab-explorer'") and "<script" not in static
    assert re.findall(r"<details class='rlmlab-iteration' data-iteration='(\d+)'", static) == ["1", "2", "3"]
    for it in traj.iterations:
        assert html.escape(it.reasoning) in static and html.escape(it.output) in static
    assert "[TURING CORRECTION]" in static and "ctx_find" in static and "SUBMIT" in static
    assert traj.query in static and "ended by SUBMIT" in static


def test_explorer_without_iterations_and_bad_sources(tmp_path):
    empty = Trajectory(run_id="r0", query="q", lm="scripted", context_mode="handle", error="ValueError: boom")
    explorer = TrajectoryExplorer(empty)
    assert explorer.position is None and not explorer.next() and not explorer.prev()
    assert explorer.next_button.disabled and explorer.prev_button.disabled
    with pytest.raises(IndexError, match="no iterations"):
        explorer.select(0)
    assert "no iterations" in explorer.static_html() and "ValueError: boom" in explorer.static_html()
    with pytest.raises(FileNotFoundError, match="no trajectory file"):
        TrajectoryExplorer(tmp_path / "missing")
    with pytest.raises(TypeError, match="got int"):
        TrajectoryExplorer(3)


def test_explorer_escapes_model_text():
    it = IterationRecord(index=1, reasoning="<b>bold</b>", code="print('<script>')", output="<img src=x>",
                         tool_calls=[{"name": "ctx_peek", "arguments": {"ref": "<x>"}, "result_chars": 3,
                                      "error": None}], leakage=IterationLeakage(iteration=1),
                         input_tokens=1, output_tokens=1, elapsed_ms=1)
    explorer = TrajectoryExplorer(Trajectory(run_id="r", query="<q>", lm="l", context_mode="handle",
                                             iterations=[it]))
    static = explorer.static_html()
    assert "<b>bold</b>" not in static and "<img" not in static and "<script>" not in static
    assert "&lt;img src=x&gt;" in static and "&lt;q&gt;" in static


@pytest.mark.slow
def test_explorer_shows_each_sub_run_under_the_step_that_started_it(tmp_path, rust_file):
    traj = recursive_run(tmp_path)
    first, second = traj.children
    explorer = TrajectoryExplorer(tmp_path / traj.run_id)
    labels = [label for label, _ in explorer.steps.options]
    assert labels[0].endswith("LM tokens · 1 sub-run") and labels[1].endswith("· 1 sub-run")
    assert "sub-run" not in labels[2]
    # the call tree in the header: each run with its depth, answer, steps, tokens and seconds
    header = html.unescape(explorer.header.value)
    for run in traj.walk():
        assert (f"{run.run_id} · depth {run.depth} · answer {run.answer!r} · {len(run.iterations)} step"
                in header and f"tokens {run.input_tokens:,} + {run.output_tokens:,} · "
                f"{run.elapsed_ms / 1000:.1f} s" in header)
    assert "sub-runs 2 (depth 1 the deepest" in header and "sub-runs (2, rlm_query)" in header
    step1 = explorer.detail.value
    child = re.search(r"<details class='rlmlab-child' data-run-id='([^']+)' data-depth='(\d)' "
                      r"data-parent-step='(\d)'[^>]*><summary[^>]*>([^<]*)</summary>", step1)
    assert child and child.groups()[:3] == (first.run_id, "1", "1")
    assert html.unescape(child.group(4)).startswith(f"sub-run {first.run_id} · depth 1 · answer '7291' · 1 step")
    assert second.run_id not in step1
    # the sub-run's own steps inside it, in the same view; each LM call once, in the run that made it
    assert re.findall(r"<details class='rlmlab-child-step' data-iteration='(\d+)'", step1) == ["1"]
    assert html.escape(first.iterations[0].code) in step1
    assert step1.count("class='rlmlab-lm-call'") == 2  # the parent step's own call and the sub-run's
    assert f"final answer of sub-run {first.run_id}" in step1
    explorer.next()
    step2 = explorer.detail.value
    assert f"data-run-id='{second.run_id}' data-depth='1' data-parent-step='2'" in step2
    assert first.run_id not in step2 and html.escape("'nothing else'") in step2
    static = explorer.static_html()
    assert re.findall(r"<details class='rlmlab-iteration' data-iteration='(\d+)'", static) == ["1", "2", "3"]
    assert static.count("<details class='rlmlab-child' ") == 2 and "rlmlab-call-tree" in static
    # a sub-run whose step has no record (the run was interrupted during it) is shown after the steps
    import dataclasses

    cut = TrajectoryExplorer(dataclasses.replace(traj, iterations=traj.iterations[:1]))
    assert f"data-run-id='{second.run_id}' data-depth='1' data-parent-step='2'" in cut.final.value
    assert "sub-runs of a step with no record (1)" in cut.final.value and "a step with no record" in cut.header.value
    # a run without sub-runs shows none of it
    plain = TrajectoryExplorer(probe_run(rust_file, tmp_path))
    assert "rlmlab-child" not in plain.static_html() and "rlmlab-call-tree" not in plain.static_html()
