"""The CLI piped to a log: tables at their natural width, whole numbers and names, a line per finished task, and
``rlmlab rlm show`` for one ``rlm run`` directory (issue 28, item 9). Every command runs as a real subprocess
with its stdout a pipe, as under ``| tee log`` or a CI job."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rlmlab
from rlmlab.executors import TRAJECTORY_FILE, Trajectory

from helpers import cells_by_header
from recursive_runs import recursive_run


def _cli(*args: str, cwd: Path, ok: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # what a cron job or a CI runner has
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)
    assert (proc.returncode == 0) == ok, proc.stderr[-2000:]
    return proc


def _row(out: str, first_cell: str, tables: int = 1) -> list[str]:
    """The cells of the first table row whose first cell is ``first_cell``; ``tables`` tables have one such row
    (one line each: a row never wraps)."""
    lines = [ln for ln in out.splitlines() if re.match(rf"│ {re.escape(first_cell)} +│", ln)]
    assert len(lines) == tables, (first_cell, out)
    return [c.strip() for c in lines[0].strip("│").split("│")]


def _check_iteration_rows(out: str, traj: Trajectory, tables: int = 1) -> None:
    """The iteration table's rows; ``tables`` 2 when "how the token figures relate" (a row per iteration) follows."""
    for it in traj.iterations:
        cells = _row(out, str(it.index), tables)
        assert f"{it.leakage.prompt_chars:,}" in cells and f"{it.input_tokens:,}" in cells
        first = it.code.splitlines()[0]
        assert f"{it.output_tokens:,}" in cells and len(first) < 60 and first in cells


@pytest.fixture(scope="module")
def rlm_run(tmp_path_factory, rust_file):
    cwd = tmp_path_factory.mktemp("rlm")
    proc = _cli("rlm", "run", "How many lines?", str(rust_file), "--lm", "scripted:probe", "--runs-dir", "runs",
                "--wide", cwd=cwd)  # every table whole: a row per iteration in one line (tests/test_cli_run.py: without)
    (run_dir,) = (cwd / "runs").iterdir()
    return cwd, run_dir, proc.stdout


@pytest.mark.slow
def test_rlm_run_piped_prints_whole_numbers_in_one_line_per_iteration(rlm_run):
    cwd, run_dir, out = rlm_run
    traj = Trajectory.read_jsonl(run_dir / TRAJECTORY_FILE)
    assert traj.iterations and traj.input_tokens >= 1000  # numbers with a thousands separator: "1,693", not "1,69"
    _check_iteration_rows(out, traj)
    assert f"prompt tokens sent {traj.input_tokens:,}" in out
    import contextlib

    from rlmlab._paths import rlmlab_command

    with contextlib.chdir(cwd):  # how to type rlmlab where the run was started (the same PATH and interpreter)
        assert f"each step with its prompts: {rlmlab_command()} rlm show {Path('runs', traj.run_id)}" in out


@pytest.mark.slow
def test_rlm_run_piped_prints_a_line_per_iteration_as_it_finishes(rlm_run):
    # A step of the embedded model takes seconds to minutes; piped to a log, rich's spinner shows nothing.
    cwd, run_dir, out = rlm_run
    traj = Trajectory.read_jsonl(run_dir / TRAJECTORY_FILE)
    lines = [ln for ln in out.splitlines() if re.match(r"\[\d+/6\] ", ln)]
    assert len(traj.iterations) >= 2 and len(lines) == len(traj.iterations), out
    for line, it in zip(lines, traj.iterations):
        assert re.fullmatch(rf"\[{it.index}/6\] {re.escape(it.code.splitlines()[0])} · \d+\.\d s", line), line
    assert out.index(lines[-1]) < out.index("┏")  # before the summary table: printed as the run went


@pytest.mark.slow
def test_rlm_show_shows_one_run_and_experiment_show_does_too(rlm_run):
    cwd, run_dir, _ = rlm_run
    traj = Trajectory.read_jsonl(run_dir / TRAJECTORY_FILE)
    shown = _cli("rlm", "show", str(run_dir.relative_to(cwd)), "--wide", cwd=cwd).stdout
    assert f"query: {traj.query}" in shown and f"trajectory: {Path('runs', traj.run_id, TRAJECTORY_FILE)}" in shown
    _check_iteration_rows(shown, traj, tables=2)
    calls = [json.loads(line) for line in (run_dir / "lm_calls.jsonl").read_text().splitlines()]
    assert calls and calls[0]["completion"].splitlines()[0] in shown  # the exact completions, as experiment show
    assert _cli("rlm", "show", str(run_dir / TRAJECTORY_FILE), "--no-prompts", cwd=cwd).stdout.count("iteration 1") >= 1
    also = _cli("experiment", "show", str(run_dir), "--wide", cwd=cwd).stdout  # once refused: "no results.jsonl"
    _check_iteration_rows(also, traj, tables=2)
    bad = _cli("rlm", "show", str(cwd), ok=False, cwd=cwd)
    assert bad.returncode == 2 and "no trajectory.jsonl" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.slow
