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

from rlmlab._startup import defer_iri_parser  # noqa: E402

defer_iri_parser()  # jsonschema (under dspy) would compile an RFC 3987 parser at import: ~3 s (rlmlab/_startup.py)

__version__ = "0.1.0"

# What a notebook user types: the names the four seed specs (the design card) and the README use, so
# ``from rlmlab import X`` works for each; everything else is imported from its package (rlmlab.oracle,
# rlmlab.memory, rlmlab.learning, ...), so a name here means one thing. ``tests/test_public_surface.py`` lists
# which seed uses which name.
_EXPORTS = {
    "rlmlab.handles": ["BlobRef"],  # seed 004: the handle the REPL sees instead of a payload
    "rlmlab.lm": ["make_lm"],
    "rlmlab.executors": ["run_rlm"],
    # seed 001: the oracles, the trace validator and its verdicts, the context (token-budget) tracer
    "rlmlab.oracle": ["GrepOracle", "GrepVerification", "TreeSitterOracle", "SelfConsistencyOracle", "TraceValidator",
                      "OracleResult"],
    "rlmlab.trace": ["ContextTrace", "ContextEvent"],
    # seed 002: the teacher-learner loop, its bias detector and template selection
    "rlmlab.teach": ["run_teach", "detect_bias", "select_template"],
    "rlmlab.turing": ["TuringProtocol", "HookSpec"],  # seed 003: the protocol and one hook (built in or custom)
    # seed 004: the layered memory, its context builder, the ReasoningBank loop and the experiments
    "rlmlab.memory": ["MemoryStore", "ContextBuilder"],
    "rlmlab.learning": ["ReasoningBankLoop"],
    "rlmlab.experiments": ["run_experiment"],
    "rlmlab.jupyter": ["BudgetTimeline", "TrajectoryExplorer", "RunBrowser", "TeacherStepper", "OracleView",
                       "MemoryBrowser", "InteractionLogView"],
}
# Attributes outside ``__all__`` (not for ``import *``): PROJECT_ROOT, the checkout (data/ and configs/ resolve against
# it, not the cwd); ``runs_home()``, where runs go by default from any working directory (the CLI, %%rlm and the
# guides); ``default_workspace()`` below; the IPython extension hooks (``%load_ext rlmlab`` finds them).
_ATTRIBUTES = {"rlmlab._paths": ["PROJECT_ROOT", "runs_home"]}
_WHERE = {name: mod for table in (_EXPORTS, _ATTRIBUTES) for mod, names in table.items() for name in names}

# Tools imported from the top level are bound to one default workspace, so a plain script or notebook can call
# ``blob(text)`` and ``ctx_peek(ref)`` directly; ``rlmlab.tools.<name>`` stays the registered function (workspace
# first), and ``rlmlab.default_workspace()`` is that workspace (its blob store, caps and registry).
_BOUND_TOOLS = ("blob", "ctx_stats", "ctx_peek", "ctx_slice", "ctx_find", "ast_query", "mem_search", "mem_get",
                "mem_quote", "mem_add", "event_log", "sparql_query")

__all__ = [*_BOUND_TOOLS, *(name for names in _EXPORTS.values() for name in names)]
_DEFAULT_WORKSPACE: Any = None


def default_workspace() -> Any:
    """The workspace that the top-level tools (``from rlmlab import blob, ctx_peek``) act on; made on first use."""
    global _DEFAULT_WORKSPACE
    if _DEFAULT_WORKSPACE is None:
        from rlmlab.handles import StoreScope
        from rlmlab.tools import Workspace

        _DEFAULT_WORKSPACE = Workspace(store=StoreScope(open=True))  # yours: a model run from it gets a closed child
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
