"""Observability of agent runs: the prompt-leakage meter."""

from rlmlab.trace._leakage import IterationLeakage, LeakageMeter

__all__ = ["IterationLeakage", "LeakageMeter"]
