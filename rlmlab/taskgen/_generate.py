"""``generate_tasks``: one suite's generators, the selection by level and kind, the split by source, ids, and
the JSONL writer; what ``rlmlab tasks generate`` runs."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rlmlab.errors import ConfigError
from rlmlab.experiments import MAX_CONTEXT_CHARS, Task, read_tasks, task_context
from rlmlab.taskgen._common import SIDES, Candidate, Drop, GenerationReport, Kind, rng_for, select, split_units
from rlmlab.taskgen._longctx import ContextFiles, parse_size

__all__ = ["SUITE_NAMES", "LONG_SUITES", "SPLITS", "Generated", "generate_tasks", "write_tasks"]

LONG_SUITES = ("needle", "aggregate", "twohop")  # a fresh context file per task, of --size-tokens tokens
SUITE_NAMES = ("code", "ontology", "arith", *LONG_SUITES)
SPLITS = ("source",)


@dataclass
class Generated:
    """The tasks of one generation (``test`` is empty without a split) and its report."""

    train: list[Task]
    test: list[Task]
    report: GenerationReport


def _merge(kinds: Sequence[Kind]) -> list[Kind]:
    """One Kind per (name, level): the streams of several trees or ontologies taken in turn."""
    groups: dict[tuple[str, int], list[Kind]] = {}
    for kind in kinds:
        groups.setdefault((kind.name, kind.level), []).append(kind)

    def interleave(parts: list[Kind]):
        def stream(rng) -> Iterator[Candidate | Drop]:
            live = [p.stream(rng_for(rng.random(), p.name, i)) for i, p in enumerate(parts)]
            while live:
                for it in list(live):
                    item = next(it, None)
                    if item is None:
                        live.remove(it)
                    else:
                        yield item
        return stream

    return [parts[0] if len(parts) == 1 else Kind(name, level, interleave(parts))
            for (name, level), parts in groups.items()]


def _with_units(kind: Kind, units) -> Kind:
    def stream(rng) -> Iterator[Candidate | Drop]:
        for item in kind.stream(rng):
            yield item if isinstance(item, Drop) else replace(item, units=units(item))
    return Kind(kind.name, kind.level, stream)


def _code_kinds(sources: Sequence[str | Path]) -> tuple[list[Kind], dict[str, list[str]]]:
    from rlmlab.taskgen._code import file_kinds
    from rlmlab.taskgen._code_dir import module_kinds
    from rlmlab.taskgen._rust import ctags_program, open_sources

    if not sources:
        raise ConfigError("--source: the code suite needs at least one directory of Rust sources (or a crate name)")
    trees = open_sources(sources)
    ctags_program()
    kinds: list[Kind] = []
    for tree in trees:
        tops = sorted({f.split("/")[0] for f in tree.files})
        if len(trees) > 1:  # a crate (or directory) is the unit: it goes whole to one side
            units = (lambda label: lambda c: (label,))(tree.label)
        else:  # one tree: its top-level modules and files are the units; a whole-crate task uses them all
            units = (lambda all_tops: lambda c: tuple(all_tops) if c.task.source in (".", "")
                     else (c.task.source.split("/")[0],))(tops)
        kinds += [_with_units(k, units) for k in file_kinds(tree) + module_kinds(tree)]
    groups = {"sources": [t.label for t in trees]} if len(trees) > 1 else \
        {"sources": sorted({f.split("/")[0] for f in trees[0].files})}
    return _merge(kinds), groups


def _suite_kinds(suite: str, sources: Sequence[str | Path]) -> tuple[list[Kind], dict[str, list[str]]]:
    """The kinds of a suite and the unit groups the split draws from (other units are drawn one by one)."""
    if suite == "code":
        return _code_kinds(sources)
    if sources:
        raise ConfigError(f"--source: only the code suite reads sources; the {suite} suite has its own data")
    if suite == "ontology":
        from rlmlab.taskgen._ontology import ontology_kinds

        return _merge(ontology_kinds()), {}
    from rlmlab.taskgen._arith import FAMILIES, arith_kinds

    # Families are split level by level, so each level has a family on each side (when it has two or more).
    groups: dict[str, list[str]] = {}
    for name, (level, _) in FAMILIES.items():
        groups.setdefault(f"families-L{level}", []).append(f"family:{name}")
    return _merge(arith_kinds()), groups


def _long_kinds(suite: str, size_tokens: int, files: ContextFiles) -> list[Kind]:
    if suite == "needle":
        from rlmlab.taskgen._needle import needle_kinds

        return needle_kinds(size_tokens, files)
    if suite == "aggregate":
        from rlmlab.taskgen._aggregate import aggregate_kinds

        return aggregate_kinds(size_tokens, files)
    from rlmlab.taskgen._twohop import twohop_kinds

    return twohop_kinds(size_tokens, files)


def _generate_long(suite: str, n: int, seed: int, sources: Sequence[str | Path], split_by: str | None,
                   id_prefix: str | None, size_tokens: int | str | None, context_dir: str | Path | None) -> Generated:
    size = parse_size(size_tokens, suite)
    if sources:
        raise ConfigError(f"--source: only the code suite reads sources; the {suite} suite makes its own contexts")
    if split_by:
        raise ConfigError(f"--split-by: every {suite} task has a context of its own, so there is no source to split "
                          "by; write a test file with another --seed")
    if context_dir is None:
        raise ConfigError(f"context_dir: the {suite} suite writes its contexts to <context_dir>/docs/; give the "
                          "directory the task file goes to")
    started = time.perf_counter()
    report = GenerationReport(suite, seed)
    files = ContextFiles(context_dir)
    try:
        chosen = select(_long_kinds(suite, size, files), {"train": n}, seed, report)["train"]
        prefix = id_prefix or f"gen-{suite}"
        tasks = []
        for i, task in enumerate(chosen, 1):
            task_id = f"{prefix}-l{task.level}-{task.kind}-{i:03d}"
            name = files.finish(task.domain.removeprefix("doc:"), task_id)
            tasks.append(replace(task, id=task_id, domain=f"doc:{name}", base=str(files.base)))
            report.contexts.append(task.context_tokens)
    finally:
        files.cleanup()
    report.seconds = time.perf_counter() - started
    return Generated(tasks, [], report)


def generate_tasks(suite: str, *, n: int, seed: int, sources: Sequence[str | Path] = (), split_by: str | None = None,
                   test_frac: float = 0.25, id_prefix: str | None = None, size_tokens: int | str | None = None,
                   context_dir: str | Path | None = None) -> Generated:
    """``n`` tasks of ``suite`` (one of :data:`SUITE_NAMES`), deterministic in ``seed``.

    The long-context suites (:data:`LONG_SUITES`: needle, aggregate, twohop) write one context file of about
    ``size_tokens`` tokens per task (an int, or "100k", "1M") to ``<context_dir>/docs/<task id>.txt``, where
    ``context_dir`` is the directory the task file will be written to; they take no sources and no split.

    With ``split_by="source"``, ``round(n * test_frac)`` of them form a test split whose sources (crate or
    module, ontology term, GSM8K item or problem family) no train task uses. Fewer tasks than asked come back
    when the sources run out (the report says so). ConfigError for an unknown suite, a bad ``n``/``test_frac``,
    a bad source (missing, no ``.rs`` file) or a bad ``size_tokens``.
    """
    if suite not in SUITE_NAMES:
        raise ConfigError(f"--suite: unknown {suite!r}; known: {', '.join(SUITE_NAMES)}")
    if not isinstance(n, int) or n < 1:
        raise ConfigError(f"--n: {n!r}; expected a whole number >= 1")
    if split_by not in (None, *SPLITS):
        raise ConfigError(f"--split-by: unknown {split_by!r}; known: {', '.join(SPLITS)}")
    if split_by and not 0 < test_frac < 1:
        raise ConfigError(f"--test-frac: {test_frac!r}; expected a fraction strictly between 0 and 1")
    if suite in LONG_SUITES:
        return _generate_long(suite, n, seed, sources, split_by, id_prefix, size_tokens, context_dir)
    if size_tokens is not None:
        raise ConfigError(f"--size-tokens: only the {', '.join(LONG_SUITES)} suites take a context size")
    started = time.perf_counter()
    report = GenerationReport(suite, seed)
    kinds, groups = _suite_kinds(suite, sources)
    if split_by:
        test_units = split_units(groups, test_frac, seed)
        grouped = {u for units in groups.values() for u in units}

        def side(unit: str) -> str:
            if unit in grouped:
                return "test" if unit in test_units else "train"
            return "test" if rng_for(seed, "unit", unit).random() < test_frac else "train"

        def side_of(c: Candidate) -> str | None:
            found = {side(u) for u in c.units}
            return found.pop() if len(found) == 1 else None

        n_test = max(1, round(n * test_frac))
        chosen = select(kinds, {"train": n - n_test, "test": n_test}, seed, report, side_of)
    else:
        chosen = select(kinds, {"train": n}, seed, report)
    prefix = id_prefix or f"gen-{suite}"
    out = {}
    for side_name in SIDES:
        tasks = chosen.get(side_name, [])
        head = prefix if side_name == "train" else f"{prefix}-test"
        out[side_name] = [replace(t, id=f"{head}-l{t.level}-{t.kind}-{i:03d}") for i, t in enumerate(tasks, 1)]
        for task in out[side_name]:
            if task.source is not None and len(task_context(task)) > MAX_CONTEXT_CHARS:
                raise AssertionError(f"{task.id}: context over {MAX_CONTEXT_CHARS} characters")  # a generator bug
    report.seconds = time.perf_counter() - started
    return Generated(out["train"], out["test"], report)


def write_tasks(tasks: Sequence[Task], path: str | Path) -> Path:
    """Write tasks as JSONL (one line each, keys in the Task's order) through a temporary file, then read the file
    back with :func:`read_tasks` so a line that would not load is never left in place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(t.to_dict(), ensure_ascii=False) + "\n" for t in tasks), encoding="utf-8")
    try:
        read_tasks(tmp)
    except Exception:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    return path
