"""One writer per run directory: a second runner or resume is refused instead of appending duplicate rows."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from click.testing import CliRunner

from rlmlab._lock import LOCK_FILE, lock_run_dir
from rlmlab.errors import ConfigError, RunLockedError
from rlmlab.experiments import read_results, run_experiment
from rlmlab.lm import make_lm
from rlmlab.lm._scripts import script_named
from rlmlab.memory import MemoryTask


def _arith_tasks(n: int) -> list[MemoryTask]:
    return [MemoryTask(f"q{i}", f"What is {i} + 1?", f"{i} + 1", None, str(i + 1), "exact", {"suite": "arith", "level": 1})
            for i in range(n)]


@pytest.mark.slow
def test_a_second_runner_on_a_run_in_progress_is_refused_and_no_row_is_duplicated(tmp_path):
    # The first runner blocks inside its first task; a resume of the same run starts meanwhile. Before the lock,
    # the resume ran every task and the first runner then appended its own rows: 2 tasks gave 4 rows.
    probe, entered, release = script_named("probe"), threading.Event(), threading.Event()

    def held(messages):
        entered.set()
        release.wait(30)
        return probe(messages)

    target, tasks, first = tmp_path / "run", _arith_tasks(2), {}
    runner = threading.Thread(target=lambda: first.update(run=run_experiment(
        "E1", lm=make_lm("scripted", script=held), task_list=tasks, run_dir=target, progress=False)))
    runner.start()
    try:
        assert entered.wait(30), "the first runner never reached its LM"
        with pytest.raises(RunLockedError) as refused:
            run_experiment("E1", lm=make_lm("scripted", script=probe), task_list=tasks, run_dir=target,
                           progress=False)
    finally:
        release.set()
        runner.join(60)
    assert refused.value.directory == target and refused.value.pid == os.getpid()
    assert str(target) in str(refused.value) and f"pid {os.getpid()}" in str(refused.value)
    rows = read_results(target / "results.jsonl")
    assert [r["task_id"] for r in rows] == ["q0", "q1"] and first["run"].summary["main"]["rows"] == 2
    with lock_run_dir(target):  # released on normal exit
        pass


@pytest.mark.slow
def test_the_cli_refuses_a_locked_run_in_one_line_with_exit_code_2(tmp_path):
    from rlmlab.cli import main

    args = ["experiment", "run", "E1", "--lm", "scripted:probe", "--suite", "arith", "--tasks", "1",
            "--runs-dir", str(tmp_path)]
    first = run_experiment("E1", lm="scripted:probe", suite="arith", tasks=1, runs_dir=tmp_path, progress=False)
    before = (first.run_dir / "results.jsonl").read_text()
    with lock_run_dir(first.run_dir):
        out = CliRunner().invoke(main, [*args, "--resume", first.run_id])
    assert out.exit_code == 2, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and str(first.run_dir) in lines[0] and f"pid {os.getpid()}" in lines[0]
    assert "Traceback" not in out.output and (first.run_dir / "results.jsonl").read_text() == before


@pytest.mark.slow
def test_the_lock_is_released_on_an_error_and_does_not_outlive_a_killed_holder(tmp_path):
    first = run_experiment("E1", lm="scripted:probe", task_list=_arith_tasks(1), runs_dir=tmp_path, progress=False)
    with pytest.raises(ConfigError, match="parameters differ"):  # raised while the lock is held
        run_experiment("E1", lm="scripted:probe", task_list=_arith_tasks(1), runs_dir=tmp_path, progress=False,
                       resume=first.run_id, workers=3)
    with lock_run_dir(first.run_dir):
        pass
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom rlmlab._lock import lock_run_dir\n"
         "with lock_run_dir(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(60)\n", str(first.run_dir)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLockedError, match=f"pid {holder.pid}"):
            run_experiment("E1", lm="scripted:probe", task_list=_arith_tasks(1), runs_dir=tmp_path,
                           progress=False, resume=first.run_id)
    finally:
        holder.kill()  # SIGKILL: no cleanup runs in the holder
        holder.wait(10)
    assert (first.run_dir / LOCK_FILE).exists()  # the file stays; the OS lock went with its holder
    again = run_experiment("E1", lm="scripted:probe", task_list=_arith_tasks(1), runs_dir=tmp_path, progress=False,
                           resume=first.run_id)
    assert again.rows == 1


def test_teach_run_refuses_an_output_directory_in_use(tmp_path):
    from rlmlab.cli import main

    out_dir = tmp_path / "teach"
    with lock_run_dir(out_dir):
        out = CliRunner().invoke(main, ["teach", "run", "--provider", "demo", "--limit", "1",
                                        "--out", str(out_dir / "traces.json")])
    assert out.exit_code == 2, out.output
    assert str(out_dir) in out.output and f"pid {os.getpid()}" in out.output and "Traceback" not in out.output
    assert not (out_dir / "traces.json").exists()
    done = CliRunner().invoke(main, ["teach", "run", "--provider", "demo", "--limit", "1",
                                     "--out", str(out_dir / "traces.json")])
    assert done.exit_code == 0, done.output
    assert (out_dir / "traces.json").exists()
