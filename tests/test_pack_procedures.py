"""Procedures for questions over many items live in memory, not in the step space (issue 53).

The traits of X, the implementors of Y, the file with the most unsafe blocks, the most implemented trait, distinct
traits, a signature, path:line listings: each is an L2 template of the hand pack (``data/packs/step_templates.jsonl``)
that a run gets only by retrieving it. A run without memory is offered no whole solver, whatever the question's
words; it gets the generic operations over a whole result instead (count, distinct, filter, argmax, group by file).
Checked on the E14 train stream's real tasks and contexts (tokio, rayon, mio ...), the step grammar as a byte-level
llguidance matcher, the real REPL with a scripted LM, the real judges, the template extractor and replay."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from rlmlab.executors import CodeRunOptions, query_slots
from rlmlab.executors._constrain import run_step_grammar
from rlmlab.executors._offer import _py_raw as py_raw, grep_patterns
from rlmlab.experiments._suites import read_tasks, task_context
from rlmlab.learning import EXTRACTORS, OracleJudge, abstract_trajectory, fill_slots, replay_code, rlm_executor
from rlmlab.learning._replay import replay_workspace
from rlmlab.lm import make_lm
from rlmlab.tools import TOOLS, Workspace
from tests.grammar_check import accepts
from helpers import grammar_step

TRAIN = "data/tasks/e14/code_train.jsonl"  # the train stream only: the test split is not read here
PACK = "data/packs/step_templates.jsonl"
# each many-item kind of the train stream and the title of the pack item that solves it
PROCEDURES = {
    "traits_of": "Traits a type implements in Rust code",
    "implementors": "Types that implement a trait in Rust code",
    "most_implemented_trait": "The trait implemented most often in Rust code, one named trait left out",
    "most_unsafe_file": "The file with the most unsafe blocks (unsafe {) in a Rust module or crate",
    "distinct_traits": "How many distinct traits are implemented in Rust code",
    "signature": "Signature of a function or method in Rust code",
    "signature_in_module": "Signature of a function or method in Rust code",
    "find_all_async_fns": "Find all async functions (async fn) in Rust code",
    "find_all_unsafe_blocks": "Find all unsafe blocks (unsafe {) in Rust code",
}
TOOL_NAMES = frozenset(spec.name for spec in TOOLS)


@pytest.fixture(scope="module")
def train():
    return read_tasks(TRAIN)


@pytest.fixture(scope="module")
def pack():
    return {d["title"]: d for d in map(json.loads, open(PACK, encoding="utf-8")) if d.get("template")}


def _template(pack, kind: str) -> str:
    [item] = [d for title, d in pack.items() if title.startswith(PROCEDURES[kind])]
    return item["template"]


def _first(train, kind: str):
    return next(t for t in train if t.kind == kind)


def _grammar(task, templates=()) -> str:
    ws = Workspace(registry=TOOLS)
    ws.extras["step_templates"] = [{"id": f"mem_{i}", "template": t} for i, t in enumerate(templates)]
    run = SimpleNamespace(workspace=ws, options=CodeRunOptions(decoding="grammar"),
                          records=[], query=task.query, context_text=task_context(task))
    return run_step_grammar(run, fmt="rlm", must_submit=False)


def _filled(template: str, name: str) -> str:
    return re.sub(r"\{\{\w+:ident\}\}", name, template)


def _names(task) -> list[str]:
    return query_slots(task.query, task_context(task))["ident"] or [""]


@pytest.mark.slow
def test_a_run_without_memory_is_offered_no_whole_solver_and_a_run_that_retrieved_one_is(train, pack):
    for kind in ("traits_of", "implementors", "most_unsafe_file", "distinct_traits"):
        task, template = _first(train, kind), _template(pack, kind)
        step = grammar_step(task.query, _filled(template, _names(task)[0]), "post")
        assert not accepts(_grammar(task), step), kind  # no_memory: the procedure is not in the step space
        assert accepts(_grammar(task, [template]), step), kind  # retrieved from memory: it is
    traits = _first(train, "traits_of")
    name = next(g for g in re.search(r"\bfor (\w+) in\b", traits.query).groups() if g)
    g = _grammar(traits, [_template(pack, "traits_of")])
    assert not accepts(g, grammar_step(traits.query, _filled(_template(pack, "traits_of"), "NotInTheQuery"), "post"))
    assert accepts(g, grammar_step(traits.query, _filled(_template(pack, "traits_of"), name), "post"))


@pytest.mark.slow
def test_without_memory_the_generic_operations_compose_the_same_answers(train):
    """The same many-item questions, answered in one step from a tool call and a generic operation the grammar
    offers whatever the question says: filter on a capture, distinct count, argmax by file."""
    traits = _first(train, "traits_of")
    name = re.search(r"\bfor (\w+) in\b", traits.query).group(1)
    impls = "hits = ast_query(context, '(impl_item trait: (_) @name type: (_) @type)', k=100)\n"
    filt = (impls + 'SUBMIT(answer=", ".join(dict.fromkeys(m["captures"]["name"] for m in hits["matches"] '
            f'if m["captures"]["type"] == "{name}")))')
    assert accepts(_grammar(traits), grammar_step(traits.query, filt, "post"))
    distinct = _first(train, "distinct_traits")
    assert accepts(_grammar(distinct), grammar_step(distinct.query, impls + 'SUBMIT(answer=len({m["captures"]["name"] '
                                                                'for m in hits["matches"]}))', "post"))
    unsafe = _first(train, "most_unsafe_file")
    [pattern] = grep_patterns(unsafe.query, _names(unsafe), task_context(unsafe))
    by_file = (f'hits = ctx_find(context, {py_raw(pattern)}, k=100)\n'
               'SUBMIT(answer=max(sorted({m["file"] for m in hits["matches"]}), '
               'key=[m["file"] for m in hits["matches"]].count))')
    assert accepts(_grammar(unsafe), grammar_step(unsafe.query, by_file, "post"))
    assert replay_code(by_file, unsafe.to_memory_task()).success  # the oracle's own argmax file
    # and the composed step answers what the oracle verifies, run in the real REPL
    for task, code in ((traits, filt), (distinct, impls + 'SUBMIT(answer=len({m["captures"]["name"] '
                                                           'for m in hits["matches"]}))')):
        result = replay_code(code, task.to_memory_task())
        assert result.answer not in (None, ""), result


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_llama_cpp_parses_the_grammars_with_generic_operations_and_retrieved_procedures(train, pack):
    from llama_cpp import LlamaGrammar

    for kind in PROCEDURES:
        task = _first(train, kind)
        LlamaGrammar.from_string(_grammar(task), verbose=False)
        LlamaGrammar.from_string(_grammar(task, [_template(pack, kind)]), verbose=False)


@pytest.mark.parametrize("kind", sorted(PROCEDURES))
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_pack_procedure_answers_the_first_train_task_of_each_kind(train, pack, kind):
    """Run in the real REPL and judged by the task's judge (the answer key; the oracle for code tasks)."""
    task = _first(train, kind).to_memory_task()
    for name in _names(_first(train, kind)):
        result = replay_code(_filled(_template(pack, kind), name), task)
        if result.success:
            break
    assert result.success, (result.answer, result.rationale)


