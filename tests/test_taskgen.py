"""rlmlab tasks generate: every generated answer re-checked here by a computation of the test's own (Universal
Ctags and grep -P run as programs, rdflib, exact arithmetic), determinism by seed, the split by source, bad
sources, and the committed E14 files (sizes, disjointness, contexts, the reference judges)."""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from rlmlab.cli import main
from rlmlab.experiments import MAX_CONTEXT_CHARS, SuiteError, Task, load_suite, read_tasks
from rlmlab.numbers import solve_arithmetic
from rlmlab.oracle import pattern_for_query, structural_target

ROOT = Path(__file__).resolve().parents[1]
E14 = ROOT / "data" / "tasks" / "e14"
CODE_SOURCES = ["bytes", "mio"]


def _generate(tmp: Path, name: str, *args: str) -> tuple[list[Task], list[Task]]:
    out, test_out = tmp / f"{name}.jsonl", tmp / f"{name}_test.jsonl"
    extra = ["--split-by", "source", "--test-out", str(test_out)] if "--split" in args else []
    args = tuple(a for a in args if a != "--split")
    result = CliRunner().invoke(main, ["tasks", "generate", *args, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return read_tasks(out), (read_tasks(test_out) if extra else [])


@pytest.fixture(scope="module")
def ctags() -> str:
    found = shutil.which("ctags")
    if not found or "Universal Ctags" not in subprocess.run([found, "--version"], capture_output=True,
                                                            text=True).stdout:
        pytest.fail("Universal Ctags missing: `make ctags` installs Debian's universal-ctags")
    return found


@pytest.fixture(scope="module")
def code_tasks(tmp_path_factory, ctags) -> tuple[list[Task], list[Task]]:
    tmp = tmp_path_factory.mktemp("code")
    sources = [a for s in CODE_SOURCES for a in ("--source", s)]
    return _generate(tmp, "code", "--suite", "code", *sources, "--n", "70", "--seed", "3", "--split")


@pytest.fixture(scope="module")
def onto_tasks(tmp_path_factory) -> tuple[list[Task], list[Task]]:
    return _generate(tmp_path_factory.mktemp("onto"), "onto", "--suite", "ontology", "--n", "100", "--seed", "3",
                     "--split")


@pytest.fixture(scope="module")
def arith_tasks(tmp_path_factory) -> tuple[list[Task], list[Task]]:
    return _generate(tmp_path_factory.mktemp("arith"), "arith", "--suite", "arith", "--n", "60", "--seed", "3",
                     "--split")


# -- independent recomputation (no rlmlab code on the checking side) -------------------------------------

def _files(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(p for p in path.rglob("*.rs") if p.is_file())


def _grep(path: Path, regex: str) -> list[tuple[str, int, str]]:
    """(path relative to the task's directory, or "" for a file; line; text) of grep -P's matches."""
    base = path if path.is_dir() else path.parent
    proc = subprocess.run(["grep", "-P", "-H", "-n", "--", regex, *map(str, _files(path))], capture_output=True,
                          text=True)
    assert proc.returncode in (0, 1), proc.stderr
    out = []
    for line in proc.stdout.splitlines():
        file, number, text = line.split(":", 2)
        out.append(("" if path.is_file() else Path(file).relative_to(base).as_posix(), int(number), text))
    return out


def _ctags(ctags: str, path: Path) -> list[dict]:
    proc = subprocess.run([ctags, "--languages=Rust", "--output-format=json", "--fields=*", "--sort=no", "-f", "-",
                           *map(str, _files(path))], capture_output=True, text=True, check=True)
    return [t for t in map(json.loads, proc.stdout.splitlines()) if t.get("_type") == "tag"]


def _top_level_items(text: str) -> list[str]:
    """``a: A<B, C>, b: D`` -> ``["a: A<B, C>", "b: D"]``: commas outside brackets only."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "<([{"
        depth -= ch in ">)]}" and text[i - 1:i] != "-"
        if ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    return [*items, text[start:]]


def _squash(text: str) -> str:
    return re.sub(r",(?=[)\]>])", "", re.sub(r"\s+", "", text))


def _impl_pairs(tags: list[dict]) -> set[tuple[str, str]]:
    """(type, trait) from ctags' implementation tags, the trait read from the header line ctags quotes."""
    pairs = set()
    for tag in tags:
        if tag["kind"] != "implementation":
            continue
        line = tag["pattern"][2:-2]
        m = re.search(r"\bimpl\b(?:<.*?>)?\s+([\w:]+)(?:<.*?>)?\s+for\s+&?(?:'\w+\s+)?(?:mut\s+)?([\w:]+)", line)
        if m and m.group(2).rsplit("::", 1)[-1] == tag["name"]:
            pairs.add((tag["name"], m.group(1).rsplit("::", 1)[-1]))
    return pairs


def recheck_code(task: Task, ctags: str) -> None:
    """Recompute a generated code answer with ctags or grep -P; AssertionError naming the task when it differs."""
    path, kind, want = task.source_path(), task.kind, task.expected
    if kind.startswith(("count_", "module_count_", "crate_count_")):
        assert len(_grep(path, pattern_for_query(task.query))) == want, task.id
    elif kind.startswith("find_all_"):
        lines = "\n".join(f"{p}:{i}:{t.strip()}" for p, i, t in _grep(path, pattern_for_query(task.query)))
        assert lines == want, task.id
    elif kind == "pub_async_fns":
        assert len(_grep(path, r"^(?!\s*//).*\bpub(\([^)]*\))?\s+async\s+(unsafe\s+)?fn\b")) == want, task.id
    elif kind == "most_unsafe_file":
        per = Counter(p for p, _, _ in _grep(path, r"^(?!\s*//).*\bunsafe\s*\{"))
        (top,) = [p for p, n in per.items() if n == max(per.values())]
        assert top == want, task.id
    elif kind in ("signature", "parameters", "return_type", "signature_in_module"):
        name = re.search(r"(?:of|for|does|Show)\s+(?:fn\s+|the function\s+)?(\w+)", task.query).group(1)
        (tag,) = [t for t in _ctags(ctags, path) if t["name"] == name and t["kind"] in ("function", "method")]
        sig = re.sub(r"^<.*?>(?=\()", "", tag["signature"]).split(" where ")[0]
        params, arrow, ret = sig.partition(") -> ")
        params = params[1:] if arrow else params[1:-1]
        if kind == "return_type":
            assert _squash(ret) == _squash(want), task.id
        elif kind == "parameters":
            assert _squash(params).rstrip(",") == _squash(want), task.id
        else:
            assert f"fn{name}" in _squash(want) and _squash(sig) in _squash(want), task.id
    elif kind in ("fields", "variants", "fields_in_module"):
        name = structural_target(task.query)[1][0]
        tag_kind = "enumerator" if kind == "variants" else "field"
        members = [t["name"] for t in _ctags(ctags, path) if t["kind"] == tag_kind and t.get("scope") == name]
        assert members == [m.split(":")[0].strip() for m in _top_level_items(want)], task.id
    elif kind == "defines_struct":
        name = re.search(r"struct (?:named |called )?(\w+)", task.query).group(1)
        found = any(t["kind"] == "struct" and t["name"] == name for t in _ctags(ctags, path))
        assert ("yes" if found else "no") == want, task.id
    elif kind == "does_implement":
        name, trait = structural_target(task.query)[1]
        scope = path if want == "Yes" else task.crate_root()  # "no" holds for the whole tree, not only the file
        assert ("Yes" if (name, trait) in _impl_pairs(_ctags(ctags, scope)) else "No") == want, task.id
    elif kind in ("implementors", "traits_of"):
        key = structural_target(task.query)[1][0]
        pairs = _impl_pairs(_ctags(ctags, path))
        got = {t for t, tr in pairs if tr == key} if kind == "implementors" else {tr for t, tr in pairs if t == key}
        assert got == set(want.split(", ")), task.id
    elif kind == "distinct_traits":
        assert len({tr for _, tr in _impl_pairs(_ctags(ctags, path))}) == want, task.id
    elif kind == "most_implemented_trait":
        per = Counter(tr for _, tr in _impl_pairs(_ctags(ctags, path)) if tr != "Future")
        assert [t for t, n in per.items() if n == max(per.values())] == [want], task.id
    else:
        raise AssertionError(f"{task.id}: no independent check for kind {kind}")


# -- code -------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_every_code_answer_is_rechecked_by_ctags_or_grep(code_tasks, ctags):
    train, test = code_tasks
    assert len(train) + len(test) == 70 and {t.level for t in train} == {1, 2, 3, 4, 5}
    for task in train + test:
        recheck_code(task, ctags)
    kinds = Counter(t.kind for t in train + test)
    assert len(kinds) >= 20  # the hand suite's kinds and the level-3+ ones
    yes_no = Counter(t.expected for t in train + test if t.kind in ("does_implement", "defines_struct"))
    assert yes_no["No"] + yes_no["no"] >= 1 and yes_no["Yes"] + yes_no["yes"] >= 1  # negatives included


@pytest.mark.slow
def test_code_split_keeps_crates_apart_and_contexts_fit(code_tasks):
    train, test = code_tasks
    assert test and {t.domain for t in train}.isdisjoint({t.domain for t in test})
    for task in train + test:
        assert task.domain in ("crate:bytes", "crate:mio")
        assert len(task.to_memory_task().context) <= MAX_CONTEXT_CHARS


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_directory_outside_the_registry_is_a_dir_domain(tmp_path, tokio_src, ctags):
    src = tmp_path / "mysrc"
    shutil.copytree(tokio_src / "sync", src / "sync")
    shutil.copy(tokio_src / "fs" / "file.rs", src / "file.rs")
    (train, _) = _generate(tmp_path, "dir", "--suite", "code", "--source", str(src), "--n", "15", "--seed", "1")
    assert {t.domain for t in train} == {f"dir:{src.resolve()}"}
    loaded = load_suite(tmp_path / "dir.jsonl")
    assert all(Path(t.meta["source_path"]).is_relative_to(src.resolve()) for t in loaded)
    for task in train:
        recheck_code(task, ctags)


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_single_source_split_is_by_top_level_module(tmp_path):
    train, test = _generate(tmp_path, "one", "--suite", "code", "--source", "bytes", "--n", "30", "--seed", "5",
                            "--split")
    top = {t.source.split("/")[0] for t in train}
    assert test and top.isdisjoint({t.source.split("/")[0] for t in test})
    assert "." not in top | {t.source for t in test}  # a whole-crate task would straddle the split


@pytest.mark.parametrize("source, message", [
    ("/no/such/dir", "--source /no/such/dir: no such directory"),
    ("EMPTY", "no readable .rs file"),
])
def test_a_bad_source_fails_in_one_line_with_exit_2(tmp_path, source, message):
    if source == "EMPTY":
        source = str(tmp_path / "empty")
        (tmp_path / "empty").mkdir()
        (tmp_path / "empty" / "notes.txt").write_text("not rust\n")
    result = CliRunner().invoke(main, ["tasks", "generate", "--suite", "code", "--source", source, "--n", "5",
                                       "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("Error: ") and message in line
    assert not (tmp_path / "x.jsonl").exists()


def test_split_needs_test_out(tmp_path):
    result = CliRunner().invoke(main, ["tasks", "generate", "--suite", "arith", "--n", "5", "--split-by", "source",
                                       "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "--test-out" in result.output


# -- ontology ---------------------------------------------------------------------------------------------

@functools.cache
def _graph(path: Path):
    import rdflib

    return rdflib.Graph().parse(path, format="turtle")  # a parse of the test's own, not rlmlab's cached one


def _rows(task: Task, query: str) -> Counter:
    return Counter(tuple(r) for r in _graph(task.ontology_path()).query(query))


@pytest.mark.slow
def test_ontology_references_run_on_rdflib_and_ignore_distinct(onto_tasks):
    train, test = onto_tasks
    assert len(train) == 75 and len(test) == 25
    empty = 0
    for task in train + test:
        rows = _rows(task, task.expected)
        if task.kind.startswith("missing_"):
            assert not rows and "no rows" in task.query, task.id
            empty += 1
            continue
        assert rows, task.id
        plain = task.expected.replace("SELECT DISTINCT", "SELECT").replace("COUNT(DISTINCT ", "COUNT(")
        assert _rows(task, plain) == rows, task.id
    assert empty >= 1


def _terms(task: Task) -> set[str]:
    """The ontology terms a question is about (not the vocabulary it uses to ask, such as prov:definition)."""
    asked_with = {"prov:definition", "prov:category", "prov:inverse", "skos:definition", "skos:scopeNote"}
    return set(re.findall(r"\b(?:prov|skos):[A-Za-z]\w*", task.query)) - asked_with


@pytest.mark.slow
def test_ontology_split_shares_no_term(onto_tasks):
    train, test = onto_tasks
    assert set().union(*map(_terms, train)).isdisjoint(set().union(*map(_terms, test)))


@pytest.mark.slow
def test_domain_and_range_questions_are_direction_cases(onto_tasks):
    """Both columns in order, asked first about properties whose inverse has them reversed."""
    from rlmlab.ontology import load_ontology

    asked = [t for t in onto_tasks[0] + onto_tasks[1] if t.kind == "domain_range"]
    assert asked
    for task in asked:
        graph = load_ontology(task.ontology_path())
        (term,) = _terms(task)
        inverse = graph.query(task.expected.split("SELECT")[0] + f"ASK {{ {{ {term} owl:inverseOf ?x }} UNION "
                              f"{{ ?x owl:inverseOf {term} }} }}")
        assert inverse.askAnswer, task.id
        assert "?domain ?range" in task.expected


# -- arith ------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_arith_answers_are_recomputed(arith_tasks):
    from rlmlab.teach import load_gsm8k

    train, test = arith_tasks
    gsm = {f"data/gsm8k_train_500.jsonl:{i.qid.split('-')[1]}": i for i in load_gsm8k(ROOT / "data" /
                                                                                        "gsm8k_train_500.jsonl")}
    for task in train + test:
        if task.origin.startswith("generated:"):
            expression, value = re.fullmatch(r"computed: (.+) = (\S+)", task.note).groups()
            assert solve_arithmetic(f"What is {expression}?") == value == task.expected, task.id
            numbers = [n for n in re.findall(r"\d+", expression) if n not in ("2", "100")]  # twice, percent
            assert all(n in task.query for n in numbers), task.id  # the expression uses the question's numbers
        else:
            item = gsm[task.origin]
            assert (task.query, task.expected) == (item.question, item.reference), task.id


@pytest.mark.slow
def test_arith_split_by_item_and_family(arith_tasks):
    train, test = arith_tasks
    assert {t.origin for t in train}.isdisjoint({t.origin for t in test})
    families = {t.origin for t in train if t.origin.startswith("generated:")}
    assert families.isdisjoint({t.origin for t in test if t.origin.startswith("generated:")})


# -- determinism and the judges ---------------------------------------------------------------------------

@pytest.mark.slow
def test_same_seed_same_files_other_seed_other_files(tmp_path):
    runs = [_generate(tmp_path / str(i), "a", "--suite", suite, *src, "--n", "25", "--seed", str(seed), "--split")
            for i, (suite, src, seed) in enumerate([("code", ("--source", "mio"), 1), ("code", ("--source", "mio"), 1),
                                                     ("code", ("--source", "mio"), 2), ("arith", (), 1),
                                                     ("arith", (), 1), ("arith", (), 2)])]
    text = [(tmp_path / str(i) / "a.jsonl").read_bytes() + (tmp_path / str(i) / "a_test.jsonl").read_bytes()
            for i in range(len(runs))]
    assert text[0] == text[1] and text[0] != text[2]
    assert text[3] == text[4] and text[3] != text[5]


@pytest.mark.slow
def test_the_reference_judges_accept_the_expected_answers(code_tasks, onto_tasks, arith_tasks):
    from rlmlab.executors import Trajectory
    from rlmlab.learning import judge_for

    judges: dict = {}
    for tasks in (code_tasks, onto_tasks, arith_tasks):
        for task in (tasks[0] + tasks[1])[::3]:  # a sample: every third task
            mt = task.to_memory_task()
            judge = judges.setdefault(mt.check, judge_for(mt))
            answer = str(mt.meta.get("reference", mt.expected))
            verdict = judge.judge(mt, Trajectory(run_id="t", query=mt.query, lm="x", context_mode="handle",
                                                 answer=answer, submitted=True))
            assert verdict.success and verdict.confidence == 1.0, (task.id, verdict.rationale)


# -- the committed E14 files ------------------------------------------------------------------------------

E14_FILES = {"code": ("code_train.jsonl", "code_test.jsonl"), "ontology": ("ontology_train.jsonl",
                                                                            "ontology_test.jsonl"),
             "arith": ("arith_train.jsonl", "arith_test.jsonl")}


@pytest.mark.parametrize("suite", list(E14_FILES))
@pytest.mark.slow
def test_e14_files_sizes_levels_and_disjoint_sources(suite):
    train, test = (read_tasks(E14 / name) for name in E14_FILES[suite])
    assert len(train) >= 200 and len(test) >= 60
    assert {t.level for t in train} == {t.level for t in test} == {1, 2, 3, 4, 5}
    assert {t.suite for t in train + test} == {suite} and all(t.kind for t in train + test)
    assert {t.id for t in train}.isdisjoint({t.id for t in test})
    if suite == "code":
        assert {t.domain for t in train}.isdisjoint({t.domain for t in test})
        assert "crate:tokio" in {t.domain for t in train} and "crate:tokio" not in {t.domain for t in test}
        assert all(len(t.to_memory_task().context) <= MAX_CONTEXT_CHARS for t in train + test)
    elif suite == "ontology":
        assert set().union(*map(_terms, train)).isdisjoint(set().union(*map(_terms, test)))
    else:
        assert {t.origin for t in train}.isdisjoint({t.origin for t in test})
        hand = {f"data/gsm8k_train_500.jsonl:{t.id.split('-')[-1]}" for t in read_tasks(ROOT / "data" / "tasks" /
                                                                                          "arith.jsonl")
                if t.id.startswith("arith-gsm-")}
        assert hand.isdisjoint({t.origin for t in train + test})  # the hand suite's items are left out


@pytest.mark.slow
def test_e14_code_answers_recheck(ctags):
    """Every test task and a quarter of the train stream (all 320 pass; the sample keeps the test short)."""
    for task in read_tasks(E14 / "code_test.jsonl") + read_tasks(E14 / "code_train.jsonl")[::4]:
        recheck_code(task, ctags)


def test_a_kind_field_and_a_dir_domain_are_validated(tmp_path):
    path = tmp_path / "t.jsonl"
    base = {"id": "a", "suite": "code", "level": 1, "query": "How many structs are there in x.rs?", "checker": "code",
            "expected": 1, "source": "x.rs"}
    path.write_text(json.dumps({**base, "domain": f"dir:{tmp_path / 'nope'}"}) + "\n")
    with pytest.raises(SuiteError, match=r":1: domain: .*is not a directory"):
        read_tasks(path)
    path.write_text(json.dumps({**base, "domain": f"dir:{tmp_path}", "kind": "Bad Kind"}) + "\n")
    with pytest.raises(SuiteError, match=r":1: kind: "):
        read_tasks(path)
