"""Seconds per task: the compact prompt's layout (the shared part byte-identical across tasks and samples, the
task's part after it), the time breakdown every run writes, and where it is shown. Scripted LM throughout; the
plan cap on the real model is in test_step_grammar.py."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time

import pytest

from rlmlab.executors import COMPACT_INSTRUCTIONS, TIME_PARTS, TRAJECTORY_FILE, TimeBreakdown, Trajectory, run_rlm
from rlmlab.experiments import run_experiment
from rlmlab.lm import CallTiming, make_lm, read_calls, recorder_of
from rlmlab.lm._scripts import output_fields
from rlmlab.memory import MemoryTask

TASKS = [("What is 12 + 30?", "Notes for task one: add the two numbers.\n  Code:\n    n = {{a:number}} + {{b:number}}"),
         ("How many lines does the context have?", "Notes for task two: count lines with ctx_stats.")]


def _script(messages):
    fields = output_fields(messages)
    if fields != ["reasoning", "code"]:
        return {name: "x" for name in fields}
    return {"reasoning": "Question: q Plan: submit", "code": "n = ctx_stats(context)\nSUBMIT(answer=n['lines'])"}


def _constrainable(script=_script, timing: CallTiming | None = None):
    """A scripted LM that says it applies grammars (it ignores them), so runs take the grammar path; with
    ``timing``, every call reports it as llama.cpp's perf counters would."""
    lm = make_lm("scripted", script=script)
    engine = lm.rlmlab_engine
    engine.supports_constraints = True
    if timing is not None:
        plain = engine.generate
        def generate(messages, config):
            time.sleep(timing.engine_ms / 1000)  # the engine takes the time it reports
            return dataclasses.replace(plain(messages, config), timing=timing)

        engine.generate = generate
    return lm


def _system_and_user(call):
    [system, user] = call.messages
    assert system["role"] == "system" and user["role"] == "user"
    return system["content"], user["content"]


@pytest.mark.slow
def test_the_compact_prompt_sends_one_shared_prefix_and_the_task_after_it():
    lm = _constrainable()
    for query, notes in TASKS:
        for seed in (1, 2):  # two samples of each task
            traj = run_rlm(query, "line one\nline two\n", lm=lm.copy(seed=seed), max_iters=2, decoding="grammar",
                           instructions=notes)
            assert traj.prompt == "compact" and traj.error is None
    calls = recorder_of(lm).calls
    assert len(calls) == 4
    systems = {_system_and_user(c)[0] for c in calls}
    assert len(systems) == 1  # byte-identical across tasks and samples: llama.cpp's prefix cache serves it
    [system] = systems
    assert COMPACT_INSTRUCTIONS.splitlines()[1] in system and "ctx_find(" in system  # instructions, tool listing
    for (query, notes), call in zip([t for t in TASKS for _ in (1, 2)], calls):
        _, user = _system_and_user(call)
        assert query not in system and notes.splitlines()[0] not in system
        assert user.startswith("[[ ## guidance ## ]]\n" + notes)  # the task's own part starts the user message
        assert query in user
    assert len(system) < 4000  # DSPy's full RLM instructions alone are over 6,000 characters


def test_free_decoding_keeps_dspys_full_prompt_with_the_task_on_top():
    lm = _constrainable()
    query, notes = TASKS[0]
    traj = run_rlm(query, "x", lm=lm, max_iters=2, instructions=notes, decoding="free")
    assert traj.prompt == "full"
    system, _ = _system_and_user(recorder_of(lm).calls[0])
    assert notes.splitlines()[0] in system and "llm_query_batched" in system
    with pytest.raises(ValueError, match="prompt: 'short'"):
        run_rlm(query, "x", lm=lm, prompt="short")


def test_every_run_writes_its_time_breakdown_and_the_parts_fit_in_the_wall_time(tmp_path):
    timing = CallTiming(engine_ms=40.0, prefill_ms=25.0, decode_ms=10.0, prefill_tokens=300, decode_tokens=20,
                        cached_tokens=900)
    lm = _constrainable(timing=timing)
    traj = run_rlm(*TASKS[1], lm=lm, max_iters=2, decoding="grammar", runs_dir=tmp_path, run_id="r1")
    back = Trajectory.read_jsonl(tmp_path / "r1" / TRAJECTORY_FILE)
    assert back.timing == traj.timing and back.prompt == "compact"
    t = TimeBreakdown.from_dict(back.timing)
    calls = read_calls(tmp_path / "r1" / "lm_calls.jsonl")
    assert [c.timing for c in calls] == [timing.to_dict()]  # the engine's figures reach the call record
    assert (t.prefill_ms, t.decode_ms, t.sampling_ms) == (25.0, 10.0, 5.0)
    assert t.lm_calls == 1 and t.prompt_tokens == calls[0].input_tokens and t.cached_tokens == 900
    assert t.tools_ms > 0 and t.worker_start_ms > 0  # ctx_stats ran in the worker this run started
    measured = sum(v for k, v in t.parts().items() if k != "overhead_ms")
    assert measured <= t.wall_ms and t.overhead_ms >= 0
    assert sum(t.parts().values()) == pytest.approx(t.wall_ms, abs=1.0)
    assert abs(back.elapsed_ms - t.wall_ms) < 1  # the same wall time (one is an int, the other rounded)


