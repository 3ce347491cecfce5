"""Task suites: deterministic-checker tasks stored as JSONL under ``data/tasks/`` (one :class:`Task` a line).

Three built-in suites (:data:`SUITES`): ``code`` (navigation over Debian ``librust-*-dev`` sources), ``ontology``
(SPARQL construction over PROV-O and SKOS) and ``arith`` (GSM8K and math20 word problems). Levels 1-5 run from
single lookups to aggregation; ``data/tasks/README.md`` says what each level means per suite and how every
expected answer was computed.

:func:`load_suite` validates every line against :data:`TASK_SCHEMA` (a malformed line is a :class:`SuiteError`
reading ``path:line: field: what was expected``), resolves the agent's context (the crate source file or
directory, or the ontology's Turtle text) and fills :attr:`MemoryTask.meta` so that
:func:`rlmlab.learning.judge_for` builds a working judge. Context texts are cached per file (path, mtime, size).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from rlmlab.provenance import note_file
from rlmlab._paths import PROJECT_ROOT
from rlmlab.errors import ConfigError, RLMLabError
from rlmlab.memory import MemoryTask

__all__ = [
    "Task", "SUITES", "TASKS_DIR", "PARAPHRASE_DIR", "CHECKERS", "TASK_SCHEMA", "MAX_CONTEXT_CHARS", "SuiteError", "read_tasks",
    "load_suite", "task_context", "list_suites", "task_numbers", "DOCS_DIR",
]

TASKS_DIR = PROJECT_ROOT / "data" / "tasks"
PARAPHRASE_DIR = PROJECT_ROOT / "data" / "paraphrase"
SUITES: dict[str, Path] = {name: TASKS_DIR / f"{name}.jsonl" for name in ("code", "ontology", "arith")}
# Questions in a researcher's own words, written blind (data/paraphrase/README.md): writer A is the dev split,
# writer B (other sources) the test split.
SUITES.update({f"{suite}-paraphrase-{split}": PARAPHRASE_DIR / suite / writer / "questions.jsonl"
               for suite in ("code", "ontology", "text") for split, writer in (("dev", "A"), ("test", "B"))})
SUITES["code-paraphrase-dev2"] = PARAPHRASE_DIR / "code" / "C" / "questions.jsonl"  # writer C: a second dev split
CHECKERS = ("exact", "contains", "numeric", "set", "sparql", "code")  # the deterministic judges of rlmlab.learning.JUDGES
DOCS_DIR = "docs"  # a doc:<name> domain is the file <the task file's directory>/docs/<name>
LEVELS = (1, 2, 3, 4, 5)
# The suites keep every context under this size (tests/test_task_suites.py checks), so a whole-module task
# stays a handle a small model can page through; it is a data rule, not enforced at load.
MAX_CONTEXT_CHARS = 300_000
FILE_HEADER = "// file: {}\n"  # written before each .rs file of a directory context

_ANSWER = {"type": ["string", "number"], "description": "the reference answer (a SPARQL query for sparql)"}
TASK_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "rlmlab task line",
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "suite", "level", "query", "checker", "expected"],
    "properties": {
        "id": {"type": "string", "pattern": r"^[A-Za-z0-9][\w.:-]*$"},
        "suite": {"type": "string", "minLength": 1},
        "level": {"type": "integer", "minimum": 1, "maximum": 5},
        "query": {"type": "string", "minLength": 1},
        "checker": {"enum": list(CHECKERS)},
        "expected": {"anyOf": [_ANSWER, {"type": "array", "items": _ANSWER, "minItems": 1}]},
        "domain": {"type": "string", "minLength": 1,
                   "description": "'prov', 'skos', 'crate:<name>', 'dir:<path>' (any directory of Rust sources) or "
                                  "'doc:<name>' (a document in docs/ beside the task file)"},
        "source": {"type": "string", "minLength": 1, "description": "file or directory under the crate's src"},
        "kind": {"type": "string", "pattern": r"^[a-z][a-z0-9_]*$",
                 "description": "the question's kind (generated tasks: 'signature', 'count_unsafe_blocks', ...)"},
        "origin": {"type": "string", "description": "where the task came from (dataset and row)"},
        "note": {"type": "string", "description": "how the expected answer was computed"},
        # what a blind writer labels a question with (data/paraphrase/BRIEF_COMMON.md)
        "scope": {"enum": ["file", "module", "crate", "document", "ontology"]},
        "targets": {"type": "array", "items": {"type": "string"}},
        "rules": {"type": "string"},
        "writer": {"type": "string"},
        "method": {"type": "string", "description": "how the writer computed expected"},
        "check": {"type": "string", "description": "the writer's second, independent check"},
        "crate_version": {"type": "string"},
        "rows": {"type": "array", "description": "sparql: the reference query's rows, frozen"},
        "columns": {"type": "array", "items": {"type": "string"}},
        "language": {"type": "string"},
        "context_tokens": {"type": "integer", "minimum": 0,
                           "description": "the context's size by rlmlab.tokens.count_tokens, measured when it was "
                                          "written (the generated long-context suites)"},
    },
    "allOf": [
        {"if": {"required": ["domain"], "properties": {"domain": {"pattern": "^(crate|dir):"}}},
         "then": {"required": ["source"]}},
        {"if": {"properties": {"checker": {"const": "code"}}},
         "then": {"required": ["domain", "source"], "properties": {"domain": {"pattern": "^(crate|dir):"}}}},
        {"if": {"properties": {"checker": {"const": "sparql"}}},
         "then": {"required": ["domain"], "properties": {"expected": {"type": "string"}}}},
        {"if": {"properties": {"checker": {"const": "set"}}},
         "then": {"properties": {"expected": {"type": "array", "items": {"type": ["string", "number"]}}}}},
        {"if": {"properties": {"checker": {"const": "numeric"}}},
         "then": {"properties": {"expected": {"anyOf": [
             {"type": "number"}, {"type": "string", "pattern": r"^\s*-?[\d,]*\.?\d+\s*$"},
             {"type": "array", "items": {"type": ["number", "string"]}}]}}}},
    ],
}


class SuiteError(RLMLabError, ValueError):
    """A task file is malformed; the message reads ``path:line: field: what was expected``."""

    def __init__(self, path: str | Path, line: int | None, field: str | None, problem: str):
        self.path, self.line, self.field, self.problem = str(path), line, field, problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {field}: {problem}" if field else f"{where}: {problem}")


@dataclass(frozen=True)
class Task:
    """One stored task line. ``expected`` is the reference answer (for ``sparql`` a reference SELECT query);
    ``domain`` and ``source`` say what the agent reads (see :func:`task_context`)."""

    id: str
    suite: str
    level: int
    query: str
    checker: str
    expected: Any
    domain: str | None = None
    source: str | None = None
    origin: str | None = None
    note: str | None = None
    kind: str | None = None
    scope: str | None = None
    targets: list[str] | None = None
    rules: str | None = None
    writer: str | None = None
    method: str | None = None
    check: str | None = None
    crate_version: str | None = None
    rows: list[Any] | None = None
    columns: list[str] | None = None
    language: str | None = None
    context_tokens: int | None = None
    base: str | None = None  # the task file's directory (doc: domains), not part of the line

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and k != "base"}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Task":
        """A Task from a validated line (see :data:`TASK_SCHEMA`); unknown keys are a TypeError."""
        return cls(**data)

    def doc_path(self) -> Path | None:
        """The document of a ``doc:<name>`` task (``docs/<name>`` beside its task file), else None."""
        if self.domain is None or not self.domain.startswith("doc:"):
            return None
        return Path(self.base or ".") / DOCS_DIR / self.domain[4:]

    def _domain(self) -> Any:
        from rlmlab.memory import resolve_domain

        if self.domain is None or self.domain.startswith("doc:"):
            return None
        return resolve_domain(self.domain)

    def crate_root(self) -> Path | None:
        """The ``src`` directory of a task with a ``source`` (``crate:<name>``), or the directory ``dir:<path>``
        names; None for a task without a source.

        ConfigError for an unknown crate, or a ``source`` whose domain is not a crate.
        """
        if self.source is None or self.doc_path() is not None:
            return None
        domain = self._domain()
        if domain is not None and domain.kind == "ontology" and self.source == domain.source.name:
            return None  # the source names the ontology's own file (a blind writer's label): no crate
        if domain is None or domain.kind != "crate":
            raise ConfigError(f"{self.domain!r}: a task with a source needs a crate domain ('crate:<name>' or "
                              "'dir:<path>')")
        return domain.source

    def source_path(self) -> Path | None:
        """The absolute source file or directory of a crate task (``source`` "." is the whole crate), else None."""
        root = self.crate_root()
        if root is None:
            return None
        return root if self.source in (".", "") else root / self.source

    def ontology_path(self) -> Path | None:
        """The ontology file of a task whose domain is an ontology, else None (ConfigError: unknown domain)."""
        domain = self._domain()
        return domain.source if domain is not None and domain.kind == "ontology" else None

    def to_memory_task(self) -> MemoryTask:
        """The MemoryTask the loop and the judges take: context read (cached), meta filled.

        meta: ``suite``, ``level``, ``kind`` when given; ``ontology`` (path) for ontology tasks; ``source_path``
        (absolute) and ``source`` for crate tasks. A ``code`` task keeps its reference answer in ``meta["reference"]`` and
        has ``expected=None``: the oracle alone decides, since CodeJudge would otherwise also demand the
        reference's exact wording, failing a correct list given in another order or layout.
        """
        meta: dict[str, Any] = {"suite": self.suite, "level": self.level}
        for key in ("kind", "origin", "scope", "writer", "context_tokens"):
            if getattr(self, key):
                meta[key] = getattr(self, key)
        ontology, source = self.ontology_path(), self.source_path() or self.doc_path()
        if ontology is not None:
            meta["ontology"] = str(ontology)
        if source is not None:
            meta["source_path"], meta["source"] = str(source), self.source
        expected = self.expected
        if self.checker == "code":
            meta["reference"], expected = expected, None
        doc = self.doc_path()
        domain = f"doc:{doc.absolute()}" if doc is not None else self.domain  # resolvable without the task file
        return MemoryTask(id=self.id, query=self.query, context=task_context(self), domain=domain,
                          expected=expected, check=self.checker, meta=meta)


# -- contexts ---------------------------------------------------------------------------------------------

def _stamp(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path), st.st_mtime_ns, st.st_size


@lru_cache(maxsize=256)
def _read_file(key: tuple[str, int, int]) -> str:
    return Path(key[0]).read_text(encoding="utf-8")


def _read_dir(path: Path, suffix: str = ".rs") -> str:
    files = sorted(p for p in path.rglob(f"*{suffix}") if p.is_file())
    return "".join(FILE_HEADER.format(p.relative_to(path).as_posix()) + _read_file(_stamp(p)) for p in files)


@lru_cache(maxsize=64)
def _dir_context(path: str, stamps: tuple[tuple[str, int, int], ...]) -> str:  # stamps: the cache key only
    return _read_dir(Path(path))


def task_context(task: Task) -> str:
    """The text the agent works on: the source file, a source directory's ``.rs`` files (sorted, each after a
    ``// file: <relpath>`` line), the ontology's Turtle text, or "" (the query is all). Cached per file;
    ConfigError when the source is missing."""
    source = task.source_path() or task.doc_path()
    if source is not None:
        if source.is_file():
            return _read_file(_stamp(source))
        if source.is_dir():
            stamps = tuple(_stamp(p) for p in sorted(source.rglob("*.rs")) if p.is_file())
            return _dir_context(str(source), stamps)
        if task.doc_path() is not None:
            raise ConfigError(f"task {task.id}: context file {source} not found (domain {task.domain!r})")
        raise ConfigError(f"task {task.id}: source {task.source!r} not found under {task.crate_root()}")
    ontology = task.ontology_path()
    if ontology is not None:
        return _read_file(_stamp(ontology))
    return ""


# -- loading ----------------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(TASK_SCHEMA)


_PATTERN_HINTS = {
    "domain": "{v!r}: a {checker} task needs a crate domain ('crate:<name>' or 'dir:<path>')",
    "expected": "{v!r} is not a number; a numeric task expects a number or a numeric string such as '-2.5'",
    "id": "{v!r}: expected letters, digits and _ . : - (starting with a letter or digit)",
}


def _describe(error: Any, record: dict[str, Any]) -> tuple[str, str]:
    """(field, what was expected) for the most relevant schema error of a line."""
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return (missing[0] if missing else where or "(line)"), "missing; this field is required"
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(TASK_SCHEMA["properties"]))
        return ", ".join(extra), f"unknown field; known: {', '.join(TASK_SCHEMA['properties'])}"
    if error.validator == "enum":
        return where, f"{error.instance!r} is not one of {', '.join(map(str, error.validator_value))}"
    if error.validator == "type":
        want = error.validator_value if isinstance(error.validator_value, str) else " or ".join(error.validator_value)
        return where, f"expected {want}, got {type(error.instance).__name__} {error.instance!r:.60}"
    if error.validator in ("minimum", "maximum"):
        return where, f"{error.instance!r} is outside 1..5" if where == "level" else error.message
    if error.validator == "pattern":
        return where, _PATTERN_HINTS.get(where.split(".")[0], "does not match {p}").format(
            v=error.instance, p=error.validator_value, checker=record.get("checker"))
    return where or "(line)", error.message


def _parse_line(path: Path, line_no: int, raw: str) -> Task:
    try:
        record = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SuiteError(path, line_no, None, f"not valid JSON ({exc.msg}); expected one object per line") from None
    if not isinstance(record, dict):
        raise SuiteError(path, line_no, None, f"a JSON {type(record).__name__}; expected an object")
    import jsonschema

    error = jsonschema.exceptions.best_match(_validator().iter_errors(record))
    if error is not None:
        raise SuiteError(path, line_no, *_describe(error, record))
    return Task.from_dict(record)


def read_tasks(path: str | Path) -> list[Task]:
    """Every task of a JSONL file, validated (schema, unique ids, known domain, existing source); blank lines
    and ``#`` comment lines are skipped. Raises SuiteError ``path:line: field: problem``."""
    path = Path(path)
    note_file(path, "tasks")
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            task = _parse_line(path, line_no, raw)
            if task.domain and task.domain.startswith("doc:"):
                task = replace(task, base=str(path.parent))
                if not task.doc_path().is_file():
                    raise SuiteError(path, line_no, "domain", f"{task.domain!r}: no file {task.doc_path()}")
            if task.id in seen:
                raise SuiteError(path, line_no, "id", f"{task.id!r} is already used on line {seen[task.id]}; "
                                                      "expected unique ids")
            seen[task.id] = line_no
            try:
                source, ontology = task.source_path(), task.ontology_path()
            except ConfigError as exc:
                raise SuiteError(path, line_no, "domain", re.sub(r"^domain:?\s*", "", str(exc))) from None
            if source is not None and not source.exists():
                raise SuiteError(path, line_no, "source", f"{task.source!r} not found under {task.crate_root()}; "
                                                          "expected a file or directory under the crate's src")
            if task.checker == "sparql" and ontology is None:
                raise SuiteError(path, line_no, "domain", f"{task.domain!r}: a sparql task needs an ontology "
                                                          "domain ('prov', 'skos' or a .ttl path)")
            tasks.append(task)
    return tasks


