"""Run tests/redteam_bridge_corpus.py's attempts under `confined` (and `pyodide` where they apply).

    /work/main/.venv/bin/python tests/redteam_bridge_run.py [NAME ...] [--backend confined|pyodide] [-v]

One line per attempt and backend: name, class, backend, result (held / PARTIAL / ESCAPED / n/a), the host's peak RSS
growth during the step (MiB), evidence and the attempt's wall time; then a table of counts per class and backend.
Judging is done on the host only: the attempt's own check (tests/redteam_bridge_corpus.py) plus generic_verdicts()
(canaries in the step's output or the run's files, the caller's process exiting, execute()/run_rlm raising, the next
step getting another step's reply, a host thread dying, the reply pipe's RSS cap of 16 + 64 MiB).
RT_KEEP=1 keeps the temp dir (run files, child reports) for a look afterwards; -v prints outputs and child reports.

The runner re-executes itself once with canary API keys in its exec-time environment. Every target is a canary in a
fresh temp dir (removed at the end). ``via="interp"`` attempts run in this process on a fresh RLMLabInterpreter each;
``via="rlm"`` attempts run ``run_rlm`` in a child Python process (this file, RT_BRIDGE_CHILD=<spec.json>) whose
exit code, report and run files are judged here; its cwd holds a victim directory, its PATH a marker program and
$BROWSER a marker script. Every step has a timeout, every child a hard timeout (its process group is killed), and
processes a child started are killed by pid if they outlive it. Memory-heavy attempts write at most 1 GiB.

A child is forked from a fork server (this file again, stopped where a fresh child has imported rlmlab: see
fork_server_main) instead of paying Python's start-up and imports each time; RT_BRIDGE_FORK=0 starts each fresh.
The waits after a step (for the host's threads to end, for what a child started to finish) end once their condition
holds, within the same limits the fixed sleeps had (settle, _wait_gone).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

PAGE = os.sysconf("SC_PAGE_SIZE")
MiB = 1 << 20
RSS_CAP_MB = 16 + 64  # the cap the reply pipe is to be held to


# ---------------------------------------------------------------------------------------------------------------
# shared: a sampler of this process's RSS and thread count
# ---------------------------------------------------------------------------------------------------------------

def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def nthreads() -> int:
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[17])


class Sampler:
    """Peak RSS and thread count of this process while running (a thread reading /proc every 2 ms); the largest gap
    between two samples tells how long the process could not schedule it (a stall)."""

    def __init__(self, interval: float = 0.002):
        self.interval = interval
        self.base = rss()
        self.peak = self.base
        self.threads_base = nthreads()
        self.threads_peak = self.threads_base
        self.max_gap = 0.0
        self.maxrss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True, name="rt-sampler")

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, rss())
                self.threads_peak = max(self.threads_peak, nthreads() - 1)
            except OSError:
                pass
            now = time.monotonic()
            self.max_gap = max(self.max_gap, now - last)
            last = now
            time.sleep(self.interval)

    def __enter__(self) -> Sampler:
        self._t.start()
        return self

    @property
    def native_id(self) -> int | None:
        return self._t.native_id

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._t.join(timeout=5)
        maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        if maxrss > self.maxrss0:  # the kernel's high-water mark rose during the step: it saw a higher peak
            self.peak = max(self.peak, maxrss)

    @property
    def growth_mb(self) -> float:
        return max(0.0, (self.peak - self.base) / MiB)


def _idle_threads(skip: set[int | None]) -> tuple[bool, int]:
    """(no thread of this process but ``skip`` is running, runnable or in uninterruptible sleep; the CPU time in ns
    those threads have used, from /proc/self/task/*/schedstat)."""
    idle, cpu = True, 0
    for tid in os.listdir("/proc/self/task"):
        if int(tid) in skip:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                cpu += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):  # the thread ended meanwhile
            continue
        idle = idle and state not in ("R", "D")
    return idle, cpu


def _process_tree(pid: int) -> set[int]:
    """``pid`` and its descendants now (/proc/<pid>/task/*/children)."""
    tree, todo = set(), [pid]
    while todo:
        p = todo.pop()
        tree.add(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split() if int(c) not in tree)
        except OSError:
            continue
    return tree


def _wait_gone(pids: set[int], limit: float) -> None:
    """Wait until none of ``pids`` runs any more (gone or a zombie), at most ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        alive = False
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    alive = f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
            except OSError:
                continue
            if alive:
                break
        if not alive:
            return
        time.sleep(0.02)


def settle(limit: float, threads_max: int, skip: set[int | None], quiet: float = 0.05) -> float:
    """Wait until the host has finished with the step, at most ``limit`` seconds: this process has at most
    ``threads_max`` threads and those but ``skip`` (the waiting thread, the sampler) have neither run nor been
    runnable for ``quiet`` seconds (host threads still reading the worker's pipe, parsing, serving tool calls or
    cleaning up are busy; a thread stuck in open() of a FIFO keeps the count up). Replaces the fixed waits of the
    same length, which gave the host that time to finish (or to show what it kept). Returns the seconds waited."""
    t0 = time.monotonic()
    since, last = None, None
    while True:
        now = time.monotonic()
        if now - t0 >= limit:
            return now - t0
        idle, cpu = _idle_threads(skip)
        if idle and cpu == last and nthreads() <= threads_max:
            since = now if since is None else since
            if now - since >= quiet:
                return now - t0
        else:
            since = None
        last = cpu
        time.sleep(0.01)


