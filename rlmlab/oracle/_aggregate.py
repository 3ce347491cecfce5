"""Answers computed from tree-sitter facts for what the question reader decided: counts, lists and extremes of
items, return types and whether an item is defined.

The items of a subject (:attr:`Intent.subject`) are read from the parsed files in scope: functions (with
``pub``, ``async``, ``unsafe``, ``const`` and ``#[test]`` as filters), impl blocks (``unsafe``, trait or
inherent), structs, enums, traits, type aliases, method calls (each call) and unsafe blocks. The question's
targets narrow them ("impl blocks of Drop", "a method named `disconnect`"), its rules too (``only_pub``,
``no_tests``); the names it leaves out ("not counting Future") are dropped. A count is the number of items (of
distinct names with ``distinct`` or when the answer names traits or types); a list names the items, their files,
types or traits; an extreme is the file (or trait) with the most (fewest) items, and a tie cannot be decided.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rlmlab.oracle._answers import (
    StructuralResult, claimed_name, compare_names, first_number, said_yes, split_items, squash,
)
from rlmlab.oracle._facts import (
    TRAIT_KINDS, NameIndex, in_test_code, is_test_fn, method_calls, type_aliases, unsafe_blocks,
)
from rlmlab.oracle._grep import parse_claims
from rlmlab.oracle._question import Intent
from rlmlab.oracle._treesitter import TreeSitterOracle
from rlmlab.oracle._verdicts import CannotVerify, Verification

__all__ = ["CountResult", "Found", "verify_aggregate", "items_of", "FACT_SUBJECTS"]

# Subjects whose items tree-sitter gives (the last word of Intent.subject, or a call).
FACT_SUBJECTS = frozenset({"fn", "impl", "struct", "enum", "trait", "type", "call", "unsafe {}"})


@dataclass(frozen=True)
class Found:
    """One item of a subject: its name (a type or trait for impls, as the unit asks), file and line."""

    name: str
    path: str | None
    line: int
    group: str | None = None  # what an extreme groups by besides files (the type of an impl, for distinct counts)


@dataclass(frozen=True)
class CountResult:
    """A count's verdict: the number claimed against the number of items found (and where they are)."""

    verdict: Verification
    subject: str
    claimed: int | None
    actual: int
    found: list[str] = field(default_factory=list)  # "path:line name" of the items counted (at most 50)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "count_of": self.subject, "claimed": self.claimed, "actual": self.actual,
                "found": list(self.found), "note": self.note}


def _subject_parts(subject: str | None) -> tuple[str, set[str], str | None]:
    """(item, modifiers, called method) of an Intent.subject such as "pub unsafe fn" or ".unwrap()"."""
    if not subject:
        return "", set(), None
    call = re.fullmatch(r"\.(\w+)\(\)", subject)
    if call:
        return "call", set(), call.group(1)
    if subject == "unsafe {}":
        return "unsafe {}", set(), None
    words = subject.replace("#[test]", "test").split()
    return words[-1], set(words[:-1]), None


def _public(visibility: str | None, plain: bool = False) -> bool:
    """Whether an item is public: any ``pub`` visibility, or with ``plain`` exactly ``pub`` (not pub(crate))."""
    return bool(visibility) and (visibility.strip() == "pub" if plain else visibility.startswith("pub"))


def _owned(enclosing: str | None, owners: Sequence[str]) -> bool:
    return bool(enclosing) and any(re.search(rf"\b{re.escape(c)}\b", enclosing) for c in owners)


def _fns(o: TreeSitterOracle, mods: set[str], rules: tuple[str, ...], owners: Sequence[str]) -> list[Found]:
    out = []
    for f in o.get_functions():
        if ("free" in mods and f.enclosing is not None) or (owners and not _owned(f.enclosing, owners)):
            continue
        if ("pub" in mods or "only_pub" in rules) and not _public(f.visibility, "plain_pub" in rules):
            continue
        if ("async" in mods and not f.is_async) or ("unsafe" in mods and not f.is_unsafe) \
                or ("const" in mods and not f.is_const):
            continue
        test = is_test_fn(o, f.line)
        if ("test" in mods and not test) or ("no_tests" in rules and (test or in_test_code(o, f.line))):
            continue
        out.append(Found(f.name, o.path, f.line, f.enclosing))
    return out


def _impls(o: TreeSitterOracle, mods: set[str], unit: str) -> list[Found]:
    out = []
    for i in o.get_impls():
        if ("unsafe" in mods and not i.is_unsafe) or ("trait" in mods and i.trait is None) \
                or ("inherent" in mods and i.trait is not None):
            continue
        if unit == "traits" and not i.trait_name:
            continue
        name = i.trait_name if unit == "traits" else i.type_name
        out.append(Found(name or i.type_name, o.path, i.line, i.type_name if unit == "traits" else i.trait_name))
    return out


