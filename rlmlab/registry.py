"""One registry core for every kind of plug-in (judges, extractors, retrievers, LM providers, executors, ...).

A plug-in is a factory ``factory(**options) -> plugin`` registered under a name. ``make(name, **options)``
checks the options against the plug-in's JSON Schema (given at registration, or derived from the factory's
signature as the tool registry does), raises :class:`~rlmlab.errors.ConfigError` listing what is registered or
accepted, and tags what it made with a :class:`PluginRef` (kind, name, options) so a run's files say exactly
what ran. This module is a leaf: it imports no rlmlab package.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Generic, Literal, TypeVar, Union, get_args, get_origin

from rlmlab.errors import ConfigError
from rlmlab.provenance import note_plugin

__all__ = ["Registry", "PluginRef", "options_schema", "plugin_ref", "json_safe"]

F = TypeVar("F", bound=Callable[..., Any])
_NAME = re.compile(r"^[A-Za-z.][A-Za-z0-9_.:\-]*$")  # ".ttl": loaders are registered by file suffix
_JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array", tuple: "array",
               dict: "object", type(None): "null"}


@dataclass(frozen=True)
class PluginRef:
    """What made a plug-in: its kind, registered name and the options it was made with (JSON-safe)."""

    kind: str
    name: str
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PluginRef:
        return cls(data["kind"], data["name"], dict(data.get("options") or {}))


def plugin_ref(obj: Any) -> PluginRef | None:
    """The :class:`PluginRef` a registry tagged ``obj`` with, or None."""
    return getattr(obj, "plugin_ref", None)


def _type_schema(annotation: Any) -> dict[str, Any] | None:
    """A JSON Schema for a parameter annotation, or None when it says nothing JSON can check (an object)."""
    if isinstance(annotation, str):
        return None  # an unresolved forward reference
    origin = get_origin(annotation)
    if origin is Literal:
        return {"enum": list(get_args(annotation))}
    if origin in (Union, types.UnionType):
        parts = [_type_schema(a) for a in get_args(annotation)]
        return None if any(p is None for p in parts) else {"anyOf": parts}
    base = origin or annotation
    if base in _JSON_TYPES:
        return {"type": _JSON_TYPES[base]}
    return None


def options_schema(factory: Callable[..., Any]) -> dict[str, Any]:
    """The JSON Schema of a factory's keyword options, from its signature: one property per parameter (typed
    where the annotation is a JSON type), ``required`` for those without a default, no other keys unless the
    factory takes ``**options``."""
    sig = inspect.signature(factory)
    try:  # a class's options are its __init__'s parameters
        hints = typing.get_type_hints(factory.__init__ if inspect.isclass(factory) else factory)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: that option goes unchecked
        hints = {}
    props: dict[str, Any] = {}
    required: list[str] = []
    extra = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            extra = True
            continue
        if p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY):
            continue
        prop = _type_schema(hints.get(p.name, p.annotation)) if p.annotation is not p.empty else None
        props[p.name] = dict(prop or {})
        if p.default is p.empty:
            required.append(p.name)
        elif isinstance(p.default, (str, int, float, bool, type(None))):
            props[p.name]["default"] = p.default
    schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": extra}
    if required:
        schema["required"] = required
    return schema


def json_safe(value: Any) -> Any:
    """``value`` with everything JSON cannot hold (an LM, a store) as its repr, lists and dicts kept."""
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    return repr(value)


class Registry(Generic[F]):
    """Factories of one kind of plug-in by name; ``make(name, **options)`` builds one.

    Registering a second factory under a name is an error (``replace=True`` to override on purpose).
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._factories: dict[str, Callable[..., Any]] = {}
        self._schemas: dict[str, dict[str, Any]] = {}

    def register(self, name: str, factory: F | None = None, *, schema: dict[str, Any] | None = None,
                 replace: bool = False) -> Any:
        """Register ``factory`` under ``name`` (as a decorator when ``factory`` is omitted). ``schema`` is the
        JSON Schema of its options; by default it is derived from the factory's signature."""

        def decorate(f: F) -> F:
            if not isinstance(name, str) or not _NAME.match(name):
                raise ValueError(f"{self.kind} name {name!r} is not allowed; use letters, digits, _ . : -")
            if name in self._factories and self._factories[name] is not f and not replace:
                raise ValueError(f"{self.kind} {name!r} is already registered by {self._factories[name]!r}")
            self._factories[name] = f
            if schema is not None:
                self._schemas[name] = schema
            else:
                self._schemas.pop(name, None)
            return f

        return decorate(factory) if factory is not None else decorate

    def unregister(self, name: str) -> None:
        self._factories.pop(name, None)
        self._schemas.pop(name, None)

    def factory(self, name: str) -> Callable[..., Any]:
        """The factory registered as ``name``; ConfigError naming the registered ones if unknown."""
        try:
            return self._factories[name]
        except (KeyError, TypeError):
            raise ConfigError(f"{self.kind}: unknown {name!r}; registered: {', '.join(self.names()) or '(none)'}") from None

    def schema(self, name: str) -> dict[str, Any]:
        """The JSON Schema of ``name``'s options."""
        factory = self.factory(name)
        if name not in self._schemas:
            self._schemas[name] = options_schema(factory)
        return self._schemas[name]

    def check(self, name: str, options: dict[str, Any]) -> None:
        """ConfigError naming the first option of ``options`` that ``name`` does not accept or whose type is wrong."""
        schema = self.schema(name)
        props = schema.get("properties", {})
        if not schema.get("additionalProperties", True):
            unknown = sorted(set(options) - set(props))
            if unknown:
                raise ConfigError(f"{self.kind} {name!r}: unknown option(s) {', '.join(unknown)}; "
                                  f"it takes {', '.join(props) or 'no options'}")
        missing = [k for k in schema.get("required", []) if k not in options]
        if missing:
            raise ConfigError(f"{self.kind} {name!r}: missing option(s) {', '.join(missing)}")
        import jsonschema

        for key, value in options.items():
            prop = {k: v for k, v in props.get(key, {}).items() if k != "default"}
            if not prop or not isinstance(value, (str, int, float, bool, list, dict, type(None))):
                continue
            error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(prop).iter_errors(value))
            if error is not None:
                raise ConfigError(f"{self.kind} {name!r}: option {key}: {error.message}")

    def make(self, name: str, **options: Any) -> Any:
        """Build the plug-in registered as ``name`` with ``options``; ConfigError for an unknown name, an
        unknown option or an option of the wrong type. The result carries ``plugin_ref`` when it can."""
        factory = self.factory(name)
        self.check(name, options)
        try:
            made = factory(**options)
        except TypeError as exc:
            raise ConfigError(f"{self.kind} {name!r}: bad options {sorted(options)}: {exc}") from None
        ref = PluginRef(self.kind, name, json_safe(options))
        note_plugin(ref)  # into the provenance of the run being recorded, if any
        try:
            object.__setattr__(made, "plugin_ref", ref)
        except (AttributeError, TypeError):
            pass  # a plug-in that cannot carry attributes (a builtin, a slotted class)
        return made

    def accepts(self, name: str, option: str) -> bool:
        """Whether ``name``'s factory takes the keyword ``option`` (e.g. an ``lm`` only LLM-backed plug-ins need)."""
        schema = self.schema(name)
        return option in schema.get("properties", {}) or bool(schema.get("additionalProperties", True))

    def names(self) -> list[str]:
        return sorted(self._factories)

    def describe(self) -> dict[str, str]:
        """Name -> first line of the factory's docstring (for CLI listings)."""
        return {n: (f.__doc__ or "").strip().splitlines()[0] if (f.__doc__ or "").strip() else ""
                for n, f in sorted(self._factories.items())}

    def items(self) -> list[tuple[str, Callable[..., Any]]]:
        """(name, factory) in registration order (for plug-ins that run in turn, such as the RTS rules)."""
        return list(self._factories.items())

    # A registry reads as a mapping of name -> factory (``VALIDATORS[name]``, ``VALIDATORS.get(name)``); setting
    # or deleting an entry replaces a registration (what a test's monkeypatch.setitem does).
    def __getitem__(self, name: str) -> Callable[..., Any]:
        return self._factories[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self._factories.get(name, default)

    def __setitem__(self, name: str, factory: Callable[..., Any]) -> None:
        self.register(name, factory, replace=True)

    def __delitem__(self, name: str) -> None:
        del self._factories[name]
        self._schemas.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._factories)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self.names())})"
