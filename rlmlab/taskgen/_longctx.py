"""What the long-context suites (needle, aggregate, twohop) share: the ``--size-tokens`` value, the context files
written beside the task file, their measured size, and the stream that makes one fresh context per task.

Every context is a file ``docs/<task id>.txt`` beside the task JSONL, named by a ``doc:<task id>.txt`` domain (the
task format's file reference; ``read_tasks`` refuses a line whose file is missing). A context is written once,
straight from its pieces, then read back once: the kind's own check parses the written text, and its size is
counted there with :func:`rlmlab.tokens.count_tokens` (recorded as the task's ``context_tokens``).
"""

from __future__ import annotations

import itertools
import os
import random
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from rlmlab.errors import ConfigError
from rlmlab.experiments import DOCS_DIR, Task
from rlmlab.taskgen._common import Candidate, Drop, Kind, rng_for
from rlmlab.tokens import count_tokens

__all__ = ["MIN_SIZE_TOKENS", "MAX_SIZE_TOKENS", "parse_size", "measure_tokens", "ContextFiles", "Built",
           "context_stream", "draft_kinds", "long_task", "cut_tokens"]

MIN_SIZE_TOKENS = 500
MAX_SIZE_TOKENS = 8_000_000  # ~30 MB of text; the Rust haystack is bounded by what is installed (~13M tokens)
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")
_CHUNK = 1 << 20  # characters counted at a time (cut at a newline, which no token spans)


def parse_size(value: int | str | None, suite: str) -> int:
    """``--size-tokens`` as a whole number of tokens: ``2000``, ``2_000``, ``100k``, ``1M`` or ``1.5M``.
    ConfigError (one line) for a missing, malformed or out-of-range value."""
    if value is None:
        raise ConfigError(f"--size-tokens: the {suite} suite needs a context size in tokens (e.g. 8000, 100k, 1M)")
    if isinstance(value, bool):
        raise ConfigError(f"--size-tokens: {value!r}; expected a number of tokens such as 8000, 100k or 1M")
    if isinstance(value, int):
        size = value
    else:
        found = _SIZE.match(str(value).replace("_", "").replace(",", ""))
        if not found:
            raise ConfigError(f"--size-tokens: {value!r}; expected a number of tokens such as 8000, 100k or 1M")
        size = int(float(found[1]) * {"": 1, "k": 1_000, "m": 1_000_000}[found[2].lower()])
    if not MIN_SIZE_TOKENS <= size <= MAX_SIZE_TOKENS:
        raise ConfigError(f"--size-tokens: {value!r}; expected {MIN_SIZE_TOKENS:,} to {MAX_SIZE_TOKENS:,} tokens")
    return size


def measure_tokens(text: str) -> int:
    """:func:`rlmlab.tokens.count_tokens` of ``text``, counted a megabyte at a time (cut at newlines, so the
    count is the same and no list of a million tokens is built at once)."""
    total, start = 0, 0
    while start < len(text):
        end = text.find("\n", start + _CHUNK)
        end = len(text) if end < 0 else end + 1
        total += count_tokens(text[start:end])
        start = end
    return total


def cut_tokens(text: str, budget: int) -> str:
    """The leading whole lines of ``text`` that hold at most ``budget`` tokens (at least one line)."""
    out, used = [], 0
    for line in text.splitlines(keepends=True):
        used += count_tokens(line)
        if out and used > budget:
            break
        out.append(line)
    return "".join(out)


class ContextFiles:
    """The context files of one generation in ``<base>/docs/``: written under a temporary name, renamed to
    ``<task id>.txt`` once the task has its id (:meth:`finish`); :meth:`cleanup` removes the ones never used."""

    def __init__(self, base: str | Path):
        self.base = Path(base)
        self.dir = self.base / DOCS_DIR
        self.pending: set[str] = set()
        self._numbers = itertools.count(1)

    def path(self, name: str) -> Path:
        return self.dir / name

    def write(self, kind: str, pieces: Iterable[str]) -> str:
        """Write ``pieces`` (in order, nothing added) to a new file; its name."""
        self.dir.mkdir(parents=True, exist_ok=True)
        name = f".tmp-{os.getpid()}-{kind}-{next(self._numbers):04d}.txt"
        self.pending.add(name)
        with open(self.path(name), "w", encoding="utf-8", newline="") as fh:
            fh.writelines(pieces)
        return name

    def read(self, name: str) -> str:
        with open(self.path(name), encoding="utf-8", newline="") as fh:
            return fh.read()

    def drop(self, name: str) -> None:
        self.path(name).unlink(missing_ok=True)
        self.pending.discard(name)

    def finish(self, name: str, task_id: str) -> str:
        """Rename a context to ``<task_id>.txt``; the new name."""
        final = f"{task_id}.txt"
        os.replace(self.path(name), self.path(final))
        self.pending.discard(name)
        return final

    def cleanup(self) -> None:
        for name in list(self.pending):
            self.drop(name)


class Built:
    """One drafted context: its ``pieces`` (written in order), and ``verify(text, name, tokens)``, the kind's
    second computation over the written text (file ``name``, ``tokens`` counted there), which returns the Task or
    a Drop. ``verify`` must not hold the pieces: they are let go once written."""

    def __init__(self, pieces: Iterable[str], verify: Callable[[str, str, int], Task | Drop]):
        self.pieces, self.verify = pieces, verify


def long_task(*, suite: str, level: int, query: str, checker: str, expected, name: str, tokens: int,
              origin: str, note: str) -> Task:
    """A pending task over the context file ``name`` (the id and final file name come at selection)."""
    return Task(id="pending", suite=suite, level=level, query=query, checker=checker, expected=expected,
                domain=f"doc:{name}", origin=origin, note=note, context_tokens=tokens)


def draft_kinds(levels: dict[str, int], files: ContextFiles,
                draft: Callable[[str, int, random.Random], "Built | Drop"]) -> list[Kind]:
    """One Kind per ``name: level`` of ``levels``, each streaming contexts drafted by ``draft(name, level, rng)``."""
    return [Kind(name, level, context_stream(name, files, lambda rng, name=name, level=level: draft(name, level, rng)))
            for name, level in levels.items()]


def context_stream(kind: str, files: ContextFiles, draft: Callable[[random.Random], Built | Drop],
                   limit: int = 100_000) -> Callable[[random.Random], Iterator[Candidate | Drop]]:
    """A Kind's stream: each item drafts a fresh context, writes it, reads it back and verifies it there; a
    context that fails is deleted and reported as a Drop."""
    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        for i in range(limit):
            built = draft(rng_for(rng.random(), kind, i))
            if isinstance(built, Drop):
                yield built
                continue
            name = files.write(kind, built.pieces)
            built.pieces = ()  # the pieces go as soon as they are on disk: one copy in memory at a time
            text = files.read(name)
            result = built.verify(text, name, measure_tokens(text))
            del text
            if isinstance(result, Drop):
                files.drop(name)
                yield result
            else:
                yield Candidate(result, (name,))
    return stream
