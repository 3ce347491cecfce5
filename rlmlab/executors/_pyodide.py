"""PyodideInterpreter: the REPL's code runs as WebAssembly (Pyodide) inside Deno with no permissions.

The host side is RLMLabInterpreter unchanged (tools through ``Workspace.call``, BlobRef handles, ``llm_query``
counted, timeout and crash restarts with the setup replayed); only the process differs. Deno starts with
``--cached-only`` (no download at run time), read access to Pyodide's files, its start-up snapshot and the two
Python files it loads, and nothing else; the runner revokes the read access before any model code runs. So
the code cannot read or write host files, open sockets, read the environment, start processes or signal the
host. Pyodide's file system is in memory: ``scratch_dir`` is None, and what the code writes there is lost at a
restart.

Deno comes from the ``deno`` package on PyPI (``pip install 'rlmlab[sandbox]'``); Pyodide comes from npm and
Deno caches it on first use (:func:`warm_pyodide_cache`; ``make test`` does it once).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from dspy.primitives.code_interpreter import CodeInterpreterError
from dspy.utils.callback import with_callbacks

from rlmlab.executors._interpreter import INTERPRETER_CLASSES, RLMLabInterpreter
from rlmlab.tools import Workspace

__all__ = ["PyodideInterpreter", "pyodide_unavailable", "warm_pyodide_cache", "PYODIDE_VERSION"]

PYODIDE_VERSION = "0.29.4"  # the version dspy's own runner.js pins; keep _pyodide_runner.js's import in step
_RUNNER = Path(__file__).with_name("_pyodide_runner.js")
_SESSION = Path(__file__).with_name("_pyodide_session.py")
_BLOBREF = Path(__file__).resolve().parents[1] / "handles" / "_blobref.py"
_DENO_FLAGS = ["--no-config", "--no-lock", "--node-modules-dir=false", "--no-prompt"]
_START_TIMEOUT = 120.0  # seconds: about 1 s from the snapshot, 5-15 s without it (CPython's start-up in WebAssembly)
_WARM_TIMEOUT = 600.0
# The environment Deno gets: nothing of the host's but locale and time zone. DENO_DIR points at the cache the
# user's own ``deno`` uses, so a scratch HOME does not mean a second download.
_ENV_ALLOW = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")


def _deno() -> str | None:
    try:
        from deno import find_deno_bin

        return find_deno_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("deno")


@functools.cache
def _deno_dir(deno: str) -> Path | None:
    if os.environ.get("DENO_DIR"):
        return Path(os.environ["DENO_DIR"])
    try:
        info = subprocess.run([deno, "info", "--json"], capture_output=True, text=True, timeout=30,
                              env={**os.environ, "DENO_NO_PACKAGE_JSON": "1", "NO_COLOR": "1"})
        return Path(json.loads(info.stdout)["denoDir"])
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError):
        return None


def _pyodide_dir(deno_dir: Path) -> Path | None:
    """Pyodide's files in Deno's npm cache (one folder per registry host), or None when not cached."""
    for wasm in sorted(deno_dir.glob(f"npm/*/pyodide/{PYODIDE_VERSION}/pyodide.asm.wasm")):
        return wasm.parent.resolve()
    return None


def _env(deno_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _ENV_ALLOW}
    return {**env, "DENO_DIR": str(deno_dir), "DENO_NO_PACKAGE_JSON": "1", "DENO_NO_UPDATE_CHECK": "1",
            "NO_COLOR": "1", "HOME": str(deno_dir)}


def warm_pyodide_cache(timeout: float = _WARM_TIMEOUT) -> str | None:
    """Download Pyodide from npm into Deno's cache if missing (about 13 MB); None on success, else the reason."""
    deno = _deno()
    if deno is None:
        return "Deno is not installed (pip install 'rlmlab[sandbox]' installs the deno package)"
    deno_dir = _deno_dir(deno)
    if deno_dir is None:
        return f"`{deno} info --json` did not name Deno's cache directory"
    if _pyodide_dir(deno_dir) is not None:
        return None
    try:
        done = subprocess.run([deno, "cache", *_DENO_FLAGS[:3], str(_RUNNER)], capture_output=True, text=True,
                              timeout=timeout,  # the host's environment: it runs no model code, and TLS
                              # to npm may need the host's certificate settings
                              env={**os.environ, "DENO_DIR": str(deno_dir), "DENO_NO_PACKAGE_JSON": "1",
                                   "NO_COLOR": "1"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"fetching Pyodide {PYODIDE_VERSION} from npm failed: {exc}"
    if _pyodide_dir(deno_dir) is None:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()] or ["no output"]
        why = next((line for line in reversed(lines) if "error" in line.lower()), lines[-1])
        return f"fetching Pyodide {PYODIDE_VERSION} from npm into {deno_dir} failed: {why[:300]}"
    return None


@functools.cache
def _deno_version(deno: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run([deno, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.match(r"deno (\d+)\.(\d+)\.(\d+)", out)
    return tuple(map(int, match.groups())) if match else None


def pyodide_unavailable(fetch: bool = True) -> str | None:
    """None when PyodideInterpreter can start here, else a one-line reason.

    Downloads Pyodide into Deno's cache the first time (npm, bounded by 10 minutes); later calls only look.
    With ``fetch=False`` it never downloads: Pyodide missing from the cache is a reason.
    """
    deno = _deno()
    if deno is None:
        return "Deno is not installed (pip install 'rlmlab[sandbox]' installs the deno package)"
    version = _deno_version(deno)
    if version is None or not (2, 0, 0) <= version < (3, 0, 0):
        return f"{deno} is not Deno 2.x (found {version}); Pyodide {PYODIDE_VERSION} is tested with Deno 2"
    if not fetch:
        deno_dir = _deno_dir(deno)
        if deno_dir is None or _pyodide_dir(deno_dir) is None:
            return f"Pyodide {PYODIDE_VERSION} is not in Deno's cache ({deno_dir}); `make pyodide` fetches it"
        return None
    return warm_pyodide_cache()


class PyodideInterpreter(RLMLabInterpreter):
    """RLMLabInterpreter whose REPL is Pyodide in a Deno process without permissions (see the module doc).

    Same constructor and contract as :class:`RLMLabInterpreter`. Starting takes about a second (Pyodide
    resumes from a memory snapshot, made by the first start on a machine, which takes 5-15 s); a timeout or
    crash restart pays it again. ``memory_limit_mb`` caps the
    WebAssembly memory that holds all of the code's objects (without it, WebAssembly's own 4 GiB); an
    allocation past it is a MemoryError the code sees, and the REPL goes on; memory allocated through
    JavaScript is capped too (RLIMIT_DATA, Linux), failing as an error or, at worst, a WorkerCrash. ``start`` raises
    CodeInterpreterError with :func:`pyodide_unavailable`'s reason when Deno or Pyodide is missing.
    """

    runs_pyodide = True  # the sandbox registry's hook (RLMLabInterpreter(ws, sandbox="pyodide")) looks for these
    unavailable = staticmethod(pyodide_unavailable)

    def __init__(self, workspace: Workspace | None = None, tools: dict[str, Any] | None = None,
                 output_fields: list[dict[str, Any]] | None = None, *, step_timeout: float = 30.0,
                 sub_call_counter: Any = None, callbacks: list[Any] | None = None,
                 memory_limit_mb: int | None = None, **sandbox_options: Any):
        # sandbox_options: whatever else RLMLabInterpreter's constructor takes (the sandbox registry's options)
        super().__init__(workspace, tools, output_fields, step_timeout=step_timeout,
                         sub_call_counter=sub_call_counter, callbacks=callbacks, memory_limit_mb=memory_limit_mb,
                         **sandbox_options)
        self.sandbox_used = "pyodide"
        self.scratch_dir: Path | None = None  # nothing on the host is writable; Pyodide's file system is in memory
    execution_instructions = (
        "Code runs as Python (Pyodide, WebAssembly) in a persistent sandboxed REPL. State, imports, functions and "
        "JSON-compatible variables persist for this session. Host tools and SUBMIT are available as global "
        "functions. Only the standard library is available; there are no subprocesses, threads, network, host "
        "files or environment variables."
    )

    @with_callbacks  # DSPy's startup callbacks, also when a timeout restarts the REPL
    def start(self) -> None:
        if self.session_ended:
            raise CodeInterpreterError("PyodideInterpreter session has been shut down.")
        if self.worker_process is not None:
            return
        reason = pyodide_unavailable()
        deno = _deno()
        deno_dir = _deno_dir(deno) if deno else None
        pyodide_dir = _pyodide_dir(deno_dir) if deno_dir else None
        if reason or pyodide_dir is None:
            raise CodeInterpreterError(f"Pyodide sandbox unavailable: {reason or 'Pyodide is not cached'}")
        runtime = _runtime_dir(deno_dir)
        snapshot = _snapshot(deno, deno_dir, pyodide_dir)
        files = [pyodide_dir, _SESSION.resolve(), _BLOBREF, *([snapshot] if snapshot else [])]
        readable = ",".join(map(str, files))
        # memory_limit_mb caps the WebAssembly memory (64 KiB pages), where all of the code's objects live: past
        # it an allocation fails inside Pyodide as a MemoryError and the REPL goes on.
        v8 = [f"--v8-flags=--wasm-max-mem-pages={int(self.memory_limit_mb) * 16}"] if self.memory_limit_mb else []
        command = [deno, "run", *_DENO_FLAGS, *v8, "--cached-only", f"--allow-read={readable}", str(_RUNNER),
                   "run", str(_SESSION.resolve()), str(_BLOBREF), *([str(snapshot)] if snapshot else [])]
        try:
            process = subprocess.Popen(command, env=_env(runtime), cwd=runtime, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                       text=True, encoding="utf-8")
        except OSError as exc:
            raise CodeInterpreterError(f"Unable to start Deno: {exc}") from exc
        self.worker_process = self._started = process
        stderr_tail: collections.deque[str] = collections.deque(maxlen=5)
        threading.Thread(target=self.read_output, args=(process,), daemon=True).start()
        drain = threading.Thread(target=_drain, args=(process, stderr_tail), daemon=True)
        drain.start()
        try:
            message = self.receive_message(time.monotonic() + _START_TIMEOUT,
                                           f"Pyodide did not start within {_START_TIMEOUT:g} seconds.")
        except CodeInterpreterError as exc:
            drain.join(timeout=5)  # Deno's last words (a denied permission, a missing module) name the cause
            tail = " | ".join(stderr_tail)
            raise CodeInterpreterError(f"{exc} Deno said: {tail[-500:] or 'nothing'}") from exc
        if message.get("type") != "ready":
            self.raise_terminal_error(f"Pyodide REPL returned an invalid startup message: {message!r}")
        if self.memory_limit_mb:
            _cap_data(process.pid, int(self.memory_limit_mb))


def _runtime_dir(deno_dir: Path) -> Path:
    """The DENO_DIR the REPL's Deno runs with: Deno's npm cache linked in, and no web storage.

    Deno keeps localStorage and the Cache API on disk under ``DENO_DIR/location_data`` with no permission
    needed, and its internals stay reachable from Pyodide (``Deno[Deno.internal].core``), so hiding the
    globals is not enough: here ``location_data`` is an empty file, so neither can be created.
    """
    runtime = deno_dir / "rlmlab" / "runtime"
    npm, blocker = runtime / "npm", runtime / "location_data"
    try:
        runtime.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            npm.symlink_to(deno_dir / "npm", target_is_directory=True)
        with contextlib.suppress(FileExistsError):
            blocker.touch(exist_ok=False)
    except OSError as exc:
        raise CodeInterpreterError(f"Cannot prepare the Pyodide sandbox's directory {runtime}: {exc}") from exc
    if not blocker.is_file():
        raise CodeInterpreterError(f"{blocker} must be an empty file (it keeps web storage off the disk)")
    return runtime


def _snapshot(deno: str, deno_dir: Path, pyodide_dir: Path) -> Path | None:
    """Pyodide's memory snapshot after start-up, made once per runner version (about 20 MB beside Deno's cache).

    Made by a Deno process that runs no model code and may write only that file; None when it cannot be made
    (the REPL then starts the slow way).
    """
    key = hashlib.sha256(_RUNNER.read_bytes()).hexdigest()[:12]  # the runner names Pyodide's version and imports
    path = deno_dir / "rlmlab" / f"pyodide-{PYODIDE_VERSION}-{key}.snapshot"
    if path.is_file():
        with contextlib.suppress(OSError):
            os.utime(path)  # in use: see the clean-up below
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        subprocess.run([deno, "run", *_DENO_FLAGS, "--cached-only", f"--allow-read={pyodide_dir}",
                        f"--allow-write={partial}", str(_RUNNER), "snapshot", str(partial)], env=_env(deno_dir),
                       cwd=deno_dir, capture_output=True, timeout=_START_TIMEOUT)
        if partial.is_file() and partial.stat().st_size > 0:
            os.replace(partial, path)  # atomic: a concurrent start sees the whole file or none
            # Another runner's snapshot (20 MB) unused for a week: another checkout may still use a fresher one
            for old in path.parent.glob("pyodide-*.snapshot"):
                if old != path and time.time() - old.stat().st_mtime > 7 * 86400:
                    old.unlink(missing_ok=True)
            return path
    except (OSError, subprocess.TimeoutExpired):
        pass
    finally:
        partial.unlink(missing_ok=True)
    return None


def _drain(process: subprocess.Popen[str], tail: collections.deque[str]) -> None:
    assert process.stderr is not None
    for line in process.stderr:  # Deno's own errors (a denied permission at boot, a missing module)
        if line.strip():
            tail.append(_ANSI.sub("", line.strip()))
    process.stderr.close()


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _cap_data(pid: int, megabytes: int) -> None:
    # The WebAssembly page cap bounds Python's objects, not memory the code allocates through JavaScript
    # (js.ArrayBuffer.new(...)). RLIMIT_DATA bounds both, but V8 reserves more than that while it starts, so
    # the cap is set once Pyodide is up: what the process uses now plus the limit (Linux only).
    with contextlib.suppress(OSError, ValueError, AttributeError, StopIteration):
        import resource

        status = Path(f"/proc/{pid}/status").read_text()
        data_kb = int(next(line for line in status.splitlines() if line.startswith("VmData:")).split()[1])
        limit = data_kb * 1024 + megabytes * 1024 * 1024
        resource.prlimit(pid, resource.RLIMIT_DATA, (limit, limit))


INTERPRETER_CLASSES["pyodide"] = PyodideInterpreter
