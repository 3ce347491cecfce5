"""KernelStatus: the line that tells a widget's viewer its kernel is gone.

A notebook saved with its widget state reopens with every widget drawn from that state, but the models have no
comm to a kernel: a click changes nothing and nothing says why. This anywidget sits at the top of every rlmlab
widget; its front-end code finds its own model in the widget manager (``_model_ref``, its model id) and reads
the model's ``comm_live``, which ipywidgets sets only for a model opened by a running kernel and clears when
the comm closes. While it is false the widget is greyed and the line reads :data:`DISCONNECTED`. It checks on
render, when ``comm_live`` changes, and on every click in the widget (a kernel shut down while the page stays
open). No round trip to the kernel: a kernel busy with a long cell would not answer a ping in time, and a
live widget must not be called dead.
"""

from __future__ import annotations

import json

import anywidget
import traitlets

__all__ = ["KernelStatus", "DISCONNECTED"]

DISCONNECTED = "kernel not connected — run the cell to reconnect"

_ESM = """
const TEXT = %s;

async function realModel(model) {
  // the proxy anywidget hands us has no comm; the manager's own model (same id) has comm_live
  const id = model.get("_model_ref");
  try {
    return id ? await model.widget_manager.get_model(id) : null;
  } catch (e) {
    return null;
  }
}

async function render({ model, el }) {
  el.classList.add("rlmlab-kernel-status");
  const frame = () => el.closest(".rlmlab-frame");
  const real = await realModel(model);
  const check = () => {
    const dead = !real || !real.comm || real.comm_live === false;
    el.textContent = dead ? TEXT : "";
    el.style.display = dead ? "block" : "none";
    const f = frame();
    if (f) f.classList.toggle("rlmlab-disconnected", dead);
  };
  check();
  // the frame is attached after render returns: check again once it is in the page
  requestAnimationFrame(check);
  if (real) real.on("comm_live_update", check);
  const onDown = () => check();
  let f = null;
  const attach = () => {
    f = frame();
    if (f) f.addEventListener("pointerdown", onDown, true);
  };
  requestAnimationFrame(attach);
  return () => {
    if (real) real.off("comm_live_update", check);
    if (f) f.removeEventListener("pointerdown", onDown, true);
  };
}

export default { render };
"""

_CSS = """
.rlmlab-kernel-status { color: #8a1c1c; background: #f3e6e6; border-left: 3px solid #8a1c1c;
  padding: 2px 8px; margin-bottom: 4px; font-size: 12px; font-family: ui-sans-serif, system-ui, sans-serif; }
.rlmlab-frame.rlmlab-disconnected > :not(.rlmlab-kernel-status) { opacity: 0.45; filter: grayscale(1); }
"""


class KernelStatus(anywidget.AnyWidget):
    """Shows :data:`DISCONNECTED` (and greys its ``.rlmlab-frame``) when its model has no live kernel comm."""

    _esm = _ESM % json.dumps(DISCONNECTED, ensure_ascii=False)
    _css = _CSS
    _model_ref = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._model_ref = self.model_id  # known only once the comm is open
