"""JSON Schema for a tool's arguments, derived from its type hints and docstring."""

from __future__ import annotations

import inspect
import re
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal, Union, get_args, get_origin

from rlmlab.handles import BLOBREF_TAG, BlobRef

__all__ = ["Bounds", "schema_for", "parse_docstring", "is_blobref_schema"]


@dataclass(frozen=True)
class Bounds:
    """Numeric bounds for an ``Annotated[int, Bounds(...)]`` parameter (inclusive).

    ``cap`` names the :class:`ToolCaps` field that is the maximum; the schema records it as ``x-cap`` and
    ``ToolSpec.schema_for_caps`` turns it into ``maximum`` for a workspace's caps.
    """

    minimum: float | None = None
    maximum: float | None = None
    cap: str | None = None


BLOBREF_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {BLOBREF_TAG: {"const": True}, "key": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["key"],
}

def is_blobref_schema(schema: Any) -> bool:
    """Whether an argument schema (or one ``anyOf`` option of it) is the BlobRef handle's."""
    return isinstance(schema, dict) and schema.get("type") == "object" and "key" in schema.get("properties", {})


_PRIMITIVES = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array"}


def _type_schema(tp: Any) -> dict[str, Any]:
    origin = get_origin(tp)
    if origin is Annotated:
        base, *meta = get_args(tp)
        schema = _type_schema(base)
        for m in meta:
            if isinstance(m, Bounds):
                if m.minimum is not None:
                    schema["minimum"] = m.minimum
                if m.maximum is not None:
                    schema["maximum"] = m.maximum
                if m.cap is not None:
                    schema["x-cap"] = m.cap
        return schema
    if origin is Literal:
        values = list(get_args(tp))
        return {"enum": values}
    if origin in (Union, types.UnionType):
        members = [a for a in get_args(tp) if a is not type(None)]
        nullable = len(members) < len(get_args(tp))
        options = [_type_schema(m) for m in members]
        if nullable:
            options.append({"type": "null"})
        return options[0] if len(options) == 1 else {"anyOf": options}
    if origin in (list, tuple, typing.Sequence) or tp in (list, tuple):
        args = get_args(tp)
        return {"type": "array", "items": _type_schema(args[0])} if args else {"type": "array"}
    if origin is dict:
        return {"type": "object"}
    if tp is BlobRef:
        return dict(BLOBREF_SCHEMA)
    if tp is Any:
        return {}
    if tp in _PRIMITIVES:
        return {"type": _PRIMITIVES[tp]}
    raise TypeError(f"no JSON Schema mapping for type {tp!r}")


_ARG_LINE = re.compile(r"^(\s+)(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")
_SECTIONS = {"Args:", "Arguments:", "Parameters:"}


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its first paragraph and its ``Args:`` descriptions."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    blank = next((i for i, line in enumerate(lines) if not line.strip()), len(lines))
    summary = " ".join(line.strip() for line in lines[:blank]).strip()
    args: dict[str, str] = {}
    in_args, indent, current = False, None, None
    for line in lines:
        if line.strip() in _SECTIONS:
            in_args, indent, current = True, None, None
            continue
        if not in_args or not line.strip():
            continue
        if not line.startswith(" "):  # the next section header ends Args
            in_args = False
            continue
        m = _ARG_LINE.match(line)
        if m and (indent is None or len(m.group(1)) == indent):
            indent, current = len(m.group(1)), m.group(2)
            args[current] = m.group(3).strip()
        elif current:
            args[current] = (args[current] + " " + line.strip()).strip()
    return summary, args


def schema_for(func: Callable[..., Any], skip: int = 0) -> tuple[dict[str, Any], str]:
    """The JSON Schema of ``func``'s parameters (after the first ``skip``) and its one-line description."""
    sig = inspect.signature(func)
    hints = typing.get_type_hints(func, include_extras=True)
    summary, arg_docs = parse_docstring(func.__doc__)
    props: dict[str, Any] = {}
    required: list[str] = []
    for i, (name, param) in enumerate(sig.parameters.items()):
        if i < skip:
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {func.__name__}: *args/**kwargs are not allowed (parameter {name!r})")
        if name not in hints:
            raise TypeError(f"tool {func.__name__}: parameter {name!r} has no type hint")
        prop = _type_schema(hints[name])
        if name in arg_docs:
            prop["description"] = arg_docs[name]
        if param.default is param.empty:
            required.append(name)
        else:
            prop["default"] = param.default
        props[name] = prop
    schema = {"type": "object", "properties": props, "required": required, "additionalProperties": False}
    return schema, summary
