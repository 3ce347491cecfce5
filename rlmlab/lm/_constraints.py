"""Constrained decoding: a GBNF grammar or a JSON Schema that the next completions must follow.

A constraint reaches the engine through the LM's options: ``make_lm("local", grammar=...)`` (or
``json_schema=...``) binds one to the LM for every call, and :func:`constrained` sets one for every call made
inside a ``with`` block, which is how the executors constrain each step (DSPy's request carries no
provider-specific keys, so a per-call keyword cannot reach the engine). Engines that can constrain (:class:`~rlmlab.lm.LlamaEngine`) say so with
``supports_constraints = True``; a LiteLLM model on a server that constrains (:class:`~rlmlab.lm.ServerLM`)
sends the constraint in each request's body; any other model ignores it, and :func:`can_constrain` lets a
caller say so once in its run's log.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from rlmlab.provenance import note_grammar
from rlmlab.errors import RLMLabError

__all__ = ["DecodingConstraint", "constrained", "active_constraint", "can_constrain", "GrammarCache", "GRAMMARS",
           "push_constraint",
           "pop_constraint"]


@dataclass(frozen=True)
class DecodingConstraint:
    """What the next completion must follow: a GBNF ``grammar`` or a ``json_schema`` (one of them)."""

    grammar: str | None = None
    json_schema: str | None = None  # the schema as JSON text (hashable, so grammars can be cached by it)

    def __post_init__(self) -> None:
        if (self.grammar is None) == (self.json_schema is None):
            raise ValueError("a constraint is a grammar or a json_schema, exactly one of them")

    @classmethod
    def of(cls, grammar: str | None = None,
           json_schema: dict[str, Any] | str | None = None) -> "DecodingConstraint | None":
        if grammar is None and json_schema is None:
            return None
        if json_schema is not None and not isinstance(json_schema, str):
            json_schema = json.dumps(json_schema, sort_keys=True)
        note_grammar(grammar if grammar is not None else json_schema)  # its hash, into the run's provenance
        return cls(grammar=grammar, json_schema=json_schema)


_ACTIVE: ContextVar[DecodingConstraint | None] = ContextVar("rlmlab_constraint", default=None)


@contextmanager
def constrained(grammar: str | None = None, json_schema: dict[str, Any] | str | None = None) -> Iterator[None]:
    """Constrain every LM call made in this block (this thread or task) to ``grammar`` or ``json_schema``."""
    token = _ACTIVE.set(DecodingConstraint.of(grammar, json_schema))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active_constraint(default: DecodingConstraint | None = None) -> DecodingConstraint | None:
    """The constraint for a request: the one set by :func:`constrained`, else the engine's ``default``."""
    current = _ACTIVE.get()
    return current if current is not None else default


def can_constrain(lm: Any, kind: str = "grammar") -> bool:
    """True when ``lm`` applies a ``kind`` constraint ("grammar" or "json_schema"): the embedded llama.cpp model,
    or a LiteLLM model whose server takes one (:class:`rlmlab.lm.ServerLM`); False otherwise."""
    engine = getattr(lm, "rlmlab_engine", None)
    if getattr(engine, "supports_constraints", False):
        return True
    return kind in (getattr(lm, "constrains", None) or ())

class GrammarCache:
    """Compiled grammars by constraint, built once (llama.cpp parses a GBNF text on construction); LRU-bounded."""

    def __init__(self, build: Any, size: int = 64):
        self._build, self._size = build, size
        self._items: OrderedDict[DecodingConstraint, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, constraint: DecodingConstraint) -> Any:
        with self._lock:
            if constraint in self._items:
                self._items.move_to_end(constraint)
                self.hits += 1
                return self._items[constraint]
        built = self._build(constraint)
        with self._lock:
            self.misses += 1
            self._items[constraint] = built
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return built


def push_constraint(grammar: str | None = None, json_schema: dict[str, Any] | str | None = None) -> Any:
    """Set a constraint for the calls that follow in this context; returns the token :func:`pop_constraint`
    takes (for callers that cannot use a ``with`` block, such as DSPy's module callbacks)."""
    return _ACTIVE.set(DecodingConstraint.of(grammar, json_schema))


def pop_constraint(token: Any) -> None:
    """Undo a :func:`push_constraint`."""
    _ACTIVE.reset(token)


def _build_grammar(constraint: DecodingConstraint) -> Any:
    from llama_cpp import LlamaGrammar

    try:
        if constraint.grammar is not None:
            return LlamaGrammar.from_string(constraint.grammar, verbose=False)
        return LlamaGrammar.from_json_schema(constraint.json_schema, verbose=False)
    except ValueError as exc:
        raise RLMLabError(f"grammar: llama.cpp could not parse it ({exc})") from None


GRAMMARS = GrammarCache(_build_grammar)  # shared by every LlamaEngine: a grammar is built once per process
