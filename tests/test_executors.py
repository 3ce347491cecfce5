"""The three executors (rlm, react, scratchpad) by name, on a real Rust file, with the scripted LM."""

import json

import pytest

from rlmlab.errors import ConfigError
from rlmlab.executors._trajectory import clip_output
from rlmlab.executors import (
    EXECUTORS, TRAJECTORY_FILE, Trajectory, make_executor, parse_reply, run_react, run_scratchpad,
)
from rlmlab.lm import make_lm
from rlmlab.trace import ContextTrace, EventKind
from rlmlab.turing import TuringProtocol

QUERY = "How many `pub async fn` are in this file?"
INSTRUCTIONS = "HOUSE RULE 7: count with ctx_find, never by reading the whole file."


def _recording(responses):
    """A scripted LM that also keeps every prompt it was sent (all messages joined)."""
    prompts = []

    def script(messages):
        prompts.append("\n".join(m["content"] for m in messages))
        return responses[len(prompts) - 1]

    return make_lm("scripted", script=script), prompts


def _find_args(pattern="pub async fn", k=50):
    return json.dumps({"ref": "context", "pattern": pattern, "k": k})


def _count_steps(name, n):
    """One scripted solution per executor: search with ctx_find, then answer ``n``."""
    if name == "rlm":
        return [{"reasoning": "Search.", "code": "hits = ctx_find(context, r'pub async fn', k=50)\nprint(hits['total'])"},
                {"reasoning": "Submit.", "code": "SUBMIT(answer=str(hits['total']))"}]
    if name == "react":
        return [{"next_thought": "Search.", "next_tool_name": "ctx_find", "next_tool_args": _find_args()},
                {"next_thought": "I have the total.", "next_tool_name": "finish", "next_tool_args": "{}"},
                {"reasoning": "ctx_find reported the total.", "answer": str(n)}]
    return ["Search.\n```python\nhits = ctx_find(context, r'pub async fn', k=50)\nprint(hits['total'])\n```",
            "Submit.\n```python\nSUBMIT(answer=str(hits['total']))\n```"]


def test_react_on_real_rust_file(rust_file, tmp_path):
    text = rust_file.read_text()
    n = text.count("pub async fn")
    lm, prompts = _recording(_count_steps("react", n))
    traj = run_react(QUERY, text, lm=lm, runs_dir=tmp_path, source_path=str(rust_file))
    assert traj.error is None and traj.submitted and traj.answer == str(n)
    assert traj.executor == "react" and traj.context_ref == "context"
    first, second = traj.iterations
    # No code: each step is one tool call, written as a Python call; the observation is the tool's result.
    assert first.code == "ctx_find(ref='context', pattern='pub async fn', k=50)"
    assert json.loads(first.output)["total"] == n
    assert first.tool_calls[0]["name"] == "ctx_find" and first.leakage.tool_calls == 1
    assert second.code == "finish()" and second.output == "Completed." and second.tool_calls == []
    assert first.leakage.stdout_chars == len(first.output)
    # The model sees the handle's key, never the text.
    assert "BlobRef(key='context'" in prompts[0] and text[:300] not in prompts[0]
    assert all(it.input_tokens > 0 and it.leakage.prompt_chars > 0 for it in traj.iterations)
    assert traj.lm_calls == 3 and traj.input_tokens > sum(it.input_tokens for it in traj.iterations)  # + extract
    kinds = [e.kind for e in traj.context_trace]
    assert kinds[0] is EventKind.SystemPrompt and EventKind.GrepResult in kinds and kinds[-1] is EventKind.Final
    path = tmp_path / traj.run_id / TRAJECTORY_FILE
    again = Trajectory.read_jsonl(path)
    assert again.executor == "react" and again.answer == traj.answer
    assert again.iterations[0].leakage == first.leakage and again.iterations[0].code == first.code


def test_react_tool_errors_and_turing(rust_file):
    text = rust_file.read_text()
    n = text.count("async fn")
    steps = [{"next_thought": "Search.", "next_tool_name": "ctx_find", "next_tool_args": _find_args("async fn", 500)},
             {"next_thought": "Search again.", "next_tool_name": "ctx_find", "next_tool_args": _find_args("async fn", 1)},
             {"next_thought": "Done.", "next_tool_name": "finish", "next_tool_args": "{}"},
             {"reasoning": "total", "answer": str(n)}]
    plain = run_react(QUERY, text, lm=make_lm("scripted", script=steps))
    # A ToolError is the step's observation and the loop goes on.
    assert plain.iterations[0].output.startswith("[Error] ToolError: k: 500")
    assert plain.answer == str(n) and plain.iterations[0].tool_calls[0]["error"]
    guarded = run_react(QUERY, text, lm=make_lm("scripted", script=steps), turing=TuringProtocol())
    blocked = guarded.iterations[0]
    assert blocked.turing[0]["hooks"] == ["tool_schema_validation"] and "was blocked" in blocked.output
    assert blocked.tool_calls == [] and guarded.iterations[1].turing == [] and guarded.answer == str(n)


