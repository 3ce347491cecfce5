"""Ctrl-C keeps what was done: a SIGINT (to the process or its group, or Kernel -> Interrupt) ends a run with one
line, writes the trajectory so far marked interrupted, keeps the finished results and releases the lock; a run
that fails before it starts leaves no directory.

The runs are real ``rlmlab`` processes and a real Jupyter kernel. Their LM is scripted, with a pause in every call
standing in for a generation, and each call appends a line to a marks file, so the tests see from outside how far
a run got and check it by what is on disk (no LM call started after the signal), never by the clock.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import rlmlab
from rlmlab._lock import LOCK_FILE, lock_run_dir
from rlmlab.executors import TRAJECTORY_FILE, Trajectory
from rlmlab.experiments import read_results

ROOT = Path(rlmlab.__file__).resolve().parents[1]  # the checkout under test: the subprocesses run it too
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
PAUSE_S = 0.4  # how long each scripted call "generates": the signal lands inside one

# Registers two named scripts, then runs the CLI (as `rlmlab ...` would). Each call appends "call" to $MARKS
# before its pause; "slow_loop" never SUBMITs (a run that goes on until it is stopped), "slow_solver" is the
# solver agent (each arith task: one step computing the answer, SUBMIT). $PAUSE_FROM: the first call of this
# process that pauses (the one the test signals inside, when it knows which; the calls before it need no pause);
# $PAUSE_S: the pause (0 for a run no signal is sent to).
DRIVER = f"""
import itertools, os, sys, time
from rlmlab.lm._scripts import SCRIPTS, script_named

PAUSE, PAUSE_FROM = float(os.environ.get("PAUSE_S", {PAUSE_S})), int(os.environ.get("PAUSE_FROM", "1"))
numbers = itertools.count(1)

def marked(reply):
    def script(messages):
        with open(os.environ["MARKS"], "a") as fh:
            fh.write("call\\n")
        if next(numbers) >= PAUSE_FROM:
            time.sleep(PAUSE)
        return reply(messages)
    return script

