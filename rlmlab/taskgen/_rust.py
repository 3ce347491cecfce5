"""A directory of Rust sources seen three ways: the oracles (tree-sitter, the GrepOracle's regexes), Universal
Ctags and ``grep -P``. The generators take their answers from the first and keep them only where one of the
others, computed by separate programs, agrees.

Ctags runs once per tree (``ctags -R --output-format=json``); ``grep -P`` runs once per (scope, regex).
Both are subprocesses: neither shares code with the oracles.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from rlmlab.errors import ConfigError
from rlmlab.experiments import MAX_CONTEXT_CHARS
from rlmlab.memory import resolve_domain
from rlmlab.oracle import GrepOracle, ParseCache, TreeSitterOracle

__all__ = ["SourceTree", "CtagsTag", "open_sources", "ctags_program"]

_TIMEOUT = 120  # seconds for one ctags or grep run over a tree; a hung tool is an error, not a wait
_FILE_HEADER = "// file: {}\n"  # as rlmlab.experiments writes before each file of a directory context


def ctags_program() -> str:
    """The path of Universal Ctags (JSON output is needed); ConfigError naming ``make ctags`` when missing."""
    found = shutil.which("ctags")
    if found:
        try:
            version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            version = ""
        if "Universal Ctags" in version:
            return found
    raise ConfigError("ctags: Universal Ctags is needed to check generated code answers; install it with "
                      "`make ctags` (Debian's universal-ctags)")


@dataclass(frozen=True)
class CtagsTag:
    name: str
    path: str  # relative to the tree's root, posix
    line: int
    kind: str  # function, method, struct, enum, enumerator, field, implementation, interface, ...
    scope: str | None
    scope_kind: str | None
    signature: str | None
    pattern: str  # the tag's line as ctags quotes it (without the /^ $/ marks)


def _unpattern(raw: str) -> str:
    text = raw[2:] if raw.startswith("/^") else raw.lstrip("/")
    text = text[:-2] if text.endswith("$/") else text.rstrip("/")
    return text.replace("\\/", "/").replace("\\\\", "\\")


@dataclass(eq=False)  # identity hash: trees key caches
class SourceTree:
    """One root of Rust sources: its domain id for task lines, its ``.rs`` files and the three views of them."""

    root: Path
    domain: str
    label: str  # the crate name, or the directory's name
    files: list[str] = field(default_factory=list)  # relative posix paths, sorted
    cache: ParseCache = field(default_factory=lambda: ParseCache(max_entries=8192))

    def text(self, rel: str) -> str:
        return self._texts[rel]

    @cached_property
    def _texts(self) -> dict[str, str]:
        return {rel: (self.root / rel).read_text(encoding="utf-8") for rel in self.files}

    @cached_property
    def small_files(self) -> list[str]:
        """The files whose own text fits a context (every file, in practice)."""
        return [f for f in self.files if len(self.text(f)) <= MAX_CONTEXT_CHARS]

    def oracle(self, rel: str) -> TreeSitterOracle:
        return TreeSitterOracle(self.text(rel), rel, cache=self.cache)

    def files_in(self, scope: str) -> list[str]:
        """The files a source names: itself, or every file under a directory ("." is the whole tree)."""
        if scope in (".", ""):
            return list(self.files)
        if scope in self._texts:
            return [scope]
        return [f for f in self.files if f.startswith(scope.rstrip("/") + "/")]

    def relative(self, scope: str, rel: str) -> str:
        """``rel`` as the oracle names it within ``scope`` (the path under the directory; None for one file)."""
        if scope in (".", ""):
            return rel
        return rel[len(scope.rstrip("/")) + 1:]

    def context_chars(self, scope: str) -> int:
        """The length of the agent's context for this source, as ``task_context`` builds it."""
        files = self.files_in(scope)
        if scope in self._texts:
            return len(self.text(scope))
        return sum(len(_FILE_HEADER.format(self.relative(scope, f))) + len(self.text(f)) for f in files)

    def fits(self, scope: str) -> bool:
        return 0 < self.context_chars(scope) <= MAX_CONTEXT_CHARS

    def grep_oracle(self, scope: str) -> GrepOracle:
        files = self.files_in(scope)
        if scope in self._texts:
            return GrepOracle(self.text(scope), cache=self.cache)
        return GrepOracle.over_files({self.relative(scope, f): self.text(f) for f in files}, cache=self.cache)

    def oracles(self, scope: str) -> list[TreeSitterOracle]:
        return [self.oracle(f) for f in self.files_in(scope)]

    # -- the independent views -------------------------------------------------------------------------

    @cached_property
    def tags(self) -> list[CtagsTag]:
        """Every ctags tag of the tree (one ``ctags -R`` run), in path then line order."""
        proc = subprocess.run([ctags_program(), "-R", "--languages=Rust", "--output-format=json", "--fields=*",
                               "-f", "-", *self.files], cwd=self.root, capture_output=True, text=True,
                              timeout=_TIMEOUT)
        if proc.returncode != 0:
            raise ConfigError(f"ctags failed on {self.root}: {proc.stderr.strip()[:200]}")
        out = []
        for line in proc.stdout.splitlines():
            tag = json.loads(line)
            if tag.get("_type") != "tag":
                continue
            out.append(CtagsTag(tag["name"], tag["path"], int(tag.get("line", 0)), tag.get("kind", ""),
                                tag.get("scope"), tag.get("scopeKind"), tag.get("signature"),
                                _unpattern(tag.get("pattern", ""))))
        return sorted(out, key=lambda t: (t.path, t.line))

    def tags_in(self, scope: str, *kinds: str) -> list[CtagsTag]:
        files = set(self.files_in(scope))
        return [t for t in self.tags if t.path in files and (not kinds or t.kind in kinds)]

    def grep(self, scope: str, regex: str) -> list[tuple[str, int, str]]:
        """(path relative to the tree, line, text) of every line ``grep -P`` matches in the scope's files."""
        files = self.files_in(scope)
        if not files:
            return []
        proc = subprocess.run(["grep", "-P", "-H", "-n", "--", regex, *files], cwd=self.root, capture_output=True,
                              timeout=_TIMEOUT)
        if proc.returncode not in (0, 1):
            raise ConfigError(f"grep -P failed on {regex!r}: {proc.stderr.decode(errors='replace').strip()[:200]}")
        out = []
        for raw in proc.stdout.decode("utf-8", "replace").splitlines():
            path, number, text = raw.split(":", 2)
            out.append((path, int(number), text))
        return out

    def grep_count(self, scope: str, regex: str) -> int:
        return len(self.grep(scope, regex))


