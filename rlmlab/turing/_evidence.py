"""Where a submitted answer comes from: the data flow of an RLM step's code, read with :mod:`ast`.

``final_without_evidence`` asks one question of a ``SUBMIT(...)``/``FINAL(...)``: is its value made only of
constants the code typed itself? :class:`Flow` answers it by following names back through every assignment of
the steps given (this one and the earlier ones: the REPL keeps their variables). A value is *grounded* when it
depends on anything the code did not type: a tool call (any call that is not a pure builtin), a name no shown code
assigns (the ``context`` handle, the ``query``, an input, a builtin, code not shown), an import, a function or
lambda. Otherwise it is constant-only and :class:`Source` holds the numbers and strings it is made of.

:func:`unsupported_submission` then judges a constant-only value: the question's own numbers support a value made
of them (``125 + 389`` for "What is 125 + 389?"), and so does the printed output of an earlier step that read a
tool, the context or a result. Anything else (``1 + 1``, ``"42"``, ``len("abc")`` for a question about a file) is
unsupported, and the reason names the call and the constants nothing supports.

Every doubt resolves to grounded (the hook then stays silent): a name bound anywhere to something unknown, a
container passed to an unknown function (which may fill it), code that does not parse, a flow too large to follow
(:data:`FLOW_BUDGET` nodes). Order is ignored: a name's value is all its bindings at once, and a binding (or a
SUBMIT) under a loop or a condition also depends on the iterable or the test that decides it.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from rlmlab.turing._turn import Step, Turn

__all__ = ["Source", "Submission", "Flow", "parse_step", "submissions", "step_code", "unsupported_submission"]

SUBMIT_CALLS = frozenset({"SUBMIT", "FINAL", "FINAL_VAR"})
# Builtins whose result is a function of their arguments alone (print only shows them): a value computed by them
# from constants is still constant-only. Anything else called may read the world.
_PURE = frozenset("abs all any ascii bin bool bytes chr complex dict divmod enumerate float format frozenset hex "
                  "int len list max min oct ord pow print range repr reversed round set slice sorted str sum "
                  "tuple zip".split())
FLOW_BUDGET = 20_000  # expression nodes one question may visit; past it the value counts as grounded
_LITERALS = (ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Starred)


@dataclass(frozen=True)
class Source:
    """What a value is made of. ``grounded``: it depends on something the code did not type (then the other
    fields are empty). Else ``numbers`` (numeric constants, as text, sign dropped) and ``strings`` (string
    constants) are its leaves, and ``computed`` says whether an operator or call combined them (``1 + 1``,
    ``len("abc")``) rather than writing them down (``7``, ``["a", "b"]``)."""

    grounded: bool = False
    numbers: tuple[str, ...] = ()
    strings: tuple[str, ...] = ()
    computed: bool = False


_GROUNDED = Source(grounded=True)
_NOTHING = Source()


def _join(parts: list[Source], computed: bool = False) -> Source:
    if any(p.grounded for p in parts):
        return _GROUNDED
    return Source(False, tuple(n for p in parts for n in p.numbers), tuple(s for p in parts for s in p.strings),
                  computed or any(p.computed for p in parts))


def number_text(value: object) -> str:
    """A number (a constant, or digits from a text) as one key: ``2.0`` and ``"2"`` -> ``2``, ``-5`` -> ``5``,
    ``"1,250"`` -> ``1250``; what is no decimal number (a complex) as ``str``."""
    text = value.replace(",", "") if isinstance(value, str) else repr(value)
    try:
        return format(abs(Decimal(text)).normalize(), "f")
    except (InvalidOperation, ValueError):
        return str(value)


@dataclass(frozen=True)
class Submission:
    """One SUBMIT/FINAL call: its text (``ast.unparse``, for the correction) and where its value comes from."""

    text: str
    source: Source


def parse_step(code: str, *, lenient: bool = False) -> ast.Module | None:
    """``code`` parsed, or None if it is not Python. ``lenient`` drops leading lines until the rest parses: a
    recorded step is ``reasoning\\ncode`` without a fence, and the reasoning is prose."""
    lines = code.splitlines()
    for start in range(len(lines) if lenient else 1):
        try:
            tree = ast.parse("\n".join(lines[start:]))
        except (SyntaxError, ValueError):
            continue
        if tree.body:
            return tree
    return None


def _is_submit(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SUBMIT_CALLS


class Flow:
    """The bindings of every name across ``trees`` (earlier steps first, then this one), and :meth:`source`.

    A binding made under a loop or a condition also depends on what decides it: ``n += 1`` in ``for m in
    hits[...]`` counts a tool's result, ``found = "yes"`` under ``if "async" in text`` reads ``text``.
    """

    def __init__(self, trees: list[ast.Module]):
        self._bindings: dict[str, list[ast.expr | None]] = defaultdict(list)  # None: bound to something unknown
        self._guards: dict[int, tuple[ast.expr, ...]] = {}  # id of a SUBMIT call -> what decides that it runs
        self._ctrl: tuple[ast.expr, ...] = ()
        for tree in trees:
            self._visit(tree)
        self._budget = 0

    def source(self, node: ast.expr) -> Source:
        """Where the value of ``node`` comes from (see the module docstring)."""
        self._budget = FLOW_BUDGET
        return self._eval(node, frozenset())

    def guards(self, call: ast.Call) -> tuple[ast.expr, ...]:
        """The loop iterables and conditions a SUBMIT call of the trees runs under."""
        return self._guards.get(id(call), ())

    # -- bindings -----------------------------------------------------------------------------------------

    def _visit(self, node: ast.AST) -> None:
        self._collect(node)
        guard = _guard(node)
        for name, value in ast.iter_fields(node):
            outer = self._ctrl
            if guard is not None and name in ("body", "orelse", "cases"):
                self._ctrl = (*outer, guard)
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    self._visit(child)
            self._ctrl = outer

    def _add(self, name: str, value: ast.expr | None) -> None:
        self._bindings[name].append(value)
        if value is not None:
            self._bindings[name].extend(self._ctrl)

    def _bind(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self._add(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairs = (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
                     and not any(isinstance(e, ast.Starred) for e in (*value.elts, *target.elts)))
            for i, elt in enumerate(target.elts):
                self._bind(elt, value.elts[i] if pairs else value)  # type: ignore[union-attr]
        elif isinstance(target, ast.Starred):
            self._bind(target.value, value)
        elif isinstance(target, ast.Subscript):  # d[k] = v puts k and v into d
            self._bind(target.value, value)
            self._bind(target.value, target.slice)
        elif isinstance(target, ast.Attribute):
            self._bind(target.value, value)

    def _collect(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._bind(target, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value is not None:
            self._bind(node.target, node.value)  # x += v: v joins x's other bindings
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            self._bind(node.target, node.iter)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            self._bind(node.optional_vars, node.context_expr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._add(node.name, None)
        elif isinstance(node, ast.arg):
            self._add(node.arg, None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                self._add((alias.asname or alias.name).split(".")[0], None)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            self._add(node.name, None)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            self._add(node.rest, None)
        elif _is_submit(node):
            self._guards[id(node)] = self._ctrl
        elif isinstance(node, ast.Call):
            self._collect_call(node)

    def _collect_call(self, node: ast.Call) -> None:
        """A call may change a container: ``found.append(x)`` puts x into found, ``fill(found)`` anything."""
        values = [*node.args, *(k.value for k in node.keywords)]
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            for value in values:
                self._add(node.func.value.id, value)
        elif not (isinstance(node.func, ast.Name) and node.func.id in _PURE):
            for value in values:
                if isinstance(value, ast.Name):
                    self._add(value.id, None)

    # -- values -------------------------------------------------------------------------------------------

    def _eval(self, node: ast.AST | None, visiting: frozenset[str]) -> Source:
        self._budget -= 1
        if node is None or self._budget < 0:
            return _GROUNDED
        if isinstance(node, ast.Constant):
            value = node.value
            if value is None or value is Ellipsis or isinstance(value, bool):
                return _NOTHING
            if isinstance(value, (int, float, complex)):
                return Source(numbers=(number_text(value),))
            return Source(strings=(value if isinstance(value, str) else value.decode("utf-8", "replace"),))
        if isinstance(node, ast.Name):
            return self._name(node.id, visiting)
        if isinstance(node, ast.Call):
            return self._call(node, visiting)
        if isinstance(node, (ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom)):
            return _GROUNDED
        if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
            return self._eval(node.operand, visiting)  # -5 is written down, not computed
        if isinstance(node, ast.comprehension):
            return _join([self._eval(c, visiting) for c in (node.iter, *node.ifs)])
        parts = [self._eval(c, visiting) for c in ast.iter_child_nodes(node)
                 if isinstance(c, (ast.expr, ast.comprehension)) and not _is_store(c)]
        literal = isinstance(node, _LITERALS) or (
            isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values))
        return _join(parts, computed=not literal)

    def _name(self, name: str, visiting: frozenset[str]) -> Source:
        if name in visiting:
            return _NOTHING  # a cycle (x = x + 1): x's other bindings are counted where the cycle started
        bound = self._bindings.get(name)
        if not bound:
            return _GROUNDED  # assigned by no code shown: an input (context, query), a builtin, or unseen code
        parts = []
        for value in bound:
            part = self._eval(value, visiting | {name})
            if part.grounded:
                return _GROUNDED
            parts.append(part)
        return _join(parts)

    def _call(self, node: ast.Call, visiting: frozenset[str]) -> Source:
        func = node.func
        if isinstance(func, ast.Name) and func.id in _PURE and func.id not in self._bindings:
            head = _NOTHING
        elif isinstance(func, ast.Attribute):
            head = self._eval(func.value, visiting)  # a method of a constant ("a,b".split(",")) or of a result
        else:
            return _GROUNDED  # a tool, an llm_query, a function the code defined, anything unknown
        args = [self._eval(a, visiting) for a in node.args] + [self._eval(k.value, visiting) for k in node.keywords]
        return _join([head, *args], computed=True)


def _guard(node: ast.AST) -> ast.expr | None:
    """What decides whether (and how often) a statement's body runs."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return node.iter
    if isinstance(node, (ast.If, ast.While)):
        return node.test
    if isinstance(node, ast.Match):
        return node.subject
    return None


