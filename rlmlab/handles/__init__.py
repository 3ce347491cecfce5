"""Handles, not payloads: BlobRef and the BlobStore behind it."""

from rlmlab.handles._blobref import BLOBREF_TAG, BlobRef, encode_handles
from rlmlab.handles._checked import decode_handles
from rlmlab.handles._store import BlobStore, content_key

__all__ = ["BlobRef", "BlobStore", "content_key", "encode_handles", "decode_handles", "BLOBREF_TAG"]
