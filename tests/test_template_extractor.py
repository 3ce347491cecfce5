"""The template extractor on real trajectories: scripted-LM RLM runs through the real executor and REPL worker over
tokio sources, arithmetic questions and PROV-O/SKOS, judged by the real judges; replay, the intervention test,
failure items and consolidation of templates."""

from __future__ import annotations

import json

import pytest

from rlmlab.errors import ConfigError
from rlmlab.executors import query_slots, template_rule
from rlmlab.experiments import load_suite
from rlmlab.learning import (
    EXTRACTORS, ReasoningBankLoop, Sibling, TemplateExtractor, abstract_trajectory, fill_slots, judge_for,
    minimal_code, replay_code, rlm_executor,
)
from rlmlab.learning._abstract import query_shape
from rlmlab.learning._replay import replay_workspace
from rlmlab.lm import make_lm
from rlmlab.memory import ContextBuilder, MemoryItem, MemoryStore, MemoryTask, check_template, normalise_template
from rlmlab.tools import TOOLS
from helpers import step

TOOL_NAMES = frozenset(spec.name for spec in TOOLS)


def _run(task: MemoryTask, steps) -> object:
    """A trajectory of the registered rlm executor with a scripted LM, in the loop's workspace for the task."""
    return rlm_executor(make_lm("scripted", script=steps))(task, "", replay_workspace(task), f"t-{task.id}")


def _judged(task, steps):
    traj = _run(task, steps)
    return traj, judge_for(task).judge(task, traj)


@pytest.fixture(scope="module")
def tokio(tokio_src):
    def task(tid: str, rel: str, query: str, expected: str) -> MemoryTask:
        path = tokio_src / rel
        return MemoryTask(tid, query, path.read_text(), "crate:tokio", expected, "exact", {"source_path": str(path)})

    return {
        "wait": task("wait", "sync/barrier.rs", "What does fn wait in sync/barrier.rs return? Answer with the return "
                     "type only.", "BarrierWaitResult"),
        "deadline": task("deadline", "time/sleep.rs", "What does fn deadline in time/sleep.rs return? Answer with "
                         "the return type only.", "Instant"),
        "is_leader": task("is_leader", "sync/barrier.rs", "What does fn is_leader in sync/barrier.rs return? Answer "
                          "with the return type only.", "bool"),
    }


RETURN_TYPE = [
    step("print(ctx_stats(context))"),
    step("x = ctx_slice(context, 10, 5)"),  # a failed call: ToolError
    step("hits = ast_query(context, '(function_item name: (identifier) @name return_type: (_) @type "
          "(#eq? @name \"wait\"))', k=1)\nprint(hits)"),
    step("answer = hits['matches'][0]['captures']['type']\nSUBMIT(answer=answer)"),
]


def _arith(tid: str, query: str, expected: str) -> MemoryTask:
    return MemoryTask(tid, query, "", None, expected, "numeric")


