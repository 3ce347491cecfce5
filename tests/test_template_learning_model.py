"""A template learnt from one task (scripted run, replayed and admitted) is retrieved for a sibling task and copied
by the embedded SmolLM2-135M under the step grammar. Real model calls (marker ``local_model``), one small task."""

from __future__ import annotations

import re

import pytest

from rlmlab.executors import make_executor, query_slots
from rlmlab.learning import ReasoningBankLoop, TemplateExtractor, judge_for, rlm_executor
from rlmlab.learning._replay import replay_workspace
from rlmlab.lm import make_lm
from rlmlab.memory import ContextBuilder, MemoryStore, MemoryTask, parse_template

pytestmark = pytest.mark.local_model


def _apples(tid: str, have: int, buy: int) -> MemoryTask:
    return MemoryTask(tid, f"Tom has {have} apples and buys {buy} more apples. How many apples does Tom have now?",
                      "", None, str(have + buy), "numeric")


def test_a_learnt_template_is_retrieved_and_copied_by_the_local_model_on_a_sibling(tmp_path):
    source, sibling = _apples("src", 125, 389), _apples("sib", 17, 25)
    scripted = [{"reasoning": "add", "code": "answer = 125 + 389\nSUBMIT(answer=answer)"}]
    traj = rlm_executor(make_lm("scripted", script=scripted))(source, "", replay_workspace(source), "src")
    [item] = TemplateExtractor().extract(source, traj, judge_for(source).judge(source, traj))
    assert item.template == "answer = {{apples:number}} + {{more:number}}\nSUBMIT(answer=answer)"
    assert item.meta["admission"]["replay"] is True

    lm = make_lm("local", max_tokens=160)
    rlm = make_executor("rlm")

    def grammar(task, instructions, workspace, trajectory_id):
        return rlm(task.query, task.context, lm=lm, workspace=workspace, instructions=instructions,
                   run_id=trajectory_id, max_iters=2, decoding="grammar", runs_dir=tmp_path / "traj")

    with MemoryStore(tmp_path / "bank.db") as store:
        store.add(item)
        loop = ReasoningBankLoop(store, executor=grammar, extractor="none", templates=True, runs_dir=tmp_path,
                                 builder=ContextBuilder(store, toggles=["L2"], retrieval="success_only",
                                                        retrieval_options={"k_success": 1}))
        [outcome] = loop.run([sibling])
    assert outcome.injected == [item.id]
    from rlmlab.executors import Trajectory

    [run] = (tmp_path / "traj").glob("*/trajectory.jsonl")
    code = Trajectory.read_jsonl(run).iterations[0].code
    numbers = "|".join(query_slots(sibling.query)["number"])
    pattern = "".join(re.escape(p) if isinstance(p, str) else f"({numbers})" for p in parse_template(item.template))
    assert re.fullmatch(pattern, code), f"step 1 is not the learnt template filled from the query:\n{code}"
    assert outcome.answers[0] is not None and re.fullmatch(r"\d+(\.0)?", outcome.answers[0].strip())
