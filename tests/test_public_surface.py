"""rlmlab's public surface: a short top-level ``__all__`` of what a notebook user types, one meaning per public
name across packages, guide notebooks that import public names only, and the memory store's tables read
through ``MemoryStore`` methods only."""

from __future__ import annotations

import ast
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


def test_top_level_exports_at_most_25_names():
    assert len(rlmlab.__all__) <= 25, sorted(rlmlab.__all__)
    for name in ("make_lm", "run_rlm", "run_experiment", "run_teach", "MemoryStore", "ContextBuilder", "blob",
                 "ctx_peek", "ast_query"):
        assert name in rlmlab.__all__


def test_every_top_level_name_resolves_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in rlmlab.__all__:
            assert getattr(rlmlab, name) is not None, name


def test_names_left_the_top_level_are_an_attribute_error():
    # Everything else is imported from its package: a name that left the facade does not linger there.
    with pytest.raises(AttributeError):
        rlmlab.GrepOracle  # noqa: B018
    from rlmlab.oracle import GrepOracle

    assert GrepOracle.__module__.startswith("rlmlab.oracle")


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


def test_run_rlm_has_real_parameters():
    """``run_rlm``'s ``def`` names every keyword it takes, typed, with no ``**kwargs`` and no synthetic
    ``__signature__``; its keywords are the fields of RunEnv and CodeRunOptions, with the same defaults."""
    import dataclasses

    from rlmlab.executors import CodeRunOptions, RunEnv, run_rlm

    assert "__signature__" not in vars(run_rlm)
    func = ast.parse(inspect.getsource(run_rlm)).body[0]
    assert isinstance(func, ast.FunctionDef) and func.name == "run_rlm"
    assert func.args.kwarg is None and func.args.vararg is None
    assert [a.arg for a in func.args.args] == ["query", "context"]
    fields = [*dataclasses.fields(RunEnv), *dataclasses.fields(CodeRunOptions)]
    assert [a.arg for a in func.args.kwonlyargs] == [f.name for f in fields]
    assert all(a.annotation is not None for a in [*func.args.args, *func.args.kwonlyargs]) and func.returns
    params = inspect.signature(run_rlm).parameters
    for f in fields:
        default = inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
        assert params[f.name].default == default, f.name
