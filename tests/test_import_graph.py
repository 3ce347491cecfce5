"""The package graph of rlmlab flows one way: no import cycle between packages or between modules, no reach into
another package's private modules. Read from the source with ``ast`` (imports inside functions count too: a lazy
import is still a dependency, and a circle closed by one works only as long as nobody calls it first; imports
under ``if TYPE_CHECKING:`` do not, they never run)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "rlmlab"

# The layers, lowest first, as docs/architecture.md's picture shows them. A package may import only
# packages of lower layers (and top-level leaf modules such as rlmlab.errors).
LAYERS = [
    {"_leaf"},  # top-level modules: errors, registry, numbers, tokens, text, _files, _paths, _sqlite, _lock, _faults,
    # _interrupt
    {"handles", "lm", "sandbox"},  # sandbox: confinement backends and the scrubbed env (tools and executors use it)
    {"oracle"},
    {"ontology"},
    {"memory"},  # the store, retrieval, packers, ContextBuilder
    {"tools"},  # the REPL tools over blobs, code, the ontology and memory
    {"trace", "turing"},
    {"teach"},
    {"executors"},
    {"learning"},  # judges, extraction, consolidation, forgetting, ReasoningBankLoop: they run executors
    {"experiments"},
    {"jupyter", "taskgen"},  # taskgen: task generators over the suites' format (rlmlab tasks generate)
    {"scorecard"},  # the seed claims measured over experiments, teach and turing, and E15's study over generated
    # long-context tasks (rlmlab scorecard)
    {"cli"},
]
LAYER = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}
TOP_LEVEL_OK = {"rlmlab/__init__.py", "rlmlab/namespace.py"}  # the facade: re-exports every package lazily


def _package(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else "_leaf"


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every rlmlab import in a file, absolute or relative."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = ["rlmlab", *path.relative_to(ROOT).with_suffix("").parts]
    if here[-1] == "__init__":
        here = here[:-1]
    else:
        here = here[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "rlmlab"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != "rlmlab":
                continue
            out.append((node.lineno, module))
            if module == "rlmlab":  # ``from rlmlab import learning`` imports that package
                out += [(node.lineno, f"rlmlab.{a.name}") for a in node.names if (ROOT / a.name).is_dir()]
            # ``from rlmlab.x import _private_module`` names a private module too
            out += [(node.lineno, f"{module}.{a.name}") for a in node.names if a.name.startswith("_")
                    and (ROOT.parent / module.replace(".", "/") / f"{a.name}.py").exists()]
    return out


def _edges() -> tuple[dict[str, set[str]], list[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    private: list[str] = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = str(path.relative_to(ROOT.parent))
        src = _package(path)
        for line, module in _imports(path):
            parts = module.split(".")
            if len(parts) < 2:
                continue
            target = parts[1] if (ROOT / parts[1]).is_dir() else "_leaf"
            if rel in TOP_LEVEL_OK:
                continue
            if target != src:
                graph[src].add(target)
                if target != "_leaf" and len(parts) > 2 and parts[2].startswith("_"):
                    private.append(f"{rel}:{line}: imports {module} (a private module of rlmlab.{target})")
    return graph, private


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, stack, state = [], [], {}

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


@pytest.mark.slow
def test_no_import_cycle_between_packages():
    graph, _ = _edges()
    assert _cycles(graph) == []


@pytest.mark.slow
def test_no_package_imports_another_packages_private_modules():
    _, private = _edges()
    assert private == []


@pytest.mark.slow
def test_packages_import_only_lower_layers():
    graph, _ = _edges()
    upward = [f"rlmlab.{src} -> rlmlab.{dst}" for src, dsts in sorted(graph.items()) for dst in sorted(dsts)
              if LAYER.get(dst, 0) >= LAYER.get(src, 0)]
    assert upward == []


def test_every_package_is_in_a_layer():
    packages = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(LAYER)


def test_no_module_over_500_lines():
    long = [f"{p.relative_to(ROOT.parent)}: {n}" for p in sorted(ROOT.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500]
    assert long == []


def _module_name(path: Path) -> str:
    parts = ["rlmlab", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(tree: ast.AST) -> set[int]:
    return {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for stmt in node.body for n in ast.walk(stmt)}


def _module_edges() -> dict[str, set[str]]:
    """Module -> the rlmlab modules it imports (a package is its ``__init__``). ``from pkg import sub`` is an edge
    to the submodule only: the parent package is imported first by Python itself, before any child runs."""
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        skip = _type_checking_only(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: package.count(".") + 2 - node.level]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                subs = {f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in modules}
                graph[name] |= subs
                if module in modules and len(subs) < len(node.names):
                    graph[name].add(module)
        graph[name].discard(name)
    return graph


def _module_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of two or more modules (Tarjan), each as one circle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(members) > 1:
                found.append(_circle(graph, sorted(members)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _circle(graph: dict[str, set[str]], members: list[str]) -> list[str]:
    """One import path from the first member back to itself inside ``members`` (what the failure prints)."""
    start, inside = members[0], set(members)
    paths, seen = {start: [start]}, {start}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ()) & inside):
                if w == start:
                    return paths[v] + [start]
                if w not in seen:
                    seen.add(w)
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    return members


@pytest.mark.slow
def test_no_import_cycle_between_modules():
    cycles = _module_cycles(_module_edges())
    assert cycles == [], "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_module_cycle_check_sees_a_circle_closed_inside_a_function():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _module_cycles(graph) == [["a", "b", "c", "a"]]
    assert _module_cycles({"a": {"b"}, "b": set()}) == []
