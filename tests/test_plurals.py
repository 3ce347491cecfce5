"""Counts the CLI prints read right: "1 iteration", "2 iterations", never "1 iterations" or "iteration(s)"
(a newcomer's report). One helper, ``rlmlab.text.plural``, writes them; the CLI, the lines its commands print
(an experiment's per-task line, its summary table's title, interruption lines, the scorecard's log, the lines of
the notebooks it runs) and the errors it shows use it."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

import rlmlab
from rlmlab.text import plural

PACKAGE = Path(rlmlab.__file__).resolve().parent

# Texts left hedged on purpose, each not a message of the CLI: what the model reads, the notebook widgets, and text
# stored with a run or in data (judge rationales, learned memory items, generated task notes).
STORED_OR_NOT_CLI = {
    "executors/_interpreter.py": "the REPL's note to the model",
    "jupyter": "notebook widgets",
    "learning": "judge rationales and memory items, stored in results and banks",
    "taskgen": "task notes, stored in the generated task files",
}
# " <words>(s)" or " <words>(es)" right after a formatted value: a count that hedges its plural
HEDGED = re.compile(r"^ [A-Za-z][\w -]*?\((?:e)?s\)")


@pytest.mark.parametrize("n, word, many, said", [
    (0, "iteration", None, "0 iterations"), (1, "iteration", None, "1 iteration"),
    (2, "iteration", None, "2 iterations"), (1200, "token", None, "1,200 tokens"),
    (1, "match", "matches", "1 match"), (3, "match", "matches", "3 matches"),
])
def test_plural_is_singular_for_one_only(n, word, many, said):
    assert plural(n, word, many) == said


def _hedged_counts(path: Path) -> list[str]:
    """Each f-string of ``path`` (a module, or a notebook's code cells) with a formatted value followed by a hedged
    plural, as "line: text"."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        source = "\n".join(ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!")))
    else:
        source = path.read_text(encoding="utf-8")
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            for a, b in zip(node.values, node.values[1:]):
                if isinstance(a, ast.FormattedValue) and isinstance(b, ast.Constant) and HEDGED.match(b.value):
                    found.append(f"{node.lineno}: {b.value.strip()[:40]}")
    return found


@pytest.mark.slow  # scans every module's source (about 1 s)
def test_no_count_the_cli_prints_hedges_its_plural():
    left = {f"{p.relative_to(PACKAGE)}:{hit}" for p in PACKAGE.rglob("*.py")
            if not any(str(p.relative_to(PACKAGE)).startswith(k) for k in STORED_OR_NOT_CLI) for hit in _hedged_counts(p)}
    assert sorted(left) == []


def test_no_count_a_notebook_the_cli_runs_hedges_its_plural():
    """`rlmlab demo`, `experiment notebook` and `scorecard --notebook` print their notebooks' lines."""
    from rlmlab.experiments import FAMILIES, MAIN_JOB

    notebooks = PACKAGE.parent / "notebooks"
    left = {f"{name}:{hit}" for name in [*FAMILIES, MAIN_JOB, "scorecard.ipynb"]
            for hit in _hedged_counts(notebooks / name)}
    assert sorted(left) == []


def test_the_check_finds_a_hedged_count(tmp_path):
    page = tmp_path / "m.py"
    page.write_text('n = 1\nline = f"{n} task(s) each, {n} match(es)"\nok = f"{n} tasks"\n', encoding="utf-8")
    assert _hedged_counts(page) == ["2: task(s) each,", "2: match(es)"]


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_an_experiment_of_one_task_and_one_step_says_so_in_the_singular(tmp_path, capsys):
    """The per-task line `experiment run` and the demo print, and the run's table title, for one step of one
    task ("1 iterations" and "1 rows" before)."""
    from rich.console import Console

    from rlmlab.experiments import run_experiment
    from rlmlab.lm import make_lm
    from rlmlab.memory import MemoryTask

    task = MemoryTask("q0", "What is 2 + 3?", "2 + 3", None, "5", "exact", {"suite": "arith", "level": 1})
    run = run_experiment("E13", lm=make_lm("scripted:solver"), task_list=[task], conditions=["free"],
                         run_dir=tmp_path / "run", progress="lines")
    console = Console(width=300, record=True)
    console.print(run)
    out = capsys.readouterr().out + console.export_text()
    line = next(ln for ln in out.splitlines() if ln.startswith("[1/1] E13 free q0:"))
    assert re.search(r", 1 iteration, \d", line), line
    assert "(1 row)" in out
    assert not re.search(r"\b1 (iterations|rows|tasks|steps)\b", out), out
