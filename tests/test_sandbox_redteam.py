"""Issue 27's red-team corpus: step code that tries to leave the REPL must not, under ``confined`` or ``pyodide``.

Each attempt (tests/redteam_corpus.py, listed in tests/REDTEAM.md) runs as a step in an RLMLabInterpreter and
is judged on the host: files, sockets, signals and processes the host owns, or host canaries (random values
the step never knows) showing in its output. The same attempts run under ``none`` too, where those marked as
escaping today must escape: that proves every such check can see an escape. One worker per backend serves
the module; attempts that may leave it damaged get a fresh one.

On a build without the ``sandbox=`` keyword (main before issue 27) every backend runs unconfined, so the
``confined`` tests of escaping attempts fail there.
"""

from __future__ import annotations

import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rlmlab.sandbox import choose_sandbox
from redteam_checks import PRELUDE, Attempt, Run
from redteam_corpus import ATTEMPTS
from redteam_host import ENV_NAMES, Host, execute, sandbox_used, start

pytestmark = pytest.mark.sandbox

_PROBE = """
import os
found = ''
for c in (HOST_SCRATCH, os.getcwd(), os.environ.get('HOME') or '', '/tmp'):
    try:
        with open(os.path.join(c, '.probe-' + NONCE), 'w') as f:
            f.write('probe')
        found = c
        break
    except Exception:
        pass
print(found)
"""


@dataclass
class Slot:
    """A started worker and where its scratch dir is, as the host and as the worker see it."""

    interp: Any
    scratch: Path  # host path
    worker_scratch: str  # the same directory as the worker names it
    shared: bool  # the probe the worker wrote there showed up on the host
    used: str  # the backend that actually ran (interp.sandbox_used)


class Runner:
    """Workers per (backend, step timeout), started on first use and kept for the module."""

    def __init__(self, host: Host, workspace: Any, root: Path):
        self.host, self.workspace, self.root = host, workspace, root
        self.slots: dict[tuple[str, float | None], Slot] = {}
        self.unavailable: dict[str, str] = {}

    def get(self, backend: str, timeout: float | None) -> Slot:
        if backend in self.unavailable:
            pytest.skip(self.unavailable[backend])
        key = (backend, timeout)
        if key not in self.slots:
            self.slots[key] = self._start(backend, timeout)
        return self.slots[key]

    def _start(self, backend: str, timeout: float | None) -> Slot:
        try:
            interp = start(self.workspace, backend, step_timeout=timeout or 20.0)
        except Exception as exc:
            # a skip only where pyodide is not installed; installed and failing to start is a failure (a broken
            # Pyodide copy of rlmlab once showed here as 14 skips)
            if backend != "pyodide" or choose_sandbox("pyodide", "best_effort").name == "pyodide":
                raise
            self.unavailable[backend] = f"the pyodide backend is unavailable here: {type(exc).__name__}: {exc}"
            pytest.skip(self.unavailable[backend])
        used = sandbox_used(interp)
        if backend == "pyodide" and used != "pyodide":
            interp.shutdown()
            assert choose_sandbox("pyodide", "best_effort").name != "pyodide", f"pyodide is installed, ran {used!r}"
            self.unavailable[backend] = f"asked for pyodide, the interpreter ran {used!r}"
            pytest.skip(self.unavailable[backend])
        if getattr(interp, "scratch_dir", None):
            scratch = Path(interp.scratch_dir)
        else:  # a build without sandboxes: give the unconfined worker a scratch dir of its own
            scratch = Path(tempfile.mkdtemp(prefix=f"scratch-{backend}-", dir=self.root))
        nonce = secrets.token_hex(6)
        printed = execute(interp, _PROBE, {"HOST_SCRATCH": str(scratch), "NONCE": nonce}).strip().splitlines()
        worker_scratch = printed[-1] if printed else ""  # the last line: a backend may print a notice first
        probe = scratch / f".probe-{nonce}"
        shared = probe.exists()
        probe.unlink(missing_ok=True)
        return Slot(interp, scratch, worker_scratch, shared, used)

    def drop(self, backend: str, timeout: float | None) -> None:
        slot = self.slots.pop((backend, timeout), None)
        if slot is not None:
            slot.interp.shutdown()

    def close(self) -> None:
        for key in list(self.slots):
            self.drop(*key)


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """The host side, with canary secrets in the environment the workers start from."""
    h = Host(tmp_path_factory.mktemp("redteam"))
    mp = pytest.MonkeyPatch()
    for name in ENV_NAMES:
        mp.setenv(name, h.canaries[name])
    yield h
    mp.undo()
    h.close()


