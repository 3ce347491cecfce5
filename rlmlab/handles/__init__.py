"""Handles, not payloads: BlobRef, the BlobStore behind it and the StoreScope a workspace reads it through.

The store (sqlite3) loads on first use: the REPL worker imports this package for BlobRef and the handle codecs
alone, and its start time counts (one per run).
"""

from typing import Any

from rlmlab.handles._blobref import BLOBREF_TAG, BlobRef, encode_handles
from rlmlab.handles._checked import decode_handles

__all__ = ["BlobRef", "BlobStore", "StoreScope", "content_key", "encode_handles", "decode_handles", "BLOBREF_TAG"]


def __getattr__(name: str) -> Any:
    if name in ("BlobStore", "content_key"):
        from rlmlab.handles import _store

        return getattr(_store, name)
    if name == "StoreScope":
        from rlmlab.handles._scope import StoreScope

        return StoreScope
    raise AttributeError(f"module 'rlmlab.handles' has no attribute {name!r}")
