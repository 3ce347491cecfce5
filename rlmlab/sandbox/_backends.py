"""Confinement backends by name (``confined``, ``none``; ``pyodide`` is registered by rlmlab.executors) and the
choice of one for a run: ``sandbox`` and ``sandbox_policy`` as every executor and experiment config spells them.

A backend turns the worker's command line into a confined one and says what the worker must apply to itself
(Landlock paths, rlimits) once it has started. ``unavailable()`` gives the reason a backend cannot run here, or
None. :func:`choose_sandbox` applies the policy: ``required`` refuses with a one-line
:class:`SandboxUnavailable`, ``best_effort`` falls back to ``none`` with a warning the caller records.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlmlab.errors import ConfigError
from rlmlab.registry import Registry
from rlmlab.sandbox._landlock import landlock_abi

__all__ = ["SANDBOXES", "Backend", "Confined", "Unconfined", "SandboxChoice", "SandboxUnavailable", "choose_sandbox",
           "check_sandbox", "print_warning", "SANDBOX_NAMES", "SANDBOX_POLICIES", "default_sandbox", "register_sandbox"]

SANDBOXES: Registry = Registry("sandbox")
SANDBOX_POLICIES = ("best_effort", "required")
# The shorthands: ``sandbox: required`` is confined that refuses, ``sandbox: best_effort`` confined that
# falls back.
_SHORTHANDS = {"required": ("confined", "required"), "best_effort": ("confined", "best_effort")}

_TMPFS_BYTES = 64 * 1024 * 1024  # the fresh /tmp and /dev/shm inside the sandbox, each
# The user a worker started by the host's root runs as (the kernel's overflow uid, "nobody"): files it creates in
# scratch are nobody's on the host, not root's.
SANDBOX_UID = SANDBOX_GID = 65534
# Defaults for what the worker may use; memory_limit_mb replaces AS. CPU seconds are per worker (a restart after a
# timeout starts a new count), well above any step timeout; a file over FSIZE fails with EFBIG.
DEFAULT_RLIMITS = {"AS": 8 << 30, "CPU": 900, "NPROC": 64, "FSIZE": 256 << 20, "NOFILE": 256, "CORE": 0}


class SandboxUnavailable(ConfigError):
    """``sandbox_policy: required`` and the chosen backend cannot run on this machine."""


@dataclass
class Backend:
    """A confinement backend: how to start a confined worker and what the worker applies to itself."""

    name: str

    def unavailable(self) -> str | None:
        """Why this backend cannot run here (one line), or None."""
        return None

    def wrap(self, argv: list[str], scratch: Path) -> list[str]:
        """The command line that runs ``argv`` confined, with ``scratch`` as its one writable directory."""
        return argv

    def worker_confinement(self, scratch: Path, memory_limit_mb: int | None) -> dict[str, Any] | None:
        """What the worker applies to itself after start-up (JSON for RLMLAB_SANDBOX_CONFINE), or None."""
        return None

    def exit_code(self, code: int) -> int:
        """The worker's own return code (negative: killed by that signal) from the wrapper process's."""
        return code

    def worker_user(self) -> tuple[int, int] | None:
        """(uid, gid) the worker becomes on the host, whose scratch directory must then be theirs; None: the
        host's own user."""
        return None

    def describe(self) -> str:
        return self.name


@dataclass
class Unconfined(Backend):
    """``none``: the worker runs as the user, with the user's files and network; only its environment is scrubbed."""

    name: str = "none"


def _find(program: str) -> str | None:
    return shutil.which(program)


@functools.lru_cache(maxsize=8)
def _works(argv: tuple[str, ...]) -> str | None:
    """None when ``argv`` (a namespace tool running /bin/true) succeeds, else its first error line."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if proc.returncode == 0:
        return None
    return (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]


@functools.lru_cache(maxsize=1)
def python_paths() -> tuple[str, ...]:
    """Directories the worker's Python needs to read: the venv, the base interpreter, the stdlib and
    site-packages, and the rlmlab package itself (not the project around it, whose runs/ hold memory stores)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        paths.add(sysconfig.get_paths()[key])
    paths.add(str(Path(__file__).resolve().parents[1]))  # the rlmlab package
    real = {os.path.realpath(p) for p in paths if p}
    # /usr is bound whole; keep only the outermost of nested paths
    kept = sorted(p for p in real if os.path.isdir(p) and not p.startswith("/usr/") and p != "/usr")
    return tuple(p for p in kept if not any(p != q and p.startswith(q + os.sep) for q in kept))


