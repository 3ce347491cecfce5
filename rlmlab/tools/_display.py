"""Tool results as people read them: the dict a tool returned, shown as a table or a code excerpt.

The REPL namespace and the top-level tools (``from rlmlab import ctx_find``) return a :class:`ToolResult`: a
``dict`` subclass equal to what the tool returned (so code that indexes it, compares it or dumps it as JSON
sees no difference), with an HTML form for notebooks (``ctx_find``: a match table; ``ctx_slice`` and
``ast_query``: the source lines with their numbers) and a rich form for the terminal REPL, where text keeps
its line breaks instead of showing ``\\n``. The agent's own tool calls go through ``Workspace.call`` and get
plain dicts: nothing here reaches a model's prompt.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any, Callable

from rlmlab.errors import ToolError
from rlmlab.tools._paths import read_path

__all__ = ["ToolResult", "displayable"]

_PRE = ("margin:2px 0;padding:4px 8px;background:#f6f6f6;border-radius:3px;white-space:pre;overflow:auto;"
        "max-height:28em;font-family:ui-monospace,monospace;font-size:12px")
_TD = "padding:1px 8px;vertical-align:top;text-align:left"
_NUM = "padding:1px 8px;vertical-align:top;text-align:right;color:#888;font-family:ui-monospace,monospace"
_CODE = "padding:1px 8px;vertical-align:top;text-align:left;font-family:ui-monospace,monospace;white-space:pre"


def _esc(value: Any) -> str:
    return html.escape(str(value))


class ToolResult(dict):
    """A tool's result dict with readable forms; ``tool`` is the tool's name, ``lines`` the source lines a
    code result shows (line number -> text), ``first_line`` the line a character slice starts on."""

    def __init__(self, tool: str, data: dict, lines: dict[int, str] | None = None, first_line: int | None = None):
        super().__init__(data)
        self.tool = tool
        self.lines = lines or {}
        self.first_line = first_line

    # -- notebook ----------------------------------------------------------------------------------------

    def _repr_html_(self) -> str:
        render = {"ctx_find": self._find_html, "ctx_slice": self._slice_html, "ast_query": self._ast_html,
                  "ctx_peek": self._peek_html}.get(self.tool, self._fields_html)
        return f"<div class='rlmlab-result' data-tool='{_esc(self.tool)}'>{render()}</div>"

    def _caption(self) -> str:
        total = self.get("total")
        if total is None:
            return f"<div style='color:#555'><b>{_esc(self.tool)}</b></div>"
        shown = len(self.get("matches", []))
        more = f" (first {shown} shown)" if self.get("truncated") else ""
        what = self.get("pattern") or self.get("query")
        where = self.get("key") or self.get("source")
        return (f"<div style='color:#555'><b>{_esc(self.tool)}</b> in <code>{_esc(where)}"
                f"</code>: {total:,} match{'es' if total != 1 else ''}{more}</div>"
                f"<pre class='rlmlab-query' style='{_PRE}'>{_esc(what)}</pre>")  # as given: spaces, line breaks

    def _find_html(self) -> str:
        try:
            rx = re.compile(self["pattern"])
        except (re.error, KeyError, TypeError):
            rx = None

        def mark(text: str) -> str:
            if rx is None:
                return _esc(text)
            out, last = [], 0
            for m in rx.finditer(text):
                if m.end() == m.start():
                    continue
                out += [_esc(text[last:m.start()]), f"<mark>{_esc(m.group())}</mark>"]
                last = m.end()
            return "".join(out) + _esc(text[last:])

        rows = "".join(f"<tr><td style='{_NUM}'>{m.get('line')}</td><td style='{_NUM}'>{m.get('offset'):,}</td>"
                       f"<td style='{_CODE}'>{mark(m.get('text', ''))}</td></tr>" for m in self.get("matches", []))
        head = f"<tr><th style='{_TD}'>line</th><th style='{_TD}'>offset</th><th style='{_TD}'>text</th></tr>"
        return self._caption() + f"<table class='rlmlab-matches' style='border-collapse:collapse'>{head}{rows}</table>"

    def _numbered(self, pairs: list[tuple[int, str]]) -> str:
        rows = "".join(f"<tr><td style='{_NUM}'>{n}</td><td style='{_CODE}'>{_esc(t)}</td></tr>" for n, t in pairs)
        return f"<table class='rlmlab-code-lines' style='border-collapse:collapse'>{rows}</table>"

    def _slice_html(self) -> str:
        start = self.first_line if self.get("unit") == "chars" else self.get("start")
        lines = str(self.get("text", "")).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        span = (f"lines {self.get('start')}–{self.get('end')}" if self.get("unit") == "lines"
                else f"characters {self.get('start'):,}–{self.get('end'):,}")
        caption = f"<div style='color:#555'><b>ctx_slice</b> <code>{_esc(self.get('key'))}</code>, {span}</div>"
        return caption + self._numbered([((start or 1) + i, t) for i, t in enumerate(lines)])

    def _ast_html(self) -> str:
        rows = []
        for m in self.get("matches", []):
            captures = "; ".join(f"{k} = {v if isinstance(v, str) else ', '.join(map(str, v))}"
                                 for k, v in (m.get("captures") or {}).items())
            rows.append(f"<tr><td style='{_NUM}'>{m.get('line')}</td><td style='{_CODE}'>"
                        f"{_esc(self.lines.get(m.get('line'), ''))}</td><td style='{_TD}'>{_esc(captures)}</td></tr>")
        head = f"<tr><th style='{_TD}'>line</th><th style='{_TD}'>code</th><th style='{_TD}'>captures</th></tr>"
        return (self._caption() + f"<table class='rlmlab-ast-matches' style='border-collapse:collapse'>{head}"
                + "".join(rows) + "</table>")

    def _peek_html(self) -> str:
        more = f" (first {len(self.get('preview', '')):,} of {self.get('length', 0):,} characters)" if self.get(
            "truncated") else ""
        return (f"<div style='color:#555'><b>ctx_peek</b> <code>{_esc(self.get('key'))}</code>{more}</div>"
                f"<pre style='{_PRE}'>{_esc(self.get('preview', ''))}</pre>")

    def _fields_html(self) -> str:
        rows = "".join(f"<tr><th style='{_TD};color:#555;font-weight:normal'>{_esc(k)}</th>"
                       f"<td style='{_TD}'>{_value_html(v)}</td></tr>" for k, v in self.items())
        return (f"<div style='color:#555'><b>{_esc(self.tool)}</b></div>"
                f"<table class='rlmlab-fields' style='border-collapse:collapse'>{rows}</table>")

    # -- terminal ----------------------------------------------------------------------------------------

    def _header(self) -> list[Any]:
        """What was searched, as given: "ast_query in <source>: N matches", then the pattern or query, each of its
        lines as typed (never re-wrapped to the table's width, its spaces and line breaks kept)."""
        from rich.text import Text

        total = self.get("total", 0)
        more = f" (first {len(self.get('matches', []))} shown)" if self.get("truncated") else ""
        where = self.get("key") or self.get("source")
        head = Text.assemble((self.tool, "bold"), f" in {where}" if where else "",
                             f": {total:,} match{'es' if total != 1 else ''}{more}")
        what = str(self.get("pattern") or self.get("query") or "")
        return [head, *(Text(f"  {line}", style="cyan", no_wrap=True, overflow="ignore")
                        for line in what.splitlines() or [""])]

    def __rich__(self) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        title = Text(self.tool, style="bold")
        if self.tool in ("ctx_find", "ast_query"):
            table = Table()
            table.add_column("line", justify="right", style="dim")
            if self.tool == "ctx_find":
                table.add_column("offset", justify="right", style="dim")
                table.add_column("text", overflow="fold")
                for m in self.get("matches", []):
                    table.add_row(str(m.get("line")), f"{m.get('offset'):,}", Text(m.get("text", "")))
            else:
                table.add_column("code", overflow="fold")
                table.add_column("captures", overflow="fold")
                for m in self.get("matches", []):
                    captures = "; ".join(f"{k} = {v}" for k, v in (m.get("captures") or {}).items())
                    table.add_row(str(m.get("line")), Text(self.lines.get(m.get("line"), "")), Text(captures))
            return Group(*self._header(), table)
        if self.tool == "ctx_slice":
            from rich.syntax import Syntax

            start = self.first_line if self.get("unit") == "chars" else self.get("start")
            lexer = "rust" if str(self.get("key", "")).endswith(".rs") else "text"
            return Group(title, Syntax(str(self.get("text", "")).rstrip("\n"), lexer, line_numbers=True,
                                       start_line=start or 1, word_wrap=True))
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="dim")
        grid.add_column(overflow="fold")
        for k, v in self.items():
            grid.add_row(str(k), _value_rich(v))
        return Group(title, grid)


