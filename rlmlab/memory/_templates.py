"""Code templates of memory items: Python source with named slots that a step grammar fills from the query.

A template is one statement per line (assignments, ``print(name)``, ``SUBMIT(answer=...)``) over the REPL's
tools and the variable ``context``. A slot is ``{{name:type}}`` with ``type`` one of :data:`SLOT_TYPES`;
single braces are literal (SPARQL ``{ ... }``, regex ``\\{``), and every ``{{`` must open a well-formed slot.
A slot may sit inside a string literal: there the value goes in with ``\\`` and ``"`` escaped, outside one it
must be a Python token (a number or an identifier). This is the rule of the step grammar
(:mod:`rlmlab.executors._step_grammar`), so :func:`fill_template` writes what a constrained model would.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, Union

from rlmlab.errors import RLMLabError
from rlmlab.records import Record

__all__ = ["SLOT_TYPES", "TEMPLATE_MAX", "STEP_TEMPLATES_KEY", "Slot", "TemplateError", "parse_template",
           "template_slots", "fill_template", "check_template", "normalise_template", "template_matches"]

# What a slot may hold, read off the query: a word as written or lower-cased; an identifier-like token
# (CamelCase, snake_case, any word); a ``prefix:Local`` CURIE; a number ("25%" gives 25); a path or file name;
# text the query puts in quotes; a full http(s) IRI written in the query (a SPARQL filter's prefix).
SLOT_TYPES = ("word", "ident", "curie", "property", "class", "number", "path", "quoted", "iri")
TEMPLATE_MAX = 2000  # characters
# Workspace.extras key under which the memory loop hands a rollout the injected templates
# (a list of {"id", "title", "template"}, in injection order).
STEP_TEMPLATES_KEY = "step_templates"

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SLOT = re.compile(r"\{\{([^{}\n]*)\}\}")
# Values a slot of each type accepts in fill_template (the step grammar takes them from the query instead).
_VALUE = {
    "word": re.compile(r"[A-Za-z]+"),
    "ident": re.compile(r"[A-Za-z_][A-Za-z0-9_]*"),
    "curie": re.compile(r"[A-Za-z][\w-]*:[A-Za-z_][\w.-]*"),
    "property": re.compile(r"[A-Za-z][\w-]*:[a-z_][\w.-]*"),  # RDF convention: properties are lowerCamelCase
    "class": re.compile(r"[A-Za-z][\w-]*:[A-Z][\w.-]*"),  # and classes UpperCamelCase
    "number": re.compile(r"-?\d+(?:\.\d+)?"),
    "path": re.compile(r"[\w.-]+(?:/[\w.-]+)*/?|[\w.-]+\.\w+"),
    "quoted": re.compile(r"[^\n]{1,200}"),
    "iri": re.compile(r"https?://[^\s'\"<>(){}]+"),
}
_TOKEN = re.compile(r"-?\d+(?:\.\d+)?|[A-Za-z_]\w*")  # what may stand outside a string literal


class TemplateError(RLMLabError, ValueError):
    """A malformed template or slot, or a value that does not fit its slot; the message says which and why."""


@dataclass(frozen=True)
class Slot(Record):
    """One ``{{name:type}}`` slot; ``offset`` is where it starts in the template text."""

    name: str
    type: str
    offset: int = 0


Part = Union[str, Slot]


def parse_template(text: str) -> list[Part]:
    """The template as alternating parts: literal text (``str``) and :class:`Slot`, in order; empty literals
    are left out. TemplateError for a ``{{`` that does not open a well-formed ``{{name:type}}`` slot, or a
    name used again with another type."""
    if not isinstance(text, str):
        raise TemplateError(f"expected a string, got {type(text).__name__}")
    parts: list[Part] = []
    types: dict[str, str] = {}
    pos = 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            break
        while text.startswith("{{{", start):  # "{{{x:word}}": a literal brace, then the slot
            start += 1
        m = _SLOT.match(text, start)
        line = text.count("\n", 0, start) + 1
        if m is None:
            raise TemplateError(f"line {line}: '{{{{' does not open a slot {{{{name:type}}}} "
                                f"(single braces are literal): {_snippet(text, start)!r}")
        name, sep, kind = m.group(1).partition(":")
        if not _NAME.fullmatch(name):
            raise TemplateError(f"line {line}: slot {m.group(0)}: the name must be an identifier")
        if not sep:
            raise TemplateError(f"line {line}: slot {m.group(0)} has no type; write {{{{{name}:TYPE}}}} with TYPE "
                                f"one of {', '.join(SLOT_TYPES)}")
        if kind not in SLOT_TYPES:
            raise TemplateError(f"line {line}: slot {m.group(0)}: unknown type {kind!r}; use one of "
                                f"{', '.join(SLOT_TYPES)}")
        if types.setdefault(name, kind) != kind:
            raise TemplateError(f"line {line}: slot {m.group(0)}: {name!r} is already a {types[name]} slot")
        if start > pos:
            parts.append(text[pos:start])
        parts.append(Slot(name, kind, start))
        pos = m.end()
    if pos < len(text):
        parts.append(text[pos:])
    return parts


def template_slots(text: str) -> list[Slot]:
    """The slots of a template in order of appearance (a name used twice appears twice)."""
    return [p for p in parse_template(text) if isinstance(p, Slot)]


def _snippet(text: str, at: int) -> str:
    return text[at:at + 30].split("\n", 1)[0]


def _in_string(text: str, pos: int) -> bool:
    """Whether ``pos`` is inside a double-quoted string literal of its line (an odd number of ``"`` before it),
    the step grammar's rule."""
    line_start = text.rfind("\n", 0, pos) + 1
    return text[line_start:pos].count('"') % 2 == 1


def fill_template(text: str, values: dict[str, Any]) -> str:
    """The template with every slot replaced by ``values[name]`` (str, int or float), as the step grammar would
    write it: escaped (``\\`` and ``"``) inside a string literal, a bare number or identifier outside one.

    TemplateError for a missing or unknown name, or a value that does not fit its slot's type.
    """
    parts = parse_template(text)
    names = {p.name: p.type for p in parts if isinstance(p, Slot)}
    unknown = [k for k in values if k not in names]
    if unknown:
        raise TemplateError(f"no slot named {unknown[0]!r}; the slots are {', '.join(names) or '(none)'}")
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        if part.name not in values:
            raise TemplateError(f"slot {{{{{part.name}:{part.type}}}}}: no value given")
        value = values[part.name]
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise TemplateError(f"slot {part.name}: expected a string or a number, got {type(value).__name__}")
        value = str(value)
        if not _VALUE[part.type].fullmatch(value):
            raise TemplateError(f"slot {part.name}: {value!r} is not a {part.type}")
        if _in_string(text, part.offset):
            value = value.replace("\\", "\\\\").replace('"', '\\"')
        elif not _TOKEN.fullmatch(value):
            raise TemplateError(f"slot {part.name}: {value!r} stands outside a string literal, where only a "
                                f"number or an identifier is allowed")
        out.append(value)
    return "".join(out)


_IN_STRING_ONLY = ("curie", "property", "class", "path", "quoted")
_PLACEHOLDER = {"number": "1"}  # any other type: an identifier, valid inside and outside a string literal


def check_template(text: Any) -> str:
    """The template, normalised (surrounding blank lines and trailing spaces removed), or TemplateError: not a
    string, empty, over :data:`TEMPLATE_MAX` characters, a malformed slot, or not Python once its slots are filled
    with placeholders."""
    if not isinstance(text, str):
        raise TemplateError(f"expected a string or None, got {type(text).__name__}")
    text = "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip("\n")
    if not text.strip():
        raise TemplateError("empty; use None for an item without a template")
    if len(text) > TEMPLATE_MAX:
        raise TemplateError(f"{len(text)} characters, over the limit of {TEMPLATE_MAX}")
    parts = parse_template(text)
    for p in parts:
        if isinstance(p, Slot) and p.type in _IN_STRING_ONLY and not _in_string(text, p.offset):
            line = text.count("\n", 0, p.offset) + 1
            raise TemplateError(f"line {line}: slot {{{{{p.name}:{p.type}}}}} must sit inside a string literal "
                                f"(a {p.type} is not a Python token)")
    code = "".join(p if isinstance(p, str) else _PLACEHOLDER.get(p.type, "x") for p in parts)
    try:
        compile(code, "<template>", "exec")
    except SyntaxError as exc:
        raise TemplateError(f"line {exc.lineno}: not valid Python once the slots are filled: {exc.msg}") from None
    return text


def normalise_template(text: str) -> str:
    """The template's code as ``ast.unparse`` writes it, with its slots renamed in order of first appearance:
    two templates are the same procedure when these are equal, whatever their quoting, spacing and slot names.
    Each slot stands as the identifier ``__s<i>_<type>__``, in a string literal or outside one alike, so a slot in
    ``'... "{{n:ident}}"'`` and in ``"... \\"{{n:ident}}\\""`` normalise the same. Text that is not Python once
    its slots are replaced is compared with its runs of whitespace collapsed instead. TemplateError for a
    malformed slot."""
    names: dict[str, int] = {}
    out = []
    for p in parse_template(text):
        if isinstance(p, str):
            out.append(p)
        else:
            out.append(f"__s{names.setdefault(p.name, len(names))}_{p.type}__")
    code = "".join(out)
    try:
        return ast.unparse(ast.parse(code))
    except SyntaxError:
        return "\n".join(" ".join(line.split()) for line in code.splitlines() if line.strip())


def template_matches(template: str, code: str) -> bool:
    """Whether ``code`` holds the template filled in some way: its literal text in order, each slot one or more
    characters of one line. False for a malformed template."""
    try:
        parts = parse_template(template)
    except TemplateError:
        return False
    rx = "".join(re.escape(p) if isinstance(p, str) else r"[^\n]+?" for p in parts)
    return bool(rx) and re.search(rx, code) is not None
