"""Code tasks in one file (levels 1-2): signatures, parameters, return types, fields and variants, "does this
file define struct X", "does X implement T", and line counts.

Each answer is the oracle's (TreeSitterOracle facts, GrepOracle lines) and is kept only when a separate
program agrees: Universal Ctags for items (names, lines, signatures, fields, variants, impl headers), ``grep
-P`` for line counts, plus a tree-sitter count of the same items so that text inside strings, block comments
or macro bodies (which grep sees and the items do not) drops the question. For ``code`` tasks the phrased
query is also put through the oracle's own classifier and must give the same answer (:func:`oracle_answer`).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from functools import lru_cache

from rlmlab.experiments import Task
from rlmlab.oracle import QueryKind, classify_query, is_count_query, pattern_for_query, structural_target
from rlmlab.taskgen._common import Candidate, Drop, Kind, phrase
from rlmlab.taskgen._rust import SourceTree, squash

__all__ = ["COUNTS", "oracle_answer", "file_kinds", "code_task", "struct_count", "impl_macros", "NOT_ASKED_TRAITS",
           "oracle_checked", "signature_of", "shuffled_copy"]

# What a count question asks -> (the words the question uses, a tree-sitter count of the same items or None).
# The words must select the same GrepOracle regex (``pattern_for_query``); the generator checks that it does.
COUNTS: dict[str, tuple[str, Callable | None]] = {
    "async_fns": ("async functions", lambda o: sum(f.is_async for f in o.get_functions())),
    "unsafe_blocks": ("unsafe blocks", lambda o: len(o.query("(unsafe_block) @b"))),
    "unsafe_fns": ("unsafe fn declarations", lambda o: sum(f.is_unsafe for f in o.get_functions())),
    "unwrap_calls": ("unwrap calls", lambda o: o.count_error_patterns().unwrap_calls),
    "pub_fns": ("public functions (any pub visibility, pub(crate) included)",
                lambda o: sum((f.visibility or "").startswith("pub") for f in o.get_functions())),
    "fns": ("functions (fn items, methods included)", lambda o: len(o.get_functions())),
    "impl_blocks": ("impl blocks", lambda o: len(o.get_impls())),
    "structs": ("structs", lambda o: len(o.get_structs())),
    "enums": ("enums", lambda o: len(o.get_enums())),
    "traits": ("traits", lambda o: len(o.get_traits())),
    "todo_comments": ("TODO comments", None),
}
# Traits a derive, an auto-impl or a blanket impl can give a type without an impl block naming it: a yes/no or
# "which types" question about them would hinge on what the oracle cannot see.
NOT_ASKED_TRAITS = frozenset({"Send", "Sync", "Unpin", "Sized", "Copy", "Clone", "Debug", "Default", "PartialEq",
                              "Eq", "PartialOrd", "Ord", "Hash", "UnwindSafe", "RefUnwindSafe", "Serialize",
                              "Deserialize", "Any", "From", "Into", "TryFrom", "TryInto", "ToString", "ToOwned",
                              "Borrow", "BorrowMut", "IntoIterator"})  # std's blanket impls give the last ones


def code_task(tree: SourceTree, scope: str, level: int, query: str, checker: str, expected: object,
              note: str) -> Task:
    return Task(id="pending", suite="code", level=level, query=query, checker=checker, expected=expected,
                domain=tree.domain, source=scope, note=note)


def oracle_answer(tree: SourceTree, scope: str, query: str) -> str | int | None:
    """What the code oracle takes as the truth for ``query`` over the scope, written as an agent would answer
    (the derivation of data/tasks/README.md); None when the oracle cannot decide this query."""
    kind = classify_query(query)
    if kind is QueryKind.PatternMatch:
        pattern = pattern_for_query(query)
        if pattern is None:
            return None
        hits = tree.grep_oracle(scope).ground_truth_all(pattern)
        if is_count_query(query):
            return len(hits)
        return "\n".join(f"{p + ':' if p else ''}{i}:{t.strip()}" for p, i, t in hits)
    if kind is not QueryKind.Structural:
        return None
    aspect, names = structural_target(query)
    oracles = tree.oracles(scope)
    impls = [i for o in oracles for i in o.get_impls() if not i.negative]
    if aspect in ("signature", "parameters"):
        found = {(f.signature if aspect == "signature" else tuple(f.parameters))
                 for o in oracles for f in o.get_functions() if f.name == names[0]}
        if len(found) != 1:
            return None
        (value,) = found
        if aspect == "signature":
            return value
        return ", ".join(p.name if p.type is None else f"{p.name}: {p.type}" for p in value)
    if aspect == "fields":
        shapes = [", ".join(f"{f.name}: {f.type}" for f in s.fields) for o in oracles for s in o.get_structs()
                  if s.name == names[0]]
        shapes += [", ".join(v.name for v in e.variants) for o in oracles for e in o.get_enums() if e.name == names[0]]
        return shapes[0] if len(shapes) == 1 else None
    if aspect == "implementors":
        return ", ".join(dict.fromkeys(i.type_name for i in impls if i.trait_name == names[0]))
    if aspect == "traits_of":
        return ", ".join(dict.fromkeys(i.trait_name for i in impls if i.type_name == names[0] and i.trait_name))
    if aspect == "does_implement":
        return "Yes" if any(i.type_name == names[0] and i.trait_name == names[1] for i in impls) else "No"
    return None


def struct_count(tree: SourceTree, scope: str, kind: str) -> int | None:
    """The tree-sitter count of the items a count question asks about, summed over the scope (None: none)."""
    counter = COUNTS[kind][1]
    return None if counter is None else sum(counter(tree.oracle(f)) for f in tree.files_in(scope))


def todo_count(tree: SourceTree, scope: str) -> int:
    """TODO/FIXME/XXX comments as tree-sitter sees them: line comments holding one, one per line."""
    rx = re.compile(r"\b(TODO|FIXME|XXX)\b")
    lines = set()
    for f in tree.files_in(scope):
        for m in tree.oracle(f).query("(line_comment) @c"):
            for cap in m.captures.get("c", []):
                if rx.search(cap.text):
                    lines.add((f, cap.line))
    return len(lines)


@lru_cache(maxsize=64)
def impl_macros(tree: SourceTree) -> frozenset[str]:
    """Names of the tree's ``macro_rules!`` macros whose body writes an ``impl``: a scope that invokes one has
    impls no line of text shows, so no "implements" question is asked there."""
    names = set()
    for rel in tree.files:
        text = tree.text(rel)
        for m in re.finditer(r"macro_rules!\s*(\w+)\s*\{", text):
            depth, i = 1, m.end()
            while depth and i < len(text):
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            if re.search(r"\bimpl\b", text[m.end():i]):
                names.add(m.group(1))
    return frozenset(names)


def invokes_impl_macro(tree: SourceTree, scope: str) -> bool:
    names = impl_macros(tree)
    if not names:
        return False
    rx = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")!")
    return any(rx.search(tree.text(f)) for f in tree.files_in(scope))


# -- level 1 ---------------------------------------------------------------------------------------------

SIGNATURE = ["What is the signature of {name} in {path}?", "Give the signature for fn {name} in {path}.",
             "What is the full signature of the function {name} defined in {path}?",
             "Show {name}'s signature ({path})."]
PARAMETERS = ["What are the parameters of {name} in {path}?", "List the parameters of fn {name} in {path}.",
              "Which arguments does {name} take? It is defined in {path}.",
              "What parameters does {name} take (see {path})?"]
RETURN_TYPE = ["What does fn {name} in {path} return? Answer with the return type only.",
               "What is the return type of {name} in {path}? Give the type only.",
               "Which type does {name} ({path}) return? Answer with the type only."]
FIELDS = ["What are the fields of {name} in {path}?", "List the fields of the struct {name} ({path}).",
          "Name the members of struct {name} in {path}."]
VARIANTS = ["What are the variants of {name} in {path}?", "List the variants of the enum {name} in {path}.",
            "Name all variants of enum {name} ({path})."]
DEFINES = ["Does {path} define a struct named {name}? Answer yes or no.",
           "Is a struct called {name} declared in {path}? Answer yes or no.",
           "Answer yes or no: does the file {path} declare struct {name}?"]
IMPLEMENTS = ["Does {name} implement {trait}? Answer yes or no. (See {path}.)",
              "In {path}, does {name} implement {trait}? Answer yes or no.",
              "Does the type {name} implement the trait {trait} (see {path})? Answer yes or no."]
COUNT_FILE = ["How many {what} are there in {path}?", "Count the {what} in {path}.",
              "How many {what} does {path} contain?", "How many {what} appear in the file {path}?"]


def shuffled_copy(rng: random.Random, items: list) -> list:
    items = list(items)
    rng.shuffle(items)
    return items


def _fn_tags(tree: SourceTree, scope: str, name: str) -> list:
    return [t for t in tree.tags_in(scope, "function", "method") if t.name == name]


def signature_of(fn) -> str:
    return f"({fn.params})" + (f" -> {fn.return_type}" if fn.return_type else "")


def ctags_signature(raw: str | None) -> str:
    """ctags' ``signature`` field without the fn's generic parameters and ``where`` clause, which it keeps and the
    oracle's ``(params) -> ret`` does not."""
    text = (raw or "").strip()
    if text.startswith("<"):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "<"
            depth -= ch == ">" and text[i - 1:i] != "-"
            if depth == 0:
                text = text[i + 1:]
                break
    depth = 0
    for m in re.finditer(r"[<(\[]|[>)\]]|\bwhere\b", text):
        token = m.group(0)
        if token == "where" and depth == 0:
            return text[:m.start()].strip()
        if token != "where" and not (token == ">" and text[m.start() - 1:m.start()] == "-"):
            depth += 1 if token in "<([" else -1
    return text