def test_rlm_show_shows_the_call_tree_and_each_sub_run_under_the_step_that_started_it(tmp_path):
    traj = recursive_run(tmp_path / "runs", max_depth=3)
    run_dir = tmp_path / "runs" / traj.run_id
    shown = _cli("rlm", "show", str(run_dir), "--wide", cwd=tmp_path).stdout
    first, grand = traj.children[0], traj.children[0].children[0]
    second = traj.children[1]
    assert (first.parent_step, grand.parent_step, second.parent_step) == (1, 1, 2) and grand.depth == 2
    lines = shown.splitlines()
    # the call tree: each run's row (run id, depth, answer, steps, tokens, seconds) under the step that started it
    at = lines.index(next(ln for ln in lines if ln.startswith("call tree: 4 runs in 3 levels")))
    tree = [ln.rstrip() for ln in lines[at + 1: at + 8]]
    for row, run in zip([tree[0], tree[2], tree[4], tree[6]], [traj, first, grand, second]):
        assert f"{run.run_id} · depth {run.depth} · answer {run.answer!r} · {len(run.iterations)} step" in row
        assert f"tokens {run.input_tokens:,} + {run.output_tokens:,} · {run.elapsed_ms / 1000:.1f} s" in row
    assert [tree[1].strip("│ ├└─"), tree[3].strip("│ ├└─"), tree[5].strip("│ ├└─")] == ["step 1", "step 1", "step 2"]
    # each sub-run's steps, indented, right after the panel of the step that started it, its own below them
    rows = {run.run_id: next(n for n, ln in enumerate(lines) if f"↳ sub-run {run.run_id} · " in ln)
            for run in (first, grand, second)}
    panel = {name: next(n for n, ln in enumerate(lines) if f"╭─ {name} ─" in ln) for name in (
        "iteration 1", "iteration 2", "iteration 3", f"iteration 1 of {first.run_id} (depth 1)",
        f"iteration 2 of {first.run_id} (depth 1)", f"iteration 1 of {grand.run_id} (depth 2)",
        f"iteration 1 of {second.run_id} (depth 1)")}
    assert (panel["iteration 1"] < rows[first.run_id] < panel[f"iteration 1 of {first.run_id} (depth 1)"]
            < rows[grand.run_id] < panel[f"iteration 1 of {grand.run_id} (depth 2)"]
            < panel[f"iteration 2 of {first.run_id} (depth 1)"] < panel["iteration 2"] < rows[second.run_id]
            < panel[f"iteration 1 of {second.run_id} (depth 1)"] < panel["iteration 3"])
    for run, indent in ((first, 4), (grand, 8), (second, 4)):
        row = lines[rows[run.run_id]].rstrip()
        assert row.startswith(" " * indent + "↳ sub-run ") and len(row) <= 120, row
        assert f"final answer of {run.run_id}: {run.answer!r}" in shown
    for ln in lines[at: at + 8]:
        assert len(ln.rstrip()) <= 120, ln
    # every LM call is listed once, in the run that made it (lm_calls.jsonl holds the whole tree's)
    calls = [json.loads(line) for line in (run_dir / "lm_calls.jsonl").read_text().splitlines()]
    assert len(calls) == traj.lm_calls == 7 and {c["run_id"] for c in calls} == {r.run_id for r in traj.walk()}
    bare = _cli("rlm", "show", str(run_dir), "--no-prompts", cwd=tmp_path).stdout  # (a prompt repeats the history)
    said = [ln.strip(" │") for ln in bare.splitlines()]
    for n in range(1, len(calls) + 1):
        assert said.count(f"script step {n}") == 2, n  # the step's reasoning, and its one call's completion
    assert "LM calls of iteration 1 (1)" in shown
    assert f"LM calls of iteration 1 of {first.run_id} (depth 1) (1)" in shown
    # the token table: the sub-runs' tokens in a row of their own, not "outside iterations"
    cells = _row(shown, "sub-runs (3, rlm_query)")
    assert cells[1:4] == ["4", f"{first.input_tokens + second.input_tokens:,}",
                          f"{first.output_tokens + second.output_tokens:,}"]
    assert "outside iterations" not in shown and "This run and its 3 sub-runs sent" in shown


