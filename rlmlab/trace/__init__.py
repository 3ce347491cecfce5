"""Observability of agent runs: the prompt-leakage meter and the context (token budget) tracer."""

from rlmlab.trace._context_trace import PREVIEW_CHARS, ContextEvent, ContextTrace, ContextTraceSummary, EventKind
from rlmlab.trace._leakage import IterationLeakage, LeakageMeter

__all__ = ["IterationLeakage", "LeakageMeter", "ContextEvent", "ContextTrace", "ContextTraceSummary", "EventKind",
           "PREVIEW_CHARS"]