# -- abstraction -----------------------------------------------------------------------------------------


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_rust_trajectory_becomes_the_minimal_template_with_the_name_as_a_slot(tokio):
    task = tokio["wait"]
    traj, verdict = _judged(task, RETURN_TYPE)
    assert verdict.success and "ToolError" in traj.iterations[1].output
    ab = abstract_trajectory(traj, task.query, task.context, tool_names=TOOL_NAMES)
    # The exploration print, the failed ctx_slice and the print of the hits are gone: the code that made the SUBMIT.
    assert ab.template == (
        'hits = ast_query(context, "(function_item name: (identifier) @name return_type: (_) @type '
        '(#eq? @name \\"{{name:ident}}\\"))", k=1)\n'
        "answer = hits['matches'][0]['captures']['type']\nSUBMIT(answer=answer)")
    assert [(b.name, b.type, b.value) for b in ab.slots] == [("name", "ident", "wait")]
    assert ab.tools == ["ast_query"] and ab.dropped == 3
    assert check_template(ab.template) == ab.template
    # The step grammar fills it from a sibling query (its own file as context) ...
    sibling = tokio["deadline"]
    rule = template_rule(ab.template, query_slots(sibling.query, sibling.context))
    assert rule is not None and "deadline" in rule
    # ... and so does the replay, which the real judge accepts there.
    code = fill_slots(ab.template, ab.slots, sibling.query, sibling.context)
    assert '@name \\"deadline\\"' in code
    assert replay_code(code, sibling).answer == "Instant"
    assert query_shape(task.query, task.context) == ("What does fn {ident} in {path} return? Answer with the return "
                                                      "type only.")
    # It is the hand pack's return-type template, written with other quotes: the same procedure once normalised.
    pack = [json.loads(line)["template"] for line in open("data/packs/step_templates.jsonl")]
    assert normalise_template(ab.template) in {normalise_template(t) for t in pack if t}


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_arithmetic_numbers_become_slots_in_the_query_order_repeats_included():
    task = _arith("a1", "What is 125 + 389?", "514")
    traj, _ = _judged(task, [step("print('adding')\nx = 125\ny = 389"), step("answer = x + y\nSUBMIT(answer=answer)")])
    ab = abstract_trajectory(traj, task.query, tool_names=TOOL_NAMES)
    assert ab.template == "x = {{a:number}}\ny = {{b:number}}\nanswer = x + y\nSUBMIT(answer=answer)"
    assert [(b.name, b.ordinal) for b in ab.slots] == [("a", 0), ("b", 1)]
    # "2 + 2": two occurrences of one number are two slots, so "3 + 5" fills them apart.
    twice = _arith("a2", "What is 2 + 2?", "4")
    ab2 = abstract_trajectory(_run(twice, [step("SUBMIT(answer=2 + 2)")]), twice.query, tool_names=TOOL_NAMES)
    assert ab2.template == "SUBMIT(answer={{a:number}} + {{b:number}})"
    assert fill_slots(ab2.template, ab2.slots, "What is 3 + 5?") == "SUBMIT(answer=3 + 5)"
    assert fill_slots(ab2.template, ab2.slots, "What is 3?") is None  # too few numbers: not applicable
    # A number the query names by its unit gets the unit's name.
    apples = _arith("a3", "Tom has 12 apples and eats 5 apples. How many are left?", "7")
    ab3 = abstract_trajectory(_run(apples, [step("SUBMIT(answer=12 - 5)")]), apples.query, tool_names=TOOL_NAMES)
    assert ab3.template == "SUBMIT(answer={{apples:number}} - {{apples2:number}})"


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_sparql_curies_become_class_and_property_slots_inside_the_string():
    onto = {t.id: t for t in load_suite("ontology")}
    task = onto["onto-l1-01"]
    traj, verdict = _judged(task, [
        step('q = "SELECT ?label WHERE { prov:Activity rdfs:label ?label }"\nrows = sparql_query(q)\nprint(rows)'),
        step("SUBMIT(answer=q)")])
    assert verdict.success
    ab = abstract_trajectory(traj, task.query, task.context, tool_names=TOOL_NAMES)
    # ?label stays: the Turtle context mentions rdfs:label, but a CURIE's word is not a name of code.
    assert ab.template == 'q = "SELECT ?label WHERE { {{class:class}} {{property:property}} ?label }"\nSUBMIT(answer=q)'
    sibling = onto["onto-l1-06"]  # skos:definition of skos:Concept
    assert "skos:Concept skos:definition" in fill_slots(ab.template, ab.slots, sibling.query, sibling.context)
    # A query with a string literal inside: its quotes are written \x22, so the step grammar still sees both slots
    # inside the string literal; filled from its own query the template gives back the reference.
    import ast

    from rlmlab.learning import abstract_code

    ref = onto["onto-l4-02"]
    select = ref.expected[ref.expected.index("SELECT"):]
    ab2 = abstract_code(ast.parse(f"q = {json.dumps(select)}\nSUBMIT(answer=q)").body, ref.query, ref.context)
    # the IRI the question writes is one slot (before the iri type, only its path piece w3.org/ns/prov was)
    assert [b.type for b in ab2.slots] == ["class", "iri"] and "\\x22{{iri:iri}}\\x22" in ab2.template
    assert template_rule(ab2.template, query_slots(ref.query, ref.context)) is not None
    assert ast.parse(fill_slots(ab2.template, ab2.slots, ref.query, ref.context)).body[0].value.value == select
    # The submitted query is code the judge runs, not an answer typed in: the template is admitted.
    [item] = TemplateExtractor().extract(task, traj, verdict, siblings=[Sibling(sibling, False)])
    assert item.template == ab.template and item.meta["admission"]["repairs"] == 1


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_minimal_code_follows_names_across_steps_and_names_what_is_missing():
    task = _arith("a1", "What is 6 * 7?", "42")
    traj = _run(task, [step("x = 6\nunused = 99\nprint(x)"), step("y = x * 7\ny += 0"),
                       step("print(y)\nSUBMIT(answer=y)")])
    stmts, dropped, why = minimal_code(traj, TOOL_NAMES)
    assert why is None and dropped == 3
    assert [len(s.targets) if hasattr(s, "targets") else type(s).__name__ for s in stmts] == [1, 1, "AugAssign", "Expr"]
    # A name assigned only in a step that failed is not kept: the slice says what it lacks.
    traj = _run(task, [step("x = 6\nprint(undefined_name)"), step("SUBMIT(answer=x * 7)")])
    _, _, why = minimal_code(traj, TOOL_NAMES)
    assert why == "the code reads x, which no step that ran assigned"


