"""ContextTrace: budget arithmetic, the ring buffer, JSON round trip, rendering, and the RLM executor filling it."""

import json
import re

import pytest
from rich.console import Console

from rlmlab.executors import TRAJECTORY_FILE, Trajectory, run_rlm, trajectory_summary
from rlmlab.lm import count_tokens, make_lm
from rlmlab.trace import PREVIEW_CHARS, ContextEvent, ContextTrace, EventKind

KINDS = ["SystemPrompt", "GrepResult", "LlmQueryResult", "AssistantCode", "ExecutionOutput", "Final", "ToolCall",
         "ToolResult"]


def _render(renderable) -> str:
    console = Console(record=True, width=120)
    console.print(renderable)
    return console.export_text()


def test_event_kinds_keep_the_spec_names():
    assert [k.value for k in EventKind] == KINDS
    assert EventKind.GrepResult == "GrepResult"


def test_budget_percent_arithmetic():
    trace = ContextTrace(budget_tokens=200)
    trace.log_event(ContextEvent.system_prompt("sys", tokens=50))
    trace.log_event(ContextEvent.grep_result("async fn", 5, 30, iteration=1))
    s = trace.summary()
    assert s.total_tokens == 80 and s.budget_used_percent == 40.0 and not s.over_budget
    trace.log_event(ContextEvent.execution_output("out", tokens=170, iteration=1))
    s = trace.summary()
    assert s.total_tokens == 250 and s.budget_used_percent == 125.0 and s.over_budget
    assert s.tokens_by_kind["SystemPrompt"] == 50 and s.tokens_by_kind["GrepResult"] == 30
    assert s.tokens_by_kind["ExecutionOutput"] == 170 and s.tokens_by_kind["Final"] == 0
    assert list(s.tokens_by_kind) == KINDS and s.events_by_kind["GrepResult"] == 1
    assert s.tokens_by_iteration == {0: 50, 1: 200}
    # Exactly at the budget is not over it.
    exact = ContextTrace(budget_tokens=10)
    exact.log_event(ContextEvent.final("x", tokens=10))
    assert exact.summary().budget_used_percent == 100.0 and not exact.summary().over_budget


def test_constructors_count_tokens_and_clip_the_preview():
    out = ContextEvent.execution_output("alpha beta, gamma", iteration=2)
    assert out.tokens == count_tokens("alpha beta, gamma") == 4 and out.kind is EventKind.ExecutionOutput
    assert ContextEvent.assistant_code("x = 1", tokens=99).tokens == 99
    long = ContextEvent.llm_query_result("y" * 1000)
    assert len(long.preview) == PREVIEW_CHARS and long.content_chars == 1000
    grep = ContextEvent.grep_result("fn", 12, content='{"total": 12}', iteration=3)
    assert (grep.pattern, grep.matches, grep.tool, grep.tokens) == ("fn", 12, "ctx_find", count_tokens('{"total": 12}'))
    with pytest.raises(ValueError, match="give tokens"):
        ContextEvent.grep_result("fn", 1)
    with pytest.raises(ValueError, match="budget_tokens"):
        ContextTrace(budget_tokens=0)


