"""Errors of the memory store. Each subclasses ValueError where a bad value is the cause."""

from __future__ import annotations

from rlmlab.errors import DatabaseBusyError, RLMLabError

__all__ = ["MemoryStoreError", "ItemValidationError", "PackError", "StoreBusyError"]


class MemoryStoreError(RLMLabError):
    """The memory database cannot be used as asked (unknown schema version, unknown item id)."""


class ItemValidationError(MemoryStoreError, ValueError):
    """A memory item field (or a search argument) is invalid. ``field`` names it; the message says what is allowed."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


class PackError(MemoryStoreError, ValueError):
    """A pack file line is malformed; the message starts ``path:line:``."""


class StoreBusyError(MemoryStoreError, DatabaseBusyError):
    """Another process held the memory database's write lock for the whole busy timeout."""
