"""Code oracles that verify an agent's FINAL answers about source code (started: GrepOracle)."""

from rlmlab.oracle._grep import INTENT_PATTERNS, GrepOracle, GrepResult, GrepVerification, pattern_for_query

__all__ = ["GrepOracle", "GrepResult", "GrepVerification", "INTENT_PATTERNS", "pattern_for_query"]
