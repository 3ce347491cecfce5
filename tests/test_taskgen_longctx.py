"""rlmlab tasks generate for the long-context suites (needle, aggregate, twohop): every answer found again in the
written context by code of the test's own (``grep -F`` run as a program for the needles, a line splitter and
substring lookups for the records, a document splitter for the hops), the needle haystacks compared with the real
crate sources under /usr/share/cargo/registry they were cut from, the measured sizes, determinism by seed, the
command line, and bad sizes. One million-token needle run (marked ``long_context``: make test runs it)."""

from __future__ import annotations

import re
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from rlmlab.cli import main
from rlmlab.errors import ConfigError
from rlmlab.experiments import SuiteError, Task, read_tasks, task_context
from rlmlab.taskgen import REVIEWS, TICKETS, TOPICS, generate_tasks, write_tasks
from rlmlab.tokens import count_tokens

REGISTRY = Path("/usr/share/cargo/registry")
SMALL = 2_000


def _cli(*args: str):
    return CliRunner().invoke(main, ["tasks", "generate", *args])


def _generate(tmp: Path, suite: str, n: int, seed: int, size: str | int = SMALL) -> list[Task]:
    out = tmp / f"{suite}.jsonl"
    result = _cli("--suite", suite, "--n", str(n), "--seed", str(seed), "--size-tokens", str(size), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert f"{n} context{'s' * (n != 1)} in {tmp / 'docs'}" in result.output
    tasks = read_tasks(out)
    assert len(tasks) == n and {t.suite for t in tasks} == {suite}
    return tasks


def _text(task: Task) -> str:
    return task.doc_path().read_text(encoding="utf-8")


def _sized(task: Task, size: int) -> None:
    """The recorded size is the file's, and near the size asked for."""
    assert task.domain == f"doc:{task.id}.txt" and task.doc_path().parent.name == "docs"
    assert task.context_tokens == count_tokens(_text(task))
    assert 0.9 * size <= task.context_tokens <= 1.1 * size, (task.id, task.context_tokens)


@pytest.fixture(scope="module")
def needles(tmp_path_factory) -> list[Task]:
    return _generate(tmp_path_factory.mktemp("needle"), "needle", 12, 5)


@pytest.fixture(scope="module")
def aggregates(tmp_path_factory) -> list[Task]:
    return _generate(tmp_path_factory.mktemp("aggregate"), "aggregate", 9, 5)


@pytest.fixture(scope="module")
def twohops(tmp_path_factory) -> list[Task]:
    return _generate(tmp_path_factory.mktemp("twohop"), "twohop", 9, 5)


# -- needle -----------------------------------------------------------------------------------------------

def _grep(*args: str) -> list[str]:
    done = subprocess.run(["grep", *args], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout.splitlines()


def _needle_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, value) of every needle sentence, found by ``grep -n -F`` on each topic's fixed words."""
    fixed = [(t.sentence.split("{place}")[0], t.sentence.split("{place}")[1].split("{value}")[0]) for t in TOPICS]
    found = []
    for hit in _grep("-n", "-F", *[a for head, _ in fixed for a in ("-e", head)], str(path)):
        number, line = hit.split(":", 1)
        middle = next(mid for head, mid in fixed if head in line and mid in line)
        found.append((int(number), line.rsplit(middle, 1)[1].rstrip().removesuffix(".")))
    return found


def _real_segments(path: Path, skip: set[int]) -> int:
    """Check that the text outside the needle lines is real Rust: each ``// file: <crate>/<path>`` segment equals
    that file under the registry (the last may be cut at a line); the number of files."""
    lines = [ln for i, ln in enumerate(path.read_text(encoding="utf-8").splitlines(keepends=True), 1)
             if i not in skip]
    starts = [i for i, ln in enumerate(lines) if ln.startswith("// file: ")]
    assert starts and starts[0] == 0
    for k, start in enumerate(starts):
        source = REGISTRY / lines[start][len("// file: "):].strip()
        real = source.read_bytes().decode("utf-8", "replace").replace("\r\n", "\n").rstrip("\n") + "\n"
        segment = "".join(lines[start + 1:starts[k + 1] if k + 1 < len(starts) else len(lines)])
        assert (segment == real) if k + 1 < len(starts) else (segment and real.startswith(segment)), source
    return len(starts)


_LOG = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) [a-z]+-\d+ [a-z]+\[\d+\]: (INFO|DEBUG|WARN|ERROR) \S")


