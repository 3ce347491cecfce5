"""The red-team corpus's machinery: the step prelude, Attempt and Run, and the host-side checks.

Every attempt is model-style step code run through ``RLMLabInterpreter.execute`` with the variables of
:meth:`redteam_host.Host.variables` plus SCRATCH (the worker's scratch dir), OUT (a fresh host dir outside
scratch for this run) and NONCE. Its ``check(run)`` looks only at the host (files, sockets, signals, process
state) and returns the evidence of an escape, or None. Reads are the one exception: a read escaped when a
host canary (a random value the step code never contains) shows up in the step's output or in a file it left
in scratch. ``today`` says whether the attempt escapes with no sandbox (tests/test_sandbox_redteam.py asserts
it does under ``none``, which proves its check can see an escape). tests/REDTEAM.md lists them all.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from redteam_host import Host, scratch_files

# Defined before every attempt (a timeout restart forgets the REPL's names; the attempt must not depend on them).
PRELUDE = r'''
import os, sys, time
def _try(label, fn, *args):
    try:
        text = f"{label}: ok {fn(*args)!r}"
    except BaseException as exc:
        text = f"{label}: {type(exc).__name__}: {exc}"
    print(text[:20000])
def _read(path, n=1 << 16):
    with open(path, 'rb') as f:
        return f.read(n).decode('latin-1')
def _near(data, tag='RTC', width=40):
    if isinstance(data, (bytes, bytearray)):
        data = bytes(data).decode('latin-1')
    found, i = [], data.find(tag)
    while i != -1 and len(found) < 40:
        found.append(data[i:i + width]); i = data.find(tag, i + 1)
    return found
def _scan_mem(pid, only=None):
    hits = []
    with open(f'/proc/{pid}/maps') as maps, open(f'/proc/{pid}/mem', 'rb', 0) as mem:
        for line in maps:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split('-'))
            name = parts[5] if len(parts) > 5 else ''
            if 'r' not in parts[1] or hi - lo > (256 << 20) or name in ('[vvar]', '[vsyscall]'):
                continue
            if only and name != only:
                continue
            try:
                mem.seek(lo); hits += _near(mem.read(hi - lo))
            except (OSError, ValueError, OverflowError):
                pass
    return hits
try:
    os.chdir(SCRATCH)
except Exception:
    pass
'''


@dataclass
class Run:
    """One attempt on one backend: where it ran and what the host saw."""

    host: Host
    backend: str
    scratch: Path  # the worker's scratch dir, as a host path
    out: Path  # a fresh host dir outside scratch, for this run only
    nonce: str
    variables: dict[str, Any]
    output: str = ""
    before: dict[str, int] = field(default_factory=dict)
    usr1_before: int = 0


@dataclass(frozen=True)
class Attempt:
    id: str
    what: str  # what it tries, and what counts as escaping (REDTEAM.md's table)
    code: str
    check: Callable[[Run], str | None]
    today: bool | Callable[[Host], bool] = True  # escapes with no sandbox (on this machine, as this user)
    setup: Callable[[Run], None] | None = None
    timeout: float | None = None  # run on an interpreter with this step timeout (seconds), not the default
    restart_after: bool = False  # the worker may be left damaged: start a fresh one afterwards
    needs_scratch: bool = False  # the evidence is a file the step leaves in the shared scratch dir
    issue_row: str = ""  # the row of issue 27's table this attempt reproduces

    def escapes_today(self, host: Host) -> bool:
        return self.today(host) if callable(self.today) else self.today


def leaked(*keys: str) -> Callable[[Run], str | None]:
    """A read check: which of the host canaries ``keys`` appear in the output or in files left in scratch."""
    def check(run: Run) -> str | None:
        seen = run.output + "\n" + scratch_files(run.scratch)
        hits = [key for key in keys if run.host.canaries[key] in seen]
        return f"canaries read: {', '.join(hits)}" if hits else None
    return check


def created(*names: str) -> Callable[[Run], str | None]:
    """A write check: which of ``names`` (relative to the run's OUT dir) exist on the host."""
    def check(run: Run) -> str | None:
        hits = [n for n in names if os.path.lexists(run.out / n)]
        return f"written outside scratch: {', '.join(str(run.out / n) for n in hits)}" if hits else None
    return check


def reached(*listeners: str) -> Callable[[Run], str | None]:
    """A network check: a host listener counted a connection or datagram during the run."""
    def check(run: Run) -> str | None:
        time.sleep(0.1)  # the listener thread accepts asynchronously
        after = run.host.counts()
        hits = [n for n in listeners if after[n] > run.before[n]]
        return f"host listeners reached: {', '.join(hits)}" if hits else None
    return check


def in_scratch(name: str, what: str) -> Callable[[Run], str | None]:
    """An exec check: the file ``name`` that only the executed program writes is in scratch."""
    def check(run: Run) -> str | None:
        path = run.scratch / f"{name}-{run.nonce}"
        return f"{what} ({path} written)" if path.exists() and path.stat().st_size else None
    return check


def _victims(run: Run) -> None:
    for name in ("victim.txt", "victim2.txt", "victim3.txt"):
        (run.out / name).write_text("original\n")
        os.utime(run.out / name, (1_000_000, 1_000_000))
        (run.out / name).chmod(0o644)


def _victims_changed(run: Run) -> str | None:
    problems = []
    for name in ("victim.txt", "victim2.txt", "victim3.txt"):
        path = run.out / name
        if not path.exists():
            problems.append(f"{name} removed")
            continue
        st = path.stat()
        if path.read_text() != "original\n":
            problems.append(f"{name} content changed")
        if stat.S_IMODE(st.st_mode) != 0o644 or st.st_mtime != 1_000_000:
            problems.append(f"{name} mode or mtime changed")
        if st.st_nlink != 1:
            problems.append(f"{name} hard-linked")
    for name in ("hl_out.txt", "renamed.txt", "moved.txt"):
        if os.path.lexists(run.out / name):
            problems.append(f"{name} created")
    return "; ".join(problems) or None


def _store_damage(key: str) -> Callable[[Run], str | None]:
    def check(run: Run) -> str | None:
        import sqlite3

        path = run.host.stores[key]
        with sqlite3.connect(path) as db:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            text = "\n".join(str(row) for t in tables if not t.startswith(("sqlite_", "items_fts"))
                             for row in db.execute(f'SELECT * FROM "{t}"'))
        db.close()
        problems = (["table rt_pwned created"] if "rt_pwned" in tables else []) + (
            [] if run.host.canaries[key] in text else ["canary row deleted"])
        return f"{path.name}: {', '.join(problems)}" if problems else None
    return check


def _dev_shm(run: Run) -> str | None:
    hits = [p for p in (f"/dev/shm/rlmlab-redteam-{run.nonce}", f"/dev/shm/rtshm{run.nonce}") if os.path.exists(p)]
    for p in hits:
        os.remove(p)
    return f"host /dev/shm got {', '.join(hits)}" if hits else None


def _huge_sparse(run: Run) -> str | None:
    path = run.scratch / f"sparse-{run.nonce}.bin"
    size = path.stat().st_size if path.exists() else 0
    path.unlink(missing_ok=True)
    return f"a {size >> 20} MiB file in scratch (no file-size cap)" if size > 2 ** 31 else None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:  # removed between the listing and the stat (the worker's quota or its cleanup)
        return 0


def _huge_dense(run: Run) -> str | None:
    # a file the sandbox removes while this runs counts as not written (seen once on a loaded machine: the glob
    # listed a file the scratch quota's cleanup had removed by the unlink)
    total = sum(_size(p) for p in run.scratch.glob(f"dense-{run.nonce}-*"))
    for p in run.scratch.glob(f"dense-{run.nonce}-*"):
        p.unlink(missing_ok=True)
    limit = run.variables["DENSE_LIMIT"]
    return f"{total >> 20} MiB written to scratch (no disk cap below {limit >> 20} MiB)" if total >= limit else None


def _dense_setup(run: Run) -> None:
    free = shutil.disk_usage(run.scratch).free
    run.variables["DENSE_LIMIT"] = min(1 << 30, free // 4)  # never fill the host's disk, even unconfined


def _fork_storm(run: Run) -> str | None:
    path = run.scratch / f"forks-{run.nonce}"
    n = path.read_bytes().count(b"\n") if path.exists() else 0
    host_ok = subprocess.run(["true"]).returncode == 0
    assert host_ok, "the host cannot start a process after the fork storm"
    return f"{n} forked processes ran (no process cap below 200)" if n >= 200 else None


def _signal_host(run: Run) -> str | None:
    time.sleep(0.2)  # signal delivery to the main thread is asynchronous
    return f"the host got {run.host.usr1 - run.usr1_before} SIGUSR1" if run.host.usr1 > run.usr1_before else None


def _helper_killed(run: Run) -> str | None:
    time.sleep(0.2)
    return None if run.host.helper.poll() is None else "a host process was killed by the step"


def _ptrace(run: Run) -> str | None:
    # The test restarts the helper after the worker (the tracer) is gone: a traced process cannot be reaped before.
    time.sleep(0.2)
    return "the step attached ptrace to a host process" if run.host.helper_traced() else None


def _named(nonce: str) -> list[str]:
    """Host pids/tids of threads the step named 'rt<nonce>' (what /proc/*/task/*/comm shows, 15 characters)."""
    hits = []
    for comm in Path("/proc").glob("[0-9]*/task/[0-9]*/comm"):
        try:
            if comm.read_text().strip() == f"rt{nonce}"[:15]:
                hits.append(comm.parent.name)
        except OSError:
            continue
    return hits


def _heartbeat(name: str) -> Callable[[Run], str | None]:
    """Something the step started still runs after the step timed out and its worker was stopped: it goes on
    writing to scratch, or a thread it named is still in the host's process table."""
    def check(run: Run) -> str | None:
        path = run.scratch / f"{name}-{run.nonce}"
        time.sleep(0.6)
        first = path.stat().st_size if path.exists() else 0
        time.sleep(1.2)
        second = path.stat().st_size if path.exists() else 0
        alive = _named(run.nonce)
        for tid in alive:  # clean up after an escape: nothing the step started may outlive the test
            with contextlib.suppress(OSError):
                os.kill(int(tid), signal.SIGKILL)
        found = ([f"its writes went on ({first} -> {second} bytes)"] if second > first else []) + (
            [f"host pids {alive} still run"] if alive else [])
        return f"{name} outlived the stopped step: {'; '.join(found)}" if found else None
    return check


def _dotdot(run: Run) -> str | None:
    hits = [p for p in (run.scratch.parent / f"dotdot-{run.nonce}.txt", run.out / "dotdot2.txt") if p.exists()]
    for p in hits:
        p.unlink()
    return f"written: {', '.join(map(str, hits))}" if hits else None


def _proc_cwd(run: Run) -> str | None:
    path = run.host.helper_cwd / f"proc-cwd-{run.nonce}.txt"
    if path.exists():
        path.unlink()
        return f"written through /proc/<hostpid>/cwd: {path}"
    return None


def _shadow(run: Run) -> str | None:
    try:
        lines = [ln for ln in Path("/etc/shadow").read_text().splitlines() if ln.count(":") >= 8]
    except OSError:
        return None
    return "/etc/shadow read" if any(ln in run.output for ln in lines) else None


def _dns(run: Run) -> str | None:
    hits = [ip for ip in run.host.net_ips if ip in run.output]
    return f"resolved {run.host.net_name} to {hits}" if hits else None


def _tls(run: Run) -> str | None:
    return "TLS handshake with an outside server" if run.host.tls and run.host.tls in run.output else None


def _free_port(run: Run) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        run.variables["INBOUND_PORT"] = s.getsockname()[1]


def _inbound(run: Run) -> str | None:
    import socket

    try:
        socket.create_connection(("127.0.0.1", run.variables["INBOUND_PORT"]), timeout=2).close()
    except OSError:
        return None
    return f"the host connected to a port the step listens on ({run.variables['INBOUND_PORT']})"


def _any(*checks: Callable[[Run], str | None]) -> Callable[[Run], str | None]:
    def check(run: Run) -> str | None:
        found = [e for e in (c(run) for c in checks) if e]
        return "; ".join(found) or None
    return check


def _is_root(host: Host) -> bool:
    return os.geteuid() == 0

