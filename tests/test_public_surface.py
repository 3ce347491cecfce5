"""rlmlab's public surface: a top level that gives every name the seed specs and the README use (and the package's
own object for each), ``run_rlm`` with real parameters, one meaning per public name across packages, guide
notebooks that import public names only, and the memory store's tables read through ``MemoryStore`` methods
only."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import json
import pkgutil
import re
import warnings
from pathlib import Path

import pytest

import rlmlab

REPO = Path(__file__).resolve().parents[1]


def _public_modules() -> list[str]:
    """rlmlab and every public package or top-level module under it that declares ``__all__``."""
    names = ["rlmlab"]
    for info in pkgutil.iter_modules(rlmlab.__path__):
        if not info.name.startswith("_"):
            names.append(f"rlmlab.{info.name}")
    return names


# The names the four seed specs (the design card, /work/shared/seeds) use, by the package that defines each.
SEED_NAMES = {
    # 001: the oracles, the trace validator and its results, the context (token-budget) tracer
    "GrepOracle": "rlmlab.oracle", "GrepVerification": "rlmlab.oracle", "TreeSitterOracle": "rlmlab.oracle",
    "SelfConsistencyOracle": "rlmlab.oracle", "TraceValidator": "rlmlab.oracle", "OracleResult": "rlmlab.oracle",
    "ContextTrace": "rlmlab.trace", "ContextEvent": "rlmlab.trace",
    # 002: the teacher-learner loop: bias detection, template selection
    "run_teach": "rlmlab.teach", "detect_bias": "rlmlab.teach", "select_template": "rlmlab.teach",
    # 003: the Turing Protocol and its hooks
    "TuringProtocol": "rlmlab.turing", "HookSpec": "rlmlab.turing",
    # 004: handles, layered memory, the ReasoningBank loop, the experiments
    "BlobRef": "rlmlab.handles", "MemoryStore": "rlmlab.memory", "ContextBuilder": "rlmlab.memory",
    "ReasoningBankLoop": "rlmlab.learning", "run_experiment": "rlmlab.experiments",
}
# 004's REPL tools (with 001's ast_query and the ontology's sparql_query), bound to the default workspace
SEED_TOOLS = ("blob", "ctx_stats", "ctx_peek", "ctx_slice", "ctx_find", "mem_search", "mem_get", "mem_quote",
              "mem_add", "event_log", "ast_query", "sparql_query")
# What the seeds' code calls on those names (001's Rust API; 003's hooks and validator by registered name)
SEED_MEMBERS = {
    "GrepVerification": ["ExactMatch", "UnorderedMatch", "SubsetMatch", "HasFalsePositives", "HasFalseNegatives",
                         "Mismatch"],
    "GrepOracle": ["verify"], "TreeSitterOracle": ["get_functions", "query", "get_structs", "count_error_patterns"],
    "TraceValidator": ["validate", "batch_validate"], "OracleResult": ["Golden", "Unverified", "Failed"],
    "ContextTrace": ["log_event", "summary"], "ContextEvent": ["system_prompt", "grep_result"],
}
SEED_HOOKS = ("workflow_spawn", "phantom_tool_result", "empty_promise", "objective_completion", "agenda_complete",
              "tool_schema_validation")
OTHER_TOP_LEVEL = {"make_lm": "rlmlab.lm", "run_rlm": "rlmlab.executors", **{w: "rlmlab.jupyter" for w in (
    "BudgetTimeline", "TrajectoryExplorer", "RunBrowser", "TeacherStepper", "OracleView", "MemoryBrowser",
    "InteractionLogView")}}


def _user_docs() -> str:
    """The README and the reference pages in ``docs/``: what a user reads."""
    return "\n".join(p.read_text(encoding="utf-8") for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))])


def _readme_names() -> set[str]:
    """Every top-level name the README uses: ``from rlmlab import ...``, ``rlmlab.<name>`` (not a module), and
    what its ``>>>`` examples call or show."""
    text = _user_docs()
    names = {n.strip() for m in re.finditer(r"from rlmlab import ([\w, ]+)", text) for n in m.group(1).split(",")}
    for name in re.findall(r"(?<![\w.])rlmlab\.(\w+)", text):
        module = REPO / "rlmlab" / name
        if not name.startswith("__") and not module.is_dir() and not module.with_suffix(".py").exists():
            names.add(name)
    examples = "\n".join(line for line in text.splitlines() if line.startswith(">>>") or line.startswith("BlobRef("))
    names |= {n for n in re.findall(r"(?<![\w.])([A-Za-z_]\w*)\(", examples) if not hasattr(builtins, n)}
    return names - {""}


def test_readme_names_are_found_where_expected():
    names = _readme_names()
    assert {"blob", "ctx_peek", "ctx_find", "ast_query", "BlobRef", "default_workspace", "PROJECT_ROOT"} <= names


def test_every_seed_and_readme_name_imports_from_the_top_level():
    """``from rlmlab import X`` works for each name a seed or the README uses, and gives the package's own
    object, not a copy or a stub."""
    missing = []
    for name in sorted({*SEED_NAMES, *SEED_TOOLS, *_readme_names()}):
        try:
            exec(f"from rlmlab import {name}", {})
        except ImportError:
            missing.append(name)
    assert missing == []
    for name, package in {**SEED_NAMES, **OTHER_TOP_LEVEL}.items():
        obj = getattr(rlmlab, name)
        assert obj is getattr(importlib.import_module(package), name), name
        assert inspect.unwrap(obj).__module__.startswith(package), name


def test_top_level_tools_are_the_registered_tools_bound_to_the_default_workspace():
    registry, tools = rlmlab.default_workspace().registry, importlib.import_module("rlmlab.tools")
    for name in SEED_TOOLS:
        assert registry.get(name).func is getattr(tools, name), name
        assert inspect.unwrap(getattr(rlmlab, name)).__name__ == name
    ref = rlmlab.blob("async fn foo() {}\n")  # the design card's REPL: the handle, not the payload
    assert isinstance(ref, rlmlab.BlobRef) and rlmlab.ctx_peek(ref, n=5)["preview"] == "async"
    assert repr(rlmlab.BlobRef(key="graph_001", n=1664)) == "BlobRef(key='graph_001', n=1664)"


def test_seed_members_and_hooks_exist_under_the_seeds_names():
    for name, members in SEED_MEMBERS.items():
        obj = getattr(rlmlab, name)
        assert [m for m in members if not hasattr(obj, m)] == [], name
    from rlmlab.turing import BUILTIN_HOOKS, VALIDATORS

    assert set(SEED_HOOKS) <= {h.name for h in BUILTIN_HOOKS}
    assert "validate_workflow_spawn" in VALIDATORS.names()  # the seed's custom-hook example names it


def test_top_level_is_the_seed_names_the_entry_points_and_the_widgets():
    """No name joins the top level unnoticed: it is a seed's, an entry point or a widget, and the README's
    layout paragraph names each."""
    assert set(rlmlab.__all__) == {*SEED_NAMES, *SEED_TOOLS, *OTHER_TOP_LEVEL}
    assert len(rlmlab.__all__) == len(set(rlmlab.__all__))
    readme = _user_docs()
    assert [n for n in rlmlab.__all__ if f"`{n}`" not in readme] == []


def test_every_top_level_name_resolves_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in rlmlab.__all__:
            assert getattr(rlmlab, name) is not None, name


def test_names_left_the_top_level_are_an_attribute_error():
    # Everything else is imported from its package: a name that is not on the facade does not linger there.
    for name in ("JUDGES", "ToolError", "AnalysisResult"):
        with pytest.raises(AttributeError):
            getattr(rlmlab, name)
    from rlmlab.learning import JUDGES

    assert JUDGES.kind == "judge"


def test_no_public_name_means_two_things():
    """A name in two packages' ``__all__`` is the same object in both. A top-level tool is the registered tool
    bound to the default workspace: it counts as that tool when the workspace's registry holds it under the name."""
    tools = rlmlab.default_workspace().registry
    meaning: dict[str, dict[int, str]] = {}
    for modname in _public_modules():
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if modname == "rlmlab" and name in tools and inspect.unwrap(obj).__name__ == name:
                obj = tools.get(name).func
            meaning.setdefault(name, {}).setdefault(id(obj), modname)
    collisions = {name: sorted(where.values()) for name, where in meaning.items() if len(where) > 1}
    assert collisions == {}