@pytest.mark.slow
def test_rlm_show_of_a_depth_2_run_and_of_a_run_without_sub_runs(tmp_path, rlm_run):
    traj = recursive_run(tmp_path / "runs", max_depth=2)
    shown = _cli("rlm", "show", str(tmp_path / "runs" / traj.run_id), "--no-prompts", "--wide",
                 cwd=tmp_path).stdout
    assert "call tree: 3 runs in 2 levels" in shown
    for child in traj.children:
        row = next(ln for ln in shown.splitlines() if f"↳ sub-run {child.run_id} · depth 1 · " in ln).rstrip()
        assert len(row) <= 120 and row.endswith(f"{child.input_tokens:,} + {child.output_tokens:,} · "
                                                f"{child.elapsed_ms / 1000:.1f} s")
    # a sub-run whose step has no record (the run was interrupted during it) is still shown, after the steps
    import dataclasses
    import io

    from rich.console import Console

    from rlmlab.cli._run_show import trajectory_detail

    console = Console(record=True, width=200, file=io.StringIO())
    console.print(*trajectory_detail(tmp_path / "runs" / traj.run_id,
                                     dataclasses.replace(traj, iterations=traj.iterations[:1]), prompts=False))
    cut = console.export_text()
    second = traj.children[1]
    assert "└── a step with no record" in cut and f"↳ sub-run {second.run_id} · depth 1 · " in cut
    assert "query: Anything else? (started by step 2, not recorded)" in cut
    assert cut.index("╭─ iteration 1 ─") < cut.index(f"↳ sub-run {second.run_id}") < cut.index("final answer: ")
    cwd, run_dir, _ = rlm_run  # a run without sub-runs: no tree, no sub-run row
    plain = _cli("rlm", "show", str(run_dir.relative_to(cwd)), cwd=cwd).stdout
    assert "call tree" not in plain and "sub-run" not in plain and " of rlm-" not in plain


@pytest.mark.slow
def test_experiment_run_piped_prints_a_line_per_task_and_whole_condition_names(tmp_path):
    proc = _cli("experiment", "run", "E13", "--lm", "scripted:probe", "--tasks", "1", "--runs-dir", "runs",
                cwd=tmp_path)
    (run_dir,) = (tmp_path / "runs").iterdir()
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    best = [r for r in rows if r["best"]]
    progress = [ln for ln in proc.stdout.splitlines() if re.match(r"\[\d+/\d+\] E13 ", ln)]
    assert len(progress) == len(best) == 4, proc.stdout
    assert {ln.split()[2] for ln in progress} == {"free", "grammar", "grammar_templates", "vote5"}
    table_at = proc.stdout.index("┏")
    assert all(proc.stdout.index(ln) < table_at for ln in progress)  # as the tasks finish, before the summary
    for cond in ("free", "grammar", "grammar_templates", "vote5"):
        cells = _row(proc.stdout, cond)
        assert cells[0] == cond and cells[1] == "1"  # never "grammar_te…"
    shown = _cli("experiment", "show", str(run_dir), "--wide", cwd=tmp_path).stdout
    assert _row(shown, "grammar_templates", tables=3)[:3] == ["grammar_templates", "1", "0"]  # summary, time, tasks
    bad = _cli("rlm", "show", str(run_dir), ok=False, cwd=tmp_path)
    assert "rlmlab experiment show" in bad.stderr