# ---------------------------------------------------------------------------------------------------------------
# the child: one run_rlm for an rlm attempt
# ---------------------------------------------------------------------------------------------------------------

def _router_lm(make_lm: Any, actions: list[str], replies: list[dict]) -> Any:
    """The scripted LM (make_lm("scripted", script=...)) replaying ``actions`` for action prompts (reasoning + code),
    ``replies`` for predictors the step builds, "ok" for raw llm_query prompts; SUBMIT(answer='x') once the actions
    run out (so a run ends on its own, whatever sub-calls the step made)."""
    actions, replies = list(actions), list(replies)

    def script(messages: list[dict]) -> Any:
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        if "Your output fields are:" not in system:
            return "ok"
        section = system.split("Your output fields are:", 1)[1].split("All interactions", 1)[0]
        fields = re.findall(r"^\d+\. `(\w+)`", section, flags=re.M)
        if set(fields) == {"reasoning", "code"}:
            code = actions.pop(0) if actions else "SUBMIT(answer='x')"
            return {"reasoning": "r", "code": code}
        if replies:
            return dict(replies.pop(0))
        return {f: ("r" if f == "reasoning" else "x") for f in fields}

    return make_lm("scripted", script=script)


def _log_popen(path: str) -> None:
    """Log every process this child starts (pid and argv[0]) so the parent can kill what outlives it."""
    base = subprocess.Popen

    class Logged(base):  # type: ignore[misc, valid-type]
        def __init__(self, args: Any, *a: Any, **kw: Any) -> None:
            super().__init__(args, *a, **kw)
            try:
                first = args[0] if isinstance(args, (list, tuple)) else str(args).split()[0]
                with open(path, "a") as f:
                    f.write(f"{self.pid} {os.path.basename(str(first))}\n")
            except Exception:  # noqa: BLE001
                pass

    subprocess.Popen = Logged  # type: ignore[misc]


def _child_imports() -> None:
    """What a child imports before its spec matters (child_main's imports): the fork server does it once."""
    import builtins  # noqa: F401
    import types  # noqa: F401

    import rlmlab  # noqa: F401
    import rlmlab._interrupt  # noqa: F401
    from rlmlab import run_rlm  # noqa: F401
    from rlmlab.lm import make_lm  # noqa: F401