def test_vote_key_is_exported_under_its_own_name():
    from rlmlab.experiments import vote_key
    from rlmlab.numbers import vote_key as numbers_vote_key

    assert vote_key is numbers_vote_key
    import rlmlab.experiments

    assert "normalise_answer" not in rlmlab.experiments.__all__


def _notebook_imports(path: Path) -> list[str]:
    """``notebook:cell:line: import`` for each import of a private rlmlab module or name in a code cell."""
    bad = []
    for n, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        if source.lstrip().startswith("%%"):  # a cell magic: the body is the magic's input, not Python
            continue
        # IPython magics and shell lines are not Python: blank them so the cell still parses line for line
        source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                mods = [(a.name, a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                mods = [(node.module, f"{node.module}.{a.name}") for a in node.names]
            else:
                continue
            for module, full in mods:
                if module.split(".")[0] == "rlmlab" and any(p.startswith("_") for p in full.split(".")):
                    bad.append(f"{path.name}:cell {n}:{node.lineno}: {ast.unparse(node)}")
    return bad


def test_guide_notebooks_import_public_names_only():
    notebooks = sorted((REPO / "notebooks").glob("*.ipynb"))
    assert notebooks
    bad = [line for nb in notebooks for line in _notebook_imports(nb)]
    assert bad == []


def test_notebook_import_scan_sees_a_private_import(tmp_path):
    nb = tmp_path / "x.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "source": [
        "%load_ext rlmlab\n", "from rlmlab.experiments._runs import load_run\n", "from rlmlab.memory import _x"]}]}))
    assert len(_notebook_imports(nb)) == 2