_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/nsswitch.conf", "/etc/mime.types",
        "/etc/ssl/openssl.cnf")
_DEV = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/full")


@dataclass
class Confined(Backend):
    """``confined``: bubblewrap (or ``unshare`` when bwrap is missing) in new user, PID, network, IPC, UTS and mount
    namespaces, a read-only view of Python and rlmlab, one writable scratch directory, then Landlock (no exec,
    no writes outside scratch, no TCP, no signals out) and rlimits applied by the worker to itself."""

    name: str = "confined"
    tool: str | None = field(default=None, repr=False)  # "bwrap" or "unshare" once probed

    def unavailable(self) -> str | None:
        if not sys.platform.startswith("linux"):
            return f"confined needs Linux namespaces and Landlock; this is {sys.platform}"
        abi = landlock_abi()
        if abi < 1:
            return "Landlock is not enabled in this kernel (needs Linux 5.13+ with lsm=landlock)"
        reasons = []
        probes = (("bwrap", ("--unshare-all", "--die-with-parent", "--ro-bind", "/", "/"),
                   "bwrap not found (apt-get install bubblewrap)"),
                  ("unshare", ("--user", "--map-root-user", "--pid", "--fork", "--net", "--ipc", "--uts", "--mount",
                               "--mount-proc"), "unshare not found"))
        for tool, args, missing in probes:  # bubblewrap first; unshare when bwrap is missing or cannot run
            found = _find(tool)
            if not found:
                reasons.append(missing)
                continue
            why = _works((found, *args, "--", "/bin/true"))
            if why is None:
                self.tool = tool
                return None
            reasons.append(f"{tool} fails ({why})")
        return "; ".join(reasons)

    def describe(self) -> str:
        return f"confined ({self.tool or '?'} + Landlock ABI {landlock_abi()})"

    def exit_code(self, code: int) -> int:
        # bwrap exits 128 + N when the worker dies of signal N (a shell's convention); the worker never exits > 128
        return -(code - 128) if self.tool == "bwrap" and 128 < code < 128 + 65 else code

    def wrap(self, argv: list[str], scratch: Path) -> list[str]:
        if self.tool is None and self.unavailable() is not None:
            raise SandboxUnavailable(f"sandbox: confined is unavailable: {self.unavailable()}")
        if self.tool == "unshare":  # the host's file tree, narrowed by the worker's Landlock rules
            return [_find("unshare") or "unshare", "--user", "--map-root-user", "--pid", "--fork", "--kill-child",
                    "--net", "--ipc", "--uts", "--mount", "--mount-proc", "--", *argv]
        # The host's root starts bwrap in no user namespace (one made by root maps its root to the host's): the
        # worker becomes SANDBOX_UID itself (worker_user) once started. Anyone else gets a user namespace.
        as_root = self.worker_user() is not None
        userns = [] if as_root else ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
        cmd = [_find("bwrap") or "bwrap", "--die-with-parent", "--new-session", *userns, "--unshare-pid",
               "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "rlmlab-sandbox",
               "--ro-bind", "/usr", "/usr"]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                cmd += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                cmd += ["--ro-bind", top, top]
        cmd += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(_TMPFS_BYTES), "--tmpfs", "/tmp",
                "--perms", "1777", "--size", str(_TMPFS_BYTES), "--tmpfs", "/dev/shm"]
        binds = [*_ETC, *python_paths(), str(scratch)]
        if as_root:  # bwrap gives the directories it makes above a bind their source's modes (/root: 0700)
            for parent in _parents(binds):
                cmd += ["--perms", "0755", "--dir", parent]
        # after the fresh /tmp: a checkout or venv under /tmp (a CI clone made with mktemp) stays visible
        for path in binds[:-1]:
            cmd += ["--ro-bind-try", path, path]
        cmd += ["--bind", str(scratch), str(scratch), "--chdir", str(scratch), "--", *argv]
        return cmd

    def worker_user(self) -> tuple[int, int] | None:
        if self.tool == "bwrap" and os.geteuid() == 0:
            return SANDBOX_UID, SANDBOX_GID
        return None

    def worker_confinement(self, scratch: Path, memory_limit_mb: int | None) -> dict[str, Any] | None:
        limits = dict(DEFAULT_RLIMITS)
        if memory_limit_mb:
            limits["AS"] = int(memory_limit_mb) * 1024 * 1024
        spec: dict[str, Any] = {"read": ["/usr", "/proc", *_ETC, *python_paths()],
                                "write": [str(scratch), *_DEV, "/tmp", "/dev/shm"], "rlimits": limits}
        if self.worker_user() is not None:
            spec["user"] = list(self.worker_user())
        if self.tool == "unshare":  # the host's tree: read-only, fresh /tmp /run /dev/shm (bwrap builds its own view)
            spec["seal"] = {"scratch": str(scratch), "fresh": ["/tmp", "/run", "/dev/shm"], "tmpfs_bytes": _TMPFS_BYTES}
        return spec


