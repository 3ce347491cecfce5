"""Bounded work for tools that can run long (SPARQL, tree-sitter queries): a child process with a time and
memory limit, killed when either runs out, and a ToolError the model can read.

The child is forked from the host (its environment scrubbed of credentials first), so it already holds the graph, the parsed-source cache and every module it
needs (nothing is pickled on the way in, no start-up cost beyond the fork); it returns a picklable result
through a pipe and leaves with ``os._exit``, touching none of the host's files, sockets or locks. On a
platform without ``fork`` the work runs in the host, bounded only by the tools' own caps.

The time allowed is the workspace's ``tool_timeout_s`` cap, or less when the current REPL step has less time
left (the interpreter publishes the step's deadline in ``workspace.extras["deadline"]``).
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import select
import signal
import time
from typing import Any, Callable

from rlmlab.errors import ToolError
from rlmlab.sandbox import scrub_environ

__all__ = ["run_bounded", "time_left", "exit_description", "DEADLINE_KEY"]

DEADLINE_KEY = "deadline"  # workspace.extras key: time.monotonic() by which the current step must end


def time_left(ws: Any) -> float:
    """Seconds a tool call may take now: the tool time cap, or less if the current step ends sooner."""
    limit = float(getattr(ws.caps, "tool_timeout_s", 10.0))
    deadline = ws.extras.get(DEADLINE_KEY)
    if deadline is not None:
        limit = min(limit, deadline - time.monotonic())
    return limit


def run_bounded(fn: Callable[..., Any], /, *args: Any, seconds: float, memory_mb: int | None, what: str) -> Any:
    """``fn(*args)`` in a forked child limited to ``seconds`` of wall time and ``memory_mb`` more megabytes of
    address space than the host has now.

    A :class:`ToolError` raised by ``fn`` comes back as a ToolError; running out of time or memory is a
    ToolError naming ``what`` and the limit; any other exception is a RuntimeError (a bug, not the model's).
    """
    if seconds <= 0:
        raise ToolError(f"{what}: no time left in this step; end the step and try again in the next one")
    if not hasattr(os, "fork"):
        return fn(*args)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, write the pickled outcome, leave without running any host clean-up
        status = 0
        try:
            os.close(read_fd)
            scrub_environ()  # the work follows the model's arguments: no credential in reach of a crafted query
            faulthandler.disable()  # a crash out of memory is reported by the host, not dumped on stderr
            _limit_memory(memory_mb)
            try:
                outcome: tuple[str, Any] = ("ok", fn(*args))
            except ToolError as exc:
                outcome = ("tool_error", str(exc))
            except MemoryError:
                outcome = ("memory", None)
            except RecursionError:
                outcome = ("tool_error", f"{what}: too deeply nested to evaluate")
            except Exception as exc:  # noqa: BLE001 - reported to the host, which raises it
                outcome = ("error", f"{type(exc).__name__}: {exc}")
            try:
                data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
            except MemoryError:
                data = pickle.dumps(("memory", None))
            view = memoryview(data)
            while view:
                view = view[os.write(write_fd, view):]
        except BaseException:  # noqa: BLE001 - the host sees a child that wrote nothing
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    deadline = time.monotonic() + seconds
    chunks: list[bytes] = []
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                _kill(pid)
                raise ToolError(f"{what}: stopped after {seconds:.3g} s (the tool's time limit); "
                                "ask for less (a narrower query, a smaller source, a LIMIT)")
            ready, _, _ = select.select([read_fd], [], [], remaining)
            if ready:
                chunk = os.read(read_fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        how = exit_description(os.waitstatus_to_exitcode(status))
        limit = f" (memory limit {memory_mb} MB)" if memory_mb else ""
        raise ToolError(f"{what}: the worker running it {how}{limit}, most likely out of memory; ask for less")
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "ok":
        return value
    if kind == "tool_error":
        raise ToolError(value)
    if kind == "memory":
        raise ToolError(f"{what}: ran out of memory (limit {memory_mb} MB); ask for less "
                        "(a narrower query, a smaller source, a LIMIT)")
    raise RuntimeError(f"{what}: {value}")


def exit_description(returncode: int) -> str:
    """How a process ended, from its return code as ``subprocess`` gives it (negative: the signal that killed it):
    "exited with status 3", "was killed by SIGKILL (what the out-of-memory killer sends)"."""
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    hint = " (what the out-of-memory killer sends)" if -returncode == signal.SIGKILL else ""
    return f"was killed by {name}{hint}"


def _limit_memory(memory_mb: int | None) -> None:
    """Cap the child's address space at what it has now plus ``memory_mb`` megabytes (Linux; else no cap)."""
    if not memory_mb:
        return
    try:
        import resource

        with open("/proc/self/statm") as fh:
            size = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = size + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (OSError, ValueError, ImportError):
        pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
