"""What every rlmlab widget shares: an ipywidgets 8 view and a static HTML form of the same content.

A widget class subclasses :class:`RLMLabWidget`, builds its ipywidgets tree in ``self.view`` (a ``VBox``)
and implements ``static_html()``: self-contained HTML (inline styles, inline SVG, no scripts) showing what
the live view shows. ``_repr_mimebundle_`` returns both, so a notebook executed by papermill and opened
without a kernel, or on a static site, still shows the content; a live kernel renders the widget.

State lives in plain attributes and traitlets on the subclass, and every button handler is a method,
so tests drive a widget without a browser: set state, call the handler, read the state and the HTML.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

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


class RLMLabWidget:
    """Base of the rlmlab widgets: ``view`` (ipywidgets) plus ``static_html()`` in one MIME bundle."""

    #: CSS class on the outer box, so a browser test can find each widget kind.
    css_name = "rlmlab-widget"

    def __init__(self) -> None:
        self.view = W.VBox()
        self.view.add_class("rlmlab-widget")
        self.view.add_class(self.css_name)

    def static_html(self) -> str:  # pragma: no cover - every subclass implements it
        raise NotImplementedError

    def refresh(self) -> None:
        """Re-render the live view from the current state (subclasses override)."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = self.view._repr_mimebundle_(include=include, exclude=exclude) or {}
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data = dict(data)
        data["text/html"] = f"<div class='{self.css_name}' style='{CSS}'>{self.static_html()}</div>"
        data.setdefault("text/plain", repr(self))
        return data

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
