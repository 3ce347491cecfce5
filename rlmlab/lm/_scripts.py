"""Named scripts for the scripted LM, so a command line or a notebook can say ``--lm scripted:probe``.

A named script is a callable ``script(messages) -> response`` that reads which output fields the DSPy
prompt asks for and answers deterministically. ``probe`` is a minimal agent for smoke runs (CI
executes the experiment notebooks with it): in a code-writing step it measures the context once, then
SUBMITs "unknown"; a ReAct step finishes at once; any other prompt (judge, extractor) gets "[]".
``arith`` is a teacher-learner learner for the user-guide notebooks: it evaluates "What is <arithmetic>?"
exactly, except that its first answer to a product is 10 too high (a reprompt fixes it); a word problem
gets its first number, hedged, whatever the turn. ``solver`` is ``probe`` that computes a bare "What is A op B?"
query in code (``answer = A op B``), so a smoke run of a learning experiment has successes to learn from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rlmlab.registry import Registry
from rlmlab.errors import RLMLabError

__all__ = ["SCRIPTS", "script_named", "output_fields"]

_FIELDS = re.compile(r"Your output fields are:\n(.*?)(?:\n\n|All interactions)", re.S)
_NAME = re.compile(r"^\d+\. `(\w+)`", re.M)
PROBE_STEP = "print(len(str(context)))"


def output_fields(messages: list[dict[str, str]]) -> list[str]:
    """The output field names a DSPy ChatAdapter prompt asks for ([] for a plain prompt)."""
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    found = _FIELDS.search(system)
    return _NAME.findall(found.group(1)) if found else []


def _probe(messages: list[dict[str, str]]) -> str | dict[str, Any]:
    fields = output_fields(messages)
    if not fields:
        return "[]"
    text = "\n".join(m["content"] for m in messages[1:])
    out: dict[str, Any] = {}
    for name in fields:
        if name == "code":
            out[name] = PROBE_STEP if PROBE_STEP not in text else "SUBMIT(answer='unknown')"
        elif name == "next_tool_name":
            out[name] = "finish"
        elif name == "next_tool_args":
            out[name] = {}
        elif name == "answer":
            out[name] = "unknown"
        else:
            out[name] = "probe step"
    return out


# the RLM prompt shows the query as a REPL variable with a preview
_QUERY = re.compile(r"Variable: `query`.*?Preview:\n\s*```\n\s*(.*?)\n", re.S)
_BARE = re.compile(r"What is (-?\d+(?:\.\d+)?) ([-+*/]) (-?\d+(?:\.\d+)?)\?")


def _solver(messages: list[dict[str, str]]) -> str | dict[str, Any]:
    out = _probe(messages)
    user = next((m["content"] for m in messages if m.get("role") == "user"), "")
    found = _QUERY.search(user)
    bare = _BARE.fullmatch(found.group(1).strip()) if found else None
    if isinstance(out, dict) and "code" in out and bare:
        out["code"] = f"answer = {bare.group(1)} {bare.group(2)} {bare.group(3)}\nSUBMIT(answer=answer)"
    return out


def _arith(messages: list[dict[str, str]]) -> str:
    from fractions import Fraction

    from rlmlab.numbers import format_number, solve_arithmetic  # the demo simulator's exact arithmetic

    users = [m["content"] for m in messages if m.get("role") == "user"]
    question = users[0].strip() if users else ""
    turn = sum(m.get("role") == "assistant" for m in messages)
    value = solve_arithmetic(question)
    if value is not None:
        if turn == 0 and "*" in question:
            return f"I multiply and carry.\nAnswer: {format_number(Fraction(value) + 10)}"
        return f"{question.removeprefix('What is ').rstrip('?')} = {value}.\nAnswer: {value}"
    first = re.search(r"-?\d+(?:\.\d+)?", question)
    return f"I am not sure; maybe {first.group(0) if first else 0}.\nAnswer: {first.group(0) if first else 0}"


def _fail(messages: list[dict[str, str]]) -> str:
    """Every call fails, as an unreachable server or a wrong model name does: for testing the error paths."""
    raise RLMLabError("scripted:fail: this LM fails every call (no server answered)")


# name -> script(messages) -> reply; ``make_lm("scripted:<name>")``
SCRIPTS: Registry = Registry("named script")
for _name, _script in (("probe", _probe), ("arith", _arith), ("fail", _fail), ("solver", _solver)):
    SCRIPTS.register(_name, _script)


def script_named(name: str) -> Callable[[list[dict[str, str]]], str | dict[str, Any]]:
    if name not in SCRIPTS:
        raise ValueError(f"scripted LM: no script named {name!r}; named scripts: {', '.join(SCRIPTS.names())}, "
                         "or pass script=[...]")
    return SCRIPTS.factory(name)