def _check_needle(task: Task) -> None:
    path = task.doc_path()
    found = _needle_lines(path)
    values = [v for _, v in found]
    for value in values:
        assert len(_grep("-o", "-F", value, str(path))) == 1, value  # the value occurs once in the whole text
    if task.checker == "contains":
        assert values == [task.expected]
    elif task.checker == "set":
        assert sorted(values) == sorted(task.expected) and len(values) >= 3
    else:
        assert task.checker == "numeric" and len(values) == task.expected >= 2
    if task.origin.split(" in ", 1)[1].startswith("Rust sources"):
        assert _real_segments(path, {n for n, _ in found}) >= 1
    else:
        stamps = [m[1] for m in map(_LOG.match, path.read_text(encoding="utf-8").splitlines()) if m]
        assert len(stamps) == len(path.read_text(encoding="utf-8").splitlines()) - len(found)
        assert stamps == sorted(stamps)


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_needle_answers_are_regrepped_in_real_sources_and_logs(needles):
    assert Counter(t.kind for t in needles) == {"needle_code": 3, "needle_logs": 3, "needles_list": 3,
                                                 "needles_count": 3}
    assert len({t.query for t in needles}) >= 8  # several phrasings
    for task in needles:
        _check_needle(task)
        _sized(task, SMALL)


# -- aggregate --------------------------------------------------------------------------------------------

_RECORD = re.compile(r"^(Ticket|Review) (\d+) \| (\S+) \| ([^|]+) \| ([^:]+): (.+)$")
_TARGET = {"billing": "billing", "delivery": "delivery", "technical problems": "technical",
           "account access": "account"}


def _label(body: str, vocab: dict[str, tuple[str, ...]]) -> str:
    low = body.lower()
    hits = {label for label, phrases in vocab.items() for p in phrases
            if all(part.lower() in low for part in re.split(r"\{\w+\}", p) if part.strip())}
    assert len(hits) == 1, body
    assert not any(re.search(rf"\b{label}\b", low) for label in vocab), body  # no record names a label
    return hits.pop()


def test_aggregate_answers_are_recounted_from_the_records(aggregates):
    kinds = Counter(t.kind for t in aggregates)  # levels take equal shares, kinds of a level take turns
    assert set(kinds) == {"count_category", "count_sentiment", "category_distribution"} and min(kinds.values()) >= 2
    for task in aggregates:
        lines = _text(task).splitlines()
        records = [_RECORD.match(line) for line in lines]
        assert all(records) and len(records) >= 30
        reviews = records[0][1] == "Review"
        counts = Counter(_label(r[6], REVIEWS if reviews else TICKETS) for r in records)
        if task.kind == "category_distribution":
            assert sorted(task.expected) == sorted(f"{k}:{v}" for k, v in counts.items()) and len(counts) == 4
        elif reviews:
            target = "negative" if re.search(r"negative|disappointed", task.query) else "positive"
            assert task.expected == counts[target]
        else:
            asked = re.search(r"(?:are about|concern|tickets about) (.+?)[?.]", task.query)[1]
            assert task.expected == counts[_TARGET[asked]]
        _sized(task, SMALL)


# -- twohop -----------------------------------------------------------------------------------------------

def _documents(text: str) -> dict[str, list[str]]:
    docs: dict[str, list[str]] = {}
    for chunk in filter(str.strip, text.split("\n\n")):
        head, body = chunk.split("\n", 1)
        docs.setdefault(head.split(" | ", 1)[1].removesuffix(" ==="), []).append(body)
    return docs


def _person(body: str, names: set[str]) -> str:
    """The one person a document names (a name inside a longer name does not count)."""
    found = {n for n in names if n in body}
    found = {n for n in found if not any(n != m and n in m for m in found)}
    assert len(found) == 1, (body, found)
    return found.pop()


def test_twohop_answers_follow_the_hops_in_the_written_documents(twohops):
    kinds = Counter(t.kind for t in twohops)
    assert set(kinds) == {"office_of_owner", "owner_of_affected_host", "cause_by_owner"} and min(kinds.values()) >= 2
    for task in twohops:
        docs = _documents(_text(task))
        names = {title.removeprefix("staff profile: ") for title in docs if title.startswith("staff profile: ")}
        assert all(len(bodies) == 1 for bodies in docs.values())  # every title once
        if task.kind == "owner_of_affected_host":
            rid = re.search(r"IR-\d+", task.query)[0]
            (report,) = docs[f"incident report {rid}"]
            host = report.split("Affected host: ", 1)[1].split(".", 1)[0]
            assert task.expected == _person(docs[f"host record: {host}"][0], names)
            continue
        host = re.search(r"host ([a-z]+-\d+)", task.query)[1]
        owner = _person(docs[f"host record: {host}"][0], names)
        if task.kind == "office_of_owner":
            profile = docs[f"staff profile: {owner}"][0]
            assert task.expected == profile.split("works from the ", 1)[1].split(" office", 1)[0]
        else:
            reports = [b for t, (b,) in docs.items() if t.startswith("incident report") and _person(b, names) == owner]
            assert len(reports) == 1
            cause = reports[0].split("Root cause: ", 1)[1].split(".", 1)[0]
            assert cause in ([task.expected] if isinstance(task.expected, str) else task.expected)
        _sized(task, SMALL)


