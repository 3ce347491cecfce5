"""Guardrails veto a template that misfired: a failure item naming the code a template gave on a query shape keeps
that template from being retrieved (and so from the step grammar) for that shape, not for the shape it was learnt
on. Real memory stores, the real template extractor and judges, scripted-LM runs through the real rlm executor."""

from __future__ import annotations

import pytest

from rlmlab.learning import ReasoningBankLoop
from rlmlab.lm import make_lm
from rlmlab.memory import RETRIEVAL_POLICIES, ContextBuilder, MemoryItem, MemoryStore, MemoryTask, query_shape
from helpers import step

PLUS = "x = {{a:number}}\ny = {{b:number}}\nanswer = x + y\nSUBMIT(answer=answer)"
TIMES = "x = {{a:number}}\ny = {{b:number}}\nanswer = x * y\nSUBMIT(answer=answer)"


def _item(title: str, template: str, shape: str, polarity: str = "success", **meta) -> MemoryItem:
    return MemoryItem(title=title, description=title, content=f"{title}: {shape}", polarity=polarity, layer="L2",
                      source="extract", template=template, shape=shape, meta=meta or None)


def _template_loop(store: MemoryStore, steps: list, **kw) -> ReasoningBankLoop:
    """A loop whose scripted LM writes ``steps``, offered the L2 templates retrieval gives each task's shape."""
    return ReasoningBankLoop(store, lm=make_lm("scripted", script=steps), templates=True,
                             builder=ContextBuilder(store, toggles=["L2"], retrieval="templates"), **kw)


def _solve_minus_with(store: MemoryStore, item: MemoryItem) -> str:
    """Adds the template ``item`` to the store and runs "What is 125 minus 39 apples?" once, the L2 templates
    offered, with a scripted LM that writes the right subtraction; checks the run passed with ``item`` injected.
    The item's id."""
    steps = [step("x = 125\ny = 39\nanswer = x - y\nSUBMIT(answer=answer)")]
    item_id = store.add(item).id
    out = _template_loop(store, steps, extractor="none").run_task(
        MemoryTask("t", "What is 125 minus 39 apples?", "", None, "86", "numeric"))
    assert out.success and out.injected == [item_id]
    return item_id


def test_retrieval_skips_a_template_a_guardrail_names_for_the_querys_shape_only(tmp_path):
    with MemoryStore(tmp_path / "bank.db") as store:
        plus = store.add(_item("Add two numbers of apples", PLUS, "What is 125 plus 389 apples?")).id
        times = store.add(_item("Multiply numbers of apples", TIMES, "What is 12 times 3 apples?")).id
        # the plus template copied onto a "minus" question, rejected by the judge: a guardrail for that shape
        store.add(_item("Template misfired for: What is {number} minus {number} apples?",
                        PLUS.replace("{{a:number}}", "{{x:number}}"), "What is 125 minus 39 apples?",
                        polarity="failure", kind="misfire", filled="x = 125\ny = 39\nanswer = x + y"))
        policy = RETRIEVAL_POLICIES.make("templates", k_success=2)
        near = policy.retrieve(store, "What is 200 minus 50 apples?", None)
        assert plus not in [it.id for it in near.successes] and near.vetoed == [plus]
        assert [it.id for it in near.successes] == [times]  # the next template is offered instead
        own = policy.retrieve(store, "What is 7 plus 8 apples?", None)  # the shape it was learnt on: kept
        assert plus in [it.id for it in own.successes] and own.vetoed == []
        off = RETRIEVAL_POLICIES.make("templates", k_success=2, guardrails=False)
        assert sorted(it.id for it in off.retrieve(store, "What is 200 minus 50 apples?", None).successes) == \
            sorted([plus, times])