# -- admission: replay and the intervention test ----------------------------------------------------------


@pytest.mark.slow  # a run and its replay (about 1 s)
def test_a_template_is_admitted_after_replay_with_its_record_in_meta(tokio):
    task = tokio["wait"]
    traj, verdict = _judged(task, RETURN_TYPE)
    ext = EXTRACTORS.make("template")
    report = ext.extract_with_report(task, traj, verdict, siblings=[Sibling(tokio["deadline"], False),
                                                                   Sibling(tokio["is_leader"], True)])
    [item] = report.items
    assert item.polarity == "success" and item.template.startswith("hits = ast_query(")
    adm = item.meta["admission"]
    assert adm["replay"] is True and adm["answer"] == "BarrierWaitResult" and adm["judge"] == "exact"
    assert (adm["siblings"], adm["applicable"], adm["repairs"], adm["regressions"]) == (2, 2, 1, 0)
    assert item.meta["slots"] == [{"name": "name", "type": "ident", "ordinal": 0, "value": "wait"}]
    assert ext.stats["templates_admitted"] == 1 and ext.stats["replays"] == 3
    # meta round-trips through JSON and the store.
    assert MemoryItem.from_dict(json.loads(json.dumps(item.to_dict()))) == item


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_replay_rejects_a_template_that_needs_the_model():
    """The run asked a sub-LLM for the answer; the template keeps that call, which replay (no model) cannot
    repeat: it does not re-solve its own task, so it is not admitted."""
    task = _arith("a1", "What is 125 + 389?", "514")

    def script(messages):
        if "[[ ## code ## ]]" in messages[0]["content"]:
            return step("answer = llm_query('What is 125 + 389? Reply with the number only.')\nSUBMIT(answer=answer)")
        return "514"  # the sub-LLM's reply in the run

    traj = rlm_executor(make_lm("scripted", script=script))(task, "", replay_workspace(task), "t")
    verdict = judge_for(task).judge(task, traj)
    assert verdict.success and traj.subcalls == 1
    ext = TemplateExtractor(fallback="none")
    report = ext.extract_with_report(task, traj, verdict)
    assert report.items == [] and ext.stats["templates_rejected"] == 1
    [dropped] = report.dropped
    assert dropped["reason"].startswith("replay did not re-solve a1") and "llm_query(" in dropped["template"]


def test_a_typed_in_answer_is_not_a_template(tokio):
    """The model read the return type off a print and typed it into SUBMIT: that re-solves its own task only."""
    task = tokio["wait"]
    traj, verdict = _judged(task, [RETURN_TYPE[2], step("answer = 'BarrierWaitResult'\nSUBMIT(answer=answer)")])
    assert verdict.success
    report = TemplateExtractor(fallback="none").extract_with_report(task, traj, verdict)
    assert report.items == [] and report.dropped[0]["reason"] == "the code submits the literal 'BarrierWaitResult'"