def items_of(oracles: Sequence[TreeSitterOracle], intent: Intent) -> list[Found]:
    """Every item of the intent's subject in ``oracles``, narrowed by its targets, rules and exclusions."""
    item, mods, call = _subject_parts(intent.subject)
    rules = intent.rules
    found: list[Found] = []
    for o in oracles:
        if item == "fn":
            found += _fns(o, mods, rules, intent.context)
        elif item == "impl":
            found += _impls(o, mods, intent.unit)
        elif item in ("struct", "enum", "trait"):
            records = {"struct": o.get_structs, "enum": o.get_enums, "trait": o.get_traits}[item]()
            found += [Found(r.name, o.path, r.line) for r in records
                      if not (("pub" in mods or "only_pub" in rules) and not _public(r.visibility, "plain_pub" in rules))]
        elif item == "type":
            found += [Found(name, o.path, line) for line, name in type_aliases(o)]
        elif item == "call":
            found += [Found(call or "", o.path, line) for line in method_calls(o, call or "")]
        elif item == "unsafe {}":
            found += [Found("unsafe", o.path, line) for line in unsafe_blocks(o)]
        elif item in ("field", "variant", "parameter"):
            found += _members(o, item, set(intent.targets))
        else:
            raise CannotVerify(f"no tree-sitter facts for {intent.subject or 'the question'}")
    if "no_tests" in rules and item != "fn":
        found = [f for f in found if not in_test_code(_oracle_of(oracles, f.path), f.line)]
    if intent.name_pattern:
        found = [f for f in found if fnmatch.fnmatchcase(f.name, intent.name_pattern)]
    if intent.targets and item not in ("field", "variant", "parameter"):
        found = _narrowed(oracles, found, item, intent)
    owners = {(f.path, f.line) for f in found} if item in ("field", "variant", "parameter") else set()
    if len(owners) > 1:
        raise CannotVerify(f"{len(owners)} items named {', '.join(intent.targets)} have {item}s: which one is meant "
                           "is not known")
    if intent.excluded:
        found = [f for f in found if f.name not in intent.excluded and f.group not in intent.excluded]
    return found


def _members(o: TreeSitterOracle, item: str, owners: set[str]) -> list[Found]:
    """The fields of the named structs, the variants of the named enums, the parameters of the named fns."""
    if item == "field":
        return [Found(f.name, o.path, s.line, s.name) for s in o.get_structs() if s.name in owners for f in s.fields]
    if item == "variant":
        return [Found(v.name, o.path, e.line, e.name) for e in o.get_enums() if e.name in owners
                for v in e.variants]
    return [Found(p.name, o.path, f.line, f.name) for f in o.get_functions() if f.name in owners
            for p in f.parameters]


def _oracle_of(oracles: Sequence[TreeSitterOracle], path: str | None) -> TreeSitterOracle:
    return next(o for o in oracles if o.path == path)


def _narrowed(oracles: Sequence[TreeSitterOracle], found: list[Found], item: str, intent: Intent) -> list[Found]:
    """The items the targets name: an impl of a target trait (or for a target type), a fn or type of that name."""
    wanted = set(intent.targets)
    if item != "impl":
        return [f for f in found if f.name in wanted]
    index = NameIndex.of(oracles)
    traits = {t for t in wanted if index.kinds_of(t) & TRAIT_KINDS}
    types = wanted - traits
    out = []
    for f in found:
        trait, typ = (f.name, f.group) if intent.unit == "traits" else (f.group, f.name)
        if (not traits or trait in traits) and (not types or typ in types):
            out.append(f)
    return out


# -- verdicts --------------------------------------------------------------------------------------------------

def _where(found: Sequence[Found]) -> list[str]:
    return [f"{f.path + ':' if f.path else ''}{f.line} {f.name}" for f in found[:50]]


def _count(oracles: Sequence[TreeSitterOracle], answer: str, intent: Intent) -> CountResult:
    found = items_of(oracles, intent)
    distinct = "distinct" in intent.rules or intent.unit in ("traits", "types")
    actual = len({f.name for f in found}) if distinct else len(found)
    n = first_number(answer)
    note = "distinct names" if distinct else ""
    if n is None:
        return CountResult(Verification.Mismatch, intent.subject or "", None, actual, _where(found),
                           "the answer gives no number")
    verdict = (Verification.ExactMatch if n == actual else
               Verification.HasFalseNegatives if n < actual else Verification.HasFalsePositives)
    return CountResult(verdict, intent.subject or "", n, actual, _where(found), note)


