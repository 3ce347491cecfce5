"""What every rlmlab widget shares: an ipywidgets 8 view and a static HTML form of the same content.

A widget class subclasses :class:`RLMLabWidget`, builds its ipywidgets tree in ``self.view`` (a ``VBox``)
and implements ``static_html()``: self-contained HTML (inline styles, inline SVG, no scripts) showing what
the live view shows. ``_repr_mimebundle_`` returns both, so a notebook executed by papermill and opened
without a kernel, or on a static site, still shows the content; a live kernel renders the widget.

State lives in plain attributes and traitlets on the subclass, and every button handler is a method,
so tests drive a widget without a browser: set state, call the handler, read the state and the HTML.

The static form tracks the widget's last state: a widget is displayed with a display id, and after each
``refresh()`` the outputs showing it are updated (``update_display_data``), so a notebook saved after later
cells moved the widget (papermill, nbclient, ``jupyter nbconvert --execute``) holds its final state, not the
first. A change made by a click in the live view is sent when the next cell runs instead: JupyterLab re-renders
an updated output, which would drop the list's keyboard focus and open ``<details>`` on every click. JupyterLab
keeps the live widget's own last state in the notebook when the widget manager's ``saveState`` setting is on;
``rlmlab kernel install`` turns it on (see ``_kernelspec.install_lab_settings``). Such a reopened widget has no
kernel behind it: the first line of a displayed widget (``_status``) then greys it and says so.
"""

from __future__ import annotations

import functools
import html
import threading
import weakref
from typing import Any

import ipywidgets as W
import traitlets

__all__ = ["RLMLabWidget", "esc", "html_table", "html_fields", "CSS"]

CSS = ("font-family: ui-sans-serif, system-ui, sans-serif; font-size: 13px; line-height: 1.35;")


def esc(value: Any) -> str:
    """HTML-escaped ``str(value)``; None as an em dash."""
    return "&mdash;" if value is None else html.escape(str(value))


def html_table(header: list[str], rows: list[list[Any]], *, css_class: str = "rlmlab-table") -> str:
    """A plain HTML table (cells escaped) with inline styles, for static forms."""
    th = "".join(f"<th style='text-align:left;padding:2px 8px;border-bottom:1px solid #999'>{esc(h)}</th>"
                 for h in header)
    body = "".join("<tr>" + "".join(f"<td style='padding:2px 8px;vertical-align:top'>{esc(c)}</td>" for c in row)
                   + "</tr>" for row in rows)
    return f"<table class='{css_class}' style='border-collapse:collapse'><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def html_fields(pairs: list[tuple[str, Any]], *, css_class: str = "rlmlab-fields") -> str:
    """A two-column key/value table (keys as row headers, values escaped), for records in static forms."""
    rows = "".join(f"<tr><th style='text-align:left;padding:1px 8px;color:#555;font-weight:normal'>{esc(k)}</th>"
                   f"<td style='padding:1px 8px'>{esc(v)}</td></tr>" for k, v in pairs)
    return f"<table class='{css_class}' style='border-collapse:collapse'>{rows}</table>"


_PENDING: "weakref.WeakSet[RLMLabWidget]" = weakref.WeakSet()
_HOOKED: set[int] = set()  # id() of the shells whose pre_run_cell flushes _PENDING


def _in_widget_event() -> bool:
    """True while the kernel handles a comm message (a widget click), not a cell's execution."""
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
        parent = kernel.get_parent("shell") if kernel is not None else None
    except Exception:  # no kernel, an old ipykernel: treat as a cell
        return False
    return bool(parent) and parent.get("header", {}).get("msg_type") == "comm_msg"


def _defer(widget: "RLMLabWidget") -> None:
    from IPython import get_ipython

    shell = get_ipython()
    _PENDING.add(widget)
    if shell is not None and id(shell) not in _HOOKED:
        _HOOKED.add(id(shell))
        shell.events.register("pre_run_cell", _flush)


def _flush(*_: Any) -> None:
    """Send the static forms that widget events changed (called before each cell runs)."""
    for widget in list(_PENDING):
        _PENDING.discard(widget)
        widget.sync_static()


def plain_text(html_text: str, max_lines: int = 40) -> str:
    """``html_text`` as text: a line per table row or block, no styles or tags, entities decoded; at most
    ``max_lines`` lines (then a line saying how many more)."""
    import re

    text = re.sub(r"<(style|script)\b.*?</\1>", " ", html_text, flags=re.S | re.I)
    text = re.sub(r"<br\s*/?>|</(tr|div|p|li|h\d|summary|caption|pre)>", "\n", text, flags=re.I)
    text = re.sub(r"</t[dh]>|<(td|th|span class='rlmlab-key')\b", " \\g<0>", text, flags=re.I)  # cells apart
    lines = [" ".join(html.unescape(re.sub(r"<[^>]+>", "", line)).split()) for line in text.splitlines()]
    lines = [line for line in lines if line]
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], f"... {len(lines) - max_lines} more line(s)"]
    return "\n".join(lines)


