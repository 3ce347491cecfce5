"""The one module that touches DSPy's private surface: every private method of dspy.RLM and LocalInterpreter that
rlmlab overrides or calls, and every private attribute it reads or sets, under names of rlmlab's own.

- :class:`AdaptedRLM` (a dspy.RLM) routes the seven private methods DSPy's loop calls to rlmlab's names
  (:meth:`~AdaptedRLM.run_code`, :meth:`~AdaptedRLM.build_variables`, ...); each one's default is DSPy's own
  method, so a subclass (MeteredRLM) overrides the rlmlab name and calls ``super()`` for DSPy's behaviour.
  :func:`tool_docs`, :func:`action_signature` and :func:`set_action_signature` read and replace what a dspy.RLM
  set up in its ``__init__``.
- :class:`WorkerProtocol` (a LocalInterpreter) does the same for the worker protocol (read, send, receive, serve a
  tool request, kill, fail) and names the worker state DSPy keeps (the process, whether the session ended, the
  queue of the worker's lines). :func:`local_execute` and :func:`local_invoke_tool` are LocalInterpreter's
  methods without their callback wrappers; :data:`DSPY_WORKER_SCRIPT` is DSPy's worker script.

tests/test_dspy_private.py checks that each name used here exists in the installed DSPy with the parameters
passed, and that no other module of rlmlab touches a DSPy private name.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, NoReturn

import dspy
from dspy.primitives import local_interpreter as _dspy_local
from dspy.primitives.local_interpreter import LocalInterpreter

__all__ = ["AdaptedRLM", "WorkerProtocol", "tool_docs", "action_signature", "set_action_signature",
           "local_execute", "local_invoke_tool", "DSPY_WORKER_SCRIPT"]

DSPY_WORKER_SCRIPT = Path(_dspy_local.__file__).with_name("local_interpreter_worker.py")


# -- dspy.RLM ------------------------------------------------------------------------------------------------------

class AdaptedRLM(dspy.RLM):
    """dspy.RLM whose private steps are rlmlab's methods: DSPy's loop calls the private name, which calls the public
    one here; each public one does what DSPy does unless a subclass overrides it."""

    def _execute_code(self, repl: Any, code: str, input_args: dict[str, Any]) -> Any:
        return self.run_code(repl, code, input_args)

    def run_code(self, repl: Any, code: str, input_args: dict[str, Any]) -> Any:
        """Run one step's code in the REPL (DSPy: ``_execute_code``)."""
        return dspy.RLM._execute_code(self, repl, code, input_args)

    def _build_variables(self, **input_args: Any) -> list[Any]:
        return self.build_variables(**input_args)

    def build_variables(self, **input_args: Any) -> list[Any]:
        """The REPL variables the action prompt lists (DSPy: ``_build_variables``)."""
        return dspy.RLM._build_variables(self, **input_args)

    def _prepare_serializable_vars(self, input_args: dict[str, Any], repl: Any) -> dict[str, Any]:
        return self.prepare_inputs(input_args, repl)

    def prepare_inputs(self, input_args: dict[str, Any], repl: Any) -> dict[str, Any]:
        """Put the inputs into the REPL (DSPy: ``_prepare_serializable_vars``)."""
        return dspy.RLM._prepare_serializable_vars(self, input_args, repl)

    def _make_llm_tools(self, budget: Any = None, max_workers: int = 8) -> dict[str, Any]:
        return self.llm_tools(budget, max_workers=max_workers)

    def llm_tools(self, budget: Any = None, max_workers: int = 8) -> dict[str, Any]:
        """The sub-LM tools step code may call (DSPy: ``_make_llm_tools``)."""
        return dspy.RLM._make_llm_tools(self, budget, max_workers=max_workers)

    def _setup_facade(self, repl: Any, budget: Any, interpreter_factory: Any) -> str:
        return self.setup_facade(repl, budget, interpreter_factory)

    def setup_facade(self, repl: Any, budget: Any, interpreter_factory: Any) -> str:
        """Install DSPy's host-side module facade in the REPL; its sub-agent rules (DSPy: ``_setup_facade``)."""
        return dspy.RLM._setup_facade(self, repl, budget, interpreter_factory)

    def _execute_iteration(self, repl, variables, history, iteration, input_args, output_field_names,
                           interpreter_factory, sub_agent_rules):
        return self.run_iteration(repl, variables, history, iteration, input_args, output_field_names,
                                  interpreter_factory, sub_agent_rules)

    def run_iteration(self, repl, variables, history, iteration, input_args, output_field_names,
                      interpreter_factory, sub_agent_rules):
        """One iteration: the action, its code run, the history (DSPy: ``_execute_iteration``)."""
        return dspy.RLM._execute_iteration(self, repl, variables, history, iteration, input_args,
                                           output_field_names, interpreter_factory, sub_agent_rules)

    async def _aexecute_iteration(self, repl, variables, history, iteration, input_args, output_field_names,
                                  interpreter_factory, sub_agent_rules):
        return await self.arun_iteration(repl, variables, history, iteration, input_args, output_field_names,
                                         interpreter_factory, sub_agent_rules)

    async def arun_iteration(self, repl, variables, history, iteration, input_args, output_field_names,
                             interpreter_factory, sub_agent_rules):
        """:meth:`run_iteration` of the async path (DSPy: ``_aexecute_iteration``)."""
        return await dspy.RLM._aexecute_iteration(self, repl, variables, history, iteration, input_args,
                                                  output_field_names, interpreter_factory, sub_agent_rules)


