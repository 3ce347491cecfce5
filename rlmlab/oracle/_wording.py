"""The wording of a question about Rust source: its tokens (quoted names and code, file and directory mentions,
words) and the general English cue words the question reader (:mod:`rlmlab.oracle._question`) reads.

The cue words are lists of ordinary English for what is asked ("signature", "how many", "which ... most"),
for counting rules ("excluding comments", "distinct") and for item kinds ("functions", "impl blocks"); none is
taken from any set of questions. Names are never read from here: they come from the source.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rlmlab.oracle._facts import last_segment

__all__ = ["Mention", "QuestionText", "tokenise", "is_noun", "unit_of", "scope_of", "rules_of", "cue", "IDENT",
           "RUST_KEYWORDS", "ELLIPSES", "SAMPLE", "TYPE_OF", "EACH", "GENERICS", "CONDITION", "NOUNS", "MODIFIERS",
           "CALLS", "YES_NO", "ARGMAX", "ARGMIN", "COUNT", "MODULE", "CRATE", "SIGNATURE", "RETURN", "PARAMS",
           "FIELDS", "VARIANTS", "IMPLEMENT", "LIST", "DEFINE", "LINES_MENTIONING", "kind_of"]

# -- the question as tokens ---------------------------------------------------------------------------------

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_PATH = rf"{IDENT}(?:::{IDENT})*"
# A quote opens where no word character precedes it and closes on the same mark followed by none ("either's").
_QUOTED = re.compile(r"(?<![\w\\])([\"'`])(.+?)\1(?!\w)")
_QUOTED_NAME = re.compile(rf"\s*(?:(fn|struct|enum|trait|type|union|mod|method|function)\s+)?&?\s*(?:dyn\s+)?"
                          rf"({_PATH})\s*(?:<[^`]*>)?\s*(?:\(\s*\))?\s*")
_FILE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w-]+\.rs)\b")
_DIR = re.compile(r"(?<![\w.-])((?:[\w.-]+/)+[\w-]*|/[\w-]+(?:/[\w-]+)*)(?!\w|\.\w)")
_NAMING = re.compile(r"\b(?:named|called)\s+(?:exactly\s+)?$", re.I)
_EXCLUDING = re.compile(r"\b(?:not(?:\s+counting|\s+including)?|excluding|except(?:\s+for)?|other\s+than|apart\s+from|"
                        r"besides|leaving\s+out|ignoring|without)\s+(?:the\s+)?(?:trait\s+|type\s+)?$", re.I)
ELLIPSES = ("...", "…", "*")  # a name glob in quoted code: `type ...Token = ...`
_ATTR = re.compile(r"#!?\[[^\]]*\]")
_CALL = re.compile(rf"(?<![\w])\.({IDENT})\(\s*\)")
_WORD = re.compile(rf"(?<![\w\-'])({_PATH})(<[^<>]*>)?(?![\w\-])")
RUST_KEYWORDS = frozenset("as async await break const continue crate dyn else enum extern false fn for if impl in "
                          "let loop match mod move mut pub ref return self Self static struct super trait true "
                          "type unsafe use where while union macro_rules".split())
_ITEM_WORDS = {"fn": "fn", "function": "fn", "method": "fn", "struct": "struct", "enum": "enum", "trait": "trait",
               "type": "type", "union": "struct"}


_NOT_ASKED = re.compile(r"\bnot\s+(?:just|only|merely|simply)\s+implement\w*", re.I)
_EXAMPLE_ASIDE = re.compile(r"\(\s*(?:so|e\.\s?g\.?|i\.\s?e\.?|like|for\s+example|for\s+instance|such\s+as)\b[^()]*\)",
                            re.I)
_FORMAT_BEFORE = re.compile(r"\b(?:write|written|give|given|answer|format\w*|output|print|reply|spell\w*)\b"
                            r"[^.?!`]{0,25}\b(?:as|like|in\s+the\s+form(?:\s+of)?)\s*$", re.I)
_MODIFIER_WORDS = frozenset(("unsafe", "pub", "async", "const", "extern", "mut", "dyn"))
_KEYWORDS_ONLY = re.compile(r"[a-z_]+!?(?:\s+[a-z_]+!?)*(?:\s*\{)?")


@dataclass
class Mention:
    text: str  # as written
    name: str  # its last path segment, generics dropped
    tier: int  # 1 quoted, 2 identifier-shaped (or inside quoted code), 3 a plain word
    pos: int
    hint: str | None = None  # the item word next to it ("the X struct", "method X"): "fn", "struct", ...
    role: str | None = None  # in quoted code: "trait" (impl X for ...) or "type" (for X)
    qualifier: str | None = None  # "Slab" of "Slab::get2_mut"
    excluded: bool = False  # right after "not counting", "except", "other than": the question leaves it out
    possessive: bool = False  # "slab's": followed by 's


@dataclass
class QuestionText:
    """The question taken apart: quoted spans, file and directory mentions, code snippets, name mentions, and
    ``plain``: the text outside quotes with each such span replaced by a placeholder word (lower case)."""

    question: str
    plain: str = ""
    mentions: list[Mention] = field(default_factory=list)
    snippets: list[str] = field(default_factory=list)  # quoted code, attributes and calls as written
    files: list[str] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)


def _identifier_shaped(word: str, generics: bool) -> bool:
    bare = word.strip("_")
    return (generics or "::" in word or "_" in bare or any(c.isdigit() for c in bare)
            or bool(re.search(r"[a-z][A-Z]", bare)) or bool(re.fullmatch(r"[A-Z]{2,}[a-z]\w*", bare)))


def _snippet_mentions(code: str, pos: int) -> list[Mention]:
    """Names inside quoted code (``impl ... SelectHandle for ...``): tier 2, with the role impl headers give."""
    out = []
    for m in re.finditer(rf"(?<![\w.#\[]){_PATH}", code):
        word = m.group(0)
        if word in RUST_KEYWORDS:
            continue
        before = code[:m.start()].split()
        role = None
        if before and before[-1] == "for":
            role = "type"
        elif "impl" in before and "for" in code[m.end():]:
            role = "trait"
        out.append(Mention(word, last_segment(word), 2, pos, role=role,
                           qualifier=word.rsplit("::", 1)[0] if "::" in word else None))
    return out


def tokenise(question: str) -> QuestionText:
    text = QuestionText(question)
    spans: list[tuple[int, int, str]] = []  # (start, end, placeholder)

    for m in _QUOTED.finditer(question):
        inner = m.group(2)
        named = _QUOTED_NAME.fullmatch(inner)
        if _FORMAT_BEFORE.search(question[max(0, m.start() - 40):m.start()]):
            # "Write each as `EnumName::Variant`": the answer's format, not a name of the source
            text.snippets.append(inner)
            spans.append((m.start(), m.end(), " qformat "))
        elif named and named.group(2) not in RUST_KEYWORDS:
            path = named.group(2)
            text.mentions.append(Mention(path, last_segment(path), 1, m.start(),
                                         hint=_ITEM_WORDS.get(named.group(1) or ""),
                                         qualifier=path.rsplit("::", 1)[0] if "::" in path else None))
            spans.append((m.start(), m.end(), f" qname{len(spans)} "))
        elif _KEYWORDS_ONLY.fullmatch(inner) and all(w in _MODIFIER_WORDS for w in re.findall(r"\w+", inner)):
            # `unsafe`, `pub`, `async`: a quoted modifier is the word itself ("the most `unsafe` blocks" asks what
            # "the most unsafe blocks" asks); quoted code with an item keyword (`unsafe impl`) stays a snippet
            text.snippets.append(inner)
            spans.append((m.start(), m.end(), f" {inner} "))
        else:
            text.snippets.append(inner)
            text.mentions += _snippet_mentions(inner, m.start())
            spans.append((m.start(), m.end(), f" qcode{len(spans)} "))
    for rx, kind in ((_ATTR, "attr"), (_CALL, "call"), (_FILE, "file"), (_DIR, "dir")):
        for m in rx.finditer(question):
            if any(a <= m.start() < b or a < m.end() <= b for a, b, _ in spans):
                continue
            if kind in ("attr", "call"):
                text.snippets.append(m.group(0))
            elif kind == "file":
                text.files.append(m.group(1))
            elif all(is_noun(part) for part in m.group(1).split("/") if part):
                continue  # "functions/methods" is an "or", not a directory
            else:
                text.dirs.append(m.group(1))
            spans.append((m.start(), m.end(), f" q{kind}{len(spans)} "))
    spans.sort()
    pieces, at = [], 0
    for start, end, holder in spans:
        pieces.append(question[at:start])
        pieces.append(holder)
        at = end
    pieces.append(question[at:])
    outside = "".join(pieces)
    # "defined (not just implemented)": a negated word is not what the question asks about
    outside = _NOT_ASKED.sub(" ", outside)
    text.plain = outside.lower()
    for m in _WORD.finditer(outside):
        word = m.group(1)
        if word in RUST_KEYWORDS or re.fullmatch(r"q(?:name|code|attr|call|file|dir)\d+|qformat", word):
            continue
        tier = 2 if _identifier_shaped(word, bool(m.group(2))) else 3
        if _NAMING.search(outside[:m.start()]):
            tier = 1  # "a struct named Elapsed": the question says it is a name, as quotes would
        text.mentions.append(Mention(word + (m.group(2) or ""), last_segment(word), tier, m.start(),
                                     hint=_hint(outside, m.start(), m.end()),
                                     qualifier=word.rsplit("::", 1)[0] if "::" in word else None,
                                     excluded=bool(_EXCLUDING.search(outside[:m.start()])),
                                     possessive=outside[m.end():m.end() + 2] in ("'s", "’s")))
    for mention in text.mentions:
        if mention.tier == 1 and _EXCLUDING.search(question[:mention.pos]):
            mention.excluded = True
    # a name in an aside that gives an example ("(so `io::Read` is just Read)", "(e.g. Foo)") is not a target
    asides = [(m.start(), m.end()) for src in (question, outside) for m in _EXAMPLE_ASIDE.finditer(src)]
    text.mentions = [mention for mention in text.mentions
                     if not any(a <= mention.pos < b for a, b in asides)]
    return text


def is_noun(word: str) -> bool:
    return any(rx.fullmatch(word) for _, rx in NOUNS)


def _hint(text: str, start: int, end: int) -> str | None:
    """The item word right before or after a name: "the function guard", "the Comparator struct"."""
    before = re.search(r"(\w+)\W*$", text[:start])
    after = re.match(r"\W*(\w+)", text[end:])
    for m in (before, after):
        if m and m.group(1).lower() in _ITEM_WORDS:
            return _ITEM_WORDS[m.group(1).lower()]
    return None


# -- cue words ------------------------------------------------------------------------------------------------

def cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


YES_NO = cue(r"(?:^|[.,:;?!(]\s*)(?:does|do|did|is|are|was|were|has|have|can|could|should|will|would)\b"
             r"(?!\s+(?:you|we|i)\b)|\byes\s*(?:or|/)\s*no\b|\btrue\s+or\s+false\b")
ARGMAX = cue(r"(?<!\bat )\b(?:most|largest|greatest|highest|biggest|maximum)\b")
ARGMIN = cue(r"(?<!\bat )(?<!\bnot )\b(?:fewest|least|smallest|lowest|minimum)\b")
COUNT = cue(r"\bhow\s+many\b|\bnumber\s+of\b|\btotal\b|(?:^|[.,:;?!]\s*)(?:please\s+)?count\b")
SIGNATURE = cue(r"\bsignatures?\b|\bprototypes?\b")
RETURN = cue(r"\breturn(?:s|ed)?\b|\boutput\s+type\b")
PARAMS = cue(r"\b(?:parameters?|params|arguments?|args)\b|\b(?:takes?|accepts?)\b")
FIELDS = cue(r"\b(?:fields?|members?)\b")
VARIANTS = cue(r"\bvariants?\b")
IMPLEMENT = cue(r"\bimplement(?:s|ed|ing|ations?|ors?)?\b|\bimpls?\b")
LIST = cue(r"\b(?:list|enumerate|which|what\s+are|(?:name|give|show|tell|find)\s+(?:me\s+)?(?:all|every|each|the|"
           r"some|any|a\s+few|a\s+couple)|all\s+the)\b")
DEFINE = cue(r"\b(?:defin\w*|declar\w*|exists?|is\s+there|are\s+there|contains?|has|have)\b")
MODULE = cue(r"\b(?:modules?|director(?:y|ies)|folders?|dir|subdirector(?:y|ies)|submodules?)\b")
CRATE = cue(r"\b(?:crates?|whole|entire|codebase|project|library|anywhere|every\s+source\s+file|all\s+source\s+"
             r"files)\b")

# Counting rules -> the words that state them (lists of general words, nothing from any question set).
_NOT = r"(?:ignor\w*|exclud\w*|without|skip\w*|leav\w*\s+out|not|no|except|outside|omit\w*|don'?t\s+count)"
_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("no_comments", cue(rf"\b{_NOT}\b[^.;?!]{{0,40}}\bcomments?\b|\bactual\s+code\b|\bcode\s+only\b")),
    ("no_tests", cue(rf"\b{_NOT}\b[^.;?!]{{0,30}}\btests?\b|\bnon-test\b|"
                     r"\btests?\b[^.;?!]{0,30}\b(?:don'?t|do\s+not|doesn'?t|does\s+not)\s+count\b")),
    ("only_pub", cue(r"\bpublic\b|\bonly\s+`?pub\b|\bpub`?\s+only\b|\bplain\s+`?pub\b(?!\()|"
                     r"\b`?pub`?\s+visibility\b")),
    # exactly `pub`, not pub(crate) or pub(super)
    ("plain_pub", cue(r"\bplain\s+`?pub\b(?!\()|\bjust\s+`?pub`?\s+visibility\b|"
                      rf"\b{_NOT}\b[^.;?!]{{0,30}}`?pub\s*\(\s*(?:crate|super)")),
    ("no_derives", cue(rf"\b{_NOT}\b[^.;?!]{{0,30}}\bderiv|\bderiv\w*\s+(?:do\s+not|don'?t|does\s+not|doesn'?t)\b|"
                       r"\bexplicit\b|\bhand[- ]?written\b|\bimpl\s+blocks?\s+only\b|\bonly\s+impl\s+blocks?\b")),
    ("with_derives", cue(r"\binclud\w*[^.;?!]{0,30}\bderiv|\bderiv\w*[^.;?!]{0,20}\b(?:included|too|as\s+well|"
                         r"also\s+count)\b")),
    ("distinct", cue(r"\b(?:distinct|different|unique)\b|\beach\b[^.;?!]{0,30}\bonce\b")),
    ("each_occurrence", cue(r"\beach\s+(?:call|occurrence|use|match)\b|\bsame\s+line\b|"
                            r"\bevery\s+(?:call|occurrence)\b")),
    ("exact_name", cue(r"\bexact(?:ly)?\s+(?:named|name)\b|\bnamed\s+exactly\b")),
    ("with_cfg", cue(r"\bcfg[- ]?gated\b|\bconditionally\s+compiled\b")),
    ("no_macro_bodies", cue(rf"\b{_NOT}\b(?:[^.;?!]|(?<=\w)!){{0,60}}\bmacro")),
    ("with_declarations", cue(r"\bwithout\s+a\s+body\b|\bbodiless\b|\bno\s+body\b|\bdeclarations?\s+without\b")),
    ("case_insensitive", cue(r"\bcase[- ]insensitive\w*\b|\bignor\w*\s+case\b")),
]

# Questions the reader knows it cannot check, so that it says so rather than answer another question:
# "what is the type of the field x" (a lookup), "how many impls does each file have" (a distribution),
# "generic parameters" (not a function's parameters), and lists narrowed by a condition it does not read
# ("functions that take &self", "structs deriving Clone").
TYPE_OF = cue(r"\b(?:what|which)(?:'s|\s+is)?\s+(?:the\s+)?type\s+of\b|\bwhat\s+type\s+(?:is|has)\b|"
              r"\btype\s+of\s+(?:the\s+)?(?:field|member|const|static|constant)\b")
EACH = cue(r"\b(?:each|per)\s+(?:source\s+)?(?:file|trait|type|module|struct|enum|crate)\b"
           r"(?![^.;?!]{0,25}\bonce\b)|\bbreak\s*down\b|\bbreakdown\b|\bby\s+file\b|\bfile\s+by\s+file\b")
GENERICS = cue(r"\b(?:generic|lifetime|type|const)\s+(?:parameters?|params|arguments?|args)\b")
CONDITION = cue(r"\b(?:deriv\w*|generic\w*|lifetimes?|panic\w*|await\w*|deprecated|documented|doc\s+comments?|"
                r"attributes?|uses?|using|invok\w*|calls?|calling|(?:marked|annotated)(?!\s+q(?:attr|code))|"
                r"(?:starts?|ends?|begins?)\s+with|prefix\w*|suffix\w*|whose\s+names?)\b")

# A sample, not every item ("some of", "a few", "an example of", "show some", "first 3"): a subset is then right.
SAMPLE = cue(r"\bsome\s+of\b|\ba\s+few\b|\b(?:some|any|one|a\s+few)\s+(?:will|would)\s+do\b|"
             r"\b(?:an?\s+)?examples?\s+of\b|\b(?:list|name|show|give|find)\s+(?:me\s+)?(?:some|an?\s+example|"
             r"a\s+couple)\b|\bfirst\s+\d+\b|\ba\s+sample\b|\bsample\s+of\b")

# Item nouns -> subject item, in the order they are tried at one position.
NOUNS: list[tuple[str, re.Pattern[str]]] = [
    ("unsafe {}", cue(r"\bunsafe\s+blocks?\b")),
    ("type", cue(r"\btype\s+alias(?:es)?\b|\baliases\b")),
    ("impl", cue(r"\bimpl\s+blocks?\b|\bimpls?\b|\bimplementations?\b")),
    ("fn", cue(r"\bfn\s+items?\b|\b(?:functions?|fns|methods?|fn)\b")),
    ("struct", cue(r"\bstructs?\b|\bstructures?\b")),
    ("enum", cue(r"\benums?\b|\benumerations?\b")),
    ("trait", cue(r"\btraits?\b")),
    ("macro", cue(r"\bmacros?\b")),
    ("field", cue(r"\b(?:fields?|members?)\b")),
    ("variant", cue(r"\bvariants?\b")),
    ("parameter", cue(r"\b(?:parameters?|params|arguments?|args)\b")),
    ("#[test] fn", cue(r"\b(?:unit\s+)?tests?\b")),
    ("comment", cue(r"\bcomments?\b")),
    ("unsafe {}", cue(r"\bunsafe\s+code\b")),
]
# "unwrap calls", "calls to expect": a method named in plain words (quoted calls are snippets).
CALLS = cue(rf"\b({IDENT})\s+(?:calls|call\s+sites|invocations)\b|\bcalls\s+(?:to|of)\s+({IDENT})\b")
MODIFIERS = {"unsafe": "unsafe", "pub": "pub", "public": "pub", "async": "async", "const": "const",
             "inherent": "inherent", "trait": "trait", "free": "free", "top-level": "free", "standalone": "free"}
# Words that ask for what the answer names; the head noun after one is the unit ("which files", "how many
# distinct traits", "the most frequently implemented trait"). Quantifiers ("all", "every") are not asking words:
# "across all its files" is a scope.
_ASK = cue(r"\b(?:which|what|list|name|give|enumerate|show|find|many|number\s+of)\b")
_UNITS: list[tuple[str, re.Pattern[str]]] = [
    ("files", cue(r"^(?:source\s+)?(?:files?|paths?)\b")),
    ("lines", cue(r"^(?:source\s+)?lines?\b")),
    ("types", cue(r"^(?:types?\b(?!\s+alias)|implement[eo]rs?\b)")),  # "the implementors of Buf"
    ("traits", cue(r"^traits?\b")),
]
_FILES_UNIT = cue(r"\bfile\s*names?\b|\bfile\s+paths?\b|\bpaths?\s+relative\b|\brelative\s+paths?\b")
_LINES_UNIT = cue(r"\bline\s+numbers?\b|\bline:\s*(?:text|code|content)\b|\bpath:line\b|\bas\s+line\b")
_HEAD_WINDOW = 7  # words between an asking word and its head noun ("what's the most frequently implemented trait")


def _head_noun(rest: str) -> str | None:
    """The unit the first noun of ``rest`` names, "" for an item noun (the answer names items), None for none.
    A unit in parentheses right after an item noun is an apposition and wins: "which flavor implementations
    (files in flavors/)"."""
    for n, word in enumerate(re.finditer(r"[\w'-]+", rest)):
        if n > _HEAD_WINDOW:
            return None
        tail = rest[word.start():]
        unit = next((u for u, rx in _UNITS if rx.match(tail)), None)
        if unit:
            return unit
        if any(rx.match(tail) for item, rx in NOUNS if item not in ("comment", "#[test] fn")):
            noun = next(rx.match(tail) for item, rx in NOUNS if rx.match(tail))
            after = re.match(r"\s*\(\s*([\w\s]+)", tail[noun.end():])
            if after:
                return next((u for u, rx in _UNITS if rx.match(after.group(1))), "")
            return ""
    return None


