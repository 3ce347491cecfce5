"""Which tools, regexes and result keys a constrained step is offered: a closed space the oracles define.

A 135M model offered every registered tool picks distractors (``agenda``, ``blob``, ``mem_*``, ``sparql_query`` on
Rust), and asked for a regex it writes one that matches nothing, so exploration from an empty bank finds no
success to learn from. Under the step grammar with vocabularies on, a step is instead offered

- only the tools that can answer the query over its context (:func:`offered_tools`): decided from the query's
  text and the kind of the attached context (:func:`context_kind`), never from a task id or an answer;
- for ``ctx_find``'s pattern over Rust, the grep oracle's own intent regexes whose words the query uses, each
  also narrowed to an item named in the query, and "impl Trait for Type" for a query about implementing
  (:func:`grep_patterns`); these are the regexes the oracle counts with, so a count the step makes is one the
  oracle can confirm;
- for ``ast_query``'s tree-sitter query, outer patterns over the item kinds the query names, nested ones and fields
  over what the tree-sitter oracle reads (:func:`ast_vocabulary`), ``#eq?`` on the names the query gives an item,
  required when the question is about one named item (:func:`lookup_names`);
- as subscripts, the keys the tools' results have (:data:`RESULT_KEYS`) and the first item;
- nothing chosen by the question's words beyond that: a multi-step procedure for a question shape (the traits
  a type implements, the file with the most unsafe blocks) is an L2 template in memory (the hand pack
  ``data/packs/step_templates.jsonl`` and the learned bank), offered only to a run that retrieved it; what every
  run gets instead are the generic operations over a whole result the step grammar offers whenever the types fit
  (count, distinct count, filter on a capture's value, argmax by count, group by file: :mod:`._step_grammar`).

A context of another kind (the user's own text) keeps every tool and free strings.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from rlmlab.tools import file_headers
from rlmlab.oracle import INTENT_PATTERNS, is_count_query, pattern_for_intent, read_question

__all__ = ["context_kind", "offered_tools", "grep_patterns", "grep_rules", "text_patterns", "text_rules",
           "text_search_terms", "ast_vocabulary", "item_names",
           "RESULT_KEYS", "CONTEXT_KINDS", "AST_INNER", "AST_FIELDS", "fits_query", "lookup_names",
           "answer_form", "impl_pair", "asks_for_items"]

CONTEXT_KINDS = ("none", "rust", "ontology", "text")
# Keys of ctx_find / ast_query / sparql_query results and of their matches (see rlmlab.tools), and the capture
# names of the tree-sitter vocabulary (executors._vocab.CAPTURES): what a step may subscript a result with.
RESULT_KEYS = ("total", "matches", "line", "text", "captures", "rows", "name", "type", "field", "param", "item", "x")
# Tools that answer a question about Rust source: grep-like counting and listing, tree-sitter structure.
_RUST_TOOLS = ("ctx_find", "ast_query")
_RUST_LINE = re.compile(r"(?m)^[ \t]*(pub(\([^)]*\))?[ \t]+)?((async|unsafe|const|extern(?:[ \t]+\"\w+\")?)[ \t]+)*(fn|struct|enum|impl|use|mod|trait|const|static|macro_rules!)\b")
_LIST = re.compile(r"^\s*(list|find|show)\s+(all|every)\b", re.I)
_IMPLEMENT = re.compile(r"\bimplement(s|ed|ing)?\b", re.I)
_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_DEFINES = r"\b(fn|struct|enum|trait|type|union)\s+"  # the line that defines a named item (before its name)


def context_kind(text: str | None, ontology: Any = None) -> str:
    """"ontology" when an ontology is attached, "none" for an empty context, "rust" when the text holds Rust items
    (at least 2 item lines), else "text"."""
    if ontology is not None:
        return "ontology"
    if not text:
        return "none"
    return "rust" if len(_RUST_LINE.findall(text[:200_000])) >= 2 else "text"


def _asks_choice(query: str) -> bool:
    from rlmlab.executors._step_grammar import answer_choices

    return len(answer_choices(query)) == 2


def _counts(query: str) -> bool:
    """Whether the question asks how many: the grep oracle's count reading, or the question reader's
    (rlmlab.oracle.read_question: "What is the number of unsafe impl blocks?")."""
    return is_count_query(query) or read_question(query).kind == "count"


def asks_for_items(query: str, text: str | None = None) -> bool:
    """Whether the question asks for items by name (the question reader's list, implementors or traits_of: "which
    types implement Display", "name every function"): its answer is never a count of them."""
    intent = _intent_over(query, text) if text else read_question(query)
    return intent.kind in ("list", "implementors", "traits_of") and not _counts(query)


def answer_form(query: str) -> str | None:
    """The form a question's answer takes over Rust, as the step grammar closes it: "choice" when the query offers
    two answer words ("Answer yes or no."), "count" when it asks how many, else None (a value, a name, a list)."""
    if _asks_choice(query):
        return "choice"
    return "count" if _counts(query) else None


def offered_tools(specs: Iterable[Any], query: str, kind: str) -> list[Any]:
    """The specs a step over a context of ``kind`` may call for ``query`` (order kept).

    Rust: a count (but of distinct names), a list ("List all ...") or a yes/no question is answered by grep
    (``ctx_find``); any other
    question (a signature, a type, the variants of an enum) by ``ast_query`` or grep. An ontology: ``sparql_query``.
    No context (arithmetic): no tool, the answer is computed from the query's numbers. Other text: the search
    (and memory's tools).
    """
    specs = list(specs)
    if kind == "text":  # a document's lines: search them (and the memory tools, where given); every answer is read
        # off a search's result (its total, its matches, a generic operation over them, a sub-call on its lines)
        return [s for s in specs if s.name in _TEXT_TOOLS or s.name.startswith("mem_")]
    if kind == "none":
        return []
    if kind == "ontology":
        return [s for s in specs if s.name == "sparql_query"]
    # a count of distinct names (the question reader's "distinct" rule) counts captures: ast_query too
    distinct = "distinct" in read_question(query).rules
    grep_only = (_counts(query) and not distinct) or bool(_LIST.search(query)) or _asks_choice(query)
    names = ("ctx_find",) if grep_only else _RUST_TOOLS
    return [s for s in specs if s.name in names]


# -- plain text documents: line searches built from the question's own words ---------------------------------

# Words that say how to ask, not what to look for (English function words and the vocabulary of asking about a
# document); the rest of the question's words, where the document has them, are the search terms.
_ASKING = frozenset("""a an the of in on at to for from by with without and or not no nor is are was were be been
being do does did has have had how many much what which who whom whose when where why there this that these those
it its their them they i me my we our you your he she his her please tell give show list find count number total
lines line entries entry records record rows row times occurrences mention mentions mentioning contain contains
containing include includes including appear appears appearing file document log text any all each every only
just than then so if as into out up down about between across per over under answer reply respond with as
integer value result one ones""".split())
_QUERY_WORD = re.compile(r"[A-Za-z0-9][\w.-]*[A-Za-z0-9]|[A-Za-z0-9]")
_QUOTED_TERM = re.compile(r"""["'`‘“]([^"'`’”\n]{1,60})["'`’”]""")
_TEXT_PATTERNS_MAX = 12
_ANY_CASE = re.compile(r"case[- ]?insensitiv|ignor\w*\s+(?:the\s+)?case|regardless\s+of\s+case|any\s+case|upper\s+or\s+lower", re.I)


def text_search_terms(query: str, text: str) -> list[tuple[str, bool]]:
    """The question's search terms that occur in ``text``, in the question's order: (term, exact). A quoted term
    is matched exactly (case and all); another word of the question that is not a word of asking matches, ignoring
    case, where a word of the document starts with it ("disk" finds "disk" and "disks")."""
    terms: list[tuple[str, bool]] = []
    quoted_spans = []
    any_case = _ANY_CASE.search(query) is not None  # "case-insensitive": a quoted term in any case too
    for m in _QUOTED_TERM.finditer(query):
        term = m.group(1).strip()
        if term and (term.casefold() in text.casefold() if any_case else term in text):
            terms.append((term, not any_case))
        quoted_spans.append(m.span())
    lowered = text.casefold()
    for m in _QUERY_WORD.finditer(query):
        if any(a <= m.start() < b for a, b in quoted_spans):
            continue
        word = m.group(0)
        # a hyphenated or dotted word ("ERROR-level", "web-02", "service.log"): itself where the document has it,
        # else its parts
        for part in ([word] if _in_text(word, lowered) else re.split(r"[-.]", word)):
            if part.casefold() in _ASKING or len(part) < 2 and not part.isdigit():
                continue
            if _in_text(part, lowered) and (part, False) not in terms:
                terms.append((part, False))
    return list(dict.fromkeys(terms))


def _in_text(word: str, lowered: str) -> bool:
    """Whether a word of the document starts with ``word`` (``lowered``: the document, casefolded)."""
    return bool(word) and re.search(rf"(?<![\w]){re.escape(word.casefold())}", lowered) is not None


def _term_regex(term: str, exact: bool) -> str:
    body = re.escape(term)
    if exact:
        return f"(?=.*{body})"
    return f"(?=.*(?i:{body}))" if " " in term or not term[:1].isalnum() else f"(?=.*(?i:(?<![\\w]){body}))"


def text_patterns(query: str, text: str) -> list[str]:
    """``ctx_find`` regexes over a plain text document for ``query``: lines holding every search term (in any
    order), then every pair, then each term alone (:func:`text_search_terms`), at most 12. Built from the
    question's words and the document, never from a question's shape. Empty when no term occurs."""
    # in a fixed order (not the question's): the same terms asked in other words give the same searches
    terms = sorted(text_search_terms(query, text)[:6], key=lambda t: (t[0].casefold(), t[1]))
    if not terms:
        return []
    groups: list[tuple[tuple[str, bool], ...]] = [tuple(terms)] if len(terms) > 1 else []
    groups += [(a, b) for i, a in enumerate(terms) for b in terms[i + 1:]] if len(terms) > 2 else []
    groups += [(t,) for t in terms]
    return ["(?m)^" + "".join(_term_regex(t, e) for t, e in g) + ".*$" for g in groups][:_TEXT_PATTERNS_MAX]


def text_rules(query: str, text: str) -> dict[str, str] | None:
    """GBNF rules of ``ctx_find``'s pattern over a text document (:func:`text_patterns`); None when the question
    names nothing the document holds (the pattern then stays a free string)."""
    pats = text_patterns(query, text)
    if not pats:
        return None
    from rlmlab.executors._gbnf import gbnf_lit

    return {"grep-pat": "(" + " | ".join(gbnf_lit(_py_raw(p)) for p in pats) + ")"}


# ctx_stats, ctx_peek and ctx_slice return none of the keys a step reads (RESULT_KEYS): a step that starts with
# ctx_stats(context) and reads its "total" raises a KeyError, so over a document only the search is offered
_TEXT_TOOLS = ("ctx_find",)


def _line_regex(regex: str) -> str:
    """An oracle regex (matched per line, like grep -P) as one ``ctx_find`` runs over the whole text: multi-line
    anchors, and blanks that cannot run on into the next line (``\\s`` would)."""
    return "(?m)" + regex.replace(r"\s", r"[ \t]")


def _names_item(ident: str, query: str) -> bool:
    """Whether a query identifier can be an item's name: CamelCase or snake_case, and not the query's first word
    (a capitalised "Count" or "How" is English; the grammar's ident slots take every word the code uses)."""
    first = query.split(maxsplit=1)[0] if query.split() else ""
    return bool(_IDENT.fullmatch(ident)) and ident != first and (ident[0].isupper() or "_" in ident.strip("_"))


def _impl_line(trait: str, type_: str) -> str:
    """The regex of the line that opens ``impl trait for type`` as the tree-sitter oracle reads one: the trait and
    the type by their last path segment (generics, a path, ``&'a mut`` or ``dyn`` around them allowed), not a
    negative ``impl !Trait``, and not a bound that names the trait (``impl<T: Deref> Foo for Shared``)."""
    t, y = re.escape(trait), re.escape(type_)
    return _line_regex(rf"^\s*(unsafe\s+)?impl(<[^{{]*>)?\s+(\w+::)*{t}\b(<[^{{]*>)?\s+for\s+"
                       rf"(&\s*('\w+\s+)?(mut\s+)?|dyn\s+)?(\w+::)*{y}\b")


_PASSIVE = re.compile(r"\bimplemented\s+(for|by)\b", re.I)


def impl_pair(query: str, names: Sequence[str]) -> tuple[str, str] | None:
    """(trait, type) of a question whether a type implements a trait, from the order of the words: the name
    before "implement(s)" is the type and the one after it the trait ("Does Shared implement Deref?"); after
    "implemented for/by" it is the other way round ("Is Deref implemented for Shared?"). None unless the query
    says "implement" with a name on each side."""
    m = _IMPLEMENT.search(query)
    if m is None:
        return None
    before = [n for n in names if re.search(rf"\b{re.escape(n)}\b", query[:m.start()])]
    after = [n for n in names if re.search(rf"\b{re.escape(n)}\b", query[m.end():])]
    if not before or not after or before[-1] == after[0]:
        return None
    passive = _PASSIVE.match(query, m.start()) is not None
    return (before[-1], after[0]) if passive else (after[0], before[-1])


@functools.lru_cache(maxsize=32)
def _intent_over(query: str, text: str) -> Any:
    """The question reader's intent of ``query`` over the context's files (:func:`_sources`), once per step's
    question and context: the count patterns, the impl patterns and :func:`asks_for_items` all read it."""
    return read_question(query, _sources(text))


@functools.lru_cache(maxsize=32)
def _read_count_pattern(query: str, text: str) -> str | None:
    """The per-line regex the oracle's question reader gives for what ``query`` counts or lists over ``text`` (the
    oracle judges with the same one); None when the reader reads no such question."""
    intent = _intent_over(query, text)
    if intent.kind not in ("count", "list", "argmax", "argmin") or intent.subject is None:
        return None
    return pattern_for_intent(intent, query)


def _sources(text: str) -> str | dict[str, str]:
    """The context as the question reader takes it: its files by path when it has ``// file:`` headers (a module
    or a crate), else the one text."""
    lines, paths = file_headers(text)
    if not lines:
        return text
    rows = text.split("\n")
    ends = [*lines[1:], len(rows) + 1]
    return {p: "\n".join(rows[a:b - 1]) for p, a, b in zip(paths, lines, ends)}


@functools.lru_cache(maxsize=32)
def _read_impl_patterns(query: str, text: str) -> list[str] | None:
    """The impl lines a question about implementations reads, as the question reader reads it (rlmlab.oracle
    .read_question over ``text``): every impl line, and those of the named trait (for the types that implement
    it) or of the named type (for the traits it implements); None for any other question."""
    intent = _intent_over(query, text)
    if intent.kind not in ("implementors", "traits_of"):
        return None
    out = [_line_regex(r"^\s*(unsafe\s+)?impl\b")]
    for n in intent.targets:
        t = re.escape(n)
        out.append(_line_regex(rf"^\s*(unsafe\s+)?impl(<[^{{]*>)?\s+(\w+::)*{t}\b(<[^{{]*>)?\s+for\b"
                               if intent.kind == "implementors" else
                               rf"^\s*(unsafe\s+)?impl\b.*\bfor\s+(&\s*('\w+\s+)?(mut\s+)?|dyn\s+)?(\w+::)*{t}\b"))
    return out


def grep_patterns(query: str, idents: Sequence[str] = (), text: str | None = None) -> list[str]:
    """The regexes a ``ctx_find`` over Rust may take for ``query``: the grep oracle's intent regex of the first item
    kind the query's words name (the one the oracle counts by), also for an item whose name contains one of ``idents`` (the query's
    identifiers defined in the context: its exact name); with "implement" and two identifiers, ``impl ... A for B`` both ways.
    A question that names no item kind but names an item (not a count) is offered that item's definition line and
    the lines that mention it. Empty when the query names neither."""
    out: list[str] = []
    # the grep oracle counts by the first intent the query's words name (pub functions before functions): the
    # others would only offer a wrong count ("How many public functions" answered by every fn line)
    impl = _read_impl_patterns(query, text) if text else None
    if impl:  # which types implement T, which traits T implements: the impl lines, whatever the words
        return impl
    read = _read_count_pattern(query, text) if text else None  # the shared question reader, given the source
    intents = [read] if read else [regex for rx, regex in INTENT_PATTERNS if rx.search(query)][:1]
    names = [i for i in dict.fromkeys(idents) if _names_item(i, query)][:6]
    pair = impl_pair(query, names) if _asks_choice(query) else None
    if pair is not None:  # "Does the type Shared implement the trait Deref? Answer yes or no.": its impl line only
        return [_impl_line(*pair)]
    for regex in intents:
        out.append(_line_regex(regex))
        stem = re.sub(r"(\\s\+\\w\+|\\s\*\\w\+|\\b)$", "", regex)
        if stem != regex:  # an item kind with a name after it (struct X, unsafe fn X), not a call (.unwrap())
            out += [_line_regex(rf"{stem}\s+{re.escape(n)}\b") for n in names]
    if not out and names and not _counts(query):  # "Which arguments does spawn take?": the named item
        for n in names:
            out += [_line_regex(rf"{_DEFINES}{re.escape(n)}\b"),
                    _line_regex(rf"\b{re.escape(n)}\b")]
    if _IMPLEMENT.search(query) and len(names) >= 2:
        out += [_impl_line(a, b) for a in names for b in names if b != a]
        out.append(_line_regex(r"^\s*(unsafe\s+)?impl\b"))
    return list(dict.fromkeys(out))


# The node kinds and fields the tree-sitter oracle's extractors read (rlmlab.oracle: functions, structs, enums,
# impls, traits; their names, parameters, return types, fields and variants): the space an ast_query over Rust
# explores. Outer patterns are items; an item kind is offered when the query's words name it.
_ITEM_WORDS = (
    (re.compile(r"\b(fn|fns|functions?|methods?|signatures?|returns?|arguments?|args|param(eter)?s?|take)\b", re.I),
     ("function_item", "function_signature_item")),
    (re.compile(r"\b(structs?|members|fields?)\b", re.I), ("struct_item",)),
    (re.compile(r"\b(enums?|variants?)\b", re.I), ("enum_item",)),
    (re.compile(r"\b(impl|implement(s|ed|ing|ors?)?|traits?)\b", re.I), ("impl_item", "trait_item")),
)
AST_INNER = ("identifier", "type_identifier", "field_identifier", "parameters", "parameter", "self_parameter",
             "field_declaration_list", "field_declaration", "enum_variant_list", "enum_variant", "declaration_list",
             "generic_type", "scoped_type_identifier", "primitive_type", "reference_type", "visibility_modifier",
             "function_modifiers")
AST_FIELDS = ("name", "type", "trait", "return_type", "parameters", "pattern", "body")


def ast_vocabulary(query: str) -> dict[str, tuple[str, ...]]:
    """The narrowing of ``ast_query``'s vocabulary for ``query`` (keyword arguments of ``ts_query_rules``): outer
    patterns over the item kinds the query names (every item kind when it names none), nested ones and fields
    over what the tree-sitter oracle reads."""
    top = tuple(dict.fromkeys(k for rx, kinds in _ITEM_WORDS if rx.search(query) for k in kinds))
    return {"top": top or tuple(k for _, kinds in _ITEM_WORDS for k in kinds), "inner": AST_INNER,
            "fields": AST_FIELDS, "asks": asked_fields(query)}


_RETURN_WORDS = re.compile(r"\breturn(s|ed)?\b", re.I)
_PARAM_WORDS = re.compile(r"\b(arguments?|args|param(eter)?s?|takes?)\b", re.I)
_EVERY = re.compile(r"\b(variants|fields|members|parameters|params|arguments|args|methods)\b", re.I)


def asks_every(query: str) -> bool:
    """Whether a lookup asks for every one of a kind of part (the variants, fields, parameters or methods of X):
    its answer joins every match, not the first one."""
    return bool(_EVERY.search(query))


def asked_fields(query: str) -> tuple[str, ...]:
    """A function's fields the query's words ask for: ``return_type`` ("What does X return?"), ``parameters``
    ("Which arguments does X take?"), both or none (a signature, any other question: no narrowing)."""
    ret, par = bool(_RETURN_WORDS.search(query)), bool(_PARAM_WORDS.search(query))
    return () if ret == par else ("return_type",) if ret else ("parameters",)


def item_names(query: str, idents: Sequence[str]) -> list[str]:
    """The query identifiers that can name an item (see :func:`grep_patterns`), else all of ``idents``."""
    return [i for i in idents if _names_item(i, query)] or list(idents)


# what the question reader (rlmlab.oracle.read_question) reads as a question over many items, not one named item
_OVER_MANY = frozenset(("count", "list", "implementors", "traits_of", "argmax", "argmin"))


def lookup_names(query: str, idents: Sequence[str], text: str | None = None) -> list[str]:
    """The items a question about one named item asks about ("Which type does get_mut return?", the fields of
    struct X): the query identifiers that can name an item, or that ``text`` (the context) defines as a fn, struct,
    enum, union, trait or type ("What parameters does chunk take?"), when the question is not a count, a list, a
    yes/no or about implementing (an impl block has no name of its own). Empty otherwise. An ``ast_query`` for
    such a question reads that item only (``named`` of :func:`ts_query_rules`)."""
    if _counts(query) or _LIST.search(query) or _asks_choice(query) or _IMPLEMENT.search(query):
        return []
    if read_question(query).kind in _OVER_MANY:  # the question reader: an argmax or a list is about many items
        return []
    first = query.split(maxsplit=1)[0] if query.split() else ""

    def defined(i: str) -> bool:
        return bool(text) and i != first and _IDENT.fullmatch(i) is not None and \
            re.search(rf"{_DEFINES}{re.escape(i)}\b", text[:400_000]) is not None

    return [i for i in dict.fromkeys(idents) if _names_item(i, query) or defined(i)]


def _py_raw(regex: str) -> str:
    """``regex`` as a Python raw string literal (the step's text): r"...", each double quote (escaped in the regex
    or not) written as the regex escape ``\\x22``, since a raw literal cannot hold ``\\"`` after a backslash."""
    return 'r"' + regex.replace('\\"', '"').replace('"', '\\x22') + '"'


def grep_rules(query: str, idents: Sequence[str] = (), text: str | None = None) -> dict[str, str] | None:
    """GBNF rules (the first the argument's) of ``ctx_find``'s pattern as one of :func:`grep_patterns`; None when
    the query names no item kind (the pattern then stays a free string)."""
    pats = grep_patterns(query, idents, text)
    if not pats:
        return None
    from rlmlab.executors._gbnf import gbnf_lit

    return {"grep-pat": "(" + " | ".join(gbnf_lit(_py_raw(p)) for p in pats) + ")"}



# -- retrieved templates that do not fit the query ---------------------------------------------------------------

_SLOT_TEXT = re.compile(r"\{\{[^{}\n]*\}\}")
_NODE_KIND = re.compile(r"\(\s*([a-z_]+)")
_ITEM_KINDS = frozenset(k for _, kinds in _ITEM_WORDS for k in kinds)
_FUNCTION_KINDS = frozenset(("function_item", "function_signature_item"))
_FUNCTION_FIELDS = ("parameters", "return_type")
_INTENT_LINES = frozenset(_line_regex(regex) for _, regex in INTENT_PATTERNS)


def fits_query(template: str, query: str, idents: Sequence[str] = ()) -> bool:
    """Whether a retrieved template (``{{slot:type}}`` slots) fits ``query`` over Rust as the closed vocabularies
    see it, so that a first step that must copy it is not forced onto another question's procedure:

    - a ``ctx_find`` regex of the grep oracle's intents is one :func:`grep_patterns` offers for the query (an
      unwrap count does not answer an unsafe-block count, nor a question that names no such item);
    - its ``ast_query`` queries name an item kind the query's words name (:func:`ast_vocabulary`), when both name
      one (an impl_item query does not answer a signature), and read a function's ``parameters`` or
      ``return_type`` only when the query asks for it (:func:`asked_fields`);
    - it reads a result's ``total`` (a count) only for a count or yes/no question, and a count question's template
      reads a ``total`` or takes a ``len``;
    - it answers with a choice of two words (``"yes" if hits["total"] else "no"``) exactly when the query offers
      them: the joined implementors of a trait do not answer "Does Formatter implement Error? Answer yes or no.",
      nor a yes/no template a question asking which types.

    Decided from the template's code and the query's words alone. A template that does not parse fits nothing."""
    try:
        tree = ast.parse(_SLOT_TEXT.sub("slot_value", template))
    except SyntaxError:
        return False
    pats = set(grep_patterns(query, idents))
    named = set(ast_vocabulary(query)["top"]) if any(rx.search(query) for rx, _ in _ITEM_WORDS) else None
    asks = asked_fields(query)
    counts = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            counts |= node.func.id == "len"
            arg = node.args[1] if len(node.args) >= 2 else None
            text = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None
            if text is None:
                continue
            if node.func.id == "ctx_find" and text in _INTENT_LINES and text not in pats:
                return False
            if node.func.id == "ast_query" and named is not None:
                kinds = {k for k in _NODE_KIND.findall(text) if k in _ITEM_KINDS}
                if kinds and not kinds & named:
                    return False
            if node.func.id == "ast_query":
                read = {f for f in _FUNCTION_FIELDS if f"{f}:" in text}
                if read and named is not None and not named & _FUNCTION_KINDS:
                    return False  # a function's return type does not answer "Name all variants of enum X"
                if asks and read - set(asks):
                    return False  # a return type does not answer "which arguments does X take?"
        if isinstance(node, ast.Constant) and node.value == "total":
            counts = True
            if not (_counts(query) or _asks_choice(query)):
                return False
    chooses = any(isinstance(n, ast.IfExp) and isinstance(n.body, ast.Constant) and isinstance(n.body.value, str)
                  and isinstance(n.orelse, ast.Constant) and isinstance(n.orelse.value, str) for n in ast.walk(tree))
    if chooses != _asks_choice(query):
        return False
    return counts or not _counts(query)