@pytest.mark.slow
def test_the_intervention_test_counts_repairs_and_regressions_on_real_siblings():
    """"5 + 5" solved as 5 * 2: the 2 is no number of the query, so it stays literal and the template doubles
    the first number. It re-solves its own task, repairs the sibling it happens to fit and regresses two."""
    task = _arith("s", "What is 5 + 5?", "10")
    traj, verdict = _judged(task, [step("answer = 5 * 2\nSUBMIT(answer=answer)")])
    siblings = [Sibling(_arith("s1", "What is 3 + 4?", "7"), True), Sibling(_arith("s2", "What is 6 + 6?", "12"), False),
                Sibling(_arith("s3", "What is 1 + 8?", "9"), True), Sibling(_arith("s4", "What is the sum?", "40"), True)]
    ext = TemplateExtractor(fallback="none")
    report = ext.extract_with_report(task, traj, verdict, siblings=siblings)
    assert report.items == []
    assert report.dropped[0]["reason"] == "intervention: 2 regressions > 1 repairs on 3 siblings"
    assert report.dropped[0]["template"] == "answer = {{a:number}} * 2\nSUBMIT(answer=answer)"
    # The right procedure passes the same test: it repairs s2 and regresses nothing.
    good, v = _judged(task, [step("answer = 5 + 5\nSUBMIT(answer=answer)")])
    asked = []  # a loop without the answer key passes its own judge per sibling

    def sibling_judge(t):
        asked.append(t.id)
        return judge_for(t)

    [item] = ext.extract(task, good, v, siblings=siblings, sibling_judge=sibling_judge)
    assert asked == ["s1", "s2", "s3", "s4"]
    adm = item.meta["admission"]
    assert (adm["applicable"], adm["repairs"], adm["regressions"]) == (3, 1, 0)
    assert [r["task_id"] for r in adm["results"]] == ["s1", "s2", "s3"]


# -- failures ---------------------------------------------------------------------------------------------


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_failed_rollout_gives_a_guardrail_naming_the_wrong_slot_order():
    task = _arith("f", "What is 10 - 3?", "7")
    traj, verdict = _judged(task, [step("answer = 3 - 10\nSUBMIT(answer=answer)")])
    assert not verdict.success
    [item] = TemplateExtractor().extract(task, traj, verdict)
    assert item.polarity == "failure" and item.title == "Wrong slot order for: What is {number} - {number}?"
    assert item.meta["kind"] == "misfire" and item.meta["filled"] == "answer = 3 - 10\nSUBMIT(answer=answer)"
    assert item.meta["slot_order"] == {"a": "10", "b": "3"} and "the order that solves it is a=10, b=3" in item.content


def test_a_misfired_code_template_is_named_for_its_query_shape(tokio):
    """A signature procedure used on a return-type question: the judge rejects it; the guardrail names the code
    and the shape, and the context builder never shows a failure item's code as something to copy."""
    task = tokio["wait"]
    traj, verdict = _judged(task, [step(
        "hits = ast_query(context, '(function_item name: (identifier) @name (#eq? @name \"wait\")) @fn', k=1)\n"
        "n = hits['matches'][0]['line']\nanswer = ctx_slice(context, n, n + 1, unit='lines')['text'].strip()\n"
        "SUBMIT(answer=answer)")])
    assert not verdict.success
    [item] = TemplateExtractor().extract(task, traj, verdict)
    assert item.title == ("Template misfired (ast_query, ctx_slice) for: What does fn {ident} in {path} return? "
                          "Answer with the return type only.")
    assert '\\"{{name:ident}}\\"' in item.template and "pub async fn wait" in item.content
    assert '(#eq? @name \\"wait\\")) @fn"' in item.meta["filled"]


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_contrastive_rollouts_give_the_winner_and_a_guardrail_for_the_loser():
    task = _arith("c", "What is 10 - 3?", "7")
    lose, win = (_judged(task, [step(f"answer = {c}\nSUBMIT(answer=answer)")]) for c in ("3 - 10", "10 - 3"))
    items = TemplateExtractor().contrastive(task, [lose, win])
    assert [i.polarity for i in items] == ["success", "failure"]
    assert items[0].template == "answer = {{a:number}} - {{b:number}}\nSUBMIT(answer=answer)"
    assert items[1].meta["slot_order"] == {"a": "10", "b": "3"}


def test_without_code_a_failure_falls_back_to_the_heuristic_guardrails():
    task = _arith("n", "What is 10 - 3?", "7")
    traj, verdict = _judged(task, [step("print(ctx_slice(context, 10, 5))"), step("print('still thinking')")])
    report = TemplateExtractor().extract_with_report(task, traj, verdict)
    assert report.fallback and report.items and all(i.template is None for i in report.items)
    assert TemplateExtractor(fallback="none").extract(task, traj, verdict) == []


