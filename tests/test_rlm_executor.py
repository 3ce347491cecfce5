"""Full scripted dspy.RLM runs through the rlmlab interpreter (separate worker process)."""

import json

import pytest

from rlmlab.executors import TRAJECTORY_FILE, Trajectory, run_rlm
from rlmlab.lm import make_lm
from rlmlab.tools import Workspace
from rlmlab.trace import ContextTrace, EventKind
from helpers import steps


def test_scripted_run_on_real_rust_file(rust_file, tmp_path):
    text = rust_file.read_text()
    lm = make_lm("scripted", script=steps(
        "print(type(context).__name__, repr(context))",
        "s = ctx_stats(context)\nprint(s['lines'])",
        "hits = ctx_find(context, r'pub async fn', k=50)\nprint(hits['total'])",
        "ctx_slice(context, 10, 5)",
        "big = ctx_slice(context, 0, 3000)\nprint(big['text'])",
        "SUBMIT(answer=str(hits['total']))",
    ))
    traj = run_rlm("How many pub async fns?", text, lm=lm, runs_dir=tmp_path, source_path=str(rust_file))
    assert traj.error is None and traj.submitted
    assert traj.answer == str(text.count("pub async fn"))
    it = traj.iterations
    assert len(it) == 6
    assert it[0].output == f"BlobRef BlobRef(key='context', n={len(text)})"
    assert it[1].output == str(len(text.splitlines()))
    # The ToolError reaches the model as the step's output and the loop goes on.
    assert "ToolError: start: 10 is after end 5" in it[3].output and it[3].tool_calls[0]["error"]
    # Leakage counters per iteration.
    assert [i.leakage.tool_calls for i in it] == [0, 1, 1, 1, 1, 0]
    assert [i.leakage.large_returns for i in it] == [0, 0, 0, 0, 1, 0]
    assert it[4].leakage.stdout_chars == 3000 and it[0].leakage.stdout_chars == len(it[0].output)
    assert all(i.leakage.variables_info_chars == it[0].leakage.variables_info_chars > 0 for i in it)
    assert all(i.leakage.prompt_chars > 0 and i.input_tokens > 0 for i in it)
    # The prompt grows as history accumulates.
    assert it[5].leakage.prompt_chars > it[0].leakage.prompt_chars
    assert traj.input_tokens == sum(i.input_tokens for i in it) and traj.lm_calls == 6
    # Written as JSONL and read back.
    path = tmp_path / traj.run_id / TRAJECTORY_FILE
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["type"] for r in lines] == ["run"] + ["iteration"] * 6 + ["context_trace", "final"]
    again = Trajectory.read_jsonl(path)
    assert again.answer == traj.answer and again.iterations[4].leakage == it[4].leakage


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_string_mode_leaks_more_into_variable_listing(rust_file):
    text = rust_file.read_text()
    handle = run_rlm("q", text, lm=make_lm("scripted", script=steps(
        "print(ctx_stats(context)['length'])", "SUBMIT(answer='done')")), context_mode="handle")
    plain = run_rlm("q", text, lm=make_lm("scripted", script=steps(
        "print(len(context))", "SUBMIT(answer='done')")), context_mode="string")
    assert plain.iterations[0].output == handle.iterations[0].output == str(len(text))
    # DSPy previews 1,000 characters of a string input; the handle shows one line.
    assert plain.iterations[0].leakage.variables_info_chars > 2 * handle.iterations[0].leakage.variables_info_chars


def test_sub_llm_calls_are_counted():
    lm = make_lm("scripted", script=[
        {"reasoning": "ask", "code": "a = llm_query('summarise: ' + ctx_peek(context, 20)['preview'])\nprint(a)"},
        "sub-answer",
        {"reasoning": "done", "code": "SUBMIT(answer=a)"},
    ])
    traj = run_rlm("q", "some context text", lm=lm)
    assert traj.answer == "sub-answer" and traj.iterations[0].leakage.sub_llm_calls == 1
    assert traj.subcalls == 1 and traj.lm_calls == 3
    assert traj.iterations[0].leakage.prompt_tokens < traj.input_tokens  # the sub-call is not an action prompt


@pytest.mark.slow
def test_step_timeout_restarts_worker_and_keeps_inputs():
    lm = make_lm("scripted", script=steps(
        "x = 1\nimport time\ntime.sleep(30)",
        "print(repr(context), 'x' in globals())",
        "SUBMIT(answer='ok')",
    ))
    traj = run_rlm("q", "payload", lm=lm, step_timeout=2.0)
    assert "TimeoutError: the step ran over 2s" in traj.iterations[0].output
    assert traj.iterations[1].output == "BlobRef(key='context', n=7) False"
    assert traj.answer == "ok"


