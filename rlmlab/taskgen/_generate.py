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

__all__ = ["SUITE_NAMES", "SPLITS", "Generated", "generate_tasks", "write_tasks"]

SUITE_NAMES = ("code", "ontology", "arith")
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


def generate_tasks(suite: str, *, n: int, seed: int, sources: Sequence[str | Path] = (), split_by: str | None = None,
                   test_frac: float = 0.25, id_prefix: str | None = None) -> Generated:
    """``n`` tasks of ``suite`` ("code", "ontology" or "arith"), deterministic in ``seed``.

    With ``split_by="source"``, ``round(n * test_frac)`` of them form a test split whose sources (crate or
    module, ontology term, GSM8K item or problem family) no train task uses. Fewer tasks than asked come back
    when the sources run out (the report says so). ConfigError for an unknown suite, a bad ``n``/``test_frac``
    or a bad source (missing, no ``.rs`` file).
    """
    if suite not in SUITE_NAMES:
        raise ConfigError(f"--suite: unknown {suite!r}; known: {', '.join(SUITE_NAMES)}")
    if not isinstance(n, int) or n < 1:
        raise ConfigError(f"--n: {n!r}; expected a whole number >= 1")
    if split_by not in (None, *SPLITS):
        raise ConfigError(f"--split-by: unknown {split_by!r}; known: {', '.join(SPLITS)}")
    if split_by and not 0 < test_frac < 1:
        raise ConfigError(f"--test-frac: {test_frac!r}; expected a fraction strictly between 0 and 1")
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
