"""Code templates in memory: the slot syntax, the item field and its migration, packs, mem_get, the
ContextBuilder's Code blocks and the loop's workspace extras; and the seed pack data/packs/step_templates.jsonl,
each template run through the real tools and judged on the odd-numbered tasks of levels 1-3 it was written from.

The even-numbered tasks are kept for reporting results: this file never builds, reads or runs them (they are
dropped by number before any task's context is read).
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from rlmlab._paths import PROJECT_ROOT
from rlmlab.errors import ConfigError
from rlmlab.executors import Trajectory
from rlmlab.memory import (
    LIMITS, MIGRATIONS, SLOT_TYPES, STEP_TEMPLATES_KEY, ContextBuilder, ItemValidationError, MemoryItem,
    MemoryStore, MemoryTask, PackError, Slot, TemplateError, export_pack, fill_template, import_pack,
    parse_template, read_pack, template_slots,
)
from rlmlab.learning import ReasoningBankLoop, judge_for, run_template
from rlmlab.memory._context import CODE_HEADER
from rlmlab.memory._schema import connect
from rlmlab.tools import Workspace, attach_ontology

PACKS = PROJECT_ROOT / "data" / "packs"
SEED = PACKS / "step_templates.jsonl"
V6 = 6  # the schema version before templates (migration 7 adds the column)


def _item(title="Count async fns", content="Use ctx_find and its total.", template=None, **kw):
    return MemoryItem(title=title, description=kw.pop("description", "how many async fns"), content=content,
                      polarity=kw.pop("polarity", "success"), template=template, **kw)


# -- slot syntax ----------------------------------------------------------------------------------------------

def test_parse_template_splits_literals_and_slots():
    text = 'q = "SELECT ?v WHERE { {{resource:curie}} {{property:curie}} ?v }"\nn = {{k:number}}'
    parts = parse_template(text)
    at = text.index
    assert parts == ['q = "SELECT ?v WHERE { ', Slot("resource", "curie", at("{{resource")), " ",
                     Slot("property", "curie", at("{{property")), ' ?v }"\nn = ', Slot("k", "number", at("{{k"))]
    assert "".join(p if isinstance(p, str) else "{{%s:%s}}" % (p.name, p.type) for p in parts) == text
    assert [s.name for s in template_slots(text)] == ["resource", "property", "k"]
    from rlmlab.executors._step_grammar import SLOT_TYPES as GRAMMAR_SLOT_TYPES

    assert SLOT_TYPES == ("word", "ident", "curie", "property", "class", "number", "path", "quoted", "iri")
    assert SLOT_TYPES == GRAMMAR_SLOT_TYPES  # the pack's validator and the step grammar read the same slots
    # single braces and regex escapes are literal; "{{{" is a literal brace and a slot
    assert parse_template(r'x = ctx_find(context, r"\{ {a}", k=1)') == [r'x = ctx_find(context, r"\{ {a}", k=1)']
    assert parse_template('q = "{{{c:curie}} }"')[1] == Slot("c", "curie", 6)


@pytest.mark.parametrize("bad, why", [
    ("x = {{name}}", "has no type"),
    ("x = {{name:thing}}", "unknown type 'thing'"),
    ("x = {{1name:word}}", "must be an identifier"),
    ("x = {{ name:word }}", "must be an identifier"),
    ("x = {{", "does not open a slot"),
    ("x = {{a:word}} + {{a:number}}", "already a word slot"),
])
def test_malformed_slots_are_template_errors(bad, why):
    with pytest.raises(TemplateError, match=why):
        parse_template(bad)
    with pytest.raises(ItemValidationError, match=f"^template: .*{why}") as err:
        _item(template=bad)
    assert err.value.field == "template"


def test_fill_template_writes_what_the_grammar_would():
    text = 'q = "{{text:quoted}}"\nn = {{k:number}} + len("{{w:word}}")\nf = {{fn:ident}}'
    filled = fill_template(text, {"text": 'say "hi" \\ now', "k": 25, "w": "Grey", "fn": "set_len"})
    assert filled == 'q = "say \\"hi\\" \\\\ now"\nn = 25 + len("Grey")\nf = set_len'
    namespace: dict = {}
    exec(filled.replace("f = set_len", "f = 0"), namespace)
    assert namespace["q"] == 'say "hi" \\ now' and namespace["n"] == 29
    with pytest.raises(TemplateError, match="no value given"):
        fill_template(text, {"text": "a", "k": 1, "w": "b"})
    with pytest.raises(TemplateError, match="no slot named 'extra'"):
        fill_template(text, {"text": "a", "k": 1, "w": "b", "fn": "c", "extra": 1})
    with pytest.raises(TemplateError, match="'12a' is not a number"):
        fill_template("n = {{k:number}}", {"k": "12a"})
    with pytest.raises(TemplateError, match="is not a curie"):
        fill_template('q = "{{c:curie}}"', {"c": "Activity"})


def test_item_template_is_validated_and_normalised():
    item = _item(template="\n\ntotal = ctx_find(context, r'fn', k=1)['total']   \nSUBMIT(answer=total)\n\n")
    assert item.template == "total = ctx_find(context, r'fn', k=1)['total']\nSUBMIT(answer=total)"
    assert _item().template is None
    for bad, why in [("", "empty"), ("x" * (LIMITS["template"] + 1), "over the limit of 2000"),
                     ("x = (", "not valid Python"), ("q = {{c:curie}}", "must sit inside a string literal"),
                     (42, "expected a string")]:
        with pytest.raises(ItemValidationError, match=f"^template: .*{why}"):
            _item(template=bad)


def test_template_does_not_change_the_id_and_round_trips():
    plain = _item()
    templated = _item(template="answer = {{a:number}} + {{b:number}}\nSUBMIT(answer=answer)")
    assert templated.id == plain.id  # the id is title + content only
    data = json.loads(json.dumps(templated.to_dict()))
    assert data["template"] == templated.template
    assert MemoryItem.from_dict(data) == templated
    assert MemoryItem.from_dict(json.loads(json.dumps(plain.to_dict()))).template is None


# -- store, migration, packs, mem_get -------------------------------------------------------------------------

def test_store_keeps_templates(tmp_path):
    template = 'q = "SELECT ?v WHERE { {{r:curie}} rdfs:label ?v }"\nSUBMIT(answer=q)'
    with MemoryStore(tmp_path / "m.sqlite") as store:
        store.add(_item(template=template))
        store.add(_item(title="Plain", content="no code"))
        assert store.get(_item().id).template == template
        assert store.get(_item(title="Plain", content="no code").id).template is None
        assert (7, "item_template") in [(m["version"], m["name"]) for m in store.migrations()]
        assert store.search("async fns")[0].id == _item().id
    with pytest.raises(sqlite3.IntegrityError):  # the column's CHECK backs the record's limit
        with MemoryStore(tmp_path / "m.sqlite") as store:
            store._conn.execute("UPDATE items SET template = ?", ("x" * 2001,))


def test_a_bank_made_before_templates_migrates_in_place(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = connect(path, MIGRATIONS[:V6])  # the schema of the code before this change
    cols = [r[1] for r in conn.execute("PRAGMA table_info(items)")]
    assert "template" not in cols
    old = [_item(title=f"Strategy {i}", content=f"Step {i}: ctx_find then total.", tags=["count"]) for i in range(3)]
    for n, it in enumerate(old):
        row = {**it.to_dict(), "tags": json.dumps(it.tags), "created_at": "2026-01-01T00:00:00.000Z",
               "updated_at": "2026-01-01T00:00:00.000Z"}
        row.pop("template"), row.pop("shape"), row.pop("meta")
        if n == 2:
            row.update(status="forgotten")
        conn.execute(f"INSERT INTO items ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    conn.execute("INSERT INTO usage VALUES (?, 't1', NULL, '2026-01-01T00:00:00.000Z', NULL)", (old[0].id,))
    conn.close()

    with MemoryStore(path) as store:
        assert [m["version"] for m in store.migrations()] == [m.version for m in MIGRATIONS]
        assert len(store) == 3  # no item lost
        got = store.items(status=None)
        assert [it.id for it in got] == sorted(it.id for it in old)
        assert all(it.template is None and it.meta == {} for it in got)
        assert store.get(old[2].id).status == "forgotten"
        assert store.usage("t1")[0]["item_id"] == old[0].id
        assert {h.id for h in store.search("strategy ctx_find")} == {old[0].id, old[1].id}
        store.add(_item(template="answer = {{a:number}}\nSUBMIT(answer=answer)"))
        assert store.get(_item().id).template.startswith("answer = ")
    with MemoryStore(path) as store:  # reopening applies nothing more
        assert len(store) == 4 and len(store.migrations()) == len(MIGRATIONS)


@pytest.mark.parametrize("pack", ["rlm_procedures.jsonl", "step_templates.jsonl"])
def test_packs_export_byte_for_byte(tmp_path, pack):
    with MemoryStore(tmp_path / "m.sqlite") as store:
        import_pack(store, PACKS / pack)
        export_pack(store, tmp_path / pack)
    assert (tmp_path / pack).read_bytes() == (PACKS / pack).read_bytes()


def test_pack_writes_template_only_when_set(tmp_path):
    with MemoryStore(tmp_path / "m.sqlite") as store:
        store.add(_item(template="answer = {{a:number}}\nSUBMIT(answer=answer)"))
        store.add(_item(title="Plain", content="no code"))
        export_pack(store, tmp_path / "out.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    by_title = {line["title"]: line for line in lines}
    assert "template" not in by_title["Plain"]
    assert list(by_title["Count async fns"])[:5] == ["id", "title", "description", "content", "template"]
    again = {it.title: it for it in read_pack(tmp_path / "out.jsonl")}
    assert again["Count async fns"].template == "answer = {{a:number}}\nSUBMIT(answer=answer)"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"title": "t", "description": "d", "content": "c", "polarity": "success",
                               "template": "x = {{oops}}"}) + "\n")
    with pytest.raises(PackError, match=r"bad\.jsonl:1: template: .*has no type"):
        read_pack(bad)


def test_mem_get_returns_the_template_when_set(tmp_path):
    from rlmlab.tools._memory import attach_memory

    store = MemoryStore(tmp_path / "m.sqlite")
    templated = _item(template="answer = {{a:number}}\nSUBMIT(answer=answer)")
    plain = _item(title="Plain", content="no code")
    store.add_many([templated, plain])
    ws = Workspace()
    attach_memory(ws, store)
    got = {it["title"]: it for it in ws.call("mem_get", [templated.id, plain.id])["items"]}
    assert got["Count async fns"]["template"] == templated.template
    assert "template" not in got["Plain"]
    store.close()


# -- ContextBuilder and loop ----------------------------------------------------------------------------------

COUNT_TEMPLATE = ('total = ctx_find(context, r"(?m)^(?![ \\t]*//).*\\basync[ \\t]+fn\\b", k=1)["total"]\n'
                  'SUBMIT(answer=total)')
SIG_TEMPLATE = ('hits = ast_query(context, \'(function_item name: (identifier) @n (#eq? @n "{{name:ident}}")) @fn\', '
                'k=1)\nSUBMIT(answer=hits["matches"][0]["line"])')


@pytest.fixture
def bank(tmp_path):
    store = MemoryStore(tmp_path / "bank.sqlite")
    store.add_many([
        _item(title="Count async functions in Rust", description="how many async functions: ctx_find total",
              content="Count async fn lines with ctx_find and submit the total.", template=COUNT_TEMPLATE),
        _item(title="Async functions by signature", description="async functions: find the fn by name",
              content="ast_query the function by name.", template=SIG_TEMPLATE),
        _item(title="Async functions are many", description="async functions: read the total, not the matches",
              content="Plain advice without code."),
        _item(title="Async functions counted by hand", description="async functions guardrail",
              content="Failure: counting matches shown.", polarity="failure", template=COUNT_TEMPLATE),
    ])
    yield store
    store.close()


def test_context_builder_shows_and_lists_injected_templates(bank):
    builder = ContextBuilder(bank, toggles=["L2"])
    built = builder.build("How many async functions are there?", trajectory_id="t1")
    assert built.text.count(CODE_HEADER) == 2  # two success strategies with code; not the guardrail's
    assert [t["title"] for t in built.templates] == ["Count async functions in Rust", "Async functions by signature"]
    assert all(set(t) == {"id", "title", "template"} for t in built.templates)
    lines = built.text.splitlines()
    for t in built.templates:  # the block sits under its own item, every line indented
        head = next(i for i, line in enumerate(lines) if line.startswith(f"- {t['title']}"))
        code = lines.index(CODE_HEADER, head)
        assert not any(line.startswith("- ") for line in lines[head + 1:code])
        assert lines[code + 1:code + 1 + len(t["template"].splitlines())] == \
            ["    " + line for line in t["template"].splitlines()]
    l2 = next(r for r in built.layers if r.layer == "L2")
    assert l2.chars <= l2.budget and built.templates[0]["id"] in l2.packed
    assert builder.last is built
    event = bank.events(kind="context")[-1]
    assert event.payload["templates"] == built.templates
    assert json.loads(json.dumps(built.to_dict()))["templates"] == built.templates


def test_templates_that_do_not_fit_are_neither_shown_nor_listed(bank):
    none = ContextBuilder(bank, toggles=["L2"], template_share=0).build("async functions", log=False)
    assert none.templates == [] and CODE_HEADER not in none.text
    tight = ContextBuilder(bank, toggles=["L2"], budgets={"L2": 500}).build("How many async functions", log=False)
    assert len(tight.templates) == 1 and tight.text.count(CODE_HEADER) == 1
    assert next(r for r in tight.layers if r.layer == "L2").chars <= 500
    with pytest.raises(ConfigError, match="template_share"):
        ContextBuilder(bank, template_share=1.5)


class _Recorder:
    """An executor that records what each rollout's workspace carries and answers "1"."""

    def __init__(self):
        self.extras: list[dict] = []

    def __call__(self, task, instructions, workspace, trajectory_id):
        self.extras.append(dict(workspace.extras))
        return Trajectory(run_id=trajectory_id, query=task.query, lm="recorder", context_mode="handle", answer="1",
                          submitted=True)