_MEMORY_TABLES = re.compile(r"\b(FROM|JOIN|INTO|UPDATE|TABLE)\s+(items|items_fts|events|usage|artifacts)\b", re.I)


@pytest.mark.slow
def test_no_sql_on_memory_tables_outside_the_memory_package():
    """The memory store's tables are read through ``MemoryStore`` methods only (its schema can then change)."""
    bad = []
    for path in sorted((REPO / "rlmlab").rglob("*.py")):
        if path.parent.name == "memory":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _MEMORY_TABLES.search(node.value):
                bad.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value[:60]!r}")
    assert bad == []


def test_store_events_filter_on_payload_fields(tmp_path):
    from rlmlab.memory import MemoryStore

    with MemoryStore(tmp_path / "m.db", run_id="r1") as store:
        store.log_event("task", {"task_id": "a", "n": 1})
        store.log_event("task", {"task_id": "b", "n": 2})
        store.log_event("task", {"task_id": "a", "n": 3}, run_id="r2")
        got = store.events(kind="task", run_id="r1", payload={"task_id": "a"})
        assert [e.payload["n"] for e in got] == [1]
        assert [e.payload["n"] for e in store.events(payload={"task_id": "a"})] == [1, 3]
        from rlmlab.memory import ItemValidationError

        with pytest.raises(ItemValidationError, match="payload"):
            store.events(payload={"task_id') OR 1=1 --": "a"})


def test_names_say_the_job():
    """Policies and retrievers live in modules a newcomer tells apart; no alias of the registry core; the two
    loops say which seed each implements."""
    import rlmlab.learning
    import rlmlab.registry
    import rlmlab.teach

    memory = {p.stem for p in (REPO / "rlmlab" / "memory").glob("_*.py")}
    assert {"_policies", "_retrievers"} <= memory and not {"_retrieval", "_retrieve"} & memory
    assert not hasattr(rlmlab.registry, "PolicyRegistry")
    assert "seed 002" in rlmlab.teach.__doc__ and "rlmlab.learning" in rlmlab.teach.__doc__
    assert "seed 004" in rlmlab.learning.__doc__ and "rlmlab.teach" in rlmlab.learning.__doc__


EXECUTOR_ENTRIES = {"run_rlm": "CodeRunOptions", "run_react": "ReactOptions", "run_scratchpad": "ScratchpadOptions",
                    "run_direct": "DirectOptions"}


