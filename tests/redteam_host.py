"""The host side of the red-team corpus: canaries, listeners, a helper host process, the harness's start().

Everything here is fake and lives under a pytest tmp dir (or /dev/shm names the corpus removes): the canaries
are random strings no real service accepts, the listeners bind loopback/test ports the test owns.
"""

from __future__ import annotations

import inspect
import os
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path
from typing import Any

# Environment canaries (names follow what providers read, plus an allow-list probe: DATABASE_URL matches no
# *KEY*/*TOKEN* pattern and a PYTHON* name that an allow-list of PYTHON* must still drop).
ENV_NAMES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "RLMLAB_DB_PASSWORD",
             "DATABASE_URL", "PYTHON_KEYRING_TOKEN", "my_service_password")


def canary(kind: str) -> str:
    """A fake secret: 'RTC' + kind + 24 random hex digits (steps search for 'RTC', never know the digits)."""
    return f"RTC{kind}-{secrets.token_hex(12)}"


class Listener:
    """A host socket in a daemon thread counting what reaches it (accepted connections or datagrams)."""

    def __init__(self, family: int, kind: int, address: Any):
        self.sock = socket.socket(family, kind)
        self.sock.bind(address)
        self.address = self.sock.getsockname()
        self.count = 0
        if kind == socket.SOCK_STREAM:
            self.sock.listen(64)
        threading.Thread(target=self._serve, args=(kind,), daemon=True).start()

    def _serve(self, kind: int) -> None:
        while True:
            try:
                if kind == socket.SOCK_STREAM:
                    conn, _ = self.sock.accept()
                    self.count += 1
                    conn.close()
                else:
                    self.sock.recvfrom(65536)
                    self.count += 1
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()


def _maybe_listener(family: int, kind: int, address: Any) -> Listener | None:
    try:
        return Listener(family, kind, address)
    except OSError:  # no IPv6, no such address here: the attempt then has nothing to prove unconfined
        return None


def _outward_address() -> str | None:
    """This host's non-loopback IPv4 address (the UDP connect sends no packet), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def _tls_fingerprint(ip: str, name: str) -> str | None:
    """sha256 of the certificate ``ip``:443 presents for ``name``, or None when the host cannot reach it."""
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    try:
        with socket.create_connection((ip, 443), timeout=5) as raw, ctx.wrap_socket(raw, server_hostname=name) as s:
            return sha256(s.getpeercert(binary_form=True)).hexdigest()
    except OSError:
        return None


_HELPER = """
import os, sys, time
secret = sys.stdin.readline().strip()   # only in this process's heap: /proc/<pid>/mem or ptrace reads it
held = open(sys.argv[1], 'rb')          # an open fd on a canary file: /proc/<pid>/fd/N reads it
print('ready', flush=True)
while True:
    time.sleep(1)
