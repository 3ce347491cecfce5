"""rlmlab: a lab for Recursive Language Model agents.

Names are imported lazily so that ``import rlmlab`` stays fast (dspy is
imported only when an LM or executor name is first used).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

# Offline by default: litellm (under dspy) otherwise fetches its model cost map from GitHub at import time.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"

_EXPORTS = {
    "rlmlab._paths": ["PROJECT_ROOT"],  # the checkout: data/ and configs/ resolve against it, not the cwd
    "rlmlab.errors": ["RLMLabError", "ToolError", "MissingExtraError", "ConfigError"],
    "rlmlab.handles": ["BlobRef", "BlobStore"],
    "rlmlab.tools": ["TOOLS", "tool", "ToolCaps", "Workspace", "blob", "ctx_stats", "ctx_peek", "ctx_slice",
                     "ctx_find", "ast_query", "mem_search", "mem_get", "mem_quote", "mem_add", "event_log",
                     "sparql_query"],
    "rlmlab.namespace": ["build_namespace"],
    "rlmlab.trace": ["LeakageMeter", "IterationLeakage", "ContextTrace", "ContextEvent", "ContextTraceSummary",
                     "EventKind"],
    "rlmlab.lm": ["make_lm", "CallRecorder", "LMCall", "count_tokens"],
    "rlmlab.executors": ["run_rlm", "run_react", "run_scratchpad", "EXECUTORS", "Trajectory", "IterationRecord"],
    "rlmlab.jupyter": ["BudgetTimeline", "TrajectoryExplorer", "RunBrowser", "TeacherStepper", "OracleView",
                       "MemoryBrowser", "InteractionLogView"],
    "rlmlab.experiments": ["run_experiment", "load_experiment", "load_suite", "read_results", "ExperimentRun",
                           "run_notebook", "results_table"],
    "rlmlab.oracle": ["GrepOracle", "GrepVerification", "TreeSitterOracle", "TraceValidator", "OracleResult",
                      "AnalysisResult", "GoldenTrace", "ValidationStats", "QueryKind", "classify_query",
                      "SelfConsistencyOracle", "ParseCache", "AstQueryError"],
    "rlmlab.memory": ["MemoryStore", "MemoryItem", "Artifact", "import_pack", "export_pack", "ContextBuilder",
                      "BuiltContext", "MemoryTask", "Verdict", "ReasoningBankLoop", "TaskOutcome", "pack_l2", "pack_l3",
                      "JUDGES", "EXTRACTORS", "CONSOLIDATORS", "FORGETTERS", "RETRIEVAL_POLICIES", "memory_health"],
    "rlmlab.ontology": ["sense_card", "sense_brief", "grounding_check", "constraints_from_graph", "pack_constraints",
                        "validate_sparql", "load_ontology", "crate_sense_card"],
    "rlmlab.turing": ["TuringProtocol", "TuringGuard", "TuringAgentLoop", "HookSpec", "Turn", "RoundResult"],
    "rlmlab.teach": ["detect_bias", "combine_confidence", "bucket", "select_template", "load_templates",
                     "StopRules", "ExpectedGain", "DemoLearner", "LMLearner", "VotingLearner", "RunConfig",
                     "load_run_config", "run_teach", "TeachReport", "ItemTrace", "read_traces", "load_dataset"],
}
_WHERE = {name: mod for mod, names in _EXPORTS.items() for name in names}

__all__ = sorted(_WHERE) + ["default_workspace", "load_ipython_extension", "unload_ipython_extension"]


# Tools imported from the top level are bound to one default workspace, so a plain script or notebook can call
# ``blob(text)`` and ``ctx_peek(ref)`` directly; ``rlmlab.tools.<name>`` stays the registered function (workspace
# first), and ``default_workspace()`` is that workspace (its blob store, caps and registry).
_BOUND_TOOLS = {"blob", "ctx_stats", "ctx_peek", "ctx_slice", "ctx_find", "ast_query", "mem_search", "mem_get",
                "mem_quote", "mem_add", "event_log", "sparql_query"}
_DEFAULT_WORKSPACE: Any = None


def default_workspace() -> Any:
    """The workspace that the top-level tools (``from rlmlab import blob, ctx_peek``) act on; made on first use."""
    global _DEFAULT_WORKSPACE
    if _DEFAULT_WORKSPACE is None:
        from rlmlab.tools import Workspace

        _DEFAULT_WORKSPACE = Workspace()
    return _DEFAULT_WORKSPACE


def __getattr__(name: str) -> Any:
    if name in _BOUND_TOOLS:
        from rlmlab.tools import displayable

        value = displayable(default_workspace(), name)
        globals()[name] = value
        return value
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rlmlab' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext rlmlab``: push the rlmlab namespace and register the magics."""
    from rlmlab.jupyter._extension import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from rlmlab.jupyter._extension import unload

    unload(ipython)