def child_main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    globals()["RT_MAIN_SECRET"] = spec["main_secret"]  # a secret the caller's own module holds
    _log_popen(spec["pids_file"])
    import builtins
    import types

    import rlmlab
    import rlmlab._interrupt
    from rlmlab import run_rlm
    from rlmlab.lm import make_lm

    report_path = Path(spec["report"])
    kw = dict(sandbox=spec["backend"], sandbox_policy="required")

    warm = run_rlm("q", "warm", lm=_router_lm(make_lm, ["print(1)"], []), max_iters=2, step_timeout=30, **kw)
    report_path.with_suffix(".warm").write_text(json.dumps({"error": warm.error, "sandbox": warm.sandbox}))
    variables = dict(spec["variables"], HOSTPID=os.getpid())
    code = spec["prelude"] + "".join(f"{k} = {v!r}\n" for k, v in variables.items()) + spec["code"]
    lm = _router_lm(make_lm, [code, *spec["actions"]], spec["replies"])
    lm.kwargs["api_key"] = spec["lm_key"]  # where make_lm("openai/...") keeps the provider key (server_lm)

    mods0 = set(sys.modules)
    nonmod0 = {k for k, v in sys.modules.items() if not isinstance(v, types.ModuleType)}
    builtins0 = set(vars(builtins))
    title0 = os.environ.get("title")
    dws0 = rlmlab._DEFAULT_WORKSPACE is not None
    options = {k: v for k, v in spec["options"].items() if k in ("max_llm_calls",)}
    box: dict[str, Any] = {}

    def attack() -> None:
        try:
            box["traj"] = run_rlm("q", "ctx text for the run", lm=lm, runs_dir=spec["runs_dir"], max_iters=4,
                                  step_timeout=spec["step_timeout"], **options, **kw)
        except Exception as exc:  # noqa: BLE001 - run_rlm promises not to raise: PARTIAL
            box["raised"] = f"{type(exc).__name__}: {str(exc)[:400]}"
        except BaseException as exc:  # only reached in thread mode (the main thread lets it end the process)
            box["raised_base"] = f"{type(exc).__name__}: {str(exc)[:400]}"

    def attack_main() -> None:  # no BaseException handler: SystemExit/KeyboardInterrupt end the child
        try:
            box["traj"] = run_rlm("q", "ctx text for the run", lm=lm, runs_dir=spec["runs_dir"], max_iters=4,
                                  step_timeout=spec["step_timeout"], **options, **kw)
        except Exception as exc:  # noqa: BLE001
            box["raised"] = f"{type(exc).__name__}: {str(exc)[:400]}"

    report_path.with_suffix(".pre").write_text(json.dumps({"pid": os.getpid()}))
    with Sampler() as sampler:
        if spec["options"].get("thread"):
            t = threading.Thread(target=attack, name="rt-run")
            t.start()
            t.join(spec["step_timeout"] * 4 + 60)
        else:
            attack_main()
    kept = (rss() - sampler.base) / MiB
    traj = box.get("traj")
    report: dict[str, Any] = {
        "raised": box.get("raised"), "raised_base": box.get("raised_base"),
        "rss_mb": sampler.growth_mb, "rss_kept_mb": kept, "threads_base": sampler.threads_base,
        "threads_peak": sampler.threads_peak, "stall_s": sampler.max_gap,
        "new_modules": sorted(set(sys.modules) - mods0),
        "sys_modules_nonmodule": sorted({k for k, v in list(sys.modules.items())
                                         if not isinstance(v, types.ModuleType)} - nonmod0),
        "rtmarkmod_type": type(sys.modules.get("rtmarkmod")).__name__ if "rtmarkmod" in sys.modules else None,
        "builtins_added": sorted(set(vars(builtins)) - builtins0),
        "env_title": os.environ.get("title") if title0 is None else None,
        "trace_hook": type(threading.gettrace()).__name__ if threading.gettrace() is not None else None,
        "stop_flag": rlmlab._interrupt.stop_requested(),
        "default_workspace": (rlmlab._DEFAULT_WORKSPACE is not None) and not dws0,
        "stdin_closed": sys.stdin is None or sys.stdin.closed,
    }
    if traj is not None:
        report.update(error=traj.error, answer=traj.answer, interrupted=traj.interrupted, sandbox=traj.sandbox,
                      run_id=traj.run_id, subcalls=traj.subcalls, lm_calls=traj.lm_calls,
                      iterations=[{"code": it.code[:2000], "output": it.output[:20000]} for it in traj.iterations])
    report_path.write_text(json.dumps(report, default=str))
    # health: does this process still run a task (another task of an experiment, in the same mode)?
    health: dict[str, Any] = {}

    def probe() -> None:
        t0 = time.monotonic()
        try:
            h = run_rlm("q", "health", lm=_router_lm(make_lm, ["print(6 * 7)"], []), max_iters=2, step_timeout=10,
                        **kw)
            health.update(error=h.error, answer=h.answer, output=[it.output[:200] for it in h.iterations])
        except BaseException as exc:  # noqa: BLE001 - the probe is the runner's own
            health["raised"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        health["seconds"] = round(time.monotonic() - t0, 1)

    # bounded: a host the attack broke may never start another worker. In thread mode (another task of a threads
    # backend) in a thread; else in the main thread under an alarm (a thread may not even start: settrace)
    if spec["options"].get("thread"):
        t = threading.Thread(target=probe, name="rt-health", daemon=True)
        t.start()
        t.join(45)
        if t.is_alive():
            health.setdefault("error", "the health run did not finish within 45 s")
        elif not health:
            health["error"] = "the health thread died at start"
    else:
        def _alarm(*_: Any) -> None:
            raise TimeoutError("the health run did not finish within 45 s")

        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(45)
        try:
            probe()
        except TimeoutError as exc:
            health["error"] = str(exc)
        finally:
            signal.alarm(0)
    report["stop_flag_after_health"] = rlmlab._interrupt.stop_requested()
    report["health"] = health
    report_path.write_text(json.dumps(report, default=str))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# ---------------------------------------------------------------------------------------------------------------
# the fork server: rlm children forked from a process that has already imported rlmlab
# ---------------------------------------------------------------------------------------------------------------
#
# A child used to be a fresh `python redteam_bridge_run.py` (about 2.5 s of interpreter start and imports before its
# run). The fork server is that same program, started once with the children's environment and stdin (/dev/null),
# stopped right where child_main would read its spec: it has imported what child_main imports first, and nothing
# else (no run, no worker, no thread of its own). For each rlm attempt it forks; the fork becomes what the fresh
# process was: a new session (start_new_session), the attempt's cwd, stdout and stderr files and
# RT_BRIDGE_CHILD, then child_main in this file's __main__ (RT_MAIN_SECRET, __file__). A SystemExit or other
# exception that ends child_main unwinds out of the fork server's loop to the top of the module, so the process
# ends the way the fresh one did (the same exit code, atexit, the traceback on its stderr). Each child runs its own
# warm-up run, attack and health run as before; a fork is never reused. RT_BRIDGE_FORK=0 starts fresh processes.

def fork_server_main(fds: str) -> None:
    rfd, wfd = map(int, fds.split(","))
    _child_imports()
    if threading.active_count() != 1:  # a Python thread would not survive the fork: start fresh processes instead
        os.write(wfd, b"unfit\n")
        os._exit(0)
    os.write(wfd, b"ready\n")
    reader = os.fdopen(rfd, "rb", buffering=0)
    while True:
        line = reader.readline()
        if not line:
            os._exit(0)
        req = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            reader.close()
            os.close(wfd)
            os.setsid()
            os.chdir(req["cwd"])
            for fd, path in ((1, req["stdout"]), (2, req["stderr"])):
                f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
                os.dup2(f, fd)
                os.close(f)
            for k in set(os.environ) - set(req["env"]):
                del os.environ[k]
            os.environ.update(req["env"])  # the environment a fresh child would have had (RT_BRIDGE_CHILD too)
            child_main(req["env"]["RT_BRIDGE_CHILD"])  # ends the process: os._exit, or an exception that unwinds
            os._exit(0)
        os.write(wfd, f"pid {pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        os.write(wfd, f"exit {os.waitstatus_to_exitcode(status)}\n".encode())


class ForkServer:
    """The parent's handle on the fork server (see fork_server_main); ``spawn`` returns a Popen-like child."""

    def __init__(self, env: dict[str, str], cwd: Path, log: Path):
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        self.log = open(log, "ab")
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve())],
                                     env={**env, "RT_BRIDGE_FORK_SERVER": f"{req_r},{rep_w}"}, cwd=cwd,
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                     pass_fds=(req_r, rep_w), start_new_session=True)
        os.close(req_r)
        os.close(rep_w)
        self.req, self.rep, self.buf = req_w, rep_r, b""
        self.env = env
        try:
            first = self.line(120.0)
        except (RuntimeError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.close()
            raise
        if first != "ready":
            self.close()
            raise RuntimeError(f"fork server: {first!r}")

    def line(self, timeout: float | None) -> str:
        import select
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.rep], [], [], left)[0]:
                raise subprocess.TimeoutExpired("fork server", timeout or 0)
            chunk = os.read(self.rep, 4096)
            if not chunk:
                raise RuntimeError(f"the fork server ended (exit {self.proc.wait()})")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def spawn(self, env: dict[str, str], cwd: Path, stdout: Path, stderr: Path) -> Any:
        req = {"env": env, "cwd": str(cwd), "stdout": str(stdout), "stderr": str(stderr)}
        os.write(self.req, (json.dumps(req) + "\n").encode())
        kind, pid = self.line(60.0).split()
        assert kind == "pid", kind
        server = self

        class Forked:
            def __init__(self) -> None:
                self.pid, self.returncode = int(pid), None

            def wait(self, timeout: float | None = None) -> int:
                if self.returncode is None:
                    kind, code = server.line(timeout).split()
                    assert kind == "exit", kind
                    self.returncode = int(code)
                return self.returncode

        return Forked()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        for fd in (self.req, self.rep):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


