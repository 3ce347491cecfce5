"""StoreScope: a BlobStore as one workspace sees it. A blob key is a capability there, not a name to guess.

A run's step code reads a blob only when the run was given it or made it: its context (put by the host), what its
tools returned, what it stored itself. Any other key of the store (another run's context in a shared ``--store``,
a notebook's other blobs) is "unknown" to it, and the error lists only the keys it holds. A human's own namespace
(``rlmlab repl``, the IPython extension, ``from rlmlab import blob``) is ``open``: it sees the whole store; a model
run started from it gets a closed :meth:`child` that holds the run's context and what the run makes.
"""

from __future__ import annotations

import threading
from typing import Any

from rlmlab.errors import ToolError
from rlmlab.handles._blobref import BlobRef
from rlmlab.handles._store import BlobStore, unknown_key

__all__ = ["StoreScope"]


class StoreScope:
    """The keys of ``base`` that one workspace may read: those put through it or granted to it (all, if ``open``).

    Puts go to ``base`` (the same keys and rules as :meth:`BlobStore.put`) and grant the key. ``get`` of a key not
    held is a ToolError that names only held keys, whether or not ``base`` has it. A :meth:`child` scope's puts
    are granted to its parent too, so whoever started a run can read what the run made.
    """

    def __init__(self, base: BlobStore | None = None, *, open: bool = False, parent: StoreScope | None = None):
        self.base = base if base is not None else BlobStore()
        self.open = open
        self.parent = parent
        self._held: set[str] = set()
        self._lock = threading.Lock()

    @property
    def path(self) -> Any:
        return self.base.path

    def child(self) -> StoreScope:
        """A closed scope over the same store for a run started from this one (it holds nothing yet)."""
        return StoreScope(self.base, parent=self)

    def grant(self, ref: BlobRef | str) -> None:
        """Let this scope (and its parents) read ``ref``: the host hands a blob to a run."""
        key = ref.key if isinstance(ref, BlobRef) else ref
        scope: StoreScope | None = self
        while scope is not None:
            with scope._lock:  # each scope's own lock: its keys() may be listing them
                scope._held.add(key)
            scope = scope.parent

    def holds(self, ref: BlobRef | str) -> bool:
        key = ref.key if isinstance(ref, BlobRef) else ref
        return isinstance(key, str) and (key in self._held or (self.open and key in self.base))

    def put(self, payload: str, name: str | None = None) -> BlobRef:
        ref = self.base.put(payload, name)
        self.grant(ref)
        return ref

    def get(self, ref: BlobRef | str) -> str:
        """The payload of a held handle or key; ToolError naming ``ref`` and the held keys otherwise."""
        key = ref.key if isinstance(ref, BlobRef) else ref
        if not isinstance(key, str):
            raise ToolError(f"ref: expected a BlobRef or a blob key (str), got {type(ref).__name__}")
        if self.open or key in self._held:
            return self.base.get(ref)
        raise unknown_key(key, self.keys())

    def ref(self, key: str) -> BlobRef:
        return BlobRef(key, len(self.get(key)))

    def keys(self) -> list[str]:
        if self.open:
            return self.base.keys()
        with self._lock:
            return sorted(self._held)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.holds(key)

    def __len__(self) -> int:
        return len(self.keys())

    def close(self) -> None:
        self.base.close()

    def __repr__(self) -> str:
        what = "open" if self.open else f"{len(self._held)} keys"
        return f"StoreScope({what}, base={self.base.path or 'memory'})"