SCRIPTS.register("slow_loop", marked(lambda m: {{"reasoning": "look again", "code": "print(len(str(context)))"}}))
SCRIPTS.register("slow_solver", marked(script_named("solver")))
from rlmlab.cli import main
main(prog_name="rlmlab")
"""


def _ignore_sigint() -> None:  # what a shell without job control does to `cmd &`
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start(args: list[str], tmp_path: Path, marks: Path, sigint_ignored: bool = False, *, pause_from: int = 1,
           pause_s: float = PAUSE_S) -> subprocess.Popen:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = {**ENV, "MARKS": str(marks), "PAUSE_FROM": str(pause_from), "PAUSE_S": str(pause_s)}
    return subprocess.Popen([sys.executable, str(driver), *args], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=_ignore_sigint if sigint_ignored else None)


def _wait_for(condition, proc: subprocess.Popen, what: str, limit_s: float = 240) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the run ended (code {proc.returncode}) before {what}:\n{out[-2000:]}\n{err[-2000:]}")
        assert time.monotonic() < deadline, f"waited {limit_s} s for {what}"
        time.sleep(0.05)


def _calls(marks: Path) -> int:
    return len(marks.read_text().splitlines()) if marks.exists() else 0


@pytest.mark.parametrize("target", ["process", "group", "group, started with SIGINT ignored"])
@pytest.mark.slow
def test_sigint_mid_rlm_run_saves_the_trajectory_so_far_marked_interrupted(tmp_path, rust_file, target):
    marks, runs = tmp_path / "marks", tmp_path / "runs"
    proc = _start(["rlm", "run", "How many pub async fn are there?", str(rust_file), "--lm", "scripted:slow_loop",
                   "--decoding", "free", "--max-iters", "12", "--runs-dir", str(runs)], tmp_path, marks,
                  sigint_ignored="ignored" in target, pause_from=3)
    _wait_for(lambda: _calls(marks) >= 3, proc, "the third LM call")  # in its pause: the step is not done
    if target == "process":
        proc.send_signal(signal.SIGINT)
    else:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal signals the whole foreground group
    out, err = proc.communicate(timeout=120)
    started = _calls(marks)
    assert proc.returncode == 130, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "Aborted" not in err, err
    [run_dir] = [p for p in runs.iterdir() if p.is_dir()]
    path = run_dir / TRAJECTORY_FILE
    assert lines[0] == f"Error: interrupted after {started - 1} of up to 12 iterations; trajectory saved in {path}"
    traj = Trajectory.read_jsonl(path)
    # The call in flight when the signal came was the last one: no step started after it, and the trajectory
    # holds the steps finished before it (each step is one LM call).
    assert started >= 3 and traj.interrupted and len(traj.iterations) == started - 1 and traj.error is None
    assert [it.code for it in traj.iterations] == ["print(len(str(context)))"] * (started - 1)
    assert Trajectory.read_jsonl(path).to_records() == traj.to_records()  # the mark round-trips through JSON


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.slow
def test_sigint_mid_experiment_keeps_the_finished_rows_and_the_run_resumes(tmp_path, workers):
    marks, runs = tmp_path / "marks", tmp_path / "runs"
    args = ["experiment", "run", "E1", "--lm", "scripted:slow_solver", "--decoding", "free", "--suite", "arith",
            "--tasks", "6", "--workers", str(workers), "--runs-dir", str(runs)]
    proc = _start(args, tmp_path, marks)
    results = lambda: next(runs.glob("*/results.jsonl"), None)  # noqa: E731
    _wait_for(lambda: results() is not None and len(read_results(results())) >= 2, proc, "two finished tasks")
    before = _calls(marks)
    _wait_for(lambda: _calls(marks) > before, proc, "a call of a later task")  # in its pause: a task in flight
    at_signal = _calls(marks)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    from rlmlab.experiments import INTERRUPTED_FILE, RunInterruption, read_interruption

    run_dir = results().parent
    rows = read_results(run_dir / "results.jsonl")
    assert 2 <= len(rows) < 6 and len({r["task_id"] for r in rows}) == len(rows)
    assert err.strip().splitlines() == [
        f"Error: interrupted after {len(rows)} of 6 tasks; run saved in {run_dir}; continue it with the same "
        f"command and --resume {run_dir.name} (Python: resume={run_dir.name!r})"], err
    record = read_interruption(run_dir)
    assert (record.experiment, record.run_id, record.finished, record.tasks) == ("E1", run_dir.name, len(rows), 6)
    assert RunInterruption.from_json(record.to_json()) == record
    if workers == 1:  # the task in flight wrote its trajectory, marked
        traj = Trajectory.read_jsonl(Path(record.trajectory) / TRAJECTORY_FILE)
        assert traj.interrupted and traj.answer is None
    # No LM call started after the signal (but one that another worker may have begun as the signal was sent).
    assert _calls(marks) <= at_signal + workers - 1
    with lock_run_dir(run_dir):  # released
        pass
    shown = subprocess.run([sys.executable, "-m", "rlmlab.cli", "experiment", "show", str(run_dir)], text=True,
                           capture_output=True, env={**ENV, "COLUMNS": "200"})
    assert shown.returncode == 0 and f"interrupted after {len(rows)} of 6 tasks" in shown.stdout, shown
    # The same command with --resume runs only what is left, and the run is no longer marked interrupted.
    proc = _start([*args, "--resume", run_dir.name], tmp_path, marks, pause_s=0)  # no signal: no pause needed
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, (out, err)
    final = read_results(run_dir / "results.jsonl")
    assert sorted(r["task_id"] for r in final) == sorted({r["task_id"] for r in final}) and len(final) == 6
    assert final[:len(rows)] == rows and not (run_dir / INTERRUPTED_FILE).exists()


@pytest.mark.parametrize("bad", [["--suite", "arithh"], ["--lm", "local:/nonexistent/model.gguf"],
                                 ["--lm", "nosuchprovider"]])
@pytest.mark.slow
def test_a_run_that_fails_to_start_leaves_no_run_directory(tmp_path, bad):
    runs = tmp_path / "runs"
    args = ["experiment", "run", "E1", "--lm", "scripted:probe", "--suite", "arith", "--tasks", "1", *bad]
    res = subprocess.run([sys.executable, "-m", "rlmlab.cli", *args, "--runs-dir", str(runs)], text=True,
                         capture_output=True, cwd=tmp_path, env=ENV)
    assert res.returncode in (1, 2) and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert not runs.exists()  # nor the runs folder it would have made


def test_an_existing_directory_is_never_removed_by_a_failed_start(tmp_path):
    from rlmlab.errors import ConfigError
    from rlmlab.experiments import run_experiment

    (tmp_path / "mine").mkdir()
    with pytest.raises(ConfigError):
        run_experiment("E1", lm="scripted:probe", suite="arithh", tasks=1, run_dir=tmp_path / "mine", progress=False)
    assert (tmp_path / "mine").is_dir()  # the caller made it: it stays, with the (released) lock file
    with pytest.raises(ConfigError):
        run_experiment("E1", lm="scripted:probe", suite="arithh", tasks=1, run_dir=tmp_path / "new", progress=False)
    assert not (tmp_path / "new").exists()


# --- a real Jupyter kernel: Kernel -> Interrupt is SIGINT to the kernel process -------------------------------

def _kernel(kernel_name: str):
    from jupyter_client.manager import start_new_kernel

    return start_new_kernel(kernel_name=kernel_name, startup_timeout=120, cwd=str(ROOT))


def _run_cell(kc, code: str, timeout: float = 240) -> tuple[dict, list[dict]]:
    """Execute ``code``; (the execute_reply content, its iopub outputs)."""
    return _interrupt_when(None, kc, code, None, timeout)


def _interrupt_when(km, kc, code: str, ready, timeout: float = 240) -> tuple[dict, list[dict]]:
    """Start ``code``, interrupt the kernel once ``ready()`` holds (if given), return the cell's reply and outputs."""
    msg_id = kc.execute(code)
    deadline = time.monotonic() + timeout
    while ready is not None and not ready():
        assert time.monotonic() < deadline, "the cell never got to the point of the interrupt"
        time.sleep(0.05)
    if km is not None:
        km.interrupt_kernel()
    outputs = []
    while True:
        msg = kc.get_iopub_msg(timeout=max(1, deadline - time.monotonic()))
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] in ("stream", "error", "execute_result", "display_data"):
            outputs.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    while True:  # the reply to this request (start_new_kernel leaves its kernel_info reply in the queue)
        reply = kc.get_shell_msg(timeout=30)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"], outputs