def _value_html(v: Any) -> str:
    if isinstance(v, str) and "\n" in v:
        return f"<pre style='{_PRE}'>{_esc(v)}</pre>"
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        keys = list(dict.fromkeys(k for x in v for k in x))
        head = "".join(f"<th style='{_TD}'>{_esc(k)}</th>" for k in keys)
        body = "".join("<tr>" + "".join(f"<td style='{_TD}'>{_value_html(x.get(k, ''))}</td>" for k in keys) + "</tr>"
                       for x in v)
        return f"<table style='border-collapse:collapse'><tr>{head}</tr>{body}</table>"
    return _esc(v)


def _value_rich(v: Any) -> Any:
    from rich.pretty import Pretty
    from rich.table import Table
    from rich.text import Text

    if isinstance(v, str):
        return Text(v)  # real line breaks, no quotes or escapes
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        keys = list(dict.fromkeys(k for x in v for k in x))
        table = Table(*keys, show_edge=False)
        for x in v:
            table.add_row(*(_value_rich(x.get(k, "")) if isinstance(x.get(k), str) else Pretty(x.get(k))
                            for k in keys))
        return table
    return Pretty(v)


def _source_text(workspace: Any, ref: Any) -> str | None:
    """The text a BlobRef, a blob key or a file path names (None if it names nothing readable)."""
    from rlmlab.handles import BlobRef

    try:
        if isinstance(ref, BlobRef) or (isinstance(ref, str) and ref in workspace.store):
            return workspace.store.get(ref)
        if isinstance(ref, (str, Path)):
            return read_path(workspace.path_roots, str(ref), arg="ref", suffix=Path(ref).suffix or ".rs",
                             max_bytes=64 << 20)[0]
    except (OSError, UnicodeDecodeError, KeyError, ValueError, ToolError):
        return None
    return None


def _wrap(name: str, workspace: Any, args: tuple, kwargs: dict, result: Any) -> Any:
    if not isinstance(result, dict) or isinstance(result, ToolResult):
        return result
    lines: dict[int, str] = {}
    first_line = None
    if name == "ast_query" and result.get("matches"):
        text = _source_text(workspace, args[0] if args else kwargs.get("ref_or_path"))
        if text is not None:
            source = text.splitlines()
            lines = {m["line"]: source[m["line"] - 1] for m in result["matches"] if 0 < m["line"] <= len(source)}
    elif name == "ctx_slice" and result.get("unit") == "chars":
        text = _source_text(workspace, args[0] if args else kwargs.get("ref"))
        if text is not None:
            first_line = text.count("\n", 0, result.get("start", 0)) + 1
    return ToolResult(name, result, lines, first_line)


def displayable(workspace: Any, name: str) -> Callable[..., Any]:
    """``workspace.bound(name)`` whose dict results come back as :class:`ToolResult` (same name, signature, doc)."""
    import functools

    call = workspace.bound(name)

    @functools.wraps(call)
    def shown(*args: Any, **kwargs: Any) -> Any:
        return _wrap(name, workspace, args, kwargs, call(*args, **kwargs))

    return shown
