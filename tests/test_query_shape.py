"""Retrieval by query shape: the shapes of real queries, one literal reader for the grammar and for shapes, the
shape column's migration on an existing store file, the hand-pack template found for a query with no content
word, and recall@1 of the right template on a real bank."""

from __future__ import annotations

import sqlite3

import pytest

from rlmlab._paths import PROJECT_ROOT
from rlmlab.experiments import SUITES, load_suite, read_tasks
from rlmlab.learning import AFTER_RETRIEVAL, BEFORE_RETRIEVAL, right_templates, template_recall
from rlmlab.memory import (
    MIGRATIONS, RETRIEVAL_POLICIES, MemoryItem, MemoryStore, MemoryTask, import_pack, make_retriever, query_shape,
    query_slots, shape_similarity,
)
from rlmlab.memory._schema import connect

PACK = PROJECT_ROOT / "data" / "packs" / "step_templates.jsonl"
SUITE_QUERIES = {t.id: t.query for s in ("code", "ontology", "arith") for t in read_tasks(SUITES[s])}


@pytest.mark.parametrize("task_id, shape", [
    ("arith-math20-q1", "What is {number} + {number}?"),
    ("arith-math20-q5", "What is ({number} + {number}) * {number}?"),
    ("arith-math20-q11", "What is {number}% of {number}?"),
    ("code-l1-01", "What is the signature of {ident} in {path}?"),
    ("code-l1-06", "Does {ident} implement {ident}? Answer yes or no."),
    ("code-l2-02", "How many unsafe blocks are there in {path}?"),
    ("onto-l2-04", "Write a SPARQL SELECT query over PROV-O (prov:, the W3C PROV ontology) that returns the "
                   "{property} of {property} ({number} column)."),
    ("arith-math20-q13", "A shop sells pencils at {number} for ${number}. How many dollars do {number} pencils cost?"),
])
def test_shapes_of_real_queries(task_id, shape):
    assert query_shape(SUITE_QUERIES[task_id]) == shape


def test_a_shape_is_read_with_the_grammars_literals():
    """Every slot marker of a shape stands for a value the step grammar offers for that slot type, and a shape
    is its own shape (stored shapes and query shapes compare alike)."""
    from rlmlab.executors._step_grammar import query_slots as grammar_slots

    assert grammar_slots is query_slots  # one definition, in rlmlab.memory
    for query in SUITE_QUERIES.values():
        shape = query_shape(query)
        slots = query_slots(query)
        for kind in ("number", "path", "property", "class"):
            if "{" + kind + "}" in shape:
                assert slots[kind], (kind, query)
        assert query_shape(shape) == shape, query
    assert query_shape("Count 'async fn' in lib.rs") == "Count {quoted} in {path}"
    assert shape_similarity(query_shape("What is 2 + 2?"), query_shape("What is 125 + 389?")) == 1.0
    assert shape_similarity("What is {number} + {number}?", "What is {number} / {number}?") < 1.0
    assert shape_similarity("", "What is {number}?") == 0.0


@pytest.fixture
def bank(tmp_path):
    store = MemoryStore(tmp_path / "bank.sqlite")
    import_pack(store, PACK)
    import_pack(store, PROJECT_ROOT / "data" / "packs" / "rlm_procedures.jsonl")  # strategies without code compete
    yield store
    store.close()


def _first_template(store, query, **policy):
    options = dict(policy)
    found = RETRIEVAL_POLICIES.make(options.pop("policy"), **options).retrieve(store, query, None)
    return next((it.title for it in found.successes if it.template), None)


def test_a_query_without_content_words_finds_its_template_by_shape(bank):
    # "What is 7 + 15?" has no searchable word (stopwords and numbers): words alone find nothing
    assert bank.search("What is 7 + 15?") == []
    assert _first_template(bank, "What is 7 + 15?", **BEFORE_RETRIEVAL) is None
    assert _first_template(bank, "What is 7 + 15?", **AFTER_RETRIEVAL).startswith("Add two numbers")
    assert _first_template(bank, "What is (3 + 4) * 6?", **AFTER_RETRIEVAL).startswith("Sum then multiply")
    assert _first_template(bank, "What is 81 / 9?", **AFTER_RETRIEVAL).startswith("Divide a total by a rate")
    # same shape as every "How many X are there in P?" template: the words pick the construct
    title = _first_template(bank, "How many unsafe blocks are there in sync/oneshot.rs?", **AFTER_RETRIEVAL)
    assert title.startswith("Count unsafe blocks")
    policy = RETRIEVAL_POLICIES.make("templates")
    assert policy.k_success == 1 and policy.k_failure == 0 and policy.retriever == "shape"
    assert RETRIEVAL_POLICIES.make("templates", k_success=3).k_success == 3  # the option stays


