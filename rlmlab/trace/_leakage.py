"""Prompt-leakage meter: what each agent iteration let back into the model's prompt.

Seed 004, "Prompt Leakage Instrumentation": stdout characters, size of the
variable listing, number of large tool returns, number of sub-LLM calls; plus
the prompt's characters and tokens, so leakage can be read against cost.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from rlmlab.tools import ToolCallRecord
from rlmlab.records import Record

__all__ = ["IterationLeakage", "LeakageMeter"]


@dataclass
class IterationLeakage(Record):
    """Counters for one iteration. Characters unless the name says tokens."""

    iteration: int
    stdout_chars: int = 0  # the step's output as produced, before the history cut
    variables_info_chars: int = 0  # the variable listing shown to the model this iteration
    tool_calls: int = 0
    large_returns: int = 0  # tool results over the threshold
    sub_llm_calls: int = 0  # llm_query / llm_query_batched prompts
    prompt_chars: int = 0  # all messages of this iteration's model call(s)
    prompt_tokens: int = 0
    completion_tokens: int = 0


class LeakageMeter:
    """Collects :class:`IterationLeakage` per iteration; observes tool calls through the Workspace."""

    def __init__(self, large_return_chars: int = 2000):
        self.large_return_chars = large_return_chars
        self.iterations: list[IterationLeakage] = []
        self._current: IterationLeakage | None = None
        self._lock = threading.Lock()

    def begin(self, iteration: int, variables_info_chars: int) -> None:
        with self._lock:
            self._current = IterationLeakage(iteration=iteration, variables_info_chars=variables_info_chars)

    def after_tool(self, record: ToolCallRecord) -> None:
        with self._lock:
            if self._current is None:
                return
            self._current.tool_calls += 1
            if record.result_chars > self.large_return_chars:
                self._current.large_returns += 1

    def record_sub_calls(self, n: int) -> None:
        with self._lock:
            if self._current is not None:
                self._current.sub_llm_calls += n

    def end(self, stdout_chars: int, prompt_chars: int, prompt_tokens: int, completion_tokens: int) -> IterationLeakage:
        with self._lock:
            cur = self._current or IterationLeakage(iteration=len(self.iterations) + 1)
            cur.stdout_chars = stdout_chars
            cur.prompt_chars, cur.prompt_tokens, cur.completion_tokens = prompt_chars, prompt_tokens, completion_tokens
            self.iterations.append(cur)
            self._current = None
            return cur

    def totals(self) -> dict[str, int]:
        keys = [k for k in IterationLeakage.__dataclass_fields__ if k != "iteration"]
        return {k: sum(getattr(it, k) for it in self.iterations) for k in keys}
