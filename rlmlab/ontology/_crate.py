"""The L0 sense card of a Rust crate, from the tree-sitter oracle: modules, main types, public API size.

Deterministic: files are read in sorted path order and every ranking breaks ties by
name. Items inside macro bodies (``cfg_fs! { ... }``) are token trees to tree-sitter and
are not counted; the card says how many top-level macro calls ``lib.rs`` makes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlmlab.errors import ConfigError
from rlmlab.ontology._sense import CARD_BUDGET, fit_card
from rlmlab.records import Record

__all__ = ["CrateSense", "crate_sense", "crate_sense_card"]

_QUOTAS = {"modules": 8, "traits": 6, "types": 8, "top": 8}
_SHRINK_ORDER = ("types", "modules", "top", "traits")
_NAME = re.compile(r'^\s*name\s*=\s*"([^"]+)"', re.MULTILINE)
_VERSION = re.compile(r'^\s*version\s*=\s*"([^"]+)"', re.MULTILINE)


@dataclass
class CrateSense(Record):
    """Counts and rankings behind :func:`crate_sense_card`; lists are in rank order."""

    name: str
    version: str | None
    files: int
    lines: int
    modules: list[tuple[str, int]] = field(default_factory=list)  # (top-level module, .rs files in it)
    pub_structs: int = 0
    pub_enums: int = 0
    pub_traits: int = 0
    pub_fns: int = 0
    async_fns: int = 0
    impls: int = 0
    traits: list[tuple[str, int]] = field(default_factory=list)  # (pub trait, impls of it in the crate)
    types: list[tuple[str, int]] = field(default_factory=list)  # (pub struct/enum, methods in its impls)
    top_items: list[str] = field(default_factory=list)  # lib.rs/main.rs: "mod x", "use a::B", "macro m!"
    parse_errors: int = 0  # files tree-sitter parsed with errors


def _manifest(src: Path) -> tuple[str, str | None]:
    """(crate name, version) from ../Cargo.toml's [package], else from the directory name."""
    cargo = src.parent / "Cargo.toml"
    if cargo.is_file():
        text = cargo.read_text(encoding="utf-8", errors="replace")
        package = text.split("[package]", 1)[1] if "[package]" in text else text
        package = re.split(r"^\[", package, maxsplit=1, flags=re.MULTILINE)[0]
        name, version = _NAME.search(package), _VERSION.search(package)
        if name:
            return name.group(1), version.group(1) if version else None
    base = src.parent.name if src.name == "src" else src.name
    m = re.fullmatch(r"(.+?)-(\d+\.\d+\.\d+\S*)", base)
    return (m.group(1), m.group(2)) if m else (base, None)


def _is_pub(visibility: str | None) -> bool:
    return visibility == "pub"  # pub(crate), pub(super) are not the crate's public API


_CACHE: dict[str, tuple[tuple, CrateSense]] = {}


def crate_sense(src_dir: str | Path) -> CrateSense:
    """Walk every ``.rs`` file under ``src_dir`` (a crate's ``src``) with the tree-sitter oracle.

    Cached per process until a file is added, removed or changed (by mtime and size).
    Treat the result as read-only.
    """
    src = Path(src_dir).resolve()
    if not src.is_dir():
        raise ConfigError(f"crate source {src}: not a directory")
    files = sorted(p for p in src.rglob("*.rs") if p.is_file())
    if not files:
        raise ConfigError(f"crate source {src}: no .rs files")
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    hit = _CACHE.get(str(src))
    if hit is not None and hit[0] == stamp:
        return hit[1]
    sense = _walk_crate(src, files)
    _CACHE[str(src)] = (stamp, sense)
    return sense