def oracle_drop(tree: SourceTree, scope: str, kind: str, query: str, expected: object) -> Drop | None:
    """A Drop when the oracle, asked the phrased query, would not give ``expected``."""
    got = oracle_answer(tree, scope, query)
    if got is None:
        return Drop(kind, "oracle cannot decide the phrasing", query)
    if got != expected:
        return Drop(kind, "oracle disagrees with the phrasing", f"{query} -> {got!r:.60}")
    return None


def oracle_checked(tree: SourceTree, scope: str, kind: str, level: int, query: str, expected: object,
                   note: str) -> Candidate | Drop:
    """The ``code`` task asking ``query`` over the scope (answer ``expected``), or the Drop of :func:`oracle_drop`
    when the oracle, asked the phrased query, would not give that answer."""
    return oracle_drop(tree, scope, kind, query, expected) or Candidate(
        code_task(tree, scope, level, query, "code", expected, note), (scope,))


def spread(rng: random.Random, scopes: list[str], items_of: Callable[[str], list]) -> Iterator[tuple[str, object]]:
    """(scope, item) taking one item of each scope in turn (scopes and items shuffled), so that a stream does not
    dwell on one big file."""
    queues = []
    for scope in shuffled_copy(rng, scopes):
        items = shuffled_copy(rng, items_of(scope))
        if items:
            queues.append((scope, items))
    while queues:
        for entry in list(queues):
            scope, items = entry
            yield scope, items.pop()
            if not items:
                queues.remove(entry)