def test_ring_buffer_keeps_1000_and_totals_include_dropped():
    trace = ContextTrace(budget_tokens=8000)
    for i in range(1050):
        trace.log_event(ContextEvent.tool_result("ctx_peek", "r", tokens=i % 7 + 1, iteration=i // 100))
    s = trace.summary()
    assert len(trace) == s.events_kept == 1000 and trace.dropped == s.dropped == 50 and s.events_logged == 1050
    assert s.total_tokens == sum(i % 7 + 1 for i in range(1050))
    assert s.tokens_by_kind["ToolResult"] == s.total_tokens and s.events_by_kind["ToolResult"] == 1050
    # Iteration 0 held events 0..99; 50 of them were dropped, and still count.
    assert s.tokens_by_iteration[0] == sum(i % 7 + 1 for i in range(100))
    assert sum(e.tokens for e in trace) < s.total_tokens
    assert next(iter(trace)).iteration == 0 and trace.events[0] is not None
    assert s.budget_used_percent == pytest.approx(100 * s.total_tokens / 8000)


def test_round_trip_through_json_keeps_counters_and_events():
    trace = ContextTrace(budget_tokens=100, max_events=3)
    trace.log_event(ContextEvent.system_prompt("system", tokens=40))
    trace.log_event(ContextEvent.grep_result("a|b", 7, 11, iteration=1))
    trace.log_event(ContextEvent.tool_call("ctx_slice", '{"start": 10, "end": 5}', iteration=1))
    trace.log_event(ContextEvent.tool_result("ctx_slice", "start after end", error="start after end", iteration=1))
    again = ContextTrace.from_dict(json.loads(json.dumps(trace.to_dict())))
    assert again.summary() == trace.summary() and again.summary().dropped == 1
    assert list(again) == list(trace) and again.of_kind("GrepResult")[0].matches == 7
    assert again.of_kind(EventKind.ToolResult)[0].error == "start after end"
    # Logging after a reload continues the counters, including drops.
    again.log_event(ContextEvent.final("done", tokens=5, iteration=1))
    s = again.summary()
    assert s.dropped == 2 and s.events_logged == 5 and s.total_tokens == trace.summary().total_tokens + 5
    assert s.tokens_by_iteration[1] == trace.summary().tokens_by_iteration[1] + 5


def test_rich_render_lists_every_kind_budget_and_drops():
    trace = ContextTrace(budget_tokens=40, max_events=2)
    for tokens in (10, 20, 30):
        trace.log_event(ContextEvent.assistant_code("x", tokens=tokens, iteration=1))
    text = _render(trace)
    caption = " ".join(text.split()[-15:])  # the caption may wrap
    assert all(kind in text for kind in KINDS)
    assert caption == "context-trace tokens 60: 150.0% of the 40-token trace budget · over budget · 1 dropped"
    assert re.search(r"AssistantCode\s*│\s*3\s*│\s*60\s*│\s*150\.0%", text)


def test_html_escapes_content():
    trace = ContextTrace()
    trace.log_event(ContextEvent.llm_query_result("<script>alert(1)</script>", iteration=1))
    html = trace._repr_html_()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    assert "LlmQueryResult" in html and "<table>" in html


def test_rlm_run_fills_the_trace_and_jsonl_keeps_it(rust_file, tmp_path):
    text = rust_file.read_text()
    total = len(re.findall(r"pub async fn", text))
    assert total > 3  # so k=3 returns fewer matches than the total the trace must record
    lm = make_lm("scripted", script=[
        {"reasoning": "grep", "code": "hits = ctx_find(context, r'pub async fn', k=3)\nprint(hits['total'])"},
        {"reasoning": "ask", "code": "a = llm_query('summarise: ' + ctx_peek(context, 40)['preview'])\nprint(a)"},
        "a file handle",
        {"reasoning": "done", "code": "SUBMIT(answer=a + ' ' + str(hits['total']))"},
    ])
    traj = run_rlm("How many pub async fns?", text, lm=lm, runs_dir=tmp_path, trace_budget=1000)
    assert traj.error is None and traj.answer == f"a file handle {total}"
    trace, its = traj.context_trace, traj.iterations
    kinds = [e.kind.value for e in trace]
    assert kinds == ["SystemPrompt", "AssistantCode", "GrepResult", "ExecutionOutput",
                     "AssistantCode", "ToolCall", "ToolResult", "LlmQueryResult", "ExecutionOutput",
                     "AssistantCode", "ExecutionOutput", "Final"]
    (grep,) = trace.of_kind("GrepResult")
    assert (grep.pattern, grep.matches, grep.iteration) == ("pub async fn", total, 1)
    code = trace.of_kind("AssistantCode")
    assert [e.iteration for e in code] == [1, 2, 3] and [e.tokens for e in code] == [i.output_tokens for i in its]
    outputs = trace.of_kind("ExecutionOutput")
    assert [e.tokens for e in outputs] == [count_tokens(i.output) for i in its] and outputs[0].preview == str(total)
    (system,) = trace.of_kind("SystemPrompt")
    assert system.tokens == its[0].input_tokens > 0 and system.iteration == 0
    (sub,) = trace.of_kind("LlmQueryResult")
    assert sub.preview == "a file handle" and sub.tokens == count_tokens("a file handle") and sub.iteration == 2
    (call,), (result,) = trace.of_kind("ToolCall"), trace.of_kind("ToolResult")
    assert call.tool == result.tool == "ctx_peek" and '"n": 40' in call.preview and result.error is None
    (final,) = trace.of_kind("Final")
    assert final.preview == traj.answer and final.iteration == 3
    s = trace.summary()
    assert s.budget_tokens == 1000 and s.total_tokens == sum(e.tokens for e in trace) and s.over_budget
    assert s.budget_used_percent == pytest.approx(s.total_tokens / 10)
    # Written as its own line before `final`, and read back with the same summary.
    path = tmp_path / traj.run_id / TRAJECTORY_FILE
    types = [json.loads(line)["type"] for line in path.read_text().splitlines()]
    assert types == ["run", "iteration", "iteration", "iteration", "context_trace", "final"]
    again = Trajectory.read_jsonl(path)
    assert again.context_trace.summary() == s and list(again.context_trace) == list(trace)
    # The terminal summary shows it.
    assert "Context trace" in _render(trajectory_summary(traj)) and "GrepResult" in _render(trajectory_summary(again))


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_failed_tool_call_and_batched_sub_calls():
    lm = make_lm("scripted", script=[
        {"reasoning": "bad", "code": "r = llm_query_batched(['one?', 'two?'])\nctx_slice(context, 10, 5)"},
        "first", "second",
        {"reasoning": "done", "code": "SUBMIT(answer=' '.join(r))"},
    ])
    traj = run_rlm("q", "some context text", lm=lm)
    trace = traj.context_trace
    assert sorted(e.preview for e in trace.of_kind("LlmQueryResult")) == ["first", "second"]
    (result,) = trace.of_kind("ToolResult")
    assert result.tool == "ctx_slice" and "start: 10 is after end 5" in result.error
    assert result.tokens == count_tokens(result.error)
    assert not trace.of_kind("GrepResult") and trace.summary().events_by_kind["ToolCall"] == 1


def test_trajectory_without_trace_line_still_reads(tmp_path):
    path = Trajectory(run_id="old", query="q", lm="scripted", context_mode="handle", answer="a").write_jsonl(
        tmp_path / TRAJECTORY_FILE)
    assert [json.loads(line)["type"] for line in path.read_text().splitlines()] == ["run", "final"]
    again = Trajectory.read_jsonl(path)
    assert again.context_trace is None and again.answer == "a"
    assert "Context trace" not in _render(trajectory_summary(again))
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], '{"type": "context_trace", "events": []}', lines[1]]))
    with pytest.raises(ValueError, match=r"trajectory.jsonl:2: malformed context_trace"):
        Trajectory.read_jsonl(path)


def test_bad_trace_budget_fails_before_the_run():
    with pytest.raises(ValueError, match="budget_tokens"):
        run_rlm("q", "c", lm=make_lm("scripted", script=[]), trace_budget=0)


def test_the_resend_note_explains_a_ratio_only_when_more_was_sent_than_traced():
    """Issue 30: "every call re-sends the system prompt" was printed beside a ratio below 1, where it explains
    nothing. The note states the numbers; the explanation comes only when the prompts outweigh the trace."""
    from types import SimpleNamespace

    from rlmlab._figures import resend_note
    from rlmlab.trace import ContextEvent, ContextTrace

    trace = ContextTrace()
    trace.log_event(ContextEvent.tool_result("ctx_peek", "x" * 400, tokens=1000))
    assert resend_note(SimpleNamespace(context_trace=trace, input_tokens=0)) == ""
    below = resend_note(SimpleNamespace(context_trace=trace, input_tokens=500))
    above = resend_note(SimpleNamespace(context_trace=trace, input_tokens=3000))
    assert below.startswith("This run sent 500 prompt tokens for 1,000") and "0.5×" in below
    assert "re-sends" not in below and "3.0× (every call re-sends the system prompt" in above
