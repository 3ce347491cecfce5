"""Handles, not payloads: BlobRef, the BlobStore behind it and the StoreScope a workspace reads it through."""

from rlmlab.handles._blobref import BLOBREF_TAG, BlobRef, encode_handles
from rlmlab.handles._checked import decode_handles
from rlmlab.handles._store import BlobStore, content_key
from rlmlab.handles._scope import StoreScope

__all__ = ["BlobRef", "BlobStore", "StoreScope", "content_key", "encode_handles", "decode_handles", "BLOBREF_TAG"]