def _functions(tree: SourceTree, rng: random.Random, kind: str) -> Iterator[tuple[str, object, list]]:
    """(file, function, its ctags tags) for functions whose name is unique in their file, files in turn."""
    def unique(rel: str) -> list:
        fns = tree.oracle(rel).get_functions()
        names = Counter(f.name for f in fns)
        return sorted((f for f in fns if names[f.name] == 1 and f.from_macro is None), key=lambda f: f.line)

    for rel, fn in spread(rng, tree.small_files, unique):
        yield rel, fn, _fn_tags(tree, rel, fn.name)


def _fn_stream(tree: SourceTree, kind: str, level: int) -> Callable[[random.Random], Iterator[Candidate | Drop]]:
    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        for rel, fn, tags in _functions(tree, rng, kind):
            if kind == "return_type" and not fn.return_type:
                continue
            if len(tags) != 1 or tags[0].line != fn.line:
                yield Drop(kind, "ctags does not find the fn once at the same line", f"{rel}:{fn.line} {fn.name}")
                continue
            if squash(ctags_signature(tags[0].signature)) != squash(signature_of(fn)):
                yield Drop(kind, "ctags signature differs", f"{rel}:{fn.line} {tags[0].signature!r:.60}")
                continue
            values = {"name": fn.name, "path": rel}
            if kind == "return_type":
                query = phrase(rng, RETURN_TYPE, **values)
                task = code_task(tree, rel, level, query, "exact", fn.return_type,
                                 f"tree-sitter: return type of fn {fn.name}; ctags signature agrees")
                yield Candidate(task, (rel,))
                continue
            if kind == "signature":
                query, expected = phrase(rng, SIGNATURE, **values), fn.signature
            else:
                query = phrase(rng, PARAMETERS, **values)
                expected = ", ".join(p.name if p.type is None else f"{p.name}: {p.type}" for p in fn.parameters)
                if not expected:
                    continue
            yield oracle_checked(tree, rel, kind, level, query, expected,
                                 f"TreeSitterOracle: {kind} of {fn.name}; ctags signature agrees")
    return stream


