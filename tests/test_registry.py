"""Walk every registered tool: its schema is valid JSON Schema matching its signature, its cap is declared."""

import inspect

import jsonschema
import pytest

from rlmlab.tools import TOOLS, ToolCaps, ToolRegistry, tool
from rlmlab.tools._schema import parse_docstring

EXPECTED = {"blob", "ctx_stats", "ctx_peek", "ctx_slice", "ctx_find"}


def test_expected_tools_registered():
    assert EXPECTED <= set(TOOLS.names())


@pytest.mark.parametrize("spec", list(TOOLS), ids=lambda s: s.name)
def test_every_tool_schema_and_cap(spec):
    jsonschema.Draft202012Validator.check_schema(spec.schema)
    assert spec.schema["type"] == "object" and spec.schema["additionalProperties"] is False
    params = list(inspect.signature(spec.func).parameters.values())[1:]
    assert list(spec.schema["properties"]) == [p.name for p in params]
    assert spec.schema["required"] == [p.name for p in params if p.default is p.empty]
    for name, prop in spec.schema["properties"].items():
        assert prop.get("description"), f"{spec.name}.{name} is undocumented"
    cap = spec.result_cap(ToolCaps())
    assert spec.unbounded or (isinstance(cap, int) and cap > 0)
    assert spec.description and not spec.description.endswith(":")


def test_schema_carries_types_enums_bounds_and_defaults():
    s = TOOLS.get("ctx_slice").schema["properties"]
    assert s["unit"] == {"enum": ["chars", "lines"], "default": "chars", "description": s["unit"]["description"]}
    assert s["start"]["type"] == "integer" and s["start"]["minimum"] == 0
    peek = TOOLS.get("ctx_peek").schema
    validator = jsonschema.Draft202012Validator(peek)
    assert not list(validator.iter_errors({"ref": "k", "n": 5}))
    assert not list(validator.iter_errors({"ref": {"__blobref__": True, "key": "k", "n": 3}}))
    assert {e.validator for e in validator.iter_errors({"ref": 3, "n": -1, "extra": 1})} >= {
        "anyOf", "minimum", "additionalProperties"}


def test_registration_rejects_undeclared_cap_and_missing_hints():
    reg = ToolRegistry()
    with pytest.raises(ValueError, match="declare a result cap"):
        @tool(cap=None, registry=reg)
        def naive(ws, x: str) -> str:
            """Return x."""
            return x
    with pytest.raises(TypeError, match="parameter 'x' has no type hint"):
        @tool(cap=10, registry=reg)
        def untyped(ws, x):
            """Return x."""
            return x

    @tool(cap=None, unbounded=True, registry=reg)
    def full_payload(ws, x: str) -> str:
        """Return the whole payload (a naive tool for experiment E7)."""
        return x

    assert reg.get("full_payload").result_cap(ToolCaps()) is None


def test_docstring_parser():
    summary, args = parse_docstring('''Do a thing.

        Args:
            a: first
               continued.
            b (int): second.
        Returns:
            nothing.
        ''')
    assert summary == "Do a thing." and args == {"a": "first continued.", "b": "second."}


def test_select_builds_a_subset_registry():
    sub = TOOLS.select(names={"ctx_peek", "blob"})
    assert sub.names() == ["blob", "ctx_peek"]
    assert TOOLS.select(groups={"context"}).names() == sorted(EXPECTED)
    assert TOOLS.select().names() == TOOLS.names()
