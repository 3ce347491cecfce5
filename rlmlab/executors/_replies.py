"""The host's end of the REPL worker's reply pipe, read as untrusted input.

Step code runs in the worker process, so it can write to the pipe the worker answers on: anything read here may
be forged. The reader therefore holds a bounded amount of it whatever the step writes: a line (one message) is
at most :data:`REPLY_LINE_MAX` bytes (a longer one is dropped as it arrives and reported as :class:`Oversize`),
and lines wait in a :class:`ReplyQueue` of at most :data:`REPLY_QUEUE_MAX` bytes (the reader stops reading the
pipe while it is full, so the worker blocks instead of the host growing). What the host holds for one step is
therefore at most ``REPLY_LINE_MAX + REPLY_QUEUE_MAX`` (16 MiB), plus the one message being parsed.

Which messages are accepted is the interpreter's decision (:meth:`RLMLabInterpreter.receive_message`): a reply must
answer the request that is pending, named by its ``xid``.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, BinaryIO

__all__ = ["REPLY_LINE_MAX", "REPLY_QUEUE_MAX", "Oversize", "ReplyQueue", "read_replies", "parse_reply"]

REPLY_LINE_MAX = 8 << 20  # bytes of one protocol line (one message); a step's printed output is cut to less
REPLY_QUEUE_MAX = 8 << 20  # bytes of lines read but not yet taken by the interpreter
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Oversize:
    """A line longer than :data:`REPLY_LINE_MAX` was read and dropped (``size`` bytes, at least)."""

    size: int


class ReplyQueue:
    """A FIFO of the reader's items whose text lines together hold at most ``max_bytes``.

    ``put`` of a line waits while the queue is full (other items never wait); ``get`` raises :class:`queue.Empty`
    at its timeout as :class:`queue.Queue` does. ``close`` drops what is queued and makes every later ``put``
    a no-op, so the reader of a worker that was replaced never blocks for good.
    """

    def __init__(self, max_bytes: int = REPLY_QUEUE_MAX):
        self.max_bytes = max_bytes
        self._items: list[Any] = []
        self._bytes = 0
        self._closed = False
        self._cond = threading.Condition()

    def put(self, item: Any) -> None:
        size = len(item) if isinstance(item, str) else 0
        with self._cond:
            while size and not self._closed and self._items and self._bytes + size > self.max_bytes:
                self._cond.wait(0.5)
            if self._closed:
                return
            self._items.append(item)
            self._bytes += size
            self._cond.notify_all()

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        end = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._items:
                left = None if end is None else end - time.monotonic()
                if not block or (left is not None and left <= 0):
                    raise queue.Empty
                self._cond.wait(left)
            item = self._items.pop(0)
            self._bytes -= len(item) if isinstance(item, str) else 0
            self._cond.notify_all()
            return item

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._items.clear()
            self._bytes = 0
            self._cond.notify_all()


def read_replies(stream: BinaryIO, out: ReplyQueue, line_max: int = REPLY_LINE_MAX) -> None:
    """Read ``stream`` to its end, putting each line (decoded, newline kept) into ``out``; a line over
    ``line_max`` bytes is dropped as it arrives and put as :class:`Oversize`; ``None`` at the end."""
    buf = bytearray()
    dropping = 0  # > 0: inside an over-long line, this many bytes of it seen so far
    try:
        while True:
            chunk = stream.read1(_CHUNK) if hasattr(stream, "read1") else stream.read(_CHUNK)
            if not chunk:
                break
            start = 0
            while start < len(chunk):
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end + 1]
                start += len(piece)
                if dropping:
                    dropping += len(piece)
                    if end >= 0:
                        out.put(Oversize(dropping))
                        dropping = 0
                    continue
                if len(buf) + len(piece) > line_max:
                    dropping, buf = len(buf) + len(piece), bytearray()
                    if end >= 0:
                        out.put(Oversize(dropping))
                        dropping = 0
                    continue
                buf += piece
                if end >= 0:
                    out.put(buf.decode("utf-8", errors="replace"))
                    buf = bytearray()
    except (OSError, ValueError):  # the host closed the pipe (the worker was stopped)
        pass
    if dropping:
        out.put(Oversize(dropping))
    out.put(None)


def parse_reply(line: str) -> dict[str, Any] | None:
    """The message a line holds: a JSON object with a string ``type``; None for anything else (including JSON
    nested too deeply to parse)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        return None
    return message
