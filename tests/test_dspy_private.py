"""Every private name of DSPy that rlmlab overrides, calls or sets, with the parameters rlmlab relies on: a DSPy
upgrade that renames one, drops it or changes its parameters fails here with one line naming it, before a run
misbehaves. The second test keeps the list whole: a new touch of a DSPy private name in rlmlab that is not listed
here fails it.

MeteredRLM (rlmlab.executors._rlm) overrides seven methods of dspy.RLM and sets its action signature;
rlmlab.executors._prompt reads dspy.RLM's tool docs; RLMLabInterpreter (rlmlab.executors._interpreter, and
PyodideInterpreter after it) overrides and calls LocalInterpreter's worker protocol and starts DSPy's worker script.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import dspy
import pytest
from dspy.primitives import local_interpreter as dspy_local
from dspy.primitives.local_interpreter import LocalInterpreter

REPO = Path(__file__).resolve().parents[1]

# (class, private method): the parameter names rlmlab's override or call passes, in order after self.
METHODS = {
    (dspy.RLM, "_execute_code"): ["repl", "code", "input_args"],
    (dspy.RLM, "_build_variables"): ["input_args"],
    (dspy.RLM, "_prepare_serializable_vars"): ["input_args", "repl"],
    (dspy.RLM, "_make_llm_tools"): ["budget", "max_workers"],
    (dspy.RLM, "_setup_facade"): ["repl", "budget", "interpreter_factory"],
    (dspy.RLM, "_execute_iteration"): ["repl", "variables", "history", "iteration", "input_args",
                                       "output_field_names", "interpreter_factory", "sub_agent_rules"],
    (dspy.RLM, "_aexecute_iteration"): ["repl", "variables", "history", "iteration", "input_args",
                                        "output_field_names", "interpreter_factory", "sub_agent_rules"],
    (dspy.RLM, "_format_tool_docs"): ["tools"],
    (LocalInterpreter, "_read_responses"): ["process"],
    (LocalInterpreter, "_kill"): [],
    (LocalInterpreter, "_send"): ["message", "process"],
    (LocalInterpreter, "_receive"): ["deadline", "timeout_message"],
    (LocalInterpreter, "_handle_tool"): ["request", "process"],
    (LocalInterpreter, "_raise_terminal_error"): ["message", "cause"],
}
# Attributes a dspy.RLM instance sets in __init__ that rlmlab reads or replaces.
RLM_ATTRIBUTES = ["_user_tools", "_action_signature"]


@pytest.mark.parametrize("owner, name", list(METHODS), ids=[f"{c.__name__}.{n}" for c, n in METHODS])
def test_each_private_method_rlmlab_uses_is_there_with_its_parameters(owner, name):
    method = getattr(owner, name, None)
    assert callable(method), f"dspy {dspy.__version__}: {owner.__name__}.{name} is gone"
    params = [p for p in inspect.signature(method).parameters if p != "self"]
    assert params == METHODS[(owner, name)], \
        f"dspy {dspy.__version__}: {owner.__name__}.{name} takes {params}, rlmlab passes {METHODS[(owner, name)]}"


def test_each_rlm_attribute_rlmlab_uses_is_set_by_dspy():
    rlm = dspy.RLM("question -> answer")
    missing = [a for a in RLM_ATTRIBUTES if not hasattr(rlm, a)]
    assert not missing, f"dspy {dspy.__version__}: dspy.RLM no longer sets {missing}"
    assert isinstance(rlm._user_tools, dict), "dspy.RLM._user_tools is no longer a dict (name -> tool)"


def test_dspys_worker_script_is_next_to_its_local_interpreter():
    worker = Path(dspy_local.__file__).with_name("local_interpreter_worker.py")
    assert worker.is_file(), f"dspy {dspy.__version__}: no {worker.name} next to local_interpreter.py"


def test_rlmlab_touches_no_dspy_private_name_left_off_the_list():
    """A name a module that imports DSPy (or RLMLabInterpreter) defines or reads as ``._name`` that dspy.RLM,
    LocalInterpreter or a dspy.RLM instance holds is a touch of DSPy's private surface: it must be listed above."""
    rlm = dspy.RLM("question -> answer")
    listed = {n for _, n in METHODS} | set(RLM_ATTRIBUTES)
    unlisted = set()
    for path in (REPO / "rlmlab").rglob("*.py"):
        text = path.read_text()
        if not re.search(r"^\s*(?:import dspy|from dspy\b|from rlmlab\.executors\._interpreter import)", text, re.M):
            continue  # no DSPy class in reach: a ``._name`` here is the module's own (oracle's _compiled, ...)
        for m in re.finditer(r"(?:\.|\bdef )(_[a-z]\w*)", text):
            name = m.group(1)
            if name not in listed and (hasattr(dspy.RLM, name) or hasattr(LocalInterpreter, name)
                                       or name in vars(rlm)):
                unlisted.add(f"{path.relative_to(REPO)}: {name}")
    assert not unlisted, f"DSPy private names used but not checked here: {sorted(unlisted)}"
