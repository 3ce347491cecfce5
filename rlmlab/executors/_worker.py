"""REPL worker process for RLMLabInterpreter: dspy's local worker, with BlobRef handles.

Run as ``python _worker.py DSPY_WORKER_PATH``. It loads dspy's worker module
from its file (without importing dspy itself, which is slow), defines
``BlobRef`` in the REPL namespace and wraps every host tool so that handles
cross the JSON boundary in both directions.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

if os.environ.get("RLMLAB_WORKER_MEMORY_MB"):  # RLMLabInterpreter(memory_limit_mb=...): cap the address space
    import resource

    _limit = int(os.environ["RLMLAB_WORKER_MEMORY_MB"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (_limit, _limit))

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rlmlab.handles import BlobRef, decode_handles, encode_handles  # noqa: E402

_spec = importlib.util.spec_from_file_location("_dspy_local_worker", sys.argv[1])
worker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(worker)

_configure = worker.Session.configure


def _wrapped_tool(session, name):
    def call(*args, **kwargs):
        # the protocol's call_tool takes the keywords as one dict: Session.call_tool(name, *args, **kwargs) would
        # refuse a tool's own ``name`` keyword (``blob(text, name='mod.rs')``) as a second value for ``name``
        return decode_handles(session.protocol.call_tool(name, tuple(encode_handles(list(args))),
                                                         encode_handles(kwargs)))

    call.__name__ = name
    return call


def configure(self, tool_names, output_fields):
    _configure(self, tool_names, output_fields)
    for name in tool_names:
        self.namespace[name] = _wrapped_tool(self, name)
    self.namespace["BlobRef"] = BlobRef


worker.Session.configure = configure

if __name__ == "__main__":
    worker.main()
