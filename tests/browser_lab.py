"""JupyterLab on loopback with a throwaway configuration, driven by Debian's Chromium through Playwright.

Used by ``tests/test_browser.py``, and its Chromium page by ``tests/test_inspect_export.py``. Nothing is
downloaded: the browser is ``/usr/bin/chromium`` (``make test`` installs Debian's package), the server is the
venv's JupyterLab, and every Jupyter directory (config, data, runtime, settings, workspaces) lives under a
temporary root.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
# Flags this machine needs (root, no GPU, no network besides loopback).
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
# Lab plugins that would reach the network or pop up dialogs over the notebook.
DISABLED_PLUGINS = ["@jupyterlab/apputils-extension:announcements", "@jupyterlab/pluginmanager-extension:plugin",
                    "@jupyterlab/extensionmanager-extension:plugin"]


def need_chromium() -> None:
    """Fails the test when Debian's Chromium is not installed."""
    import pytest

    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium (apt-get install chromium)")


@contextmanager
def chromium_page() -> Iterator:
    """A blank 1400 x 1000 page in Debian's headless Chromium, driven by Playwright; the browser is closed after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser.new_page(viewport={"width": 1400, "height": 1000})
        finally:
            browser.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LabServer:
    """A running ``jupyter lab`` serving ``root``; ``url(path)`` carries the token."""

    root: Path
    home: Path
    # Lab's application settings folder (overrides.json); None: the environment's own
    app_settings: Path | None = None
    port: int = field(default_factory=free_port)
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    process: subprocess.Popen | None = None
    log_path: Path | None = None

    def start(self, timeout: float = 120.0) -> "LabServer":
        config = self.home / "config"
        (config / "labconfig").mkdir(parents=True, exist_ok=True)
        (config / "labconfig" / "page_config.json").write_text(
            json.dumps({"disabledExtensions": {name: True for name in DISABLED_PLUGINS}}))
        # Render every cell (JupyterLab 4 detaches cells scrolled out of view by default).
        tracker = self.home / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
        tracker.parent.mkdir(parents=True, exist_ok=True)
        tracker.write_text(json.dumps({"windowingMode": "none"}))
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), JUPYTER_RUNTIME_DIR=str(self.home / "runtime"),
                   JUPYTER_DATA_DIR=str(self.home / "data"), JUPYTER_PLATFORM_DIRS="1")
        self.log_path = self.home / "jupyterlab.log"
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={self.root}", f"--LabApp.user_settings_dir={self.home / 'settings'}",
               f"--LabApp.workspaces_dir={self.home / 'workspaces'}", "--LabApp.news_url=",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly"]
        if self.app_settings is not None:
            cmd.append(f"--LabApp.app_settings_dir={self.app_settings}")
        if os.geteuid() == 0:  # CI runs as root
            cmd.append("--allow-root")
        self.process = subprocess.Popen(cmd, env=env, stdout=self.log_path.open("w"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.process.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(self.url("api/status"), timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        raise TimeoutError(f"jupyter lab did not answer on port {self.port} within {timeout:.0f} s:\n{self.log()}")

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"http://127.0.0.1:{self.port}/{path}{sep}token={self.token}"

    def api(self, method: str, path: str) -> object:
        """A call to the server's REST API (``GET api/sessions``); the decoded JSON reply, or None."""
        request = urllib.request.Request(self.url(path), method=method)
        with urllib.request.urlopen(request, timeout=30) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> int:
        """Shut down every kernel the server runs (as Kernel > Shut Down All Kernels); returns how many."""
        kernels = self.api("GET", "api/kernels") or []
        for k in kernels:
            self.api("DELETE", f"api/kernels/{k['id']}")
        return len(kernels)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path and self.log_path.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
