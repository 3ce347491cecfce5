"""Executors: the RLM executor over the rlmlab namespace, and its trajectory records."""

from rlmlab.executors._interpreter import InterpreterFactory, RLMLabInterpreter
from rlmlab.executors._rlm import RLM_SIGNATURE, MeteredRLM, dspy_tools, new_run_id, run_rlm
from rlmlab.executors._render import trajectory_summary, trajectory_table
from rlmlab.executors._trajectory import TRAJECTORY_FILE, IterationRecord, Trajectory

__all__ = [
    "InterpreterFactory", "RLMLabInterpreter", "MeteredRLM", "RLM_SIGNATURE", "dspy_tools", "new_run_id",
    "run_rlm", "IterationRecord", "Trajectory", "TRAJECTORY_FILE", "trajectory_table", "trajectory_summary",
]
