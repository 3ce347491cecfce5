"""From a trajectory's code to a template: the minimal code that produced the SUBMIT, with the query's literals
as typed slots.

Two steps, both on Python's ``ast``:

- :func:`minimal_code` keeps the statements the SUBMIT depends on (a backward slice over the names they read and
  assign, across iterations); exploration prints, steps that failed (their output starts with ``[Error]``) or
  were not run (``[Turing]``), and values nobody used are left out.
- :func:`abstract_code` turns literals that come from the query into ``{{name:type}}`` slots (AWM's rule:
  what varies between tasks becomes a named parameter, what stays the same stays literal): numbers written in
  the query, and inside string literals its CURIEs, paths, quoted text and the identifiers it names that the
  task's code defines or uses (a regex or tree-sitter pattern keeps its structure and gets the name as a slot).
  Tool calls, variable names and every other literal stay as they are.

A slot remembers which of the query's literals of its type it took (``ordinal``: the second number, the first
CURIE whose local name is upper-case...), so :func:`fill_slots` fills the template from a sibling query the same
way. A template is kept only if filling it from its own query gives back the code it came from (same AST).
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from rlmlab.executors import query_slots
from rlmlab.memory import STOPWORDS, TemplateError, check_template, fill_template
from rlmlab.records import Record

if TYPE_CHECKING:
    from rlmlab.executors import Trajectory

__all__ = ["SlotBinding", "Abstraction", "query_literals", "code_idents", "query_shape", "minimal_code",
           "abstract_code", "abstract_trajectory", "fill_slots", "submitted_code", "same_number"]

# Names the REPL provides besides the tools: a slice that still reads one of these is complete.
_REPL_NAMES = frozenset(dir(builtins)) | {"SUBMIT", "context", "query", "llm_query", "llm_query_batched", "BlobRef"}
# The step grammar's number words (rlmlab.executors._step_grammar): "half" in a query is the number 2.
_NUMBER_WORDS = {
    "half": "2", "twice": "2", "double": "2", "triple": "3", "thrice": "3", "dozen": "12", "quarter": "4",
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "fifteen": "15", "twenty": "20", "thirty": "30",
    "fifty": "50", "hundred": "100", "thousand": "1000",
}
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?!\w)|\b(?:" + "|".join(_NUMBER_WORDS) + r")\b", re.I)
# Default slot names by type; numbers are named after the word that follows them in the query ("5 apples").
_ROLE = {"ident": "name", "curie": "resource", "property": "property", "class": "class", "path": "path",
         "quoted": "text", "word": "word", "iri": "iri"}
# Inside a string literal, the types looked for, longest values first within a type. A word of the query is a
# slot only as a whole single-quoted SPARQL literal (FILTER(CONTAINS(STR(?l), 'Collection'))): elsewhere in a
# string, words are the query language's own (SELECT, ?class, fn).
_STRING_TYPES = ("iri", "quoted", "property", "class", "path", "ident", "number", "word")


@dataclass(frozen=True)
class SlotBinding(Record):
    """One slot of a learnt template: its name and type, which of the query's literals of that type it takes
    (``ordinal``, 0-based; for numbers every occurrence counts, so "2 + 2" has two), and the source's value."""

    name: str
    type: str
    ordinal: int
    value: str


@dataclass
class Abstraction(Record):
    """What :func:`abstract_trajectory` made of a trajectory: the template (None, with ``reason``, when there is
    none), the minimal code it came from, its slots, the tools it calls and how many statements were left out."""

    template: str | None
    code: str = ""
    slots: list[SlotBinding] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    dropped: int = 0
    reason: str | None = None


def _number_text(raw: str) -> str:
    text = _NUMBER_WORDS.get(raw.lower(), raw).replace(",", "")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _numbers(query: str) -> list[tuple[str, int, int]]:
    """Every number of the query in order, repeats included: (normalised text, start, end)."""
    return [(_number_text(m.group(0)), m.start(), m.end()) for m in _NUMBER.finditer(query)]