def _parents(paths: list[str]) -> list[str]:
    """The directories above ``paths`` that bwrap makes, outermost first (not /, /usr, /tmp or /dev: mounted)."""
    out: dict[str, None] = {}
    for path in paths:
        parts = Path(path).parts[1:-1]
        for i in range(1, len(parts) + 1):
            parent = "/" + "/".join(parts[:i])
            if parent not in ("/usr", "/tmp", "/dev", "/proc") and not parent.startswith(("/usr/", "/proc/", "/dev/")):
                out[parent] = None
    return list(out)


@dataclass(frozen=True)
class SandboxChoice:
    """The backend a worker runs under, and the warning to record when it is not the one asked for (or is none)."""

    backend: Backend
    asked: str
    policy: str
    warning: str | None = None

    @property
    def name(self) -> str:
        return self.backend.name


def register_sandbox(name: str):
    """Decorator: register ``factory() -> Backend`` as sandbox ``name``."""
    return SANDBOXES.register(name)


SANDBOXES.register("confined", Confined)
SANDBOXES.register("none", Unconfined)
SANDBOX_NAMES = ("confined", "pyodide", "none", *_SHORTHANDS)


def default_sandbox() -> str:
    """``confined`` on Linux, ``none`` elsewhere (no namespaces or Landlock to use)."""
    return "confined" if sys.platform.startswith("linux") else "none"


def check_sandbox(sandbox: str, sandbox_policy: str = "best_effort") -> tuple[str, str]:
    """(backend name, policy) for an option pair, shorthands resolved; ConfigError naming the accepted values."""
    if sandbox in _SHORTHANDS:
        name, implied = _SHORTHANDS[sandbox]
        return name, implied
    if not isinstance(sandbox, str) or (sandbox not in SANDBOXES and sandbox not in SANDBOX_NAMES):
        raise ConfigError(f"sandbox: {sandbox!r}; use one of {', '.join(SANDBOX_NAMES)}")
    if sandbox_policy not in SANDBOX_POLICIES:
        raise ConfigError(f"sandbox_policy: {sandbox_policy!r}; use best_effort or required")
    return sandbox, sandbox_policy


def choose_sandbox(sandbox: str = "confined", sandbox_policy: str = "best_effort") -> SandboxChoice:
    """The backend to start a worker under. ``required``: :class:`SandboxUnavailable` (one line) when the named
    backend cannot run here. ``best_effort``: ``none`` instead, with a warning. ``none`` itself carries a
    warning too (it confines nothing). Unknown names: ConfigError."""
    name, policy = check_sandbox(sandbox, sandbox_policy)
    if name not in SANDBOXES:
        why = f"no backend is registered as {name!r} (registered: {', '.join(SANDBOXES.names())})"
        backend: Backend | None = None
    else:
        backend = SANDBOXES.make(name)
        why = backend.unavailable()
    if why is None and backend is not None:
        warning = None
        if name == "none":
            warning = ("sandbox: none: model-written code runs unconfined, with your files and network "
                       "(only its environment is scrubbed)")
        return SandboxChoice(backend, name, policy, warning)
    if policy == "required":
        raise SandboxUnavailable(f"sandbox: {name} is required but unavailable: {why}")
    if name != "confined":  # pyodide missing: the next strongest backend before none
        confined = Confined()
        if confined.unavailable() is None:
            return SandboxChoice(confined, name, policy, f"sandbox: {name} unavailable ({why}); running confined")
    return SandboxChoice(Unconfined(), name, policy,
                         f"sandbox: {name} unavailable ({why}); model-written code runs unconfined (none), "
                         "environment scrubbed; set sandbox_policy: required to refuse instead")


def print_warning(warning: str) -> None:
    """Print a sandbox warning as one line on stderr (callers print it once per run)."""
    print(f"rlmlab: warning: {warning}", file=sys.stderr)