def _shape_stream(tree: SourceTree, kind: str, level: int) -> Callable[[random.Random], Iterator[Candidate | Drop]]:
    """Fields of a struct (named fields) or variants of an enum, checked against ctags' field/enumerator tags."""
    def shapes(rel: str) -> list:
        o = tree.oracle(rel)
        names = Counter([s.name for s in o.get_structs()] + [e.name for e in o.get_enums()])
        if kind == "fields":
            items = [(s.name, [f.name for f in s.fields], ", ".join(f"{f.name}: {f.type}" for f in s.fields),
                      s.line, s.from_macro) for s in o.get_structs() if s.kind == "named" and s.fields]
        else:
            items = [(e.name, [v.name for v in e.variants], ", ".join(v.name for v in e.variants), e.line,
                      e.from_macro) for e in o.get_enums() if e.variants]
        return [item for item in items if names[item[0]] == 1 and item[4] is None]

    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        for rel, (name, members, expected, line, _) in spread(rng, tree.small_files, shapes):
            tag_kind, scope_kind = ("field", "struct") if kind == "fields" else ("enumerator", "enum")
            tagged = [t.name for t in tree.tags_in(rel, tag_kind) if t.scope == name and t.scope_kind == scope_kind]
            if tagged != members:
                yield Drop(kind, f"ctags {tag_kind}s differ", f"{rel}:{line} {name}: {tagged} vs {members}")
                continue
            query = phrase(rng, FIELDS if kind == "fields" else VARIANTS, name=name, path=rel)
            yield oracle_checked(tree, rel, kind, level, query, expected,
                                 f"TreeSitterOracle: {kind} of {name}; ctags {tag_kind}s agree")
    return stream


def yes_no(stream: Callable[[random.Random, bool], Iterator[Candidate | Drop]]) -> Callable:
    """A stream that alternates a "yes" question and a "no" one (each from its own generator), so a yes/no kind is
    about half "no" even where questions with a "no" answer are rarer."""
    def both(rng: random.Random) -> Iterator[Candidate | Drop]:
        sides = [stream(random.Random(rng.random()), True), stream(random.Random(rng.random()), False)]
        rng.shuffle(sides)  # which comes first, so that merged trees do not all open with "yes"
        while sides:
            for it in list(sides):
                while (item := next(it, None)) is not None:
                    yield item
                    if isinstance(item, Candidate):
                        break
                else:
                    sides.remove(it)
    return both