def test_extractor_options_are_checked_by_the_registry():
    for opts, match in (({"fallback": "some"}, "fallback"), ({"max_siblings": -1}, "max_siblings"),
                        ({"replay": "yes"}, "replay"), ({"step_timeout": 0}, "step_timeout"),
                        ({"siblings": 3}, "siblings")):
        with pytest.raises(ConfigError, match=match):
            EXTRACTORS.make("template", **opts)


# -- consolidation and the loop ----------------------------------------------------------------------------


def _template_item(query: str, template: str, **kw) -> MemoryItem:
    return MemoryItem(title=f"Template for: {query}", description="Copyable code", content=f"Learnt from '{query}'.",
                      polarity="success", template=template, **kw)


def test_consolidation_dedupes_by_normalised_template_and_sums_counts(tmp_path):
    from rlmlab.learning import CONSOLIDATORS

    cons = CONSOLIDATORS.make("consolidate")
    adm = {"admission": {"replay": True, "siblings": 2, "applicable": 2, "repairs": 1, "regressions": 0}}
    a = _template_item("What is 125 + 389?", "answer = {{a:number}} + {{b:number}}\nSUBMIT(answer=answer)",
                       uses=3, wins=2, meta=adm)
    # The same procedure written with other quotes, spaces and slot names; and another procedure worded alike.
    b = _template_item("What is 17 + 25?", "answer = {{x:number}}+{{y:number}}\nSUBMIT(answer = answer)",
                       uses=1, wins=1, meta=adm)
    c = _template_item("What is 17 - 25?", "answer = {{x:number}} - {{y:number}}\nSUBMIT(answer=answer)")
    assert normalise_template(a.template) == normalise_template(b.template) != normalise_template(c.template)
    with MemoryStore(tmp_path / "b.db") as store:
        actions = cons.persist(store, [a, b, c, b])
        assert [x.action for x in actions] == ["add", "merge", "add", "duplicate"]
        active = store.items()
        assert len(active) == 2 and all(it.template for it in active)
        merged = store.get(actions[1].result_id)
        assert merged.template == a.template and (merged.uses, merged.wins) == (4, 3)
        assert merged.meta["admission"]["repairs"] == 2 and merged.meta["merged"] == 1
        assert "17 + 25" in merged.content and store.get(a.id).superseded_by == merged.id
        # A prose candidate that reads like a template item is not merged into it (the template would be lost).
        prose = MemoryItem(title="Template for: What is 125 + 389?", description="Copyable code",
                           content="Learnt from 'What is 125 + 389?'. Add them.", polarity="success")
        [act] = cons.persist(store, [prose])
        assert act.action != "merge" and store.get(merged.id).status == "active"


def test_a_template_learnt_on_another_crate_is_the_same_procedure_as_the_packs(tmp_path):
    """Learnt copies of a pack template (domain "crate:...") once stayed beside it: 18% of E14's templates."""
    from rlmlab.learning import CONSOLIDATORS

    code = 'total = ctx_find(context, r"(?m)^(?![ \\t]*//).*\\.unwrap\\(\\)", k=1)["total"]\nSUBMIT(answer=total)'
    pack = _template_item("Count the unwrap calls in {path}.", code, source="pack:step_templates")
    learnt = [_template_item(f"Count the unwrap calls in {f}.", code.replace('r"', "r'").replace('", k', "', k"),
                             domain=d, source="extract") for f, d in (("a.rs", "crate:tokio"), ("b.rs", "crate:bytes"))]
    with MemoryStore(tmp_path / "b.db") as store:
        store.add(pack)
        actions = CONSOLIDATORS.make("consolidate").persist(store, learnt)
        assert all(a.action in ("merge", "discard") for a in actions), [a.reason for a in actions]
        active = [it for it in store.items() if it.template]
        assert len(active) == 1


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_loop_learns_a_template_and_injects_it_into_the_next_task(tmp_path):
    steps = [step("x = 125\ny = 389\nanswer = x + y\nSUBMIT(answer=answer)"),
             step("x = 17\ny = 25\nanswer = x + y\nSUBMIT(answer=answer)")]
    tasks = [_arith("t1", "What is 125 plus 389 apples?", "514"), _arith("t2", "What is 17 plus 25 apples?", "42")]
    with MemoryStore(tmp_path / "bank.db") as store:
        loop = ReasoningBankLoop(store, lm=make_lm("scripted", script=steps), extractor="template",
                                 consolidator="consolidate", builder=ContextBuilder(store, toggles=["L2"]),
                                 templates=True)
        first, second = loop.run(tasks)
        [learnt] = first.extracted
        item = store.get(learnt)
        assert item.template.startswith("x = {{") and item.meta["admission"]["replay"] is True
        assert second.injected == [learnt] and second.success
        assert [t["id"] for t in loop.builder.last.templates] == [learnt]
        # The second task's template is the same procedure: merged into the first, not a second copy.
        assert [a["action"] for a in second.actions] == ["merge"] and len(store.items()) == 1
        assert store.items()[0].template == item.template


