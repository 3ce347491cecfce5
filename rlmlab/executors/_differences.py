"""Where RLMLabInterpreter knowingly behaves unlike dspy's LocalInterpreter (one table, read by the docs and
tests/test_dspy_contract.py), and the held step clock behind its ``sub_run_clock`` entry."""

import threading
import time
from contextlib import contextmanager
from typing import Iterator

__all__ = ["LOCAL_INTERPRETER_DIFFERENCES", "HeldClock"]

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
    "sandbox": "The worker runs under a sandbox backend (``sandbox``: confined by default on Linux, pyodide or "
               "none) with a scrubbed environment and its own scratch directory as cwd, HOME and TMPDIR "
               "(``scratch_dir``, removed at shutdown); LocalInterpreter inherits the whole environment, cwd and "
               "the user's rights.",
    "replayed_setup_callbacks": "The setup replayed after a timeout restart runs without execute callbacks "
                                "(the caller did not ask for it again); the restart's start() fires the startup "
                                "callbacks.",
    "sub_run_clock": "While a host tool runs a whole sub-run (rlm_query, rlm_query_batched), the step's timeout "
                     "is held: the sub-run has its own steps, timeouts and budgets. LocalInterpreter's timeout "
                     "counts every host tool's time.",
}


class HeldClock:
    """A step's timeout that stops while sub-runs (rlm_query) serve the step: :meth:`held` around each, and
    :meth:`deadline` gives the step's deadline moved by the time they held it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders, self._since, self._held_s = 0, 0.0, 0.0

    def reset(self) -> None:
        """A new step: nothing held yet."""
        with self._lock:
            self._held_s = 0.0

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            if self._holders == 0:
                self._since = time.monotonic()
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if self._holders == 0:
                    self._held_s += time.monotonic() - self._since

    def deadline(self, deadline: float | None) -> tuple[float | None, bool]:
        """(``deadline`` moved by the time held this step, whether a sub-run holds the clock now)."""
        if deadline is None:
            return None, False
        with self._lock:
            held = self._held_s + (time.monotonic() - self._since if self._holders else 0.0)
            return deadline + held, self._holders > 0
