"""A code template from memory as a GBNF rule: its ``{{slot:type}}`` slots filled jointly from the query's
literals (see :func:`template_rule`)."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable

from rlmlab.executors._gbnf import gbnf_alt, gbnf_lit
from rlmlab.memory import SLOT_TYPES, numbers_in

__all__ = ["template_rule", "number_uses"]

_SLOT = re.compile(r"\{\{(\w+)(?::(\w+))?\}\}")


# The candidates come from rlmlab.memory's query_slots, so retrieval's query shapes and the slots are one definition.

def _in_string(template: str, pos: int) -> bool:
    """Whether ``pos`` is inside a string literal of the template's line (an odd number of quotes before it)."""
    line_start = template.rfind("\n", 0, pos) + 1
    return template[line_start:pos].count('"') % 2 == 1


_JOINT_MAX = 256  # slot-value combinations enumerated jointly; past this, slots are filled independently


def template_rule(template: str, slots: dict[str, list[str]], *, uses: dict[str, int] | None = None,
                  keep: Callable[[list[str]], list[str]] | None = None,
                  fit: Callable[[list[str]], list[str]] | None = None) -> str | None:
    """GBNF for a template with each slot one of the query's candidates of its type; None if a slot has none.

    Slots are filled jointly: a name used twice takes one value, and different slots that are not numbers
    take different values (a SPARQL triple's subject is not also its predicate; ``2 + 2`` may repeat a number).
    A value inside a string literal is escaped for it (``\\`` and ``"``); outside one, only values that are
    Python tokens (numbers, identifiers) are allowed.

    ``uses`` (number -> how often the query writes it) lets distinct number slots share a value only as often as
    the query writes it (AWM: each slot is one variable element of the query): "What is 144 / 12?" fills
    ``{{a}} / {{b}}`` with 144 and 12, never 12 and 12, while "What is 2 + 2?" may give both slots 2.
    ``keep`` (the filled templates' texts -> those that can be right) narrows the joint fillings, e.g. to the SPARQL
    templates whose query returns rows over the attached ontology; when it keeps none, every filling stays (an
    empty answer may be the right one). ``fit`` (the same texts -> those the question's closed space holds) drops
    the others, and the template with them when it keeps none: a retrieved procedure that does not fit the
    question is not offered to its first step. All three apply where the slots are enumerated jointly (a template
    with more joint fillings than that is left out when ``fit`` is given).
    """
    pieces: list[tuple[str, str] | str] = []  # literal text, or (name, kind)
    pos = 0
    choices: dict[str, list[str]] = {}
    kinds: dict[str, str] = {}
    for m in _SLOT.finditer(template):
        name, kind = m.group(1), m.group(2)
        if kind not in SLOT_TYPES:
            raise ValueError(f"template slot {m.group(0)}: give a type, one of {', '.join(SLOT_TYPES)}")
        if m.start() > pos:
            pieces.append(template[pos:m.start()])
        values = slots.get(kind, [])
        if _in_string(template, m.start()):
            values = [v.replace("\\", "\\\\").replace('"', '\\"') for v in values]
        else:
            values = [v for v in values if re.fullmatch(r"-?\d+(\.\d+)?|[A-Za-z_]\w*", v)]
        choices[name] = [v for v in choices.get(name, values) if v in values]
        kinds[name] = kind
        if not choices[name]:
            return None
        pieces.append((name, kind))
        pos = m.end()
    if pos < len(template):
        pieces.append(template[pos:])
    if not pieces:
        return None
    names = list(choices)
    combos = []
    total = 1
    for n in names:
        total *= len(choices[n])
    if total <= _JOINT_MAX:
        for values in itertools.product(*(choices[n] for n in names)):
            picked = dict(zip(names, values))
            words = [picked[n] for n in names if kinds[n] != "number"]
            if len(set(words)) == len(words):
                combos.append(picked)
        if not combos:
            return None
        if uses is not None:
            once = [c for c in combos if _within_uses([c[n] for n in names if kinds[n] == "number"], uses)]
            combos = once or combos
        alts = ["".join(p if isinstance(p, str) else picked[p[0]] for p in pieces) for picked in combos]
        if fit is not None:
            alts = fit(alts)
            if not alts:
                return None
        if keep is not None and len(alts) > 1:
            alts = keep(alts) or alts
        return gbnf_alt(gbnf_lit(a) for a in alts)
    if fit is not None:
        return None
    return " ".join(gbnf_lit(p) if isinstance(p, str) else gbnf_alt(gbnf_lit(v) for v in choices[p[0]]) for p in pieces)


def _within_uses(values: list[str], uses: dict[str, int]) -> bool:
    """Whether no number in ``values`` (one per distinct slot) is used more often than the query writes it."""
    return all(n <= max(uses.get(v, 0), 1) for v, n in Counter(values).items())


def number_uses(query: str) -> dict[str, int]:
    """How often the query writes each number (digits; a number word such as "half" counts once)."""
    return dict(Counter(numbers_in(query)))
