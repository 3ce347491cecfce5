"""Recursion: ``rlm_query`` and ``rlm_query_batched``, the step-code tools that start a sub-run (issue 54).

At ``max_depth >= 2`` a run's step code may hand a sub-question and a context to a child RLM run with its own
REPL, the same sandbox, tools and Turing Protocol. The context is a handle the parent holds (passed by
reference: the child's store is granted that one key and nothing else of the parent's) or a string (stored in
the child's own scope). The child's answer comes back as a string; its trajectory is kept in the parent's
(``Trajectory.children``), its LM calls in the run's ``lm_calls.jsonl`` with their depth and run ids, and its
tokens, seconds and cost count against the budgets of every run above it.
"""

from __future__ import annotations

import contextvars
import dataclasses
import itertools
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from rlmlab.errors import ToolError
from rlmlab.handles import BlobRef

__all__ = ["child_tools", "recursion_docs", "run_child", "CHILD_TOOLS"]

CHILD_TOOLS = ("rlm_query", "rlm_query_batched")
_NO_ANSWER = "[rlm_query] the sub-run ended without an answer"


def recursion_docs(depth: int, max_depth: int) -> str:
    """What the model is told about rlm_query at ``depth`` of a tree at most ``max_depth`` deep ("" when it
    cannot recurse)."""
    if depth + 1 >= max_depth:
        return ""
    return ("- rlm_query(prompt, context): start a sub-agent with its own REPL on `context` (a handle such as a "
            "ctx_slice result, or a string) to answer `prompt`; returns its answer as a string.\n"
            "- rlm_query_batched(prompts, contexts): rlm_query for lists of prompts and contexts, run side by side; "
            "returns the list of answers.")


def child_tools(run: Any, loop: Any) -> dict[str, Callable[..., Any]]:
    """The step-code tools of ``run`` that start sub-runs with ``loop`` ({} when its depth allows none)."""
    opts = run.options
    if run.depth + 1 >= getattr(opts, "max_depth", 1):
        return {}
    counter = itertools.count(1)
    lock = threading.Lock()

    def next_id() -> str:
        with lock:
            return f"{run.traj.run_id}.{next(counter)}"

    def rlm_query(prompt: str, context: Any = None) -> str:
        """Ask a sub-agent with its own REPL ``prompt`` about ``context`` (a handle or a string)."""
        _check_prompt("rlm_query", prompt)
        return run_child(run, loop, prompt, _child_context(run, prompt if context is None else context),
                         next_id())

    def rlm_query_batched(prompts: list[str], contexts: list[Any] | None = None) -> list[str]:
        """rlm_query for each prompt and context, at most ``max_concurrent`` at once; answers in order."""
        if not isinstance(prompts, list) or not prompts:
            raise ToolError("rlm_query_batched: prompts: expected a non-empty list of strings")
        for p in prompts:
            _check_prompt("rlm_query_batched", p)
        if contexts is None:
            contexts = list(prompts)
        if not isinstance(contexts, list) or len(contexts) != len(prompts):
            raise ToolError(f"rlm_query_batched: contexts: expected a list of {len(prompts)} handles or strings, "
                            "one per prompt")
        jobs = [(p, _child_context(run, c), next_id()) for p, c in zip(prompts, contexts)]
        with ThreadPoolExecutor(max_workers=min(opts.max_concurrent, len(jobs))) as pool:
            futures = [pool.submit(contextvars.copy_context().run, run_child, run, loop, *job) for job in jobs]
            return [f.result() for f in futures]

    return {"rlm_query": rlm_query, "rlm_query_batched": rlm_query_batched}


def _check_prompt(name: str, prompt: Any) -> None:
    if not isinstance(prompt, str) or not prompt.strip():
        raise ToolError(f"{name}: prompt: expected a non-empty string, got {type(prompt).__name__}")


def _child_context(run: Any, context: Any) -> BlobRef | str:
    """The context a sub-run gets: a handle the parent holds (never one it does not: a key is a capability),
    or a string."""
    if isinstance(context, BlobRef):
        if not run.workspace.store.holds(context):
            raise ToolError(f"rlm_query: context: this run holds no blob {context.key!r}; pass a handle a tool "
                            "returned to this run, or a string")
        return context
    if isinstance(context, str):
        return context
    raise ToolError(f"rlm_query: context: expected a handle (BlobRef) or a string, got {type(context).__name__}")


def run_child(run: Any, loop: Any, prompt: str, context: BlobRef | str, run_id: str) -> str:
    """Run ``loop`` on ``prompt`` over ``context`` as a sub-run of ``run`` and return its answer. The child gets
    a fresh store scope (only the handle it was given, and what it makes), its own observers and extras dict, the
    parent's quotas, tools, sandbox, Turing Protocol and options (without the parent's task instructions)."""
    from rlmlab.executors._harness import RunEnv, execute

    parent_ws = run.workspace
    store = parent_ws.store.child()
    workspace = dataclasses.replace(parent_ws, store=store, observers=[], extras=dict(parent_ws.extras),
                                    usage=parent_ws.usage)
    env: RunEnv = dataclasses.replace(run.env, workspace=workspace, tools=None, trace=None, runs_dir=None,
                                      run_id=run_id, parent=run)
    options = dataclasses.replace(run.options, instructions=None)
    traj = execute(loop, prompt, context, options, env)
    with _CHILDREN_LOCK:
        run.children.append(traj)
    run.meter.record_sub_calls(1)
    if traj.answer:
        return str(traj.answer)
    why = traj.stopped or traj.error or "no answer was submitted"
    return f"{_NO_ANSWER} ({why})"


_CHILDREN_LOCK = threading.Lock()
