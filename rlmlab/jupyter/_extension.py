"""IPython extension: ``%load_ext rlmlab`` pushes the rlmlab namespace and registers the magics."""

from __future__ import annotations

from typing import Any

import shlex

from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class

from rlmlab.namespace import build_namespace

__all__ = ["load", "unload", "RLMLabMagics"]

_PUSHED: dict[int, list[str]] = {}


@magics_class
class RLMLabMagics(Magics):
    @line_magic
    def rlmlab_tools(self, line: str) -> Any:
        """List the rlmlab tools (one line each), with their result caps."""
        return self.shell.user_ns["tools"]()

    @line_cell_magic
    def ast_query(self, line: str, cell: str | None = None) -> Any:
        """Tree-sitter query over Rust source held in a BlobRef, a blob key, a variable or a file.

        Line form: ``%ast_query "(function_item name: (identifier) @name)" src/lib.rs [-k 50]``.
        Cell form: ``%%ast_query src/lib.rs [-k 50]`` with the query as the cell body.
        Returns the tool's result dict (matches with line numbers and captures).
        """
        args = shlex.split(line)
        k = 20
        if "-k" in args:
            i = args.index("-k")
            try:
                k = int(args[i + 1])
            except (IndexError, ValueError):
                raise ValueError("%ast_query: -k needs an integer, e.g. -k 50") from None
            del args[i:i + 2]
        if cell is None:
            if len(args) != 2:
                raise ValueError('%ast_query: usage: %ast_query "QUERY" SOURCE  (SOURCE: a BlobRef variable, '
                                 "a blob key or a file path)")
            query, source = args
        else:
            if len(args) != 1:
                raise ValueError("%%ast_query: usage: %%ast_query SOURCE, with the query as the cell body")
            query, source = cell, args[0]
        ns = self.shell.user_ns
        ref = ns[source] if source.isidentifier() and source in ns else source
        return ns["ast_query"](ref, query, k=k)


def load(ipython: Any) -> None:
    ns = build_namespace()
    ipython.push(ns)
    _PUSHED[id(ipython)] = list(ns)
    ipython.register_magics(RLMLabMagics)


def unload(ipython: Any) -> None:
    for name in _PUSHED.pop(id(ipython), []):
        ipython.user_ns.pop(name, None)