@pytest.mark.slow
def test_the_loop_stops_injecting_a_template_after_it_misfired_on_a_near_shape(tmp_path):
    """Task 1 teaches "x + y"; task 2 (a subtraction) copies it and fails, which stores a misfire guardrail for
    its shape; task 3, shaped like task 2, is no longer given the addition template."""
    tasks = [MemoryTask("t1", "What is 125 plus 389 apples?", "", None, "514", "numeric"),
             MemoryTask("t2", "What is 125 minus 39 apples?", "", None, "86", "numeric"),
             MemoryTask("t3", "What is 200 minus 50 apples?", "", None, "150", "numeric")]
    steps = [step("x = 125\ny = 389\nanswer = x + y\nSUBMIT(answer=answer)"),
             step("x = 125\ny = 39\nanswer = x + y\nSUBMIT(answer=answer)"),  # the copied template: wrong here
             step("x = 200\ny = 50\nanswer = x - y\nSUBMIT(answer=answer)")]
    with MemoryStore(tmp_path / "bank.db") as store:
        loop = _template_loop(store, steps, extractor="template", consolidator="consolidate")
        first = loop.run_task(tasks[0])
        [learnt] = first.extracted
        second = loop.run_task(tasks[1])
        assert second.injected == [learnt] and not second.success
        guard = [it for it in store.items() if it.polarity == "failure" and (it.meta or {}).get("kind") == "misfire"]
        assert guard and query_shape(tasks[1].query) in guard[0].shape.split("\n")
        third = loop.run_task(tasks[2])
        assert learnt not in third.injected and loop.builder.last.templates == []
        assert third.success  # its own code, nothing copied


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_exploration_stops_forcing_a_template_the_judge_rejected_on_this_task(tmp_path):
    """An injected template is copied by the first sample and rejected; the next samples of the same task are not
    made to copy it again (its guardrail only commits after the task), and one of them solves the task."""
    from rlmlab.learning import rlm_executor

    steps = [step("x = 125\ny = 39\nanswer = x + y\nSUBMIT(answer=answer)"),  # the copied template
             step("x = 125\ny = 39\nanswer = x - y\nSUBMIT(answer=answer)")]
    inner = rlm_executor(make_lm("scripted", script=steps))
    offered: list[list[str]] = []

    def executor(task, instructions, workspace, trajectory_id):
        offered.append([t["id"] for t in workspace.extras.get("step_templates", [])])
        return inner(task, instructions, workspace, trajectory_id)

    with MemoryStore(tmp_path / "bank.db") as store:
        plus = store.add(_item("Add two numbers of apples", PLUS, "What is 125 plus 389 apples?")).id
        loop = ReasoningBankLoop(store, executor=executor, extractor="none", templates=True, rollouts=4,
                                 until_accepted=True, builder=ContextBuilder(store, toggles=["L2"],
                                                                             retrieval="templates"))
        out = loop.run_task(MemoryTask("t", "What is 125 minus 39 apples?", "", None, "86", "numeric"))
    assert offered == [[plus], []] and out.success and len(out.trajectory_ids) == 2


def test_e14_retrieves_a_template_learnt_on_one_crate_for_a_task_of_another(tmp_path):
    """E14's test split is held out by crate: a template learnt on tokio must reach a rayon task."""
    from rlmlab.experiments import load_experiment

    cond = load_experiment("E14").condition("learned")
    options = dict(cond.retrieval)
    with MemoryStore(tmp_path / "bank.db") as store:
        learnt = store.add(MemoryItem(
            title="Template (ctx_find) for: Count the {ident} calls in {path}.", description="count unwrap calls",
            content="Count the unwrap calls in a file.", polarity="success", layer="L2", source="extract",
            domain="crate:tokio", shape="Count the unwrap calls in sync/mutex.rs.",
            template="n = ctx_find(context, r\"(?m)^(?![ \\t]*//).*\\.unwrap\\(\\)\")\nSUBMIT(answer=n[\"total\"])")).id
        policy = RETRIEVAL_POLICIES.make(options.pop("policy"), **options)
        got = policy.retrieve(store, "Count the unwrap calls in iter/collect/mod.rs.", "crate:rayon")
        assert [it.id for it in got.successes] == [learnt]


def test_a_template_that_wins_on_a_shape_takes_it_so_one_guardrail_there_does_not_retire_it(tmp_path):
    """A pack template wins on "minus" questions (its code subtracts); a later misfire there (a wrong task, a bad
    filling) leaves a guardrail for that shape, which must not retire the template the shape has seen win."""
    MINUS = "x = {{a:number}}\ny = {{b:number}}\nanswer = x - y\nSUBMIT(answer=answer)"
    with MemoryStore(tmp_path / "bank.db") as store:
        minus = _solve_minus_with(store, _item("Subtract numbers of apples", MINUS, "What is 9 less 2 apples, less?"))
        shape = query_shape("What is 125 minus 39 apples?")
        assert shape in store.get(minus).shape.split("\n")  # the win added the task's shape
        assert store.add_shape(minus, "What is 7 minus 1 apples?") is False  # the same shape: nothing to add
        store.add(_item("Template misfired for: What is {number} minus {number} apples?",
                        MINUS, "What is 125 minus 39 apples?", polarity="failure", kind="misfire",
                        filled="x = 125\ny = 39\nanswer = x - y"))
        got = RETRIEVAL_POLICIES.make("templates").retrieve(store, "What is 200 minus 50 apples?", None)
        assert [it.id for it in got.successes] == [minus] and got.vetoed == []


def test_a_template_the_winning_code_did_not_use_takes_no_shape(tmp_path):
    with MemoryStore(tmp_path / "bank.db") as store:
        plus = _solve_minus_with(store, _item("Add numbers of apples", PLUS, "What is 125 plus 389 apples?"))
        assert store.get(plus).shape == query_shape("What is 125 plus 389 apples?")