def _defines_stream(tree: SourceTree, level: int) -> Callable[[random.Random], Iterator[Candidate | Drop]]:
    """"Does F define struct X?": yes for a struct of F; no for a struct of another file that F mentions."""
    def stream(rng: random.Random, positive: bool) -> Iterator[Candidate | Drop]:
        elsewhere = [t for t in tree.tags if t.kind == "struct"]
        for rel in shuffled_copy(rng, tree.small_files):
            mine = [s.name for s in tree.oracle(rel).get_structs()]
            if positive:
                pool = [s.name for s in tree.oracle(rel).get_structs() if s.from_macro is None]
            else:
                text = tree.text(rel)
                pool = sorted({t.name for t in elsewhere if t.path != rel and t.name not in mine
                               and re.search(rf"\b{re.escape(t.name)}\b", text)})
            if not pool:
                continue
            name = rng.choice(pool)
            ctags_says = any(t.name == name for t in tree.tags_in(rel, "struct"))
            grep_says = tree.grep_count(rel, rf"^(?!\s*//).*\bstruct\s+{re.escape(name)}\b") > 0
            ts_says = name in mine
            if not ctags_says == grep_says == ts_says == positive:
                yield Drop("defines_struct", "ctags, grep and tree-sitter disagree", f"{rel} struct {name}")
                continue
            query = phrase(rng, DEFINES, name=name, path=rel)
            answer = "yes" if positive else "no"
            yield Candidate(code_task(tree, rel, level, query, "exact", answer,
                                      f"tree-sitter, ctags and grep -P agree: struct {name} "
                                      f"{'is' if positive else 'is not'} declared in the file"), (rel,))
    return yes_no(stream)


def impl_header_trait(line: str, type_name: str) -> str | None:
    """The trait an impl header line names for ``type_name`` (``impl<T> fmt::Display for Foo<T> {`` ->
    ``Display``), read without tree-sitter; None for an inherent impl or a header it cannot read."""
    m = re.match(r"\s*(?:unsafe\s+)?impl\b", line)
    if not m:
        return None
    rest, depth, i = line[m.end():], 0, 0
    if rest.lstrip().startswith("<"):  # skip the impl's generic parameters, brackets balanced
        rest = rest.lstrip()
        for i, ch in enumerate(rest):
            depth += ch == "<"
            depth -= ch == ">"
            if depth == 0:
                break
        rest = rest[i + 1:]
    head = re.match(r"\s*(!?)\s*([\w:]+)\s*(?:<.*?>)?\s+for\s+(?:&\s*(?:'\w+\s+)?(?:mut\s+)?)?([\w:]+)", rest)
    if head is None or head.group(1) or head.group(3).rsplit("::", 1)[-1] != type_name:
        return None
    return head.group(2).rsplit("::", 1)[-1]


def ctags_impls(tree: SourceTree, scope: str) -> list[tuple[str, str]]:
    """(type, trait) of every trait impl in the scope as ctags finds it (the trait read from its header line)."""
    out = []
    for tag in tree.tags_in(scope, "implementation"):
        trait = impl_header_trait(tag.pattern, tag.name)
        if trait is not None:
            out.append((tag.name, trait))
    return out


