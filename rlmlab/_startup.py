"""Start-up time: jsonschema's IRI parser is built when an IRI is first checked, not when jsonschema is imported.

``import jsonschema`` (dspy imports it, so every ``rlmlab`` command, kernel and notebook does) imports
``rfc3987_syntax`` when it is installed (``jsonschema[format-nongpl]``, which Jupyter's packages require), and that
module compiles an Earley parser of RFC 3987 at import: about 3 s of this machine's 6.5 s ``import
rlmlab.experiments``. jsonschema only calls its ``is_valid_syntax`` to check the ``iri`` and ``iri-reference``
formats. :func:`defer_iri_parser` puts a stand-in module under that name before jsonschema is imported: its
``is_valid_syntax`` (and any other attribute) imports the real module on first use and answers from it, so a check
gives the same verdict, only the parser's cost moves to the first IRI checked. It does nothing when the module is
not installed or already imported.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

__all__ = ["defer_iri_parser"]

_NAME = "rfc3987_syntax"
_lock = threading.Lock()


def defer_iri_parser() -> bool:
    """Stand in for ``rfc3987_syntax`` until it is used (see the module docstring); True when the stand-in is in."""
    if _NAME in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(_NAME)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    stand_in = types.ModuleType(_NAME, "stands in for rfc3987_syntax until it is used (rlmlab._startup)")
    stand_in.__path__ = list(spec.submodule_search_locations or [])  # its submodules import as usual

    def real() -> types.ModuleType:
        with _lock:
            module = sys.modules.get(_NAME)
            if module is stand_in or module is None:
                sys.modules.pop(_NAME, None)
                try:
                    module = importlib.import_module(_NAME)
                except BaseException:
                    sys.modules[_NAME] = stand_in
                    raise
            return module

    def is_valid_syntax(term: str, value: str) -> Any:
        return real().is_valid_syntax(term, value)

    def __getattr__(name: str) -> Any:  # noqa: N807 - PEP 562 module attribute hook
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(real(), name)

    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    stand_in.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[_NAME] = stand_in
    return True
