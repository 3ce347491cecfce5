"""Task suites under data/tasks/: they load, span levels 1-5, every checker accepts its expected answer and
rejects a wrong one, every expected answer is recomputed from the real sources, and bad lines are named.

The helpers ``derive_code_answer`` and ``DERIVED`` are how data/tasks/code.jsonl was computed (see
data/tasks/README.md): the code oracle's own ground truth for ``code`` tasks (taskgen's ``oracle_answer``),
tree-sitter and line regexes for the few numeric/exact ones the oracle cannot decide.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rlmlab.errors import ConfigError
from rlmlab.executors._trajectory import Trajectory
from rlmlab.experiments import MAX_CONTEXT_CHARS, SUITES, SuiteError, Task, load_suite, read_tasks, task_context
from rlmlab.learning import judge_for
from rlmlab.oracle import TreeSitterOracle
from rlmlab.taskgen._code import oracle_answer
from rlmlab.taskgen._rust import open_sources

ROOT = Path(__file__).resolve().parents[1]

# -- how the code suite's expected answers are computed --------------------------------------------------

CODE_LINE = r"^(?!\s*//).*"  # as the GrepOracle: lines that are not // comments
PUB_ASYNC_FN = r"\bpub(\([^)]*\))?\s+async\s+(unsafe\s+)?fn\b"
UNSAFE_BLOCK = r"\bunsafe\s*\{"


def _sources(path: Path) -> list[tuple[str | None, str]]:
    if path.is_file():
        return [(None, path.read_text(encoding="utf-8"))]
    return [(p.relative_to(path).as_posix(), p.read_text(encoding="utf-8"))
            for p in sorted(path.rglob("*.rs")) if p.is_file()]


def derive_code_answer(query: str, path: Path) -> str | int:
    """The oracle's ground truth for a ``code`` task, written as an agent would answer: taskgen's
    :func:`~rlmlab.taskgen._code.oracle_answer` (the same derivation ``rlmlab tasks generate`` uses) over the
    crate's ``src`` directory, the task's file or directory its scope; every stored question must be decided."""
    src = next(p for p in (path, *path.parents) if p.name == "src")
    [tree] = open_sources([src])
    answer = oracle_answer(tree, path.relative_to(src).as_posix() if path != src else ".", query)
    assert answer is not None, f"the oracle cannot decide: {query}"
    return answer


def _grep_count(path: Path, regex: str) -> int:
    rx = re.compile(CODE_LINE + regex)
    return sum(1 for _, text in _sources(path) for line in text.splitlines() if rx.search(line))


def _unique_max(counts: dict[str, int]) -> str:
    top = max(counts.values())
    (winner,) = [k for k, v in counts.items() if v == top]  # a tie would make the task ambiguous
    return winner


def _impls(path: Path) -> list:
    return [i for p, t in _sources(path) for i in TreeSitterOracle(t, p).get_impls() if not i.negative]


def _return_type(path: Path, name: str) -> str:
    (ret,) = {f.return_type for _, t in _sources(path) for f in TreeSitterOracle(t).get_functions() if f.name == name}
    return ret


def _most_implemented(path: Path, skip: str) -> str:
    impls = [i for i in _impls(path) if i.trait_name and i.trait_name != skip]
    return _unique_max({t: len({i.type_name for i in impls if i.trait_name == t}) for t in {i.trait_name for i in impls}})


# Tasks whose question the oracle cannot decide (checker exact or numeric): id -> derivation from the source.
DERIVED = {
    "code-l1-03": lambda p: _return_type(p, "wait"),
    "code-l1-04": lambda p: "yes" if _grep_count(p, r"\bpub\s+struct\s+Elapsed\b") else "no",
    "code-l5-01": lambda p: _grep_count(p, PUB_ASYNC_FN),
    "code-l5-04": lambda p: _unique_max({f: _grep_count(p / f, UNSAFE_BLOCK) for f, _ in _sources(p)}),
    "code-l5-05": lambda p: len({i.trait_name for i in _impls(p) if i.trait_name}),
    "code-l5-06": lambda p: _most_implemented(p, "Future"),
}


def derive_expected(task: Task) -> str | int:
    """The expected answer of a code-suite task, recomputed from the crate sources."""
    path = task.source_path()
    return DERIVED[task.id](path) if task.id in DERIVED else derive_code_answer(task.query, path)


# -- fixtures ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def suites() -> dict:
    return {name: load_suite(name) for name in SUITES}


@pytest.fixture(scope="module")
def judges() -> dict:
    """One judge per checker for the whole module: parse caches and reference rows are shared."""
    return {}


def _judge(judges: dict, task):
    if task.check not in judges:
        judges[task.check] = judge_for(task)
    return judges[task.check]


def traj(query: str, answer) -> Trajectory:
    return Trajectory(run_id="t", query=query, lm="x", context_mode="handle", answer=answer, submitted=True)


def reference_answer(task) -> str:
    """The expected answer as the agent would say it (the reference query itself for sparql)."""
    ref = task.meta.get("reference", task.expected)
    if task.check == "set":  # every item, one per line
        return "\n".join(map(str, ref))
    return str(ref[0] if isinstance(ref, list) else ref)


# -- the suites -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(SUITES))
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_suite_loads_with_all_levels_and_unique_ids(suites, name):
    tasks = suites[name]
    assert len(tasks) >= 25
    assert sorted({t.meta["level"] for t in tasks}) == [1, 2, 3, 4, 5]
    assert len({t.id for t in tasks}) == len(tasks)
    assert {t.meta["suite"] for t in tasks} == {name.split("-")[0]}  # code-paraphrase-dev is a code suite
    for t in tasks:
        assert t.check in ("exact", "contains", "numeric", "set", "sparql", "code") and t.query.strip()
        # the generated suites keep every context small; a researcher's whole-crate question may not
        assert len(t.context) <= MAX_CONTEXT_CHARS or "paraphrase" in name, (t.id, len(t.context))
        if name == "arith":
            assert t.context == "" and t.check == "numeric"
        if name == "ontology":
            assert t.check == "sparql" and Path(t.meta["ontology"]).is_file() and t.context.startswith("@prefix")
        if name == "code":
            assert t.domain.startswith("crate:") and Path(t.meta["source_path"]).exists() and t.context


@pytest.mark.parametrize("name", list(SUITES))
@pytest.mark.slow
def test_every_checker_accepts_the_expected_answer(suites, judges, name):
    failed = []
    for task in suites[name]:
        verdict = _judge(judges, task).judge(task, traj(task.query, reference_answer(task)))
        if not (verdict.success and verdict.confidence == 1.0):
            failed.append((task.id, verdict.rationale))
    assert not failed


PROV = "PREFIX prov: <http://www.w3.org/ns/prov#>\nPREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"


@pytest.mark.parametrize("name, task_id, wrong", [
    ("code", "code-l2-01", "9"),  # one async fn short
    ("code", "code-l4-01", "BufReader, BufWriter, Chain, Empty, Take, Repeat"),
    ("code", "code-l5-04", "bytes.rs"),
    ("ontology", "onto-l2-02", "PREFIX prov: <http://www.w3.org/ns/prov#>\n"
                               "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
                               "SELECT ?class WHERE { ?class rdfs:subClassOf+ prov:Agent }"),
    ("ontology", "onto-l5-01", "SELECT (COUNT(?c) AS ?n) WHERE { ?c a <http://www.w3.org/2002/07/owl#Class> }"),
    # issue 18: the inverse property's domain and range (reversed), and guesses where the answer is empty
    ("ontology", "onto-l2-08", PROV + "SELECT ?domain ?range WHERE { prov:wasGeneratedBy rdfs:domain ?domain ; "
                               "rdfs:range ?range }"),
    ("ontology", "onto-l2-08", PROV + "SELECT ?range ?domain WHERE { prov:wasGeneratedBy rdfs:domain ?domain ; "
                               "rdfs:range ?range }"),
    ("ontology", "onto-l2-08", PROV + "SELECT ?d ?r WHERE { prov:wasGeneratedBy rdfs:domain ?d ; rdfs:range ?r }"),
    ("ontology", "onto-l2-09", "PREFIX skos: <http://www.w3.org/2004/02/skos/core#>\n"
                               "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
                               "SELECT ?domain ?range WHERE { skos:topConceptOf rdfs:domain ?domain ; "
                               "rdfs:range ?range }"),
    ("ontology", "onto-l3-07", PROV + "SELECT ?property WHERE { ?property rdfs:domain prov:Activity ; "
                               "rdfs:range prov:Entity }"),
    ("ontology", "onto-l1-07", PROV + "SELECT ?label WHERE { prov:Activity rdfs:label ?label }"),
    ("ontology", "onto-l2-07", PROV + "SELECT ?domain ?range WHERE { prov:wasInfluencedBy rdfs:domain ?domain ; "
                               "rdfs:range ?range }"),
    ("arith", "arith-gsm-1", "The answer is 48."),
])
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_known_wrong_answer_is_rejected(suites, judges, name, task_id, wrong):
    (task,) = [t for t in suites[name] if t.id == task_id]
    verdict = _judge(judges, task).judge(task, traj(task.query, wrong))
    assert not verdict.success and verdict.score < 1.0, verdict.rationale


@pytest.mark.slow  # re-derives every code answer from the sources (about 1 s)
def test_code_expected_answers_are_recomputed_from_the_sources():
    for task in read_tasks(SUITES["code"]):
        want = task.expected[0] if isinstance(task.expected, list) else task.expected
        assert derive_expected(task) == want, task.id


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_sparql_references_return_rows_whatever_distinct():
    """Non-empty (except the tasks whose note says the right answer is empty), and DISTINCT-insensitive: rows are compared as multisets, so an agent's query that leaves
    out (or adds) DISTINCT must not fail on duplicates the question did not mention."""
    from rlmlab.ontology import load_ontology

    empty = []
    for task in read_tasks(SUITES["ontology"]):
        assert task.expected.lstrip().startswith("PREFIX"), task.id
        graph = load_ontology(task.ontology_path())
        rows = sorted(map(tuple, graph.query(task.expected)))
        if (task.note or "").startswith("reference returns 0 row(s)"):  # the right answer is empty on purpose
            assert not rows, task.id
            empty.append(task.id)
            continue
        assert rows, f"{task.id}: the reference query returns no rows"
        plain = task.expected.replace("SELECT DISTINCT", "SELECT").replace("COUNT(DISTINCT ", "COUNT(")
        assert sorted(map(tuple, graph.query(plain))) == rows, task.id
    assert empty == ["onto-l1-07", "onto-l1-08", "onto-l2-07"]  # issue 18: a class or property that does not exist


def test_arith_items_come_from_the_vendored_datasets():
    from rlmlab.teach import load_csv, load_gsm8k

    refs = {f"arith-{i.qid}": i for i in load_gsm8k(ROOT / "data" / "gsm8k_train_500.jsonl")}
    refs.update({f"arith-math20-{i.qid}": i for i in load_csv(ROOT / "data" / "math20.csv")})
    tasks = read_tasks(SUITES["arith"])
    assert sum(t.id.startswith("arith-gsm-") for t in tasks) == 20
    for t in tasks:
        item = refs[t.id]
        assert (t.query, t.expected) == (item.question, item.reference), t.id


# -- loading options --------------------------------------------------------------------------------------

def test_levels_and_a_limit_that_spans_levels():
    assert {t.meta["level"] for t in load_suite("ontology", levels=[2, 4])} == {2, 4}
    picked = load_suite("code", limit=5)
    assert len(picked) == 5 and sorted(t.meta["level"] for t in picked) == [1, 2, 3, 4, 5]
    assert load_suite("arith", limit=0) == []
    with pytest.raises(ConfigError, match="limit"):
        load_suite("arith", limit=-1)
    with pytest.raises(ConfigError, match=r"levels \[7\]"):
        load_suite("arith", levels=[7])
    with pytest.raises(ConfigError, match="unknown 'nope'; known: code, ontology, arith"):
        load_suite("nope")


def test_task_round_trips_and_meta_feeds_the_judges():
    task = read_tasks(SUITES["code"])[0]
    assert Task.from_dict(json.loads(json.dumps(task.to_dict()))) == task
    mt = task.to_memory_task()
    assert mt.expected is None and mt.meta["reference"] == task.expected  # the oracle decides code tasks
    assert Path(mt.meta["source_path"]).is_absolute() and mt.meta["level"] == task.level
    assert task_context(task) is task_context(task)  # cached: one read per file


def test_directory_context_has_file_headers(tokio_src):
    task = Task("d", "code", 3, "How many async functions are there?", "code", 1, "crate:tokio", "fs")
    text = task_context(task)
    assert text.startswith("// file: canonicalize.rs\n") and "\n// file: file.rs\n" in text
    assert text.count("// file: ") == len(list((tokio_src / "fs").rglob("*.rs")))


# -- bad lines --------------------------------------------------------------------------------------------

GOOD = {"id": "t1", "suite": "s", "level": 1, "query": "What is 2 + 2?", "checker": "numeric", "expected": "4"}


@pytest.mark.parametrize("change, message", [
    ({"query": None}, r":2: query: missing; this field is required"),
    ({"level": "1"}, r":2: level: expected integer, got str '1'"),
    ({"level": 6}, r":2: level: 6 is outside 1..5"),
    ({"checker": "fuzzy"}, r":2: checker: 'fuzzy' is not one of exact, contains, numeric, set, sparql, code"),
    ({"colour": "red"}, r":2: colour: unknown field"),
    ({"checker": "code"}, r":2: domain: missing"),
    ({"checker": "code", "domain": "prov", "source": "x.rs"}, r":2: domain: 'prov': a code task needs a crate domain"),
    ({"domain": "crate:tokio"}, r":2: source: missing"),
    ({"domain": "prov", "source": "x.rs"}, r":2: domain: 'prov': a task with a source needs a crate domain"),
    ({"domain": "crate:tokio", "source": "no/such.rs"}, r":2: source: 'no/such.rs' not found"),
    ({"domain": "crate:no_such_crate", "source": "a.rs"}, r":2: domain: .*librust-no-such-crate-dev"),
    ({"checker": "sparql", "expected": "SELECT * {}", "domain": "crate:tokio", "source": "fs"},
     r":2: domain: 'crate:tokio': a sparql task needs an ontology domain"),
    ({"checker": "numeric", "expected": "four"}, r":2: expected: "),
    ({"id": "t0"}, r":2: id: 't0' is already used on line 1"),
])
def test_bad_lines_name_path_line_and_field(tmp_path, change, message):
    bad = {k: v for k, v in {**GOOD, "id": "t2", **change}.items() if v is not None}
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps({**GOOD, "id": "t0"}) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=re.escape(str(path)) + message):
        load_suite(str(path))


def test_a_line_that_is_not_an_object(tmp_path):
    path = tmp_path / "suite.jsonl"
    path.write_text("\n# a comment line\n[1, 2]\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=re.escape(f"{path}:3: a JSON list; expected an object")):
        read_tasks(path)
    path.write_text("{oops\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=re.escape(f"{path}:1: not valid JSON")):
        read_tasks(path)