@pytest.mark.parametrize("templates", [True, False])
def test_loop_puts_injected_templates_in_each_rollouts_workspace(bank, templates):
    recorder = _Recorder()
    loop = ReasoningBankLoop(bank, builder=ContextBuilder(bank, toggles=["L2"]), executor=recorder,
                             extractor="none", rollouts=2, templates=templates)
    # Rust code (two item lines): a Rust template does not fit a plain text document (issue 53)
    task = MemoryTask("t-async", "How many async functions are there?", "async fn a() {}\nasync fn b() {}", None,
                      "2", "exact")
    loop.run_task(task)
    assert len(recorder.extras) == 2
    if templates:
        wanted = loop.builder.last.templates
        # over Rust a retrieved template must fit the question: the count, not the list by signature
        assert [t["title"] for t in wanted] == ["Count async functions in Rust"]
        assert all(extras[STEP_TEMPLATES_KEY] == wanted for extras in recorder.extras)
    else:
        assert all(STEP_TEMPLATES_KEY not in extras for extras in recorder.extras)
    other = MemoryTask("t-none", "zzz qqq", "", None, "1", "exact")
    if templates:  # a build for another task is not reused
        assert loop._workspace(other, "x").extras[STEP_TEMPLATES_KEY] == []
    with pytest.raises(ConfigError, match="templates"):
        ReasoningBankLoop(bank, executor=recorder, templates="yes")