SLOW_SCRIPT = f"""
import os, time
from rlmlab.lm import make_lm
from rlmlab.lm._scripts import script_named
solver = script_named("solver")
PAUSE = {PAUSE_S}  # a cell that sends no interrupt sets it to 0
def slow(messages):
    with open({{marks!r}}, "a") as fh:
        fh.write("call\\n")
    time.sleep(PAUSE)
    return solver(messages)
"""


@pytest.mark.notebook
def test_kernel_interrupt_during_an_experiment_shows_one_line_and_leaves_the_run_saved_and_unlocked(
        tmp_path, rlmlab_kernel):
    marks, run_dir = tmp_path / "marks", tmp_path / "run"
    km, kc = _kernel(rlmlab_kernel)
    try:
        reply, _ = _run_cell(kc, SLOW_SCRIPT.format(marks=str(marks)))
        assert reply["status"] == "ok", reply
        reply, outputs = _interrupt_when(km, kc, (
            f"from rlmlab.experiments import run_experiment\n"
            f"run_experiment('E1', lm=make_lm('scripted', script=slow), suite='arith', tasks=6, "
            f"run_dir={str(run_dir)!r}, progress='lines')"),
            lambda: (run_dir / "results.jsonl").exists() and len(read_results(run_dir / "results.jsonl")) >= 2)
        rows = read_results(run_dir / "results.jsonl")
        errors = [m["content"] for m in outputs if m["msg_type"] == "error"]
        assert reply["status"] == "error" and len(errors) == 1, outputs
        assert errors[0]["ename"] == "RunInterrupted"
        assert errors[0]["traceback"] == [
            f"KeyboardInterrupt: interrupted after {len(rows)} of 6 tasks; run saved in {run_dir}; continue it "
            f"with the same command and --resume {run_dir.name} (Python: resume={run_dir.name!r})"]
        # The kernel lives on and the run is unlocked: the same cell with run_dir continues it to the end.
        reply, _ = _run_cell(kc, f"from rlmlab._lock import lock_run_dir\nwith lock_run_dir({str(run_dir)!r}): pass")
        assert reply["status"] == "ok", reply
        reply, _ = _run_cell(kc, "PAUSE = 0")  # no interrupt to land in a call from here on
        assert reply["status"] == "ok", reply
        reply, _ = _run_cell(kc, f"run_experiment('E1', lm=make_lm('scripted', script=slow), suite='arith', "
                                 f"tasks=6, run_dir={str(run_dir)!r}, progress=False)")
        assert reply["status"] == "ok", reply
        from rlmlab.experiments import read_interruption

        assert len(read_results(run_dir / "results.jsonl")) == 6 and read_interruption(run_dir) is None
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# Marks each batch decode of the embedded model as it starts and ends, so the test can interrupt one in flight.
DECODE_MARKS = """
from rlmlab.lm._batch import BatchDecoder
_decode = BatchDecoder.decode
def decode(self, *args, **kwargs):
    with open(MARKS, "a") as fh:
        fh.write("start\\n")
    out = _decode(self, *args, **kwargs)
    with open(MARKS, "a") as fh:
        fh.write("end\\n")
    return out
BatchDecoder.decode = decode
"""