def test_max_iterations_uses_extract_fallback():
    lm = make_lm("scripted", script=steps("print('found: guessed')", "print(2)") + [{"answer": "guessed"}])
    traj = run_rlm("q", "ctx", lm=lm, max_iters=2)
    assert traj.answer == "guessed" and not traj.submitted and len(traj.iterations) == 2


@pytest.mark.parametrize("written", ["'{answer}'", "{answer}", "<answer>", "The output is:", "56"])
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_extract_fallback_never_returns_a_placeholder_or_an_uncomputed_value(written):
    """Issue 53: the extract step wrote the literal '{answer}' (13 of 40 text questions) or a sentence; an answer the
    run never computed is no answer, and the run says so."""
    lm = make_lm("scripted", script=steps("print(ctx_stats(context)['lines'])", "x = 1") + [{"answer": written}])
    traj = run_rlm("How many lines?", "a\nb\nc", lm=lm, max_iters=2)
    assert traj.answer == "" and not traj.submitted
    assert any(n.startswith("extract fallback:") and "without an answer" in n for n in traj.notes), traj.notes
    lm = make_lm("scripted", script=steps("print(ctx_stats(context)['lines'])", "x = 1") + [{"answer": "3"}])
    assert run_rlm("How many lines?", "a\nb\nc", lm=lm, max_iters=2).answer == "3"  # a value a step printed stands


def test_lm_failure_is_recorded_and_iterations_kept(tmp_path):
    lm = make_lm("scripted", script=steps("print(ctx_stats(context)['length'])"))
    traj = run_rlm("q", "abc", lm=lm, runs_dir=tmp_path)
    assert traj.error and "ran out of responses" in traj.error
    assert len(traj.iterations) == 1 and traj.iterations[0].output == "3"
    assert (tmp_path / traj.run_id / TRAJECTORY_FILE).exists()


def test_shared_workspace_blobs_visible_to_agent():
    ws = Workspace()
    ws.store.put("extra data", name="notes")
    lm = make_lm("scripted", script=steps("print(ctx_peek('notes', 5)['preview'])", "SUBMIT(answer='x')"))
    traj = run_rlm("q", "ctx", lm=lm, workspace=ws)
    assert traj.iterations[0].output == "extra"


def test_bad_context_mode():
    with pytest.raises(ValueError, match="context_mode"):
        run_rlm("q", "c", lm=make_lm("scripted", script=[]), context_mode="raw")


def test_supplied_trace_receives_each_iterations_events_as_the_run_goes():
    responses = steps("print(ctx_stats(context)['length'])", "SUBMIT(answer='3')")
    lm_calls = []

    def script(messages):
        lm_calls.append(messages)
        return responses[len(lm_calls) - 1]

    trace = ContextTrace(budget_tokens=500)
    seen = []  # (event, LM calls made when it was logged)
    trace.subscribe(lambda event: seen.append((event, len(lm_calls))))
    traj = run_rlm("q", "abc", lm=make_lm("scripted", script=script), trace=trace, trace_budget=99_999)
    assert traj.error is None and traj.answer == "3"
    # The caller's trace is the run's, with its own budget (trace_budget is ignored).
    assert traj.context_trace is trace and trace.summary().budget_tokens == 500
    assert [e for e, _ in seen] == list(trace) and trace.events_logged == len(seen) > 0
    # Each iteration's events arrive when that iteration ends, not all at the end of the run.
    assert [(e.kind, e.iteration, calls) for e, calls in seen] == [
        (EventKind.SystemPrompt, 0, 1), (EventKind.AssistantCode, 1, 1), (EventKind.ToolCall, 1, 1),
        (EventKind.ToolResult, 1, 1), (EventKind.ExecutionOutput, 1, 1),
        (EventKind.AssistantCode, 2, 2), (EventKind.ExecutionOutput, 2, 2), (EventKind.Final, 2, 2),
    ]


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_without_a_trace_each_run_gets_its_own_with_trace_budget():
    lm = make_lm("scripted", script=steps("SUBMIT(answer='a')") * 2)
    first, second = (run_rlm("q", "c", lm=lm, trace_budget=123) for _ in range(2))
    assert first.context_trace is not second.context_trace
    assert first.context_trace.budget_tokens == second.context_trace.budget_tokens == 123
