"""One small registry class for the memory policies, so every kind of plug-in is looked up the same way.

Each kind (judges, extractors, consolidators, forgetters, retrieval policies, packers) has its own
``PolicyRegistry``; a plug-in is a factory ``factory(**options) -> policy`` registered under a name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from rlmlab.errors import ConfigError

__all__ = ["PolicyRegistry"]

F = TypeVar("F", bound=Callable[..., Any])


class PolicyRegistry(Generic[F]):
    """Factories of one kind of plug-in by name; ``make(name, **options)`` builds one."""

    def __init__(self, kind: str):
        self.kind = kind
        self._factories: dict[str, Callable[..., Any]] = {}

    def register(self, name: str) -> Callable[[F], F]:
        """Decorator: register ``factory`` under ``name``; a second factory under one name is an error."""

        def decorate(factory: F) -> F:
            if not name.isidentifier():
                raise ValueError(f"{self.kind} name {name!r} is not an identifier")
            if name in self._factories and self._factories[name] is not factory:
                raise ValueError(f"{self.kind} {name!r} is already registered by {self._factories[name]!r}")
            self._factories[name] = factory
            return factory

        return decorate

    def make(self, name: str, **options: Any) -> Any:
        """Build the plug-in registered as ``name``; ConfigError naming the registered ones if unknown."""
        try:
            factory = self._factories[name]
        except KeyError:
            raise ConfigError(f"{self.kind}: unknown {name!r}; registered: {', '.join(sorted(self._factories))}") from None
        try:
            return factory(**options)
        except TypeError as exc:
            raise ConfigError(f"{self.kind} {name!r}: bad options {sorted(options)}: {exc}") from None

    def factory(self, name: str) -> Callable[..., Any]:
        """The factory registered as ``name``; ConfigError naming the registered ones if unknown."""
        try:
            return self._factories[name]
        except KeyError:
            raise ConfigError(f"{self.kind}: unknown {name!r}; registered: {', '.join(sorted(self._factories))}") from None

    def accepts(self, name: str, option: str) -> bool:
        """Whether ``name``'s factory takes the keyword ``option`` (e.g. an ``lm`` only LLM-backed plug-ins need)."""
        params = inspect.signature(self.factory(name)).parameters
        return option in params or any(p.kind is p.VAR_KEYWORD for p in params.values())

    def names(self) -> list[str]:
        return sorted(self._factories)

    def describe(self) -> dict[str, str]:
        """Name -> first line of the factory's docstring (for CLI listings)."""
        return {n: (f.__doc__ or "").strip().splitlines()[0] if f.__doc__ else "" for n, f in sorted(self._factories.items())}

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __repr__(self) -> str:
        return f"PolicyRegistry({self.kind!r}: {', '.join(self.names())})"
