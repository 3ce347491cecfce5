"""Post-processing steps in the closed space (rlmlab.executors._offer.post_templates): questions over many items
(the traits of X, the implementors of Y, the file with the most unsafe blocks, the most implemented trait, distinct
traits) are offered whole steps that post-process a tool's result as the oracles' answers do; other questions are
not. Checked on the E14 train stream's real tasks and contexts (tokio, rayon, mio ...), the step grammar as a
byte-level llguidance matcher, the real REPL with a scripted LM, the real judges, the template extractor and replay."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from rlmlab.executors import CodeRunOptions, query_slots
from rlmlab.executors._constrain import run_step_grammar
from rlmlab.executors._offer import post_templates
from rlmlab.experiments._suites import read_tasks, task_context
from rlmlab.learning import EXTRACTORS, OracleJudge, abstract_trajectory, fill_slots, replay_code, rlm_executor
from rlmlab.learning._replay import replay_workspace
from rlmlab.lm import make_lm
from rlmlab.tools import TOOLS, Workspace

TRAIN = "data/tasks/e14/code_train.jsonl"  # the train stream only: the test split is not read here
POST_KINDS = ("traits_of", "implementors", "most_implemented_trait", "most_unsafe_file", "distinct_traits",
              "signature", "signature_in_module", "find_all_async_fns", "find_all_unsafe_blocks", "find_all_unsafe_fns")
OTHER_KINDS = ("count_unwrap_calls", "return_type", "does_implement", "variants", "count_impl_blocks",
               "module_count_unsafe_blocks", "crate_count_impl_blocks", "parameters", "fields")
TOOL_NAMES = frozenset(spec.name for spec in TOOLS)


@pytest.fixture(scope="module")
def train():
    return read_tasks(TRAIN)


def _first(train, kind: str):
    return next(t for t in train if t.kind == kind)


def _accepts(grammar: str, text: str) -> bool:
    import llguidance

    tok = llguidance.LLTokenizer("byte")
    m = llguidance.LLMatcher(tok, llguidance.grammar_from("grammar", grammar), log_level=0)
    assert not m.is_error(), m.get_error()
    return m.consume_tokens(tok.tokenize_bytes(text.encode())) and m.is_accepting()


def _grammar(task) -> str:
    run = SimpleNamespace(workspace=Workspace(registry=TOOLS), options=CodeRunOptions(decoding="grammar"),
                          records=[], query=task.query, context_text=task_context(task))
    return run_step_grammar(run, fmt="rlm", must_submit=False)


def _step(task, code: str) -> str:
    return (f"[[ ## reasoning ## ]]\nQuestion: {' '.join(task.query.split())} Plan: post\n\n[[ ## code ## ]]\n"
            f"{code}\n\n[[ ## completed ## ]]")


def _filled(task, name: str | None = None) -> str:
    """The task's post-processing step, its slot filled with ``name`` (default: the query's first grounded ident)."""
    [template] = post_templates(task.query)
    value = name or query_slots(task.query, task_context(task))["ident"][0]
    return re.sub(r"\{\{\w+:ident\}\}", value, template)


def test_post_processing_is_offered_for_questions_over_many_items_and_not_for_others(train):
    for kind in POST_KINDS:
        assert len(post_templates(_first(train, kind).query)) == 1, kind
    for kind in OTHER_KINDS:
        assert post_templates(_first(train, kind).query) == [], kind
    task = _first(train, "traits_of")
    assert "{{type:ident}}" in post_templates(task.query)[0]  # the type's name is a slot, filled by the grammar
    assert "{{trait:ident}}" in post_templates(_first(train, "implementors").query)[0]
    # "Future aside": the argmax leaves out the trait the query sets aside
    assert 't != "Future"' in post_templates(_first(train, "most_implemented_trait").query)[0]


def test_the_step_grammar_offers_the_filled_post_processing_step_only_where_it_fits(train):
    traits = _first(train, "traits_of")
    name = re.search(r"\bfor (\w+) in\b|\bby (\w+) in\b|\bdoes (\w+) implement\b", traits.query)
    name = next(g for g in name.groups() if g)
    g = _grammar(traits)
    assert _accepts(g, _step(traits, _filled(traits, name)))
    assert not _accepts(g, _step(traits, _filled(traits, "NotInTheQuery")))  # the slot takes the query's names
    unsafe = _first(train, "most_unsafe_file")
    assert _accepts(_grammar(unsafe), _step(unsafe, _filled(unsafe)))
    count = _first(train, "count_impl_blocks")  # a single grep answers a count: no post-processing step
    assert not _accepts(_grammar(count), _step(count, _filled(unsafe)))


def test_llama_cpp_parses_the_grammars_with_post_processing_steps(train):
    from llama_cpp import LlamaGrammar

    for kind in POST_KINDS:
        LlamaGrammar.from_string(_grammar(_first(train, kind)), verbose=False)


@pytest.mark.parametrize("kind", POST_KINDS)
def test_the_post_processing_step_answers_the_first_train_task_of_each_kind(train, kind):
    """Run in the real REPL and judged by the task's judge (the answer key; the oracle for code tasks)."""
    task = _first(train, kind).to_memory_task()
    for name in query_slots(task.query, task.context)["ident"] or [""]:
        result = replay_code(_filled(_first(train, kind), name), task)
        if result.success:
            break
    assert result.success, (result.answer, result.rationale)


def test_a_post_processing_trajectory_becomes_a_template_with_the_name_as_a_slot_and_replay_admits_it(train):
    tasks = [t for t in train if t.kind == "traits_of"][:2]
    task, sibling = (t.to_memory_task() for t in tasks)
    name = re.search(r"\b(?:for|by) (\w+) in\b", task.query).group(1)
    code = _filled(tasks[0], name)
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


def test_a_retrieved_template_of_another_many_item_question_is_not_offered_beside_the_post_processing(train):
    """On the dev stream the greedy step of "which trait is implemented most, Future aside" copied a retrieved
    implementors template filled with Future; the query's own post-processing step replaces retrieved ones."""
    most, impl = _first(train, "most_implemented_trait"), _first(train, "implementors")
    [learnt] = post_templates(impl.query)
    ws = Workspace(registry=TOOLS)
    ws.extras["step_templates"] = [{"id": "mem_x", "template": learnt}]
    run = SimpleNamespace(workspace=ws, options=CodeRunOptions(decoding="grammar"), records=[], query=most.query,
                          context_text=task_context(most))
    g = run_step_grammar(run, fmt="rlm", must_submit=False)
    assert _accepts(g, _step(most, _filled(most)))
    name = query_slots(most.query, task_context(most))["ident"][0]  # a name the learnt template's slot could take
    assert not _accepts(g, _step(most, learnt.replace("{{trait:ident}}", name)))


def test_words_inside_attributes_do_not_fill_a_name_slot(train):
    """cfg(not(...)) in the source made the query's "not derives" a name: the greedy step filled the type slot
    with "not" (dev stream, rand)."""
    tasks = [t for t in train if t.kind == "traits_of" and "cfg(not(" in task_context(t)]
    assert tasks
    for t in tasks:
        idents = query_slots(t.query, task_context(t))["ident"]
        assert "not" not in idents and "all" not in idents, (t.id, idents)
