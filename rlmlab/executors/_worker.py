"""REPL worker process for RLMLabInterpreter: dspy's local worker, with BlobRef handles.

Run as ``python _worker.py DSPY_WORKER_PATH``. It loads dspy's worker module
from its file (without importing dspy itself, which is slow), defines
``BlobRef`` in the REPL namespace and wraps every host tool so that handles
cross the JSON boundary in both directions. Under the ``confined`` sandbox
(RLMLAB_SANDBOX_CONFINE set) it then locks itself in with Landlock and
rlimits before reading the first request: from there on no model code can
execute a program, write outside its scratch directory or open a TCP socket.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

if os.environ.get("RLMLAB_WORKER_MEMORY_MB"):  # RLMLabInterpreter(memory_limit_mb=...): cap the address space
    import resource

    _limit = int(os.environ["RLMLAB_WORKER_MEMORY_MB"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (_limit, _limit))

# Started with -S (its start time counts: one per run): site's builtins and the site-packages the host passes, without
# running their .pth files (an editable install's finder alone costs ~25 ms; rlmlab comes from this checkout below).
if sys.flags.no_site:
    import site

    site.setquit()
    site.setcopyright()
    site.sethelper()
    sys.path.extend(p for p in os.environ.pop("RLMLAB_WORKER_SITE", "").split(os.pathsep) if p and p not in sys.path)

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rlmlab.handles import BlobRef, decode_handles, encode_handles  # noqa: E402

_spec = importlib.util.spec_from_file_location("_dspy_local_worker", sys.argv[1])
worker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(worker)

_configure = worker.Session.configure


ARGS_MAX = 4 << 20  # bytes of one tool call's arguments as JSON: the host reads no message over 8 MiB


def _wrapped_tool(session, name):
    def call(*args, **kwargs):
        # the protocol's call_tool takes the keywords as one dict: Session.call_tool(name, *args, **kwargs) would
        # refuse a tool's own ``name`` keyword (``blob(text, name='mod.rs')``) as a second value for ``name``
        args, kwargs = tuple(encode_handles(list(args))), encode_handles(kwargs)
        size = len(json.dumps([args, kwargs], default=str))
        if size > ARGS_MAX:
            raise RuntimeError(f"ToolError: {name}: its arguments are {size} bytes as JSON, over the "
                               f"{ARGS_MAX >> 20} MiB a tool call may carry (pass a BlobRef handle instead)")
        return decode_handles(session.protocol.call_tool(name, args, kwargs))

    call.__name__ = name
    return call


def configure(self, tool_names, output_fields):
    _configure(self, tool_names, output_fields)
    for name in tool_names:
        self.namespace[name] = _wrapped_tool(self, name)
    self.namespace["BlobRef"] = BlobRef


worker.Session.configure = configure

# What the host accepts as this worker's reply names the request it answers (its "xid"): a reply step code forges
# for another request, or after the step, is refused there (rlmlab/executors/_replies.py).
_execute = worker.Session.execute
_send = worker.send
_current = {"xid": None}


def execute(self, request):
    _current["xid"] = request.get("xid")
    return {**_execute(self, request), "xid": request.get("xid")}


def send(message):
    # Only the worker's own last word gets the pending request's id here (its replies carry it from execute): a
    # message step code hands to this function is refused. A newline first ends any partial line step code left
    # on the pipe, so the reply is a line of its own.
    if message.get("type") == "terminal_error" and "xid" not in message:
        message = {**message, "xid": _current["xid"]}
    with worker._send_lock:
        worker._protocol_output.write("\n")
    _send(message)


worker.Session.execute = execute
worker.send = send

# A step's printed output is cut here (it went to a file in scratch first): the host reads no line over 8 MiB.
STDOUT_MAX = 4 << 20


class CappedOutput(worker.CapturedOutput):
    def __exit__(self, *_):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - as dspy's own capture does
                pass
        sys.stdout, sys.stderr = worker._worker_stdout, worker._worker_stderr
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        os.close(self.saved[0])
        os.close(self.saved[1])
        size = os.fstat(self.file.fileno()).st_size
        self.file.seek(0)
        self.value = self.file.read(STDOUT_MAX).decode(errors="replace").rstrip("\n")
        if size > STDOUT_MAX:
            self.value += f"\n[... output cut: the step printed {size} bytes; the first {STDOUT_MAX} are shown]"
        self.file.close()


worker.CapturedOutput = CappedOutput


def _confine() -> None:
    spec = json.loads(os.environ.pop("RLMLAB_SANDBOX_CONFINE"))
    from rlmlab.sandbox import apply_rlimits, confine_self, drop_capabilities, forbid_new_processes, seal_host_tree

    if spec.get("seal"):  # unshare: the host's tree, made read-only here (bwrap built a read-only view instead)
        seal_host_tree(**spec["seal"])
    # root of its user namespace no more (or, started by the host's root, not root at all): nothing to undo the
    # mounts or limits with
    drop_capabilities(*spec.get("user", ()))
    apply_rlimits(spec["rlimits"])
    confine_self(spec["read"], spec["write"])
    forbid_new_processes()  # threads yes, processes no: RLIMIT_NPROC never binds the host's root


if __name__ == "__main__":
    if os.environ.get("RLMLAB_SANDBOX_CONFINE"):
        try:
            _confine()
        except Exception as exc:  # noqa: BLE001 - refuse to serve unconfined: the host reports this message
            worker.send({"type": "sandbox_error", "error": f"sandbox: confinement failed: {exc}"})
            sys.exit(3)
    worker.main()
