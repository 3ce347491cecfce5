"""The REPL session that runs inside Pyodide (WebAssembly) for PyodideInterpreter; never imported by the host.

``_pyodide_runner.js`` copies this file and ``rlmlab/handles/_blobref.py`` into Pyodide's in-memory file
system and calls :func:`main` with two blocking functions over Deno's stdin and stdout. It speaks the line
protocol of dspy's ``local_interpreter_worker.py`` (ready, execute, tool_request/tool_result/tool_error,
result/final/syntax/execution_error), so the host side is RLMLabInterpreter unchanged; Pyodide has no
threads, so tool calls block on stdin instead of a reader thread.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import keyword
import sys
from typing import Any, Callable

from _blobref import BlobRef, decode_handles, encode_handles  # a copy of rlmlab/handles/_blobref.py

STDOUT_MAX = 4 << 20  # characters of a step's printed output sent back


class Submission(BaseException):
    def __init__(self, value: Any) -> None:
        self.value = value


class Session:
    """One persistent namespace; ``read`` returns the next protocol line or None at end of input."""

    def __init__(self, read: Callable[[], Any], write: Callable[[str], Any]) -> None:
        self._read, self._write = read, write
        self.namespace: dict[str, Any] = {"__builtins__": vars(builtins).copy(), "__name__": "__main__"}
        self.tool_names: set[str] = set()
        self.output_fields: list[dict[str, Any]] | None = None
        self.ids = 0

    def send(self, message: dict[str, Any]) -> None:
        self._write("")  # ends any partial line step code left on the pipe: the message is a line of its own
        self._write(json.dumps(message, separators=(",", ":"), allow_nan=False))

    def receive(self) -> dict[str, Any] | None:
        line = self._read()
        if line is None:
            return None
        message = json.loads(line)
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise ValueError("protocol messages must be tagged objects")
        return message

    def call_tool(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.ids += 1
        self.send({"type": "tool_request", "id": self.ids, "name": name,
                   "args": encode_handles(list(args)), "kwargs": encode_handles(kwargs)})
        message = self.receive()
        if message is None:
            raise EOFError("the host closed the REPL")
        if message.get("type") not in {"tool_result", "tool_error"} or message.get("id") != self.ids:
            raise ValueError(f"response does not match the pending tool request: {message!r}"[:300])
        if message["type"] == "tool_error":
            raise RuntimeError(message.get("error"))
        return decode_handles(message.get("value"))

    def configure(self, tool_names: list[str], output_fields: list[dict[str, Any]] | None) -> None:
        if any(not name.isidentifier() or keyword.iskeyword(name) or name in {"SUBMIT", "__builtins__"}
               for name in tool_names):
            raise ValueError("tool names must be non-reserved Python identifiers")
        for name in self.tool_names:
            self.namespace.pop(name, None)
        self.tool_names, self.output_fields = set(tool_names), output_fields
        for name in tool_names:
            self.namespace[name] = _tool(self, name)
        self.namespace["__builtins__"] = vars(builtins).copy()
        self.namespace["SUBMIT"] = self.submit
        self.namespace["BlobRef"] = BlobRef

    def submit(self, *args: Any, **kwargs: Any) -> None:
        if self.output_fields is None:
            if len(args) != 1 or kwargs:
                raise TypeError("SUBMIT requires one output value")
            raise Submission({"output": args[0]})
        names = [field["name"] for field in self.output_fields]
        if args and kwargs:
            raise TypeError("SUBMIT accepts positional or keyword values, not both")
        values = dict(zip(names, args)) if args else dict(kwargs)
        if set(values) != set(names) or len(args) > len(names):
            raise TypeError("SUBMIT fields do not match the configured output fields")
        raise Submission(values)

    def execute(self, request: dict[str, Any]) -> dict[str, Any]:
        self.configure(request["tools"], request.get("output_fields"))
        variables = request["variables"]
        if {"SUBMIT", "__builtins__", *self.tool_names} & variables.keys():
            raise ValueError("variables cannot replace interpreter-owned globals")
        self.namespace.update(variables)
        captured = io.StringIO()
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = captured
        try:
            tree = ast.parse(request["code"], mode="exec")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, "<interpreter>", "exec"), self.namespace)
            value = eval(compile(ast.Expression(last.value), "<interpreter>", "eval"), self.namespace) if last else None
            outcome: dict[str, Any] = {"type": "result", "value": _jsonable(value)}
        except Submission as submission:
            outcome = {"type": "final", "value": _jsonable(submission.value)}
        except SyntaxError as exc:
            outcome = {"type": "syntax", "error": str(exc)}
        except BaseException as exc:  # the model's code may raise anything, SystemExit included
            outcome = {"type": "execution_error", "error": f"{type(exc).__name__}: {exc}"}
        finally:
            sys.stdout, sys.stderr = saved
        outcome["stdout"] = captured.getvalue().rstrip("\n")
        if len(outcome["stdout"]) > STDOUT_MAX:  # the host reads no reply line over 8 MiB
            size = len(outcome["stdout"])
            outcome["stdout"] = (outcome["stdout"][:STDOUT_MAX] + f"\n[... output cut: the step printed {size} "
                                 f"characters; the first {STDOUT_MAX} are shown]")
        outcome["xid"] = request.get("xid")  # the request this answers: the host refuses a reply to any other
        return outcome


def _tool(session: Session, name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return session.call_tool(name, args, kwargs)

    call.__name__ = name
    return call


def _jsonable(value: Any) -> Any:  # as dspy's worker does: a value JSON cannot carry is shown by its repr
    try:
        json.dumps(value, allow_nan=False)
        return value
    except (TypeError, ValueError):
        return repr(value)


def main(read: Callable[[], Any], write: Callable[[str], Any]) -> None:
    """Serve execute requests until end of input or a shutdown message."""
    session = Session(read, write)
    session.send({"type": "ready"})
    xid = None
    try:
        while True:
            request = session.receive()
            if request is None or request.get("type") == "shutdown":
                return
            if request.get("type") != "execute":
                raise ValueError(f"unknown request {request.get('type')!r}")
            xid = request.get("xid")
            session.send(session.execute(request))
    except BaseException as exc:  # a broken channel: tell the host, which restarts the REPL
        session.send({"type": "terminal_error", "error": f"{type(exc).__name__}: {exc}", "xid": xid})