def tool_docs(rlm: Any) -> str:
    """The listing of a dspy.RLM's own tools as its action instructions show it."""
    return rlm._format_tool_docs(rlm._user_tools)


def action_signature(rlm: Any, *default: Any) -> Any:
    """The action signature a dspy.RLM built (``default``, if given, when it has none; else AttributeError)."""
    return getattr(rlm, "_action_signature", *default)


def set_action_signature(rlm: Any, signature: Any) -> None:
    """Replace a dspy.RLM's action signature (the one its action predictor falls back on)."""
    rlm._action_signature = signature


# -- LocalInterpreter ----------------------------------------------------------------------------------------------

class WorkerProtocol(LocalInterpreter):
    """LocalInterpreter whose worker protocol is rlmlab's methods: DSPy calls the private name, which calls the
    public one here; each public one does what DSPy does unless a subclass overrides it. The worker state DSPy keeps
    is read and set through :attr:`worker_process`, :attr:`session_ended` and :attr:`reply_queue`."""

    @property
    def worker_process(self) -> subprocess.Popen[str] | None:
        """The running worker (None before a start and after a kill)."""
        return self._process

    @worker_process.setter
    def worker_process(self, process: subprocess.Popen[str] | None) -> None:
        self._process = process

    @property
    def session_ended(self) -> bool:
        """Whether the session was shut down (or failed): no worker starts again."""
        return self._ended

    @session_ended.setter
    def session_ended(self, ended: bool) -> None:
        self._ended = ended

    @property
    def reply_queue(self) -> Any:
        """The queue the reader thread puts the worker's lines into (and a tool's exception, to wake execute)."""
        return self._responses

    @reply_queue.setter
    def reply_queue(self, replies: Any) -> None:
        self._responses = replies

    def _read_responses(self, process: subprocess.Popen[str]) -> None:
        self.read_output(process)

    def read_output(self, process: subprocess.Popen[str]) -> None:
        """Read the worker's output into the reply queue until it ends (DSPy: ``_read_responses``)."""
        LocalInterpreter._read_responses(self, process)

    def _send(self, message: dict[str, Any], process: subprocess.Popen[str] | None = None) -> None:
        self.send_message(message, process)

    def send_message(self, message: dict[str, Any], process: subprocess.Popen[str] | None = None) -> None:
        """Send one message to the worker, to ``process`` only if given (DSPy: ``_send``)."""
        LocalInterpreter._send(self, message, process)

    def _receive(self, deadline: float | None, timeout_message: str) -> dict[str, Any]:
        return self.receive_message(deadline, timeout_message)

    def receive_message(self, deadline: float | None, timeout_message: str) -> dict[str, Any]:
        """The worker's next message (DSPy: ``_receive``)."""
        return LocalInterpreter._receive(self, deadline, timeout_message)

    def _handle_tool(self, request: dict[str, Any], process: subprocess.Popen[str]) -> None:
        self.serve_tool(request, process)

    def serve_tool(self, request: dict[str, Any], process: subprocess.Popen[str]) -> None:
        """Serve one tool request of step code (DSPy: ``_handle_tool``)."""
        LocalInterpreter._handle_tool(self, request, process)

    def _kill(self) -> None:
        self.kill_worker()

    def kill_worker(self) -> None:
        """Kill the worker and its process group (DSPy: ``_kill``)."""
        LocalInterpreter._kill(self)

    def raise_terminal_error(self, message: str, cause: BaseException | None = None) -> NoReturn:
        """End the session, kill the worker and raise CodeInterpreterError (DSPy: ``_raise_terminal_error``)."""
        self._raise_terminal_error(message, cause)


# LocalInterpreter's methods without their callback wrappers: RLMLabInterpreter's own wrappers fire the
# callbacks once, and internal calls (replayed setup) fire none.
local_execute = getattr(LocalInterpreter.execute, "__wrapped__", LocalInterpreter.execute)
local_invoke_tool = getattr(LocalInterpreter.invoke_tool, "__wrapped__", LocalInterpreter.invoke_tool)