@pytest.mark.local_model
def test_sigint_to_the_group_during_a_local_generation_is_honoured(tmp_path, rust_file):
    marks, runs = tmp_path / "marks", tmp_path / "runs"
    driver = tmp_path / "driver.py"
    driver.write_text(f"import os\nMARKS = os.environ['MARKS']\n{DECODE_MARKS}\n"
                      "from rlmlab.cli import main\nmain(prog_name='rlmlab')\n")
    proc = subprocess.Popen(
        [sys.executable, str(driver), "rlm", "run", "How many pub async fn are there?", str(rust_file), "--lm",
         "local", "--threads", "2", "--max-iters", "6", "--runs-dir", str(runs)], cwd=tmp_path, text=True,
        env={**ENV, "MARKS": str(marks)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True)
    _wait_for(lambda: marks.exists() and marks.read_text().splitlines()[-1:] == ["start"], proc,
              "a generation of the embedded model")
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    seen = marks.read_text().splitlines()
    assert proc.returncode == 130, (out, err)
    # The decode in flight never finished and none started after it: the signal stopped the generation itself.
    assert seen[-1] == "start" and seen.count("start") == seen.count("end") + 1, seen
    [run_dir] = list(runs.iterdir())
    traj = Trajectory.read_jsonl(run_dir / TRAJECTORY_FILE)
    assert traj.interrupted and len(traj.iterations) == seen.count("end")
    assert err.strip().splitlines() == [f"Error: interrupted after {len(traj.iterations)} of up to 6 iterations; "
                                        f"trajectory saved in {run_dir / TRAJECTORY_FILE}"], err


@pytest.mark.local_model
@pytest.mark.notebook
def test_kernel_interrupt_during_a_local_generation_in_an_rlm_cell_is_one_line(tmp_path, rlmlab_kernel, rust_file):
    marks, runs = tmp_path / "marks", tmp_path / "runs"
    km, kc = _kernel(rlmlab_kernel)
    try:
        reply, _ = _run_cell(kc, f"MARKS = {str(marks)!r}\n{DECODE_MARKS}")
        assert reply["status"] == "ok", reply
        reply, outputs = _interrupt_when(
            km, kc, f"%%rlm --lm local --context {rust_file} --max-iters 4 --no-live --runs-dir {runs}\n"
                    "How many pub async fn are there?",
            lambda: marks.exists() and marks.read_text().splitlines()[-1:] == ["start"])
        errors = [m["content"] for m in outputs if m["msg_type"] == "error"]
        assert reply["status"] == "error" and len(errors) == 1, outputs
        [line] = errors[0]["traceback"]
        assert line.startswith("KeyboardInterrupt: interrupted after 0 of up to 4 iterations; trajectory saved in ")
        assert "llama" not in line
        [run_dir] = [p for p in runs.iterdir() if p.is_dir()]
        assert Trajectory.read_jsonl(run_dir / TRAJECTORY_FILE).interrupted
        reply, outputs = _run_cell(kc, "print(rlm_last.interrupted, rlm_last.run_id)")
        assert "".join(m["content"].get("text", "") for m in outputs).split() == ["True", run_dir.name]
        assert not (run_dir / LOCK_FILE).exists()
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# A KeyboardInterrupt raised while a finalizer runs is printed ("Exception ignored in ...") and dropped by Python:
# the kernel test above met it as a finished REPL worker's Popen.__del__ between two tasks. Here a finalizer takes
# the signal inside the second LM call; the run must still stop before its third step.
SWALLOWED = """
import os, signal, sys, time
from rlmlab.executors import run_rlm
from rlmlab.lm import make_lm

class Finalizer:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # the handler runs in here, and its KeyboardInterrupt goes nowhere

calls = []
def script(messages):
    calls.append(1)
    if len(calls) == 2:
        Finalizer()  # collected at once
        print("swallowed", flush=True)
    return {"reasoning": "look", "code": "print(1)"}

try:
    traj = run_rlm("q", "some text", lm=make_lm("scripted", script=script), max_iters=8, decoding="free",
                   runs_dir=sys.argv[1])
    print("finished", len(traj.iterations), flush=True)
except KeyboardInterrupt as exc:  # RunInterrupted, with the trajectory it wrote
    print("interrupted", len(exc.trajectory.iterations), exc.trajectory.interrupted, len(calls), flush=True)
"""


@pytest.mark.slow
def test_a_ctrl_c_swallowed_by_a_finalizer_still_stops_the_run_at_its_next_step(tmp_path):
    res = subprocess.run([sys.executable, "-c", SWALLOWED, str(tmp_path)], text=True, capture_output=True,
                         env=ENV, timeout=240)
    assert "Exception ignored" in res.stderr, res.stderr  # Python did drop the KeyboardInterrupt
    assert res.stdout.split() == ["swallowed", "interrupted", "2", "True", "2"], (res.stdout, res.stderr)


@pytest.mark.notebook
def test_ctrl_c_during_a_notebook_run_interrupts_its_kernel_and_the_run_is_saved(tmp_path, rlmlab_kernel):
    """`rlmlab demo` and `rlmlab experiment notebook` run a notebook on a kernel in a session of its own, so a
    terminal's Ctrl-C reaches only the CLI: it is passed on as Kernel -> Interrupt and the cell's run saves the
    task in flight before the kernel is shut down (papermill alone killed it mid-task: "Aborted!", no record)."""
    import nbformat

    marks, run_dir = tmp_path / "marks", tmp_path / "run"
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "rlmlab", "display_name": "rlmlab",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell('marks = ""\nrun_dir = ""', metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(SLOW_SCRIPT.replace("{marks!r}", "marks") + (
                    "from rlmlab.experiments import run_experiment\n"
                    "run_experiment('E1', lm=make_lm('scripted', script=slow), suite='arith', tasks=6, "
                    "run_dir=run_dir, progress='lines')"))]
    nbformat.write(nb, tmp_path / "slow.ipynb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlmlab.cli", "experiment", "notebook", str(tmp_path / "slow.ipynb"),
         "-p", "marks", str(marks), "-p", "run_dir", str(run_dir)],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True)
    results = run_dir / "results.jsonl"
    _wait_for(lambda: results.exists() and len(read_results(results)) >= 2, proc, "two finished tasks")
    before = _calls(marks)
    _wait_for(lambda: _calls(marks) > before, proc, "a call of a later task")
    os.killpg(proc.pid, signal.SIGINT)  # the terminal's Ctrl-C: the CLI's group, not the kernel's session
    out, err = proc.communicate(timeout=120)
    rows = read_results(results)
    assert proc.returncode == 130 and "Aborted" not in err, (out, err)
    # stderr also holds papermill's progress bar and ipykernel's start-up warning; the error is one line
    assert "Traceback" not in err and [line for line in err.splitlines() if "Error" in line] == [
        f"Error: interrupted after {len(rows)} of 6 tasks; run saved in {run_dir}; the executed notebook is "
        f"{run_dir / 'slow.ipynb'}"], err
    from rlmlab.experiments import read_interruption

    record = read_interruption(run_dir)
    assert record is not None and record.finished == len(rows) < 6
    traj = Trajectory.read_jsonl(Path(record.trajectory) / TRAJECTORY_FILE)  # the task in flight, kept
    assert traj.interrupted and traj.answer is None
    with lock_run_dir(run_dir):  # released
        pass
