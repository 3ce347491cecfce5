"""Structural verification: "signature of X", "parameters of X", "fields of X" (or variants), "implements X".

The claimed items are read from the answer (one per line or comma-separated,
bullets and backticks stripped, ``name: type`` where a type is given) and
compared with the tree-sitter facts using the verdicts of
:mod:`rlmlab.oracle._verdicts`. A claimed type that differs from the real one
makes that claim a false positive. Signatures compare everything from ``fn``
on exactly (whitespace-insensitive); the modifiers before ``fn`` (``pub``,
``async``, ``unsafe``, ``const``) must all be stated: an omitted one is a false
negative, an invented one a false positive.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rlmlab.oracle._treesitter import FieldInfo, TreeSitterOracle, _last_segment
from rlmlab.oracle._verdicts import CannotVerify, Verification, asks_for_sample, set_verdict

__all__ = ["StructuralResult", "STRUCTURAL_ASPECTS", "structural_target", "verify_structural"]

_NAME = r"`?(?:[\w:]+::)?(\w+)`?"
# Optional leading words, each followed by whitespace so that they never eat the start of a name (`fns_defined`).
_FN = r"(?:the\s+)?(?:(?:async\s+)?(?:function|method|fn)\s+)?"
_TYPE = r"(?:the\s+)?(?:(?:struct|enum|type|trait)\s+)?"

# aspect -> query regexes; group 1 is the target (and group 2, for yes/no implements, the trait).
STRUCTURAL_ASPECTS: dict[str, list[re.Pattern[str]]] = {
    "signature": [re.compile(rf"\bsignature\s+(?:of|for)\s+{_FN}{_NAME}", re.I),
                  re.compile(rf"{_NAME}(?:'s)?\s+(?:function\s+|method\s+)?signature\b", re.I)],
    "parameters": [re.compile(rf"\b(?:parameters|params|arguments|args)\s+(?:of|for|to)\s+{_FN}{_NAME}", re.I),
                   re.compile(rf"\b(?:parameters|params|arguments|args)\s+does\s+{_FN}{_NAME}\s+take", re.I)],
    "fields": [re.compile(rf"\b(?:fields|variants|members)\s+(?:of|in)\s+{_TYPE}{_NAME}", re.I)],
    "does_implement": [re.compile(rf"\bdoes\s+{_TYPE}{_NAME}\s+implement\s+(?:the\s+)?(?:trait\s+)?{_NAME}", re.I)],
    "traits_of": [re.compile(rf"\btraits\s+does\s+{_TYPE}{_NAME}\s+implement", re.I),
                  re.compile(rf"\btraits\s+(?:are\s+)?implemented\s+(?:by|for)\s+{_TYPE}{_NAME}", re.I)],
    "implementors": [re.compile(rf"\bimplement(?:s|ing|ors?\s+of)?\s+(?:the\s+)?(?:trait\s+)?{_NAME}", re.I)],
}


@dataclass(frozen=True)
class StructuralResult:
    """The detailed form of a structural verdict: what was expected, what was claimed, what was wrong."""

    verdict: Verification
    aspect: str
    target: str
    expected: list[str] = field(default_factory=list)
    claimed: list[str] = field(default_factory=list)
    false_positives: list[str] = field(default_factory=list)
    false_negatives: list[str] = field(default_factory=list)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        # What asdict gives, without its recursive deep copy (a batch converts every result).
        return {"verdict": self.verdict, "aspect": self.aspect, "target": self.target, "expected": list(self.expected),
                "claimed": list(self.claimed), "false_positives": list(self.false_positives),
                "false_negatives": list(self.false_negatives), "note": self.note}


@lru_cache(maxsize=4096)  # the classifier and the verifier both ask, and a batch repeats its queries
def structural_target(query: str) -> tuple[str, tuple[str, ...]] | None:
    """(aspect, target names) for a structural query, or None if the query is not one."""
    for aspect, patterns in STRUCTURAL_ASPECTS.items():
        for rx in patterns:
            m = rx.search(query)
            if m:
                return aspect, tuple(g for g in m.groups() if g)
    return None


def _split_items(answer: str) -> list[str]:
    """Answer items: lines, and within a line commas at bracket depth 0; bullets, numbering, backticks stripped."""
    items = []
    for line in answer.replace("`", "").splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", line).strip().rstrip(",;.")
        if not line or line.endswith(":"):
            continue
        depth, start = 0, 0
        for i, ch in enumerate(line):
            depth += ch in "<([{"
            depth -= ch in ">)]}" and depth > 0
            if ch == "," and depth == 0:
                items.append(line[start:i].strip())
                start = i + 1
        items.append(line[start:].strip())
    return [i for i in items if i]


def _squash(text: str) -> str:
    """Whitespace-insensitive form for comparing types and signatures."""
    return re.sub(r"\s+", "", text)


def _param_key(pattern: str) -> str:
    """Compare parameter patterns without `mut` and whitespace; any form of self is ``self``."""
    key = re.sub(r"\bmut\s+", "", pattern).replace(" ", "")
    return "self" if re.fullmatch(r"&?('\w+)?self", key) else key


def _split_name_type(item: str) -> tuple[str, str | None]:
    """``name: type`` at the first colon outside brackets (``Foo { a: b }: Foo`` keeps its braces)."""
    depth = 0
    for i, ch in enumerate(item):
        depth += ch in "<([{"
        depth -= ch in ">)]}" and depth > 0
        if ch == ":" and depth == 0 and item[i:i + 2] != "::":
            return item[:i].strip(), item[i + 1:].strip() or None
    return item.strip(), None


def _name_type_claims(answer: str) -> list[tuple[str, str | None]]:
    claims = []
    for item in _split_items(answer):
        item = re.sub(r"^pub(?:\([^)]*\))?\s+", "", item)
        name, typ = _split_name_type(item)
        if typ is None:  # "size" or "size (u64)" or prose: the first word-like token is the name
            m = re.match(r"(&?\s*(?:'\w+\s+)?(?:mut\s+)?\w+)", name)
            name = m.group(1) if m else name
        claims.append((_param_key(name), typ))
    return claims


def _compare_named(claims: list[tuple[str, str | None]], fields: Sequence[FieldInfo], sample: bool,
                   aspect: str, target: str) -> StructuralResult:
    real = {f.name: f.type for f in fields}
    hits, wrong = [], []
    for name, typ in claims:
        ok = name in real and (typ is None or real[name] is None or _squash(typ) == _squash(real[name]))
        (hits if ok else wrong).append(name if ok else (f"{name}: {typ}" if typ else name))
    order = [f.name for f in fields]
    verdict = set_verdict(hits, len(wrong), order, sample)
    return StructuralResult(verdict, aspect, target,
                            expected=[f"{f.name}: {f.type}" if f.type else f.name for f in fields],
                            claimed=[f"{n}: {t}" if t else n for n, t in claims], false_positives=wrong,
                            false_negatives=[f"{f.name}: {f.type}" if f.type else f.name
                                             for f in fields if f.name not in set(hits)])


def _params_as_fields(fn: Any) -> list[FieldInfo]:
    return [FieldInfo(_param_key(p.name), p.type, None) for p in fn.parameters]


def _best(candidates: list[StructuralResult]) -> StructuralResult:
    rank = {v: i for i, v in enumerate([Verification.ExactMatch, Verification.UnorderedMatch,
                                         Verification.SubsetMatch, Verification.HasFalseNegatives,
                                         Verification.HasFalsePositives, Verification.Mismatch])}
    return min(candidates, key=lambda r: rank[r.verdict])


def _not_found(target: str, what: str) -> CannotVerify:
    return CannotVerify(f"no {what} named {target} in the parsed source (item-level macro bodies such as "
                        f"cfg_*! {{ ... }} were re-parsed too; bodies that are not Rust items are not)")


def _signature(oracles: Sequence[TreeSitterOracle], answer: str, target: str) -> StructuralResult:
    fns = [f for o in oracles for f in o.get_functions() if f.name == target]
    line = next((ln for ln in answer.replace("`", "").splitlines() if re.search(rf"\bfn\s+{target}\b", ln)), None)
    if not fns:
        raise _not_found(target, "function")
    expected = [f.signature for f in fns]
    if line is None:
        return StructuralResult(Verification.Mismatch, "signature", target, expected=expected,
                                false_negatives=expected, note=f"the answer has no `fn {target}`")
    claim = re.sub(r"\s*[{;]\s*$", "", line.strip()).strip()
    claim = claim[re.search(r"(pub\b|const\b|async\b|unsafe\b|extern\b|fn\b)", claim).start():]
    c_mods, c_core = claim.split("fn ", 1)[0], "fn " + claim.split("fn ", 1)[1]
    results = []
    for sig in expected:
        mods, core = sig.split("fn ", 1)[0], "fn " + sig.split("fn ", 1)[1]
        if _squash(core) != _squash(c_core):
            results.append(StructuralResult(Verification.Mismatch, "signature", target, expected, [claim],
                                            [claim], [sig]))
            continue
        have, want = set(c_mods.split()), set(mods.split())
        verdict = (Verification.ExactMatch if have == want else Verification.HasFalsePositives if have - want
                   else Verification.HasFalseNegatives)
        results.append(StructuralResult(verdict, "signature", target, expected, [claim],
                                        sorted(have - want), sorted(want - have)))
    return _best(results)


def _compare_names(aspect: str, target: str, claims: list[str], actual: list[str], sample: bool) -> StructuralResult:
    """Claimed names against the real ones (order-free sets of type or trait names)."""
    hits = [c for c in claims if c in actual]
    wrong = [c for c in claims if c not in actual]
    return StructuralResult(set_verdict(hits, len(wrong), actual, sample), aspect, target, actual, claims, wrong,
                            [a for a in actual if a not in set(hits)])


def _implementors(oracles: Sequence[TreeSitterOracle], answer: str, trait: str, sample: bool) -> StructuralResult:
    actual = list(dict.fromkeys(i.type_name for o in oracles for i in o.get_impls()
                                if i.trait_name == trait and not i.negative))
    claims = []
    for item in _split_items(answer):
        item = item.split(" for ", 1)[1] if " for " in item else item
        m = re.match(r"(?:impl\S*\s+)?&?\s*((?:\w+::)*\w+)", item)
        if m:
            claims.append(_last_segment(m.group(1)))
    return _compare_names("implementors", trait, claims, actual, sample)


def _traits_of(oracles: Sequence[TreeSitterOracle], answer: str, typ: str, sample: bool) -> StructuralResult:
    actual = list(dict.fromkeys(i.trait_name for o in oracles for i in o.get_impls()
                                if i.type_name == typ and i.trait_name and not i.negative))
    claims = [_last_segment(re.sub(r"^impl\S*\s+", "", i).split(" for ", 1)[0]) for i in _split_items(answer)]
    return _compare_names("traits_of", typ, claims, actual, sample)


def _does_implement(oracles: Sequence[TreeSitterOracle], answer: str, typ: str, trait: str) -> StructuralResult:
    truth = any(i.type_name == typ and i.trait_name == trait and not i.negative for o in oracles for i in o.get_impls())
    m = re.search(r"\b(yes|no|does not|doesn't|not)\b", answer, re.I)
    target = f"{typ}: {trait}"
    if m is None:
        return StructuralResult(Verification.Mismatch, "does_implement", target, [str(truth)], [],
                                note="the answer says neither yes nor no")
    said = m.group(1).lower() == "yes"
    verdict = Verification.ExactMatch if said == truth else Verification.Mismatch
    return StructuralResult(verdict, "does_implement", target, [str(truth)], [str(said)],
                            [] if said == truth else [str(said)], [] if said == truth else [str(truth)])


def _fields(oracles: Sequence[TreeSitterOracle], answer: str, target: str, sample: bool) -> StructuralResult:
    claims = _name_type_claims(answer)
    shapes = [s.fields for o in oracles for s in o.get_structs() if s.name == target]
    shapes += [tuple(FieldInfo(v.name, None, None) for v in e.variants)
               for o in oracles for e in o.get_enums() if e.name == target]
    if not shapes:
        raise _not_found(target, "struct or enum")
    return _best([_compare_named(claims, fields, sample, "fields", target) for fields in shapes])


def _parameters(oracles: Sequence[TreeSitterOracle], answer: str, target: str, sample: bool) -> StructuralResult:
    claims = _name_type_claims(answer)
    fns = [f for o in oracles for f in o.get_functions() if f.name == target]
    if not fns:
        raise _not_found(target, "function")
    return _best([_compare_named(claims, _params_as_fields(f), sample, "parameters", target) for f in fns])


_VERIFIERS: dict[str, Callable[..., StructuralResult]] = {
    "signature": lambda os, a, t, s: _signature(os, a, t[0]),
    "parameters": lambda os, a, t, s: _parameters(os, a, t[0], s),
    "fields": lambda os, a, t, s: _fields(os, a, t[0], s),
    "does_implement": lambda os, a, t, s: _does_implement(os, a, t[0], t[1]),
    "traits_of": lambda os, a, t, s: _traits_of(os, a, t[0], s),
    "implementors": lambda os, a, t, s: _implementors(os, a, t[0], s),
}


def verify_structural(oracles: Sequence[TreeSitterOracle], answer: str, query: str) -> StructuralResult | None:
    """Verify a structural query over one or more parsed files; None if the query is not structural.

    Raises :class:`CannotVerify` when the item the query names is not in the parsed source.
    """
    found = structural_target(query)
    if found is None:
        return None
    aspect, targets = found
    return _VERIFIERS[aspect](oracles, answer, targets, asks_for_sample(query, targets))
