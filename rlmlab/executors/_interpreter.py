"""RLMLabInterpreter: generated code runs in a separate CPython process with a per-step timeout.

The worker runs under a sandbox backend (rlmlab.sandbox): by default on Linux ``confined`` (namespaces via
bubblewrap, Landlock, rlimits: no secrets, no network, no program execution, no writes outside its scratch
directory); ``none`` is plain process isolation for robustness, with the user's files and network. Every
backend gets a scrubbed environment (no API keys) and a scratch directory as cwd, HOME and TMPDIR. docs/sandboxes.md
says what each backend guarantees and what it does not.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import queue
import secrets
import shutil
import site
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from dspy.primitives.code_interpreter import CodeInterpreterError
from dspy.utils.callback import with_callbacks

from rlmlab.errors import ToolError
from rlmlab.executors._dspy_adapter import (DSPY_WORKER_SCRIPT, WorkerProtocol, local_execute,
                                             local_invoke_tool)
from rlmlab.executors._differences import LOCAL_INTERPRETER_DIFFERENCES, HeldClock
from rlmlab.executors._replies import REPLY_LINE_MAX, Oversize, ReplyQueue, parse_reply, read_replies
from rlmlab.handles import decode_handles, encode_handles
from rlmlab.lm import call_role
from rlmlab.sandbox import (SANDBOXES, Backend, SandboxChoice, SandboxUnavailable, choose_sandbox, default_sandbox,
                            SCRATCH_QUOTA_BYTES, print_warning, scrubbed_env, watch_scratch)
from rlmlab.tools import DEADLINE_KEY, Workspace, exit_description

__all__ = ["RLMLabInterpreter", "InterpreterFactory", "LOCAL_INTERPRETER_DIFFERENCES"]

_WORKER = Path(__file__).with_name("_worker.py")
_SITE_PACKAGES = os.pathsep.join(site.getsitepackages())  # the host's (a venv's), which model code may import from
_SUB_LLM_TOOLS = {"llm_query": 1, "llm_query_batched": None}
_SUB_LLM_ARG = {"llm_query": "prompt", "llm_query_batched": "prompts"}
# Host tools that run a whole sub-run (rlmlab/executors/_recursion.py): the step's timeout stops while they run
_SUB_RUN_TOOLS = frozenset({"rlm_query", "rlm_query_batched"})
# The worker's replies: each answers the pending request (its xid); tool requests are bounded per step.
_REPLY_TYPES = ("result", "final", "syntax", "execution_error", "terminal_error")
_TOOL_CALLS_PER_STEP = 10_000
_TOOL_CALLS_AT_ONCE = 32


class RLMLabInterpreter(WorkerProtocol):
    """dspy's LocalInterpreter with the rlmlab workspace's tools, BlobRef handles and restart on timeout.

    Calls to registered tools go through :meth:`Workspace.call` (so caps,
    observers and the Turing Protocol's pre-execution hooks apply); calls to
    ``llm_query`` are counted as sub-LLM calls. When a step exceeds
    ``step_timeout`` seconds the worker is killed and restarted, the
    recorded setup (inputs, tools) is replayed, and the step returns an
    error the model can read; variables it defined are lost.

    A workspace tool's :class:`ToolError` goes back to the code as an exception
    the model reads; any other exception from a workspace tool (a cap
    violation, a bug) ends the run: ``execute`` raises it and the executor
    records it in ``Trajectory.error``. DSPy's own tools (``llm_query``) keep
    DSPy's handling.
    """

    execution_instructions = WorkerProtocol.execution_instructions
    runs_pyodide = False  # True on the pyodide backend's interpreter class (rlmlab/executors/_pyodide.py)

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # sandbox="pyodide" is another interpreter class (rlmlab/executors/_pyodide.py): the fixed constructor
        # RLMLabInterpreter(ws, sandbox="pyodide") returns one when it can run here (else the policy decides).
        if cls is RLMLabInterpreter and kwargs.get("sandbox") == "pyodide":
            choice = choose_sandbox("pyodide", kwargs.get("sandbox_policy", "best_effort"))
            if choice.name == "pyodide":
                other = pyodide_interpreter_class()
                if issubclass(other, cls):
                    return super().__new__(other)  # Python then runs other.__init__ with the same arguments
                params = inspect.signature(other).parameters
                if not any(p.kind is p.VAR_KEYWORD for p in params.values()):  # e.g. no ``notes``: leave it out
                    kwargs = {k: v for k, v in kwargs.items() if k in params}
                return other(*args, **kwargs)
        return super().__new__(cls)

    def __init__(self, workspace: Workspace | None = None, tools: dict[str, Any] | None = None,
                 output_fields: list[dict[str, Any]] | None = None, *, step_timeout: float = 30.0,
                 sub_call_counter: Any = None, callbacks: list[Any] | None = None,
                 memory_limit_mb: int | None = None, sandbox: str | None = None,
                 sandbox_policy: str = "best_effort", notes: list[str] | None = None,
                 path_roots: tuple[str, ...] = ()):
        super().__init__(tools=tools, output_fields=output_fields, execution_timeout=step_timeout,
                         callbacks=callbacks)
        workspace = workspace if workspace is not None else Workspace()
        if workspace.store.open:  # a person's namespace sees its whole store; the step code it runs gets its own
            workspace = dataclasses.replace(workspace, store=workspace.store.child())  # keys (granted back up)
        self.workspace = workspace
        self.sub_call_counter = sub_call_counter
        self.memory_limit_mb = memory_limit_mb
        choice = choose_sandbox(sandbox or default_sandbox(), sandbox_policy)  # required + unavailable: raises here
        if choice.name == "pyodide" and not getattr(type(self), "runs_pyodide", False):
            # a subclass of this CPython-worker interpreter (the scratchpad's tapped one) cannot run under Pyodide
            choice = choose_sandbox("confined", choice.policy)
            choice = SandboxChoice(choice.backend, "pyodide", choice.policy, f"sandbox: pyodide is not available to "
                                   f"{type(self).__name__}; running {choice.name}" + (f" ({choice.warning})" if
                                                                                      choice.warning else ""))
        self._backend: Backend = choice.backend
        self.sandbox_used: str = choice.name  # the backend actually used ("confined", "none", "pyodide")
        self.notes = notes  # the run's trajectory notes (a fallback warning, a scratch quota stop)
        self._quota_stop: str | None = None  # why the scratch watch stopped the worker, for the step's error
        self.sandbox_warning: str | None = choice.warning  # a fallback or "none": printed once, kept in ``notes``
        if choice.warning and notes is not None and choice.warning not in notes:
            notes.append(choice.warning)  # the run's trajectory notes
        # The worker's cwd, HOME and TMPDIR (a host path, the same path inside the sandbox); kept across restarts.
        self.scratch_dir = Path(tempfile.mkdtemp(prefix="rlmlab-scratch-"))
        self._remove_scratch = weakref.finalize(self, shutil.rmtree, str(self.scratch_dir), True)
        user = self._backend.worker_user()
        if user is not None:  # the worker runs as another user (the host's root started it): scratch is theirs
            os.chown(self.scratch_dir, *user)
        # Paths a tool may read for this interpreter's step code: the roots the run declared, and scratch.
        self.workspace = dataclasses.replace(workspace, path_roots=(*(workspace.path_roots or ()), *path_roots,
                                                                    str(self.scratch_dir)))
        self.recording_setup = False
        self._setup: list[tuple[str, dict[str, Any]]] = []
        self.restarts = 0
        self.crashes = 0
        self._started: subprocess.Popen[str] | None = None  # the latest worker (kept after a crash clears _process)
        self.reply_queue = ReplyQueue()
        self._xid: str | None = None  # the execute request a reply must answer (None: none pending)
        self._answered: list[str] = []  # the last few requests' ids (a late second reply to one is not news)
        self._refused: list[str] = []  # what this step wrote to the reply channel that the host refused
        self._tool_calls = 0  # tool requests this step
        self._in_flight = 0  # tool requests being served now
        self._count_lock = threading.Lock()
        self._clock = HeldClock()  # the step's timeout stops while a sub-run (rlm_query) serves it

    @with_callbacks  # DSPy's startup callbacks (on_interpreter_startup_*), also when a timeout restarts the worker
    def start(self) -> None:
        if self.session_ended:
            raise CodeInterpreterError("RLMLabInterpreter session has been shut down.")
        if self.worker_process is not None:
            return
        if self.sandbox_warning and self.restarts == 0:
            print_warning(self.sandbox_warning)
        extra: dict[str, str] = {}
        if self.memory_limit_mb:
            extra["RLMLAB_WORKER_MEMORY_MB"] = str(int(self.memory_limit_mb))
        confinement = self._backend.worker_confinement(self.scratch_dir, self.memory_limit_mb)
        if confinement is not None:
            extra["RLMLAB_SANDBOX_CONFINE"] = json.dumps(confinement)
        extra["RLMLAB_WORKER_SITE"] = _SITE_PACKAGES  # the worker starts without site (-S): these, no .pth files
        argv = self._backend.wrap([sys.executable, "-S", str(_WORKER), str(DSPY_WORKER_SCRIPT)], self.scratch_dir)
        try:
            process = subprocess.Popen(
                argv, env=scrubbed_env(self.scratch_dir, extra), cwd=self.scratch_dir,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                start_new_session=os.name == "posix", text=True,
            )
        except OSError as exc:
            raise CodeInterpreterError(f"Unable to start Python worker: {exc}") from exc
        self.worker_process = self._started = process
        threading.Thread(target=self.read_output, args=(process,), daemon=True).start()
        watch_scratch(process, self.scratch_dir, on_exceeded=self._over_quota)
        message = self.receive_message(time.monotonic() + 30, "Python worker did not start within 30 seconds.")
        if message.get("type") == "sandbox_error":  # the worker would not serve unconfined
            self.session_ended = True
            self.kill_worker()
            raise SandboxUnavailable(str(message.get("error")))
        if message.get("type") != "ready":
            self.raise_terminal_error(f"Python worker returned an invalid startup message: {message!r}")

    def shutdown(self) -> None:
        super().shutdown()
        self._remove_scratch()

    def _over_quota(self, used: int) -> None:
        self._quota_stop = f"was stopped: its scratch directory held {used >> 20} MB, over the " \
                           f"{SCRATCH_QUOTA_BYTES >> 20} MB quota (the directory was emptied)"
        if self.notes is not None:
            self.notes.append(f"sandbox: the REPL's scratch directory reached {used >> 20} MB, over its "
                              f"{SCRATCH_QUOTA_BYTES >> 20} MB quota: the worker was stopped and the directory emptied")

    @with_callbacks  # callbacks see what the caller gets (the timeout message after a restart)
    def execute(self, code: str, variables: dict[str, Any] | None = None) -> Any:
        if self.recording_setup:
            self._setup.append((code, dict(variables or {})))
        if self.execution_timeout is not None:  # tools the code calls may not outlast the step (tools/_bounded.py)
            self.workspace.extras[DEADLINE_KEY] = time.monotonic() + self.execution_timeout
        try:
            return self._with_refusals(local_execute(self, code, variables))
        except CodeInterpreterError as exc:
            process = self._started
            if self.recording_setup or process is None:
                raise
            if "execution timeout" in str(exc):
                self._restart()
                return (f"[Error] TimeoutError: the step ran over {self.execution_timeout:g}s and was stopped. "
                        "The REPL restarted: your inputs and tools are back, variables you defined are gone.")
            if not str(exc).startswith(_TERMINAL):  # a misuse of the API (bad variables, ...), not a dead worker
                raise
            self.crashes += 1
            self._restart()
            how = _how_it_ended(exc, process, self._backend)
            if self._quota_stop is not None:  # the host stopped it: not the out-of-memory killer
                how, self._quota_stop = self._quota_stop, None
            return (f"[Error] WorkerCrash: the REPL process {how} during this step. "
                    "The REPL restarted: your inputs and tools are back, variables you defined are gone.")
        finally:
            self.workspace.extras.pop(DEADLINE_KEY, None)

    def read_output(self, process: subprocess.Popen[str]) -> None:
        # The queue of this process, not ``self.reply_queue`` at each line: after a restart the old process's
        # reader must not put its end-of-stream into the new process's queue. Bytes, bounded (see _replies).
        responses = self.reply_queue
        assert process.stdout is not None
        read_replies(getattr(process.stdout, "buffer", process.stdout), responses)

    def kill_worker(self) -> None:
        try:
            super().kill_worker()
        except OSError:  # closing a dead worker's stdin flushes into a broken pipe: it is gone either way
            pass

    def _restart(self) -> None:
        self.restarts += 1
        self.session_ended, self.worker_process = False, None
        self.reply_queue.close()  # the old reader may be waiting on a full queue: it stops there
        self.reply_queue = ReplyQueue()
        self._xid = None
        self.start()
        for code, variables in self._setup:
            local_execute(self, code, variables)

    # -- the reply channel: every message is step code's until it answers the pending request ------------------

    def send_message(self, message: dict[str, Any], process: subprocess.Popen[str] | None = None) -> None:
        if message.get("type") == "execute":  # a fresh id the step's code cannot know before it runs
            self._xid = secrets.token_hex(12)
            self._answered.append(self._xid)
            del self._answered[:-8]
            message = {**message, "xid": self._xid}
            self._refused, self._tool_calls = [], 0
            self._clock.reset()
        super().send_message(message, process)

    def receive_message(self, deadline: float | None, timeout_message: str) -> dict[str, Any]:
        """The next message that answers what the host waits for; anything else the worker's pipe carries (a
        line over REPLY_LINE_MAX bytes, not JSON, a reply to no pending request, a tool request over the step's
        caps) is refused, noted for the step, and reading goes on."""
        while True:
            due, paused = self._clock.deadline(deadline)
            timeout = None if due is None else max(0, due - time.monotonic())
            try:
                item = self.reply_queue.get(timeout=min(timeout, 1.0) if paused and timeout is not None else timeout)
            except queue.Empty:
                due, paused = self._clock.deadline(deadline)
                if paused or (due is not None and due > time.monotonic()):
                    continue
                self.raise_terminal_error(timeout_message)
            if item is None:
                self.raise_terminal_error("Python worker exited unexpectedly.")
            if isinstance(item, BaseException):  # a workspace tool's own failure (see serve_tool)
                self.shutdown()
                raise item
            if isinstance(item, Oversize):
                self._refuse(f"a message of {item.size} bytes, over the {REPLY_LINE_MAX >> 20} MiB a reply may hold")
                continue
            if not item.strip():  # the worker ends any partial line before its own messages
                continue
            message = parse_reply(item)
            problem = "a line that is not a protocol message" if message is None else self._unexpected(message)
            if problem is None:
                return message  # type: ignore[return-value]
            if problem:
                self._refuse(problem)

    def _unexpected(self, message: dict[str, Any]) -> str | None:
        """None when ``message`` answers what is pending; "" when it was answered here (a tool request over the
        step's caps); else why it is refused."""
        kind = message["type"]
        if kind in ("ready", "sandbox_error"):
            return None if self._xid is None else f"a {kind!r} message during a step"
        if kind in _REPLY_TYPES:
            if self._xid is None or message.get("xid") != self._xid:
                if message.get("xid") in self._answered:  # an earlier step's own reply, after a forged one was
                    # taken for it: that step's business, noted in the run, not in this step's output
                    if self.notes is not None:
                        self.notes.append(f"sandbox: [refused] a second {kind!r} reply to an earlier step")
                    return ""
                return f"a {kind!r} reply to no pending request"
            self._xid = None  # answered: a second reply with this id is refused too
            return None
        if kind != "tool_request":
            return f"a message of unknown type {kind[:40]!r}"
        rid, name = message.get("id"), message.get("name")
        if not (isinstance(rid, int) and isinstance(name, str) and isinstance(message.get("args", []), list)
                and isinstance(message.get("kwargs", {}), dict)):
            return "a malformed tool request"
        if self._xid is None:
            return "a tool request outside a step"
        with self._count_lock:
            self._tool_calls += 1
            over = (f"more than {_TOOL_CALLS_PER_STEP} tool calls in one step" if self._tool_calls > _TOOL_CALLS_PER_STEP
                    else f"more than {_TOOL_CALLS_AT_ONCE} tool calls at once" if self._in_flight >= _TOOL_CALLS_AT_ONCE
                    else None)
            if over is None:
                self._in_flight += 1
                return None
        # to this worker only: one that is gone (a restart under way) needs no answer
        self.send_message({"type": "tool_error", "id": rid, "error": f"ToolError: {over} (refused)"}, self._started)
        return ""

    def _refuse(self, what: str) -> None:
        self._refused.append(what)

    def _with_refusals(self, result: Any) -> Any:
        """The step's result, with one line naming what the host refused from its reply channel (if anything)."""
        if not self._refused:
            return result
        kinds = list(dict.fromkeys(self._refused))
        note = (f"[refused] the host ignored {len(self._refused)} message(s) this step wrote to the REPL's reply "
                f"channel: {'; '.join(kinds[:3])}{' ...' if len(kinds) > 3 else ''}")
        self._refused = []
        if self.notes is not None:
            self.notes.append(f"sandbox: {note}")
        return f"{result}\n{note}" if isinstance(result, str) else (note if result is None else result)

    def serve_tool(self, request: dict[str, Any], process: subprocess.Popen[str]) -> None:
        """Serve one tool request of step code. Its arguments are plain JSON; a ToolError, or any exception of a
        sub-LM or other host tool, is the step's error; a BaseException host code raised for the step
        (SystemExit, KeyboardInterrupt) is refused as the step's error too, never the caller's; any other
        exception of a workspace tool (a cap broken, a bug) wakes execute(), which raises it and ends the run."""
        name = request.get("name")
        try:
            try:
                value = self.invoke_tool(name, request.get("args", []), request.get("kwargs", {}))
                json.dumps(value, allow_nan=False)
            except ToolError as exc:
                error = f"ToolError: {exc}"
            except Exception as exc:  # noqa: BLE001
                if name in self.workspace.registry:  # not the model's to fix
                    self.reply_queue.put(exc)
                    return
                error = f"{type(exc).__name__}: {exc}"
            except BaseException as exc:  # noqa: BLE001 - raised by host code on the step's behalf: the step's
                error = (f"HostError: host code serving {str(name)[:40]!r} raised {type(exc).__name__}; refused "
                         "(the run goes on)")
            else:
                self.send_message({"type": "tool_result", "id": request["id"], "value": value}, process)
                return
            self.send_message({"type": "tool_error", "id": request["id"], "error": error[:2000]}, process)
        finally:
            with self._count_lock:
                self._in_flight -= 1

    @with_callbacks  # on_interpreter_tool_call_* for workspace tools too, once per call
    def invoke_tool(self, tool_name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        args, kwargs = decode_handles(list(args)), decode_handles(dict(kwargs))
        if tool_name in self.workspace.registry:
            return encode_handles(self.workspace.call(tool_name, *args, **kwargs))
        if tool_name in _SUB_LLM_TOOLS:
            value = _sub_lm_text(tool_name, args, kwargs)
            n = len(value) if tool_name == "llm_query_batched" else 1
            if self.sub_call_counter is not None:
                self.sub_call_counter(n)
            with call_role("sub"):
                return local_invoke_tool(self, tool_name, args, kwargs)
        if not isinstance(tool_name, str) or tool_name.startswith("_") or tool_name not in self.tools:
            # DSPy's sandbox facade (__dspy_construct__, __dspy_call__) builds modules on the host from strings
            # step code wrote: never served (MeteredRLM does not install it)
            raise ToolError(f"no tool named {str(tool_name)[:60]!r} is offered to step code")
        if tool_name in _SUB_RUN_TOOLS:  # a sub-run has its own steps, timeouts and budgets: this step waits
            with self._clock.held():
                return encode_handles(local_invoke_tool(self, tool_name, args, kwargs))
        return encode_handles(local_invoke_tool(self, tool_name, args, kwargs))


def _sub_lm_text(name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """The one argument of llm_query (a non-empty string) or llm_query_batched (a list of them), checked before any
    host code sees it; ToolError naming what is wrong."""
    param = _SUB_LLM_ARG[name]
    if len(args) + len(kwargs) != 1 or (kwargs and param not in kwargs):
        raise ToolError(f"{name}: takes one argument, {param}")
    value = args[0] if args else kwargs[param]
    texts = value if name == "llm_query_batched" else [value]
    if not isinstance(texts, list) or not all(isinstance(t, str) and t for t in texts):
        what = "a list of non-empty strings" if name == "llm_query_batched" else "a non-empty string"
        raise ToolError(f"{name}: {param}: expected {what}, got {type(value).__name__}")
    return value


_TERMINAL = ("Python worker exited unexpectedly", "Python worker returned invalid JSON",
             "Python worker returned an invalid message", "Python worker returned an unknown message",
             "Python worker failed", "Unable to send request to Python worker")


def _how_it_ended(exc: CodeInterpreterError, process: subprocess.Popen[str], backend: Backend) -> str:
    message = str(exc)
    if not message.startswith("Python worker exited unexpectedly"):  # alive but broken: the host stopped it
        detail = message.removeprefix("Python worker failed: ")
        return f"was stopped ({detail[:200]})"
    code = process.poll()
    return "stopped answering" if code is None else exit_description(backend.exit_code(code))


_HANDLE_HINT = (" Large inputs are BlobRef handles: inspect them with ctx_stats, ctx_peek, ctx_slice and ctx_find"
                " instead of printing whole payloads.")


class InterpreterFactory:
    """Zero-argument factory dspy.RLM calls once per forward pass.

    ``execution_instructions`` (shown to the model) mentions handles only when
    the workspace offers the ctx_* tools.
    """

    def __init__(self, workspace: Workspace, step_timeout: float = 30.0, sub_call_counter: Any = None, *,
                 sandbox: str | None = None, sandbox_policy: str = "best_effort", notes: list[str] | None = None,
                 path_roots: tuple[str, ...] = ()):
        self.workspace, self.step_timeout, self.sub_call_counter = workspace, step_timeout, sub_call_counter
        self.path_roots = path_roots  # directories a tool may read paths beneath for the step code (and scratch)
        self.sandbox, self.sandbox_policy = sandbox or default_sandbox(), sandbox_policy
        self.notes = notes  # the run's trajectory notes: a sandbox fallback or "none" warning lands here
        # required + unavailable: refuse before the run starts
        self.sandbox_used = choose_sandbox(self.sandbox, self.sandbox_policy).name
        self.last: RLMLabInterpreter | None = None
        has_handles = "ctx_peek" in workspace.registry
        repl = pyodide_interpreter_class() if self.sandbox_used == "pyodide" else RLMLabInterpreter
        instructions = getattr(repl, "execution_instructions", RLMLabInterpreter.execution_instructions)
        self.execution_instructions = instructions + (_HANDLE_HINT if has_handles else "")

    def __call__(self) -> RLMLabInterpreter:
        self.last = RLMLabInterpreter(self.workspace, step_timeout=self.step_timeout,
                                      sub_call_counter=self.sub_call_counter, **self.sandbox_options())
        return self.last

    def sandbox_options(self) -> dict[str, Any]:
        """The keywords every interpreter this factory makes gets (TappedFactory's too)."""
        return {"sandbox": self.sandbox, "sandbox_policy": self.sandbox_policy, "notes": self.notes,
                "path_roots": self.path_roots}


@SANDBOXES.register("pyodide")
class PyodideSandbox(Backend):
    """``pyodide``: dspy's Deno + Pyodide interpreter with rlmlab's tools (rlmlab/executors/_pyodide.py)."""

    def __init__(self) -> None:
        super().__init__("pyodide")

    def unavailable(self) -> str | None:
        try:
            other = pyodide_interpreter_class()
        except ImportError as exc:
            return f"the pyodide interpreter is not installed ({exc})"
        check = getattr(other, "unavailable", None)  # e.g. Deno missing: the class says why
        return check() if callable(check) else None


# Interpreter classes of other backends by sandbox name, put here by their own modules (rlmlab/executors/_pyodide.py
# registers "pyodide"; rlmlab.executors imports it): a table rather than an import, so this base class does not
# import the module of its own subclass (tests/test_import_graph.py checks for such circles).
INTERPRETER_CLASSES: dict[str, type] = {}


def pyodide_interpreter_class() -> type:
    """The pyodide backend's interpreter class (same constructor as RLMLabInterpreter). ImportError when no module
    has registered one. The one place the pyodide backend is wired in."""
    try:
        return INTERPRETER_CLASSES["pyodide"]
    except KeyError:
        raise ImportError("no pyodide interpreter is registered (rlmlab/executors/_pyodide.py does)") from None