@pytest.mark.slow
def test_experiment_show_and_the_run_browser_print_where_the_time_went(tmp_path):
    meta = {"suite": "arith", "level": 1}
    tasks = [MemoryTask(f"t{i}", q, "line one\nline two\n", None, 2, "numeric", dict(meta))
             for i, (q, _) in enumerate(TASKS)]
    run = run_experiment("E13", lm=_constrainable(), task_list=tasks, conditions=["grammar"], runs_dir=tmp_path,
                         progress=False)
    rows = [json.loads(x) for x in (run.run_dir / "results.jsonl").read_text().splitlines()]
    assert all(r["timing"]["wall_ms"] > 0 for r in rows)
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "experiment", "show", str(run.run_dir)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "where the time went, per task" in proc.stdout
    assert all(label in proc.stdout for label in ("prefill s", "worker start s", "cached share"))
    detail = subprocess.run([sys.executable, "-m", "rlmlab.cli", "experiment", "show", str(run.run_dir), "--task",
                             "t0", "--no-prompts"], capture_output=True, text=True, timeout=120)
    assert detail.returncode == 0 and "where the time went (s)" in detail.stdout
    assert TIME_PARTS["overhead_ms"] in detail.stdout

    from rlmlab.jupyter import RunBrowser

    html = RunBrowser(run.run_dir).static_html()
    assert "where the time went, per task" in html and "grammar" in html


@pytest.mark.local_model
def test_llama_cpp_reports_prefill_decode_and_the_prefix_it_reused():
    lm = make_lm("local", max_tokens=8)
    engine = lm.rlmlab_engine
    system = {"role": "system", "content": "You answer arithmetic questions with one number. " * 8}
    config = type("C", (), {"temperature": 0.0, "max_tokens": 8, "stop": None, "seed": None})()
    engine.generate([system, {"role": "user", "content": "What is 2 + 2?"}], config)
    out = engine.generate([system, {"role": "user", "content": "What is 30 + 12?"}], config)
    t = out.timing
    assert t.cached_tokens > 60  # the shared system message came from the previous call's KV cache
    assert t.prefill_tokens + t.cached_tokens <= out.input_tokens + 1  # llama.cpp may re-evaluate one token
    assert t.prefill_tokens < out.input_tokens - 60
    assert 1 <= t.decode_tokens <= out.output_tokens and t.prefill_ms > 0 and t.decode_ms > 0
    assert t.prefill_ms + t.decode_ms <= t.engine_ms

    # benchmarks/speed.py's floor replays these very counts in llama.cpp alone, at the call's depth.
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("speed_bench", Path(__file__).parents[1] / "benchmarks" / "speed.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    timing = dataclasses.asdict(t)
    floors = bench.replay_floor(engine, [[timing], [timing, None], [dict(timing, cached_tokens=0)]])
    assert floors[0] > 0 and floors[1] is None and floors[2] > 0
    assert engine.llm.n_tokens == 0  # the replay leaves no filler in the KV cache for the engine's next call
    again = engine.generate([system, {"role": "user", "content": "What is 30 + 12?"}], config)
    assert again.timing.cached_tokens == 0 and again.text.strip()  # nothing taken from the filler as if cached


@pytest.mark.local_model
def test_free_decoding_goes_back_to_an_earlier_prompt_from_a_stored_state_with_the_same_text():
    import rlmlab.lm._engines as engines

    config = type("C", (), {"temperature": 0.0, "max_tokens": 12, "stop": None, "seed": None})()
    numbers = [{"role": "system", "content": "You answer arithmetic questions with one number. " * 30},
               {"role": "user", "content": "What is 7 + 5?"}]
    words = [{"role": "system", "content": "You translate English words into French, one word. " * 30},
             {"role": "user", "content": "cat"}]
    engine = make_lm("local", max_tokens=12).rlmlab_engine
    engine.generate(numbers, config)
    engine.generate(words, config)  # llama.cpp's own cache now holds this prompt only
    back = engine.generate(numbers, config)
    assert back.timing.cached_tokens > 200  # the first prompt's KV cells came back from the stored state
    assert back.timing.prefill_tokens < 20
    # the same call with nothing stored prefills the prompt again and writes the same text
    engine._states.cache_state.clear()
    engine.generate(words, config)
    fresh = engine.generate(numbers, config)
    assert fresh.timing.cached_tokens < 20 and fresh.text == back.text
    # stored states hold one logits row (not n_batch x vocabulary, 100 MB), within the store's capacity
    states = engine._states.cache_state.values()
    assert states and all(len(s.scores) <= 1 for s in states)
    assert sum(s.llama_state_size for s in states) <= engines.PROMPT_STATES_BYTES