def _path_key(claim: str, paths: Sequence[str | None]) -> str:
    """The file of ``paths`` a claimed path names (exact, or by a unique suffix either way), else the claim."""
    claim = claim.strip().strip("`'\"").replace("\\", "/").removeprefix("./")
    claim = re.sub(r"[:\s].*$", "", claim)
    rels = [p for p in paths if p]
    if claim in rels:
        return claim
    longer = [p for p in rels if claim.endswith("/" + p)]
    if longer:
        return max(longer, key=len)
    shorter = [p for p in rels if p.endswith("/" + claim)]
    return shorter[0] if len(shorter) == 1 else claim


def _by_line(oracles: Sequence[TreeSitterOracle], claims: list[Any], found: list[Found], target: str,
             sample: bool) -> StructuralResult:
    """Items given as ``[path:]line[:text]`` claims: each must be the line of an item (and say that line's text)."""
    paths = [o.path for o in oracles]
    lines = {o.path: o.entry.lines for o in oracles}
    key = lambda path, line: f"{path + ':' if path else ''}{line}"  # noqa: E731
    actual = list(dict.fromkeys(key(f.path, f.line) for f in found))
    claimed = []
    for c in claims:
        path = paths[0] if len(paths) == 1 else (_path_key(c.path, paths) if c.path else None)
        text = lines.get(path, [])
        said = c.text is None or (0 < c.line <= len(text) and _same_line(c.text, text[c.line - 1]))
        claimed.append(key(path, c.line) if said else c.raw)
    return compare_names("list", target, list(dict.fromkeys(claimed)), actual, sample, "lines")


def _same_line(claimed: str, line: str) -> bool:
    norm = lambda t: " ".join(t.split()).removesuffix("{").rstrip()  # noqa: E731
    return norm(claimed) == norm(line)


def _list(oracles: Sequence[TreeSitterOracle], answer: str, intent: Intent) -> StructuralResult:
    found = items_of(oracles, intent)
    target = ", ".join(intent.targets) or intent.subject or ""
    sample = "sample" in intent.rules
    lines = [ln for ln in answer.splitlines() if ln.strip()]
    claims = parse_claims(answer)
    if intent.unit != "files" and lines and len(claims) == len(lines):
        return _by_line(oracles, claims, found, target, sample)
    if intent.unit == "files":
        paths = [o.path for o in oracles]
        if not any(paths):
            raise CannotVerify("the answer names files, but the source is one text without a file name")
        actual = list(dict.fromkeys(f.path or "" for f in found))
        claims = [_path_key(i, paths) for i in split_items(answer)]
        return compare_names("list", target, list(dict.fromkeys(claims)), actual, sample, "files")
    actual = list(dict.fromkeys(f.name for f in found))
    claims = [c for c in (claimed_name(i) for i in split_items(answer)) if c]
    return compare_names("list", target, list(dict.fromkeys(claims)), actual, sample)


def _extreme(oracles: Sequence[TreeSitterOracle], answer: str, intent: Intent) -> StructuralResult:
    found = items_of(oracles, intent)
    if intent.unit == "files":
        counts = Counter({o.path or "": 0 for o in oracles})
        counts.update(f.path or "" for f in found)
    else:
        counts = Counter()
        if "distinct" in intent.rules:
            for name, _ in {(f.name, f.group) for f in found}:
                counts[name] += 1
        else:
            counts.update(f.name for f in found)
    if not counts:
        raise CannotVerify(f"no {intent.subject or 'items'} in the source to compare")
    best = max(counts.values()) if intent.kind == "argmax" else min(counts.values())
    top = sorted(k for k, v in counts.items() if v == best)
    word = "most" if intent.kind == "argmax" else "fewest"
    if len(top) > 1:
        raise CannotVerify(f"{len(top)} {intent.unit} tie for the {word} {intent.subject} ({best}): "
                           f"{', '.join(top[:5])}")
    items = split_items(answer)
    if intent.unit == "files":
        claim = _path_key(items[0], [o.path for o in oracles]) if items else ""
    else:
        claim = (claimed_name(items[0]) or "") if items else ""
    verdict = Verification.ExactMatch if claim == top[0] else Verification.Mismatch
    return StructuralResult(verdict, intent.kind, intent.subject or "", [top[0]], [claim] if claim else [],
                            [] if claim == top[0] or not claim else [claim], [] if claim == top[0] else [top[0]],
                            f"{word} {intent.subject}: {top[0]} ({best})")