# -- the seed pack --------------------------------------------------------------------------------------------

def _odd_tasks() -> dict:
    """The odd-numbered tasks of levels 1-3 (number = 1-based position in its (suite, level) group, in file order),
    as suite Tasks: even-numbered ones are dropped here, before any context is read. Only the suites' first 30
    tasks (the pack was written from those; tasks appended later, such as issue 18's ontology tasks with empty
    or direction-dependent answers, are unseen whatever their number)."""
    from rlmlab.experiments import SUITES, read_tasks

    out = {}
    for suite in ("code", "ontology", "arith"):
        seen: dict[int, int] = {}
        for task in read_tasks(SUITES[suite])[:30]:
            seen[task.level] = seen.get(task.level, 0) + 1
            if task.level <= 3 and seen[task.level] % 2 == 1:
                out[task.id] = task
    return out


ODD = _odd_tasks()
SEED_ITEMS = read_pack(SEED)


def _template(prefix: str) -> MemoryItem:
    found = [it for it in SEED_ITEMS if it.title.startswith(prefix)]
    assert len(found) == 1, f"{prefix!r}: {[it.title for it in found]}"
    return found[0]


def judged(task: MemoryTask, answer: str | None):
    traj = Trajectory(run_id="template-check", query=task.query, lm="template", context_mode="handle",
                      answer=answer, submitted=answer is not None)
    return judge_for(task).judge(task, traj)