def list_suites() -> list[str]:
    """The built-in suite names whose file exists."""
    return [name for name, path in SUITES.items() if path.is_file()]


def _suite_path(name_or_path: str | Path) -> Path:
    if isinstance(name_or_path, str) and name_or_path in SUITES:
        return SUITES[name_or_path]
    path = Path(name_or_path)
    if path.is_file():
        return path
    if not path.is_absolute() and (PROJECT_ROOT / path).is_file():  # a config's data/tasks/... from anywhere
        return PROJECT_ROOT / path
    raise ConfigError(f"suite: unknown {str(name_or_path)!r}; known: {', '.join(SUITES)}, or a path to a .jsonl file")


def _balanced(tasks: list[Task]) -> list[Task]:
    """Round-robin over levels (file order within a level), so the first N cover every level."""
    by_level: dict[int, list[Task]] = {}
    for t in tasks:
        by_level.setdefault(t.level, []).append(t)
    queues = [by_level[lv] for lv in sorted(by_level)]
    out: list[Task] = []
    for i in range(max((len(q) for q in queues), default=0)):
        out.extend(q[i] for q in queues if i < len(q))
    return out


def task_numbers(tasks: list[Task]) -> dict[str, int]:
    """Each task's number: its 1-based position within its level, in file order (``code-l1-02`` is 2).

    The seed templates of ``data/packs/step_templates.jsonl`` were written from odd-numbered tasks only, so
    the even-numbered ones are held out (``load_suite(..., parity="even")``).
    """
    seen: dict[int, int] = {}
    out = {}
    for t in tasks:
        seen[t.level] = seen.get(t.level, 0) + 1
        out[t.id] = seen[t.level]
    return out