def _return_type(oracles: Sequence[TreeSitterOracle], answer: str, intent: Intent) -> StructuralResult:
    name = intent.targets[0]
    fns = [f for o in oracles for f in o.get_functions() if f.name == name]
    if not fns:
        raise CannotVerify(f"no function named {name} in the parsed source")
    owned = [f for f in fns if f.enclosing and any(re.search(rf"\b{re.escape(c)}\b", f.enclosing)
                                                    for c in intent.context)]
    fns = owned or fns
    types = sorted({f.return_type or "()" for f in fns}, key=squash)
    if len({squash(t) for t in types}) > 1:
        raise CannotVerify(f"{len(fns)} functions named {name} return different types: {', '.join(types)}")
    lines = [ln for ln in answer.replace("`", "").splitlines() if ln.strip()]
    claim = lines[0].strip() if lines else ""
    if "->" in claim:
        claim = claim.rsplit("->", 1)[1]
    claim = re.sub(r"\s*[{;.]\s*$", "", claim.strip()).strip()
    ok = squash(claim) == squash(types[0])
    return StructuralResult(Verification.ExactMatch if ok else Verification.Mismatch, "return_type", name,
                            [types[0]], [claim], [] if ok else [claim], [] if ok else [types[0]])


_DEFINED = {"fn": "get_functions", "struct": "get_structs", "enum": "get_enums", "trait": "get_traits"}


def _defines(oracles: Sequence[TreeSitterOracle], answer: str, intent: Intent) -> StructuralResult:
    item, mods, _ = _subject_parts(intent.subject)
    name = intent.targets[0]
    records: list[Any] = []
    for o in oracles:
        for kind, getter in _DEFINED.items():
            if item in ("", kind):
                records += getattr(o, getter)()
        if item in ("", "type"):
            records += [Found(n, o.path, line) for line, n in type_aliases(o)]
    hits = [r for r in records
            if r.name == name and not ("pub" in mods and not _public(getattr(r, "visibility", None)))]
    owners = [c for c in intent.context if c != name]
    if owners and item == "fn":
        hits = [r for r in hits if r.enclosing and any(re.search(rf"\b{re.escape(c)}\b", r.enclosing) for c in owners)]
    truth = bool(hits)
    said = said_yes(answer)
    what = f"{intent.subject or 'item'} {name}" + (f" on {', '.join(owners)}" if owners and item == "fn" else "")
    if said is None:
        return StructuralResult(Verification.Mismatch, "defines", what, [str(truth)], [],
                                note="the answer says neither yes nor no")
    ok = said == truth
    return StructuralResult(Verification.ExactMatch if ok else Verification.Mismatch, "defines", what, [str(truth)],
                            [str(said)], [] if ok else [str(said)], [] if ok else [str(truth)])


def _exists(oracles: Sequence[TreeSitterOracle], answer: str, intent: Intent) -> StructuralResult:
    found = items_of(oracles, intent)
    truth, said = bool(found), said_yes(answer)
    what = f"{intent.subject}" + (f" of {', '.join(intent.targets)}" if intent.targets else "")
    if said is None:
        return StructuralResult(Verification.Mismatch, "exists", what, [str(truth)], [],
                                note="the answer says neither yes nor no")
    ok = said == truth
    return StructuralResult(Verification.ExactMatch if ok else Verification.Mismatch, "exists", what, [str(truth)],
                            [str(said)], [] if ok else [str(said)], [] if ok else [str(truth)],
                            f"{len(found)} found" + (f", first at {_where(found[:1])[0]}" if found else ""))


def verify_aggregate(oracles: Sequence[TreeSitterOracle], answer: str, intent: Intent
                     ) -> StructuralResult | CountResult:
    """The verdict on ``answer`` for a count, list, extreme, return type or defines question; raises
    :class:`CannotVerify` when the facts cannot decide (an ambiguous name, a tie, a subject without facts)."""
    if intent.kind == "count":
        return _count(oracles, answer, intent)
    if intent.kind == "list":
        return _list(oracles, answer, intent)
    if intent.kind in ("argmax", "argmin"):
        return _extreme(oracles, answer, intent)
    if intent.kind == "return_type":
        return _return_type(oracles, answer, intent)
    if intent.kind == "yes_no" and intent.asks == "defines":
        return _defines(oracles, answer, intent)
    if intent.kind == "yes_no" and intent.asks == "exists":
        return _exists(oracles, answer, intent)
    raise CannotVerify(f"no tree-sitter check for a {intent.kind} question")
