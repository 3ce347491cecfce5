"""Errors shared across rlmlab.

The split follows inspect_ai: a :class:`ToolError` is reported back to the
model and the agent loop goes on; any other exception ends the run.
"""

from __future__ import annotations

__all__ = ["RLMLabError", "ToolError", "MissingExtraError", "ConfigError", "InputFileError"]


class RLMLabError(Exception):
    """Base class for rlmlab's own errors."""


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


class InputFileError(RLMLabError, ValueError):
    """An input file cannot be read as what it should be (missing, a directory, not UTF-8, not JSON).

    The message reads ``path:line: problem`` (``path: problem`` when no line applies), so an editor can jump to it.
    """

    def __init__(self, path: object, line: int | None, problem: str):
        self.path, self.line, self.problem = str(path), line, problem
        super().__init__(f"{self.path}:{line}: {problem}" if line is not None else f"{self.path}: {problem}")