def _is_store(node: ast.AST) -> bool:
    return isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del))


def _submitted(call: ast.Call) -> list[ast.expr]:
    values = [*call.args, *(k.value for k in call.keywords)]
    if call.func.id == "FINAL_VAR":  # type: ignore[attr-defined]
        # FINAL_VAR("answer") submits the variable of that name
        return [ast.Name(v.value, ast.Load()) if isinstance(v, ast.Constant) and isinstance(v.value, str)
                and v.value.isidentifier() else v for v in values]
    return values


def submissions(tree: ast.Module, flow: Flow) -> list[Submission]:
    """Every SUBMIT/FINAL/FINAL_VAR call in ``tree``, in source order, with the source of what it submits: its
    values and the conditions it runs under together (one grounded part grounds the call: ``if hits["total"]
    == 0: SUBMIT(answer="none")`` answers from the search)."""
    calls = sorted((n for n in ast.walk(tree) if _is_submit(n)), key=lambda n: (n.lineno, n.col_offset))
    out = []
    for call in calls:
        values = [*_submitted(call), *flow.guards(call)]  # type: ignore[arg-type]
        source = _join([flow.source(v) for v in values]) if values else _NOTHING
        out.append(Submission(ast.unparse(call), source))
    return out


def reads_evidence(tree: ast.Module, flow: Flow) -> bool:
    """Whether a step's code reads anything it did not type (a tool, the context, a result held in a
    variable), so that what it printed can be evidence. ``print(1 + 1)`` or a rejected ``SUBMIT`` cannot."""
    return any(flow.source(n).grounded for n in ast.walk(tree) if isinstance(n, ast.Call) and not _is_submit(n))


