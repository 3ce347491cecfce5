"""The question reader: what a question about Rust source asks, read from general English and the source's names.

:func:`read_question` returns an :class:`Intent`: the ``kind`` of answer asked for, the ``targets`` (item names),
the ``scope``, the counting ``rules`` the question states, and for counts and lists the ``subject`` (what is
counted, in Rust words) and the ``unit`` (what the answer names: items, files, types, traits or lines).

How it reads:

- **Names.** Backticked or quoted names come first, then identifier-shaped words (snake_case with an underscore,
  CamelCase, paths with ``::``, ``Name<T>``), then plain words. Given the source, a word is a target only if it
  names an item there (:class:`~rlmlab.oracle._facts.NameIndex`): a defined function, struct, enum, trait or type
  alias, or a type or trait of an impl block. A quoted name that names nothing is kept only when the question
  asks whether such an item exists. The first of those tiers that holds a name of the kind the question needs
  (a function for a signature, a trait for "which types implement") gives the targets.
- **Kind.** From general English cue words for what is asked ("signature", "parameters", "fields",
  "variants", "return", "implement", "how many", "list / which", "most / fewest", a yes/no question), never
  from a fixed sentence shape.
- **Undecided.** When no name of the needed kind is in the source, or the question reads two ways, the intent
  is ``undecided`` with a ``reason``; the oracle then leaves the answer unverified.

Without a source, targets are the quoted and identifier-shaped names (nothing can be checked against the
source) and the scope is read from the question alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlmlab.oracle._facts import TRAIT_KINDS, TYPE_KINDS, NameIndex
from rlmlab.oracle._source import ParseCache
from rlmlab.oracle._treesitter import TreeSitterOracle
from rlmlab.oracle._wording import (
    CALLS, CONDITION, CRATE, DEFINE, ELLIPSES, FIELDS, IDENT, IMPLEMENT, LIST,
    MODIFIERS, MODULE, NOUNS, PARAMS, RETURN, RUST_KEYWORDS, SAMPLE, VARIANTS, Mention,
    LINES_MENTIONING, QuestionText, is_noun, kind_of, rules_of, scope_of, tokenise, unit_of,
)

__all__ = ["Intent", "KINDS", "read_question"]

KINDS = ("signature", "fields", "variants", "return_type", "parameters", "count", "list", "implementors",
         "traits_of", "argmax", "argmin", "yes_no", "undecided")


@dataclass(frozen=True)
class Intent:
    """What a question asks (see the module docstring). ``kind`` is one of :data:`KINDS`.

    ``subject`` is what a count, list or extreme is over, in Rust words ("fn", "pub unsafe fn", "#[test] fn",
    "unsafe impl", "type", ".unwrap()", "unsafe {}", "comment"); ``unit`` what the answer names ("items",
    "files", "types", "traits", "lines"); ``asks`` for a yes/no question "defines" or "implements";
    ``context`` other names that narrow the targets (the type owning a method); ``name_pattern`` a glob the
    listed names match (``type ...Token = ...`` gives "*Token"); ``excluded`` names the question leaves out
    ("not counting Future"); ``files`` the one file of a multi-file source the question is about ("how many
    tests are in tests.rs" asked of a crate); ``reason`` why it is undecided.
    """

    kind: str
    targets: tuple[str, ...] = ()
    scope: str = "file"
    rules: tuple[str, ...] = ()
    subject: str | None = None
    unit: str = "items"
    asks: str | None = None
    context: tuple[str, ...] = ()
    name_pattern: str | None = None
    excluded: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    reason: str = ""

    @property
    def decided(self) -> bool:
        return self.kind != "undecided"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "targets": list(self.targets), "scope": self.scope, "rules": list(self.rules),
                "subject": self.subject, "unit": self.unit, "asks": self.asks, "context": list(self.context),
                "name_pattern": self.name_pattern, "excluded": list(self.excluded), "files": list(self.files),
                "reason": self.reason}


# -- what is counted or listed ------------------------------------------------------------------------------

@dataclass
class _Subject:
    item: str  # "fn", "impl", "struct", ..., "call", "unsafe {}", "comment"
    modifiers: set[str] = field(default_factory=set)
    call: str | None = None  # the method of a call subject
    pattern: str | None = None  # a name glob from quoted code

    def text(self) -> str:
        if self.item == "call":
            return f".{self.call}()"
        order = ["#[test]", "free", "pub", "const", "async", "unsafe", "inherent", "trait"]
        mods = [m if m != "test" else "#[test]" for m in self.modifiers]
        mods = sorted(mods, key=lambda m: order.index(m) if m in order else len(order))
        item = self.item.replace("#[test] ", "")
        return " ".join(mods + [item])


def _snippet_subject(snippets: list[str]) -> _Subject | None:
    for code in snippets:
        call = re.search(rf"\.?({IDENT})\(\s*\)", code)
        words = re.findall(rf"{IDENT}|#\[\s*{IDENT}|\{{", code)
        items = [w for w in words if w in ("fn", "impl", "struct", "enum", "trait", "type", "macro_rules")]
        if items:
            subject = _Subject(items[0] if items[0] != "macro_rules" else "macro",
                               {w for w in words if w in ("pub", "unsafe", "async", "const")})
            for glob in re.finditer(IDENT, code) if subject.item != "impl" else ():  # impl ...: generics
                word, left, right = glob.group(0), code[:glob.start()].rstrip(), code[glob.end():].lstrip()
                if word not in RUST_KEYWORDS and (left.endswith(ELLIPSES) or right.startswith(ELLIPSES)):
                    subject.pattern = f"*{word}" if left.endswith(ELLIPSES) else f"{word}*"
                    break
            return subject
        if "unsafe" in words and "{" in words:
            return _Subject("unsafe {}")
        if call and code.lstrip().startswith((".", call.group(1))) and not code.lstrip().startswith("#"):
            return _Subject("call", call=call.group(1))
    return None


def _subject(text: QuestionText, unit: str, reading: "_Reading | None" = None) -> _Subject | None:
    """What is counted or listed. Quoted code that names an item kind (``unsafe impl``, ``pub unsafe fn``) or a
    call (``.unwrap()``) comes first; else the item noun a quoted name of the source fits ("which files have a
    method named `disconnect`": fn), else the first item noun that is not the unit, with the modifiers in the
    three words before it ("pub async fns")."""
    found = _snippet_subject(text.snippets)
    attrs = {re.sub(r"\s", "", s) for s in text.snippets}
    nouns = sorted((m.start(), item) for item, rx in NOUNS for m in rx.finditer(text.plain)
                   if not (unit == "traits" and item == "trait"))
    if found is None and nouns:
        start, item = nouns[0]
        quoted = [m for m in text.mentions if m.tier == 1] if reading is not None else []
        for at, noun in nouns:
            if any(reading.kinds(m) & _SUBJECT_WANTS.get(noun, set()) for m in quoted):
                start, item = at, noun
                break
        found = _Subject(item)
        before = text.plain[max(0, start - 40):start].split()[-3:]
        found.modifiers |= {MODIFIERS[w] for w in before if w in MODIFIERS}
        if item != "impl" or {"inherent", "trait"} <= found.modifiers:
            found.modifiers -= {"inherent", "trait"}
        if item != "fn":
            found.modifiers -= {"free"}
    if found is None or found.item == "fn":
        call = CALLS.search(text.plain)
        if call and not is_noun(call.group(1) or call.group(2)):
            found = _Subject("call", call=call.group(1) or call.group(2))
    if found is not None and (found.item == "#[test] fn" or (found.item == "fn" and "#[test]" in attrs)):
        found.item, found.modifiers = "fn", found.modifiers | {"test"}
    return found


# -- targets ---------------------------------------------------------------------------------------------------

_WANTS = {"signature": {"fn"}, "return_type": {"fn"}, "parameters": {"fn"}, "fields": {"struct", "enum"},
          "variants": {"enum"}, "implementors": set(TRAIT_KINDS), "traits_of": set(TYPE_KINDS)}
_SUBJECT_WANTS = {"fn": {"fn"}, "struct": {"struct"}, "enum": {"enum"}, "trait": {"trait"}, "type": {"type"},
                  "impl": set(TRAIT_KINDS | TYPE_KINDS), "field": {"struct"}, "variant": {"enum"},
                  "parameter": {"fn"}}
_DEFINITIONS = {"fn", "struct", "enum", "trait", "type"}
# a question about implementations that asks for functions (methods of an impl block), not traits or types
_ASKS_FUNCTIONS = re.compile(r"\b(?:which|what|list|name|count|many)\s+(?:\w+\s+){0,2}(?:methods?|functions?|fns?)\b")


class _Reading:
    """The names of one question against one source (``index`` None: no source)."""

    def __init__(self, text: QuestionText, index: NameIndex | None, texts: Sequence[str] = ()):
        self.text, self.index, self.texts = text, index, texts

    def kinds(self, m: Mention) -> frozenset[str]:
        if self.index is None:
            return frozenset()
        return self.index.kinds_of(m.name)

    def candidates(self, want: set[str], allow_absent: bool = False, strict: bool = False) -> list[Mention]:
        """Mentions that may be a target of one of the ``want`` kinds, best tier first. ``strict``: a plain
        lower-case word counts only next to an item word ("the function guard"); in a count or a list such a
        word is more often a crate or an English word ("either's lib.rs") than a name."""
        out = []
        for m in self.text.mentions:
            if m.excluded or (m.tier == 3 and m.name[:1].islower() and (m.possessive or strict and m.hint is None)):
                continue  # "log's lib.rs": a crate or file that owns what is asked about, not a name
            if self.index is None:
                ok = m.tier <= 2 and (m.role is None or _role_fits(m.role, want))
            else:
                kinds = self.kinds(m)
                # absent: defined nowhere here (a trait only implemented here is not defined here)
                ok = bool(kinds & want) or (allow_absent and m.tier == 1 and not kinds & _DEFINITIONS)
                if ok and m.role is not None and kinds:
                    ok = _role_fits(m.role, want) and bool(kinds & _role_kinds(m.role))
            if ok:
                out.append(m)
        return sorted(out, key=lambda m: (m.tier, m.pos))

    def pick(self, want: set[str], allow_absent: bool = False, strict: bool = False) -> tuple[list[Mention], str]:
        """(the targets of the best tier holding one, "" or why there is no single reading)."""
        found = self.candidates(want, allow_absent, strict)
        if not found:
            return [], ""
        best = [m for m in found if m.tier == found[0].tier]
        names = list(dict.fromkeys(m.name for m in best))
        if len(names) > 1:
            hinted = [m for m in best if m.hint and m.hint in want]
            hinted_names = list(dict.fromkeys(m.name for m in hinted))
            if len(hinted_names) == 1:
                return [m for m in hinted if m.name == hinted_names[0]], ""
            return best, f"it names {len(names)} items it could be about: {', '.join(names)}"
        return [m for m in best if m.name == names[0]], ""

    def mentioned(self, word: str) -> bool:
        """Whether ``word`` occurs in the source's text as a whole word."""
        return self.index is not None and any(re.search(rf"\b{re.escape(word)}\b", t) for t in self.texts)

    def context(self, chosen: list[Mention]) -> tuple[str, ...]:
        """Qualifiers of the targets and other type names the question mentions (an owner)."""
        names = {m.name for m in chosen}
        out = [m.qualifier.rsplit("::", 1)[-1] for m in chosen if m.qualifier]
        out += [m.name for m in self.candidates(set(TYPE_KINDS | TRAIT_KINDS)) if m.name not in names]
        return tuple(dict.fromkeys(out))


def _role_kinds(role: str) -> frozenset[str]:
    return TRAIT_KINDS if role == "trait" else TYPE_KINDS


def _role_fits(role: str, want: set[str]) -> bool:
    return bool(_role_kinds(role) & want)


# -- the reader ------------------------------------------------------------------------------------------------

Sources = str | Sequence[tuple[str | None, str]] | Mapping[str, str] | Sequence[TreeSitterOracle]


def _oracles(sources: Sources | None, cache: ParseCache | None) -> list[TreeSitterOracle] | None:
    if sources is None:
        return None
    if isinstance(sources, str):
        return [TreeSitterOracle(sources, None, cache=cache)]
    if isinstance(sources, Mapping):
        return [TreeSitterOracle(text, path, cache=cache) for path, text in sorted(sources.items())]
    out = []
    for item in sources:
        out.append(item if isinstance(item, TreeSitterOracle) else TreeSitterOracle(item[1], item[0], cache=cache))
    return out


def read_question(question: str, sources: Sources | None = None, *, cache: ParseCache | None = None) -> Intent:
    """The :class:`Intent` of ``question`` about ``sources`` (a text, ``(path, text)`` pairs, ``{path: text}``,
    or :class:`TreeSitterOracle` objects; None: no source). Never raises on odd input: what it cannot read it
    reports as ``undecided`` with the reason."""
    oracles = _oracles(sources, cache)
    key = (question, tuple((o.path, o.entry.sha256) for o in oracles) if oracles is not None else None)
    found = _READ.get(key)
    if found is None:
        found = _READ[key] = _read(question, oracles)
        while len(_READ) > _READ_KEPT:
            del _READ[next(iter(_READ))]
    return found


_READ: dict[Any, Intent] = {}  # a batch asks the same questions of the same files again and again
_READ_KEPT = 4096


def _read(question: str, oracles: list[TreeSitterOracle] | None) -> Intent:
    text = tokenise(question)
    reading = _Reading(text, NameIndex.of(oracles) if oracles is not None else None,
                       [o.entry.text for o in oracles] if oracles is not None else ())
    scope = scope_of(text, [o.path for o in oracles] if oracles is not None else None)
    rules, unit = rules_of(question.lower()), unit_of(text.plain)
    if SAMPLE.search(text.plain):
        rules += ("sample",)  # a subset of the items is a right answer
    excluded = tuple(dict.fromkeys(m.name for m in text.mentions if m.excluded
                                   and (reading.index is None or reading.kinds(m))))
    files = _named_file(text, [o.path for o in oracles]) if oracles is not None and len(oracles) > 1 else ()
    base = {"scope": "file" if files else scope, "rules": rules, "excluded": excluded, "files": files}
    kind, why = _kind(text)
    if kind == "undecided":
        return Intent("undecided", reason=why, unit=unit, **base)
    return _decide(kind, text, reading, unit, base)


def _named_file(text: QuestionText, paths: list[str | None]) -> tuple[str, ...]:
    """The one file of ``paths`` the question names, when it names exactly one and no wider scope."""
    if len(text.files) != 1 or CRATE.search(text.plain) or MODULE.search(text.plain):
        return ()
    said = text.files[0].replace("\\", "/").removeprefix("./")
    found = [p for p in paths if p and (p == said or p.endswith("/" + said) or said.endswith("/" + p))]
    exact = [p for p in found if p == said or said.endswith("/" + p)]
    found = exact or found
    return (found[0],) if len(found) == 1 else ()


def _kind(text: QuestionText) -> tuple[str, str]:
    """The kind the cue words ask for, before any name is looked up: read from the first sentence (the question;
    what follows adds rules and formats, "Count impl blocks only"), else from the whole text."""
    first = re.split(r"(?<=[?!])\s|(?<=\.)\s", text.plain.strip(), maxsplit=1)[0]
    kind, why = kind_of(first, text.snippets if "qcode" in first else [])
    if kind == "undecided" and first != text.plain.strip():
        return kind_of(text.plain, text.snippets)
    return kind, why


def _names(ms: list[Mention]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m.name for m in ms))


def _undecided(why: str, base: dict[str, Any], **kw: Any) -> Intent:
    return Intent("undecided", reason=why, **base, **kw)


def _decide(kind: str, text: QuestionText, reading: _Reading, unit: str, base: dict[str, Any]) -> Intent:
    if kind in ("signature", "return_type", "parameters", "fields", "variants"):
        return _about_one_item(kind, reading, base)
    if kind == "implement":
        return _implementation(text, reading, unit, base)
    if kind == "yes_no":
        return _yes_no(text, reading, base)
    return _aggregate(kind, text, reading, unit, base)


def _about_one_item(kind: str, reading: _Reading, base: dict[str, Any]) -> Intent:
    want = _WANTS[kind]
    chosen, why = reading.pick(want)
    what = {"fn": "function", "struct": "struct", "enum": "enum"}
    needed = " or ".join(sorted(what[w] for w in want))
    if why:
        return _undecided(f"{kind} question: {why}", base)
    if not chosen:
        return _undecided(f"{kind} question, but no {needed} it names is in the source" if reading.index is not None
                          else f"{kind} question naming no item", base)
    if kind == "fields" and reading.index is not None and reading.kinds(chosen[0]) & {"enum"} \
            and not reading.kinds(chosen[0]) & {"struct"}:
        kind = "variants"
    return Intent(kind, _names(chosen), context=reading.context(chosen), **base)


def _implementation(text: QuestionText, reading: _Reading, unit: str, base: dict[str, Any]) -> Intent:
    if _ASKS_FUNCTIONS.search(text.plain):  # "which methods of the impl X block are pub const fn"
        return _undecided("asks for the functions of impl blocks, which the reader does not check", base)
    traits, why_t = reading.pick(set(TRAIT_KINDS))
    types, why_y = reading.pick(set(TYPE_KINDS))
    if unit == "files":  # "which files implement Ord": the files holding such impl blocks
        found = _subject(text, unit, reading)
        return _aggregate("list", text, reading, unit, base,
                          found if found is not None and found.item not in ("trait", "type") else _Subject("impl"))
    if unit == "types" or (unit != "traits" and traits and not types):
        if why_t or not traits:
            return _undecided(f"asks which types implement a trait, but {why_t or 'names no trait of the source'}",
                              base, unit="types")
        return Intent("implementors", _names(traits), unit="types", subject="impl", **base)
    if unit == "traits" or (types and not traits):
        if why_y or not types:
            return _undecided(f"asks which traits a type implements, but {why_y or 'names no type of the source'}",
                              base, unit="traits")
        return Intent("traits_of", _names(types), unit="traits", subject="impl", **base)
    if traits and types:
        return _undecided("asks about implementations and names both traits and types: "
                          f"{', '.join(_names(traits + types))}", base)
    if LIST.search(text.plain):  # "find all impl blocks": a list of them, naming no trait or type
        return _aggregate("list", text, reading, unit, base)
    return _undecided("asks about implementations but names no trait or type of the source", base)


def _yes_no(text: QuestionText, reading: _Reading, base: dict[str, Any]) -> Intent:
    plain = text.plain
    if IMPLEMENT.search(plain):
        types, why_y = reading.pick(set(TYPE_KINDS))
        traits, why_t = reading.pick(set(TRAIT_KINDS), allow_absent=True)
        types = [m for m in types if m.name not in {t.name for t in traits}] or types
        if why_y or why_t or len(_names(types)) != 1 or len(_names(traits)) != 1:
            return _undecided("yes/no about an implementation, but it does not name one type and one trait of the "
                              f"source{': ' + (why_y or why_t) if why_y or why_t else ''}", base, asks="implements")
        return Intent("yes_no", (_names(types)[0], _names(traits)[0]), asks="implements", unit="yes_no", **base)
    if DEFINE.search(plain):
        subject = _subject(text, "items", reading)
        item = subject.item if subject and subject.item in _DEFINITIONS else None
        want = {item} if item else set(_DEFINITIONS)
        if subject is not None and subject.item in _EXISTS - _DEFINITIONS:  # "is there any unsafe impl"
            return _exists(text, reading, subject, base)
        chosen, why = reading.pick(want, allow_absent=True)
        if not chosen and not why and subject is not None and subject.item in _EXISTS:
            return _exists(text, reading, subject, base)
        if why or not chosen:
            return _undecided(f"yes/no about a definition, but {why or 'it names no item'}", base, asks="defines")
        return Intent("yes_no", _names(chosen), asks="defines", unit="yes_no",
                      subject=subject.text() if subject and item else None,
                      context=reading.context(chosen), **base)
    return _undecided("a yes/no question about something other than a definition or an implementation", base)


_EXISTS = {"fn", "struct", "enum", "trait", "type", "impl", "call", "unsafe {}"}


def _exists(text: QuestionText, reading: _Reading, subject: _Subject, base: dict[str, Any]) -> Intent:
    """"Is there any unsafe impl", "does lib.rs call .unwrap()": whether any item of the subject exists."""
    narrowed = _unread_condition(text, subject, base["rules"])
    if narrowed:
        return _undecided(narrowed, base, asks="exists")
    chosen, _ = reading.pick(_SUBJECT_WANTS.get(subject.item, set()), strict=True)
    return Intent("yes_no", _names(chosen), asks="exists", unit="yes_no", subject=subject.text(), **base)


def _unread_condition(text: QuestionText, subject: _Subject, rules: tuple[str, ...]) -> str:
    """Why the items counted or listed are narrowed by something the reader does not check ("functions that return
    Result", "structs deriving Clone"), or ""; the oracle would otherwise count every item of the subject."""
    plain = text.plain
    aspects = [(RETURN, "return type"), (PARAMS, "parameters"), (FIELDS, "fields"), (VARIANTS, "variants")]
    if subject.item in ("fn", "struct", "enum", "trait", "type", "impl"):
        for rx, what in aspects:
            if rx.search(plain):
                return f"it narrows the {subject.item} items by their {what}, which the reader does not check"
    found = CONDITION.search(plain)
    if found and "comment" in found.group(0) and "no_comments" in rules:
        found = None  # "not the examples inside doc comments": an exclusion the comment rule reads, not a narrowing
    if found and subject.item != "call" and not (subject.item == "impl" and "deriv" in found.group(0)
                                                 and ({"no_derives", "with_derives"} & set(rules))):
        return f"it narrows the {subject.item} items by '{found.group(0)}', which the reader does not check"
    return ""


def _aggregate(kind: str, text: QuestionText, reading: _Reading, unit: str, base: dict[str, Any],
               subject: _Subject | None = None) -> Intent:
    if unit in ("traits", "types") and not IMPLEMENT.search(text.plain):
        unit = "items"  # "how many traits are there": trait definitions, not the traits impl blocks name
    if subject is None and unit == "lines" and LINES_MENTIONING.search(text.plain):
        # "lines that mention CHUNK_SIZE (comments too)": an identifier the source holds, as a whole word
        named = [m for m in text.mentions if m.tier == 2 and reading.mentioned(m.name)]
        if len({m.name for m in named}) == 1:
            return Intent(kind, targets=(named[0].name,), unit=unit, subject="text", **base)
    subject = subject or _subject(text, unit, reading)
    if unit in ("traits", "types") and (subject is None or subject.item in ("trait", "impl")) \
            and IMPLEMENT.search(text.plain):
        subject = _Subject("impl", subject.modifiers if subject else set())
    if subject is None and unit == "files":  # "which file defines `Channel`": the files of that item
        chosen, why = reading.pick(set(_DEFINITIONS), strict=True)
        kinds = set().union(*(reading.kinds(m) & _DEFINITIONS for m in chosen)) if chosen else set()
        if chosen and not why and len(kinds) == 1:
            subject = _Subject(kinds.pop())
    if subject is None and unit == "lines" and text.snippets + [m for m in text.mentions if m.tier == 1]:
        return Intent(kind, unit=unit, subject="text", **base)  # lines holding the quoted text: the grep oracle
    if subject is None:
        return _undecided(f"{kind}: it names nothing to {'count' if kind != 'list' else 'list'}", base, unit=unit)
    want = _SUBJECT_WANTS.get(subject.item, set())
    chosen, why = reading.pick(want, strict=True) if want else ([], "")
    if subject.item in ("field", "variant", "parameter"):
        if why or not chosen:
            return _undecided(f"{kind} of {subject.item}s, but {why or 'no item they belong to is named'}", base,
                              unit=unit)
        if kind == "list":
            return _about_one_item({"field": "fields", "variant": "variants", "parameter": "parameters"}
                                   [subject.item], reading, base)
    elif kind == "list" and unit == "items" and any(m.hint == subject.item for m in chosen):
        return _undecided(f"it lists {subject.item}s but names the {subject.item} {chosen[0].name}: what of it is "
                          "asked is not known", base, unit=unit)
    if "no_tests" in base["rules"]:
        subject.modifiers.discard("test")  # "not counting #[test] functions"
    narrowed = _unread_condition(text, subject, base["rules"])
    if narrowed:
        return _undecided(narrowed, base, unit=unit)
    owners: tuple[str, ...] = ()
    if subject.item == "fn":  # "the methods of Slab": functions of impl blocks for a type the question names
        owners = tuple(m.name for m in reading.candidates(set(TYPE_KINDS), strict=True)
                       if m.name[:1].isupper() or m.tier < 3)
    return Intent(kind, _names(chosen), unit=unit, subject=subject.text(), name_pattern=subject.pattern,
                  context=tuple(dict.fromkeys(owners + reading.context(chosen))) if owners else (), **base)