# (title prefix, odd task, slot values as the grammar would take them from the query)
ODD_CHECKS = [
    ("Signature of a function", "code-l1-01", {"name": "set_len"}),
    ("Signature of a function", "code-l3-05", {"name": "is_readable"}),
    ("Return type of a function", "code-l1-03", {"name": "wait"}),
    ("Parameters (arguments) of a function", "code-l1-05", {"name": "register"}),
    ("Count async functions", "code-l2-01", {}),
    ("Count async functions", "code-l3-01", {}),
    ("Count unwrap calls", "code-l2-03", {}),
    ("Count impl blocks", "code-l2-05", {}),
    ("Find all unsafe fn declarations", "code-l3-03", {}),
    ("Value of a property of a resource", "onto-l1-01", {"resource": "prov:Activity", "property": "rdfs:label"}),
    ("Value of a property of a resource", "onto-l1-03", {"resource": "prov:Plan", "property": "prov:category"}),
    ("Value of a property of a resource", "onto-l1-05", {"resource": "prov:atTime", "property": "rdfs:comment"}),
    ("Domain and range of a property", "onto-l2-01", {"property": "prov:wasAssociatedWith"}),
    ("Direct named superclasses", "onto-l2-03", {"class": "prov:Generation"}),
    ("Resources with a given property value", "onto-l2-05", {"property": "rdfs:domain", "value": "prov:Activity"}),
    ("Classes exactly two subClassOf steps", "onto-l3-01", {"class": "prov:Influence"}),
    ("Resources whose property value is a direct subclass", "onto-l3-03",
     {"property": "rdfs:domain", "class": "prov:Influence"}),
    ("All superclasses of a class at any depth", "onto-l3-05", {"class": "prov:Quotation"}),
    ("Add two numbers", "arith-math20-q1", {"a": 2, "b": 2}),
    ("Sum then multiply", "arith-math20-q5", {"a": 8, "b": 5, "c": 3}),
    ("Divide a total by a rate", "arith-math20-q9", {"total": 5, "rate": 2}),
    ("Divide a total by a rate", "arith-math20-q17", {"total": 156, "rate": 12}),
    ("Cost of items sold at N for a price", "arith-math20-q13", {"quantity": 27, "group": 3, "price": 1}),
    ("An amount plus a fraction of it", "arith-gsm-1", {"amount": 48, "divisor": 2}),
    ("Letters in a name", "arith-gsm-23", {"times": 2, "name": "Grey", "removed": 2, "fewer": 3}),
    ("Percent of a volume in liters", "arith-gsm-27", {"liters": 2, "percent": 20}),
    ("How much more money is needed", "arith-gsm-3", {"cost": 100, "divisor": 2, "gift": 15, "times": 2}),
    ("Total of two kinds", "arith-gsm-7", {"count1": 2, "size1": 16, "count2": 2, "size2": 8}),
    ("A quantity plus N less than half", "arith-gsm-13", {"amount": 60, "divisor": 2, "less": 5}),
]
# Queries with no searchable word ("What is 2 + 2?": stopwords and one-character tokens) retrieve nothing.
NOT_RETRIEVABLE = {"arith-math20-q1", "arith-math20-q5", "arith-math20-q9"}


