"""One registry for every REPL tool: name, JSON Schema of its arguments, result cap."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

from rlmlab.tools._schema import schema_for

__all__ = ["ToolSpec", "ToolRegistry", "TOOLS", "tool"]

CapSpec = int | Callable[[Any], int] | None


@dataclass(frozen=True)
class ToolSpec:
    """A registered tool.

    ``func`` takes the :class:`~rlmlab.tools.Workspace` as its first argument;
    the schema covers the remaining arguments. ``cap`` bounds the size (in
    characters of JSON) of one result; it is an int, a function of the
    workspace's :class:`~rlmlab.tools.ToolCaps`, or ``None`` for a tool that is
    unbounded on purpose (``unbounded=True``, the naive tools of experiment E7).
    """

    name: str
    func: Callable[..., Any]
    description: str
    schema: dict[str, Any]
    cap: CapSpec
    group: str
    unbounded: bool = False

    def result_cap(self, caps: Any) -> int | None:
        if self.cap is None:
            return None
        return self.cap(caps) if callable(self.cap) else int(self.cap)

    def schema_for_caps(self, caps: Any) -> dict[str, Any]:
        """The argument schema with each ``x-cap`` bound turned into a ``maximum`` from ``caps``."""
        props = {}
        for name, prop in self.schema["properties"].items():
            prop = dict(prop)
            if "x-cap" in prop:
                prop["maximum"] = getattr(caps, prop.pop("x-cap"))
            props[name] = prop
        return {**self.schema, "properties": props}

    def signature_line(self) -> str:
        params = []
        for name, prop in self.schema["properties"].items():
            params.append(f"{name}={prop['default']!r}" if "default" in prop else name)
        return f"{self.name}({', '.join(params)})"


class ToolRegistry:
    """Tools by name. Registration checks the spec, so a bad tool fails at import, not at call."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}

    def register(self, spec: ToolSpec) -> ToolSpec:
        if not spec.name.isidentifier():
            raise ValueError(f"tool name {spec.name!r} is not a Python identifier")
        if spec.name in self._tools and self._tools[spec.name].func is not spec.func:
            raise ValueError(f"tool {spec.name!r} is already registered by {self._tools[spec.name].func!r}")
        if spec.cap is None and not spec.unbounded:
            raise ValueError(f"tool {spec.name!r}: declare a result cap, or unbounded=True for a naive tool")
        if not spec.description:
            raise ValueError(f"tool {spec.name!r}: the docstring's first line is its description; it is empty")
        self._tools[spec.name] = spec
        return spec

    def get(self, name: str) -> ToolSpec:
        try:
            return self._tools[name]
        except KeyError:
            raise KeyError(f"unknown tool {name!r}; registered: {', '.join(sorted(self._tools))}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(sorted(self._tools.values(), key=lambda s: (s.group, s.name)))

    def names(self) -> list[str]:
        return sorted(self._tools)

    def select(self, groups: set[str] | None = None, names: set[str] | None = None) -> "ToolRegistry":
        """A registry with the tools of the given groups and/or names (both None: all)."""
        sub = ToolRegistry()
        for spec in self:
            if (groups is None and names is None) or (groups and spec.group in groups) or (names and spec.name in names):
                sub._tools[spec.name] = spec
        return sub


TOOLS = ToolRegistry()


def tool(
    *,
    cap: CapSpec,
    group: str = "general",
    name: str | None = None,
    unbounded: bool = False,
    registry: ToolRegistry | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a tool function whose first parameter is the workspace."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        schema, summary = schema_for(func, skip=1)
        spec = ToolSpec(
            name=name or func.__name__,
            func=func,
            description=summary,
            schema=schema,
            cap=cap,
            group=group,
            unbounded=unbounded,
        )
        (registry or TOOLS).register(spec)
        func.tool_spec = spec  # type: ignore[attr-defined]
        return func

    return decorate