@pytest.fixture(scope="module")
def runner(host):
    r = Runner(host, host.workspace(), host.root)
    yield r
    r.close()


def run_attempt(runner: Runner, backend: str, attempt: Attempt, out: Path) -> tuple[Run, str | None, Slot]:
    """Run one attempt on ``backend``; the evidence of its escape (None: it did not), decided on the host."""
    slot = runner.get(backend, attempt.timeout)
    if attempt.needs_scratch and not slot.shared:
        message = (f"the worker's scratch dir is not visible to the host (interp.scratch_dir={slot.scratch}, "
                   f"the worker wrote to {slot.worker_scratch!r}), so this attempt's evidence cannot be seen")
        if backend == "pyodide":
            pytest.skip(message)
        pytest.fail(message)
    out.mkdir()
    nonce = secrets.token_hex(6)
    variables = {**runner.host.variables(), "SCRATCH": slot.worker_scratch, "OUT": str(out), "NONCE": nonce}
    run = Run(runner.host, backend, slot.scratch, out, nonce, variables)
    if attempt.setup:
        attempt.setup(run)
    run.before, run.usr1_before = runner.host.counts(), runner.host.usr1
    try:
        run.output = execute(slot.interp, PRELUDE + attempt.code, run.variables)
        evidence = attempt.check(run)
        # Whatever the step did, the REPL answers the next step (a crash or timeout restarted it).
        assert execute(slot.interp, "print(6 * 7)", {}).strip() == "42", f"the REPL did not recover after {attempt.id}"
    finally:
        runner.host.restore_stores()
        if attempt.restart_after:
            runner.drop(backend, attempt.timeout)
        runner.host.ensure_helper()
    return run, evidence, slot


@pytest.mark.parametrize("attempt", ATTEMPTS, ids=[a.id for a in ATTEMPTS])
def test_confined_blocks(runner, attempt, tmp_path):
    _, evidence, slot = run_attempt(runner, "confined", attempt, tmp_path / "out")
    assert evidence is None, f"{attempt.id} escaped under confined (sandbox_used={slot.used!r}): {evidence}"


@pytest.mark.parametrize("attempt", ATTEMPTS, ids=[a.id for a in ATTEMPTS])
def test_pyodide_blocks(runner, attempt, tmp_path):
    _, evidence, slot = run_attempt(runner, "pyodide", attempt, tmp_path / "out")
    assert evidence is None, f"{attempt.id} escaped under pyodide: {evidence}"


# Attempts that the scrubbed environment or the scratch quota stop under `none` as well.
_SCRUBBED = "the environment is scrubbed under every backend, none included (issue 27)"
SCRUBBED_UNDER_NONE = {**dict.fromkeys(("env_os_environ", "env_proc_self_environ", "env_self_memory",
                                        "env_getenv_libc"), _SCRUBBED),
                       "huge_dense": "the scratch quota (256 MB in all) holds under every backend, none included"}


@pytest.mark.parametrize("attempt", ATTEMPTS, ids=[a.id for a in ATTEMPTS])
def test_unconfined_escapes(runner, host, attempt, tmp_path):
    """Under ``none`` the attempts marked as escaping today do: each check can see an escape."""
    if attempt.today is False:
        pytest.skip(f"{attempt.id} does not escape unconfined either (the launcher closes inherited fds; the "
                    "worker stops a step that leaves threads running): it guards against a sandbox regressing")
    if attempt.id in SCRUBBED_UNDER_NONE:
        pytest.skip(f"{attempt.id}: {SCRUBBED_UNDER_NONE[attempt.id]}; on main, before it, this attempt escaped")
    if not attempt.escapes_today(host):
        pytest.skip(f"{attempt.id}: what it needs to escape unconfined is missing on this machine (root, an IPv6 "
                    "loopback, a non-loopback address, or outside DNS/HTTPS)")
    run, evidence, _ = run_attempt(runner, "none", attempt, tmp_path / "out")
    assert evidence, f"{attempt.id} did not escape under none, so its check may never see an escape: {run.output[:2000]}"


def test_redteam_doc_lists_every_attempt():
    doc = (Path(__file__).parent / "REDTEAM.md").read_text(encoding="utf-8")
    missing = [a.id for a in ATTEMPTS if f"| `{a.id}` |" not in doc]
    assert missing == [], f"tests/REDTEAM.md has no row for {missing}"
    assert len(ATTEMPTS) >= 25
