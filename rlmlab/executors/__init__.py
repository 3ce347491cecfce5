"""Executors: RLM (code generation and execution), ReAct (tool loop, no code) and Scratchpad (persistent
namespace, truncated history), selected by name from ``EXECUTORS``; their trajectory records."""

from rlmlab.executors._harness import (
    CodeRunOptions, NullGuard, Run, RunEnv, RunOptions, StepLoop, StepScope, execute, new_run_id,
)
from rlmlab.executors._interpreter import InterpreterFactory, RLMLabInterpreter
from rlmlab.executors._pyodide import PyodideInterpreter, pyodide_unavailable
from rlmlab.executors._rlm import RLM_SIGNATURE, MeteredRLM, RlmLoop, dropped_extract, dspy_tools, run_rlm
from rlmlab.executors._metrics import METRIC_FIELDS, trajectory_metrics
from rlmlab.executors._render import trajectory_summary, trajectory_table
from rlmlab.executors._trajectory import TRAJECTORY_FILE, IterationRecord, Trajectory
from rlmlab.executors._budget import Budget, BudgetReached, call_cost
from rlmlab.executors._direct import DirectLoop, DirectOptions, run_direct
from rlmlab.executors._react import MeteredReAct, ReactLoop, ReactOptions, run_react
from rlmlab.executors._scratchpad import ScratchpadLoop, ScratchpadOptions, parse_reply, run_scratchpad, scratchpad_prompt
from rlmlab.executors._registry import EXECUTORS, Executor, make_executor, register_executor
from rlmlab.executors._timing import TIME_PARTS, RunClock, TimeBreakdown, time_breakdown
from rlmlab.executors._prompt import COMPACT_INSTRUCTIONS, PROMPTS
from rlmlab.executors._step_grammar import query_slots, template_rule
from rlmlab.executors._offer import context_kind, fits_query
from rlmlab.executors._sparql_space import filter_texts, sparql_fit

__all__ = [
    "RunOptions", "CodeRunOptions", "ReactOptions", "ScratchpadOptions", "RunEnv", "Run", "StepScope", "StepLoop",
    "execute",
    "InterpreterFactory", "RLMLabInterpreter", "PyodideInterpreter", "pyodide_unavailable", "MeteredRLM", "RLM_SIGNATURE", "new_run_id",
    "run_rlm", "dropped_extract", "IterationRecord", "Trajectory", "TRAJECTORY_FILE", "trajectory_summary",
    "Budget", "call_cost", "run_direct", "run_react", "run_scratchpad", "parse_reply",
    "EXECUTORS", "Executor", "make_executor", "register_executor", "trajectory_metrics",
    "TimeBreakdown", "time_breakdown", "TIME_PARTS", "COMPACT_INSTRUCTIONS", "query_slots", "template_rule", "filter_texts", "sparql_fit",
    "context_kind", "fits_query",
]
