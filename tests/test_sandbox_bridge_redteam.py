"""The bridge red-team corpus (issue 52), run as ``make test`` runs it: every attempt, judged on the host side.

``tests/redteam_bridge_corpus.py`` was written by a helper who never saw the fix. Each attempt is step code that
tries to reach the host through host-side code step code may call (DSPy's facade, tool paths, the reply pipe,
host exceptions, the worker's uid). ``tests/redteam_bridge_run.py`` runs each one and judges it from the host
side: canaries, the caller's process, host RSS, and the next step's output. It ran 79 ESCAPED and 23 PARTIAL
of 146 on the code before the fix. Here no attempt may escape, even partly, under ``confined``, nor under
``pyodide`` where the attempt applies (when Pyodide cannot start here, that backend is skipped with the reason).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.sandbox

RUNNER = Path(__file__).with_name("redteam_bridge_run.py")
ROW = re.compile(r"^(\w+)\s+(\w+)\s+(confined|pyodide)\s+(held|PARTIAL|ESCAPED|n/a|error)\b(.*)$")


@pytest.mark.parametrize("backend", ["confined", "pyodide"])
def test_no_attempt_reaches_the_host(backend):
    if backend == "pyodide":
        from rlmlab.executors._pyodide import pyodide_unavailable

        why = pyodide_unavailable()
        if why:
            pytest.skip(f"pyodide cannot start here: {why}")
    proc = subprocess.run([sys.executable, str(RUNNER), "--backend", backend], capture_output=True, text=True,
                          timeout=1200, cwd=RUNNER.parent)
    rows = [m.groups() for m in map(ROW.match, proc.stdout.splitlines()) if m]
    assert proc.returncode == 0 and len(rows) >= 70, (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    bad = [f"{name} ({cls}): {result} {evidence.strip()[:300]}" for name, cls, _, result, evidence in rows
           if result in ("PARTIAL", "ESCAPED", "error")]
    assert not bad, "\n".join(bad)
