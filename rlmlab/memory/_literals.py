"""The literals of a query (names, paths, numbers, CURIEs, quoted text), read one way for two users.

The step grammar (:mod:`rlmlab.executors._step_grammar`) offers them as the values of a template's typed slots
(:func:`query_slots`); retrieval replaces them by their slot types (:func:`query_shape`), so "What is 2 + 2?"
and "What is 125 + 389?" have one shape, "What is {number} + {number}?", and find the same template. Both read
the query with the same patterns, so a shape's slot markers are exactly the slots a grammar could fill.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from rlmlab.memory._templates import SLOT_TYPES

__all__ = ["query_slots", "query_shape", "shape_tokens", "shape_similarity", "numbers_in", "number_text",
           "NUMBER_WORDS", "SHAPE_MAX"]

NUMBER_WORDS = {
    "half": "2", "twice": "2", "double": "2", "triple": "3", "thrice": "3", "dozen": "12", "quarter": "4",
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "fifteen": "15", "twenty": "20", "thirty": "30",
    "fifty": "50", "hundred": "100", "thousand": "1000",
}
# Number words that name a count: a shape writes them as {number}. "half", "twice", "dozen", ... stay words in
# a shape, because they say which operation a word problem needs, not only which value.
_CARDINALS = frozenset(w for w in NUMBER_WORDS if w not in ("half", "twice", "double", "triple", "thrice",
                                                           "dozen", "quarter"))
SHAPE_MAX = 1000  # characters of one stored shape (a long word problem is cut; its start says most)

_CURIE = re.compile(r"(?<![\w/#])([a-z][a-z0-9]*:[A-Za-z_][\w.-]*[\w])(?!//)")
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?!\w)")
_PATH = re.compile(r"(?<![\w/])((?:[\w.-]+/)+[\w.-]+|[\w-]+\.(?:rs|py|ttl|toml|json|md|txt))")
_QUOTED = re.compile(r"'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"|\u2018([^\u2019\n]{1,80})\u2019|\u201c([^\u201d\n]{1,80})\u201d")
_IDENT = re.compile(r"(?<![\w:])[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Za-z]{2,}")
# A full IRI written in a query ("whose IRI starts with http://www.w3.org/2004/02/skos/core#broader"): it ends
# before a space, a bracket or a quote, and a sentence's full stop or comma after it is not part of it. Its pieces
# (www, w3, skos, core) are not words, names or paths of the query.
_IRI = re.compile(r"\bhttps?://[^\s'\"<>(){}]*[\w#/]")


def number_text(raw: str) -> str:
    """A number as a slot holds it: thousands commas dropped, trailing decimal zeros cut ("1,250.50" -> "1250.5")."""
    text = raw.replace(",", "")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def numbers_in(text: str) -> list[str]:
    """The numbers written in digits in ``text``, as :func:`number_text` gives them, in order, with repeats."""
    return [number_text(m.group(0)) for m in _NUMBER.finditer(text)]


_RUST_KEYWORDS = frozenset(
    "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move "
    "mut pub ref return self Self static struct super trait true type unsafe use where while union".split())


# Comments (``//`` to the end of the line, ``/* ... */``) and string literals: a word that is code only there
# (a doc example, an error message) is not a name the code has.
_NOT_CODE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"', re.S)


_ATTRIBUTE = re.compile(r"#!?\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]")  # over lines; one nested [...]


@lru_cache(maxsize=4)
def _code_only(context: str) -> str:
    # attributes name no items: cfg(not(...)), cfg(all(...)) would ground the query's "not" and "all"
    return _ATTRIBUTE.sub(" ", _NOT_CODE.sub(" ", context))


# Where a name is code: defined (fn x, struct X, ...), called or qualified (x(, X<, x::, X {), a field or path
# segment (.x, ::x), an impl's type or trait (impl<T> Drop for X<T> {). Each pattern captures the name in a
# lookahead, so a name right after another (const static X) is found too.
_NAMED = [re.compile(p) for p in (
    r"\b(?:fn|struct|enum|trait|type|impl|mod|const|static|let|union|macro_rules!)\s+(?=(\w+))",
    r"\b(?=(\w+)\s*(?:\(|<|::|\{))",
    r"[.:](?=(\w+))",
    r"\bimpl\s*<[^>{}]*>\s+(?=(\w+))",
    r"\bfor\s+(?=(\w+)\s*(?:<|\{|where\b))",
)]


@lru_cache(maxsize=4)
def _code_names(context: str) -> frozenset[str]:
    """Every identifier the context's code defines or uses: one pass of each pattern over the code, cached per
    context, instead of a regex search over the whole context per query word."""
    code = _code_only(context)
    return frozenset(m.group(1) for pattern in _NAMED for m in pattern.finditer(code))


def _names_something(word: str, context: str) -> bool:
    """Whether ``word`` is an identifier the context's code defines or uses (not only a word of its prose, its
    comments or its strings)."""
    return word not in _RUST_KEYWORDS and word in _code_names(context)


# English function words (a closed class: determiners, quantifiers, pronouns, prepositions, conjunctions,
# auxiliaries, wh-words). Several are also names in code (``all``, ``any``, ``take``, ``is_empty``'s pieces), so
# occurring in the source is not enough: written as prose, such a word is never a slot value. Written as code
# (backticked or quoted, called ``all(``, or after ``.``) it is.
FUNCTION_WORDS = frozenset(
    "a an the this that these those all any each every both either neither some none no not only such other "
    "another many much more most few fewer less least several same own i me my we our you your he him his she her "
    "it its they them their what which who whom whose where when why how whether if then than so and or but nor "
    "of in on at by for from to into onto with without within about above below over under between among through "
    "after before during per via up down out off again there here is are was were be been being am do does did "
    "done has have had having can could shall should will would may might must also just yet".split())


_TICKED = re.compile(r"`[^`\n]{1,80}`")


def _written_as_code(query: str, m: re.Match) -> bool:
    """Whether the query writes the word of ``m`` as code: inside backticks or quotes, called, or after a dot."""
    if query[m.end():].lstrip().startswith("(") or query[:m.start()].endswith("."):
        return True
    return any(q.start() < m.start() and m.end() < q.end() for rx in (_TICKED, _QUOTED) for q in rx.finditer(query))


def query_slots(query: str, context: str | None = None) -> dict[str, list[str]]:
    """Candidate values for each slot type, read off the query (in order of appearance, deduplicated).

    With the task's ``context`` text, an ``ident`` slot takes only the query's words that name something in it
    (defined or used as code), so "What does fn wait return?" offers ``wait``, not ``What`` or ``fn``; if none
    does, the slot has no candidate; a lower-case function word (``all``, ``the``, :data:`FUNCTION_WORDS`) is a
    candidate only where the query writes it as code. ``property`` and ``class`` are the query's CURIEs
    whose local name starts lower-case (RDF properties) or upper-case (classes).
    """
    out: dict[str, list[str]] = {t: [] for t in SLOT_TYPES}
    out["iri"] = [m.group(0) for m in _IRI.finditer(query)]
    query = _IRI.sub(" ", query)
    for m in _CURIE.finditer(query):
        out["curie"].append(m.group(1))
        local = m.group(1).split(":", 1)[1]
        out["property" if local[:1].islower() else "class"].append(m.group(1))
    masked = _CURIE.sub(" ", query)
    for m in _PATH.finditer(masked):
        out["path"].append(m.group(1).rstrip("."))
    for m in _QUOTED.finditer(query):
        out["quoted"].append(next(g for g in m.groups() if g is not None))
    out["number"] += numbers_in(query)
    for m in _WORD.finditer(query):
        word = m.group(0)
        out["word"] += [word, word.lower()]
        if word.lower() in NUMBER_WORDS:
            out["number"].append(NUMBER_WORDS[word.lower()])
    unpathed = _PATH.sub(" ", masked)
    for m in _IDENT.finditer(unpathed):
        word = m.group(0)
        if len(word) > 1 and not (word in FUNCTION_WORDS and not _written_as_code(unpathed, m)):
            out["ident"].append(word)
    if context:  # a word that names nothing in the context is never a slot value ("Answer with a number")
        out["ident"] = [w for w in out["ident"] if _names_something(w, context)]
    return {k: list(dict.fromkeys(v)) for k, v in out.items()}


# -- shapes -----------------------------------------------------------------------------------------------

def _is_name(query: str, m: re.Match) -> bool:
    """Whether an identifier-like word of a query is a name (a code item, a person) rather than prose: it has an
    underscore, a digit or an inner capital (``set_len``, ``u64``, ``AsyncSeek``), or is capitalised inside a
    sentence (``Does File implement ...``). All-capital words (SPARQL, TODO), a sentence's first word and plain
    lower-case words stay words: without the task's source, "fn wait" and "fn declarations" read alike."""
    word = m.group(0)
    if word.isupper() or word in _RUST_KEYWORDS:
        return False
    if "_" in word or any(c.isdigit() for c in word) or re.search(r"[a-z][A-Z]", word):
        return True
    before = query[:m.start()].rstrip()
    return word[0].isupper() and bool(before) and before[-1] not in ".?!:;\"'(\u201c\u2018"