# -- the verdict --------------------------------------------------------------------------------------

_FENCE = re.compile(r"```(\w*)[ \t]*\n(.*?)(?:```|\Z)", re.S)


def step_code(response: str) -> str:
    """The step's code: its Python (or untagged) fenced blocks, except those right after an "Output:" line
    (small models invent outputs); the whole text if there is no fence."""
    blocks = []
    for m in _FENCE.finditer(response):
        before = response[:m.start()].rstrip().splitlines()[-1:] or [""]
        if m.group(1).lower() in ("", "python", "py", "python3") and not re.search(r"(?i)output\s*:?\s*$", before[0]):
            blocks.append(m.group(2))
    return "\n".join(blocks) if blocks else response


def unsupported_submission(turn: Turn) -> str | None:
    """Why the step's SUBMIT/FINAL is unsupported (the first such call, with the constants nothing supports), or
    None: no call, code that does not parse (it never reaches its SUBMIT), or every value supported."""
    tree = parse_step(step_code(turn.response))
    if tree is None:
        return None
    # every earlier step, not only this user turn's: the REPL keeps their variables and the model saw their output
    steps = [(step, parse_step(step_code(step.response), lenient=True)) for step in turn.history]
    flow = Flow([*(t for _, t in steps if t is not None), tree])
    typed = [s for s in submissions(tree, flow) if not s.source.grounded]
    if not typed:
        return None  # every SUBMIT reads a tool result, the context or an input (or nothing is submitted)
    outputs = _evidence_outputs(steps, flow)
    for submission in typed:
        missing = _unsupported(submission.source, turn.context, outputs)
        if missing:
            return _reason(submission, missing, outputs, turn.context)
    return None


