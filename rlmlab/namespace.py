"""The REPL namespace: one function builds it for the terminal REPL, IPython, the kernel and docs."""

from __future__ import annotations

from typing import Any

from rlmlab.handles import BlobRef, BlobStore, StoreScope
from rlmlab.tools import ToolCaps, Workspace

__all__ = ["build_namespace", "ToolListing"]


class ToolListing:
    """``tools`` (or ``tools()``): one line per registered tool; renders as a table in rich and in notebooks.
    The listing is read when shown, so tools registered later appear."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace

    @property
    def specs(self) -> list[Any]:
        return list(self.workspace.registry)

    @property
    def caps(self) -> ToolCaps:
        return self.workspace.caps

    def __call__(self) -> "ToolListing":
        return self

    def lines(self) -> list[str]:
        out = []
        for s in self.specs:
            cap = s.result_cap(self.caps)
            out.append(f"{s.signature_line():<48} {s.description}  [cap {cap if cap is not None else 'none'}]")
        return out

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def __rich__(self) -> Any:
        from rich.console import Group
        from rich.text import Text

        lines = []
        for s in self.specs:
            cap = s.result_cap(self.caps)
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(f"{s.signature_line():<48}", style="bold cyan")
            line.append(f" {s.description}  ")
            line.append(f"[cap {cap if cap is not None else 'none'}]", style="dim")
            lines.append(line)
        return Group(*lines)

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(
            f"<tr><td><code>{escape(s.signature_line())}</code></td><td>{escape(s.description)}</td>"
            f"<td>{s.result_cap(self.caps)}</td></tr>" for s in self.specs
        )
        return f"<table><tr><th>tool</th><th>description</th><th>result cap</th></tr>{rows}</table>"


def build_namespace(workspace: Workspace | None = None, *, store_path: str | None = None,
                    caps: ToolCaps | None = None) -> dict[str, Any]:
    """Tools bound to a workspace, plus ``BlobRef``, ``workspace`` and ``tools`` (the listing; ``tools()`` too).

    ``store_path`` keeps blobs in a SQLite file so handles survive a restart. The namespace is yours, so its
    workspace sees the whole store (an open :class:`~rlmlab.handles.StoreScope`); a model run started from it
    (``%%rlm``, ``run_rlm(..., workspace=workspace)``) reads only its context and what it makes.
    """
    if workspace is None:
        workspace = Workspace(store=StoreScope(BlobStore(store_path), open=True), caps=caps or ToolCaps())
    from rlmlab.tools import displayable

    # Results come back as ToolResult: the same dicts, shown as tables and code excerpts (see rlmlab.tools._display).
    ns: dict[str, Any] = {name: displayable(workspace, name) for name in workspace.registry.names()}
    ns.update({"BlobRef": BlobRef, "workspace": workspace, "tools": ToolListing(workspace)})
    return ns
