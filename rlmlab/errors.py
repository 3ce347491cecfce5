"""Errors shared across rlmlab.

The split follows inspect_ai: a :class:`ToolError` is reported back to the
model and the agent loop goes on; any other exception ends the run.
"""

from __future__ import annotations

__all__ = ["RLMLabError", "ToolError", "MissingExtraError", "ConfigError", "InputFileError", "RunLockedError",
           "DatabaseBusyError", "RunInterrupted"]


class RLMLabError(Exception):
    """Base class for rlmlab's own errors.

    In IPython (any kernel, however rlmlab was imported) one shows as one line, ``ToolError: n: 99999 is out of
    range; allowed 0 to 2000``: the message names the problem and the fix, and the frames inside rlmlab above it
    would only bury it. ``%xmode Verbose``, or an error whose ``show_traceback`` is true, shows the traceback.
    """

    def _render_traceback_(self) -> list[str]:
        # IPython's hook for an exception's own display (InteractiveShell.showtraceback), so a plain kernel needs no
        # extension loaded; the rlmlab kernel's handler (rlmlab.jupyter._extension.short_error) does the same
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None and (shell.InteractiveTB.mode == "Verbose" or getattr(self, "show_traceback", False)):
            return shell.InteractiveTB.structured_traceback(type(self), self, self.__traceback__)
        return [f"{type(self).__name__}: {self}"]


class ToolError(RLMLabError):
    """A tool was called with bad arguments or could not do its job.

    The message names the offending argument and the allowed range; the
    RLM executor shows it to the model as the step's output and continues.
    """


class MissingExtraError(RLMLabError, ImportError):
    """An optional dependency is not installed; the message says which pip install fixes it."""

    def __init__(self, what: str, extra: str, packages: str):
        super().__init__(
            f"{what} needs {packages}, which is not installed. "
            f"Fix: pip install 'rlmlab[{extra}]'  (or: pip install {packages})"
        )


class ConfigError(RLMLabError, ValueError):
    """A configuration file or value is invalid; the message names the file and key."""


class RunLockedError(RLMLabError):
    """Another process holds a run directory's lock; ``directory`` and the holder's ``pid`` (None if unknown) say
    which. The CLI reports it in one line with exit code 2."""

    def __init__(self, directory: object, pid: int | None):
        holder = f"pid {pid}" if pid is not None else "pid unknown"
        super().__init__(f"{directory}: another rlmlab process ({holder}) is writing this run directory; "
                         "wait for it to finish (or stop it), then run again")
        self.directory, self.pid = directory, pid


class DatabaseBusyError(RLMLabError):
    """A SQLite write waited its whole busy timeout for another connection's write lock; the message names the
    database file and the timeout."""

    def __init__(self, path: object, timeout: float):
        super().__init__(f"{path}: another process holds the database's write lock and did not release it within "
                         f"{timeout:g} s; wait for it, or set RLMLAB_SQLITE_BUSY_TIMEOUT (seconds) to wait longer")
        self.path, self.timeout = path, timeout


class InputFileError(ConfigError):
    """An input file cannot be read as what it should be (missing, a directory, not UTF-8, not JSON).

    The message reads ``path:line: problem`` (``path: problem`` when no line applies), so an editor can jump to it.
    """

    def __init__(self, path: object, line: int | None, problem: str):
        self.path, self.line, self.problem = str(path), line, problem
        super().__init__(f"{self.path}:{line}: {problem}" if line is not None else f"{self.path}: {problem}")


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) or Kernel → Interrupt ended a run after what it did was saved.

    ``str()`` is the one line to show ("interrupted after 2 of up to 6 iterations; trajectory saved in ...");
    ``directory`` is where the run is saved (None when nothing was written), ``trajectory`` the interrupted
    run's Trajectory when one run was cut short. A KeyboardInterrupt, so code that stops on Ctrl-C still stops.
    """

    def __init__(self, message: str, directory: object = None, trajectory: object = None):
        super().__init__(message)
        self.directory, self.trajectory = directory, trajectory

    def _render_traceback_(self) -> list[str]:
        # IPython and ipykernel show this instead of the traceback: the frames (llama.cpp's decode loop, DSPy)
        # say nothing about what was kept.
        return [f"KeyboardInterrupt: {self}"]
