"""Shared fixtures: a fresh workspace per test, real Rust files, nothing written to the home directory."""

from __future__ import annotations

import contextlib
import glob
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlmlab.tools import ToolCaps, Workspace

RUST_REGISTRY = Path("/usr/share/cargo/registry")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DSPY_CACHEDIR", str(home / "dspy_cache"))


@pytest.fixture(scope="session")
def rlmlab_kernel(tmp_path_factory):
    """The rlmlab kernel installed into a temporary Jupyter path (as `make` installs it into the venv)."""
    from rlmlab.jupyter import install_kernel

    prefix = tmp_path_factory.mktemp("jupyter")
    install_kernel(prefix=str(prefix))
    mp = pytest.MonkeyPatch()
    mp.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))
    yield "rlmlab"
    mp.undo()


@pytest.fixture
def ws() -> Workspace:
    return Workspace(caps=ToolCaps())


@pytest.fixture(scope="session")
def tokio_src() -> Path:
    found = sorted(glob.glob(str(RUST_REGISTRY / "tokio-[0-9]*" / "src")))
    if not found:
        pytest.fail("tokio sources missing: make test installs librust-tokio-dev; run it, or apt-get install it")
    return Path(found[-1])


@pytest.fixture(scope="session")
def rust_file(tokio_src: Path) -> Path:
    return tokio_src / "fs" / "file.rs"


@contextlib.contextmanager
def serving(handler: type) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 (a free port) answering with ``handler`` in a thread; yields its ``/v1`` base
    URL and shuts it down after. The stub OpenAI-compatible servers of the server tests."""
    from http.server import ThreadingHTTPServer

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        thread.join(timeout=10)
