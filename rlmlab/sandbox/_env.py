"""The environment model-written code sees: an allow-list of what Python needs, never a credential.

Every REPL worker and every bounded-tool child gets :func:`scrubbed_env`, under every backend including
``none``; host tools keep the host's environment (a tool that needs a key runs in the host, which has it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["scrubbed_env", "scrub_environ", "is_secret_name", "WORKER_VARIABLES"]

# Names Python or the C library read, copied from the host when set.
_ALLOWED = {"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "PYTHONPATH", "PYTHONHOME", "PYTHONIOENCODING", "PYTHONUTF8",
            "PYTHONHASHSEED", "PYTHONNOUSERSITE", "PYTHONDONTWRITEBYTECODE", "PYTHONFAULTHANDLER", "PYTHONWARNINGS",
            "PYTHONSAFEPATH", "PYTHONMALLOC", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"}
# What the worker itself reads (rlmlab/executors/_worker.py); nothing else named RLMLAB_* crosses.
WORKER_VARIABLES = ("RLMLAB_WORKER_MEMORY_MB", "RLMLAB_SANDBOX_CONFINE", "RLMLAB_WORKER_SITE")
# Never passed, even when a name above or a caller's extra would let it through: credentials and the variables
# of the providers, clouds and tools that hold them.
_SECRET = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|CERT|"
    r"^(OPENAI|ANTHROPIC|AWS|HF|HUGGING|GOOGLE|GCP|GCLOUD|AZURE|GEMINI|VERTEX|COHERE|MISTRAL|GROQ|TOGETHER|"
    r"DEEPSEEK|XAI|REPLICATE|PERPLEXITY|OPENROUTER|FIREWORKS|LITELLM|LANGCHAIN|LANGSMITH|WANDB|GITHUB|GH|GITLAB|"
    r"SSH|GPG|GNUPG|NPM|PYPI|TWINE|DOCKER|KUBE|VAULT|DATABASE|PG|MYSQL|REDIS|SENTRY|SLACK|DISCORD|TELEGRAM)_",
    re.IGNORECASE)
# Interpreter start-up hooks that would run host-chosen code inside the worker: dropped even if a caller allows.
_NEVER = {"PYTHONSTARTUP", "PYTHONBREAKPOINT", "PYTHONINSPECT", "PYTHONUSERBASE", "PYTHONEXECUTABLE",
          "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT"}


def is_secret_name(name: str) -> bool:
    """True for a variable name that looks like a credential (``*KEY*``, ``*TOKEN*``, ``OPENAI_*``, ...)."""
    return bool(_SECRET.search(name)) or name in _NEVER


def _passes(name: str) -> bool:
    return (name in _ALLOWED or name.startswith("LC_") or name in WORKER_VARIABLES) and not is_secret_name(name)


def scrubbed_env(scratch: str | Path | None = None, extra: Mapping[str, str] | None = None,
                 source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a process that runs model-influenced code: the allow-listed names of ``source``
    (default ``os.environ``), ``extra`` (credential-like names are dropped from it too), and HOME, TMPDIR,
    TMP and TEMP set to ``scratch`` when given. Never raises."""
    source = os.environ if source is None else source
    env = {k: v for k, v in source.items() if _passes(k)}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    for k, v in (extra or {}).items():
        if not is_secret_name(k):
            env[k] = str(v)
    if scratch is not None:
        for k in ("HOME", "TMPDIR", "TMP", "TEMP"):
            env[k] = str(scratch)
    return env


def scrub_environ(scratch: str | Path | None = None) -> None:
    """Replace this process's ``os.environ`` by :func:`scrubbed_env` (for a forked child that runs
    model-influenced work: a fork inherits the host's variables). Never raises."""
    keep = scrubbed_env(scratch)
    for name in list(os.environ):
        if name not in keep:
            try:
                del os.environ[name]
            except OSError:  # an odd name the C library refuses to unset: blank it instead
                os.environ[name] = ""
    os.environ.update(keep)