def _walk_crate(src: Path, files: list[Path]) -> CrateSense:
    from rlmlab.oracle import TreeSitterOracle

    name, version = _manifest(src)
    sense = CrateSense(name=name, version=version, files=len(files), lines=0)
    modules: Counter[str] = Counter()
    trait_impls: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    pub_types: set[str] = set()
    pub_traits: set[str] = set()
    for path in files:
        rel = path.relative_to(src)
        top = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        if top not in ("lib", "main"):
            modules[top] += 1
        text = path.read_text(encoding="utf-8", errors="replace")
        sense.lines += text.count("\n") + (not text.endswith("\n"))
        oracle = TreeSitterOracle(text, str(rel))
        sense.parse_errors += oracle.has_parse_errors
        for count, items, names in (("pub_structs", oracle.get_structs(), pub_types),
                                    ("pub_enums", oracle.get_enums(), pub_types),
                                    ("pub_traits", oracle.get_traits(), pub_traits)):
            public = [x for x in items if _is_pub(x.visibility)]
            setattr(sense, count, getattr(sense, count) + len(public))
            names.update(x.name for x in public)
        for f in oracle.get_functions():
            if _is_pub(f.visibility):
                sense.pub_fns += 1
                sense.async_fns += f.is_async
        for impl in oracle.get_impls():
            sense.impls += 1
            methods[impl.type_name] += len(impl.methods)
            if impl.trait_name and not impl.negative:
                trait_impls[impl.trait_name] += 1
        if rel.as_posix() in ("lib.rs", "main.rs"):
            sense.top_items = _top_items(oracle)
    sense.modules = sorted(modules.items(), key=lambda x: (-x[1], x[0]))
    sense.traits = sorted(((t, trait_impls[t]) for t in pub_traits), key=lambda x: (-x[1], x[0]))
    sense.types = sorted(((t, methods[t]) for t in pub_types), key=lambda x: (-x[1], x[0]))
    return sense


def _top_items(oracle: Any) -> list[str]:
    """Top-level ``pub mod`` and ``pub use`` items of lib.rs, then distinct top-level macro calls, in source order."""
    items: list[str] = []
    for match in oracle.query("(source_file (mod_item (visibility_modifier) name: (identifier) @name))"):
        items.append(f"mod {match.captures['name'][0].text}")
    for match in oracle.query("(source_file (use_declaration (visibility_modifier) argument: (_) @arg))"):
        items.append("use " + " ".join(match.captures["arg"][0].text.split()))
    macros: list[str] = []
    for match in oracle.query("(source_file (expression_statement (macro_invocation macro: (identifier) @m)))") + \
            oracle.query("(source_file (macro_invocation macro: (identifier) @m))"):
        name = f"{match.captures['m'][0].text}!"
        if name not in macros:
            macros.append(name)
    return items + [f"macro {m}" for m in macros]


def _render(s: CrateSense, q: dict[str, int]) -> str:
    head = f"CRATE {s.name}{' ' + s.version if s.version else ''}: {s.files} .rs files, {s.lines} lines"
    lines = [head,
             f"pub API: {s.pub_structs} structs, {s.pub_enums} enums, {s.pub_traits} traits, "
             f"{s.pub_fns} fns ({s.async_fns} async); {s.impls} impl blocks"]
    sections = [
        ("modules", [f"{m}({n})" for m, n in s.modules]),
        ("traits", [f"{t}({n})" for t, n in s.traits]),
        ("types", [f"{t}({n})" for t, n in s.types]),
        ("top", s.top_items),
    ]
    labels = {"modules": "modules(files)", "traits": "pub traits(impls)", "types": "pub types(methods)",
              "top": "lib.rs"}
    for name, items in sections:
        if items[: q[name]]:
            more = f" +{len(items) - q[name]}" if len(items) > q[name] else ""
            sep = "; " if name == "top" else " "
            lines.append(f"{labels[name]}: " + sep.join(items[: q[name]]) + more)
    if s.parse_errors:
        lines.append(f"note: {s.parse_errors} files parsed with errors")
    return "\n".join(lines)


def crate_sense_card(src_dir: str | Path, budget: int = CARD_BUDGET) -> str:
    """The L0 card of a Rust crate: size, public API counts, modules, main traits/types, lib.rs items.

    At most ``budget`` characters (default 600); the longest list loses items first.
    Raises ConfigError if ``src_dir`` is not a directory with ``.rs`` files.
    """
    s = crate_sense(src_dir)
    return fit_card(lambda quotas: _render(s, quotas), _QUOTAS, _SHRINK_ORDER, budget)