def _implements_stream(tree: SourceTree, level: int) -> Callable[[random.Random], Iterator[Candidate | Drop]]:
    """"Does X implement T?" in one file: yes from an impl there; no when nothing in the whole tree implements
    T for X (so the question is false, not only the file) and other types of the file implement T."""
    def stream(rng: random.Random, positive: bool) -> Iterator[Candidate | Drop]:
        everywhere = {(i.type_name, i.trait_name) for f in tree.files for i in tree.oracle(f).get_impls()
                      if i.trait_name}
        short = {i.trait_name for f in tree.files for i in tree.oracle(f).get_impls()
                 if i.trait_name and len(i.type_name) <= 2}  # impl<T: Foo> Bar for T: a blanket impl
        for rel in shuffled_copy(rng, tree.small_files):
            impls = [x for x in tree.oracle(rel).get_impls() if x.trait_name and not x.negative
                     and x.from_macro is None and x.trait_name not in NOT_ASKED_TRAITS and x.type_name.isidentifier()]
            if not impls or invokes_impl_macro(tree, rel):
                continue
            if positive:
                pairs = sorted({(x.type_name, x.trait_name) for x in impls})
            else:
                types = sorted({x.type_name for x in impls})
                traits = sorted({x.trait_name for x in impls} - short)
                pairs = [(t, tr) for t in types for tr in traits if (t, tr) not in everywhere]
            if not pairs:
                continue
            name, trait = rng.choice(pairs)
            ctags_says = (name, trait) in set(ctags_impls(tree, rel if positive else "."))
            header = rf"^\s*(unsafe\s+)?impl\b.*\b{re.escape(trait)}\b.*\bfor\b.*\b{re.escape(name)}\b"
            grep_says = tree.grep_count("." if not positive else rel, header) > 0
            if not ctags_says == grep_says == positive:
                yield Drop("does_implement", "ctags or grep disagree", f"{rel} {name}: {trait}")
                continue
            query = phrase(rng, IMPLEMENTS, name=name, trait=trait, path=rel)
            expected = "Yes" if positive else "No"
            yield oracle_checked(tree, rel, "does_implement", level, query, expected,
                                 f"TreeSitterOracle: does_implement {name} / {trait}; ctags and grep -P agree"
                                 + ("" if positive else " (no impl anywhere in the tree)"))
    return yes_no(stream)


def count_stream(tree: SourceTree, kind: str, level: int, scopes: Callable[[random.Random], list[str]],
                 forms: list[str], where: Callable[[str], dict], name: str) -> Callable[[random.Random], Iterator]:
    """Count questions (kind ``name``) over each scope: the GrepOracle's lines, ``grep -P`` over the same files,
    and the tree-sitter count of the same items must all give one number (at least 1)."""
    words = COUNTS[kind][0]

    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        for scope in scopes(rng):
            query = phrase(rng, forms, what=words, **where(scope))
            pattern = pattern_for_query(query)
            if pattern is None or not is_count_query(query):
                yield Drop(name, "phrasing not read as a count", query)
                continue
            n = len(tree.grep_oracle(scope).ground_truth_all(pattern))
            if n == 0:
                continue
            grep_n = tree.grep_count(scope, pattern)
            items = todo_count(tree, scope) if kind == "todo_comments" else struct_count(tree, scope, kind)
            if grep_n != n:
                yield Drop(name, "grep -P count differs", f"{scope}: oracle {n}, grep {grep_n}")
                continue
            if items != n:
                yield Drop(name, "tree-sitter item count differs (macros, strings or comments)",
                           f"{scope}: lines {n}, items {items}")
                continue
            yield oracle_checked(tree, scope, name, level, query, n,
                                 f"GrepOracle (count) of regex {pattern}; grep -P and tree-sitter agree")
    return stream


def file_kinds(tree: SourceTree) -> list[Kind]:
    """The level-1 and level-2 kinds over the tree's files."""
    def files(rng: random.Random) -> list[str]:
        return shuffled_copy(rng, tree.small_files)

    kinds = [Kind("signature", 1, _fn_stream(tree, "signature", 1)),
             Kind("parameters", 1, _fn_stream(tree, "parameters", 1)),
             Kind("return_type", 1, _fn_stream(tree, "return_type", 1)),
             Kind("fields", 1, _shape_stream(tree, "fields", 1)),
             Kind("variants", 1, _shape_stream(tree, "variants", 1)),
             Kind("defines_struct", 1, _defines_stream(tree, 1)),
             Kind("does_implement", 1, _implements_stream(tree, 1))]
    for kind in ("async_fns", "unsafe_blocks", "unwrap_calls", "pub_fns", "impl_blocks", "structs", "enums",
                 "unsafe_fns"):
        kinds.append(Kind(f"count_{kind}", 2, count_stream(tree, kind, 2, files, COUNT_FILE,
                                                           lambda scope: {"path": scope}, f"count_{kind}")))
    return kinds