# ---------------------------------------------------------------------------------------------------------------
# the parent
# ---------------------------------------------------------------------------------------------------------------

ALLOWED_STEP_ERRORS = ("CodeExecutionError", "SyntaxError")
LEVELS = {"held": 0, "PARTIAL": 1, "ESCAPED": 2}


def _read_text(path: Path, limit: int = 128 * MiB) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def _tail(text: str, n: int = 1) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-n:])[:300]


def _scratch_stat(scratch: Path | None) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    if scratch is None or not scratch.is_dir():
        return out
    for root, dirs, files in os.walk(scratch):
        for name in dirs + files:
            p = Path(root) / name
            try:
                st = os.lstat(p)
            except OSError:
                continue
            out[str(p.relative_to(scratch))] = {"uid": st.st_uid, "gid": st.st_gid, "mode": st.st_mode}
    return out


def _release_fifos(scratch: Path | None) -> int:
    """Open every FIFO in scratch for writing (non-blocking) and close it: a host reader blocked in open() gets EOF."""
    import stat as st_mod
    n = 0
    if scratch is None or not scratch.is_dir():
        return 0
    for p in scratch.iterdir():
        try:
            if st_mod.S_ISFIFO(os.lstat(p).st_mode):
                fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK)
                os.close(fd)
                n += 1
        except OSError:
            continue
    return n


THREAD_ERRORS: list[str] = []


def _record_thread_error(args: Any) -> None:
    """threading.excepthook for the runner: a host thread that dies is evidence, not noise on stderr."""
    name = args.thread.name if args.thread is not None else "?"
    THREAD_ERRORS.append(f"{name}: {args.exc_type.__name__}: {str(args.exc_value)[:120]}")