def query_literals(query: str, context: str | None = None) -> dict[str, list[str]]:
    """The query's literals by slot type, in order: the step grammar's candidates (:func:`query_slots`), except
    that ``number`` lists every occurrence (for "2 + 2", two) and ``ident`` only the names of code in the
    context (:func:`code_idents`)."""
    out = query_slots(query, context)
    out["number"] = [n for n, _, _ in _numbers(query)]
    out["ident"] = code_idents(query, context)
    return out


# A context is source code when it defines a function or type (Rust, or Python); an ontology's Turtle or prose
# is not, and its words ("type prov:Plan", "of (some") must not pass for names.
_IS_CODE = re.compile(r"\bfn\s+\w+\s*[<(]|\b(?:struct|enum|trait)\s+[A-Z]\w*|^\s*(?:def|class)\s+\w+", re.M)
_DEFINES = r"\b(?:fn|struct|enum|trait|type|impl|mod|const|static|union|macro_rules!)\s+{w}\b|^\s*(?:def|class)\s+{w}\b"
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_USES = r"\b{w}\s*(?:\(|<|::|\{{)|\.{w}\b"


def code_idents(query: str, context: str | None) -> list[str]:
    """The query's identifiers that name code in the context, in query order: those the context defines
    (``fn wait``, ``struct File``, ``impl AsyncSeek``) or, if none, those it calls or uses as a path. [] when the
    context is not code; never a word of a CURIE (``rdfs:label`` in Turtle) or of the question's prose."""
    if not context or not _IS_CODE.search(context):
        return []
    words = query_slots(query, context)["ident"]
    if words == query_slots(query)["ident"]:  # the step grammar grounded none: every word is a candidate
        return []
    code = _COMMENT.sub(" ", context)  # doc comments are prose: "This type does not ..." defines no `does`
    defined = [w for w in words if re.search(_DEFINES.format(w=re.escape(w)), code, re.M)]
    return defined or [w for w in words if re.search(_USES.format(w=re.escape(w)), code)]


def query_shape(query: str, context: str | None = None) -> str:
    """The query with its literals replaced by their slot types ("What is {number} + {number}?"): CURIEs,
    paths, quoted text, numbers and the identifiers the context grounds."""
    lits = query_slots(query, context)
    spans: list[tuple[int, int, str]] = []
    for kind in ("iri", "quoted", "curie", "path"):
        for value in sorted(lits[kind], key=len, reverse=True):
            spans += [(m.start(), m.end(), kind) for m in re.finditer(re.escape(value), query)]
    for value in code_idents(query, context):
        spans += [(m.start(), m.end(), "ident") for m in re.finditer(rf"(?<![\w:/.]){re.escape(value)}(?!\w)", query)]
    spans += [(s, e, "number") for _, s, e in _numbers(query)]
    out, pos = [], 0
    for start, end, kind in sorted(spans, key=lambda s: (s[0], -s[1])):
        if start < pos:
            continue
        out += [query[pos:start], "{" + kind + "}"]
        pos = end
    return " ".join(("".join(out) + query[pos:]).split())


# -- the minimal code ------------------------------------------------------------------------------------


def _bound_inside(node: ast.AST) -> set[str]:
    """Names bound by comprehensions and lambdas inside ``node`` (local to them, not the REPL's)."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.comprehension):
            out |= {n.id for n in ast.walk(sub.target) if isinstance(n, ast.Name)}
        elif isinstance(sub, ast.Lambda):
            out |= {a.arg for a in sub.args.args + sub.args.kwonlyargs}
    return out


def _loads(node: ast.AST) -> set[str]:
    local = _bound_inside(node)
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - local


def _stores(node: ast.stmt) -> set[str]:
    local = _bound_inside(node)
    out = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} - local
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        out.add(node.name)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        out |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return out


def _mutates(node: ast.stmt) -> set[str]:
    """Names whose object the statement changes in place: ``x.append(...)``, ``x["k"] = ...``."""
    targets: list[ast.AST] = []
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute):
        targets.append(node.value.func.value)
    elif isinstance(node, (ast.Assign, ast.AugAssign)):
        targets += [t.value for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    if isinstance(t, (ast.Subscript, ast.Attribute))]
    return {t.id for t in targets if isinstance(t, ast.Name)}


def _calls(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name for n in ast.walk(node))


def _ran(output: str) -> bool:
    """Whether a step's code ran to its end: not a step that raised, timed out or was stopped by a Turing check."""
    head = output.lstrip()
    return not (head.startswith("[Error]") or head.startswith("[Turing]"))


