"""Votes in one batch: which calls a vote shares (scripted), and N batched sequences of the real model (marked)."""

from __future__ import annotations

import threading

import dspy
import pytest

from rlmlab.experiments import read_results, run_experiment
from rlmlab.lm import CallRecorder, Completion, ScriptedEngine, constrained, format_fields, make_lm, shared_samples
from rlmlab.lm._samples import SampleShare, claim_shared_call
from rlmlab.memory import MemoryTask


# -- which calls are shared ------------------------------------------------------------------------------------

def test_a_rollout_shares_only_its_first_sampled_call_and_only_for_the_votes_seeds():
    with shared_samples([1, 2, 3]) as state:
        assert claim_shared_call(4, 0.7) is None      # not one of the vote's seeds
        assert claim_shared_call(2, 0.0) is None      # greedy: every seed would decode the same text
        assert claim_shared_call(None, 0.7) is None
        assert claim_shared_call(2, 0.7) is state and state.seeds == (1, 2, 3)
        assert claim_shared_call(2, 0.7) is None      # the second step holds the rollout's own history
    assert claim_shared_call(2, 0.7) is None          # outside the block nothing is shared


def test_shared_samples_needs_two_seeds_and_dedups_them():
    with pytest.raises(ValueError, match="1 distinct seed"):
        with shared_samples([3, 3]):
            pass
    with shared_samples([2, 1, 2], calls=2) as state:
        assert state.seeds == (2, 1) and state.calls == 2


def test_a_marking_does_not_leak_into_other_threads():
    seen = []
    with shared_samples([1, 2]):
        t = threading.Thread(target=lambda: seen.append(claim_shared_call(1, 0.7)))
        t.start()
        t.join()
    assert seen == [None]


def test_sample_share_hands_each_completion_out_once_and_forgets_old_prompts():
    share = SampleShare(size=2)
    share.put("p1", {2: "b", 3: "c"})
    assert share.take("p1", 2) == "b" and share.take("p1", 2) is None and share.take("p1", 3) == "c"
    share.put("p2", {2: "x"})
    share.put("p3", {2: "y"})
    share.put("p4", {2: "z"})                          # p2 is the least recent of three: evicted
    assert share.take("p2", 2) is None and share.take("p4", 2) == "z"
    assert (share.batches, share.served) == (4, 3)


def _arith_task() -> MemoryTask:
    return MemoryTask("t", "What is 4 + 5?", "no context needed", None, "9", "numeric", {"suite": "arith"})


def _scripted_lm(engine: ScriptedEngine, temperature: float) -> dspy.LM:
    """The scripted LM over ``engine`` at ``temperature``, its calls recorded."""
    return dspy.LM("rlmlab/scripted", engine=engine, cache=False, callbacks=[CallRecorder()],
                   temperature=temperature, max_tokens=512, num_retries=0)


class _ClaimingEngine(ScriptedEngine):
    """Answers by seed; notes, per call, whether the runner marked it as a vote's shared call."""

    def __init__(self):
        super().__init__([])
        self.claims: list[tuple[int | None, tuple[int, ...] | None]] = []
        self.lock = threading.Lock()

    def generate(self, messages, config):
        seed = getattr(config, "seed", None)
        state = claim_shared_call(seed, config.temperature or 0.0)
        with self.lock:
            step = sum(1 for s, _ in self.claims if s == seed)  # one task: a seed is one rollout
            self.claims.append((seed, state.seeds if state else None))
        # the first step prints, the second submits: two calls per rollout
        code = "print(1)" if not step else f"SUBMIT(answer={str(seed)!r})"
        return Completion(format_fields({"reasoning": "r", "code": code}), 10, 5)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_runner_shares_each_rollouts_first_call_of_a_vote(tmp_path, workers):
    path = tmp_path / "E91.yaml"
    path.write_text("id: E91\ntitle: t\nbase: {layers: {}, max_iters: 2, samples: 3, temperature: 0.7}\n")
    engine = _ClaimingEngine()
    run = run_experiment(str(path), lm=_scripted_lm(engine, 0.0), task_list=[_arith_task()], runs_dir=tmp_path,
                         progress=False, workers=workers)
    assert len(read_results(run.run_dir / "results.jsonl")) == 3
    by_seed: dict[int, list] = {}
    for seed, seeds in engine.claims:
        by_seed.setdefault(seed, []).append(seeds)
    assert by_seed == {s: [(1, 2, 3), None] for s in (1, 2, 3)}


class _SettlingEngine(ScriptedEngine):
    """Submits the answer its seed maps to in one step; notes each call's seed and shared batch."""

    def __init__(self, answers: dict[int, str]):
        super().__init__([])
        self.answers, self.claims = answers, []

    def generate(self, messages, config):
        seed = getattr(config, "seed", None)
        state = claim_shared_call(seed, config.temperature or 0.0)
        self.claims.append((seed, state.seeds if state else None))
        return Completion(format_fields({"reasoning": "r", "code": f"SUBMIT(answer={self.answers[seed]!r})"}), 10, 5)