"""


@dataclass
class Host:
    """The host side: canaries, the files and sockets an escape would reach, and a helper host process."""

    root: Path
    canaries: dict[str, str] = field(default_factory=dict)
    helper: subprocess.Popen[str] | None = None
    usr1: int = 0
    stores: dict[str, Path] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.outside = self.root / "outside"
        self.home = self.root / "home"
        (self.home / ".ssh").mkdir(parents=True)
        self.outside.mkdir()
        self.canaries.update({name: canary("ENV" + str(i)) for i, name in enumerate(ENV_NAMES)})
        for kind in ("FILE", "SSH", "MEMDB", "BLOB", "FD", "INH", "HENV", "HARGV", "HMEM"):
            self.canaries[kind] = canary(kind)
        self.canary_file = self.outside / "notes.txt"
        self.canary_file.write_text(f"private notes {self.canaries['FILE']}\n")
        self.ssh_key = self.home / ".ssh" / "id_ed25519"
        self.ssh_key.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{self.canaries['SSH']}\n"
                                "-----END OPENSSH PRIVATE KEY-----\n")
        self.ssh_key.chmod(0o600)
        fd_file = self.outside / "held-open.txt"
        fd_file.write_text(self.canaries["FD"])
        self.held = open(fd_file, "rb")  # the host's own open file, reachable as /proc/<hostpid>/fd/N
        inherit = self.outside / "inherited.txt"
        inherit.write_text(self.canaries["INH"])
        self.inherited_fd = os.open(inherit, os.O_RDONLY)
        os.set_inheritable(self.inherited_fd, True)  # a careless launcher would pass it on to the worker
        self.helper_cwd = self.outside / "helper-cwd"
        self.helper_cwd.mkdir()
        self.start_helper()
        self.unix_path = str(self.root / "host.sock")
        if len(self.unix_path) > 100:  # AF_UNIX paths are at most 108 bytes
            self.unix_path = f"/tmp/rt-{secrets.token_hex(4)}.sock"
        self.abstract_name = f"\0rlmlab-redteam-{secrets.token_hex(6)}"
        self.tcp = Listener(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0))
        self.tcp6 = _maybe_listener(socket.AF_INET6, socket.SOCK_STREAM, ("::1", 0))
        address = _outward_address()
        self.tcp_out = _maybe_listener(socket.AF_INET, socket.SOCK_STREAM, (address, 0)) if address else None
        self.udp = Listener(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0))
        self.unix = Listener(socket.AF_UNIX, socket.SOCK_STREAM, self.unix_path)
        self.abstract = Listener(socket.AF_UNIX, socket.SOCK_STREAM, self.abstract_name)
        self.net_name = "pypi.org"  # the one outside name this machine's network reaches
        try:
            self.net_ips = sorted({a[4][0] for a in socket.getaddrinfo(self.net_name, 443, socket.AF_INET)})
        except OSError:
            self.net_ips = []
        self.tls = _tls_fingerprint(self.net_ips[0], self.net_name) if self.net_ips else None
        self._old_usr1 = signal.signal(signal.SIGUSR1, self._on_usr1)

    def workspace(self) -> Any:
        """The run's Workspace: a blob store and a memory database on host files, each holding a canary. The blob
        store's canary is another run's blob in the same store file (a shared ``--store``): put on the store itself,
        not through this workspace, which holds only its own ``context`` blob."""
        from rlmlab.handles import BlobStore
        from rlmlab.memory import MemoryStore
        from rlmlab.tools import Workspace, attach_memory

        run_dir = self.root / "run"
        self.stores = {"MEMDB": run_dir / "memory.sqlite", "BLOB": run_dir / "blobs.sqlite"}
        ws = Workspace(store=BlobStore(self.stores["BLOB"]))
        self.memory = MemoryStore(self.stores["MEMDB"])
        attach_memory(ws, self.memory)
        self._ws = ws
        self.restore_stores()
        return ws

    def restore_stores(self) -> None:
        """Put the canaries back after an attempt that may have deleted them."""
        import sqlite3

        from rlmlab.memory import MemoryItem

        for key in ("MEMDB", "BLOB"):
            with sqlite3.connect(self.stores[key]) as db:
                db.execute("DROP TABLE IF EXISTS rt_pwned")
            db.close()
        self._ws.store.base.put(f"deploy notes {self.canaries['BLOB']}", name="deploy_notes")
        self._ws.store.put("this run's own context", name="context")
        self._ws.usage.clear()  # each attempt is a run: its own quotas
        if not self.memory.items():
            self.memory.add(MemoryItem("deploy", "how we deploy", f"token {self.canaries['MEMDB']}", "success"))

    def _on_usr1(self, *_: Any) -> None:
        self.usr1 += 1

    def start_helper(self) -> None:
        """(Re)start the helper host process: a canary in its argv, its environment, its heap and an open fd."""
        if self.helper is not None:
            self.helper.kill()
            self.helper.wait()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "RT_HELPER_SECRET": self.canaries["HENV"]}
        self.helper = subprocess.Popen(
            [sys.executable, "-c", _HELPER, str(self.outside / "held-open.txt"), self.canaries["HARGV"]],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=self.helper_cwd)
        assert self.helper.stdin and self.helper.stdout
        self.helper.stdin.write(self.canaries["HMEM"] + "\n")
        self.helper.stdin.flush()
        assert self.helper.stdout.readline().strip() == "ready"

    def ensure_helper(self) -> None:
        """Restart the helper if an attempt killed or traced it (call once no worker can be its tracer)."""
        if self.helper.poll() is not None or self.helper_traced():
            self.start_helper()

    def helper_traced(self) -> bool:
        try:
            status = Path(f"/proc/{self.helper.pid}/status").read_text()
        except OSError:
            return False
        return any(line.startswith("TracerPid:") and line.split()[1] != "0" for line in status.splitlines())

    def counts(self) -> dict[str, int]:
        return {name: (lst.count if lst else 0) for name, lst in (
            ("tcp", self.tcp), ("tcp6", self.tcp6), ("tcp_out", self.tcp_out), ("udp", self.udp),
            ("unix", self.unix), ("abstract", self.abstract))}

    def variables(self) -> dict[str, Any]:
        """What every attempt gets as variables: paths, pids and ports, never a canary's value."""
        return {
            "HOSTPID": os.getpid(), "HELPER_PID": self.helper.pid, "CANARY_FILE": str(self.canary_file),
            "SSH_KEY": str(self.ssh_key), "TCP_PORT": self.tcp.address[1],
            "TCP6_PORT": self.tcp6.address[1] if self.tcp6 else 0,
            "HOSTADDR": list(self.tcp_out.address[:2]) if self.tcp_out else None,
            "UDP_PORT": self.udp.address[1], "UNIX_PATH": self.unix_path, "ABSTRACT_NAME": self.abstract_name,
            "NET_NAME": self.net_name, "NET_IPS": self.net_ips,
            "MEMDB": str(self.stores["MEMDB"]), "BLOBDB": str(self.stores["BLOB"]),
        }

    def close(self) -> None:
        signal.signal(signal.SIGUSR1, self._old_usr1)
        for lst in (self.tcp, self.tcp6, self.tcp_out, self.udp, self.unix, self.abstract):
            if lst:
                lst.close()
        Path(self.unix_path).unlink(missing_ok=True)
        if self.helper is not None:
            self.helper.kill()
            self.helper.wait()
        self.held.close()
        os.close(self.inherited_fd)


