"""Where model-written code runs: confinement backends by name and the environment it may see.

``SANDBOXES`` holds the backends (``confined``: namespaces + Landlock + rlimits; ``none``: unconfined;
``pyodide``: registered by rlmlab.executors); :func:`choose_sandbox` applies ``sandbox`` / ``sandbox_policy``;
:func:`scrubbed_env` is the allow-listed environment of every worker and bounded-tool child. A leaf-level package
(registry, errors and the stdlib only) so that tools and executors can both use it.
"""

from rlmlab.sandbox._backends import (
    SANDBOX_NAMES,
    SANDBOX_POLICIES,
    SANDBOXES,
    Backend,
    Confined,
    SandboxChoice,
    SandboxUnavailable,
    Unconfined,
    check_sandbox,
    choose_sandbox,
    default_sandbox,
    print_warning,
    register_sandbox,
)
from rlmlab.sandbox._env import WORKER_VARIABLES, is_secret_name, scrub_environ, scrubbed_env
from rlmlab.sandbox._landlock import apply_rlimits, confine_self, landlock_abi

__all__ = ["SANDBOXES", "SANDBOX_NAMES", "SANDBOX_POLICIES", "Backend", "Confined", "Unconfined", "SandboxChoice",
           "SandboxUnavailable", "check_sandbox", "choose_sandbox", "default_sandbox", "print_warning",
           "register_sandbox", "scrubbed_env", "scrub_environ", "is_secret_name", "WORKER_VARIABLES",
           "confine_self", "apply_rlimits", "landlock_abi"]
