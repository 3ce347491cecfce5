"""RLMLabInterpreter: generated code runs in a separate CPython process with a per-step timeout.

This is process isolation for robustness (a crash or hang ends only the
worker), not a security sandbox: the worker has the user's files, network
and environment.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from dspy.primitives import local_interpreter as _dspy_local
from dspy.primitives.code_interpreter import CodeInterpreterError
from dspy.primitives.local_interpreter import LocalInterpreter
from dspy.utils.callback import with_callbacks

from rlmlab.errors import ToolError
from rlmlab.handles import decode_handles, encode_handles
from rlmlab.lm import call_role
from rlmlab.tools import DEADLINE_KEY, Workspace, exit_description

__all__ = ["RLMLabInterpreter", "InterpreterFactory", "LOCAL_INTERPRETER_DIFFERENCES"]

# Where RLMLabInterpreter knowingly behaves unlike dspy's LocalInterpreter (tests/test_dspy_contract.py runs
# the same checks on both and consults this table; everything not listed here behaves the same).
LOCAL_INTERPRETER_DIFFERENCES: dict[str, str] = {
    "timeout_recovery": "A step over the timeout kills the worker, restarts it, replays the recorded setup "
                        "(inputs, tools) and returns an '[Error] TimeoutError: ...' string; the session goes on "
                        "(variables the model defined are lost). LocalInterpreter raises CodeInterpreterError and "
                        "the session is over.",
    "tool_errors": "A workspace tool's ToolError reaches the code as an exception, as any tool error does in "
                   "LocalInterpreter; any other exception from a workspace tool (a cap violation, a bug) makes "
                   "execute() raise it, so the run ends. DSPy's own tools (llm_query) keep DSPy's handling.",
    "handles": "Workspace tool arguments and results cross the process boundary as BlobRef handles "
               "(decode_handles/encode_handles); LocalInterpreter passes plain JSON.",
    "constructor": "The first argument is the rlmlab Workspace whose registered tools the code may call; "
                   "``step_timeout`` (default 30 s) is LocalInterpreter's ``execution_timeout`` (default none). "
                   "``tools``, ``output_fields`` and ``callbacks`` are accepted as in LocalInterpreter.",
    "crash_recovery": "A worker that dies during a step (os._exit, a signal such as the out-of-memory killer's "
                      "SIGKILL, a broken reply) is restarted like a timed-out one and the step returns an "
                      "'[Error] WorkerCrash: ...' string; LocalInterpreter raises CodeInterpreterError.",
    "replayed_setup_callbacks": "The setup replayed after a timeout restart runs without execute callbacks "
                                "(the caller did not ask for it again); the restart's start() fires the startup "
                                "callbacks.",
}

_WORKER = Path(__file__).with_name("_worker.py")
_DSPY_WORKER = Path(_dspy_local.__file__).with_name("local_interpreter_worker.py")
_SUB_LLM_TOOLS = {"llm_query": 1, "llm_query_batched": None}


class RLMLabInterpreter(LocalInterpreter):
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

    execution_instructions = LocalInterpreter.execution_instructions

    def __init__(self, workspace: Workspace | None = None, tools: dict[str, Any] | None = None,
                 output_fields: list[dict[str, Any]] | None = None, *, step_timeout: float = 30.0,
                 sub_call_counter: Any = None, callbacks: list[Any] | None = None,
                 memory_limit_mb: int | None = None):
        super().__init__(tools=tools, output_fields=output_fields, execution_timeout=step_timeout,
                         callbacks=callbacks)
        self.workspace = workspace if workspace is not None else Workspace()
        self.sub_call_counter = sub_call_counter
        self.memory_limit_mb = memory_limit_mb
        self.recording_setup = False
        self._setup: list[tuple[str, dict[str, Any]]] = []
        self.restarts = 0
        self.crashes = 0
        self._started: subprocess.Popen[str] | None = None  # the latest worker (kept after a crash clears _process)

    @with_callbacks  # DSPy's startup callbacks (on_interpreter_startup_*), also when a timeout restarts the worker
    def start(self) -> None:
        if self._ended:
            raise CodeInterpreterError("RLMLabInterpreter session has been shut down.")
        if self._process is not None:
            return
        env = None
        if self.memory_limit_mb:
            env = {**os.environ, "RLMLAB_WORKER_MEMORY_MB": str(int(self.memory_limit_mb))}
        try:
            process = subprocess.Popen(
                [sys.executable, str(_WORKER), str(_DSPY_WORKER)], env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                start_new_session=os.name == "posix", text=True,
            )
        except OSError as exc:
            raise CodeInterpreterError(f"Unable to start Python worker: {exc}") from exc
        self._process = self._started = process
        threading.Thread(target=self._read_responses, args=(process,), daemon=True).start()
        message = self._receive(time.monotonic() + 30, "Python worker did not start within 30 seconds.")
        if message.get("type") != "ready":
            self._raise_terminal_error(f"Python worker returned an invalid startup message: {message!r}")

    @with_callbacks  # callbacks see what the caller gets (the timeout message after a restart)
    def execute(self, code: str, variables: dict[str, Any] | None = None) -> Any:
        if self.recording_setup:
            self._setup.append((code, dict(variables or {})))
        if self.execution_timeout is not None:  # tools the code calls may not outlast the step (tools/_bounded.py)
            self.workspace.extras[DEADLINE_KEY] = time.monotonic() + self.execution_timeout
        try:
            return _local_execute(self, code, variables)
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
            return (f"[Error] WorkerCrash: the REPL process {_how_it_ended(exc, process)} during this step. "
                    "The REPL restarted: your inputs and tools are back, variables you defined are gone.")
        finally:
            self.workspace.extras.pop(DEADLINE_KEY, None)

    def _read_responses(self, process: subprocess.Popen[str]) -> None:
        # The queue of this process, not ``self._responses`` at each line: after a restart the old process's
        # reader must not put its end-of-stream into the new process's queue.
        responses = self._responses
        assert process.stdout is not None
        for line in process.stdout:
            responses.put(line)
        responses.put(None)

    def _restart(self) -> None:
        self.restarts += 1
        self._ended, self._process = False, None
        self._responses = queue.Queue()
        self.start()
        for code, variables in self._setup:
            _local_execute(self, code, variables)

    def _handle_tool(self, request: dict[str, Any], process: subprocess.Popen[str]) -> None:
        name = request.get("name")
        if name not in self.workspace.registry:
            return super()._handle_tool(request, process)
        try:
            value = self.invoke_tool(name, request.get("args", []), request.get("kwargs", {}))
            json.dumps(value, allow_nan=False)
        except ToolError as exc:
            self._send({"type": "tool_error", "id": request["id"], "error": f"ToolError: {exc}"}, process)
            return
        except BaseException as exc:  # not the model's to fix: wake execute(), which raises it and ends the run
            self._responses.put(exc)
            return
        self._send({"type": "tool_result", "id": request["id"], "value": value}, process)

    @with_callbacks  # on_interpreter_tool_call_* for workspace tools too, once per call
    def invoke_tool(self, tool_name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        args, kwargs = decode_handles(list(args)), decode_handles(dict(kwargs))
        if tool_name in self.workspace.registry:
            return encode_handles(self.workspace.call(tool_name, *args, **kwargs))
        if tool_name in _SUB_LLM_TOOLS:
            n = _SUB_LLM_TOOLS[tool_name] or len((args or [kwargs.get("prompts", [])])[0])
            if self.sub_call_counter is not None:
                self.sub_call_counter(n)
            with call_role("sub"):
                return _local_invoke_tool(self, tool_name, args, kwargs)
        return encode_handles(_local_invoke_tool(self, tool_name, args, kwargs))


_TERMINAL = ("Python worker exited unexpectedly", "Python worker returned invalid JSON",
             "Python worker returned an invalid message", "Python worker returned an unknown message",
             "Python worker failed", "Unable to send request to Python worker")


def _how_it_ended(exc: CodeInterpreterError, process: subprocess.Popen[str]) -> str:
    message = str(exc)
    if not message.startswith("Python worker exited unexpectedly"):  # alive but broken: the host stopped it
        detail = message.removeprefix("Python worker failed: ")
        return f"was stopped ({detail[:200]})"
    code = process.poll()
    return "stopped answering" if code is None else exit_description(code)


# LocalInterpreter's methods without their callback wrappers: RLMLabInterpreter's own wrappers fire the
# callbacks once, and internal calls (replayed setup) fire none.
_local_execute = getattr(LocalInterpreter.execute, "__wrapped__", LocalInterpreter.execute)
_local_invoke_tool = getattr(LocalInterpreter.invoke_tool, "__wrapped__", LocalInterpreter.invoke_tool)


_HANDLE_HINT = (" Large inputs are BlobRef handles: inspect them with ctx_stats, ctx_peek, ctx_slice and ctx_find"
                " instead of printing whole payloads.")


class InterpreterFactory:
    """Zero-argument factory dspy.RLM calls once per forward pass.

    ``execution_instructions`` (shown to the model) mentions handles only when
    the workspace offers the ctx_* tools.
    """

    def __init__(self, workspace: Workspace, step_timeout: float = 30.0, sub_call_counter: Any = None):
        self.workspace, self.step_timeout, self.sub_call_counter = workspace, step_timeout, sub_call_counter
        self.last: RLMLabInterpreter | None = None
        has_handles = "ctx_peek" in workspace.registry
        self.execution_instructions = RLMLabInterpreter.execution_instructions + (_HANDLE_HINT if has_handles else "")

    def __call__(self) -> RLMLabInterpreter:
        self.last = RLMLabInterpreter(self.workspace, step_timeout=self.step_timeout,
                                      sub_call_counter=self.sub_call_counter)
        return self.last