@pytest.mark.parametrize("answers, ran, batches", [
    # three alike of five: the last two cannot change the vote, and their batch is never decoded
    ({1: "9", 2: "9", 3: "9.0", 4: "7", 5: "7"}, 3, {1: (1, 2, 3), 2: (1, 2, 3), 3: (1, 2, 3)}),
    # 9, 7, 9: 7 could still reach three; the fourth (9) settles it; the rest's batch was (4, 5)
    ({1: "9", 2: "7", 3: "9", 4: "9", 5: "7"}, 4, {1: (1, 2, 3), 2: (1, 2, 3), 3: (1, 2, 3), 4: (4, 5)}),
    # 9, 7, 8, 7: 9 could still tie 7 at two, and a tie goes to 9 (first seen): all five run
    ({1: "9", 2: "7", 3: "8", 4: "7", 5: "9"}, 5, {1: (1, 2, 3), 2: (1, 2, 3), 3: (1, 2, 3), 4: (4, 5), 5: (4, 5)}),
])
@pytest.mark.slow
def test_a_settled_vote_stops_early_and_picks_what_the_full_vote_picks(tmp_path, answers, ran, batches):
    task = _arith_task()
    picked = {}
    for stop in ("all", "settled"):
        path = tmp_path / f"E93{stop}.yaml"
        path.write_text(f"id: E93\ntitle: t\nbase: {{layers: {{}}, max_iters: 1, samples: 5, vote_stop: {stop}}}\n")
        engine = _SettlingEngine(answers)
        run = run_experiment(str(path), lm=_scripted_lm(engine, 0.0), task_list=[task], runs_dir=tmp_path / stop, progress=False,
                             workers=2)  # settling runs a task's samples in order even with two workers
        rows = read_results(run.run_dir / "results.jsonl")
        assert {r["vote_stop"] for r in rows} == {stop}
        picked[stop] = next((r["answer"], r["success"]) for r in rows if r["best"])
        s = run.summary["main"]
        if stop == "settled":
            assert [r["rollout"] for r in rows] == list(range(ran)) and s["mean_rollouts_run"] == ran
            assert dict(engine.claims) == batches and s["vote_stop"] == "settled"
        else:
            assert len(rows) == 5 and s["mean_rollouts_run"] == 5 and s["vote_stop"] == "all"
    assert picked["settled"] == picked["all"]


def test_a_condition_without_samples_shares_nothing(tmp_path):
    path = tmp_path / "E92.yaml"
    path.write_text("id: E92\ntitle: t\nbase: {layers: {}, max_iters: 2}\n")
    engine = _ClaimingEngine()
    run_experiment(str(path), lm=_scripted_lm(engine, 0.7), task_list=[_arith_task()], runs_dir=tmp_path,
                   progress=False)
    assert engine.claims and all(seeds is None for _, seeds in engine.claims)


# -- the real model -----------------------------------------------------------------------------------------

# A tiny grammar with many valid replies, so samples at temperature 1 differ and a prompt of a few tokens does.
WORD = 'root ::= "The answer is " [a-z]{3,10} "."'
ASK = [{"role": "user", "content": "Name a fruit."}]


class _Cfg:
    def __init__(self, temperature, max_tokens=24, seed=None):
        self.temperature, self.max_tokens, self.stop, self.seed = temperature, max_tokens, None, seed


@pytest.mark.local_model
def test_batched_votes_of_the_local_model_are_valid_seeded_and_shared():
    engine = make_lm("local", max_tokens=24, n_threads=1).rlmlab_engine
    seeds = [1, 2, 3]
    with constrained(grammar=WORD):
        batch = engine.generate_n(ASK, _Cfg(1.0), seeds)
        again = engine.generate_n(ASK, _Cfg(1.0), seeds)
        greedy = engine.generate(ASK, _Cfg(0.0))
        # a vote's rollouts: the first decodes all three seeds in one batch, the others are served from it
        served = []
        shared = []
        for seed in seeds:
            with shared_samples(seeds) as state:
                shared.append(engine.generate(ASK, _Cfg(1.0, seed=seed)).text)
                served.append(state.served)
    texts = [c.text for c in batch]
    assert all(engine.accepts(WORD, t) for t in texts + [greedy.text])          # N valid answers
    assert texts == [c.text for c in again]                                    # reproducible by seed
    assert len(set(texts)) >= 2                                                # the seeds differ at temperature 1
    assert all(c.finish_reason == "stop" and c.output_tokens > 3 for c in batch)
    assert shared == texts and served == [0, 1, 1]
    # llama.cpp's grammar checked on the sampled token picks what the grammar-first chain picks, greedily
    lazy = make_lm("local", max_tokens=24, n_threads=1, constraint_engine="gbnf").rlmlab_engine
    full = make_lm("local", max_tokens=24, n_threads=1, constraint_engine="gbnf-full").rlmlab_engine
    with constrained(grammar=WORD):
        assert lazy.generate(ASK, _Cfg(0.0)).text == full.generate(ASK, _Cfg(0.0)).text


@pytest.mark.local_model
def test_gbnf_and_llguidance_accept_the_same_step_texts():
    pytest.importorskip("llguidance")
    from rlmlab.executors._step_grammar import step_grammar
    from rlmlab.lm._guidance import guidance_accepts
    from rlmlab.tools import TOOLS, ToolCaps

    query = "What is 125 + 38?"
    grammar = step_grammar(TOOLS, ToolCaps(), query=query)
    engine = make_lm("local", max_tokens=160, n_threads=1, constraint_engine="llguidance").rlmlab_engine
    with constrained(grammar=grammar):
        reply = engine.generate([{"role": "user", "content": query}], _Cfg(0.0, max_tokens=160))
    assert reply.finish_reason == "stop"
    mid = len(reply.text) // 2
    assert "## code ##" in reply.text
    texts = [reply.text, reply.text[:mid], reply.text.replace("## code ##", "## kode ##"), reply.text + " more"]
    verdicts = []
    for text in texts:
        tokens = engine.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        verdicts.append((engine.accepts(grammar, text),
                         guidance_accepts(engine._decoder(), grammar, tokens, engine.llm.token_eos())))
    assert verdicts == [(True, True), (False, False), (False, False), (False, False)]
