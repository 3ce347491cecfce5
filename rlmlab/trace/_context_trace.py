"""Context tracer: what each RLM iteration put into the model's context, in tokens, against a budget.

Seed 001, section 4 "Context Tracer": eight event kinds, O(1) logging into a
ring buffer of at most 1,000 events, and a summary of budget use. Totals are
running counters, so they stay exact for events the ring buffer has dropped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, Callable, Iterator

__all__ = ["EventKind", "ContextEvent", "ContextTrace", "ContextTraceSummary", "PREVIEW_CHARS"]

PREVIEW_CHARS = 200  # characters of an event's content kept in the trace

_log = logging.getLogger(__name__)


class EventKind(str, Enum):
    """The eight kinds of context event; member names and values are the spec's names."""

    SystemPrompt = "SystemPrompt"  # the first prompt of the run
    GrepResult = "GrepResult"  # a ctx_find result
    LlmQueryResult = "LlmQueryResult"  # one sub-LLM response
    AssistantCode = "AssistantCode"  # what the model wrote in an iteration
    ExecutionOutput = "ExecutionOutput"  # what running that code printed or returned
    Final = "Final"  # the final answer
    ToolCall = "ToolCall"  # a tool's name and arguments
    ToolResult = "ToolResult"  # a tool's result, or its error


def _count_tokens(text: str) -> int:
    # Imported here: rlmlab.lm imports dspy, and rlmlab.trace must import without it.
    from rlmlab.tokens import count_tokens

    return count_tokens(text)