def unit_of(plain: str) -> str:
    """What the answer names: the head noun after the first asking word that has one, else items."""
    if _LINES_UNIT.search(plain):
        return "lines"
    if _FILES_UNIT.search(plain):
        return "files"
    for ask in _ASK.finditer(plain):
        head = _head_noun(plain[ask.end():])
        if head is not None:
            return head or "items"
    return "items"


def scope_of(text: QuestionText, files: Sequence[str | None] | None) -> str:
    dirs = [d for d in text.dirs if d.rstrip("/").rsplit("/", 1)[-1] not in ("", "src")]
    module, crate = bool(dirs or MODULE.search(text.plain)), bool(CRATE.search(text.plain))
    if files is not None:
        if len(files) <= 1:
            return "file"
        if module:
            return "module"
        if crate:
            return "crate"
        return "crate" if any(f in ("lib.rs", "main.rs") for f in files) else "module"
    if module:
        return "module"
    if crate:
        return "crate"
    return "file"


def rules_of(plain: str) -> tuple[str, ...]:
    return tuple(name for name, rx in _RULES if rx.search(plain))


# what a question asks, from its cue words (the question reader's first reading)
LINES_MENTIONING = re.compile(r"\blines?\b(?:\s+numbers?)?[^.?!]{0,60}\b(?:that|which|where)?\s*"
                               r"(?:mention\w*|contain\w*|referenc\w*|refer\w*\s+to|us(?:e|es|ing))\b")