def _evidence_outputs(steps: list[tuple[Step, ast.Module | None]], flow: Flow) -> str:
    """What earlier steps printed from a tool, the context or a result: the output of a step that made a tool
    call or whose code reads one (an unreadable step counts). A step that only printed constants, or whose
    rejected SUBMIT came back with a correction naming the values, supports nothing."""
    return "\n".join(step.output for step, tree in steps
                     if step.tool_calls or tree is None or reads_evidence(tree, flow))


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_STOPWORDS = frozenset("the and for are was were this that with from there has have not but all any its into "
                       "fn pub async let mut use self none true false answer result found lines line functions "
                       "function file".split())


def _question_numbers(text: str) -> set[str]:
    """The question's numbers as the step grammar reads them: digits and number words ("1,250", "two", "half"),
    except a spelt "one", which is mostly a pronoun ("one per line", "which one") and the constant any code adds."""
    if not text.strip():
        return set()
    from rlmlab.memory import numbers_in, query_slots  # the package loads only when a typed SUBMIT needs it

    digits = {number_text(n) for n in numbers_in(text)}
    spelt = {number_text(n) for n in query_slots(text)["number"]} - digits
    return digits | (spelt - {"1"})


def _in_output(number: str, outputs: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(number)}(?![\w]|\.\d)", outputs) is not None


def _unsupported(source: Source, question: str, outputs: str) -> list[str]:
    """The constants of a constant-only value that nothing supports; [] when it is supported.

    The question's own numbers support a value made of numbers only: all of them, or for a computation at least
    one (a word problem brings constants it does not write: percent, per hour). Otherwise each number must be in
    the question or an earlier tool output, each identifier-like word in that output, and most other words too (a
    short prose answer restates a printed value in its own words).
    """
    text = "\n".join(source.strings)
    numbers = [*source.numbers, *re.findall(r"\b\d+\b", text)]
    words = [w for w in _WORD.findall(text) if w.lower() not in _STOPWORDS]
    if not numbers and not words:
        return []  # nothing specific to check (None, "", [])
    asked = _question_numbers(question)
    if numbers and not words:
        given = [n for n in numbers if n in asked]
        if len(given) == len(numbers) or (source.computed and given):
            return []
    missing_numbers = [n for n in numbers if n not in asked and not _in_output(n, outputs)]
    missing_words = [w for w in words if w not in outputs]
    # identifiers (snake_case, camelCase, with digits) must each have been seen; prose words mostly
    missing_ids = [w for w in missing_words if "_" in w or re.search(r"[a-z][A-Z]|\d", w)]
    if missing_numbers or missing_ids or (words and len(missing_words) > len(words) / 2):
        return list(dict.fromkeys(missing_numbers + missing_words))
    return []


def _reason(submission: Submission, missing: list[str], outputs: str, question: str) -> str:
    call = submission.text if len(submission.text) <= 120 else submission.text[:117] + "..."
    made = "computed only from constants typed in the code" if submission.source.computed else "typed in the code"
    where = "no tool output" + ("" if outputs.strip() else " (none yet)") + (" and not in the question"
                                                                         if question.strip() else "")
    return (f"{call} submits a value {made}, not one read from a tool result, the context or an input: "
            f"{', '.join(missing[:5])} {'appears' if len(missing) == 1 else 'appear'} in {where}")
