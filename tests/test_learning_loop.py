"""The ReasoningBank loop end to end with the scripted LM: retrieve -> run -> judge -> extract -> persist."""

from __future__ import annotations

import json

import pytest

from rlmlab.errors import ConfigError
from rlmlab.lm import make_lm
from rlmlab.memory import ContextBuilder, MemoryStore, MemoryTask, import_pack
from rlmlab.learning import ReasoningBankLoop, memory_health
from helpers import step


class Script:
    """A scripted LM that records every prompt it is sent."""

    def __init__(self, steps):
        self.steps, self.prompts = list(steps), []

    def __call__(self, messages):
        self.prompts.append("\n".join(m["content"] for m in messages))
        return self.steps[len(self.prompts) - 1]


COUNT = step("hits = ctx_find(context, r'pub async fn', k=50)\nprint(hits['total'])")
SUBMIT_TOTAL = step("SUBMIT(answer=str(hits['total']))")
BAD_SLICE = step("print(ctx_slice(context, 10, 5))")
GUESS = step("SUBMIT(answer='3')")


@pytest.fixture
def file_text(rust_file):
    return rust_file.read_text()


def _tasks(text):
    n = text.count("pub async fn")
    return [
        MemoryTask("async1", "How many public async functions does file.rs define?", text, "crate:tokio", n, "numeric"),
        MemoryTask("async2", "How many public async functions are in file.rs?", text, "crate:tokio", n, "numeric"),
        MemoryTask("async3", "Count the public async functions of file.rs", text, "crate:tokio", n, "numeric"),
    ]


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_closed_loop_learns_from_one_task_for_the_next(tmp_path, file_text):
    script = Script([COUNT, SUBMIT_TOTAL, BAD_SLICE, GUESS, COUNT, SUBMIT_TOTAL])
    with MemoryStore(tmp_path / "bank.db") as store:
        loop = ReasoningBankLoop(store, lm=make_lm("scripted", script=script),
                                 builder=ContextBuilder(store, toggles=["L2"]), consolidator="consolidate",
                                 forgetter="bounded", forgetter_options={"max_items": 10}, runs_dir=tmp_path / "runs")
        out = loop.run(_tasks(file_text))
        assert [o.success for o in out] == [True, False, True]
        assert out[0].answers == [str(file_text.count("pub async fn"))] and out[1].answers == ["3"]
        # Task 1 taught a success strategy; it was retrieved, packed and injected into tasks 2 and 3.
        [learnt] = out[0].extracted
        assert out[1].injected == [learnt] and out[2].injected[0] == learnt
        strategy = store.get(learnt)
        assert strategy.polarity == "success" and "ctx_find" in strategy.title + strategy.content
        assert strategy.title in script.prompts[2] and strategy.title not in script.prompts[0]
        assert (strategy.uses, strategy.wins) == (2, 1)  # used by a failed and a successful task
        # Task 2 failed on a ToolError: a guardrail quoting the error was extracted.
        guard = store.get_many(out[1].extracted)
        assert [g.polarity for g in guard] == ["failure"] and "start: 10 is after end 5" in guard[0].content
        # Task 3's strategy repeats task 1's: consolidation discarded it instead of growing the bank.
        assert [a["action"] for a in out[2].actions] == ["discard"]
        assert memory_health(store)["active"] == 2
        # Provenance on every row; every step in the L4 log.
        assert store.execute("SELECT count(*) FROM items WHERE run_id IS NULL OR trajectory_id IS NULL")[0][0] == 0
        assert store.execute("SELECT count(*) FROM events WHERE run_id IS NULL OR created_at IS NULL")[0][0] == 0
        kinds = [e.kind for e in store.events()]
        assert kinds.count("context") == kinds.count("judge") == kinds.count("task") == 3
        assert kinds.count("extract") == 3 and "consolidation" in kinds
        judged = store.events(kind="judge")[1].payload
        assert judged["judge"] == "numeric" and judged["success"] is False and judged["answer"] == "3"
    rows = [json.loads(x) for x in (tmp_path / "runs" / loop.run_id / "results.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in rows] == ["async1", "async2", "async3"] and rows[1]["success"] is False
    assert len(list((tmp_path / "runs" / loop.run_id / "trajectories").glob("*/trajectory.jsonl"))) == 3


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_matts_picks_the_best_rollout_and_extracts_contrastively(tmp_path, file_text):
    script = Script([BAD_SLICE, GUESS, COUNT, SUBMIT_TOTAL])
    with MemoryStore(tmp_path / "bank.db") as store:
        loop = ReasoningBankLoop(store, lm=make_lm("scripted", script=script), rollouts=2, extraction="contrastive")
        [o] = loop.run(_tasks(file_text)[:1])
        assert [v["success"] for v in o.verdicts] == [False, True] and o.best == 1 and o.success
        polarities = sorted(it.polarity for it in store.get_many(o.extracted))
        assert polarities == ["failure", "success"]
        assert len(o.trajectory_ids) == 2 and len(store.events(kind="judge")) == 2


def test_tool_mediated_mode_gives_the_agent_memory_tools_and_counts_usage(tmp_path, file_text):
    script = Script([
        step("hits = mem_search('count async functions regex ast_query', k=3)\nprint([h['id'] for h in hits['hits']])"),
        step("items = mem_get([hits['hits'][0]['id']])\nprint(items['items'][0]['title'])"),
        COUNT, SUBMIT_TOTAL,
    ])
    with MemoryStore(tmp_path / "bank.db") as store:
        import_pack(store, "data/packs/rlm_procedures.jsonl")
        builder = ContextBuilder(store, toggles=["L2"], mode="tool_mediated")
        loop = ReasoningBankLoop(store, lm=make_lm("scripted", script=script), builder=builder, extractor="none")
        [o] = loop.run(_tasks(file_text)[:1])
        assert o.success and o.injected == [] and "mem_search(query)" in script.prompts[0]
        [used] = store.usage(o.trajectory_ids[0])
        assert used["outcome"] == "success" and store.get(used["item_id"]).wins == 1
        assert o.extracted == [] and store.events(kind="extract") == []


def test_auto_inject_hides_the_memory_tools(tmp_path, file_text):
    script = Script([step("print(mem_search('x'))"), GUESS])
    with MemoryStore(tmp_path / "bank.db") as store:
        [o] = ReasoningBankLoop(store, lm=make_lm("scripted", script=script), extractor="none").run(_tasks(file_text)[:1])
        assert "NameError" in script.prompts[1] and not o.success


def test_loop_options_are_validated(tmp_path):
    with MemoryStore(tmp_path / "b.db") as store:
        for kwargs, match in (({"rollouts": 0}, "rollouts"), ({"extraction": "all"}, "extraction"),
                              ({"judge": "oracel"}, "judge: unknown 'oracel'"), ({}, "give an lm"),
                              ({"extractor": "magic"}, "extractor: unknown")):
            with pytest.raises(ConfigError, match=match):
                ReasoningBankLoop(store, **({"lm": object()} if kwargs else {}), **kwargs)
