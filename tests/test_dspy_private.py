"""Every private name of DSPy that rlmlab overrides, calls, reads or sets, with the parameters rlmlab relies on: a
DSPy upgrade that renames one, drops it or changes its parameters fails here with one line naming it, before a run
misbehaves. The completeness tests keep the list whole and in one place: every touch of a DSPy private name is in
rlmlab.executors._dspy_adapter and listed here; any other module of rlmlab that touches one fails.

The adapter's AdaptedRLM overrides seven methods of dspy.RLM (MeteredRLM overrides rlmlab's names for them), reads
its tool docs and reads and sets its action signature (for the compact prompt); its WorkerProtocol overrides and
calls LocalInterpreter's worker protocol and names the worker state LocalInterpreter keeps (RLMLabInterpreter, and
PyodideInterpreter after it, build on it); it names DSPy's worker script. The one other module is that worker
script's wrapper, rlmlab/executors/_worker.py, a program of its own (it runs in the worker process, which must not
import dspy): it uses four module-level names of DSPy's worker script, listed in WORKER_SCRIPT_NAMES.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
from pathlib import Path

import dspy
import pytest
from dspy.primitives import local_interpreter as dspy_local
from dspy.primitives.local_interpreter import LocalInterpreter

# every test here parses rlmlab's modules or DSPy's (about 2 s the first time in a process): make test, not make check
pytestmark = pytest.mark.slow

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
# Attributes a LocalInterpreter instance sets in __init__ that rlmlab reads or replaces (WorkerProtocol's
# worker_process, session_ended and reply_queue).
INTERPRETER_ATTRIBUTES = ["_process", "_ended", "_responses"]
# Module-level names of DSPy's worker script that rlmlab/executors/_worker.py uses.
WORKER_SCRIPT_NAMES = ["_send_lock", "_protocol_output", "_worker_stdout", "_worker_stderr"]

ADAPTER = "rlmlab/executors/_dspy_adapter.py"
WORKER_WRAPPER = "rlmlab/executors/_worker.py"
DSPY_WORKER = Path(dspy_local.__file__).with_name("local_interpreter_worker.py")


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


def test_each_interpreter_attribute_rlmlab_uses_is_set_by_dspy():
    repl = LocalInterpreter()
    missing = [a for a in INTERPRETER_ATTRIBUTES if a not in vars(repl)]
    assert not missing, f"dspy {dspy.__version__}: LocalInterpreter no longer sets {missing}"
    assert repl._process is None and repl._ended is False, "LocalInterpreter's worker state starts otherwise"


def test_dspys_worker_script_is_next_to_its_local_interpreter():
    assert DSPY_WORKER.is_file(), f"dspy {dspy.__version__}: no {DSPY_WORKER.name} next to local_interpreter.py"
    from rlmlab.executors._dspy_adapter import DSPY_WORKER_SCRIPT
    assert DSPY_WORKER_SCRIPT == DSPY_WORKER


def test_each_worker_script_name_rlmlab_uses_is_defined_by_dspy():
    defined = _module_names(DSPY_WORKER.read_text())
    missing = [n for n in WORKER_SCRIPT_NAMES if n not in defined]
    assert not missing, f"dspy {dspy.__version__}: {DSPY_WORKER.name} no longer defines {missing}"


def _module_names(source: str) -> set[str]:
    """The names a script assigns or defines at module level."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        for target in getattr(node, "targets", []) + ([node.target] if isinstance(node, ast.AnnAssign) else []):
            names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


@functools.cache
def _dspy_private_names() -> dict[str, set[str]]:
    """DSPy's private names by what holds them: dspy.RLM and its instances, LocalInterpreter and its instances,
    the worker script's module."""
    rlm, repl = dspy.RLM("question -> answer"), LocalInterpreter()
    private = re.compile(r"_[a-z]\w*")
    return {
        "RLM": {n for n in set(dir(dspy.RLM)) | set(vars(rlm)) if private.fullmatch(n)},
        "LocalInterpreter": {n for n in set(dir(LocalInterpreter)) | set(vars(repl)) if private.fullmatch(n)},
        "worker": {n for n in _module_names(DSPY_WORKER.read_text()) if private.fullmatch(n)},
    }


def _base_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def dspy_classes(sources: dict[str, str]) -> dict[str, str]:
    """Class name -> the DSPy class it builds on ("RLM" or "LocalInterpreter"), over every class of ``sources``
    whose bases lead there (MeteredRLM, RLMLabInterpreter, PyodideInterpreter, the tapped interpreters ...)."""
    found = {"RLM": "RLM", "LocalInterpreter": "LocalInterpreter"}
    classes = [node for text in sources.values() for node in ast.walk(ast.parse(text))
               if isinstance(node, ast.ClassDef)]
    while True:
        more = {c.name: found[b] for c in classes if c.name not in found
                for b in map(_base_name, c.bases) if b in found}
        if not more:
            return found
        found.update(more)


