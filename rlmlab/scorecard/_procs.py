"""Run a scorecard's claims in several processes, each pinned to its own cores, and hand back their tables to merge.

The embedded model runs one call at a time, so one scorecard process uses the cores only as far as llama.cpp's
threads scale on a 135M model, which is not far. Several processes, each with its own model on its own cores, run
claims side by side. Claims that share an arm stay in one process, so every arm still runs once; the groups go to
the processes longest first by projected seconds (:func:`partition`). Each process is the same scorecard over its
claims (``python -m rlmlab.scorecard._part``), writing its rows to ``OUT/parts/scorecard.K.json`` after each row
and its runs under ``OUT`` as a single process does; the caller (:func:`~rlmlab.scorecard.run_scorecard`) merges
the parts into ``OUT/scorecard.json``.

Measured on this project's 2-core machine (benchmarks/scorecard_procs.py, ``--quick``, idle, one run): one process
on two threads 954 s, two processes on one core each 890 s (1.07x), the same rows both ways. Each arm ran 1.6-2.0x
slower on one core than on two: prompt prefill, most of an arm's time, does not get faster with a second thread
here, decoding does. So by default a process gets two cores (:func:`auto_procs`: one process on 2 cores); on a
machine with more cores, more processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlmlab.scorecard._cost import Plan

__all__ = ["PARTS_DIR", "Part", "partition", "run_parts", "usable_cores", "auto_procs"]

PARTS_DIR = "parts"


def usable_cores() -> list[int]:
    """The cores this process may run on (its CPU affinity), else ``range(os.cpu_count())``."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def auto_procs(lm: Any) -> int:
    """Processes for ``procs=None``: one per two usable cores for the embedded model given by name (``local`` or
    ``local:PATH``: each process loads its own copy and decodes on its own two cores), else 1 (a scripted LM is
    instant; a served model is not this machine's cores to share out, and an LM object cannot be sent to a
    process)."""
    if isinstance(lm, str) and (lm == "local" or lm.startswith("local:")):
        return max(1, len(usable_cores()) // 2)
    return 1


@dataclass
class Part:
    """One process's share: its claims (names, in the table's order), projected seconds and cores."""

    index: int
    claims: list[str]
    seconds: float
    cores: list[int]

    @property
    def card_file(self) -> str:
        return f"{PARTS_DIR}/scorecard.{self.index}.json"


def partition(plan: Plan, procs: int, cores: Sequence[int] | None = None) -> list[Part]:
    """Split the plan's rows over at most ``procs`` processes: rows that share an arm in one group (the arm runs
    once), groups placed longest first on the process with the least projected time so far. A process is given
    ``cores[k::P]`` of the ``P`` processes used (all cores when there are fewer than processes); empty processes
    are dropped."""
    rows = list(plan.rows)
    root = {r: r for r in rows}

    def find(r: str) -> str:
        while root[r] != r:
            root[r] = root[root[r]]
            r = root[r]
        return r

    for users in plan.shared.values():
        for other in users[1:]:
            if users[0] in root and other in root:
                root[find(other)] = find(users[0])
    groups: dict[str, list[str]] = {}
    for r in rows:
        groups.setdefault(find(r), []).append(r)
    seconds = {g: 0.0 for g in groups}
    for arm in plan.arms:
        users = [u for u in plan.shared.get(arm.label, []) if u in root]
        if users:
            seconds[find(users[0])] += arm.seconds
    cores = list(cores if cores is not None else usable_cores()) or [0]
    procs = max(1, min(procs, len(groups)))
    bins: list[list[str]] = [[] for _ in range(procs)]
    load = [0.0] * procs
    for g in sorted(groups, key=lambda g: (-seconds[g], rows.index(g))):
        k = min(range(procs), key=lambda i: (load[i], i))
        bins[k] += groups[g]
        load[k] += seconds[g]
    used = [(names, sec) for names, sec in zip(bins, load) if names]
    return [Part(k, sorted(names, key=rows.index), round(sec, 1),
                 cores[k::len(used)] if len(cores) >= len(used) else cores) for k, (names, sec) in enumerate(used)]


def run_parts(parts: Sequence[Part], kwargs: dict[str, Any], out: Path,
              log: Callable[[str], None]) -> tuple[list[Path], list[str]]:
    """Run each part as ``python -m rlmlab.scorecard._part`` (``kwargs``: :func:`run_scorecard`'s, JSON-able),
    its output lines passed to ``log`` prefixed ``[pK]``. Returns the part files written and, for each process that
    failed, one line saying so with its last output. Ctrl-C interrupts every process (each keeps its finished
    rows), waits for them and re-raises KeyboardInterrupt."""
    folder = out / PARTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("scorecard.*.json"):
        old.unlink()
    children: list[tuple[Part, subprocess.Popen[str], list[str]]] = []
    for part in parts:
        args = dict(kwargs, claims=part.claims, out=str(out), card_file=str(out / part.card_file), procs=1)
        cmd = [sys.executable, "-m", "rlmlab.scorecard._part", json.dumps({"kwargs": args, "cores": part.cores})]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                                env=dict(os.environ, PYTHONUNBUFFERED="1"))
        children.append((part, proc, []))
    lock = threading.Lock()

    def pump(part: Part, proc: subprocess.Popen[str], tail: list[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip("\n")
            tail[:] = (tail + [line])[-5:]
            with lock:
                log(f"[p{part.index}] {line}")

    readers = [threading.Thread(target=pump, args=c, daemon=True) for c in children]
    for t in readers:
        t.start()
    try:
        for _, proc, _ in children:
            proc.wait()
    except KeyboardInterrupt:
        for _, proc, _ in children:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for _, proc, _ in children:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
        raise
    finally:
        for t in readers:
            t.join(timeout=5)
    failed = [f"process p{part.index} ({', '.join(part.claims)}) exited with status {proc.returncode}: "
              + " | ".join(tail[-2:]) for part, proc, tail in children if proc.returncode]
    return [out / p.card_file for p in parts if (out / p.card_file).is_file()], failed