def load_suite(name_or_path: str | Path, *, limit: int | None = None,
               levels: Iterable[int] | None = None, parity: str | None = None) -> list[MemoryTask]:
    """The tasks of a suite (a name in :data:`SUITES` or a JSONL path) as MemoryTasks, in file order.

    ``levels`` keeps only those levels (1-5); ``parity`` "odd" or "even" only the tasks of that
    :func:`task_numbers` parity (the templates' training and held-out halves). ``limit`` keeps N tasks taken round-robin over the levels
    present (level 1's first task, level 2's first, ..., then each level's second ...), so a small run
    still spans the levels; the result is then in file order. Raises SuiteError for a malformed line and
    ConfigError for an unknown suite, a bad ``limit`` or ``levels``.
    """
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise ConfigError(f"load_suite: limit must be None or an integer >= 0, got {limit!r}")
    wanted: set[int] | None = None
    if levels is not None:
        wanted = set(levels)
        bad = sorted(wanted - set(LEVELS), key=str)
        if bad:
            raise ConfigError(f"load_suite: levels {bad} are not in 1..5")
    if parity not in (None, "odd", "even"):
        raise ConfigError(f"load_suite: parity {parity!r}; use 'odd', 'even' or None")
    tasks = read_tasks(_suite_path(name_or_path))
    if parity is not None:
        numbers = task_numbers(tasks)
        tasks = [t for t in tasks if numbers[t.id] % 2 == (1 if parity == "odd" else 0)]
    if wanted is not None:
        tasks = [t for t in tasks if t.level in wanted]
    if limit is not None and limit < len(tasks):
        keep = {t.id for t in _balanced(tasks)[:limit]}
        tasks = [t for t in tasks if t.id in keep]
    return [t.to_memory_task() for t in tasks]
