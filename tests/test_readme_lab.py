"""The README's JupyterLab command, run as written, starts as root (containers, CI) (issue 28, item 10)."""

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from rlmlab import PROJECT_ROOT
from helpers import free_port


def readme_lab_command(readme: str, root: bool) -> str:
    """The README's ``.venv/bin/jupyter lab`` command for a root user (the one with --allow-root if the README
    gives one) or for anyone else; commands in fenced blocks first, then inline ones."""
    fenced = [m.group(1).split("#")[0].strip()
              for block in re.findall(r"```(?:bash|sh|console)?\n(.*?)```", readme, re.S)
              for m in re.finditer(r"^(\.venv/bin/jupyter lab\b.*)$", block, re.M)]
    found = fenced or re.findall(r"`(\.venv/bin/jupyter lab\b[^`]*)`", readme)
    assert found, "README.md gives no .venv/bin/jupyter lab command"
    if root:
        return next((c for c in found if "--allow-root" in c), found[0])
    return next((c for c in found if "--allow-root" not in c), found[0])


@pytest.mark.lab
@pytest.mark.skipif(os.geteuid() != 0, reason="the README's root command is checked as root; this user is not root")
def test_the_readmes_jupyterlab_command_starts_as_root(tmp_path):
    command = readme_lab_command((PROJECT_ROOT / "README.md").read_text(encoding="utf-8"), root=True)
    argv = shlex.split(command)
    assert argv[0] == ".venv/bin/jupyter"
    argv[0] = str(Path(sys.executable).parent / "jupyter")  # the venv running the tests is the checkout's .venv
    port, token = free_port(), secrets.token_hex(8)
    # what a test adds to the command: no browser, a free port and a known token, the runtime files in tmp_path
    argv += ["--no-browser", "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={token}"]
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    log = (tmp_path / "lab.log").open("w+")
    proc = subprocess.Popen(argv, cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        status, deadline = None, time.monotonic() + 120
        while status is None and time.monotonic() < deadline:
            if proc.poll() is not None:
                log.seek(0)
                pytest.fail(f"{command!r} exited with {proc.returncode} as root:\n{log.read()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=5) as r:
                    status = json.load(r)
            except OSError:
                time.sleep(0.5)
        assert status is not None and "started" in status, "JupyterLab did not answer within 120 s"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=30) as r:
            assert r.status == 200 and b"JupyterLab" in r.read()
        shutdown = urllib.request.Request(f"http://127.0.0.1:{port}/api/shutdown?token={token}", method="POST")
        urllib.request.urlopen(shutdown, timeout=30).close()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def test_the_command_is_found_for_root_and_for_other_users():
    readme = "x\n```bash\n.venv/bin/jupyter lab a/   # user\n.venv/bin/jupyter lab --allow-root a/  # root\n```\n"
    assert readme_lab_command(readme, root=True) == ".venv/bin/jupyter lab --allow-root a/"
    assert readme_lab_command(readme, root=False) == ".venv/bin/jupyter lab a/"
    assert readme_lab_command("open it (`.venv/bin/jupyter lab`)", root=True) == ".venv/bin/jupyter lab"
