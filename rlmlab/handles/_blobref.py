"""BlobRef: a handle to a payload held in a BlobStore.

The REPL shows ``BlobRef(key='graph_001', n=1664)`` instead of the payload,
so the payload never leaks into the model's iterative prompt. This module is
deliberately dependency-free: the RLM worker subprocess imports it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BlobRef", "encode_handles", "decode_handles", "BLOBREF_TAG"]

# Key used when a BlobRef crosses a JSON boundary (host <-> REPL worker).
BLOBREF_TAG = "__blobref__"


class BlobRef:
    """A reference to a stored payload: its key and its length ``n`` in characters."""

    __slots__ = ("key", "n")

    def __init__(self, key: str, n: int):
        self.key, self.n = key, n

    def __repr__(self) -> str:
        return f"BlobRef(key={self.key!r}, n={self.n})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BlobRef) and (self.key, self.n) == (other.key, other.n)

    def __hash__(self) -> int:
        return hash((self.key, self.n))

    def to_json(self) -> dict[str, Any]:
        return {BLOBREF_TAG: True, "key": self.key, "n": self.n}


def encode_handles(value: Any) -> Any:
    """Replace every BlobRef inside ``value`` (dicts, lists, tuples) with its tagged JSON form."""
    if isinstance(value, BlobRef):
        return value.to_json()
    if isinstance(value, dict):
        return {k: encode_handles(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_handles(v) for v in value]
    return value


def decode_handles(value: Any) -> Any:
    """Inverse of :func:`encode_handles`: tagged dicts become BlobRef objects again."""
    if isinstance(value, dict):
        if value.get(BLOBREF_TAG) is True and isinstance(value.get("key"), str):
            n = value.get("n", 0)
            # a handle comes from step code: a malformed one is that code's error (rlmlab.handles.decode_handles,
            # the host's entry, makes it a ToolError; this file stays free of rlmlab imports for the Pyodide copy)
            if isinstance(n, bool) or not isinstance(n, int):
                raise ValueError(f"handle {value['key']!r}: n is {n!r}; expected an int (the blob's length)")
            return BlobRef(value["key"], n)
        return {k: decode_handles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_handles(v) for v in value]
    return value