def test_shape_retriever_falls_back_to_words_when_no_shape_fits(bank):
    words = [h.id for h in bank.search("SPARQL anti-pattern guardrail", 5)]
    assert [h.id for h in make_retriever("shape", bank).search("SPARQL anti-pattern guardrail", 5)] == words


def test_an_existing_store_file_gains_the_shape_column_and_index(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = connect(path, MIGRATIONS[:9])  # the schema before shapes
    assert "shape" not in [r[1] for r in conn.execute("PRAGMA table_info(items)")]
    old = MemoryItem(title="Add two numbers", description="what is a + b", content="answer = a + b",
                     polarity="success", template="answer = {{a:number}} + {{b:number}}\nSUBMIT(answer=answer)")
    row = {**old.to_dict(), "tags": "[]", "created_at": "2026-01-01T00:00:00.000Z",
           "updated_at": "2026-01-01T00:00:00.000Z"}
    row.pop("shape"), row.pop("meta")  # meta came later (migration 11)
    conn.execute(f"INSERT INTO items ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    conn.close()
    with MemoryStore(path) as store:
        assert [m["version"] for m in store.migrations()][-1] == MIGRATIONS[-1].version
        assert store.get(old.id).shape is None and store.get(old.id).template == old.template
        assert store.search("add two numbers")[0].id == old.id  # the old item is still found by words
        shaped = MemoryItem(title="Divide", description="a / b", content="answer = a / b", polarity="success",
                            shape="What is 8 / 2?\nHow many days does she need to read a 156-page book?")
        store.add(shaped)
        assert store.get(shaped.id).shape == ("What is {number} / {number}?\n"
                                              "How many days does she need to read a {number}-page book?")
        hits = make_retriever("shape", store).search("What is 9 / 3?", 2)
        assert hits[0].id == shaped.id
    with sqlite3.connect(path) as raw:  # the index answers on its own, slot markers and operators as tokens
        found = raw.execute("SELECT count(*) FROM items_fts_shape WHERE items_fts_shape MATCH '\"/\"'").fetchone()
        assert found == (1,)


def test_shape_must_be_text():
    from rlmlab.memory import ItemValidationError

    with pytest.raises(ItemValidationError, match="^shape: expected a string"):
        MemoryItem(title="t", description="d", content="c", polarity="success", shape=3)
    assert MemoryItem(title="t", description="d", content="c", polarity="success", shape="\n \n").shape is None


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_recall_at_1_on_a_real_bank(bank):
    tasks = {t.id: t for t in load_suite("arith", levels=[1])}
    chosen = [tasks[i] for i in ("arith-math20-q1", "arith-math20-q3", "arith-math20-q7", "arith-math20-q15")]
    templated = [it for it in bank.items() if it.template]
    right = {t.id: right_templates(t, templated) for t in chosen}
    titles = {it.id: it.title for it in templated}
    assert any(titles[i].startswith("Add two numbers") for i in right["arith-math20-q3"])  # 125 + 389 = 514
    assert any(titles[i].startswith("Divide a total") for i in right["arith-math20-q7"])  # 144 / 12
    before = template_recall(chosen, bank, retrieval=BEFORE_RETRIEVAL, right=right)
    after = template_recall(chosen, bank, retrieval=AFTER_RETRIEVAL, right=right)
    rows = {r["task_id"]: r for r in after.rows}
    assert rows["arith-math20-q3"]["hit"] and rows["arith-math20-q7"]["hit"]
    assert {r["task_id"]: r["hit"] for r in before.rows}["arith-math20-q3"] is False  # no word to search with
    assert after.recall() > before.recall()
    covered = sum(bool(v) for v in right.values())
    assert after.kinds["arith-l1"]["covered"] == covered and after.kinds["arith-l1"]["tasks"] == 4


def test_right_templates_reject_a_template_that_does_not_solve(bank):
    task = MemoryTask("t", "What is 2 + 3?", expected="5", check="numeric")
    wrong = MemoryItem(title="Multiply", description="a * b", content="x", polarity="success",
                       template="answer = {{a:number}} * {{b:number}}\nSUBMIT(answer=answer)")
    right = MemoryItem(title="Add", description="a + b", content="y", polarity="success",
                       template="answer = {{a:number}} + {{b:number}}\nSUBMIT(answer=answer)")
    assert right_templates(task, [wrong, right]) == [right.id]


@pytest.mark.local_model
def test_local_model_copies_the_template_found_by_shape(tmp_path):
    """The embedded model on a held-out query with no content word ("What is 125 + 389?"): the templates policy
    injects the hand pack's a + b template (words alone inject nothing), and step 1 is that template filled."""
    import dataclasses
    import json

    from rlmlab.executors import Trajectory
    from rlmlab.experiments import load_experiment, run_experiment

    task = next(t for t in load_suite("arith", levels=[1]) if t.id == "arith-math20-q3")
    exp = load_experiment("E13")
    cond = dataclasses.replace(exp.condition("grammar_templates"), retrieval={"policy": "templates"})
    run = run_experiment(dataclasses.replace(exp, conditions=(cond,)), task_list=[task], lm="local",
                         lm_options={"max_tokens": 160}, runs_dir=tmp_path, progress=False)
    row = json.loads((run.run_dir / "results.jsonl").read_text().splitlines()[0])
    with MemoryStore(run.run_dir / "memory.grammar_templates.sqlite") as store:
        injected = store.get_many(row["injected"])
    assert [it.title[:15] for it in injected] == ["Add two numbers"]
    traj = Trajectory.read_jsonl(run.run_dir / "trajectories" / row["trajectory_id"] / "trajectory.jsonl")
    assert traj.iterations[0].code.startswith("answer = 125 + 389") or traj.iterations[0].code.startswith(
        "answer = 389 + 125"), traj.iterations[0].code
    assert row["success"], row["answer"]


def test_an_ident_slot_takes_only_names_the_code_has_not_words_of_its_comments_or_strings():
    from rlmlab.memory import query_slots

    context = ('/// Call wait() to block. See also Notify::new(x).\n// let spawn = spawn_blocking(f);\n'
               'fn wait(&self) -> u8 { let s = "call poll(x)"; 0 }\n')
    slots = query_slots("What does fn wait return, or spawn_blocking or poll or Notify?", context)
    assert slots["ident"] == ["wait"]


def _names_something_by_search(word: str, context: str) -> bool:
    """The rule as one regex search per word (what the name set replaced): the reference for the test below."""
    import re

    from rlmlab.memory._literals import _RUST_KEYWORDS, _code_only

    if word in _RUST_KEYWORDS:
        return False
    w = re.escape(word)
    return re.search(rf"\b(?:fn|struct|enum|trait|type|impl|mod|const|static|let|union|macro_rules!)\s+{w}\b"
                     rf"|\b{w}\s*(?:\(|<|::|\{{)|[.:]{w}\b"
                     rf"|\bimpl\s*<[^>{{}}]*>\s+{w}\b|\bfor\s+{w}\s*(?:<|\{{|where\b)", _code_only(context)) is not None


@pytest.mark.slow
def test_the_name_set_grounds_the_same_words_as_a_search_per_word(tokio_src):
    import re

    from rlmlab.memory._literals import _names_something

    files = [tokio_src / "fs" / "file.rs", tokio_src / "sync" / "notify.rs",
             PROJECT_ROOT / "data" / "ontology" / "skos.ttl"]
    checked = grounded = 0
    for path in files:
        context = path.read_text()
        for word in sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", context))):
            expected = _names_something_by_search(word, context)
            assert _names_something(word, context) == expected, (path.name, word)
            checked, grounded = checked + 1, grounded + expected
    assert checked > 500 and 0 < grounded < checked  # both verdicts occur
    # a name right after two definition keywords is found too (a search per word found it; one pass must)
    overlap = "const static LIMIT: u8 = 0;"
    assert _names_something("LIMIT", overlap) and _names_something_by_search("LIMIT", overlap)
