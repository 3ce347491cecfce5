"""Where model-written code runs: confinement backends by name and the environment it may see.

``SANDBOXES`` holds the backends (``confined``: namespaces + Landlock + rlimits; ``none``: unconfined;
``pyodide``: registered by rlmlab.executors); :func:`choose_sandbox` applies ``sandbox`` / ``sandbox_policy``;
:func:`scrubbed_env` is the allow-listed environment of every worker and bounded-tool child. A leaf-level package
(registry, errors and the stdlib only) so that tools and executors can both use it. The backends load on first
use: the REPL worker imports this package for :func:`confine_self` alone, and its start time counts.
"""

from typing import Any

from rlmlab.sandbox._env import WORKER_VARIABLES, is_secret_name, scrub_environ, scrubbed_env
from rlmlab.sandbox._quota import SCRATCH_QUOTA_BYTES, scratch_bytes, watch_scratch
from rlmlab.sandbox._landlock import (
    apply_rlimits,
    confine_self,
    drop_capabilities,
    forbid_new_processes,
    landlock_abi,
    seal_host_tree,
)

__all__ = ["SANDBOXES", "Backend", "Confined", "SandboxChoice",
           "SandboxUnavailable", "check_sandbox", "choose_sandbox", "default_sandbox", "print_warning",
           "register_sandbox", "scrubbed_env", "scrub_environ",
           "confine_self", "apply_rlimits", "seal_host_tree", "drop_capabilities",
           "forbid_new_processes", "SCRATCH_QUOTA_BYTES", "scratch_bytes", "watch_scratch"]

_LAZY = {"SANDBOXES", "SANDBOX_NAMES", "SANDBOX_POLICIES", "Backend", "Confined", "Unconfined", "SandboxChoice",
         "SandboxUnavailable", "check_sandbox", "choose_sandbox", "default_sandbox", "print_warning",
         "register_sandbox"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from rlmlab.sandbox import _backends

        return getattr(_backends, name)
    raise AttributeError(f"module 'rlmlab.sandbox' has no attribute {name!r}")