@pytest.mark.slow  # six CLI processes and an experiment run
def test_show_keeps_to_100_columns_in_blocks_of_whole_columns_and_wide_gives_one_table(tmp_path, rlm_run):
    # rlm show's tables were 206 characters wide (panels and text 200), experiment show's and the demo's results
    # table 20 columns in one line; every cell stays whole, the columns go into blocks led by what a row is
    from rlmlab.experiments import results_table

    cwd, run_dir, _ = rlm_run
    traj = Trajectory.read_jsonl(run_dir / TRAJECTORY_FILE)
    shown = _cli("rlm", "show", str(run_dir.relative_to(cwd)), cwd=cwd).stdout
    assert max(map(len, shown.splitlines())) <= 100, max(shown.splitlines(), key=len)
    wide = _cli("rlm", "show", str(run_dir.relative_to(cwd)), "--wide", cwd=cwd).stdout
    assert max(map(len, wide.splitlines())) > 100
    for it in traj.iterations:  # every column of the iteration table, in blocks each led by the row's # and code
        cells, whole = cells_by_header(shown, str(it.index)), _row(wide, str(it.index), tables=2)
        assert cells["prompt tokens sent"] == f"{it.input_tokens:,}" and cells["time"].endswith(" s")
        assert set(whole) <= set(cells.values()) and "(continued)" in shown and "(continued)" not in wide
    experiment = _cli("experiment", "run", "E13", "--lm", "scripted:probe", "--tasks", "1", "--condition", "free",
                      "--condition", "vote5", "--runs-dir", "runs", cwd=tmp_path)
    (exp_dir,) = (tmp_path / "runs").iterdir()
    overview = _cli("experiment", "show", str(exp_dir), cwd=tmp_path).stdout
    task = json.loads((exp_dir / "results.jsonl").read_text().splitlines()[0])["task_id"]
    detail = _cli("experiment", "show", str(exp_dir), "--task", task, "--condition", "free", cwd=tmp_path).stdout
    for out in (overview, detail):
        assert max(map(len, out.splitlines())) <= 100, out
    assert {"errors", "time / task", "prompt tokens sent / task"} <= set(cells_by_header(overview, "vote5"))
    assert max(map(len, _cli("experiment", "show", str(exp_dir), "--wide", cwd=tmp_path).stdout.splitlines())) > 100
    # the results table (the demo's, a notebook's repr): lines of at most 100 characters, or one line a row
    table = results_table(exp_dir)
    text, one = repr(table), table.text(None)
    assert max(map(len, text.splitlines())) <= 100 < max(map(len, one.splitlines()))
    assert len(one.splitlines()) == 3 and len(table.columns) >= 20
    blocks = text.split("\n\n")
    assert len(blocks) > 2 and all(b.splitlines()[1].startswith("free ") for b in blocks)
    for heading in [table.heading(k) for k in table.columns]:  # every column, whole, in one block
        assert sum(heading in b.splitlines()[0] for b in blocks) >= 1 and heading in one.splitlines()[0]
    assert experiment.returncode == 0


@pytest.fixture(scope="module")
def notebook_log(tmp_path_factory, rlmlab_kernel) -> subprocess.CompletedProcess:
    """``rlmlab experiment notebook --log-output`` of a two-cell notebook printing three lines, as a subprocess."""
    import nbformat

    tmp_path = tmp_path_factory.mktemp("notebook")
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "rlmlab", "display_name": "rlmlab",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell('run_dir = ""', metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell('for k in (1, 2, 3):\n    print(f"[{k}/3] task {k}: pass", flush=True)')]
    nbformat.write(nb, tmp_path / "lines.ipynb")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "experiment", "notebook", str(tmp_path / "lines.ipynb"),
                           "--log-output", "--runs-dir", str(tmp_path / "runs")], capture_output=True, text=True,
                          cwd=tmp_path, env={**env, "PYTHONPATH": str(Path(rlmlab.__file__).resolve().parents[1])},
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.mark.notebook
def test_a_notebook_run_with_log_output_prints_its_cells_lines_without_the_progress_bar(notebook_log):
    # `rlmlab demo` and `experiment notebook --log-output` stream the cells' lines; papermill's bar, written with
    # carriage returns on the same terminal or log, glued them into one line ("Executing: 25%|...[1/6] E13 ...").
    proc = notebook_log
    assert [ln for ln in proc.stdout.splitlines() if ln.startswith("[")] == [f"[{k}/3] task {k}: pass" for k in (1, 2, 3)]
    assert "Executing:" not in proc.stderr + proc.stdout and "\r" not in proc.stderr + proc.stdout, proc.stderr


@pytest.mark.notebook
def test_a_notebook_run_prints_no_kernel_transport_warning(notebook_log):
    # ipykernel logs "Kernel is running over TCP without encryption. ..." to the stderr it shares with rlmlab when
    # its manager picks TCP: every demo and experiment notebook printed it. The kernel talks over IPC instead.
    said = notebook_log.stdout + notebook_log.stderr
    assert "without encryption" not in said and "WARNING" not in said, notebook_log.stderr
    assert "[3/3] task 3: pass" in notebook_log.stdout  # the kernel ran the cells