class Parent:
    def __init__(self, root: Path, verbose: bool):
        from redteam_host import ENV_NAMES, Host, canary

        self.root, self.verbose = root, verbose
        self.host = Host(root / "host")
        for name in ENV_NAMES:
            self.host.canaries[name] = os.environ[name]
        self.ws = self.host.workspace()
        self.tools = {spec.name: self.ws.bound(spec.name) for spec in self.ws.registry}
        c = self.host.canaries
        for kind in ("RS", "HELD", "BIG", "MAIN", "LMKEY"):
            c[kind] = canary(kind)
        src = root / "host" / "src"
        src.mkdir(parents=True)
        self.secret_rs = src / "secret.rs"
        self.secret_rs.write_text(f'fn main() {{ let key = "{c["RS"]}"; }}\n')
        self.held_rs = src / "held.rs"
        self.held_rs.write_text(f'fn held() {{ let key = "{c["HELD"]}"; }}\n')
        self.held_fd = open(self.held_rs, "rb")  # the host holds it open: /proc/<hostpid>/fd/N
        self.bigfile = root / "host" / "big.txt"
        with open(self.bigfile, "wb") as f:
            f.write(f'fn big() {{ let key = "{c["BIG"]}"; }}\n'.encode())
            f.truncate(200 * MiB)  # sparse: 200 MiB of NULs after the canary
        self.bin = root / "bin"
        self.bin.mkdir()
        self.marker_dir = root / "markers"
        self.marker_dir.mkdir()
        for name, marker in (("rtmarkprog", "prog"), ("browser.sh", "browser")):
            p = self.bin / name
            p.write_text(f'#!/bin/sh\necho "ran $0 $*" >> "$RT_MARKER_DIR/{marker}"\n')
            p.chmod(0o755)
        self.cwd_root = root / "cwd"
        self.cwd_root.mkdir()
        from redteam_bridge_corpus import PRELUDE

        self.prelude = PRELUDE
        self.pyodide_reason: str | None = None
        self.leftover_killed = 0
        self._fork: ForkServer | None = None
        self._fork_failed = False

    # -- variables the step gets ----------------------------------------------------------------------------------
    def variables(self, backend: str, nonce: str, scratch: Path | None) -> dict[str, Any]:
        return {"NONCE": nonce, "BACKEND": backend, "SCRATCH": str(scratch) if scratch else None,
                "SECRET_RS": str(self.secret_rs), "SECRET_DIR": str(self.secret_rs.parent), "HELD_RS": str(self.held_rs),
                "SSH_KEY": str(self.host.ssh_key), "CANARY_FILE": str(self.host.canary_file),
                "BIGFILE": str(self.bigfile), "OUTSIDE": str(self.host.outside), "HOSTPID": os.getpid(),
                "TCP_PORT": self.host.tcp.address[1]}

    def clear_markers(self) -> None:
        for p in self.marker_dir.iterdir():
            p.unlink()

    def listener_total(self) -> int:
        return sum(self.host.counts().values())

    # -- interp ----------------------------------------------------------------------------------------------------
    def run_interp(self, a: Any, backend: str, nonce: str) -> SimpleNamespace:
        from rlmlab.executors import RLMLabInterpreter

        self.host.restore_stores()
        interp = RLMLabInterpreter(self.ws, tools=self.tools, output_fields=[{"name": "answer", "type": "str"}],
                                   step_timeout=a.step_timeout, sandbox=backend, sandbox_policy="required")
        interp.start()
        assert interp.sandbox_used == backend, interp.sandbox_used
        scratch = interp.scratch_dir
        ctx = SimpleNamespace(via="interp", backend=backend, nonce=nonce, output="", raised="", raised_type="",
                              raised_base=False, result_type="", result_repr="", next_output="", alive=True,
                              canaries=self.host.canaries, files_text="", child=None, extra={},
                              paths={"scratch": str(scratch) if scratch else None, "outside": str(self.host.outside),
                                     "marker_dir": str(self.marker_dir), "victim": ""},
                              step_timeout=a.step_timeout, host_euid=os.geteuid())
        variables = self.variables(backend, nonce, scratch)
        ctx.extra["outside_before"] = [str(p) for p in self.host.outside.rglob("*")]
        THREAD_ERRORS.clear()
        step_procs = _process_tree(interp._started.pid) if a.name == "forge_result_outlive" else set()
        l0 = self.listener_total()
        t0 = time.monotonic()
        try:
            with Sampler() as s:
                try:
                    result = interp.execute(self.prelude + a.code, variables)
                    ctx.result_type, ctx.result_repr = type(result).__name__, repr(result)[:4000]
                    ctx.output = result if isinstance(result, str) else repr(result)
                except Exception as exc:  # noqa: BLE001
                    ctx.raised_type, ctx.raised = type(exc).__name__, f"{type(exc).__name__}: {str(exc)[:2000]}"
                except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt out of execute(): recorded
                    ctx.raised_type, ctx.raised = type(exc).__name__, f"{type(exc).__name__}: {str(exc)[:2000]}"
                    ctx.raised_base = True
                ctx.wall = time.monotonic() - t0
                if a.name == "forge_result_outlive" and scratch is not None:
                    f = scratch / "outlive.txt"
                    ctx.extra["outlive_at_return"] = len(_read_text(f).splitlines())
                    # up to 5 s for the step to go on writing; once the processes that ran it are all gone (the
                    # timeout's kill: their PID namespace is empty) nothing can append, so no need to wait longer
                    _wait_gone(step_procs, 5.0)
                    ctx.extra["outlive_after"] = len(_read_text(f).splitlines())
                # keep sampling while the host still works on the step (<= 0.3 s, as the fixed wait was)
                settle(0.3, s.threads_base + 1, {threading.get_native_id(), s.native_id})
            ctx.rss_mb, ctx.threads_base, ctx.threads_peak, ctx.stall_s = (
                s.growth_mb, s.threads_base, s.threads_peak, s.max_gap)
            settle(0.7, s.threads_base, {threading.get_native_id()})  # the step's host threads end (<= 0.7 s)
            ctx.threads_after = nthreads()
            ctx.extra["fifo_released"] = _release_fifos(scratch) if a.name == "path_race_fifo" else 0
            ctx.scratch_stat = _scratch_stat(scratch)
            ctx.listener_delta = self.listener_total() - l0
            # the next step: does the REPL answer it with its own output?
            for _ in range(2):
                try:
                    nxt = interp.execute(f"print('NEXT-' + {nonce!r})")
                    ctx.next_output = nxt if isinstance(nxt, str) else repr(nxt)
                except BaseException as exc:  # noqa: BLE001
                    ctx.next_output = f"[raised] {type(exc).__name__}: {str(exc)[:200]}"
                if not ctx.next_output.startswith("[Error]"):
                    break
            ctx.alive = ctx.next_output.strip() == f"NEXT-{nonce}"
            ctx.thread_errors = list(THREAD_ERRORS)
        finally:
            try:
                _release_fifos(scratch)
                interp.shutdown()
            except Exception:  # noqa: BLE001
                pass
        return ctx

    # -- rlm (child) -----------------------------------------------------------------------------------------------
    def run_child(self, a: Any, backend: str, nonce: str) -> SimpleNamespace:
        d = Path(tempfile.mkdtemp(prefix=f"{a.name}-{backend}-", dir=self.root))
        cwd = d / "hostcwd"
        (cwd / "rtvictim").mkdir(parents=True)
        (cwd / "rtvictim" / "keep.txt").write_text("the host's own file\n")
        self.clear_markers()
        spec = {"backend": backend, "code": a.code, "prelude": self.prelude, "actions": list(a.actions),
                "replies": [dict(r) for r in a.replies], "options": dict(a.options), "step_timeout": a.step_timeout,
                "variables": self.variables(backend, nonce, None), "main_secret": self.host.canaries["MAIN"],
                "lm_key": self.host.canaries["LMKEY"], "runs_dir": str(d / "runs"), "report": str(d / "report.json"),
                "pids_file": str(d / "pids.txt")}
        spec["variables"]["SCRATCH"] = None
        (d / "spec.json").write_text(json.dumps(spec))
        env = dict(self.child_env(), RT_BRIDGE_CHILD=str(d / "spec.json"))
        l0 = self.listener_total()
        t0 = time.monotonic()
        limit = max(150.0, a.step_timeout * 4 + 90)
        server = self.fork_server()
        if server is not None:
            out = err = None
            proc = server.spawn(env, cwd, d / "stdout.txt", d / "stderr.txt")
        else:
            out, err = open(d / "stdout.txt", "wb"), open(d / "stderr.txt", "wb")
            proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve())], env=env, cwd=cwd,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        try:
            code = proc.wait(timeout=limit)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
            timed_out = True
        finally:
            if out is not None:
                out.close()
                err.close()
        wall = time.monotonic() - t0
        # what the child started gets up to 0.3 s to finish on its own (a marker script) before it is killed
        _wait_gone(self._child_procs(proc.pid, d / "pids.txt"), 0.3)
        self._kill_leftovers(d / "pids.txt")
        report = None
        rp = d / "report.json"
        if rp.exists():
            try:
                report = json.loads(rp.read_text())
            except ValueError:
                report = None
        files_text = ""
        runs = d / "runs"
        if runs.is_dir():
            files_text = "\n".join(_read_text(p) for p in sorted(runs.rglob("*")) if p.is_file())
        stdout, stderr = _read_text(d / "stdout.txt", 4 * MiB), _read_text(d / "stderr.txt", 4 * MiB)
        its = (report or {}).get("iterations", [])
        output = "\n".join(str(i.get("output", "")) for i in its)
        ctx = SimpleNamespace(
            via="rlm", backend=backend, nonce=nonce, output=output,
            raised=(report or {}).get("raised") or (report or {}).get("raised_base") or "", raised_type="",
            raised_base=bool((report or {}).get("raised_base")), result_type="", result_repr="", next_output="",
            alive=True, canaries=self.host.canaries, files_text=files_text, extra={},
            child={"exit": code, "timed_out": timed_out, "stdout": stdout, "stderr": stderr, "report": report,
                   "dir": str(d), "warm": _read_text(d / "report.warm")},
            paths={"victim": str(cwd / "rtvictim"), "marker_dir": str(self.marker_dir),
                   "outside": str(self.host.outside), "scratch": None},
            rss_mb=(report or {}).get("rss_mb", 0.0), threads_base=(report or {}).get("threads_base", 0),
            threads_peak=(report or {}).get("threads_peak", 0), threads_after=0,
            stall_s=(report or {}).get("stall_s", 0.0), scratch_stat={}, wall=wall,
            thread_errors=re.findall(r"^Exception in thread ([^\n]+)\n(?:.*\n)*?(\w+(?:Error|Exception)[^\n]*)", stderr,
                                     flags=re.M),
            listener_delta=self.listener_total() - l0, step_timeout=a.step_timeout, host_euid=os.geteuid())
        return ctx

    def child_env(self) -> dict[str, str]:
        """A child's environment but RT_BRIDGE_CHILD: the marker program on PATH, $BROWSER the marker script."""
        return dict(os.environ, RT_MARKER_DIR=str(self.marker_dir), BROWSER=str(self.bin / "browser.sh"),
                    PATH=f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}")

    def fork_server(self) -> ForkServer | None:
        """The fork server the rlm children come from (started on first use, again if it ended); None: fresh
        processes (RT_BRIDGE_FORK=0, or it would not start)."""
        if os.environ.get("RT_BRIDGE_FORK", "1") == "0" or self._fork_failed:
            return None
        if self._fork is not None and not self._fork.alive():
            self._fork.close()
            self._fork = None
        if self._fork is None:
            try:
                self._fork = ForkServer(self.child_env(), self.cwd_root, self.root / "fork-server.log")
            except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
                print(f"fork server unavailable ({exc}): fresh child processes", flush=True)
                self._fork_failed = True
                return None
        return self._fork

    def _child_procs(self, sid: int, pids_file: Path) -> set[int]:
        """The processes the child started that still run: the ones it logged, and any left in its session."""
        pids = set()
        for line in _read_text(pids_file).splitlines():
            try:
                pids.add(int(line.split(" ", 1)[0]))
            except ValueError:
                continue
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        if int(f.read().rsplit(")", 1)[1].split()[3]) == sid:
                            pids.add(int(entry))
                except (OSError, ValueError, IndexError):
                    continue
        return pids

    def _kill_leftovers(self, pids_file: Path) -> None:
        """Kill, by pid, processes the child started that outlived it (a pyodide Deno has no die-with-parent)."""
        for line in _read_text(pids_file).splitlines():
            try:
                pid_s, name = line.split(" ", 1)
                pid = int(pid_s)
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
            except (ValueError, OSError):
                continue
            if os.path.basename(cmd) == name.strip():
                try:
                    os.kill(pid, signal.SIGKILL)
                    self.leftover_killed += 1
                except OSError:
                    pass

    def close(self) -> None:
        if self._fork is not None:
            self._fork.close()
        self.held_fd.close()
        self.host.close()


