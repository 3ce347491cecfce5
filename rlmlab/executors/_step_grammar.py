"""The grammar of one agent step, generated from the tool registry (GBNF for llama.cpp's constrained decoding).

A step is what an executor asks the model for once per iteration, in the executor's own output format:

- ``rlm``: DSPy's ChatAdapter fields ``[[ ## reasoning ## ]]`` and ``[[ ## code ## ]]``;
- ``scratchpad``: a one-line thought and a ```python block;
- ``react``: ``next_thought``, ``next_tool_name`` and ``next_tool_args`` (JSON typed by the tool's schema).

The code of a step is at most ``max_statements`` lines, each one of

- ``name = tool(args)`` for every registered tool, its arguments typed by the tool's JSON Schema (string
  literals, integers within the tool's caps, ``True``/``False``, enum values, names of variables in scope such
  as ``context``), optionally subscripted (``ctx_find(...)["total"]``);
- ``name = expression``: arithmetic over numbers and variables, ``len(x["matches"])``, a string literal;
- ``print(expression)``;
- ``SUBMIT(answer=expression)``;
- a whole code template from memory (see :func:`template_rule`), its slots filled from the query's words.

With ``literals="query"`` the numbers an expression may use are those written in the query (digits, and number
words such as "half", "twice", "dozen"), plus a few unit constants (:data:`UNIT_CONSTANTS`): the model computes
with the query's numbers instead of recalling or inventing others. A tool gets into the grammar by being
registered, nothing else. Under the grammar every reply parses, so a run's salvage count is 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rlmlab.executors._gbnf import gbnf_alt, gbnf_lit, gbnf_rule_name, int_range
from rlmlab.executors._match_ops import match_operations
from rlmlab.executors._step_names import assigned_names, output_numbers, whole_results
from rlmlab.executors._template_rule import number_uses, template_rule
from rlmlab.memory import SLOT_TYPES, query_slots
from rlmlab.tools import file_headers, is_blobref_schema

__all__ = ["step_grammar", "query_slots", "template_rule", "int_range", "SLOT_TYPES", "UNIT_CONSTANTS", "STEP_FORMATS",
           "TARGET_NAMES", "answer_choices", "match_operations", "assigned_names", "whole_results", "output_numbers",
           "fields_grammar", "PLAN_WORD_CHARS"]

STEP_FORMATS = ("rlm", "react", "scratchpad")
# Names a step may assign (a fixed pool, so the grammar stays context-free); variables of earlier steps and the
# task's inputs are added per step as ``scope``.
TARGET_NAMES = ("answer", "hits", "rows", "n", "total")
# The top-level keys of a tool result a step computes from (ctx_find / ast_query: total, matches; sparql_query: rows).
TOP_KEYS = ("total", "matches", "rows")
# pieces of the Rust reads over a whole result's matches: len(hits["matches"]) and ", ".join(m["captures"][..] ...)
_MATCHES_CLOSE = gbnf_lit('["matches"])')
_TOTAL = gbnf_lit('["total"]')
_JOIN_OPEN = gbnf_lit('", ".join(m["captures"][')
# Unit conversions a word problem may need without writing them: a constant is allowed when the query has one
# of its words (minutes per hour, percent, ...).
UNIT_CONSTANTS = {
    "100": ("%", "percent", "cent", "cents"), "60": ("minute", "minutes", "hour", "hours", "second", "seconds"),
    "24": ("day", "days", "hours"), "7": ("week", "weeks"), "12": ("month", "months", "year", "years", "dozen"),
    "52": ("week", "weeks", "year", "years"), "365": ("year", "years"), "1000": ("km", "kg", "kilometers", "grams"),
}
PLAN_WORD_CHARS = 12
# One word of a step's plan: letters and code punctuation, or a short number (a long digit run is how a small
# model's plan degenerates: each digit is a token).
_PLAN_WORD = f"[A-Za-z_(),.:;'\"=+*/%<>?!-]{{1,{PLAN_WORD_CHARS}}} | [0-9] [0-9.,]{{0,4}}"


# GBNF helpers (_gbnf), template fillings (_template_rule) and what earlier steps left (_step_names) live in their
# own modules.


# -- argument types from JSON Schema -----------------------------------------------------------------------

def _value_rule(schema: dict[str, Any], ctx: "_Builder", json_mode: bool) -> str:
    """GBNF for one argument value of the given JSON Schema (Python literal, or JSON in ReAct's format)."""
    if "anyOf" in schema:
        return gbnf_alt(_value_rule(s, ctx, json_mode) for s in schema["anyOf"])
    if "enum" in schema:
        return gbnf_alt(gbnf_lit(json.dumps(v) if json_mode else repr(v)) for v in schema["enum"])
    if is_blobref_schema(schema):
        return ctx.json_string if json_mode else gbnf_alt([ctx.var_ref, "str-lit"])
    kind = schema.get("type")
    if kind == "string":
        return ctx.json_string if json_mode else "str-lit"
    if kind == "integer":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if lo is not None and hi is not None and lo >= 0:
            return ctx.range_rule(int(lo), int(hi))
        return "int-lit"
    if kind == "number":
        return "num-lit"
    if kind == "boolean":
        return gbnf_alt(['"true"', '"false"'] if json_mode else ['"True"', '"False"'])
    if kind == "null":
        return '"null"' if json_mode else '"None"'
    if kind == "array":
        item = _value_rule(schema.get("items", {"type": "string"}), ctx, json_mode)
        return f'"[" ({item} (", " {item}){{0,7}})? "]"'
    if kind == "object":
        key = ctx.json_string if json_mode else "str-lit"
        val = ctx.json_string if json_mode else "atom"
        return f'"{{" ({key} ": " {val} (", " {key} ": " {val}){{0,5}})? "}}"'
    return ctx.json_string if json_mode else "expr"


class _Builder:
    """Collects named rules while the step grammar is generated."""

    def __init__(self, scope: Sequence[str]):
        self.rules: dict[str, str] = {}
        self.var_ref = "var-ref"  # what a tool's handle argument may name: the step's inputs and earlier steps' names
        self.rules["var-ref"] = gbnf_alt(gbnf_lit(n) for n in dict.fromkeys(scope))
        self.json_string = "json-str"

    def add(self, name: str, body: str) -> str:
        self.rules[name] = body
        return name

    def range_rule(self, lo: int, hi: int) -> str:
        return self.add(f"int-{lo}-{hi}", int_range(lo, hi))

    def text(self) -> str:
        return "\n".join(f"{name} ::= {body}" for name, body in self.rules.items()) + "\n"


def _tool_call(spec: Any, caps: Any, b: _Builder, vocab: dict[str, dict[str, str]] | None = None) -> str:
    """``name(required positional args, optional keyword args in order)`` for one tool; an argument with a closed
    vocabulary (``vocab["tool.arg"]``, see :mod:`._vocab`) takes that instead of a free string."""
    schema = spec.schema_for_caps(caps)
    props, required = schema["properties"], set(schema.get("required", []))
    parts = [gbnf_lit(f"{spec.name}(")]
    first = True
    for name, prop in props.items():
        if name not in required:
            continue
        rules = (vocab or {}).get(f"{spec.name}.{name}")
        if rules:
            for rule, body in rules.items():
                b.add(rule, body)
        value = next(iter(rules)) if rules else _value_rule(prop, b, json_mode=False)
        parts.append(("" if first else '", " ') + value)
        first = False
    for name, prop in props.items():
        if name in required:
            continue
        sep = "" if first else ", "
        parts.append(f"({gbnf_lit(f'{sep}{name}=')} {_value_rule(prop, b, json_mode=False)})?")
    parts.append('")"')
    return b.add(f"call-{gbnf_rule_name(spec.name)}", " ".join(p for p in parts if p))


def _react_args(spec: Any, caps: Any, b: _Builder) -> str:
    """The JSON object of one tool's arguments (ReAct's ``next_tool_args``), required keys first."""
    schema = spec.schema_for_caps(caps)
    props, required = schema["properties"], schema.get("required", [])
    parts = ['"{"']
    for i, name in enumerate(required):
        sep = "" if i == 0 else ", "
        parts.append(f'{gbnf_lit(f"{sep}{json.dumps(name)}: ")} {_value_rule(props[name], b, json_mode=True)}')
    for name in props:
        if name in required:
            continue
        sep = ", " if required else ""
        parts.append(f'({gbnf_lit(f"{sep}{json.dumps(name)}: ")} {_value_rule(props[name], b, json_mode=True)})?')
    parts.append('"}"')
    return b.add(f"args-{gbnf_rule_name(spec.name)}", " ".join(parts))


def unit_constants(query: str) -> list[str]:
    """The :data:`UNIT_CONSTANTS` whose unit words occur in ``query``."""
    words = set(re.findall(r"[a-z]+|%", query.lower()))
    return [value for value, units in UNIT_CONSTANTS.items() if words & set(units)]


def _numbers(query: str | None, literals: str, seen: Sequence[str]) -> str | None:
    if literals == "query" and query is not None:
        values = list(dict.fromkeys([*query_slots(query)["number"], *unit_constants(query), *seen]))
        if not values:  # a query without numbers: the code gets its numbers from tools, not from the model
            return None

        return gbnf_alt(gbnf_lit(v) for v in sorted(values, key=lambda v: (-len(v), v)))
    return 'int-lit ("." [0-9]{1,6})?'


def step_grammar(registry: Iterable[Any], caps: Any, *, fmt: str = "rlm", scope: Sequence[str] = ("context",),
                 max_statements: int = 3, query: str | None = None, templates: Sequence[str] = (),
                 literals: str = "query", numbers: Sequence[str] = (), must_submit: bool = False,
                 output_field: str = "answer", plan_words: int = 8, inputs: Sequence[str] = ("context",),
                 echo_query: bool = True, templates_first: bool = False, context: str | None = None,
                 vocab: dict[str, dict[str, str]] | None = None, keys: Sequence[str] | None = None,
                 raw: Sequence[str] = (), template_check: Callable[[list[str]], list[str]] | None = None,
                 joins: Sequence[str] = (), join_only: bool = False, answer_form: str | None = None,
                 template_fit: Callable[[list[str]], list[str]] | None = None,
                 typed_answers: bool = True, names: Sequence[str] = (), match_ops: bool = False,
                 count_reads: bool = False, sub_query: bool = False, listing: bool = False,
                 bare: Sequence[str] = ()) -> str:
    """The GBNF grammar of one step of an executor, over the tools of ``registry`` (ToolSpecs) with ``caps``.

    ``typed_answers=False`` (a question about a context: code, a document): ``SUBMIT`` takes no expression made
    of constants alone (``1 + 1``); every computed answer reads at least one variable.

    ``scope`` names the variables the step may read besides the assignable :data:`TARGET_NAMES`;
    ``templates`` are code templates with ``{{slot:type}}`` slots (a template whose slot has no candidate in
    ``query`` is left out); ``literals`` "query" limits an expression's numbers to the query's and ``numbers``
    (those seen in earlier steps' output; see the module docstring), "any" allows any number. ``must_submit``
    makes the step end with ``SUBMIT`` (an executor's last iteration). ``output_field`` is the name SUBMIT takes. The free text before the code
(the plan) is at most ``plan_words`` words of at most :data:`PLAN_WORD_CHARS` characters, a run of digits at most
5 long: degenerate text (``Plan: 1000000000...``, a word repeated) stops there instead of growing to the token cap.
    ``inputs`` are the scope names that hold the task's inputs (handles: never printed). ``echo_query`` starts the
    thought with the query, copied by the grammar, so the code that follows is written right after it (a small
    model otherwise loses the question in a long prompt). ``templates_first`` makes the step one of the filled
    templates when any fills (a task's first step copies a retrieved procedure; later steps are free to differ).
    ``context`` (the task's text) grounds ``ident`` slots (see :func:`query_slots`). ``vocab`` gives required
    arguments closed vocabularies by ``"tool.arg"`` (GBNF rules, the first the argument's; see :mod:`._vocab`).
    ``keys`` limits a subscript to those string keys and the first item (None: any string or index up to 999), and
    then a whole tool result (a name assigned a call, this step or, listed in ``raw``, an earlier one) is read
    only through a key: ``SUBMIT(answer=hits)`` of a result's dict is not a step. ``template_check`` narrows a
    template's fillings (``keep`` of :func:`template_rule`); ``template_fit`` drops the fillings, and templates,
    that do not fit the question (``fit``). ``joins`` (capture names; with ``keys``) lets
    ``SUBMIT`` list one capture of every match of a whole result, ``", ".join(m["captures"]["field"] for m in
    hits["matches"])``: the answer to "the fields of struct X" is every match, not the first; and a whole result
    is then submitted only as one value it holds (its total, the first match's text, line or a capture), never as
    the list of match dicts. ``join_only`` (a question asking for every variant, field or parameter): a capture is
    read only joined over every match, not from the first match alone. ``answer_form`` (with ``joins``): "count"
    (a question asking how many) submits a number only (a result's total, its match count, an expression), never
    a line, its number or a capture; "choice" (a question offering two answer words) submits only
    ``"yes" if ... else "no"`` over a result it read; "query" (a question over an ontology, whose answer is a
    SPARQL query's text; needs ``vocab["sparql_query.query"]``) is one step that assigns a SELECT of the closed
    vocabulary, runs it with ``sparql_query`` and submits the query.

    ``listing`` (a question asking for items, with ``joins``): no whole result is read as one match's value.
    ``bare``: names of ``raw`` holding a result without captures (``ctx_find``'s): no capture is read of them.
    ``sub_query`` (with ``match_ops``): a sub-call reads the matched lines for the REPL's ``query`` (``ask``).
    ``count_reads`` (a question asking how many, over a context): ``SUBMIT`` takes one read of a result (its total,
    its number of matches, a count operation), never arithmetic over reads, and no name is assigned arithmetic.

    ``match_ops`` (a whole result of ``ctx_find`` or ``ast_query`` over code or a document, with ``keys``): the
    generic operations over its matches are answers too, offered whenever a whole result is in scope and never
    chosen by the question's words (:func:`match_operations`): the matches listed one per line as ``line:text``
    (``path:line:text`` over a context of several files), the file with the most matches, and over captures
    (``joins``) the distinct count, the most frequent value, the most frequent but one and a capture's values
    where another capture equals a name; ``names`` are the names a filter may compare with (the question's names
    that occur in the source).
    """
    if fmt not in STEP_FORMATS:
        raise ValueError(f"fmt: {fmt!r}; use one of {', '.join(STEP_FORMATS)}")
    if max_statements < 1:
        raise ValueError(f"max_statements: {max_statements}; use 1 or more")
    specs = list(registry)
    b = _Builder(scope)
    if plan_words < 1:
        raise ValueError(f"plan_words: {plan_words}; use 1 or more")
    b.add("root", "step")
    b.add("plan", f"plan-word (\" \" plan-word){{0,{plan_words - 1}}}")
    b.add("plan-word", _PLAN_WORD)
    thought = "plan"
    if echo_query and query:
        thought = f'{gbnf_lit("Question: " + " ".join(query.split()) + " Plan: ")} plan?'
    if fmt == "react":
        alts = [f'{gbnf_lit(spec.name + chr(10) + chr(10) + "[[ ## next_tool_args ## ]]" + chr(10))} '
                f'{_react_args(spec, caps, b)}' for spec in specs]
        alts.append(gbnf_lit('finish\n\n[[ ## next_tool_args ## ]]\n{}'))
        b.add("step", f'"[[ ## next_thought ## ]]\\n" thought "\\n\\n[[ ## next_tool_name ## ]]\\n" '
                      f'{gbnf_alt(alts)} "\\n\\n[[ ## completed ## ]]"')
        b.add("thought", thought)
        b.add("json-str", '"\\"" ([^"\\\\\\n] | "\\\\" ["\\\\/nt]){0,200} "\\""')
        b.add("int-lit", '"-"? [0-9]{1,9}')
        b.add("num-lit", '"-"? [0-9]{1,9} ("." [0-9]{1,6})?')
        return b.text()
    calls = [_tool_call(spec, caps, b, vocab) for spec in specs]
    slots = query_slots(query or "", context)
    uses = number_uses(query or "")
    filled = [r for r in (template_rule(t, slots, uses=uses, keep=template_check, fit=template_fit)
                          for t in templates)
              if r is not None]
    # a string a step assigns is a SPARQL query over the ontology's terms (the ontology suite's answer is the query's
    # text); any other string is a tool argument only. Free text only when vocabularies are off.
    strings = ["str-lit"] if vocab is None else [next(iter(rules)) for key, rules in vocab.items()
                                                  if rules and key == "sparql_query.query"]
    number = _numbers(query, literals, numbers)
    first = '["matches"][0]'
    if answer_form not in (None, "count", "choice", "query"):
        raise ValueError(f"answer_form: {answer_form!r}; use None, 'count', 'choice' or 'query'")
    if answer_form == "query" and strings == ["str-lit"]:
        raise ValueError("answer_form 'query' needs a SPARQL vocabulary (vocab['sparql_query.query'])")
    counting = answer_form == "count" and bool(keys and joins)
    has_files = bool(context and file_headers(context)[0])
    # a search's result (ctx_find, ast_query) is read as one value it holds, never as a chain of keys (the embedded
    # model submitted answer["total"]["text"]["text"] over a document)
    searches = bool(keys and (joins or match_ops))
    scalar_opts = [] if not searches or listing else [
        *([gbnf_lit(f'{first}["captures"][') + " join-key " + gbnf_lit("]")] if joins and not (join_only or counting) else []),
        *(gbnf_lit(f'{first}[{json.dumps(k)}]') for k in ("text", "line") if k in keys and not counting),
        *([gbnf_lit('["total"]')] if "total" in keys else [])]
    code = _sequence(b, scope, max_statements, must_submit, calls, output_field, numbers, inputs,
                     strings=strings, choices=answer_choices(query or ""), has_numbers=number is not None,
                     raw=(raw or ()) if keys else None, joins=joins if keys else (),
                     scalars=bool(scalar_opts) or not searches, count_ok=not keys or "total" in keys,
                     form=answer_form if keys and joins else None, typed_answers=typed_answers,
                     ops=(lambda w, form: match_operations(w, () if w in bare else joins, names=names,
                                                           files=has_files, form=form, ask=sub_query))
                     if match_ops and keys else None, count_reads=count_reads, bare=frozenset(bare),
                     typed_reads=searches)
    if answer_form == "query" and strings:
        # the answer to a question over an ontology is a SPARQL query's text: the step writes one, runs it (a query
        # that does not run ends the step with its error) and submits it; no number, no arithmetic
        code = b.add("query-step", f'{gbnf_lit("q = ")} {strings[0]} '
                                   f'{gbnf_lit(chr(10) + "rows = sparql_query(q)" + chr(10) + f"SUBMIT({output_field}=q)")}')
    if filled:
        named = [b.add(f"template-{i}", r) for i, r in enumerate(filled)]
        code = gbnf_alt(named if templates_first else [*named, code])
    if fmt == "rlm":
        b.add("step", '"[[ ## reasoning ## ]]\\n" thought "\\n\\n[[ ## code ## ]]\\n" code "\\n\\n[[ ## completed ## ]]"')
    else:
        b.add("step", 'thought "\\n```python\\n" code "\\n```"')
    b.add("thought", thought)
    b.add("code", code)
    if keys and joins:
        b.add("join-key", gbnf_alt(gbnf_lit(json.dumps(k)) for k in dict.fromkeys(joins)))
    if scalar_opts:
        b.add("scalar-read", gbnf_alt(scalar_opts))
    if keys:
        b.add("subscript", f'"[" ({" | ".join(gbnf_lit(json.dumps(k)) for k in dict.fromkeys(keys))} | "0") "]"')
        # a tool's result is a dict: its first key is one of its top-level ones, never an index
        top = [k for k in TOP_KEYS if k in keys] or list(TOP_KEYS)
        b.add("top-key", f'"[" ({" | ".join(gbnf_lit(json.dumps(k)) for k in top)}) "]"')
    else:
        b.add("subscript", '"[" (str-lit | [0-9]{1,3}) "]"')
    b.add("number", number if number is not None else '"0"')
    b.add("atom", "str-lit | number | var-ref")
    b.add("str-lit", '"r"? "\\"" ([^"\\\\\\n] | "\\\\" [^\\n]){0,120} "\\""')
    b.add("int-lit", '"-"? [0-9]{1,9}')
    b.add("num-lit", 'int-lit ("." [0-9]{1,6})?')
    return b.text()


def answer_choices(query: str) -> tuple[str, ...]:
    """The answer words a query offers ("Answer yes or no." gives ``("yes", "no")``), for a computed choice."""
    m = re.search(r"\b(?:answer|reply|say)\s+(?:with\s+)?['\"]?(\w+)['\"]?\s+or\s+['\"]?(\w+)['\"]?", query, re.I)
    return (m.group(1), m.group(2)) if m else ()


def _sequence(b: _Builder, scope: Sequence[str], max_statements: int, must_submit: bool, calls: list[str],
              output_field: str, seen: Sequence[str], inputs: Sequence[str], *, strings: Sequence[str] = ("str-lit",),
              choices: Sequence[str] = (), has_numbers: bool = True, raw: Sequence[str] | None = None,
              joins: Sequence[str] = (), scalars: bool = True, count_ok: bool = True,
              form: str | None = None, typed_answers: bool = True,
              ops: Callable[[str, str | None], list[str]] | None = None, count_reads: bool = False,
              bare: frozenset[str] = frozenset(), typed_reads: bool = False) -> str:
    """The statements of a step, tracking which names are assigned: an expression may read only the names in
    scope and those assigned by an earlier statement of the same step (so no step reads an unset variable).

    An answer is computed, never typed in: ``SUBMIT`` takes a variable the code assigned (a tool's result, an
    expression), an expression with an operator over the query's numbers, a number an earlier step printed, or
    ``"a" if x else "b"`` over the query's own answer words (``choices``). The task's inputs (handles) appear only
    as tool arguments. A string assigned to a name is one of ``strings`` (the closed vocabularies of the tools'
    query arguments, e.g. a SPARQL SELECT; free text only when vocabularies are off). A step with nothing computed
    that must submit submits ``None`` (no answer) rather than text the model made up.

    With ``raw`` (names in scope holding a whole tool result; None: not tracked), a whole result is only printed:
    an expression, a condition or ``SUBMIT`` reads it through a key (``hits["total"]``), so a step cannot submit
    the result's dict or test a dict that is always true; and a printed number is not retyped as the answer while a
    variable holds a result (``SUBMIT(answer=1)`` after printing a dict with a 1 in it)."""
    states: dict[tuple[frozenset[str], frozenset[str]], int] = {}
    inputs = frozenset(inputs)
    track = raw is not None
    rhs_calls = f"{gbnf_alt(calls)} subscript{{0,3}}" if calls else None
    call_alt = gbnf_alt(calls) if calls else None
    seen_rule = gbnf_alt(gbnf_lit(v) for v in seen) if seen else None
    string_rule = gbnf_alt(strings) if strings else None

    def state(names: frozenset[str], raws: frozenset[str]) -> int:
        key = (names, raws)
        if key in states:
            return states[key]
        i = states[key] = len(states)
        own = sorted(names - inputs)
        cooked, whole = [n for n in own if n not in raws], [n for n in own if n in raws]
        factors = [f'"(" expr-{i} ")"']
        if own:
            b.add(f"var-{i}", gbnf_alt(gbnf_lit(n) for n in own))
            # with joins (a Rust tool's results), a whole result is read as one value it holds (its total, the
            # first match's text, line or a capture) or counted, never as the list of match dicts
            wl = gbnf_alt(gbnf_lit(n) for n in whole) if whole else ""
            reads = ([f"{gbnf_alt(gbnf_lit(n) for n in cooked)} subscript{{0,3}}"] if cooked else []) + \
                    ([f"{wl} scalar-read" if typed_reads else f"{wl} top-key subscript{{0,3}}"]
                     if whole and scalars else [])
            if reads:
                b.add(f"primary-{i}", " | ".join(reads))
                factors += [f'"len(" primary-{i} ")"', f"primary-{i}"]
            if whole and joins and count_ok:  # a lookup's answer is what the item holds: no count of matches
                b.add(f"count-{i}", f'"len(" {wl} {_MATCHES_CLOSE}')
                factors.append(f"count-{i}")
        computable = len(factors) > 1 or has_numbers  # an expression needs an atom besides "(" expr ")"
        if computable:  # else an expression has no atom to start from: no expression rules at all
            b.add(f"factor-{i}", " | ".join((["number"] if has_numbers else []) + factors))
            b.add(f"term-{i}", f'factor-{i} ((" * " | " / " | " // " | " % ") factor-{i}){{0,6}}')
            b.add(f"expr-{i}", f'term-{i} ((" + " | " - ") term-{i}){{0,6}}')
            b.add(f"opexpr-{i}", f'term-{i} ((" + " | " - ") term-{i}){{1,6}} | '
                                 f'factor-{i} ((" * " | " / " | " // " | " % ") factor-{i}){{1,6}}')
        answer_expr = f"opexpr-{i}" if computable else None
        if computable and not typed_answers:  # an answer that reads a variable: at least one factor is one
            held = factors[1:]  # every factor but "(" expr ")": the variables' reads and counts
            if held:
                b.add(f"vfactor-{i}", " | ".join(held))
                mul = '(" * " | " / " | " // " | " % ")'
                b.add(f"vterm-{i}", f"(factor-{i} {mul}){{0,6}} vfactor-{i} ({mul} factor-{i}){{0,6}}")
                b.add(f"vexpr-{i}", f'(term-{i} (" + " | " - ")){{0,6}} vterm-{i} ((" + " | " - ") term-{i}){{0,6}}')
                answer_expr = f"vexpr-{i}"
            else:
                answer_expr = None
        # over a context, a name is assigned a tool's result or a value computed from one, never constants alone
        # (``answer = 1``, then ``SUBMIT(answer=answer)``)
        assigned = f"expr-{i}" if computable and typed_answers else answer_expr if not typed_answers else None
        if count_reads:  # a count over a context is one read of what a tool found, never arithmetic over reads
            answer_expr = assigned = None  # (SUBMIT(answer=hits["total"] + len(hits["matches"])) counted twice)
        cooked_rhs = [f"{call_alt} top-key subscript{{0,3}}" if track and call_alt else rhs_calls,
                      assigned, string_rule]
        b.add(f"rhs-{i}", " | ".join(x for x in ([rhs_calls] + cooked_rhs[1:] if not track else
                                                 [call_alt, *cooked_rhs]) if x))
        if track:
            b.add(f"crhs-{i}", " | ".join(x for x in cooked_rhs if x))
        if own:  # print what a step computed; the inputs are handles, printing one shows nothing
            b.add(f"print-{i}", f'"print(" {gbnf_alt(gbnf_lit(n) for n in own)} subscript{{0,3}} ")"')
        values = ([f"primary-{i}", f'"len(" primary-{i} ")"'] if f"primary-{i}" in b.rules else []) + \
            ([answer_expr] if answer_expr else [])
        if seen_rule and not (track and own):  # a number a variable holds is submitted through it, not retyped
            values.append(seen_rule)
        if whole and joins:
            if count_ok:  # a lookup's answer is what the item holds, not how many matches
                values.append(f"count-{i}")
            if form != "count":  # every match's capture, joined: a list answer (fields, variants, parameters)
                captured = [n for n in whole if n not in bare]  # (a ctx_find result has no captures)
                if captured:
                    values.append(f'{_JOIN_OPEN} join-key {gbnf_lit("] for m in ")} {gbnf_alt(gbnf_lit(n) for n in captured)} '
                                  f'{_MATCHES_CLOSE}')
        if whole and ops is not None:  # the generic operations over a whole result's matches (match_operations)
            generic = [op for w in whole for op in ops(w, form)]
            if generic:
                values.append(b.add(f"ops-{i}", gbnf_alt(generic)))
        if own and len(choices) == 2 and f"primary-{i}" in b.rules:
            cond = f"primary-{i}"
            if form == "choice":  # whether a tool found anything: its total or how many matches, not a match's
                # text (an IndexError when it found none)
                conds = ([f"{gbnf_alt(gbnf_lit(n) for n in cooked)} subscript{{0,3}}"] if cooked else []) + \
                    ([f"{wl} {_TOTAL}"] if whole and joins and count_ok else []) + \
                    ([f"count-{i}"] if f"count-{i}" in b.rules else [])
                cond = b.add(f"cond-{i}", " | ".join(conds)) if conds else cond
            choice = f'{gbnf_lit(json.dumps(choices[0]))} " if " {cond} " else " {gbnf_lit(json.dumps(choices[1]))}'
            # a yes/no question over Rust is answered by the choice over what a tool found, not by a value read
            values = [choice] if form == "choice" else [*values, choice]
        if values:
            b.add(f"submit-{i}", f'"SUBMIT({output_field}=" ({" | ".join(values)}) ")"')
        elif must_submit:
            b.add(f"submit-{i}", gbnf_lit(f"SUBMIT({output_field}=None)"))
        return i

    def seq(names: frozenset[str], raws: frozenset[str], k: int) -> str:
        i = state(names, raws)
        name = f"seq-{i}-{k}"
        if name in b.rules:
            return name
        b.rules[name] = ""  # reserve (the definitions below refer to other states only)
        printable = f"print-{i}" in b.rules
        submit = [f"submit-{i}"] if f"submit-{i}" in b.rules else []
        if k == 1:
            opts = submit if must_submit else [*submit, *([f"print-{i}"] if printable else []),
                                               f'{gbnf_alt(gbnf_lit(t) for t in TARGET_NAMES)} " = " rhs-{i}']
        else:
            tail = "" if must_submit else "?"
            opts = list(submit)
            if printable:
                opts.append(f'print-{i} ("\\n" {seq(names, raws, k - 1)}){tail}')
            for t in TARGET_NAMES:
                if track and call_alt:
                    opts.append(f'{gbnf_lit(t + " = ")} {call_alt} ("\\n" {seq(names | {t}, raws | {t}, k - 1)}){tail}')
                rhs = f"crhs-{i}" if track else f"rhs-{i}"
                if b.rules.get(rhs):
                    opts.append(f'{gbnf_lit(t + " = ")} {rhs} ("\\n" {seq(names | {t}, raws - {t}, k - 1)}){tail}')
        b.rules[name] = " | ".join(opts)
        return name

    return seq(frozenset(scope), frozenset(raw or ()) & frozenset(scope), max_statements)


def fields_grammar(names: Sequence[str], thought_chars: int = 160, value_chars: int = 300) -> str:
    """GBNF for a ChatAdapter reply with the given output fields, each one line of text (``reasoning`` up to
    ``thought_chars``, the others up to ``value_chars``): DSPy's extract step after the last iteration."""
    parts = []
    for i, name in enumerate(names):
        head = ("" if i == 0 else "\n\n") + f"[[ ## {name} ## ]]\n"
        limit = thought_chars if name == "reasoning" else value_chars
        parts.append(f"{gbnf_lit(head)} [^\\n\\[`]{{1,{limit}}}")
    return "root ::= " + " ".join(parts) + ' "\\n\\n[[ ## completed ## ]]"\n'