def test_scratchpad_truncated_history(rust_file, tmp_path):
    text = rust_file.read_text()
    n = text.count("pub async fn")
    codes = ["first = ctx_stats(context)\nprint(first['lines'])",
             "big = ctx_slice(context, 0, 3000)['text']\nprint(big)",
             "hits = ctx_find(context, r'pub async fn', k=50)\nprint(hits['total'])",
             "count = hits['total']\nprint('count', count)",
             "SUBMIT(answer=str(count))"]
    lm, prompts = _recording([f"Step {i}.\n```python\n{c}\n```" for i, c in enumerate(codes, 1)])
    traj = run_scratchpad(QUERY, text, lm=lm, history_k=3, max_output_chars=500, runs_dir=tmp_path)
    assert traj.error is None and traj.submitted and traj.answer == str(n) and traj.executor == "scratchpad"
    it = traj.iterations
    assert [i.output for i in it[2:4]] == [str(n), f"count {n}"] and it[4].output.startswith("FINAL:")
    assert [i.leakage.tool_calls for i in it] == [1, 1, 1, 0, 0] and it[1].leakage.large_returns == 1
    # the record keeps the output as the model saw it (clipped like the prompt) and its full size (issue 17)
    assert it[1].output == clip_output(text[:3000], 500) and it[1].output_chars == 3000
    fifth = prompts[4]
    assert codes[0] not in fifth and all(c in fifth for c in codes[1:4])  # only the last 3 steps
    assert "1 earlier step not shown" in fifth
    assert "(2,500 of 3,000 characters omitted)" in fifth and text[1000:1500] not in fifth
    # The namespace persists: step 1's variable is still listed though its code is gone.
    assert "- first: dict" in fifth and "- context: BlobRef" in fifth
    assert all(i.input_tokens > 0 for i in it) and it[4].leakage.variables_info_chars > it[0].leakage.variables_info_chars
    assert len(traj.context_trace.of_kind(EventKind.AssistantCode)) == 5
    again = Trajectory.read_jsonl(tmp_path / traj.run_id / TRAJECTORY_FILE)
    assert again.executor == "scratchpad" and again.iterations[3].output == f"count {n}"


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_scratchpad_sub_llm_turing_and_no_submit(rust_file):
    text = rust_file.read_text()
    lm = make_lm("scripted", script=[
        "```python\na = llm_query('name one fn: ' + ctx_peek(context, 50)['preview'])\nprint(a)\n```",
        "open",
        "```python\nSUBMIT(answer=a)\n```",
    ])
    traj = run_scratchpad(QUERY, text, lm=lm)
    assert traj.answer == "open" and traj.subcalls == 1 and traj.iterations[0].leakage.sub_llm_calls == 1
    # Turing: a SUBMIT of a literal never seen in any output is discarded, as in the RLM executor.
    n = text.count("async fn")
    steps = ["I know it.\n```python\nSUBMIT(answer='There are 99 async functions')\n```",
             "```python\nn = ctx_find(context, r'async fn', k=1)['total']\nprint(n)\n```",
             "```python\nSUBMIT(answer=str(n))\n```"]
    traj = run_scratchpad(QUERY, text, lm=make_lm("scripted", script=steps), turing=TuringProtocol())
    assert traj.iterations[0].turing[0]["kill"] and "not executed" in traj.iterations[0].output
    assert traj.answer == str(n)
    traj = run_scratchpad(QUERY, text, lm=make_lm("scripted", script=["print(1)", "x = 1"]), max_iters=2)
    assert traj.answer is None and not traj.submitted and traj.error is None
    assert [i.output for i in traj.iterations] == ["1", "(no output - did you forget to print?)"]


def test_parse_reply():
    assert parse_reply("Look.\n```python\nprint(1)\n```\nthen\n```\nprint(2)\n```") == ("Look.\n\nthen", "print(1)\nprint(2)")
    assert parse_reply("print(3)") == ("", "print(3)")