def generic_verdicts(a: Any, ctx: Any) -> list[tuple[str, str]]:
    """Host-side verdicts every attempt gets, beside its own check."""
    out: list[tuple[str, str]] = []
    if ctx.via == "rlm":
        ch = ctx.child
        rep = ch["report"]
        if rep is None:
            how = "hit the runner's time limit" if ch["timed_out"] else f"exited with code {ch['exit']}"
            out.append(("ESCAPED", f"the caller's process {how} inside run_rlm (no report): "
                                   f"{_tail(ch['stderr'])!r}"))
        else:
            if rep.get("raised_base"):
                out.append(("ESCAPED", f"run_rlm raised {rep['raised_base'][:200]}"))
            elif rep.get("raised"):
                out.append(("PARTIAL", f"run_rlm raised {rep['raised'][:200]}"))
            ended = [i["output"] for i in rep.get("iterations", []) if "(the run ended)" in str(i.get("output"))]
            if ended:
                out.append(("PARTIAL", f"a host exception ended the run: {ended[0][:160]!r}"))
    else:
        if ctx.raised_base:
            out.append(("ESCAPED", f"execute() raised {ctx.raised[:200]}"))
        elif ctx.raised and ctx.raised_type not in ALLOWED_STEP_ERRORS:
            out.append(("PARTIAL", f"execute() raised a host {ctx.raised[:200]}"))
        nxt = ctx.next_output.strip()
        if nxt and nxt != f"NEXT-{ctx.nonce}" and not nxt.startswith(("[Error]", "[raised]")):
            out.append(("ESCAPED", f"the next step got another step's reply: {nxt[:100]!r}"))
        if nxt.startswith("[raised]") and not ctx.raised and "CodeInterpreterError" not in nxt:
            out.append(("PARTIAL", f"the NEXT step's execute() raised a host {nxt[9:120]}"))
    if ctx.thread_errors:
        first = ctx.thread_errors[0]
        first = " ".join(first) if isinstance(first, (tuple, list)) else first
        out.append(("PARTIAL", f"{len(ctx.thread_errors)} host thread(s) died with an uncaught exception ({first[:160]})"))
    text = "\n".join([ctx.output, ctx.next_output, ctx.raised, ctx.files_text])
    hits = [k for k, v in ctx.canaries.items() if v in text]
    if hits:
        where = []
        if any(ctx.canaries[k] in ctx.output + ctx.raised + ctx.next_output for k in hits):
            where.append("step output")
        if any(ctx.canaries[k] in ctx.files_text for k in hits):
            where.append("the run's files")
        out.append(("ESCAPED", f"canaries {', '.join(hits[:6])}{'...' if len(hits) > 6 else ''} in "
                               f"{' and '.join(where)}"))
    if a.rss_limit_mb is not None and ctx.rss_mb > a.rss_limit_mb:
        level = "ESCAPED" if a.cls == "reply_pipe" else "PARTIAL"
        out.append((level, f"host peak RSS +{ctx.rss_mb:.0f} MiB (> {a.rss_limit_mb:g} MiB cap)"))
    return out