def test_the_checks_cover_only_odd_tasks_and_every_odd_task():
    assert {tid for _, tid, _ in ODD_CHECKS} == set(ODD)
    assert all(int(tid.rsplit("-", 1)[1]) % 2 == 1 for tid in ODD if tid.startswith(("code-", "onto-")))


@pytest.mark.parametrize("prefix, task_id, values", ODD_CHECKS, ids=[f"{t}:{p[:24]}" for p, t, _ in ODD_CHECKS])
def test_seed_template_solves_the_odd_task_it_was_written_from(prefix, task_id, values):
    from rlmlab.executors._step_grammar import query_slots

    item = _template(prefix)
    task = ODD[task_id].to_memory_task()
    candidates = query_slots(task.query)
    for slot in template_slots(item.template):  # the grammar can write these values: they are in the query
        assert str(values[slot.name]) in candidates[slot.type], (slot, candidates[slot.type])
    answer = run_template(item.template, values, task)
    verdict = judged(task, answer)
    assert verdict.success, f"{task_id}: {answer!r:.200}: {verdict.rationale}"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    store = MemoryStore(tmp_path_factory.mktemp("seed") / "seed.sqlite")
    import_pack(store, SEED)
    import_pack(store, PACKS / "rlm_procedures.jsonl")  # strategies without code compete for the same slots
    yield store
    store.close()


