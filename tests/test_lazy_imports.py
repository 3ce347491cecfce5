"""Importing the tool registry or the tracer stays light: dspy, rdflib and the memory package load on first use."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("dspy", "rdflib", "rlmlab.memory", "rlmlab.ontology", "rank_bm25")


def _loaded_after(statement: str) -> list[str]:
    code = (f"import sys, json\n{statement}\n"
            f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", ["rlmlab.tools", "rlmlab.trace"])
def test_import_does_not_load_heavy_packages(module):
    assert _loaded_after(f"import {module}") == []


def test_public_names_still_importable_without_loading_memory():
    loaded = _loaded_after("from rlmlab.tools import TOOLS, mem_search, mem_get, sparql_query, attach_memory, "
                           "attach_ontology\nfrom rlmlab.tools._memory import MEMORY_CAP_DEFAULTS, set_default_store\n"
                           "assert {'mem_search', 'sparql_query', 'ast_query'} <= set(TOOLS.names())")
    assert loaded == []


@pytest.mark.slow
def test_memory_tool_loads_the_memory_package_when_called(tmp_path):
    db = tmp_path / "m.sqlite"
    loaded = _loaded_after(
        "from rlmlab.tools import TOOLS, Workspace, attach_memory\n"
        "from rlmlab.tools._memory import mem_search\n"
        "ws = Workspace()\n"
        "from rlmlab.memory import MemoryStore\n"
        f"attach_memory(ws, MemoryStore({str(db)!r}))\n"
        "assert ws.call('mem_search', query='anything')['count'] == 0")
    assert "rlmlab.memory" in loaded