def judge(a: Any, ctx: Any) -> tuple[str, str]:
    verdicts = generic_verdicts(a, ctx)
    try:
        own = a.check(ctx)
    except Exception as exc:  # noqa: BLE001
        own = ("PARTIAL", f"[check failed: {exc!r}]")
    if own:
        verdicts.insert(0, own if isinstance(own, tuple) else ("ESCAPED", own))
    if not verdicts:
        notes = []
        if ctx.via == "interp" and not ctx.alive:
            notes.append(f"[REPL did not answer the next step: {ctx.next_output[:80]!r}]")
        if ctx.via == "rlm" and (ctx.child["report"] or {}).get("error"):
            notes.append(f"[run error: {str(ctx.child['report']['error'])[:100]}]")
        return "held", " ".join(notes) + " output: " + " ".join((ctx.output or ctx.raised).split())[:150]
    level = max((v[0] for v in verdicts), key=LEVELS.__getitem__)
    ev = "; ".join(dict.fromkeys(v[1] for v in sorted(verdicts, key=lambda v: -LEVELS[v[0]])))
    if ctx.via == "interp" and not ctx.alive:
        ev += f" [REPL did not answer the next step: {ctx.next_output[:60]!r}]"
    if ctx.stall_s > 1.0:
        ev += f" [host stalled {ctx.stall_s:.1f} s]"
    return level, ev[:600]