@pytest.mark.slow
def test_a_learnt_template_that_fails_the_tasks_it_is_injected_into_is_retired_and_not_admitted_again(tmp_path):
    """E14's arith bank kept `SUBMIT(answer={{books:number}} * {{b:number}})` through 40 judged rollouts (10 tasks)
    and 0 wins, and it broke 3 test tasks; the failing forgetter retires a template after 3 failed tasks."""
    from rlmlab.learning import FailingForgetter, task_outcomes

    good = "x = {a}\ny = {b}\nanswer = x + y\nSUBMIT(answer=answer)"
    steps = [step(good.format(a=125, b=389))] + [step("answer = 0\nSUBMIT(answer=answer)")] * 3 \
        + [step(good.format(a=3, b=4)), step(good.format(a=6, b=2))]
    tasks = [_arith("t1", "What is 125 plus 389 apples?", "514")] \
        + [_arith(f"t{i}", f"What is {i} plus {i + 10} apples?", str(2 * i + 10)) for i in (2, 3, 4)] \
        + [_arith("t5", "What is 3 plus 4 apples?", "7"), _arith("t6", "What is 6 plus 2 apples?", "8")]
    with MemoryStore(tmp_path / "bank.db") as store:
        loop = ReasoningBankLoop(store, lm=make_lm("scripted", script=steps), extractor="template",
                                 consolidator="consolidate", builder=ContextBuilder(store, toggles=["L2"]),
                                 templates=True, forgetter="failing")
        out = loop.run(tasks)
        [learnt] = out[0].extracted
        assert all(learnt in o.injected for o in out[1:4]) and not any(o.success for o in out[1:4])
        assert [o.forgotten for o in out[:4]] == [[], [], [], [learnt]]  # the third failed task retires it
        assert store.get(learnt).status == "forgotten" and learnt not in out[4].injected and out[4].success
        # t5 solves its task with the same procedure: the candidate is discarded, the retired one stays retired
        assert [a["action"] for a in out[4].actions] == ["discard"] and "retired" in out[4].actions[0]["reason"]
        assert store.items(polarity="success") == [] and learnt not in out[5].injected
        assert task_outcomes(store)[learnt] == {f"{loop.run_id}-t{i}": False for i in (2, 3, 4)}
        [event] = store.events(kind="forget")
        assert event.payload["item_id"] == learnt and "won 0 of the 3 tasks" in event.payload["reason"]
    # a pack's template with the same record is kept, and one win in three tasks is not yet failing
    with MemoryStore(tmp_path / "pack.db") as store:
        pack = _template_item("What is 1 plus 2 apples?", "answer = {{a:number}} + {{b:number}}\nSUBMIT(answer=answer)",
                              source="pack:step_templates")
        learnt = _template_item("What is 1 minus 2 apples?", "answer = {{a:number}} - {{b:number}}\nSUBMIT(answer=answer)",
                                source="extract")
        store.add_many([pack, learnt])
        for task, won in (("r-t1", True), ("r-t2", False), ("r-t3", False)):
            for k in range(2):
                store.record_usage([pack.id, learnt.id], trajectory_id=f"{task}-r{k}")
                store.record_outcome(f"{task}-r{k}", won and k == 0)
        assert FailingForgetter().forget(store) == []
        store.record_usage([pack.id, learnt.id], trajectory_id="r-t4-r0")
        store.record_outcome("r-t4-r0", False)
        assert FailingForgetter(below=0.4).forget(store)[0].item_id == learnt.id  # (1 + 1) / (4 + 2) < 0.4
        assert store.get(pack.id).status == "active"
    with pytest.raises(ConfigError, match="min_tasks"):
        FailingForgetter(min_tasks=0)


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_loop_gives_the_extractor_earlier_tasks_asked_alike_as_siblings(tmp_path):
    """E14 never ran the intervention test: the loop passed no siblings. Now the stream so far supplies them."""
    from rlmlab.learning import nearest_siblings

    steps = [step("answer = 0\nSUBMIT(answer=answer)"),  # t1: wrong (7 + 5 is not 0), so a repair is possible
             step("x = 17\ny = 25\nanswer = x + y\nSUBMIT(answer=answer)")]
    tasks = [_arith("t1", "What is 7 plus 5 apples?", "12"), _arith("t2", "What is 17 plus 25 apples?", "42")]
    history = [(tasks[0], False), (_arith("t9", "Name the members of struct Take.", "x"), True)]
    assert [s.task.id for s in nearest_siblings(tasks[1], history)] == ["t1"]
    with MemoryStore(tmp_path / "bank.db") as store:
        loop = ReasoningBankLoop(store, lm=make_lm("scripted", script=steps), extractor="template",
                                 consolidator="consolidate", builder=ContextBuilder(store, toggles=["L2"]),
                                 templates=False)
        first, second = loop.run(tasks)
        assert not first.success and second.success
        [learnt] = second.extracted
        admission = store.get(learnt).meta["admission"]
        # filled from t1's query the template answers 7 + 5 = 12: it repairs the sibling the bank failed
        assert (admission["siblings"], admission["applicable"], admission["repairs"], admission["regressions"]) \
            == (1, 1, 1, 0)


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_admission_record_round_trips_and_shows_in_the_cli(tmp_path):
    from click.testing import CliRunner

    from rlmlab.cli import main
    from rlmlab.memory import ItemValidationError, admission_summary

    task = _arith("a1", "What is 125 + 389?", "514")
    traj, verdict = _judged(task, [step("answer = 125 + 389\nSUBMIT(answer=answer)")])
    siblings = [Sibling(_arith("s1", "What is 17 + 25?", "42"), False)]
    [item] = TemplateExtractor().extract(task, traj, verdict, siblings=siblings)
    assert admission_summary(item) == "replay passed (numeric) · 1 sibling tested: 1 repair, 0 regressions"
    db = tmp_path / "bank.db"
    with MemoryStore(db) as store:
        store.add(item)
        assert store.get(item.id).meta == item.meta
    shown = CliRunner().invoke(main, ["memory", "show", item.id, "--db", str(db)])
    assert shown.exit_code == 0 and "admission: replay passed (numeric)" in shown.output
    assert "answer = {{a:number}} + {{b:number}}" in shown.output
    as_json = CliRunner().invoke(main, ["memory", "show", item.id, "--db", str(db), "--json"])
    assert MemoryItem.from_dict(json.loads(as_json.output)).meta["admission"]["repairs"] == 1
    for bad, match in (([1], "expected a JSON object"), ({"x": float("nan")}, "not JSON"),
                       ({"x": "y" * 3000}, "over the limit")):
        with pytest.raises(ItemValidationError, match=match):
            MemoryItem(title="t", description="d", content="c", polarity="success", meta=bad)


def test_a_regex_piece_naming_the_querys_identifier_becomes_a_slot_in_the_raw_string(tokio):
    import ast

    from rlmlab.learning import abstract_code

    task = tokio["wait"]
    code = 'total = ctx_find(context, r"\\bfn\\s+wait\\b", k=5)["total"]\nSUBMIT(answer=total)'
    ab = abstract_code(ast.parse(code).body, task.query, task.context)
    assert ab.template == 'total = ctx_find(context, r"\\bfn\\s+{{name:ident}}\\b", k=5)[\'total\']\nSUBMIT(answer=total)'
    sibling = tokio["deadline"]
    assert "deadline" in template_rule(ab.template, query_slots(sibling.query, sibling.context))
    assert 'r"\\bfn\\s+deadline\\b"' in fill_slots(ab.template, ab.slots, sibling.query, sibling.context)
