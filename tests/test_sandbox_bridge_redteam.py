"""The bridge red-team corpus (issue 52), run as ``make test`` runs it: every attempt, judged on the host side.

``tests/redteam_bridge_corpus.py`` was written by a helper who never saw the fix. Each attempt is step code that
tries to reach the host through host-side code step code may call (DSPy's facade, tool paths, the reply pipe,
host exceptions, the worker's uid). ``tests/redteam_bridge_run.py`` runs each one and judges it from the host
side: canaries, the caller's process, host RSS, and the next step's output. It ran 79 ESCAPED and 23 PARTIAL
of 146 on the code before the fix. Here no attempt may escape, even partly, under ``confined``, nor under
``pyodide`` where the attempt applies (when Pyodide cannot start here, that backend is skipped with the reason).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.sandbox

RUNNER = Path(__file__).with_name("redteam_bridge_run.py")
# Under pyodide, make test leaves out what runs on the host the same way whichever backend the step ran under (the
# DSPy facade attempts: DSPy parsed their strings on the host, not in the REPL) and the two floods of a 96-200 MiB
# argument, which Pyodide takes 60-100 s to build in WebAssembly; `python tests/redteam_bridge_run.py` runs them
# all on both backends (about 9 minutes).
PYODIDE_SLOW = {"pipe_huge_tool_arg", "pipe_llm_query_huge"}
ROW = re.compile(r"^(\w+)\s+(\w+)\s+(confined|pyodide)\s+(held|PARTIAL|ESCAPED|n/a|error)\b(.*)$")


# Each backend's attempts in two halves, each run by a runner of its own: make test's parallel pass then shares them
# out between its workers (the whole pyodide corpus was one test of 70-90 s that could end a pass alone).
SHARDS = 2


@pytest.mark.parametrize("shard", range(SHARDS))
@pytest.mark.parametrize("backend", ["confined", "pyodide"])
def test_no_attempt_reaches_the_host(backend, shard):
    if backend == "pyodide":
        from rlmlab.executors._pyodide import pyodide_unavailable

        why = pyodide_unavailable()
        if why:
            pytest.skip(f"pyodide cannot start here: {why}")
    names = _names(backend)[shard::SHARDS]
    # one try of each race here (the runner retries a held race up to 3 times, to give it every chance to leak)
    proc = subprocess.run([sys.executable, str(RUNNER), "--backend", backend, *names], capture_output=True,
                          text=True, timeout=1200, cwd=RUNNER.parent, env={**os.environ, "RT_BRIDGE_TRIES": "1"})
    rows = [m.groups() for m in map(ROW.match, proc.stdout.splitlines()) if m]
    assert proc.returncode == 0 and len(rows) >= len(names) > 0, \
        (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    bad = [f"{name} ({cls}): {result} {evidence.strip()[:300]}" for name, cls, _, result, evidence in rows
           if result in ("PARTIAL", "ESCAPED", "error")]
    assert not bad, "\n".join(bad)


def _names(backend: str) -> list[str]:
    """The attempts a backend's runners are given: every one under confined (each prints a row, n/a where it does
    not apply); under pyodide those that apply and run in the REPL, less the two floods."""
    sys.path.insert(0, str(RUNNER.parent))
    from redteam_bridge_corpus import by_name

    attempts = by_name().values()
    if backend == "confined":
        return sorted(a.name for a in attempts)
    return [a.name for a in attempts
            if "pyodide" in a.backends and a.cls != "dspy_facade" and a.name not in PYODIDE_SLOW]