def submitted_code(trajectory: "Trajectory") -> list[ast.stmt]:
    """Every statement of the steps that ran to their end, in order (a step that does not parse is skipped)."""
    out: list[ast.stmt] = []
    for it in trajectory.iterations:
        if not _ran(it.output or ""):
            continue
        try:
            out += ast.parse(it.code or "").body
        except SyntaxError:
            continue
    return out


def minimal_code(trajectory: "Trajectory", tool_names: set[str] | frozenset[str] = frozenset()
                 ) -> tuple[list[ast.stmt], int, str | None]:
    """The statements the last SUBMIT depends on, in order; how many statements were left out; and why there is
    no code (None when there is). Steps that failed are left out before the slice, so a failed call is never
    kept; a name the slice reads that nothing assigned (and that is no tool or REPL name) is a reason."""
    total = sum(1 for it in trajectory.iterations for _ in _parse_or_empty(it.code))
    stmts = submitted_code(trajectory)
    at = next((i for i in range(len(stmts) - 1, -1, -1) if _calls(stmts[i], "SUBMIT")), None)
    if at is None:
        return [], total, "no SUBMIT in a step that ran"
    keep, needed = [at], _loads(stmts[at])
    for i in range(at - 1, -1, -1):
        stmt = stmts[i]
        stored = _stores(stmt) & needed
        if stored or _mutates(stmt) & needed:
            keep.append(i)
            if not isinstance(stmt, ast.AugAssign):
                needed -= stored
            needed |= _loads(stmt)
    free = sorted(needed - _REPL_NAMES - set(tool_names))
    kept = [stmts[i] for i in sorted(keep)]
    if free:
        return kept, total - len(kept), f"the code reads {', '.join(free)}, which no step that ran assigned"
    return kept, total - len(kept), None


def _parse_or_empty(code: str) -> list[ast.stmt]:
    try:
        return ast.parse(code or "").body
    except SyntaxError:
        return []


# -- literals to slots -----------------------------------------------------------------------------------


def _role_word(query: str, end: int) -> str | None:
    m = re.match(r"\s*([A-Za-z]{3,12})\b", query[end:])
    if m is None or m.group(1).lower() in STOPWORDS:
        return None
    return m.group(1).lower()


def same_number(value: Any, text: str) -> bool:
    try:
        return Fraction(str(value)) == Fraction(text)
    except (ValueError, ZeroDivisionError):
        return False


def _find(text: str, value: str, kind: str) -> list[tuple[int, int]]:
    """Where ``value`` stands as a whole token in ``text`` (not inside a longer name, CURIE or path)."""
    if kind == "word":
        return [(m.start(), m.end()) for m in re.finditer(rf"(?<='){re.escape(value)}(?=')", text)]
    before = r"[\w:/.]" if kind in ("ident", "number") else r"\w"
    return [(m.start(), m.end()) for m in re.finditer(rf"(?<!{before}){re.escape(value)}(?![\w])", text)]


class _Slots:
    """Slots by (type, ordinal): the same literal of the query used twice in the code is one slot."""

    def __init__(self, query: str):
        self.query = query
        self.by_key: dict[tuple[str, int], SlotBinding] = {}
        self.numbers = _numbers(query)
        self.used_numbers: set[int] = set()

    def get(self, kind: str, ordinal: int, value: str) -> SlotBinding:
        key = (kind, ordinal)
        if key not in self.by_key:
            base = _ROLE.get(kind)
            if kind == "number":
                base = _role_word(self.query, self.numbers[ordinal][2]) or "abcdefghijklmnop"[min(
                    sum(1 for k in self.by_key if k[0] == "number"), 15)]
            name, n = base, 2
            taken = {b.name for b in self.by_key.values()}
            while name in taken:
                name, n = f"{base}{n}", n + 1
            self.by_key[key] = SlotBinding(name, kind, ordinal, value)
        return self.by_key[key]

    def number(self, value: Any) -> SlotBinding | None:
        """The slot of a number constant: the first unused occurrence of its value in the query, else the last
        one used (the code repeats it)."""
        matches = [i for i, (text, _, _) in enumerate(self.numbers) if same_number(value, text)]
        if not matches:
            return None
        fresh = [i for i in matches if i not in self.used_numbers]
        i = fresh[0] if fresh else max(i for i in matches if i in self.used_numbers)
        self.used_numbers.add(i)
        return self.get("number", i, self.numbers[i][0])