@pytest.mark.slow
def test_a_many_item_trajectory_becomes_a_template_with_the_name_as_a_slot_and_replay_admits_it(train, pack):
    tasks = [t for t in train if t.kind == "traits_of"][:2]
    task, sibling = (t.to_memory_task() for t in tasks)
    name = re.search(r"\b(?:for|by) (\w+) in\b", task.query).group(1)
    code = _filled(_template(pack, "traits_of"), name)
    traj = rlm_executor(make_lm("scripted", script=[{"reasoning": "post", "code": code}]))(
        task, "", replay_workspace(task), f"t-{task.id}")
    verdict = OracleJudge().judge(task, traj)  # key-free: the source decides
    assert verdict.success, verdict.rationale
    ab = abstract_trajectory(traj, task.query, task.context, tool_names=TOOL_NAMES)
    # the type's name became the slot; the impl pattern, the name normalisation and the de-duplication stay literal
    assert [(b.type, b.value) for b in ab.slots] == [("ident", name)]
    assert name not in ab.template and "dict.fromkeys(" in ab.template and "impl_item trait:" in ab.template
    assert fill_slots(ab.template, ab.slots, sibling.query, sibling.context) is not None
    ext = EXTRACTORS.make("template")
    [item] = ext.extract_with_report(task, traj, verdict).items
    assert item.polarity == "success" and item.meta["admission"]["replay"] is True
    assert item.template == ab.template


def test_words_inside_attributes_do_not_fill_a_name_slot(train):
    """cfg(not(...)) in the source made the query's "not derives" a name: the greedy step filled the type slot
    with "not" (dev stream, rand)."""
    tasks = [t for t in train if t.kind == "traits_of" and "cfg(not(" in task_context(t)]
    assert tasks
    for t in tasks:
        idents = query_slots(t.query, task_context(t))["ident"]
        assert "not" not in idents and "all" not in idents, (t.id, idents)
