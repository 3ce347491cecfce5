"""The host's :func:`decode_handles`: a malformed handle from step code is a ToolError, the step's to fix.

``_blobref.py`` raises a plain ValueError because it must import nothing of rlmlab (Pyodide runs a copy of it);
the tool dispatchers that decode the step's arguments (the REPL's and ReAct's) import this one.
"""

from __future__ import annotations

from typing import Any

from rlmlab.errors import ToolError
from rlmlab.handles import _blobref


def decode_handles(value: Any) -> Any:
    """:func:`rlmlab.handles._blobref.decode_handles`, with a malformed handle raised as a ToolError."""
    try:
        return _blobref.decode_handles(value)
    except ValueError as exc:
        raise ToolError(str(exc)) from None