@pytest.mark.parametrize("name", ["rlm", "react", "scratchpad"])
def test_instructions_reach_every_executor(name, rust_file):
    text = rust_file.read_text()
    lm, prompts = _recording(_count_steps(name, text.count("pub async fn")))
    traj = make_executor(name)(QUERY, text, lm=lm, instructions=INSTRUCTIONS)
    assert traj.error is None and INSTRUCTIONS in prompts[0]


@pytest.mark.parametrize("name", ["rlm", "react", "scratchpad"])
def test_every_executor_logs_into_a_supplied_trace(name, rust_file):
    text = rust_file.read_text()
    trace = ContextTrace(budget_tokens=50_000)
    seen = []
    trace.subscribe(seen.append)
    lm = make_lm("scripted", script=_count_steps(name, text.count("pub async fn")))
    traj = make_executor(name)(QUERY, text, lm=lm, trace=trace)
    assert traj.error is None and traj.context_trace is trace and trace.budget_tokens == 50_000
    assert seen == list(trace) and seen[0].kind is EventKind.SystemPrompt and seen[-1].kind is EventKind.Final
    assert {e.iteration for e in seen} == {0, 1, 2}
    # A trace belongs to one run: it is given per call, never bound for every task an executor runs.
    with pytest.raises(ConfigError, match=r"unknown option\(s\) trace"):
        make_executor(name, trace=trace)


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_all_executors_one_call_same_shape(rust_file, tmp_path):
    text = rust_file.read_text()
    n = text.count("pub async fn")
    assert EXECUTORS.names() == ["direct", "react", "rlm", "scratchpad"]  # direct: one call, no steps (test_direct)
    runs = {}
    for name in ("react", "rlm", "scratchpad"):
        lm = make_lm("scripted", script=_count_steps(name, n))
        runs[name] = EXECUTORS.make(name, max_iters=4)(QUERY, text, lm=lm, runs_dir=tmp_path)
    for name, traj in runs.items():
        assert traj.executor == name and traj.error is None and traj.submitted and traj.answer == str(n)
        assert len(traj.iterations) == 2 and traj.input_tokens > 0 and traj.lm_calls >= 2
        assert traj.iterations[0].tool_calls[0]["name"] == "ctx_find"
        assert traj.context_trace is not None and traj.context_trace.summary().total_tokens > 0
    shapes = {name: [sorted(r) for r in traj.to_records()] for name, traj in runs.items()}
    assert shapes["rlm"] == shapes["react"] == shapes["scratchpad"]
    assert Trajectory.read_jsonl(tmp_path / runs["rlm"].run_id / TRAJECTORY_FILE).executor == "rlm"


def test_registry_errors_and_old_trajectories(tmp_path):
    with pytest.raises(ConfigError, match="unknown 'codeact'; registered: direct, react, rlm, scratchpad"):
        make_executor("codeact")
    with pytest.raises(ConfigError, match=r"react.*unknown option\(s\) history_k"):
        EXECUTORS.make("react", history_k=2)
    assert EXECUTORS.accepts("scratchpad", "history_k") and not EXECUTORS.accepts("rlm", "history_k")
    assert make_executor("scratchpad", history_k=1).to_dict() == {"name": "scratchpad", "options": {"history_k": 1}}
    # A trajectory written before executors had names reads back as an rlm run.
    path = tmp_path / "old.jsonl"
    header = {"type": "run", "run_id": "old", "query": "q", "lm": "scripted", "context_mode": "handle"}
    path.write_text(json.dumps(header) + "\n" + json.dumps({"type": "final", "answer": "a"}) + "\n")
    assert Trajectory.read_jsonl(path).executor == "rlm"
    # Trajectories carry a schema version; one from a newer rlmlab is refused in one line.
    assert Trajectory(run_id="x", query="q", lm="s", context_mode="handle").header()["schema_version"] == 6
    path.write_text(json.dumps({**header, "schema_version": 99}) + "\n")
    with pytest.raises(ConfigError, match=r"old.jsonl: trajectory schema_version 99 is newer than this rlmlab reads"):
        Trajectory.read_jsonl(path)


# -- the error split: only ToolError goes back to the model (issue 18, defect 5) ------------------------------

def _peek_capped_at(cap):
    """The real tools, with ctx_peek registered under a cap its result breaks (a tool bug, not the model's)."""
    import dataclasses

    from rlmlab.tools import TOOLS, ToolRegistry

    reg = ToolRegistry()
    for spec in TOOLS:
        reg.register(dataclasses.replace(spec, cap=cap) if spec.name == "ctx_peek" else spec)
    return reg


