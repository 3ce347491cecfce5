"""IPython extension: ``%load_ext rlmlab`` pushes the rlmlab namespace and registers the magics."""

from __future__ import annotations

from typing import Any

from IPython.core.magic import Magics, line_magic, magics_class

from rlmlab.namespace import build_namespace

__all__ = ["load", "unload", "RLMLabMagics"]

_PUSHED: dict[int, list[str]] = {}


@magics_class
class RLMLabMagics(Magics):
    @line_magic
    def rlmlab_tools(self, line: str) -> Any:
        """List the rlmlab tools (one line each), with their result caps."""
        return self.shell.user_ns["tools"]()


def load(ipython: Any) -> None:
    ns = build_namespace()
    ipython.push(ns)
    _PUSHED[id(ipython)] = list(ns)
    ipython.register_magics(RLMLabMagics)


def unload(ipython: Any) -> None:
    for name in _PUSHED.pop(id(ipython), []):
        ipython.user_ns.pop(name, None)
