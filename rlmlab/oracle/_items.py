"""The records the tree-sitter oracle extracts (functions, structs, enums, impls, traits, error-pattern counts)
and the matches of an s-expression query."""

from __future__ import annotations

from dataclasses import dataclass, field

from rlmlab.errors import RLMLabError
from rlmlab.oracle._verdicts import normalise_ws
from rlmlab.records import Record

__all__ = ["AstQueryError", "Param", "FunctionInfo", "FieldInfo", "StructInfo", "VariantInfo", "EnumInfo",
           "ImplInfo", "TraitInfo", "ErrorPatternCounts", "Capture", "AstMatch"]


class AstQueryError(RLMLabError, ValueError):
    """An invalid tree-sitter query; the message quotes tree-sitter and points at the position."""

    def __init__(self, query: str, message: str, row: int | None = None, column: int | None = None):
        self.query, self.ts_message, self.row, self.column = query, message, row, column
        text = f"invalid tree-sitter query: {message}"
        if row is not None and column is not None:
            lines = query.splitlines() or [""]
            if row < len(lines):
                text += f"\n  {lines[row]}\n  {' ' * column}^ (line {row + 1}, column {column + 1})"
        super().__init__(text)


@dataclass(frozen=True)
class Param:
    name: str  # "self" for a self parameter, the pattern text otherwise
    type: str | None  # None for `self`, `&self`, `&mut self`


@dataclass(frozen=True)
class FunctionInfo(Record):
    line: int
    name: str
    params: str  # the parameter list as written, whitespace normalised, without parentheses
    parameters: tuple[Param, ...]
    return_type: str | None
    is_async: bool
    is_unsafe: bool
    is_const: bool
    visibility: str | None  # "pub", "pub(crate)", ... or None for private
    enclosing: str | None  # "impl Display for Foo<T>", "impl Foo", "trait Read", or None
    has_body: bool  # False for a trait method declaration without a default body
    signature: str  # everything before the body, whitespace normalised
    from_macro: str | None = None  # the item-level macro whose body holds it ("cfg_rt", "cfg_rt > cfg_fs")


@dataclass(frozen=True)
class FieldInfo:
    name: str  # field name, or its index "0", "1" in a tuple struct
    type: str
    visibility: str | None


@dataclass(frozen=True)
class StructInfo(Record):
    line: int
    name: str
    visibility: str | None
    kind: str  # "named", "tuple" or "unit"
    fields: tuple[FieldInfo, ...]
    from_macro: str | None = None


@dataclass(frozen=True)
class VariantInfo:
    name: str
    kind: str  # "unit", "tuple" or "named"
    fields: tuple[FieldInfo, ...]


@dataclass(frozen=True)
class EnumInfo(Record):
    line: int
    name: str
    visibility: str | None
    variants: tuple[VariantInfo, ...]
    from_macro: str | None = None


@dataclass(frozen=True)
class ImplInfo(Record):
    line: int
    type: str  # the implementing type as written ("Foo<T>")
    type_name: str  # its last path segment without generics ("Foo")
    trait: str | None  # the trait as written ("fmt::Display"), None for an inherent impl
    trait_name: str | None  # its last path segment without generics ("Display")
    negative: bool  # impl !Send for Foo
    methods: tuple[str, ...]
    from_macro: str | None = None
    is_unsafe: bool = False  # unsafe impl Send for Foo


@dataclass(frozen=True)
class TraitInfo(Record):
    line: int
    name: str
    visibility: str | None
    supertraits: str | None  # "Sized + Send" as written after the colon
    methods: tuple[str, ...]
    from_macro: str | None = None


@dataclass(frozen=True)
class ErrorPatternCounts(Record):
    result_types: int  # Result, io::Result<T>, fmt::Result, crate::Result<T> in type position
    question_marks: int  # the ? operator
    ok_err_match_arms: int  # match arms whose pattern is Ok(..) or Err(..)
    unwrap_calls: int  # .unwrap()
    expect_calls: int  # .expect(..)
    panic_macros: int  # panic!, unreachable!, todo!, unimplemented!


@dataclass(frozen=True)
class Capture:
    text: str
    line: int
    column: int  # 1-based


@dataclass(frozen=True)
class AstMatch(Record):
    """One query match: the pattern index, the first line it covers and its named captures."""

    pattern: int
    line: int
    captures: dict[str, list[Capture]] = field(default_factory=dict)

    def format(self, width: int = 80) -> str:
        parts = []
        for name, caps in self.captures.items():
            for cap in caps:
                text = normalise_ws(cap.text)
                parts.append(f"@{name}={text[:width] + ('…' if len(text) > width else '')}")
        return f"{self.line}: " + "  ".join(parts)