@pytest.mark.parametrize("name", list(EXECUTOR_ENTRIES))
def test_executor_entry_points_have_real_parameters(name):
    """Each ``run_<executor>``'s ``def`` names every keyword it takes, typed, with no ``**kwargs`` and no synthetic
    ``__signature__`` (run_react, run_scratchpad and run_direct had one over a closure); its keywords are the
    fields of RunEnv and its options dataclass, with the same defaults, and a type checker resolves its hints."""
    import dataclasses
    import typing

    import rlmlab.executors as executors

    run, options = getattr(executors, name), getattr(executors, EXECUTOR_ENTRIES[name])
    assert "__signature__" not in vars(run)
    func = ast.parse(inspect.getsource(run)).body[0]
    assert isinstance(func, ast.FunctionDef) and func.name == name
    assert func.args.kwarg is None and func.args.vararg is None
    assert [a.arg for a in func.args.args] == ["query", "context"]
    fields = [*dataclasses.fields(executors.RunEnv), *dataclasses.fields(options)]
    assert [a.arg for a in func.args.kwonlyargs] == [f.name for f in fields]
    assert all(a.annotation is not None for a in [*func.args.args, *func.args.kwonlyargs]) and func.returns
    params = inspect.signature(run).parameters
    assert list(params) == ["query", "context", *(f.name for f in fields)]
    for f in fields:
        default = inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
        assert params[f.name].default == default, f.name
    hints = typing.get_type_hints(run)
    assert set(hints) == {*params, "return"} and hints["return"] is executors.Trajectory


@pytest.mark.parametrize("name", list(EXECUTOR_ENTRIES))
def test_an_unknown_keyword_to_an_executor_is_a_one_line_type_error(name):
    """A misspelt option fails at the call, before anything runs, in one line naming the keyword."""
    import rlmlab.executors as executors

    with pytest.raises(TypeError) as caught:
        getattr(executors, name)("q", "text", lm=None, max_iter=3)
    message = str(caught.value)
    assert "max_iter" in message and name in message and "\n" not in message


# Plug-in points: what a plug-in author registers with, implements or catches. Public though no code outside
# their package uses them yet (a registry's own entries are made by name, so their classes are not listed).
PLUGIN_POINTS = {
    "rlmlab.executors": {"StepLoop", "register_executor"},
    "rlmlab.jupyter": {"RLMLabWidget"},  # the base of every widget (static HTML and text forms)
    "rlmlab.learning": {"Extractor", "Consolidator", "Forgetter"},
    "rlmlab.lm": {"LMProvider", "lm_provider"},
    "rlmlab.memory": {"register_domain", "DOMAINS", "register_retriever", "Retriever", "RetrievalPolicy",
                      "StoreBusyError"},
    "rlmlab.ontology": {"ont_sense", "OntSense"},  # seed 004's L0 layer, Ont-Sense
    "rlmlab.oracle": {"ORACLES", "OraclePlugin"},
    "rlmlab.sandbox": {"register_sandbox"},
    "rlmlab.tools": {"ToolObserver"},
    "rlmlab.turing": {"pattern_detector", "ValidatorContext"},
}


@pytest.mark.slow
def test_each_package_lists_what_others_use_no_more():
    """A name in a package's ``__all__`` is used outside that package (another package, tests, notebooks,
    benchmarks, studies, the README) or is one of its plug-in points; the rest stay importable, unlisted."""
    here = Path(__file__).resolve()  # this file names the plug-in points: it does not count as a use
    texts = [(path, path.read_text(encoding="utf-8", errors="replace"))
             for folder in ("rlmlab", "tests", "notebooks", "benchmarks", "studies")
             for path in sorted((REPO / folder).rglob("*")) if path.suffix in {".py", ".ipynb", ".md"} and path != here]
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    texts += [(path, path.read_text(encoding="utf-8")) for path in docs]
    unused = {}
    for init in sorted((REPO / "rlmlab").glob("*/__init__.py")):
        modname = f"rlmlab.{init.parent.name}"
        words = set(re.findall(r"\w+", "\n".join(t for path, t in texts if init.parent not in path.parents)))
        names = [n for n in importlib.import_module(modname).__all__
                 if n not in words and n not in PLUGIN_POINTS.get(modname, ())]
        if names:
            unused[modname] = names
    assert unused == {}