class _Frame(W.VBox):
    """The widget's outer box; once the kernel-status line (``_status``) is attached it stays the first child,
    whatever children the widget sets later."""

    status: Any = None

    @traitlets.validate("children")
    def _status_first(self, proposal: Any) -> tuple:
        kids = tuple(proposal["value"])
        if self.status is not None and (not kids or kids[0] is not self.status):
            kids = (self.status, *(k for k in kids if k is not self.status))
        return kids

    def attach_status(self) -> None:
        """Add the kernel-status line (once; a widget shown on its own, not one embedded in another)."""
        if self.status is None:
            from rlmlab.jupyter._status import kernel_status

            self.status = kernel_status()
            self.add_class("rlmlab-frame")
            self.children = self.children  # the validator puts the line first


class RLMLabWidget:
    """Base of the rlmlab widgets: ``view`` (ipywidgets) plus ``static_html()`` in one MIME bundle."""

    #: CSS class on the outer box, so a browser test can find each widget kind.
    css_name = "rlmlab-widget"

    def __init__(self) -> None:
        self.view = _Frame()
        self.view.add_class("rlmlab-widget")
        self.view.add_class(self.css_name)
        self._displays: list[Any] = []  # DisplayHandles of the outputs showing this widget
        self._refreshing = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Every subclass's refresh() ends by updating the outputs that show it, so their static form follows
        # the widget; wrapped here so a widget author cannot forget it. Only the outermost refresh updates.
        super().__init_subclass__(**kwargs)
        if "refresh" in cls.__dict__:
            refresh = cls.__dict__["refresh"]

            @functools.wraps(refresh)
            def tracked(self: "RLMLabWidget", *args: Any, **kw: Any) -> Any:
                self._refreshing = getattr(self, "_refreshing", 0) + 1
                try:
                    return refresh(self, *args, **kw)
                finally:
                    self._refreshing -= 1
                    if not self._refreshing:
                        self.sync_static()

            cls.refresh = tracked  # type: ignore[method-assign]

    def static_html(self) -> str:  # pragma: no cover - every subclass implements it
        raise NotImplementedError

    def refresh(self) -> None:
        """Re-render the live view from the current state (subclasses override)."""

    def tracks_static(self) -> bool:
        """Whether a refresh now updates the displayed static form (a live BudgetTimeline waits for its end)."""
        return True

    def sync_static(self) -> int:
        """Update every output showing this widget to its current state (widget view and static HTML); returns
        how many were updated. Only from the main thread: output sent from a timer thread lands in whichever
        cell runs then. During a widget event (a click) the update waits for the next cell (see module doc)."""
        displays = getattr(self, "_displays", None)
        if not displays or not self.tracks_static() or threading.current_thread() is not threading.main_thread():
            return 0
        if _in_widget_event():
            _defer(self)
            return 0
        bundle = self._repr_mimebundle_()
        for handle in displays:
            handle.update(bundle, raw=True)
        return len(displays)

    def replace_display(self, text: str) -> None:
        """Replace every output showing this widget with ``text`` (a failed run's line instead of an empty
        chart); the widget no longer updates them."""
        bundle = {"text/plain": text, "text/html": f"<div class='rlmlab-failed' style='color:#C00'>{esc(text)}</div>"}
        for handle in getattr(self, "_displays", []):
            handle.update(bundle, raw=True)
        self._displays = []

    def show(self) -> Any:
        """Display the widget with a display id (what ``display(w)`` and a cell's last value do); returns the
        DisplayHandle, or None outside IPython."""
        from IPython.display import display

        handle = display(self._repr_mimebundle_(), raw=True, display_id=True)
        if handle is not None:
            self._displays.append(handle)
        return handle

    def _ipython_display_(self) -> None:
        self.show()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        if isinstance(self.view, _Frame):  # says "kernel not connected" when the notebook is reopened without one
            self.view.attach_status()
        bundle = self.view._repr_mimebundle_(include=include, exclude=exclude) or {}
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data = dict(data)
        static = self.static_html()
        data["text/html"] = f"<div class='{self.css_name}' style='{CSS}'>{static}</div>"
        # ipywidgets' text/plain is the VBox's repr (`_Frame(children=(HTML(value='<style>...`), which is what
        # `papermill --log-output`, nbconvert --to markdown and a terminal show: the static form as text instead
        data["text/plain"] = f"{type(self).__name__}\n{plain_text(static)}"
        return data

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