# -- every suite: determinism, the command line, sizes, missing files -------------------------------------

@pytest.mark.parametrize("suite", ["needle", "aggregate", "twohop"])
def test_same_seed_same_files_other_seed_other_files(tmp_path, suite):
    def files(i: int, seed: int) -> dict[str, bytes]:
        _generate(tmp_path / str(i), suite, 3, seed, 3000)
        return {p.relative_to(tmp_path / str(i)).as_posix(): p.read_bytes()
                for p in sorted((tmp_path / str(i)).rglob("*")) if p.is_file()}
    first, again, other = files(0, 7), files(1, 7), files(2, 8)
    assert first == again and len(first) == 4  # the JSONL and three contexts, nothing left behind
    assert first != other


@pytest.mark.parametrize("args, message", [
    (["--size-tokens", "12"], "expected 500 to 8,000,000 tokens"),
    (["--size-tokens", "9M"], "expected 500 to 8,000,000 tokens"),
    (["--size-tokens", "lots"], "expected a number of tokens"),
    ([], "needs a context size in tokens"),
    (["--size-tokens", "2000", "--split-by", "source", "--test-out", "T"], "no source to split by"),
])
def test_a_bad_size_fails_in_one_line_with_exit_2(tmp_path, args, message):
    args = [str(tmp_path / "t.jsonl") if a == "T" else a for a in args]
    result = _cli("--suite", "twohop", "--n", "2", "--out", str(tmp_path / "x.jsonl"), *args)
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("Error: --s") and message in line
    assert list(tmp_path.iterdir()) == []


def test_size_is_only_for_the_long_context_suites(tmp_path):
    result = _cli("--suite", "arith", "--n", "2", "--size-tokens", "2000", "--out", str(tmp_path / "x.jsonl"))
    assert result.exit_code == 2 and "only the needle, aggregate, twohop suites" in result.output


def test_a_missing_context_file_is_a_one_line_error(tmp_path):
    (task,) = _generate(tmp_path, "aggregate", 1, 1, "1k")
    task.doc_path().unlink()
    with pytest.raises(SuiteError, match=r"aggregate\.jsonl:1: domain: .*no file .*docs/"):
        read_tasks(tmp_path / "aggregate.jsonl")
    with pytest.raises(ConfigError, match=f"task {task.id}: context file .* not found"):
        task_context(task)


@pytest.mark.parametrize("suite, corrupt, reason", [
    ("needle", lambda text: text + re.findall(r"(?:is|are) (\S+)\.\n", text)[-1], "occurs more than once"),
    ("aggregate", lambda text: text.rsplit("\n", 2)[0] + "\n", "the recount differs"),
    ("twohop", lambda text: text.replace("works from the ", "works near the "), "another answer"),
])
def test_a_context_whose_written_text_disagrees_is_dropped(tmp_path, monkeypatch, suite, corrupt, reason):
    """The generator's own check reads the written file: a first context spoilt on disk is dropped, deleted
    and drawn again."""
    from rlmlab.taskgen import ContextFiles

    read, spoilt = ContextFiles.read, []

    def spoil_first(self, name):
        text = read(self, name)
        if spoilt:
            return text
        spoilt.append(name)
        return corrupt(text)

    monkeypatch.setattr(ContextFiles, "read", spoil_first)
    kind = {"needle": "needle_code", "aggregate": "count_category", "twohop": "office_of_owner"}[suite]
    made = generate_tasks(suite, n=1, seed=2, size_tokens=SMALL, context_dir=tmp_path)
    assert [t.kind for t in made.train] == [kind]
    ((dropped_kind, why), count), = made.report.dropped.items()
    assert dropped_kind == kind and reason in why and count == 1
    assert [p.name for p in (tmp_path / "docs").iterdir()] == [f"{made.train[0].id}.txt"]


@pytest.mark.long_context
def test_a_million_token_needle_in_real_rust_sources(tmp_path):
    started = time.perf_counter()
    made = generate_tasks("needle", n=2, seed=11, size_tokens="1M", context_dir=tmp_path)
    seconds = time.perf_counter() - started
    write_tasks(made.train, tmp_path / "needle.jsonl")
    assert seconds < 60, seconds  # seconds per context, not minutes
    tasks = read_tasks(tmp_path / "needle.jsonl")
    assert {t.kind for t in tasks} == {"needle_code", "needles_list"}
    for task in tasks:
        assert task.doc_path().stat().st_size > 3_000_000
        assert 990_000 <= task.context_tokens <= 1_010_000
        assert task.context_tokens == count_tokens(task.doc_path().read_text(encoding="utf-8"))
        _check_needle(task)