def kind_of(plain: str, snippets: list[str]) -> tuple[str, str]:
    if TYPE_OF.search(plain) and not RETURN.search(plain):
        return "undecided", "it asks for the type of something other than a function's return"
    if GENERICS.search(plain):
        return "undecided", "it asks about generic parameters, which the reader does not check"
    if (COUNT.search(plain) or LIST.search(plain)) and EACH.search(plain):
        return "undecided", "it asks for a figure per file, trait or type (a distribution)"
    if YES_NO.search(plain) and not (LIST.search(plain) and not re.search(r"\byes\b", plain)):
        return "yes_no", ""
    if ARGMAX.search(plain) and ARGMIN.search(plain):
        return "undecided", "it asks for both a largest and a smallest"
    if ARGMAX.search(plain):
        return "argmax", ""
    if ARGMIN.search(plain):
        return "argmin", ""
    if COUNT.search(plain):
        return "count", ""
    if SIGNATURE.search(plain):
        return "signature", ""
    ret, params = bool(RETURN.search(plain)), bool(PARAMS.search(plain))
    if ret and params:
        return "undecided", "it asks for both the parameters and the return type"
    if ret:
        return "return_type", ""
    if params:
        return "parameters", ""
    if VARIANTS.search(plain):
        return "variants", ""
    if FIELDS.search(plain):
        return "fields", ""
    if IMPLEMENT.search(plain) or any(re.search(r"\bimpl\b", s) for s in snippets):
        return "implement", ""
    if LIST.search(plain) or LINES_MENTIONING.search(plain):  # "line numbers that mention X": the lines
        return "list", ""
    return "undecided", "it asks for nothing the reader knows (a signature, parameters, a return type, fields, " \
                        "variants, implementations, a count, a list, an extreme, or yes/no)"