def main() -> None:
    args = sys.argv[1:]
    verbose = "-v" in args
    backends = ["confined", "pyodide"]
    if "--backend" in args:
        i = args.index("--backend")
        backends = [args[i + 1]]
        del args[i:i + 2]
    only = {x for x in args if not x.startswith("-")}
    from redteam_bridge_corpus import CLASSES, by_name

    attempts = by_name()
    unknown = only - set(attempts)
    if unknown:
        sys.exit(f"unknown attempts: {sorted(unknown)}")
    import rlmlab

    print(f"rlmlab from {rlmlab.__file__}; host pid {os.getpid()}, euid {os.geteuid()}", flush=True)
    threading.excepthook = _record_thread_error
    root = Path(tempfile.mkdtemp(prefix="rt-bridge-"))
    cwd0 = os.getcwd()
    os.chdir(root)
    parent = Parent(root, verbose)
    if "pyodide" in backends:
        try:
            from rlmlab.executors._pyodide import pyodide_unavailable

            parent.pyodide_reason = pyodide_unavailable()
        except Exception as exc:  # noqa: BLE001
            parent.pyodide_reason = f"{type(exc).__name__}: {exc}"
        if parent.pyodide_reason:
            print(f"pyodide: skipped ({parent.pyodide_reason})", flush=True)
    rows: list[tuple[str, str, str, str, str, float]] = []
    t_start = time.monotonic()
    print(f"{'attempt':38} {'class':15} {'backend':8} {'result':8} {'rss+MiB':>8}  evidence", flush=True)
    try:
        for a in attempts.values():
            if only and a.name not in only:
                continue
            for backend in backends:
                if backend not in a.backends:
                    rows.append((a.name, a.cls, backend, "n/a", a.na or "does not apply", 0.0))
                    print(f"{a.name:38} {a.cls:15} {backend:8} {'n/a':8} {'':>8}  {a.na or 'does not apply'}",
                          flush=True)
                    continue
                if backend == "pyodide" and parent.pyodide_reason:
                    rows.append((a.name, a.cls, backend, "n/a", f"pyodide unavailable: {parent.pyodide_reason}", 0.0))
                    continue
                nonce = os.urandom(6).hex()
                t0 = time.monotonic()
                earlier: list[str] = []
                tries = min(int(a.options.get("tries", 1)), int(os.environ.get("RT_BRIDGE_TRIES") or 99))
                for attempt_no in range(tries):
                    try:
                        ctx = (parent.run_interp if a.via == "interp" else parent.run_child)(a, backend, nonce)
                        result, evidence = judge(a, ctx)
                        mb = ctx.rss_mb
                    except Exception as exc:  # noqa: BLE001 - the runner's own failure: reported, not judged
                        result, evidence, mb = "error", f"runner: {type(exc).__name__}: {exc}", 0.0
                        if verbose:
                            traceback.print_exc()
                    goal = LEVELS[a.options.get("goal", "ESCAPED")]
                    if LEVELS.get(result, 0) >= goal or attempt_no + 1 == tries:
                        break
                    earlier.append(f"try {attempt_no + 1}: {result}: {evidence[:120]}")
                    nonce = os.urandom(6).hex()
                if earlier:
                    evidence = f"(try {len(earlier) + 1}) {evidence} [earlier: {' | '.join(earlier)}]"
                rows.append((a.name, a.cls, backend, result, evidence, mb))
                print(f"{a.name:38} {a.cls:15} {backend:8} {result:8} {mb:8.1f}  {evidence} "
                      f"({time.monotonic() - t0:.1f} s)", flush=True)
                if verbose and result != "error":
                    print("    output:", " ".join(ctx.output.split())[:1500])
                    if ctx.via == "rlm":
                        print("    exit:", ctx.child["exit"], "stderr:", _tail(ctx.child["stderr"], 3))
                        print("    report:", json.dumps({k: v for k, v in (ctx.child["report"] or {}).items()
                                                          if k not in ("iterations", "new_modules")})[:1500])
                parent.host.ensure_helper()
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    finally:
        parent.close()
        os.chdir(cwd0)
        if os.environ.get("RT_KEEP"):
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(f"\ntotal {time.monotonic() - t_start:.0f} s; leftover child processes killed: {parent.leftover_killed}")
    kinds = ("held", "PARTIAL", "ESCAPED", "n/a", "error")
    print(f"\n{'class':16} {'backend':9} " + " ".join(f"{k:>8}" for k in kinds))
    for cls in CLASSES:
        for backend in backends + ["all"]:
            sel = [r for r in rows if r[1] == cls and (backend == "all" or r[2] == backend)]
            if not sel:
                continue
            print(f"{cls:16} {backend:9} " + " ".join(f"{sum(r[3] == k for r in sel):8d}" for k in kinds))
    print(f"{'all':16} {'all':9} " + " ".join(f"{sum(r[3] == k for r in rows):8d}" for k in kinds))


if __name__ == "__main__":
    if os.environ.get("RT_BRIDGE_FORK_SERVER"):
        fork_server_main(os.environ["RT_BRIDGE_FORK_SERVER"])
    elif os.environ.get("RT_BRIDGE_CHILD"):
        child_main(os.environ["RT_BRIDGE_CHILD"])
    elif os.environ.get("RT_BRIDGE_PARENT") != "1":
        from redteam_host import ENV_NAMES, canary

        env = dict(os.environ, RT_BRIDGE_PARENT="1")
        for i, name in enumerate(ENV_NAMES):
            env[name] = canary("ENV" + str(i))
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    else:
        main()