@pytest.mark.parametrize("prefix, task_id", [(p, t) for p, t, _ in ODD_CHECKS if t not in NOT_RETRIEVABLE])
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_retrieval_injects_the_right_template_first(seeded, prefix, task_id):
    task = ODD[task_id].to_memory_task()
    built = ContextBuilder(seeded, toggles=["L2"]).build(task, log=False)
    assert built.templates and built.templates[0]["title"] == _template(prefix).title, \
        [t["title"] for t in built.templates]


def test_seed_pack_items_are_general_success_strategies():
    assert len(SEED_ITEMS) == len({it.id for it in SEED_ITEMS}) == 62
    odd = [t.to_memory_task() for t in ODD.values()]
    specifics = {"set_len", "is_readable", "register", "BarrierWaitResult", "file.rs", "watch.rs", "mutex.rs",
                 "barrier.rs", "poll.rs", "Grey", "156", "48", "27"}
    # the ontology's own terms named by a query (rdfs:/owl: vocabulary such as rdfs:subClassOf is general)
    specifics |= {word.strip("(),.") for t in odd for word in t.query.split() if word.startswith(("prov:", "skos:"))}
    specifics.discard("prov:")
    for it in SEED_ITEMS:
        assert it.polarity == "success" and it.layer == "L2" and it.domain is None and it.template
        assert it.source == "pack:step_templates" and it.tags
        assert "SUBMIT(answer=" in it.template.splitlines()[-1]
        names = [s.name for s in template_slots(it.template)]
        assert len(names) == len(set(names)), f"{it.title}: a slot repeats; bind it to a variable"
        leaked = [s for s in specifics if s in it.template]
        assert not leaked, f"{it.title}: {leaked} belongs in a slot"


# Templates for kinds the odd tasks do not have, and constructs beyond the ones they count, checked on
# queries written here over the odd tasks' sources (judged by the same oracles).
CONSTRUCT_QUERIES = {  # title word -> how a query names it (routes to the oracle's regex for it)
    "async functions": "async functions", "unsafe blocks": "unsafe blocks", "unsafe fn": "unsafe functions",
    "unwrap calls": "unwrap calls", "public functions": "public functions", "functions (fn": "functions",
    "structs": "structs", "enums": "enums", "traits": "traits", "impl blocks": "impl blocks", "macros": "macros",
    "TODO comments": "TODO comments",
}
SOURCES = {"code-l2-05": "sync/mutex.rs", "code-l2-01": "fs/file.rs", "code-l3-01": "fs", "code-l3-03": "task",
           "code-l3-05": "event"}


