"""``rlmlab rlm run`` as a newcomer reads it, piped (not a terminal, as in a log or under ``| tee``): its summary
keeps to the columns ``rlm show`` keeps to unless ``--wide``, a run that ends with an empty answer says why in one
line, the line ``rlm show`` prints for it, and the hint to show it is a command that runs here. Run in this process
with scripted LMs."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rlmlab.cli import main
from rlmlab.cli._console import FIT_WIDTH
from rlmlab.executors import TRAJECTORY_FILE, Trajectory
from rlmlab.lm._scripts import SCRIPTS, output_fields

from helpers import cells_by_header

BOX = tuple("┏┃┡│└╭╰├")  # how a line of a table or panel starts


def _failing(messages):
    """A model whose every step raises (a name never set) and whose extract step writes nothing."""
    fields = output_fields(messages)
    if "code" in fields:
        return {"reasoning": "look", "code": "print(undefined_name)"}
    return {name: "" for name in fields} or ""


@pytest.fixture
def failing_lm(monkeypatch):
    monkeypatch.setitem(SCRIPTS, "failing", _failing)
    return "scripted:failing"


def _rlm(*args: str, monkeypatch) -> str:
    monkeypatch.delenv("COLUMNS", raising=False)  # what a cron job or a CI runner has
    res = CliRunner().invoke(main, ["rlm", *args])
    assert res.exit_code == 0, res.output
    return res.output


def _run(tmp_path: Path, lm: str, monkeypatch, *extra: str) -> tuple[str, Trajectory, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    source = tmp_path / "a.rs"
    source.write_text("fn main() {}\nfn helper() -> u8 { 1 }\n")
    runs = tmp_path / "runs"
    out = _rlm("run", "How many functions?", str(source), "--lm", lm, "--runs-dir", str(runs), *extra,
               monkeypatch=monkeypatch)
    (run_dir,) = [d for d in runs.iterdir() if d.is_dir()]
    return out, Trajectory.read_jsonl(run_dir / TRAJECTORY_FILE), run_dir


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_rlm_run_piped_keeps_its_summary_within_the_columns_rlm_show_keeps_to(tmp_path, monkeypatch):
    """Its iteration table was about 210 columns wide in a log: now in blocks of whole columns within 100, each
    led by the row's # and code, as ``rlm show`` prints it; ``--wide`` gives the one wide table."""
    out, traj, run_dir = _run(tmp_path, "scripted:probe", monkeypatch)
    tables = [ln for ln in out.splitlines() if ln.startswith(BOX)]
    assert tables and max(map(len, tables)) <= FIT_WIDTH, max(tables, key=len)
    wide, _, _ = _run(tmp_path / "wide", "scripted:probe", monkeypatch, "--wide")
    assert max(len(ln) for ln in wide.splitlines() if ln.startswith(BOX)) > FIT_WIDTH
    shown = _rlm("show", str(run_dir), monkeypatch=monkeypatch)
    header = [c.strip() for c in next(ln for ln in wide.splitlines() if ln.startswith("┃ # ")).strip("┃").split("┃")]
    for it in traj.iterations:  # every column of the wide table, its cell whole, in one of the blocks
        cells = cells_by_header(out, str(it.index))
        assert sorted(cells) == sorted(header) and cells["code (first line)"] == it.code.splitlines()[0]
        assert (cells["prompt chars"], cells["prompt tokens sent"], cells["completion tokens"]) == (
            f"{it.leakage.prompt_chars:,}", f"{it.input_tokens:,}", f"{it.output_tokens:,}")
        assert cells.items() <= cells_by_header(shown, str(it.index)).items()  # the blocks rlm show prints
    assert "(continued)" in out and "(continued)" not in wide


def _unwrapped(out: str) -> str:
    return " ".join(out.split())


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_rlm_run_with_an_empty_answer_says_why_as_rlm_show_does(tmp_path, monkeypatch, failing_lm):
    out, traj, run_dir = _run(tmp_path, failing_lm, monkeypatch, "--max-iters", "2")
    assert traj.answer is not None and not traj.answer.strip() and not traj.submitted
    last = traj.iterations[-1]
    error = next(ln for ln in last.output.splitlines() if ln.startswith("[Error] "))  # as the run recorded it
    why = [ln for ln in out.splitlines() if ln.startswith("no answer: ")]
    assert len(why) == 1, out  # one line (the message), under the summary
    said = _unwrapped(out[out.index(why[0]):].split("\ndecoding: ")[0])
    assert "no SUBMIT" in said and f"({last.index})" in said and _unwrapped(error) in said
    assert out.index("result") < out.index(why[0]) < out.index("decoding: ")
    shown = _unwrapped(_rlm("show", str(run_dir), "--no-prompts", monkeypatch=monkeypatch))
    assert said in shown  # the same line rlm show prints, from the same code


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_run_with_an_answer_prints_no_reason(tmp_path, monkeypatch):
    out, traj, run_dir = _run(tmp_path, "scripted:probe", monkeypatch)
    assert traj.answer and traj.submitted
    assert not re.search(r"^no answer: ", out, re.M)
    assert not re.search(r"^no answer: ", _rlm("show", str(run_dir), monkeypatch=monkeypatch), re.M)


def _runs_here(command: str) -> bool:
    """Whether a hint's command starts with a program this shell finds: a name on PATH or an executable file."""
    program = shlex.split(command)[0]
    found = shutil.which(program) if "/" not in program else (program if os.access(program, os.X_OK) else None)
    return found is not None


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_rlm_run_hints_a_command_that_runs_without_an_activated_venv(tmp_path, monkeypatch):
    """After ``make demo`` there is no ``rlmlab`` on PATH until ``source .venv/bin/activate``: the hint names this
    environment's ``rlmlab`` so that it runs as printed (it printed a bare ``rlmlab``)."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no rlmlab, as before the venv is activated
    out, traj, run_dir = _run(tmp_path, "scripted:probe", monkeypatch)
    hint = next(ln for ln in out.splitlines() if ln.startswith("each step with its prompts: "))
    command = hint.removeprefix("each step with its prompts: ")
    assert command.endswith(f" rlm show {run_dir}") and _runs_here(command), hint
    assert CliRunner().invoke(main, shlex.split(command)[-3:]).exit_code == 0  # ... rlm show RUN_DIR


def test_rlmlab_command_is_the_name_on_path_or_the_venvs_script(tmp_path, monkeypatch):
    """``rlmlab`` when an activated venv puts this one on PATH; ``.venv/bin/rlmlab`` from the checkout, as the
    README writes it; an absolute path from elsewhere; ``python -m rlmlab.cli`` without a script."""
    from rlmlab._paths import rlmlab_command

    bin_dir = tmp_path / "checkout" / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "rlmlab"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.chdir(tmp_path / "checkout")
    assert rlmlab_command() == ".venv/bin/rlmlab"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert rlmlab_command() == str(script)
    monkeypatch.setenv("PATH", str(bin_dir))  # source .venv/bin/activate
    assert rlmlab_command() == "rlmlab"
    script.unlink()
    assert rlmlab_command() == f"{bin_dir / 'python'} -m rlmlab.cli"
