"""A run in which every LM call fails is reported as failed, not as a normal-looking summary."""

from __future__ import annotations

import subprocess
import sys

from rlmlab.experiments import run_experiment


def test_every_lm_call_failing_marks_the_condition_failed(tmp_path):
    run = run_experiment("E1", lm="scripted:fail", suite="arith", tasks=2, runs_dir=tmp_path, progress=False)
    s = run.summary["main"]
    assert s["all_failed"] and s["errors"] == 2 and "scripted:fail" in s["first_error"]
    assert run.failed_conditions == ["main"]
    ok = run_experiment("E1", lm="scripted:probe", suite="arith", tasks=1, runs_dir=tmp_path, progress=False)
    assert ok.failed_conditions == [] and ok.summary["main"]["errors"] == 0


def test_the_cli_exits_non_zero_with_one_line_when_every_run_failed(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "rlmlab.cli", "experiment", "run", "E1", "--lm", "scripted:fail",
                           "--suite", "arith", "--tasks", "1", "--runs-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "every run of main failed" in proc.stderr and "scripted:fail" in proc.stderr