def _label(root: Path) -> tuple[str, str]:
    """(domain id, label): ``crate:<name>`` when the root is the sources ``crate:<name>`` resolves to (Debian's
    ``<name>-<version>/src``), else ``dir:<absolute path>``."""
    resolved = root.resolve()
    m = re.fullmatch(r"(.+?)-\d+(?:\.\d+)*(?:-[\w.]+)?", resolved.parent.name)
    if resolved.name == "src" and m:
        domain = f"crate:{m.group(1)}"
        try:
            if resolve_domain(domain).source.resolve() == resolved:
                return domain, m.group(1)
        except ConfigError:
            pass
    return f"dir:{resolved}", resolved.name if resolved.name != "src" else resolved.parent.name


def open_sources(paths: Sequence[str | Path]) -> list[SourceTree]:
    """The source trees for ``--source`` values: a directory of ``.rs`` files, or a crate name (``tokio``: the
    Debian sources ``crate:tokio`` names). ConfigError, naming the value, for a missing directory, one with no
    ``.rs`` file, or two values naming the same tree."""
    trees: list[SourceTree] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists() and re.fullmatch(r"[A-Za-z0-9_-]+", str(raw)):
            try:
                path = resolve_domain(f"crate:{raw}").source
            except ConfigError:
                raise ConfigError(f"--source {raw}: no such directory, and no Debian crate of that name "
                                  "(librust-<name>-dev)") from None
        if not path.is_dir():
            raise ConfigError(f"--source {raw}: {'not a directory' if path.exists() else 'no such directory'}; "
                              "expected a directory of Rust sources")
        if (path / "src").is_dir() and not any(path.glob("*.rs")):
            path = path / "src"  # a crate's directory: its sources are under src/
        files = sorted(p.relative_to(path).as_posix() for p in path.rglob("*.rs") if p.is_file())
        readable = []
        for rel in files:
            try:
                (path / rel).read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue  # not UTF-8: neither the oracles nor the agent's context can read it
            readable.append(rel)
        if not readable:
            raise ConfigError(f"--source {raw}: no readable .rs file under {path}; expected a directory of Rust "
                              "sources")
        domain, label = _label(path)
        if any(t.root.resolve() == path.resolve() for t in trees):
            raise ConfigError(f"--source {raw}: {path} is given twice")
        trees.append(SourceTree(path, domain, label, readable))
    return trees


def squash(text: Any) -> str:
    """Whitespace-free text, trailing commas before a closing bracket dropped (ctags keeps them)."""
    return re.sub(r",(?=[)\]>])", "", re.sub(r"\s+", "", str(text or "")))
