"""A run in which every LM call fails is reported as failed, not as a normal-looking summary."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rlmlab.experiments import run_experiment


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_every_lm_call_failing_marks_the_condition_failed(tmp_path):
    run = run_experiment("E1", lm="scripted:fail", suite="arith", tasks=2, runs_dir=tmp_path, progress=False)
    s = run.summary["main"]
    assert s["all_failed"] and s["errors"] == 2 and "scripted:fail" in s["first_error"]
    assert run.failed_conditions == ["main"]
    from rlmlab.experiments import results_table

    assert "main (every run failed)" in repr(results_table(run.run_dir))
    ok = run_experiment("E1", lm="scripted:probe", suite="arith", tasks=1, runs_dir=tmp_path, progress=False)
    assert ok.failed_conditions == [] and ok.summary["main"]["errors"] == 0


@pytest.mark.slow
def test_the_cli_exits_non_zero_with_one_line_when_every_run_failed(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "experiment", "run", "E1", "--lm", "scripted:fail",
                           "--suite", "arith", "--tasks", "1", "--runs-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "every run of main failed" in proc.stderr and "scripted:fail" in proc.stderr


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_huge_step_output_is_stored_clipped_with_its_full_size(tmp_path):
    from rlmlab.executors import Trajectory, run_rlm, run_scratchpad
    from rlmlab.lm import make_lm

    lm = make_lm("scripted", script=[{"reasoning": "r", "code": "print('x' * 10**6)"},
                                     {"reasoning": "r", "code": "SUBMIT(answer='done')"}])
    traj = run_rlm("q", "ctx", lm=lm, max_iters=2, max_output_chars=1000, runs_dir=tmp_path)
    first = traj.iterations[0]
    assert first.output_chars >= 10**6 and len(first.output) < 1200 and "characters omitted" in first.output
    path = tmp_path / traj.run_id / "trajectory.jsonl"
    assert path.stat().st_size < 50_000  # not a megabyte of x
    assert Trajectory.read_jsonl(path).iterations[0].output_chars == first.output_chars
    assert first.leakage.stdout_chars >= 10**6  # the meter still counts what was printed
    lm = make_lm("scripted", script=["```python\nprint('y' * 10**6)\n```", "```python\nSUBMIT(answer='d')\n```"])
    pad = run_scratchpad("q", "ctx", lm=lm, max_iters=2, max_output_chars=1000)
    assert pad.iterations[0].output_chars >= 10**6 and len(pad.iterations[0].output) < 1200