def _string_pieces(text: str, lits: dict[str, list[str]], slots: _Slots
                   ) -> list[tuple[str, SlotBinding | None]]:
    """``text`` cut into literal pieces and slots (the query's literals found in it as whole tokens)."""
    spans: list[tuple[int, int, SlotBinding]] = []
    taken: list[tuple[int, int]] = []
    for kind in _STRING_TYPES:
        values = lits.get(kind, [])
        order = sorted(range(len(values)), key=lambda i: -len(values[i]))
        for i in order:
            for start, end in _find(text, values[i], kind):
                if any(start < e and s < end for s, e in taken):
                    continue
                binding = (slots.number(values[i]) if kind == "number"
                           else slots.get(kind, i, values[i]))
                if binding is None:
                    continue
                spans.append((start, end, binding))
                taken.append((start, end))
    out: list[tuple[str, SlotBinding | None]] = []
    pos = 0
    for start, end, binding in sorted(spans, key=lambda s: s[0]):
        if start > pos:
            out.append((text[pos:start], None))
        out.append((binding.value, binding))
        pos = end
    if pos < len(text):
        out.append((text[pos:], None))
    return out


def _escape(text: str, quote: str, hex_quote: bool = False) -> str:
    out = []
    for ch in text:
        if ch == quote and hex_quote:
            out.append("\\x22")
        elif ch == "\\" or ch == quote:
            out.append("\\" + ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def _literal(pieces: list[tuple[str, SlotBinding | None]], style: str) -> str | None:
    """A Python string literal of the pieces with slots as ``{{name:type}}``, or None if ``style`` cannot write
    it: "raw" (r"..." as regexes are written; no quote, control character or trailing backslash, no quoted-text
    slot, whose value might hold a backslash), "double" or "single" (escaped), or "hex" (double quotes, an inner
    ``"`` written ``\\x22``: the step grammar tells a slot inside a string literal by the number of ``"`` before it
    on its line, which an escaped ``\\"`` would change)."""
    if style == "raw":
        literal = "".join(t for t, b in pieces if b is None)
        if ('"' in literal or any(ord(c) < 32 for c in literal) or "\\" not in literal
                or (pieces and pieces[-1][1] is None and re.search(r"(?<!\\)(\\\\)*\\$", pieces[-1][0]))
                or any(b is not None and b.type == "quoted" for _, b in pieces)):
            return None
        return 'r"' + "".join(t if b is None else f"{{{{{b.name}:{b.type}}}}}" for t, b in pieces) + '"'
    quote = "'" if style == "single" else '"'
    return quote + "".join(_escape(t, quote, style == "hex") if b is None else f"{{{{{b.name}:{b.type}}}}}"
                           for t, b in pieces) + quote


def abstract_code(stmts: list[ast.stmt], query: str, context: str | None = None, *,
                  string_slots: bool = True) -> Abstraction:
    """The template of ``stmts`` for ``query`` (see the module docstring), checked: :func:`check_template` passes
    and :func:`fill_slots` from ``query`` gives back ``stmts``. ``string_slots`` False slots only numbers
    outside string literals. Returns an Abstraction whose ``template`` is None, with the reason, when no
    rendering round-trips."""
    code = "\n".join(ast.unparse(s) for s in stmts)
    if not stmts:
        return Abstraction(None, code, reason="no statements")
    lits = query_literals(query, context)
    module = ast.parse(code)  # a copy to rewrite; ``code`` stays the source's
    parents = {child: node for node in ast.walk(module) for child in ast.iter_child_nodes(node)}
    slots = _Slots(query)
    numbers: dict[str, SlotBinding] = {}
    strings: dict[str, list[tuple[str, SlotBinding | None]]] = {}

    def in_fstring(node: ast.AST) -> bool:
        while node in parents:
            node = parents[node]
            if isinstance(node, ast.JoinedStr):
                return True
        return False

    constants = sorted((n for n in ast.walk(module) if isinstance(n, ast.Constant)),
                       key=lambda n: (n.lineno, n.col_offset))
    replace: dict[ast.Constant, str] = {}
    for node in constants:
        if in_fstring(node):
            continue
        parent = parents.get(node)
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            if isinstance(parent, ast.Subscript) and parent.slice is node:
                continue  # an index into a tool's result is the code's own structure, not the task's
            if isinstance(parent, ast.UnaryOp):
                continue
            binding = slots.number(node.value)
            if binding is not None:
                key = f"__slot_{len(replace)}__"
                numbers[key] = binding
                replace[node] = key
        elif isinstance(node.value, str) and string_slots:
            pieces = _string_pieces(node.value, lits, slots)
            if any(b is not None for _, b in pieces):
                key = f"__str_{len(replace)}__"
                strings[key] = pieces
                replace[node] = key

    class _Swap(ast.NodeTransformer):
        def visit_Constant(self, node: ast.Constant) -> ast.AST:
            return ast.Name(id=replace[node], ctx=ast.Load()) if node in replace else node

    lines = ast.unparse(_Swap().visit(module))
    for key, b in numbers.items():
        lines = lines.replace(key, f"{{{{{b.name}:{b.type}}}}}")
    bindings = sorted({id(b): b for b in [*numbers.values(), *(b for p in strings.values() for _, b in p if b)]}
                      .values(), key=lambda b: (b.type, b.ordinal))
    tools = sorted({n.func.id for n in ast.walk(module) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
                   - _REPL_NAMES)
    reasons = []
    for style in ("raw", "double", "single", "hex"):
        text = lines
        for key, pieces in strings.items():
            text = text.replace(key, _literal(pieces, style) or _literal(pieces, "double") or "")
        try:
            template = check_template(text)
        except TemplateError as exc:
            reasons.append(f"{style}: {exc}")
            continue
        filled = fill_slots(template, bindings, query, context)
        if filled is not None and _same_code(filled, code):
            return Abstraction(template, code, bindings, tools)
        reasons.append(f"{style}: filling it from its own query does not give back the code")
        if not strings:
            break
    if string_slots and strings:
        fallback = abstract_code(stmts, query, context, string_slots=False)
        if fallback.template is not None:
            return fallback
    return Abstraction(None, code, bindings, tools, reason="; ".join(reasons))


def _same_code(a: str, b: str) -> bool:
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
    except SyntaxError:
        return False


def abstract_trajectory(trajectory: "Trajectory", query: str | None = None, context: str | None = None, *,
                        tool_names: set[str] | frozenset[str] = frozenset()) -> Abstraction:
    """The template of a trajectory's minimal code (:func:`minimal_code` then :func:`abstract_code`); ``query``
    defaults to the trajectory's. ``tool_names`` are the names the REPL provides as tools."""
    stmts, dropped, why = minimal_code(trajectory, tool_names)
    if why is not None:
        return Abstraction(None, "\n".join(ast.unparse(s) for s in stmts), dropped=dropped, reason=why)
    out = abstract_code(stmts, trajectory.query if query is None else query, context)
    out.dropped = dropped
    return out


def fill_slots(template: str, slots: list[SlotBinding], query: str, context: str | None = None) -> str | None:
    """The template filled from ``query``: each slot takes the query's literal of its type at its ordinal. None
    when the query has too few literals of a type or a value does not fit its slot."""
    lits = query_literals(query, context)
    values: dict[str, str] = {}
    for b in slots:
        candidates = lits.get(b.type, [])
        if b.ordinal >= len(candidates):
            return None
        values[b.name] = candidates[b.ordinal]
    try:
        return fill_template(template, values)
    except TemplateError:
        return None