@dataclass(frozen=True)
class ContextEvent:
    """One thing that entered the context. ``tokens`` is its size; ``preview`` the first 200 characters.

    Kind-specific fields are None where they do not apply: ``tool`` for
    ToolCall/ToolResult/GrepResult, ``pattern`` and ``matches`` (total matches,
    not only those returned) for GrepResult, ``error`` for a failed ToolResult.
    ``iteration`` is 1-based; 0 means before the first iteration.
    """

    kind: EventKind
    iteration: int
    tokens: int
    preview: str = ""
    content_chars: int = 0
    tool: str | None = None
    pattern: str | None = None
    matches: int | None = None
    error: str | None = None
    timestamp: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", EventKind(self.kind))
        if self.tokens < 0:
            raise ValueError(f"tokens: {self.tokens} is negative")

    @classmethod
    def _of(cls, kind: EventKind, content: str, tokens: int | None, iteration: int, **detail: Any) -> "ContextEvent":
        content = content or ""
        return cls(kind=kind, iteration=iteration, tokens=_count_tokens(content) if tokens is None else tokens,
                   preview=content[:PREVIEW_CHARS], content_chars=len(content), **detail)

    # One constructor per kind. ``tokens=None`` counts the content with rlmlab.lm.count_tokens.

    @classmethod
    def system_prompt(cls, content: str, tokens: int | None = None, *, iteration: int = 0) -> "ContextEvent":
        return cls._of(EventKind.SystemPrompt, content, tokens, iteration)

    @classmethod
    def grep_result(cls, pattern: str, matches: int, tokens: int | None = None, *, content: str | None = None,
                    iteration: int = 0) -> "ContextEvent":
        """A grep (ctx_find) result; ValueError if neither ``tokens`` nor ``content`` is given."""
        if tokens is None and content is None:
            raise ValueError("grep_result: give tokens, or the result content to count them from")
        return cls._of(EventKind.GrepResult, content or "", tokens, iteration, tool="ctx_find", pattern=pattern,
                       matches=matches)

    @classmethod
    def llm_query_result(cls, content: str, tokens: int | None = None, *, iteration: int = 0) -> "ContextEvent":
        return cls._of(EventKind.LlmQueryResult, content, tokens, iteration)

    @classmethod
    def assistant_code(cls, code: str, tokens: int | None = None, *, iteration: int = 0) -> "ContextEvent":
        return cls._of(EventKind.AssistantCode, code, tokens, iteration)

    @classmethod
    def execution_output(cls, output: str, tokens: int | None = None, *, iteration: int = 0) -> "ContextEvent":
        return cls._of(EventKind.ExecutionOutput, output, tokens, iteration)

    @classmethod
    def final(cls, answer: str, tokens: int | None = None, *, iteration: int = 0) -> "ContextEvent":
        return cls._of(EventKind.Final, answer, tokens, iteration)

    @classmethod
    def tool_call(cls, tool: str, arguments: str, tokens: int | None = None, *,
                  iteration: int = 0) -> "ContextEvent":
        return cls._of(EventKind.ToolCall, arguments, tokens, iteration, tool=tool)

    @classmethod
    def tool_result(cls, tool: str, content: str, tokens: int | None = None, *, error: str | None = None,
                    iteration: int = 0) -> "ContextEvent":
        return cls._of(EventKind.ToolResult, content, tokens, iteration, tool=tool, error=error)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; fields that are None are left out."""
        d = {k: v for k, v in asdict(self).items() if v is not None}
        d["kind"] = self.kind.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ContextEvent":
        return cls(**d)


@dataclass(frozen=True)
class ContextTraceSummary:
    """Budget use of a whole trace. Per-kind dicts hold all eight kinds, in :class:`EventKind` order.

    Counts cover every event logged, including those the ring buffer dropped.
    ``budget_used_percent`` is ``100 * total_tokens / budget_tokens`` and may exceed 100.
    """

    budget_tokens: int
    total_tokens: int
    budget_used_percent: float
    over_budget: bool
    tokens_by_kind: dict[str, int]
    events_by_kind: dict[str, int]
    tokens_by_iteration: dict[int, int]
    events_logged: int
    events_kept: int
    dropped: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ContextTraceSummary":
        d = dict(d)
        d["tokens_by_iteration"] = {int(k): v for k, v in d["tokens_by_iteration"].items()}  # JSON keys are strings
        return cls(**d)


class ContextTrace:
    """Token budget of one RLM run: events in a ring buffer, totals in running counters.

    ``log_event`` is O(1) and thread-safe. Once ``max_events`` are kept the
    oldest is dropped (counted in ``dropped``); totals still include it.
    :meth:`subscribe` lets a live view (a notebook widget) see each event as it is logged.
    """

    def __init__(self, budget_tokens: int = 8000, max_events: int = 1000):
        if budget_tokens <= 0:
            raise ValueError(f"budget_tokens: {budget_tokens}; must be a positive number of tokens")
        if max_events <= 0:
            raise ValueError(f"max_events: {max_events}; must be at least 1")
        self.budget_tokens = budget_tokens
        self.max_events = max_events
        self.events: deque[ContextEvent] = deque(maxlen=max_events)
        self.dropped = 0
        self.events_logged = 0
        self.total_tokens = 0
        self._tokens_by_kind = {kind: 0 for kind in EventKind}
        self._events_by_kind = {kind: 0 for kind in EventKind}
        self._tokens_by_iteration: dict[int, int] = {}
        self._lock = threading.Lock()
        # A tuple, replaced on (un)subscribe, so log_event iterates it without holding the lock.
        self._listeners: tuple[Callable[[ContextEvent], None], ...] = ()

    def log_event(self, event: ContextEvent) -> None:
        with self._lock:
            if len(self.events) == self.max_events:
                self.dropped += 1
            self.events.append(event)
            self.events_logged += 1
            self.total_tokens += event.tokens
            self._tokens_by_kind[event.kind] += event.tokens
            self._events_by_kind[event.kind] += 1
            self._tokens_by_iteration[event.iteration] = self._tokens_by_iteration.get(event.iteration, 0) + event.tokens
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:  # a broken view must not stop the run that is being traced
                _log.exception("ContextTrace listener %r failed on a %s event", listener, event.kind.value)

    def subscribe(self, listener: Callable[[ContextEvent], None]) -> Callable[[], None]:
        """Call ``listener(event)`` after each :meth:`log_event`; returns a function that unsubscribes.

        The listener runs on the logging thread, after the event is counted and
        outside the trace's lock (so it may read the trace). If it raises, the
        error is logged and the event stays logged. Unsubscribing twice is harmless.
        """
        with self._lock:
            self._listeners = (*self._listeners, listener)

        def unsubscribe() -> None:
            with self._lock:
                kept = list(self._listeners)
                if listener in kept:
                    kept.remove(listener)
                self._listeners = tuple(kept)

        return unsubscribe

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[ContextEvent]:
        return iter(list(self.events))

    def of_kind(self, kind: EventKind | str) -> list[ContextEvent]:
        """Kept events of one kind, oldest first."""
        kind = EventKind(kind)
        return [e for e in self if e.kind is kind]

    def summary(self) -> ContextTraceSummary:
        with self._lock:
            return ContextTraceSummary(
                budget_tokens=self.budget_tokens,
                total_tokens=self.total_tokens,
                budget_used_percent=100.0 * self.total_tokens / self.budget_tokens,
                over_budget=self.total_tokens > self.budget_tokens,
                tokens_by_kind={k.value: n for k, n in self._tokens_by_kind.items()},
                events_by_kind={k.value: n for k, n in self._events_by_kind.items()},
                tokens_by_iteration=dict(sorted(self._tokens_by_iteration.items())),
                events_logged=self.events_logged,
                events_kept=len(self.events),
                dropped=self.dropped,
            )

    def to_dict(self) -> dict[str, Any]:
        """The kept events and the summary (whose counters cover dropped events too)."""
        summary = self.summary()
        return {"budget_tokens": self.budget_tokens, "max_events": self.max_events,
                "events": [e.to_dict() for e in self], "summary": summary.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ContextTrace":
        """Rebuild from :meth:`to_dict`; counters come from the summary, not from the kept events."""
        trace = cls(budget_tokens=d["budget_tokens"], max_events=d["max_events"])
        trace.events.extend(ContextEvent.from_dict(e) for e in d["events"])
        s = ContextTraceSummary.from_dict(d["summary"])
        trace.dropped, trace.events_logged, trace.total_tokens = s.dropped, s.events_logged, s.total_tokens
        trace._tokens_by_kind = {k: s.tokens_by_kind.get(k.value, 0) for k in EventKind}
        trace._events_by_kind = {k: s.events_by_kind.get(k.value, 0) for k in EventKind}
        trace._tokens_by_iteration = dict(s.tokens_by_iteration)
        return trace

    def __repr__(self) -> str:
        return (f"ContextTrace({self.total_tokens:,}/{self.budget_tokens:,} tokens, "
                f"{self.events_logged} events, {self.dropped} dropped)")

    # Rendering: rich in the terminal, HTML in notebooks.

    @staticmethod
    def _caption(s: ContextTraceSummary) -> str:
        over = " · over budget" if s.over_budget else ""
        return (f"context-trace tokens {s.total_tokens:,}: {s.budget_used_percent:.1f}% of the {s.budget_tokens:,}-token "
                f"trace budget{over} · {s.dropped:,} dropped")

    def __rich__(self) -> Any:
        from rich.table import Table

        s = self.summary()
        table = Table(title="Context trace (context-trace tokens by kind)", caption=self._caption(s), show_footer=True,
                      caption_style="bold red" if s.over_budget else "dim")
        table.add_column("kind", footer="total")
        table.add_column("events", justify="right", footer=f"{s.events_logged:,}")
        table.add_column("tokens", justify="right", footer=f"{s.total_tokens:,}")
        table.add_column("% of budget", justify="right", footer=f"{s.budget_used_percent:.1f}%")
        for kind, tokens in s.tokens_by_kind.items():
            table.add_row(kind, f"{s.events_by_kind[kind]:,}", f"{tokens:,}",
                          f"{100.0 * tokens / s.budget_tokens:.1f}%", style=None if tokens else "dim")
        return table

    def _repr_html_(self, recent: int = 20) -> str:
        """Summary table and the ``recent`` newest events, contents escaped."""
        from html import escape

        s = self.summary()
        rows = "".join(
            f"<tr><td>{escape(kind)}</td><td>{s.events_by_kind[kind]:,}</td><td>{tokens:,}</td>"
            f"<td>{100.0 * tokens / s.budget_tokens:.1f}%</td></tr>" for kind, tokens in s.tokens_by_kind.items()
        )
        summary = (f"<table><caption>{escape(self._caption(s))}</caption>"
                   "<tr><th>kind</th><th>events</th><th>tokens</th><th>% of budget</th></tr>"
                   f"{rows}<tr><th>total</th><th>{s.events_logged:,}</th><th>{s.total_tokens:,}</th>"
                   f"<th>{s.budget_used_percent:.1f}%</th></tr></table>")
        newest = list(self.events)[-recent:]
        events = "".join(
            f"<tr><td>{e.iteration}</td><td>{escape(e.kind.value)}</td><td>{e.tokens:,}</td>"
            f"<td>{escape(e.tool or '')}</td><td><code>{escape(e.error or e.preview)}</code></td></tr>" for e in newest
        )
        return (f"{summary}<details><summary>newest {len(newest)} events</summary><table>"
                "<tr><th>iteration</th><th>kind</th><th>tokens</th><th>tool</th><th>preview</th></tr>"
                f"{events}</table></details>")
