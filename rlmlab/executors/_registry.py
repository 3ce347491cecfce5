"""Executors by name: "rlm", "react", "scratchpad", "direct", each called the way :func:`run_rlm` is.

``EXECUTORS.make("scratchpad", history_k=2)`` (or :func:`make_executor`)
returns an :class:`Executor`: ``executor(query, context, lm=lm, ...)`` runs
one task and returns a :class:`Trajectory` whose ``executor`` field names it.
Options are checked when the executor is made, so a typo in an experiment
config fails before any task runs. ``trace`` (a :class:`ContextTrace` to
follow one run live) is accepted per call only, never as a bound option.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rlmlab.executors._direct import run_direct
from rlmlab.executors._react import run_react
from rlmlab.executors._rlm import run_rlm
from rlmlab.executors._scratchpad import run_scratchpad
from rlmlab.executors._trajectory import Trajectory
from rlmlab.registry import Registry, json_safe

__all__ = ["EXECUTORS", "Executor", "make_executor", "register_executor"]

EXECUTORS: Registry = Registry("executor")

# Given per task, never bound as options: a bound trace would collect the events of every task it runs.
_CALL_ARGS = ("query", "context", "trace")


@dataclass(frozen=True)
class Executor:
    """A registered executor with some keywords bound: ``executor(query, context, **kwargs) -> Trajectory``.

    Keywords given at the call override the bound ``options``.
    """

    name: str
    run: Callable[..., Trajectory]
    options: dict[str, Any] = field(default_factory=dict)

    def __call__(self, query: str, context: Any, **kwargs: Any) -> Trajectory:
        traj = self.run(query, context, **{**self.options, **kwargs})
        traj.executor = self.name
        return traj

    def to_dict(self) -> dict[str, Any]:
        """Name and bound options, for a run's resolved config (objects such as an LM as their repr)."""
        return {"name": self.name, "options": json_safe(self.options)}


def _options_of(run: Callable[..., Any]) -> list[inspect.Parameter]:
    """The keywords an executor may have bound: all of ``run``'s keyword-only parameters but the per-call ones,
    each optional (``lm`` too: it may be given at the call instead)."""
    params = inspect.signature(run).parameters.values()
    return [p.replace(default=None) if p.default is p.empty else p
            for p in params if p.name not in _CALL_ARGS and p.kind is p.KEYWORD_ONLY]


def register_executor(name: str) -> Callable[[Callable[..., Trajectory]], Callable[..., Trajectory]]:
    """Decorator: register ``run(query, context, *, lm, ...) -> Trajectory`` as executor ``name``.

    Its keyword-only parameters are the options ``EXECUTORS.make(name, **options)`` accepts.
    """

    def decorate(run: Callable[..., Trajectory]) -> Callable[..., Trajectory]:
        def factory(**options: Any) -> Executor:
            return Executor(name, run, dict(options))

        factory.__doc__ = run.__doc__
        # The options schema EXECUTORS.make checks (unknown options, types) and EXECUTORS.accepts reads
        factory.__signature__ = inspect.Signature(_options_of(run))  # type: ignore[attr-defined]
        EXECUTORS.register(name)(factory)
        return run

    return decorate


register_executor("rlm")(run_rlm)
register_executor("react")(run_react)
register_executor("scratchpad")(run_scratchpad)
register_executor("direct")(run_direct)


def make_executor(name: str, **options: Any) -> Executor:
    """The executor registered as ``name`` with ``options`` bound; ConfigError naming the registered executors
    for an unknown name, naming the accepted options for an unknown option."""
    return EXECUTORS.make(name, **options)