def start(workspace: Any, backend: str, *, step_timeout: float = 20.0) -> Any:
    """An RLMLabInterpreter on ``backend`` ("confined", "none", "pyodide"), started.

    Passes ``sandbox=backend, sandbox_policy="required"`` when the constructor takes them; on a build without
    them (today's main) it builds the plain interpreter, so every attempt runs unconfined. Raises what the
    constructor or ``start()`` raises when the backend is unavailable (the caller skips pyodide on that).
    """
    from rlmlab.executors import RLMLabInterpreter

    accepted = inspect.signature(RLMLabInterpreter.__init__).parameters
    kwargs: dict[str, Any] = {"step_timeout": step_timeout}
    if "sandbox" in accepted:
        kwargs["sandbox"] = backend
    if "sandbox_policy" in accepted:
        kwargs["sandbox_policy"] = "required"
    interp = RLMLabInterpreter(workspace, **kwargs)
    interp.start()
    return interp


def sandbox_used(interp: Any) -> str:
    return getattr(interp, "sandbox_used", "none")


def execute(interp: Any, code: str, variables: dict[str, Any]) -> str:
    """The step's output; an exception the step or the interpreter raises is part of the output, as text."""
    try:
        out = interp.execute(code, variables)
    except Exception as exc:  # the step erred or was refused: fine, only host-side evidence counts
        return f"[raised] {type(exc).__name__}: {exc}"
    return "" if out is None else str(out)


def scratch_files(scratch: Path, limit: int = 1 << 20) -> str:
    """The first ``limit`` bytes of every regular file in ``scratch`` (symlinks not followed), as text."""
    parts = []
    for path in scratch.rglob("*"):
        try:
            if path.is_symlink() or not path.is_file():
                continue
            with open(path, "rb") as f:
                parts.append(f.read(limit).decode("latin-1"))
        except OSError:
            continue
    return "\n".join(parts)
