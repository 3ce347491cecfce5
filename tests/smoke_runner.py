"""Runs ``python SCRIPT --smoke`` as a fresh interpreter would, without paying for the same imports each time.

A benchmark's smoke run spends about as long importing dspy, rdflib, numpy, IPython and rlmlab's packages as
running. A *zygote* (one per pytest worker) imports those once and forks a child per script; the child takes the
run's working directory, environment, ``sys.argv`` and ``sys.path`` (script folder, then ``PYTHONPATH``), sends its
stdin to /dev/null and its stdout and stderr to a file, runs the script as ``__main__`` with ``runpy`` and leaves
as the interpreter would (non-daemon threads joined, atexit handlers run, the status of ``SystemExit``, a traceback
and status 1 on an uncaught exception) but without tearing down every module, which takes 0.8 s with dspy loaded.
The zygote also imports the project's packages the scripts run (ZYGOTE_PRELOAD): a script's own imports of them
then cost nothing, and each name it uses it still imports itself; what the preloaded imports set in ``os.environ``
the child keeps unless the run's environment sets it. A child still running at the time limit is killed with its
process group.

Where ``fork`` does not exist, or ``RLMLAB_SMOKE_SUBPROCESS=1``, every script runs in a subprocess of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["SmokeRunner", "ZYGOTE_PRELOAD"]

# What most benchmarks import (about 3.5 s a script together, measured with -X importtime): rlmlab's package facade
# first (it defers the RFC 3987 parser jsonschema, under dspy, would compile at import: ~2.6 s, rlmlab/_startup.py),
# the project's packages the scripts run (their registries fill at import, as in any process that imports them; no
# module reads the environment or the working directory at import), then the third-party libraries.
ZYGOTE_PRELOAD = ("rlmlab", "rlmlab.experiments", "rlmlab.scorecard", "rlmlab.turing", "rlmlab.oracle", "rlmlab.teach",
                  "dspy", "rdflib", "numpy", "IPython", "pydantic", "rich", "jsonschema", "yaml", "regex", "requests")

_ZYGOTE = r'''
import atexit, importlib, json, os, runpy, signal, sys, threading, time, traceback
before = dict(os.environ)
for name in sys.argv[2:]:
    importlib.import_module(name)
# what importing those set in the environment (rlmlab's LITELLM_LOCAL_MODEL_COST_MAP): a fresh process would have it
set_at_import = {k: v for k, v in os.environ.items() if before.get(k) != v}
reply = os.fdopen(int(sys.argv[1]), "w")
def child(req):
    os.setpgrp()
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    for name, value in set_at_import.items():
        os.environ.setdefault(name, value)
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(null, 0); os.dup2(out, 1); os.dup2(out, 2)
    os.close(null); os.close(out); reply.close()
    sys.stdin = open(0, closefd=False)
    extra = [p for p in req["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [os.path.dirname(req["script"])] + extra + [p for p in sys.path[1:] if p]
    sys.argv[:] = [req["script"], *req["args"]]
    code = 0
    try:
        runpy.run_path(req["script"], run_name="__main__")
    except SystemExit as stop:
        code = stop.code
    except BaseException:
        traceback.print_exc()
        code = 1
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    # what the interpreter's exit does, less tearing down every module (0.8 s with dspy loaded): join the
    # non-daemon threads, run the atexit handlers, flush the streams
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(code or 0)
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        child(req)  # never returns: the child leaves by os._exit
    deadline, status = time.monotonic() + req["timeout"], None
    while status is None:
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(raw)
        elif time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            status = {"timeout": status}
        else:
            time.sleep(0.02)
    reply.write(json.dumps(status) + "\n"); reply.flush()
'''


class SmokeRunner:
    """``run(script, args, cwd, env, timeout)`` -> ``(returncode, output)``, by a forking zygote when it can."""

    def __init__(self, preload: tuple[str, ...] = ZYGOTE_PRELOAD):
        self.preload, self._proc, self._reply = preload, None, None
        self.forking = hasattr(os, "fork") and os.environ.get("RLMLAB_SMOKE_SUBPROCESS") != "1"

    def run(self, script: Path, args: list[str], cwd: Path, env: dict[str, str],
            timeout: float) -> tuple[int, str]:
        if not self.forking:
            done = subprocess.run([sys.executable, str(script), *args], cwd=cwd, env=env, capture_output=True,
                                  text=True, timeout=timeout)
            return done.returncode, done.stdout + done.stderr
        out = Path(cwd) / ".smoke-output.txt"
        request = {"script": str(script), "args": args, "cwd": str(cwd), "env": env, "out": str(out),
                   "timeout": timeout}
        zygote, reply = self._zygote()
        zygote.stdin.write(json.dumps(request) + "\n")
        zygote.stdin.flush()
        line = reply.readline()
        if not line:
            raise RuntimeError(f"the smoke zygote died (exit {zygote.wait()}) running {script}")
        status = json.loads(line)
        output = out.read_text(encoding="utf-8", errors="replace")
        out.unlink()
        if isinstance(status, dict):
            raise subprocess.TimeoutExpired([str(script), *args], timeout, output=output)
        return status, output

    def _zygote(self):
        if self._proc is None or self._proc.poll() is not None:
            read, write = os.pipe()
            env = {**os.environ, "MPLBACKEND": "Agg"}
            self._proc = subprocess.Popen([sys.executable, "-c", _ZYGOTE, str(write), *self.preload],
                                          stdin=subprocess.PIPE, text=True, env=env, pass_fds=(write,))
            os.close(write)
            self._reply = os.fdopen(read, "r")
        return self._proc, self._reply

    def close(self) -> None:
        if self._proc is not None:
            self._proc.stdin.close()
            self._proc.wait(timeout=30)
            self._reply.close()
            self._proc = None
