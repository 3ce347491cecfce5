"""Structural verification: the signature, parameters, fields or variants of an item, its implementations.

What a question asks is read by :func:`~rlmlab.oracle.read_question` (counts, lists, extremes, return types
and definitions go on to :mod:`rlmlab.oracle._aggregate`); ``STRUCTURAL_ASPECTS`` and
:func:`structural_target` are the older regex reading, kept for callers that have no source to read against.

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
from functools import lru_cache
from typing import Any

from rlmlab.oracle._aggregate import CountResult, verify_aggregate
from rlmlab.oracle._answers import StructuralResult, compare_names, name_type_claims, param_key, split_items, squash
from rlmlab.oracle._question import Intent, read_question
from rlmlab.oracle._facts import derived_traits
from rlmlab.oracle._treesitter import FieldInfo, TreeSitterOracle, last_segment
from rlmlab.oracle._verdicts import CannotVerify, Verification, set_verdict

__all__ = ["StructuralResult", "STRUCTURAL_ASPECTS", "structural_target", "verify_structural", "verify_intent"]

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


@lru_cache(maxsize=4096)  # the classifier and the verifier both ask, and a batch repeats its queries
def structural_target(query: str) -> tuple[str, tuple[str, ...]] | None:
    """(aspect, target names) for a structural query, or None if the query is not one."""
    for aspect, patterns in STRUCTURAL_ASPECTS.items():
        for rx in patterns:
            m = rx.search(query)
            if m:
                return aspect, tuple(g for g in m.groups() if g)
    return None


def _compare_named(claims: list[tuple[str, str | None]], fields: Sequence[FieldInfo], sample: bool,
                   aspect: str, target: str) -> StructuralResult:
    real = {f.name: f.type for f in fields}
    hits, wrong = [], []
    for name, typ in claims:
        ok = name in real and (typ is None or real[name] is None or squash(typ) == squash(real[name]))
        (hits if ok else wrong).append(name if ok else (f"{name}: {typ}" if typ else name))
    order = [f.name for f in fields]
    verdict = set_verdict(hits, len(wrong), order, sample)
    return StructuralResult(verdict, aspect, target,
                            expected=[f"{f.name}: {f.type}" if f.type else f.name for f in fields],
                            claimed=[f"{n}: {t}" if t else n for n, t in claims], false_positives=wrong,
                            false_negatives=[f"{f.name}: {f.type}" if f.type else f.name
                                             for f in fields if f.name not in set(hits)])


def _params_as_fields(fn: Any) -> list[FieldInfo]:
    return [FieldInfo(param_key(p.name), p.type, None) for p in fn.parameters]


def _best(candidates: list[StructuralResult]) -> StructuralResult:
    rank = {v: i for i, v in enumerate([Verification.ExactMatch, Verification.UnorderedMatch,
                                         Verification.SubsetMatch, Verification.HasFalseNegatives,
                                         Verification.HasFalsePositives, Verification.Mismatch])}
    return min(candidates, key=lambda r: rank[r.verdict])


def _not_found(target: str, what: str) -> CannotVerify:
    return CannotVerify(f"no {what} named {target} in the parsed source (item-level macro bodies such as "
                        f"cfg_*! {{ ... }} were re-parsed too; bodies that are not Rust items are not)")


def _signature_claim(answer: str, target: str) -> str | None:
    """The answer's line holding ``fn target``, with the lines that continue it (a where clause, a return type or
    parameters on lines of their own) joined to it."""
    lines = answer.replace("`", "").splitlines()
    at = next((i for i, ln in enumerate(lines) if re.search(rf"\bfn\s+{re.escape(target)}\b", ln)), None)
    if at is None:
        return None
    claim = lines[at]
    for more in lines[at + 1:]:
        if not more.strip() or "{" in claim or not (more[:1].isspace() or more.lstrip().startswith(_CONTINUED)
                                                    or claim.count("(") > claim.count(")")):
            break
        claim += " " + more.strip()
    return claim


_CONTINUED = ("where", "->", ")", ",", "+", ">")


def _signature(oracles: Sequence[TreeSitterOracle], answer: str, target: str) -> StructuralResult:
    fns = [f for o in oracles for f in o.get_functions() if f.name == target]
    line = _signature_claim(answer, target)
    if not fns:
        raise _not_found(target, "function")
    expected = [f.signature for f in fns]
    if line is None:
        return StructuralResult(Verification.Mismatch, "signature", target, expected=expected,
                                false_negatives=expected, note=f"the answer has no `fn {target}`")
    claim = re.sub(r"\s*[{;]\s*$", "", line.strip()).strip()
    claim = claim[re.search(r"\b(?:pub|const|async|unsafe|extern|fn)\b", claim).start():]
    c_mods, c_core = claim.split("fn ", 1)[0], "fn " + claim.split("fn ", 1)[1]
    results = []
    for sig in expected:
        mods, core = sig.split("fn ", 1)[0], "fn " + sig.split("fn ", 1)[1]
        if squash(core) != squash(c_core):
            results.append(StructuralResult(Verification.Mismatch, "signature", target, expected, [claim],
                                            [claim], [sig]))
            continue
        have, want = set(c_mods.split()), set(mods.split())
        verdict = (Verification.ExactMatch if have == want else Verification.HasFalsePositives if have - want
                   else Verification.HasFalseNegatives)
        results.append(StructuralResult(verdict, "signature", target, expected, [claim],
                                        sorted(have - want), sorted(want - have)))
    return _best(results)


def _derives(oracles: Sequence[TreeSitterOracle]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for o in oracles:
        for typ, traits in derived_traits(o).items():
            out.setdefault(typ, set()).update(traits)
    return out


def _derive_rule(derived: bool, rules: tuple[str, ...], what: str) -> bool:
    """Whether derives count: as the question says; CannotVerify when it matters and the question does not say."""
    if "with_derives" in rules:
        return True
    if "no_derives" in rules or not derived:
        return False
    raise CannotVerify(f"{what} by a #[derive]; the question does not say whether derives count")


def _implementors(oracles: Sequence[TreeSitterOracle], answer: str, trait: str, sample: bool,
                  rules: tuple[str, ...] = ()) -> StructuralResult:
    actual = list(dict.fromkeys(i.type_name for o in oracles for i in o.get_impls()
                                if i.trait_name == trait and not i.negative))
    derived = sorted(t for t, traits in _derives(oracles).items() if trait in traits and t not in actual)
    if _derive_rule(bool(derived), rules, f"{', '.join(derived[:3])} implement{'s' * (len(derived) == 1)} {trait}"):
        actual += derived
    claims = []
    for item in split_items(answer):
        item = item.split(" for ", 1)[1] if " for " in item else item
        m = re.match(r"(?:impl\S*\s+)?&?\s*((?:\w+::)*\w+)", item)
        if m:
            claims.append(last_segment(m.group(1)))
    return compare_names("implementors", trait, claims, actual, sample)


def _traits_of(oracles: Sequence[TreeSitterOracle], answer: str, typ: str, sample: bool,
               rules: tuple[str, ...] = ()) -> StructuralResult:
    actual = list(dict.fromkeys(i.trait_name for o in oracles for i in o.get_impls()
                                if i.type_name == typ and i.trait_name and not i.negative))
    derived = sorted(_derives(oracles).get(typ, set()) - set(actual))
    if _derive_rule(bool(derived), rules, f"{typ} implements {', '.join(derived[:3])}"):
        actual += derived
    claims = [last_segment(re.sub(r"^impl\S*\s+", "", i).split(" for ", 1)[0]) for i in split_items(answer)]
    return compare_names("traits_of", typ, claims, actual, sample)


def _does_implement(oracles: Sequence[TreeSitterOracle], answer: str, typ: str, trait: str,
                    rules: tuple[str, ...] = ()) -> StructuralResult:
    truth = any(i.type_name == typ and i.trait_name == trait and not i.negative for o in oracles for i in o.get_impls())
    if not truth and "no_derives" not in rules:
        truth = trait in _derives(oracles).get(typ, set())  # a derived trait is implemented
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
    claims = name_type_claims(answer)
    shapes = [s.fields for o in oracles for s in o.get_structs() if s.name == target]
    shapes += [tuple(FieldInfo(v.name, None, None) for v in e.variants)
               for o in oracles for e in o.get_enums() if e.name == target]
    if not shapes:
        raise _not_found(target, "struct or enum")
    return _best([_compare_named(claims, fields, sample, "fields", target) for fields in shapes])


def _parameters(oracles: Sequence[TreeSitterOracle], answer: str, target: str, sample: bool) -> StructuralResult:
    claims = name_type_claims(answer)
    fns = [f for o in oracles for f in o.get_functions() if f.name == target]
    if not fns:
        raise _not_found(target, "function")
    return _best([_compare_named(claims, _params_as_fields(f), sample, "parameters", target) for f in fns])


_VERIFIERS: dict[str, Callable[..., StructuralResult]] = {  # (oracles, answer, targets, sample, rules)
    "signature": lambda os, a, t, s, r: _signature(os, a, t[0]),
    "parameters": lambda os, a, t, s, r: _parameters(os, a, t[0], s),
    "fields": lambda os, a, t, s, r: _fields(os, a, t[0], s),
    "variants": lambda os, a, t, s, r: _fields(os, a, t[0], s),
    "does_implement": lambda os, a, t, s, r: _does_implement(os, a, t[0], t[1], r),
    "traits_of": lambda os, a, t, s, r: _traits_of(os, a, _one_type(os, t[0]), s, r),
    "implementors": lambda os, a, t, s, r: _implementors(os, a, t[0], s, r),
}


def _one_type(oracles: Sequence[TreeSitterOracle], name: str) -> str:
    """``name`` if at most one struct or enum of that name is defined in the files; else CannotVerify: impl blocks
    name types by their last segment, so the impls of two types of one name cannot be told apart."""
    where = [f"{o.path or 'the file'}:{r.line}" for o in oracles for r in [*o.get_structs(), *o.get_enums()]
             if r.name == name]
    if len(where) > 1:
        raise CannotVerify(f"{len(where)} types named {name} are defined ({', '.join(where[:4])}); their impl "
                           f"blocks cannot be told apart by name")
    return name


def verify_intent(oracles: Sequence[TreeSitterOracle], answer: str, intent: Intent
                  ) -> StructuralResult | CountResult:
    """The verdict on ``answer`` for what the question reader decided, from the parsed files.

    Raises :class:`CannotVerify` when the reader is undecided, or when the facts cannot decide (the item the
    question names is not in the source, an ambiguous name, a tie).
    """
    if not intent.decided:
        raise CannotVerify(f"the question reader is undecided: {intent.reason}")
    if intent.files:
        oracles = [o for o in oracles if o.path in intent.files] or oracles
    aspect = "does_implement" if intent.kind == "yes_no" and intent.asks == "implements" else intent.kind
    if aspect in _VERIFIERS:
        return _VERIFIERS[aspect](oracles, answer, intent.targets, "sample" in intent.rules, intent.rules)
    return verify_aggregate(oracles, answer, intent)


def verify_structural(oracles: Sequence[TreeSitterOracle], answer: str, query: str, intent: Intent | None = None
                      ) -> StructuralResult | CountResult:
    """Verify an answer about items over one or more parsed files: the question is read by
    :func:`~rlmlab.oracle.read_question` against those files (or ``intent`` is given).

    Raises :class:`CannotVerify` when the reader is undecided or the facts cannot decide.
    """
    return verify_intent(oracles, answer, intent if intent is not None else read_question(query, oracles))