def query_shape(query: str) -> str:
    """The query with its literals replaced by their slot types, whitespace collapsed, at most
    :data:`SHAPE_MAX` characters: "What is 2 + 2?" -> "What is {number} + {number}?", "the rdfs:label of
    prov:Activity" -> "the {property} of {class}", "set_len in fs/file.rs" -> "{ident} in {path}".

    Literals are read as :func:`query_slots` reads them: quoted text, then CURIEs (``{property}`` or ``{class}``
    by the case of the local name), paths, numbers in digits and cardinal number words, and names (see
    :func:`_is_name`); the rest is kept as written.
    """
    spans: list[tuple[int, int, str]] = []  # (start, end, type), first claim wins

    def claim(start: int, end: int, kind: str) -> None:
        if all(end <= s or start >= e for s, e, _ in spans):
            spans.append((start, end, kind))

    for m in _QUOTED.finditer(query):
        claim(m.start(), m.end(), "quoted")
    for m in _IRI.finditer(query):
        claim(m.start(), m.end(), "iri")
    for m in _CURIE.finditer(query):
        local = m.group(1).split(":", 1)[1]
        claim(m.start(1), m.end(1), "property" if local[:1].islower() else "class")
    for m in _PATH.finditer(query):
        text = m.group(1)
        claim(m.start(1), m.start(1) + len(text.rstrip(".")), "path")
    for m in _NUMBER.finditer(query):
        claim(m.start(), m.end(), "number")
    for m in _IDENT.finditer(query):
        if m.group(0).lower() in _CARDINALS:
            claim(m.start(), m.end(), "number")
        elif _is_name(query, m):
            claim(m.start(), m.end(), "ident")
    out, pos = [], 0
    for start, end, kind in sorted(spans):
        out += [query[pos:start], "{" + kind + "}"]
        pos = end
    out.append(query[pos:])
    return " ".join("".join(out).split())[:SHAPE_MAX]


_SHAPE_TOKEN = re.compile(r"\{(?:" + "|".join(SLOT_TYPES) + r")\}|[^\W_]+|[+*/%=<>]|(?<=\s)-(?=\s)")


def shape_tokens(shape: str) -> list[str]:
    """A shape's tokens for comparing shapes: slot markers (``{number}``), lower-cased words, and arithmetic
    operators (``+ * / % = < >`` and a spaced ``-``), in order; other punctuation is dropped."""
    return _SHAPE_TOKEN.findall(shape.lower())


def shape_similarity(a: str, b: str) -> float:
    """How alike two shapes are, from 0 (nothing in common) to 1 (the same tokens in the same order): difflib's
    ratio over :func:`shape_tokens`, 2 * matched / total tokens. Two empty shapes are 0: nothing to go on."""
    ta, tb = shape_tokens(a), shape_tokens(b)
    if not ta or not tb:
        return 0.0
    if ta == tb:
        return 1.0
    return SequenceMatcher(None, ta, tb, autojunk=False).ratio()
