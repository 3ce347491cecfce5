"""Every benchmark script runs: ``python benchmarks/NAME.py --smoke`` must finish and write its JSON.

A benchmark is any ``benchmarks/*.py`` whose name does not start with ``_`` (a helper module), so a script added
later is covered without touching this file. The data makers beside what they make (``data/make_*.py``) and each
study's generator (``studies/<name>/generate.py``) are held to the same contract. The contract for a script's ``--smoke`` mode: tiny sizes, the
scripted LM or no LM, seconds, exit status 0, and at least one JSON (or JSON Lines) file written during the run
under the working directory (scripts here write to ``runs/bench_smoke/`` relative to it), never under the
checkout's ``runs/bench*/``, where the full runs write: a smoke run in ``make check`` must not overwrite a
benchmark's figures. Each script runs in its own temporary working directory, so runs in parallel do not share
files. Timing figures are never asserted: only that the run completes and its output parses.

A script whose smoke run cannot do without something the unit tier leaves out says so in a comment line of its
own, ``# smoke-marks: local_model`` (pytest marks, comma-separated): its smoke test then carries those marks, so
``make check`` skips it and ``make test`` runs it. Every other benchmark's smoke run is in ``make check``; the data
makers' and the studies' generators' smoke runs are ``slow`` (``make test``: they are not benchmarks of the product).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from smoke_runner import SmokeRunner

PROJECT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted(p for p in (PROJECT / "benchmarks").glob("*.py") if not p.name.startswith("_"))
MAKERS = sorted(PROJECT.glob("data/make_*.py")) + sorted(PROJECT.glob("studies/*/generate.py"))
SMOKE_TIMEOUT_S = 300  # a script's smoke run takes seconds; this only stops a hung one
MARKS_LINE = re.compile(r"^#\s*smoke-marks:\s*([\w, ]+?)\s*$", re.MULTILINE)


def smoke_param(script: Path) -> object:
    """The script as a pytest param with the marks its ``# smoke-marks:`` line asks for."""
    found = MARKS_LINE.search(script.read_text(encoding="utf-8"))
    names = [n.strip() for n in found.group(1).split(",") if n.strip()] if found else []
    if script.parent.name != "benchmarks":  # a data maker or a study's generator: make test's, not make check's
        names = list(dict.fromkeys([*names, "slow"]))
    name = script.stem if script.parent.name == "benchmarks" else script.relative_to(PROJECT).with_suffix("").as_posix()
    return pytest.param(script, id=name, marks=[getattr(pytest.mark, n) for n in names])


def written_json(roots: list[Path], since: float) -> list[Path]:
    """JSON and JSON Lines files under ``roots`` modified at or after ``since`` (seconds since the epoch)."""
    return sorted(p for root in roots if root.is_dir() for pattern in ("*.json", "*.jsonl")
                  for p in root.rglob(pattern) if p.is_file() and p.stat().st_mtime >= since - 1)


def bench_dirs(runs: Path) -> list[Path]:
    """The benchmark output folders under a checkout's ``runs/`` (not its many experiment runs)."""
    return sorted(runs.glob("bench*")) if runs.is_dir() else []


def test_there_are_benchmarks():
    assert len(BENCHMARKS) >= 10, [p.name for p in BENCHMARKS]
    assert {p.relative_to(PROJECT).as_posix() for p in MAKERS} >= {
        "data/make_math80.py", "studies/turing_eval/generate.py", "studies/turing_narrated/generate.py"}


@pytest.fixture(scope="module")
def runner():
    """One forking zygote for this worker's smoke runs (tests/smoke_runner.py)."""
    run = SmokeRunner()
    yield run
    run.close()


@pytest.mark.parametrize("script", [smoke_param(p) for p in BENCHMARKS + MAKERS])
def test_benchmark_smoke_run_writes_json(script: Path, tmp_path: Path, runner: SmokeRunner):
    check_smoke(script, tmp_path, runner=runner)


@pytest.mark.parametrize("body, error", [
    ("print('no smoke mode here')", "has no --smoke mode"),
    ("import sys  # --smoke\nsys.exit(3)", "exited 3"),
    ("print('--smoke ran, wrote nothing')", "wrote no JSON"),
    ("open('out.json', 'w').write('{}')  # --smoke", "holds no figures"),
])
def test_the_smoke_check_fails_a_broken_script(tmp_path: Path, body: str, error: str, runner: SmokeRunner):
    script = tmp_path / "fake_bench.py"
    script.write_text(body + "\n", encoding="utf-8")
    (tmp_path / "cwd").mkdir()
    with pytest.raises(AssertionError, match=error):
        check_smoke(script, tmp_path / "cwd", runs=tmp_path / "no-runs", runner=runner)
    script.write_text("import json  # --smoke\njson.dump({'ok': 1}, open('out.json', 'w'))\n", encoding="utf-8")
    check_smoke(script, tmp_path / "cwd", runs=tmp_path / "no-runs", runner=runner)


def check_smoke(script: Path, tmp_path: Path, runs: Path = PROJECT / "runs", runner: SmokeRunner | None = None) -> None:
    """Run ``script --smoke`` in ``tmp_path``; AssertionError unless it exits 0, writes JSON with content there, and
    leaves the files under ``runs``' benchmark folders as they were."""
    assert "--smoke" in script.read_text(encoding="utf-8"), (
        f"{script.name} has no --smoke mode: add one (tiny sizes, scripted or no LM, seconds, writes its JSON); "
        "see tests/test_benchmarks_smoke.py")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT), os.environ.get("PYTHONPATH")])),
           "RLMLAB_CACHE_DIR": str(tmp_path / "cache"), "MPLBACKEND": "Agg", "COLUMNS": "160"}
    before = {p: p.stat().st_mtime_ns for root in bench_dirs(runs) for p in root.rglob("*") if p.is_file()}
    start = time.time()
    returncode, output = (runner or SmokeRunner()).run(script, ["--smoke"], tmp_path, env, SMOKE_TIMEOUT_S)
    tail = "\n".join(output.strip().splitlines()[-15:])
    assert returncode == 0, f"{script.name} --smoke exited {returncode}:\n{tail}"
    changed = [p for p, mtime in before.items() if not p.exists() or p.stat().st_mtime_ns != mtime]
    assert not changed, f"{script.name} --smoke rewrote a full run's files: {changed[:3]}; write under runs/bench_smoke/"
    found = written_json([tmp_path], start)
    assert found, f"{script.name} --smoke wrote no JSON under its working directory:\n{tail}"
    for path in found:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
            assert rows, f"{path} is empty"
        else:
            assert json.loads(text) not in (None, {}, []), f"{path} holds no figures"
