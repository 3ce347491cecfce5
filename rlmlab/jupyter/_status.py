"""The line that tells a widget's viewer its kernel is gone.

A notebook saved with its widget state reopens with every widget drawn from that state, but its models have no
comm to a kernel: a click changes nothing and nothing says why. ipywidgets marks the view of such a model with
the CSS class ``jupyter-widgets-disconnected`` (it follows the model's ``comm_live``: off for a model restored
from saved state, off again when a live comm closes), so the line is plain CSS: a hidden first child of every
displayed rlmlab widget that the class shows, greying the rest. No front-end code and no round trip to the
kernel, which, busy with a long cell, would not answer in time and a live widget would be called dead.
"""

from __future__ import annotations

import ipywidgets as W

__all__ = ["DISCONNECTED", "kernel_status"]

DISCONNECTED = "kernel not connected — run the cell to reconnect"

# A <style> inside a widget's HTML applies to the page (as the run browser's own styles do).
_STYLE = """<style>
.rlmlab-kernel-status { display: none !important; }
.rlmlab-frame.jupyter-widgets-disconnected > .rlmlab-kernel-status { display: block !important;
  color: #8a1c1c; background: #f3e6e6; border-left: 3px solid #8a1c1c; padding: 2px 8px; margin-bottom: 4px;
  font-size: 12px; font-family: ui-sans-serif, system-ui, sans-serif; }
.rlmlab-frame.jupyter-widgets-disconnected > :not(.rlmlab-kernel-status) { opacity: 0.45; filter: grayscale(1); }
</style>"""


def kernel_status() -> W.HTML:
    """The line: hidden while the widget's comm is live, :data:`DISCONNECTED` (and the widget greyed) when not."""
    line = W.HTML(_STYLE + f"<span>{DISCONNECTED}</span>")
    line.add_class("rlmlab-kernel-status")
    return line
