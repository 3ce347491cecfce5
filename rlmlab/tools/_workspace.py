"""Workspace: the state tools act on, and the one place every tool call goes through."""

from __future__ import annotations

import inspect
import json
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any, Protocol

from rlmlab.errors import ToolError
from rlmlab.handles import BlobStore, StoreScope, encode_handles
from rlmlab.tools._registry import TOOLS, ToolRegistry, ToolSpec
from rlmlab.tools._schema import is_blobref_schema
from rlmlab.records import Record

__all__ = ["ToolCaps", "Workspace", "ToolObserver", "ToolCallRecord"]


@dataclass
class ToolCaps(Record):
    """Explicit caps of the bounded tools (characters unless stated)."""

    peek_max: int = 2000  # ctx_peek: largest n
    slice_max: int = 4000  # ctx_slice: largest excerpt, by characters
    slice_lines_max: int = 200  # ctx_slice: largest excerpt, by lines
    find_k_max: int = 100  # ctx_find: largest k
    snippet_chars: int = 80  # ctx_find: characters of context around each match
    pattern_max: int = 500  # ctx_find: longest regex; ast_query: longest s-expression
    captures_max: int = 4  # ast_query: captures shown per match (each clipped to snippet_chars)
    large_return_chars: int = 2000  # a result over this counts as a "large return" for the leakage meter
    mem_search_k_max: int = 20  # mem_search: largest k
    mem_get_max: int = 3  # mem_get: most ids per call
    mem_quote_max: int = 2000  # mem_quote: longest excerpt
    event_max_chars: int = 8000  # event_log: largest event, as JSON
    sparql_limit_max: int = 10000  # sparql_query: largest limit (rows kept in the result blob)
    sparql_preview_rows: int = 5  # sparql_query: rows shown in the preview
    sparql_query_max: int = 4000  # sparql_query: longest query, in characters
    tool_timeout_s: float = 10.0  # ctx_find's regex, ast_query, sparql_query: wall time of one call (seconds)
    tool_memory_mb: int = 1024  # ast_query, sparql_query: memory one call may add (their worker is killed past it)
    # What step code may add to the host's state through tools, per workspace (one run): the host keeps it in its
    # memory and files, outside the sandbox's scratch quota.
    blob_max_chars: int = 8_000_000  # blob: largest payload
    blob_quota_chars: int = 64_000_000  # blob: all new payloads of the workspace together
    event_log_quota_chars: int = 2_000_000  # event_log: all events of the workspace together, as JSON
    agenda_max: int = 200  # agenda: most items
    mem_add_max: int = 50  # mem_add: most calls


@dataclass(frozen=True)
class ToolCallRecord(Record):
    """One tool call as the leakage meter and the trajectory see it."""

    name: str
    arguments: dict[str, Any]
    result_chars: int
    error: str | None = None


class ToolObserver(Protocol):
    """Something that watches tool calls. Both methods are optional in practice (see :class:`Workspace`)."""

    def before_tool(self, name: str, arguments: dict[str, Any]) -> None: ...

    def after_tool(self, record: ToolCallRecord) -> None: ...