def test_react_a_cap_violation_ends_the_run_and_is_recorded(rust_file):
    text = rust_file.read_text()
    steps = [{"next_thought": "Bad k.", "next_tool_name": "ctx_find", "next_tool_args": _find_args("async fn", 500)},
             {"next_thought": "Peek.", "next_tool_name": "ctx_peek", "next_tool_args": '{"ref": "context", "n": 400}'},
             {"next_thought": "Done.", "next_tool_name": "finish", "next_tool_args": "{}"},
             {"reasoning": "x", "answer": "never"}]
    traj = run_react(QUERY, text, lm=make_lm("scripted", script=steps), tools=_peek_capped_at(100))
    # The ToolError (k over its cap) went back to the model; the cap violation ended the run.
    assert traj.iterations[0].output.startswith("[Error] ToolError: k: 500")
    assert traj.error.startswith("RuntimeError: tool ctx_peek returned") and "registered cap of 100" in traj.error
    assert len(traj.iterations) == 2 and traj.iterations[1].output.endswith("(the run ended)")
    assert traj.answer in (None, "") and not traj.submitted


def test_rlm_a_cap_violation_ends_the_run_and_a_tool_error_does_not(rust_file):
    from rlmlab.executors import run_rlm

    text = rust_file.read_text()
    steps = [{"reasoning": "Bad k.", "code": "hits = ctx_find(context, 'async fn', k=500)"},
             {"reasoning": "Peek.", "code": "print(ctx_peek(context, 400))"},
             {"reasoning": "Submit.", "code": "SUBMIT(answer='never')"}]
    traj = run_rlm(QUERY, text, lm=make_lm("scripted", script=steps), tools=_peek_capped_at(100))
    assert "ToolError: k: 500" in traj.iterations[0].output
    assert traj.error.startswith("RuntimeError: tool ctx_peek returned") and len(traj.iterations) == 2
    assert traj.iterations[1].code == "print(ctx_peek(context, 400))"
    assert traj.iterations[1].output.endswith("(the run ended)") and not traj.submitted


def test_react_task_is_one_user_turn_for_the_turing_guard(rust_file):
    # Issue 18, defect 2: the ctx_find of step 1 counts for step 2's "I'll report the total now." + finish,
    # which was a false empty_promise when the protocol looked at one step only.
    text = rust_file.read_text()
    n = text.count("pub async fn")
    steps = [{"next_thought": "Search.", "next_tool_name": "ctx_find", "next_tool_args": _find_args()},
             {"next_thought": "I'll report the total now.", "next_tool_name": "finish", "next_tool_args": "{}"},
             {"reasoning": "ctx_find reported the total.", "answer": str(n)}]
    traj = run_react(QUERY, text, lm=make_lm("scripted", script=steps), turing=TuringProtocol())
    assert traj.answer == str(n) and [it.turing for it in traj.iterations] == [[], []]
    # The other side of the boundary: a new task whose first step makes the same promise with no call.
    alone = [steps[1], {"reasoning": "none", "answer": "?"}]
    first = run_react(QUERY, text, lm=make_lm("scripted", script=alone), turing=TuringProtocol()).iterations[0]
    assert first.turing[0]["hooks"] == ["empty_promise"]


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_converged_counts_submitted_answers_and_the_extract_fallback_is_its_own_figure(rust_file):
    """Issue 30: a run that hit the iteration limit and was answered only by DSPy's extract fallback counted as
    converged. Now ``converged`` is SUBMIT with no error, and ``fallback`` marks the other kind of answer."""
    from rlmlab.executors import run_rlm, trajectory_metrics

    text = rust_file.read_text()
    limit = [{"reasoning": "Look.", "code": "x = 1"}, {"reasoning": "Look again.", "code": "print(x + 1)"},
             {"reasoning": "From the output.", "answer": "2"}]
    fell_back = run_rlm(QUERY, text, lm=make_lm("scripted", script=limit), max_iters=2)
    submitted = run_rlm(QUERY, text, lm=make_lm("scripted", script=[
        {"reasoning": "Count.", "code": "n = ctx_find(context, r'async fn', k=1)['total']\nSUBMIT(answer=str(n))"}]))
    assert fell_back.answer == "2" and not fell_back.submitted and submitted.submitted
    metrics = [trajectory_metrics(t) for t in (fell_back, submitted)]
    assert [(m["converged"], m["fallback"]) for m in metrics] == [(False, True), (True, False)]