def _synthetic(task_id: str, query: str, check: str = "code", expected=None) -> MemoryTask:
    base = ODD[task_id].to_memory_task()
    return MemoryTask(f"synthetic-{task_id}", query, base.context, base.domain, expected, check, dict(base.meta))


@pytest.mark.parametrize("phrase", sorted(CONSTRUCT_QUERIES))
def test_count_and_list_templates_agree_with_the_oracle_for_every_construct(phrase):
    from rlmlab.oracle import pattern_for_query

    said = CONSTRUCT_QUERIES[phrase]
    count = _template(f"Count {phrase}")
    listing = _template(f"Find all {phrase}")
    listed = 0
    for task_id, source in SOURCES.items():
        module = "." not in source
        where = f"the {source} module (all files under {source}/)" if module else source
        task = _synthetic(task_id, f"How many {said} are there in {where}?")
        answer = run_template(count.template, {}, task)
        verdict = judged(task, answer)
        if answer == "0":  # issue 53: "none" where the oracle finds none is never verified (its reading may be wrong)
            assert not verdict.success and "claims no items" in verdict.rationale, (task_id, said, verdict.rationale)
            continue
        assert verdict.success, (task_id, said, answer)
        if int(answer) > 100:  # ctx_find shows at most 100 matches: longer lists are cut
            continue
        task = _synthetic(task_id, f"Find all {said} in {where}. Answer one per line as path:line:code.")
        answer = run_template(listing.template, {}, task)
        verdict = judged(task, answer)
        assert verdict.success, (task_id, said, verdict.rationale)
        assert pattern_for_query(task.query) is not None  # the query routes to the grep oracle
        listed += 1
    assert listed, f"{phrase}: no source to check the listing on"


@pytest.mark.parametrize("query", ["What are the fields of Mutex in sync/mutex.rs?",
                                   "What are the variants of Operation in fs/file.rs?"])
def test_fields_and_variants_template(query):
    name = query.split(" of ")[1].split()[0]
    task = _synthetic("code-l2-05" if "mutex" in query else "code-l2-01", query)
    answer = run_template(_template("Fields of a struct").template, {"name": name}, task)
    assert judged(task, answer).success, answer


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_defines_template_answers_yes_and_no():
    from rlmlab.oracle import TreeSitterOracle

    item = _template("Does a Rust file define")
    base = ODD["code-l2-05"].to_memory_task()
    facts = TreeSitterOracle(base.context)
    defined = {s.name for s in facts.get_structs()} | {f.name for f in facts.get_functions()}
    for name in ("Mutex", "try_lock", "Semaphore", "Notify"):  # the last two are used, not defined, here
        want = "yes" if name in defined else "no"
        task = _synthetic("code-l2-05", f"Does sync/mutex.rs define an item named {name}?", "exact", want)
        answer = run_template(item.template, {"name": name}, task)
        assert judged(task, answer).success, (name, answer, want)
    assert {"Mutex", "try_lock"} <= defined and not {"Semaphore", "Notify"} & defined


@pytest.mark.parametrize("prefix, task_id, values", [
    ("Find all unsafe fn declarations", "code-l3-03", {}),
    ("Resources whose property value is a direct subclass", "onto-l3-03",
     {"property": "rdfs:domain", "class": "prov:Influence"}),
    ("A quantity plus N less than half", "arith-gsm-13", {"amount": 60, "divisor": 2, "less": 5}),
])
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_filled_template_runs_as_one_step_of_the_real_executor(prefix, task_id, values):
    """The template as a model step: the scratchpad executor runs it in its worker process and records the answer."""
    from rlmlab.executors import run_scratchpad
    from rlmlab.lm import make_lm

    task = ODD[task_id].to_memory_task()
    code = fill_template(_template(prefix).template, values)
    lm = make_lm("scripted", script=[f"Copy the procedure.\n```python\n{code}\n```"])
    ws = Workspace()
    if task.meta.get("ontology"):
        attach_ontology(ws, task.meta["ontology"])
    traj = run_scratchpad(task.query, task.context, lm=lm, workspace=ws, max_iters=1,
                          source_path=task.meta.get("source_path"))
    assert traj.submitted and traj.error is None
    assert judged(task, traj.answer).success