@dataclass
class Workspace:
    """Blob store, caps and registry; ``call`` is the single dispatch point for tool calls.

    ``store`` is a :class:`~rlmlab.handles.StoreScope`: the tools read only the blobs this workspace put or was
    granted (a bare BlobStore given here is wrapped in one). ``usage`` counts what its tools added to the host's
    state against the quotas in ``caps``.

    Observers see each call before it runs (and may raise ToolError to block
    it, which the Turing Protocol's pre-execution hooks do) and after it
    returns. Extra state used by later subsystems (memory bank, ontology
    graph, oracles) hangs off ``extras``.
    """

    store: StoreScope = field(default_factory=StoreScope)
    caps: ToolCaps = field(default_factory=ToolCaps)
    registry: ToolRegistry = field(default_factory=lambda: TOOLS)
    observers: list[Any] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)  # what tools added to the host's state (see charge)
    # Directories a tool may read a path beneath (rlmlab.tools._paths); None: a person's own namespace, whose
    # paths are read as named. An interpreter gives its step code the run's source tree and its scratch.
    path_roots: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.store, BlobStore):  # a bare store: this workspace reads what it puts or is granted
            self.store = StoreScope(self.store)

    def charge(self, what: str, amount: int, quota: int, unit: str = "characters") -> None:
        """Count ``amount`` against this workspace's ``quota`` for ``what`` (a ToolCaps field's name), or raise
        ToolError when it would go over; nothing is counted then."""
        used = self.usage.get(what, 0)
        if used + amount > quota:
            raise ToolError(f"{what}: this run has used {used} of its {quota} {unit} and this call needs {amount}; "
                            f"reuse what you stored or store less (ToolCaps.{what})")
        self.usage[what] = used + amount

    def bind_arguments(self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Map positional and keyword arguments to parameter names, or raise ToolError saying what is wrong."""
        sig = _signature(spec.func)
        try:
            bound = sig.bind(self, *args, **kwargs)
        except TypeError as exc:
            raise ToolError(f"{spec.name}: {exc}; signature is {spec.signature_line()}") from None
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop(next(iter(sig.parameters)))
        return arguments

    @staticmethod
    def raw_arguments(spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Positional arguments named by the signature (extras as ``_extra<i>``), then the keywords as given."""
        names = list(inspect.signature(spec.func).parameters)[1:]
        raw = {(names[i] if i < len(names) else f"_extra{i}"): v for i, v in enumerate(args)}
        raw.update(kwargs)
        return raw

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """Run tool ``name``; ToolError for bad arguments, RuntimeError if a tool breaks its own cap."""
        try:
            spec = self.registry.get(name)
        except KeyError as exc:
            raise ToolError(str(exc.args[0])) from None
        if any(hasattr(obs, "before_tool") for obs in self.observers):
            # Observers see the arguments as the caller gave them (unknown names included, defaults not filled),
            # so a pre-execution check can report every schema problem; they may raise ToolError to block.
            raw = self.raw_arguments(spec, args, kwargs)
            for obs in self.observers:
                if hasattr(obs, "before_tool"):
                    obs.before_tool(name, raw)
        arguments = self.bind_arguments(spec, args, kwargs)
        problem = type_problem(spec, arguments)
        if problem is not None:
            self._notify(ToolCallRecord(name, _preview_args(arguments), 0, problem))
            raise ToolError(problem)
        try:
            result = spec.func(self, **arguments)
        except ToolError as exc:
            self._notify(ToolCallRecord(name, _preview_args(arguments), 0, str(exc)))
            raise
        # characters as the model reads them (ensure_ascii would count one non-ASCII character as six)
        chars = len(json.dumps(encode_handles(result), default=str, ensure_ascii=False))
        cap = spec.result_cap(self.caps)
        if cap is not None and chars > cap:
            raise RuntimeError(f"tool {name} returned {chars} characters, over its registered cap of {cap}")
        self._notify(ToolCallRecord(name, _preview_args(arguments), chars))
        return result

    def _notify(self, record: ToolCallRecord) -> None:
        for obs in self.observers:
            if hasattr(obs, "after_tool"):
                obs.after_tool(record)

    def bound(self, name: str) -> Any:
        """A plain function calling tool ``name`` in this workspace (what the REPL namespace holds)."""
        spec = self.registry.get(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.call(spec.name, *args, **kwargs)

        call.__name__ = call.__qualname__ = name
        call.__doc__ = spec.func.__doc__
        params = list(inspect.signature(spec.func).parameters.values())[1:]
        call.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        return call


@lru_cache(maxsize=512)
def _signature(func: Any) -> inspect.Signature:
    """A tool function's signature, made once (``inspect.signature`` costs tens of microseconds a call)."""
    return inspect.signature(func)


_TYPE_KEYS = ("type", "anyOf", "items", "properties", "required", "const", "enum")


def _types_only(schema: Any) -> Any:
    """The parts of an argument schema that say what type a value has (bounds stay the tools' own checks, whose
    messages name the allowed range and the cap)."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k in ("type", "required", "const", "enum")}
    if "anyOf" in schema:
        out["anyOf"] = [_types_only(v) for v in schema["anyOf"]]
    if "items" in schema:
        out["items"] = _types_only(schema["items"])
    if "properties" in schema:
        out["properties"] = {name: _types_only(v) for name, v in schema["properties"].items()}
    return out


@lru_cache(maxsize=256)
def _type_validator(name: str, schema_json: str) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(_types_only(json.loads(schema_json)))


_JSON_TYPES = {str: ("string",), int: ("integer", "number"), float: ("number",), bool: ("boolean",),
               type(None): ("null",)}


def _plainly_allowed(schema: Any, value: Any) -> bool:
    """True if ``value`` is a str, int, float, bool or None and ``schema`` (or one branch of its anyOf) is only a
    "type" naming that JSON type; False whenever unsure (then jsonschema decides)."""
    if not isinstance(schema, dict):
        return False
    if "anyOf" in schema:
        return all(k not in schema for k in _TYPE_KEYS if k != "anyOf") and any(
            _plainly_allowed(s, value) for s in schema["anyOf"])
    named = schema.get("type")
    if named is None or any(k in schema for k in _TYPE_KEYS if k != "type"):  # the keys _types_only keeps
        return False
    kinds = _JSON_TYPES.get(type(value), ())
    return any(kind in (named if isinstance(named, list) else [named]) for kind in kinds)


def type_problem(spec: ToolSpec, arguments: dict[str, Any]) -> str | None:
    """None if every argument has the type the tool's JSON Schema gives it, else one line naming the first
    argument that does not (``ctx_find: pattern: expected a string, got 5``). Allowed values and ranges are
    left to the tool, whose message names them."""
    props = spec.schema.get("properties", {})
    if all(name in props and _plainly_allowed(props[name], value) for name, value in arguments.items()):
        return None  # every value is a JSON scalar of a type its schema names: jsonschema would agree
    validator = _type_validator(spec.name, json.dumps(spec.schema, sort_keys=True, default=str))
    instance = {k: encode_handles(v) for k, v in arguments.items()}
    try:
        error = next(iter(sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))), None)
    except TypeError:  # a value jsonschema cannot look at (an object of some class): the tool decides
        return None
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path) or "arguments"
    shown = repr(error.instance)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    if error.validator == "type":
        return f"{spec.name}: {where}: expected {_TYPE_NAMES.get(error.validator_value, error.validator_value)}, got {shown}"
    options = error.validator_value if error.validator == "anyOf" else []
    if options and all(isinstance(o, dict) and "type" in o for o in options):
        kinds = ["a BlobRef" if is_blobref_schema(o) else _TYPE_NAMES.get(o["type"], o["type"]) for o in options]
        return f"{spec.name}: {where}: expected {' or '.join(dict.fromkeys(kinds))}, got {shown}"
    return None  # a value of an allowed type but not an allowed value: the tool's own check says which


_TYPE_NAMES = {"integer": "an integer", "string": "a string", "number": "a number", "boolean": "True or False",
               "array": "a list", "object": "an object (a BlobRef for a handle)", "null": "None"}


def _preview_args(arguments: dict[str, Any], limit: int = 200) -> dict[str, Any]:
    """Arguments as recorded in logs: JSON-safe, long strings cut to ``limit`` characters."""
    out: dict[str, Any] = {}
    for k, v in encode_handles(arguments).items():
        if isinstance(v, str) and len(v) > limit:
            v = v[:limit] + f"... ({len(v)} chars)"
        out[k] = v
    return out
