"""Code tasks over a module directory or a whole crate (levels 3-5): counts, an item found somewhere in the
module, "find all" lines as ``path:line:code``, implementors of a trait, the traits of a type, and aggregates
(pub async fns, the file with most unsafe blocks, distinct traits, the most implemented trait).

Checks as in :mod:`._code`: ctags for items and impl headers, ``grep -P`` for lines, tree-sitter counts against
both; a scope that invokes a ``macro_rules!`` macro writing impls gets no "implements" question.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterator

from rlmlab.oracle import pattern_for_query
from rlmlab.taskgen._code import (
    NOT_ASKED_TRAITS, oracle_checked, signature_of, shuffled_copy, code_task, count_stream, ctags_impls, invokes_impl_macro,
    struct_count,
)
from rlmlab.taskgen._common import Candidate, Drop, Kind, phrase
from rlmlab.taskgen._rust import SourceTree, squash

__all__ = ["module_kinds", "modules"]

PUB_ASYNC_FN = r"^(?!\s*//).*\bpub(\([^)]*\))?\s+async\s+(unsafe\s+)?fn\b"
UNSAFE_BLOCK = r"^(?!\s*//).*\bunsafe\s*\{"

COUNT_MODULE = ["How many {what} are there in the {mod} module (all files under {mod}/)?",
                "Count the {what} in the {mod} module, over every file under {mod}/.",
                "How many {what} does the {mod} module contain (all .rs files under {mod}/)?"]
COUNT_CRATE = ["How many {what} are there in the whole {crate} crate?",
               "Count the {what} in the whole {crate} crate (every file under src/).",
               "How many {what} does the {crate} crate contain, over all its source files?"]
SIGNATURE_MOD = ["What is the signature of {name} in the {mod} module?",
                 "Give the signature for fn {name}, defined somewhere in the {mod} module.",
                 "Show {name}'s signature (it is in the {mod} module)."]
FIELDS_MOD = ["List the fields of {name} (defined somewhere in the {mod} module).",
              "What are the fields of the struct {name} in the {mod} module?",
              "Name the members of struct {name}, which is defined under {mod}/."]
FIND_ALL = ["Find all {what} in the {mod} module. Answer one per line as path:line:code, with the path relative "
            "to {mod}/ and the line number within that file.",
            "List all {what} under {mod}/, one per line as path:line:code (path relative to {mod}/, line number "
            "within the file).",
            "Show all {what} in the {mod} module as path:line:code lines, the path relative to {mod}/."]
FIND_WHAT = {"unsafe_fns": "unsafe fn declarations", "async_fns": "async fn declarations",
             "unsafe_blocks": "unsafe blocks"}
IMPLEMENTORS = ["Which types in the {mod} module implement {trait}?",
                "List the types that implement {trait} in the {mod} module.",
                "Name the implementors of {trait} in the {mod} module."]
TRAITS_OF = ["Which traits are implemented for {name} in the {mod} module? List only traits named in impl blocks, "
             "not derives.",
             "List the traits implemented for {name} in the {mod} module (impl blocks only, not derives).",
             "Which traits are implemented by {name} in the {mod} module? Count impl blocks only, not derives."]
PUB_ASYNC = ["How many pub async fns are there in {where}? Count every async fn with a pub visibility (pub, "
             "pub(crate), ...).",
             "Count the async fns with a pub visibility (pub, pub(crate), ...) in {where}."]
MOST_UNSAFE = ["Which file of {where} contains the most unsafe blocks? Answer with its path relative to {root}.",
               "In {where}, which file has the largest number of unsafe blocks? Give its path relative to {root}."]
DISTINCT_TRAITS = ["How many distinct traits are implemented by impl blocks in {where}? Count each trait name once.",
                   "Count the distinct trait names that impl blocks in {where} implement (each name once)."]
MOST_IMPLEMENTED = ["Which trait is implemented by the largest number of distinct types in {where}, counting impl "
                    "blocks only (not derives) and not counting Future? Answer with the trait name.",
                    "In {where}, which trait has the most implementing types (distinct types, impl blocks only, not "
                    "derives; Future aside)? Give the trait name."]


def modules(tree: SourceTree) -> list[str]:
    """Directories of the tree with at least two .rs files whose context fits, sorted."""
    dirs = Counter()
    for rel in tree.files:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs["/".join(parts[:i])] += 1
    return [d for d, n in sorted(dirs.items()) if n >= 2 and tree.fits(d)]


def _where(tree: SourceTree, scope: str) -> dict[str, str]:
    if scope == ".":
        return {"where": f"the whole {tree.label} crate", "root": "src/", "mod": tree.label, "crate": tree.label}
    return {"where": f"the {scope} module (all files under {scope}/)", "root": f"{scope}/", "mod": scope,
            "crate": tree.label}


def _ts_impls(tree: SourceTree, scope: str) -> list:
    return [i for o in tree.oracles(scope) for i in o.get_impls() if i.trait_name and not i.negative]


def _impls_agree(tree: SourceTree, scope: str) -> bool:
    """Whether tree-sitter and ctags find the same (type, trait) pairs in the scope, and no impl macro is used.

    Impls for types ctags does not tag (``&[u8]``, ``(A, B)``) are left out of the comparison; the questions
    then use only pairs whose type is a plain name (see :func:`_named_impls`)."""
    ts = Counter((i.type_name, i.trait_name) for i in _named_impls(tree, scope))
    return not invokes_impl_macro(tree, scope) and ts == Counter(ctags_impls(tree, scope))


def _generic(name: str) -> bool:
    """A name that is most likely a type parameter (``impl<F: Fn()> Matcher for F``): a blanket impl, which a
    "which types implement" answer should not list as a type."""
    return bool(re.fullmatch(r"[A-Z][A-Z0-9]?", name))


def _named_impls(tree: SourceTree, scope: str) -> list:
    return [i for i in _ts_impls(tree, scope) if i.type_name.isidentifier()]


def _over_scopes(each: Callable[..., Iterator[Candidate | Drop]]) -> Callable:
    """A stream factory from what one scope yields: ``factory(tree, kind, level, scopes)`` is a stream that runs
    ``each(tree, kind, level, scope, rng)`` on each scope ``scopes(rng)`` lists, in that order."""
    def factory(tree: SourceTree, kind: str, level: int, scopes) -> Callable:
        def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
            for scope in scopes(rng):
                yield from each(tree, kind, level, scope, rng)
        return stream
    return factory


@_over_scopes
def _item_stream(tree: SourceTree, kind: str, level: int, scope: str,
                 rng: random.Random) -> Iterator[Candidate | Drop]:
    """Signature of a fn, or fields of a struct, whose name is unique in the module (found somewhere in it)."""
    oracles = tree.oracles(scope)
    if kind == "signature_in_module":
        fns = [f for o in oracles for f in o.get_functions()]
        names = Counter(f.name for f in fns)
        pool = [f for f in fns if names[f.name] == 1 and f.from_macro is None]
    else:
        items = [s for o in oracles for s in o.get_structs()] + [e for o in oracles for e in o.get_enums()]
        names = Counter(s.name for s in items)
        pool = [s for o in oracles for s in o.get_structs()
                if names[s.name] == 1 and s.kind == "named" and s.fields and s.from_macro is None]
    if not pool:
        return
    item = rng.choice(sorted(pool, key=lambda x: (x.name, x.line)))
    if kind == "signature_in_module":
        tags = [t for t in tree.tags_in(scope, "function", "method") if t.name == item.name]
        if len(tags) != 1 or squash(tags[0].signature) != squash(signature_of(item)):
            yield Drop(kind, "ctags signature differs", f"{scope}: {item.name}")
            return
        query, expected = phrase(rng, SIGNATURE_MOD, name=item.name, mod=scope), item.signature
    else:
        tagged = [t.name for t in tree.tags_in(scope, "field") if t.scope == item.name
                  and t.scope_kind == "struct"]
        if tagged != [f.name for f in item.fields]:
            yield Drop(kind, "ctags fields differ", f"{scope}: {item.name}")
            return
        query = phrase(rng, FIELDS_MOD, name=item.name, mod=scope)
        expected = ", ".join(f"{f.name}: {f.type}" for f in item.fields)
    yield oracle_checked(tree, scope, kind, level, query, expected,
                         f"TreeSitterOracle: {kind} of {item.name}; ctags agrees")


@_over_scopes
def _find_all_stream(tree: SourceTree, kind: str, level: int, scope: str,
                     rng: random.Random) -> Iterator[Candidate | Drop]:
    query = phrase(rng, FIND_ALL, what=FIND_WHAT[kind], mod=scope)
    pattern = pattern_for_query(query)
    hits = tree.grep_oracle(scope).ground_truth_all(pattern)
    if not 1 <= len(hits) <= 12:
        return
    grep = [(tree.relative(scope, p), i, t) for p, i, t in tree.grep(scope, pattern)]
    if [(p, i) for p, i, _ in grep] != [(p, i) for p, i, _ in hits]:
        yield Drop(f"find_all_{kind}", "grep -P lines differ", scope)
        return
    if struct_count(tree, scope, kind) != len(hits):
        yield Drop(f"find_all_{kind}", "tree-sitter item count differs (macros, strings or comments)", scope)
        return
    expected = "\n".join(f"{p}:{i}:{t.strip()}" for p, i, t in hits)
    yield oracle_checked(tree, scope, f"find_all_{kind}", level, query, expected,
                         f"GrepOracle lines of regex {pattern}; grep -P and tree-sitter agree")


@_over_scopes
def _relation_stream(tree: SourceTree, kind: str, level: int, scope: str,
                     rng: random.Random) -> Iterator[Candidate | Drop]:
    """Implementors of a trait, or the traits of a type, in a module where ctags reads the same impls."""
    every = _ts_impls(tree, scope)
    impls = [i for i in every if i.type_name.isidentifier()]
    unnamed = {i.trait_name for i in every if not i.type_name.isidentifier()}
    if not impls:
        return
    if not _impls_agree(tree, scope):
        yield Drop(kind, "ctags and tree-sitter impls differ (or an impl macro is used)", scope)
        return
    if kind == "implementors":
        groups = {t: list(dict.fromkeys(i.type_name for i in impls if i.trait_name == t))
                  for t in {i.trait_name for i in impls}}
    else:
        groups = {x: list(dict.fromkeys(i.trait_name for i in impls if i.type_name == x))
                  for x in {i.type_name for i in impls}}
    pool = sorted(k for k, v in groups.items() if 2 <= len(v) <= 10 and not _generic(k)
                  and not any(map(_generic, v))
                  and (kind != "implementors" or (k not in unnamed and k not in NOT_ASKED_TRAITS)))
    if not pool:
        return
    key = rng.choice(pool)
    query = (phrase(rng, IMPLEMENTORS, trait=key, mod=scope) if kind == "implementors"
             else phrase(rng, TRAITS_OF, name=key, mod=scope))
    expected = ", ".join(groups[key])
    yield oracle_checked(tree, scope, kind, level, query, expected,
                         f"TreeSitterOracle: {kind} of {key}; ctags impl headers agree")


@_over_scopes
def _aggregate_stream(tree: SourceTree, kind: str, level: int, scope: str,
                      rng: random.Random) -> Iterator[Candidate | Drop]:
    """Numeric or exact aggregates the oracle cannot judge: recomputed by grep -P and by ctags."""
    where = _where(tree, scope)
    if kind == "pub_async_fns":
        n = len(tree.grep_oracle(scope).ground_truth_all(PUB_ASYNC_FN))
        ts = sum(f.is_async and (f.visibility or "").startswith("pub")
                 for o in tree.oracles(scope) for f in o.get_functions())
        if n == 0:
            return
        if not tree.grep_count(scope, PUB_ASYNC_FN) == ts == n:
            yield Drop(kind, "grep -P or tree-sitter count differs", scope)
            return
        task = code_task(tree, scope, level, phrase(rng, PUB_ASYNC, **where), "numeric", n,
                         f"regex {PUB_ASYNC_FN} over non-comment lines; grep -P and tree-sitter agree")
    elif kind == "most_unsafe_file":
        files = tree.files_in(scope)
        counts = {tree.relative(scope, f): len(tree.grep_oracle(f).ground_truth(UNSAFE_BLOCK)) for f in files}
        grep = Counter(tree.relative(scope, p) for p, _, _ in tree.grep(scope, UNSAFE_BLOCK))
        ts = {tree.relative(scope, f): struct_count(tree, f, "unsafe_blocks") for f in files}
        top = max(counts.values(), default=0)
        winners = [f for f, c in counts.items() if c == top]
        if top < 2 or len(winners) != 1:
            return  # a tie makes the question ambiguous
        if {k: v for k, v in counts.items() if v} != dict(grep) or ts != counts:
            yield Drop(kind, "grep -P or tree-sitter counts differ", scope)
            return
        task = code_task(tree, scope, level, phrase(rng, MOST_UNSAFE, **where), "exact", winners[0],
                         f"regex {UNSAFE_BLOCK} per file ({top} in {winners[0]}); unique maximum; "
                         "grep -P and tree-sitter agree")
    else:
        impls, every = _named_impls(tree, scope), _ts_impls(tree, scope)
        if len(impls) < 3:
            return
        if not _impls_agree(tree, scope):
            yield Drop(kind, "ctags and tree-sitter impls differ (or an impl macro is used)", scope)
            return
        if kind == "distinct_traits":
            if {i.trait_name for i in every} != {i.trait_name for i in impls}:
                yield Drop(kind, "a trait only unnamed types implement (ctags cannot confirm it)", scope)
                return
            task = code_task(tree, scope, level, phrase(rng, DISTINCT_TRAITS, **where), "numeric",
                             len({i.trait_name for i in impls}),
                             "tree-sitter impl blocks (trait names); ctags impl headers agree")
        else:
            per = {t: len({i.type_name for i in every if i.trait_name == t})
                   for t in {i.trait_name for i in every} if t != "Future"}
            named = {t: len({i.type_name for i in impls if i.trait_name == t}) for t in per}
            if not per:
                return
            if max(named, key=lambda t: (named[t], t)) != max(per, key=lambda t: (per[t], t), default=None):
                yield Drop(kind, "unnamed types change the winner (ctags cannot confirm it)", scope)
                return
            top = max(per.values(), default=0)
            winners = sorted(t for t, c in per.items() if c == top)
            if top < 2 or len(winners) != 1:
                return
            task = code_task(tree, scope, level, phrase(rng, MOST_IMPLEMENTED, **where), "exact", winners[0],
                             f"tree-sitter impl blocks: {winners[0]} has {top} types; unique maximum; "
                             "ctags agrees")
    yield Candidate(task, (scope,))


def module_kinds(tree: SourceTree) -> list[Kind]:
    """The level-3 to level-5 kinds over the tree's modules (and the whole crate when its context fits)."""
    mods = modules(tree)

    def in_modules(rng: random.Random) -> list[str]:
        return shuffled_copy(rng, mods)

    def big(rng: random.Random) -> list[str]:  # L5 works on the crate or its larger modules
        sized = [m for m in mods if len(tree.files_in(m)) >= 4]
        return (["."] if tree.fits(".") else []) + shuffled_copy(rng, sized)

    def crate(rng: random.Random) -> list[str]:
        return ["."] if tree.fits(".") else []

    kinds = []
    for kind in ("async_fns", "unsafe_blocks", "unwrap_calls", "pub_fns", "structs", "impl_blocks", "unsafe_fns",
                 "todo_comments"):
        kinds.append(Kind(f"module_count_{kind}", 3, count_stream(tree, kind, 3, in_modules, COUNT_MODULE,
                                                                  lambda s: {"mod": s}, f"module_count_{kind}")))
    kinds += [Kind("signature_in_module", 3, _item_stream(tree, "signature_in_module", 3, in_modules)),
              Kind("fields_in_module", 3, _item_stream(tree, "fields_in_module", 3, in_modules))]
    kinds += [Kind(f"find_all_{k}", 3, _find_all_stream(tree, k, 3, in_modules)) for k in FIND_WHAT]
    kinds += [Kind("implementors", 4, _relation_stream(tree, "implementors", 4, in_modules)),
              Kind("traits_of", 4, _relation_stream(tree, "traits_of", 4, in_modules))]
    for kind in ("unsafe_blocks", "structs", "impl_blocks", "pub_fns"):
        name = f"crate_count_{kind}"
        kinds.append(Kind(name, 5, count_stream(tree, kind, 5, crate, COUNT_CRATE, lambda s: {"crate": tree.label},
                                                name)))
    kinds += [Kind(k, 5, _aggregate_stream(tree, k, 5, big))
              for k in ("pub_async_fns", "most_unsafe_file", "distinct_traits", "most_implemented_trait")]
    return kinds