def dspy_private_touches(text: str, names: dict[str, set[str]], derived: dict[str, str]) -> set[str]:
    """The DSPy private names the module ``text`` touches.

    - In a class built on dspy.RLM or LocalInterpreter: a method ``def _name``, an attribute ``._name`` or a quoted
      ``"_name"`` that the DSPy class (or its instance) holds: an override, a call, a read or a write.
    - Elsewhere, in a module that imports dspy or names such a class: ``x._name`` or ``"_name"`` that dspy.RLM or
      LocalInterpreter holds, except ``self._name`` in a class of the module's own (the trace's ``_lock``, ...).
    - In a module that loads DSPy's worker script: ``x._name`` that the script defines at module level.
    """
    tree = ast.parse(text)
    in_reach = (re.search(r"^\s*(?:import dspy|from dspy\b)", text, re.M) is not None
                or any(re.search(rf"\b{re.escape(c)}\b", text) for c in derived))
    anywhere = names["RLM"] | names["LocalInterpreter"] if in_reach else set()
    if "local_interpreter_worker" in text or "DSPY_WORKER" in text:
        anywhere = anywhere | names["worker"]
    touches: set[str] = set()

    def visit(node: ast.AST, owner: str | None, own_class: bool) -> None:
        if isinstance(node, ast.ClassDef):
            bases = [derived[b] for b in map(_base_name, node.bases) if b in derived]
            owner, own_class = (bases[0], False) if bases else (None, True)
        mine = names[owner] if owner else set()
        name = None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in mine:
            name = node.name
        elif isinstance(node, ast.Attribute):
            is_self = isinstance(node.value, ast.Name) and node.value.id == "self"
            if node.attr in mine or (node.attr in anywhere and not (is_self and own_class)):
                name = node.attr
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in mine | anywhere:
            name = node.value
        if name:
            touches.add(name)
        for child in ast.iter_child_nodes(node):
            visit(child, owner, own_class)

    visit(tree, None, False)
    return touches


@functools.cache
def _rlmlab_sources() -> dict[str, str]:
    return {str(p.relative_to(REPO)): p.read_text() for p in sorted((REPO / "rlmlab").rglob("*.py"))}


@functools.cache
def _derived() -> dict[str, str]:
    return dspy_classes(_rlmlab_sources())


def test_the_adapter_touches_no_dspy_private_name_left_off_the_list():
    sources = _rlmlab_sources()
    listed = {n for _, n in METHODS} | set(RLM_ATTRIBUTES) | set(INTERPRETER_ATTRIBUTES)
    touched = dspy_private_touches(sources[ADAPTER], _dspy_private_names(), _derived())
    assert touched, f"{ADAPTER} touches no DSPy private name: the check is not reading it"
    unlisted = touched - listed
    assert not unlisted, f"{ADAPTER} uses DSPy private names not checked here: {sorted(unlisted)}"


def test_no_module_but_the_adapter_touches_a_dspy_private_name():
    """Every override, call, read or write of a DSPy private name is in rlmlab.executors._dspy_adapter; the
    worker script's wrapper may use the worker script's listed names (and nothing else of DSPy's)."""
    sources, names = _rlmlab_sources(), _dspy_private_names()
    derived = _derived()
    assert {"MeteredRLM", "RLMLabInterpreter", "PyodideInterpreter"} <= set(derived)
    touches = set()
    for rel, text in sources.items():
        if rel == ADAPTER:
            continue
        found = dspy_private_touches(text, names, derived)
        if rel == WORKER_WRAPPER:
            found -= set(WORKER_SCRIPT_NAMES)
        touches |= {f"{rel}: {n}" for n in found}
    assert not touches, f"DSPy private names used outside {ADAPTER}: {sorted(touches)}"


# Each kind of touch the modules made before the adapter owned them, in a module that is not the adapter.
OUTSIDE_TOUCHES = {
    "class M(MeteredRLM):\n    def _execute_code(self, repl, code, input_args): ...": "_execute_code",
    "class M(MeteredRLM):\n    def f(self):\n        return super()._build_variables()": "_build_variables",
    "import dspy\ndef f(rlm):\n    return rlm._format_tool_docs(rlm._user_tools)": "_format_tool_docs",
    "class M(AdaptedRLM):\n    def f(self):\n        return getattr(self, '_action_signature', None)":
        "_action_signature",
    "class P(RLMLabInterpreter):\n    def start(self):\n        self._process = None": "_process",
    "class P(RLMLabInterpreter):\n    def start(self):\n        self._receive(1, 'x')": "_receive",
    "class P(WorkerProtocol):\n    def f(self):\n        self._lock = None": "_lock",
    "from rlmlab.executors import RLMLabInterpreter\ndef f(repl):\n    return repl._ended": "_ended",
    "DSPY_WORKER = 'local_interpreter_worker.py'\nworker._send_lock": "_send_lock",
}


@pytest.mark.parametrize("text", list(OUTSIDE_TOUCHES), ids=list(OUTSIDE_TOUCHES.values()))
def test_the_check_finds_a_touch_outside_the_adapter(text):
    """The completeness check is not vacuous: each kind of touch is found in a module that is not the adapter."""
    derived = _derived()
    assert OUTSIDE_TOUCHES[text] in dspy_private_touches(text, _dspy_private_names(), derived)


def test_a_modules_own_private_names_are_not_touches():
    derived = _derived()
    own = ("import threading\nfrom rlmlab.executors import RLMLabInterpreter\nclass Tap:\n"
           "    def __init__(self):\n        self._lock = threading.Lock()\n"
           "def _process(x):\n    return x\n")
    assert not dspy_private_touches(own, _dspy_private_names(), derived)
