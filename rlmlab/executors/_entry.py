"""``run_react``, ``run_scratchpad``, ``run_direct``: one keyword function per executor, made from its options.

``run_rlm``, the one a newcomer calls first, is written out with real parameters instead (``executors._rlm``), so
a reader and a type checker see them in its ``def``."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable

from rlmlab.executors._harness import RunEnv, StepLoop, execute
from rlmlab.executors._trajectory import Trajectory

__all__ = ["entry_point", "split_keywords"]

_ENV = [f.name for f in dataclasses.fields(RunEnv)]


def split_keywords(options_cls: type, kwargs: dict[str, Any], where: str) -> tuple[Any, RunEnv]:
    """(options, env) from one dict of keywords; TypeError naming what is unknown and what is accepted."""
    names = [f.name for f in dataclasses.fields(options_cls)]
    unknown = sorted(set(kwargs) - set(names) - set(_ENV))
    if unknown:
        raise TypeError(f"{where}() got unexpected keyword argument(s) {', '.join(unknown)}; "
                        f"it takes {', '.join(_ENV + names)}")
    if "lm" not in kwargs:
        raise TypeError(f"{where}() missing required keyword argument: 'lm'")
    options = options_cls(**{k: v for k, v in kwargs.items() if k in names})
    return options, RunEnv(**{k: v for k, v in kwargs.items() if k in _ENV})


def entry_point(loop_cls: type[StepLoop], doc: str) -> Callable[..., Trajectory]:
    """``run_<name>(query, context, *, lm, <RunEnv fields>, <options fields>) -> Trajectory`` for a step loop."""
    loop, where = loop_cls(), f"run_{loop_cls.name}"

    def run(query: str, context: Any, **kwargs: Any) -> Trajectory:
        options, env = split_keywords(loop_cls.options, kwargs, where)
        return execute(loop, query, context, options, env)

    params = [inspect.Parameter("query", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str),
              inspect.Parameter("context", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Any)]
    for f in [*dataclasses.fields(RunEnv), *dataclasses.fields(loop_cls.options)]:
        default = inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
        params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default))
    run.__signature__ = inspect.Signature(params, return_annotation=Trajectory)  # type: ignore[attr-defined]
    run.__name__ = run.__qualname__ = where
    run.__doc__ = doc
    run.__module__ = loop_cls.__module__
    return run
