"""Run a finished experiment again from its files alone, and compare (``rlmlab experiment rerun``).

The run's ``config.json`` holds the experiment as it ran (its conditions, not the YAML as it reads today) and
the parameters; ``provenance.json`` holds the data files it read. The rerun goes into a new run directory; the
comparison pairs each (condition, phase, task, rollout) row of the two runs (same answer, same verdict) and names
what differs between their environments: rlmlab's commit or a dirty tree, a library version, the GGUF's sha256,
a data file's sha256.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlmlab.errors import ConfigError
from rlmlab.provenance import PROVENANCE_FILE

__all__ = ["Rerun", "rerun_experiment", "compare_runs", "environment_differences"]

_PARAMS = ("suite", "tasks", "rollouts", "workers", "max_iters", "lm_options", "levels", "parity", "test_suite",
           "test_tasks", "decoding", "explore")


@dataclass
class Rerun:
    """The original and rerun directories, the paired rows and what differs between their environments."""

    original: Path
    rerun: Path
    rows: list[dict[str, Any]] = field(default_factory=list)  # key, answers, verdicts, same_answer, same_verdict
    differences: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return all(r["same_answer"] and r["same_verdict"] for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {"original": str(self.original), "rerun": str(self.rerun), "identical": self.identical,
                "rows": self.rows, "differences": self.differences}


def _read(path: Path, what: str) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: missing; rerun needs the run's {what}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None


def _provenance(run_dir: Path) -> dict[str, Any]:
    """A run's provenance.json, or {} for a run written before it existed."""
    path = run_dir / PROVENANCE_FILE
    return _read(path, PROVENANCE_FILE) if path.exists() else {}


def rerun_experiment(run_dir: str | Path, *, runs_dir: str | Path | None = None,
                     progress: bool | str = True) -> Rerun:
    """Run ``run_dir``'s experiment again (into ``runs_dir``, default: beside it) and compare. ConfigError in
    one line when the files cannot say how to run it again: no config.json, an LM given as an object rather
    than a spec, tasks passed in code rather than read from a suite file."""
    from rlmlab.experiments._config import ExperimentConfig
    from rlmlab.experiments._runner import run_experiment

    run_dir = Path(run_dir)
    config = _read(run_dir / "config.json", "config.json")
    prov = _provenance(run_dir)
    params = config["params"]
    lm = params["lm"]
    if lm.startswith("rlmlab/"):  # the model string of an LM object (scripted or embedded), not a spec
        raise ConfigError(f"{run_dir}: the run was given an LM object ({lm}), not a spec such as 'local'; "
                          "rerun needs a spec")
    if prov and not any(f.get("role") == "tasks" for f in prov.get("files", [])):
        raise ConfigError(f"{run_dir}: the run's tasks were passed in code (task_list), not read from a suite "
                          "file; rerun needs them from a file")
    exp = ExperimentConfig.from_dict(config["experiment"])
    kwargs = {k: params[k] for k in _PARAMS if params.get(k) is not None}
    new = run_experiment(exp, lm=lm, conditions=params["conditions"], runs_dir=runs_dir or run_dir.parent,
                         backend=config.get("backend", "threads"), progress=progress, **kwargs)
    return compare_runs(run_dir, new.run_dir)


def _rows(run_dir: Path) -> dict[tuple, dict[str, Any]]:
    from rlmlab.experiments._summary import read_results

    return {(r["condition"], r.get("phase", "stream"), r["task_id"], r.get("rollout", 0)): r
            for r in read_results(run_dir / "results.jsonl")}


def compare_runs(original: str | Path, rerun: str | Path) -> Rerun:
    """Pair the rows of two runs of the same experiment and name their environments' differences."""
    original, rerun = Path(original), Path(rerun)
    before, after = _rows(original), _rows(rerun)
    out = Rerun(original, rerun)
    for key in [*before, *(k for k in after if k not in before)]:
        a, b = before.get(key), after.get(key)
        out.rows.append({
            "condition": key[0], "phase": key[1], "task_id": key[2], "rollout": key[3],
            "answer": a and a.get("answer"), "rerun_answer": b and b.get("answer"),
            "success": a and a.get("success"), "rerun_success": b and b.get("success"),
            "same_answer": a is not None and b is not None and a.get("answer") == b.get("answer"),
            "same_verdict": a is not None and b is not None and a.get("success") == b.get("success")})
    old, new = _provenance(original), _provenance(rerun)
    out.differences = environment_differences(old, new) if old else [
        f"{original / PROVENANCE_FILE} is missing: the original environment is unknown"]
    return out


def environment_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between two provenance records: commit, dirty tree, Python, libraries, the GGUF, data
    files (by sha256), the LM's sampling settings; [] when nothing does."""
    out = []
    e0, e1 = old.get("environment") or {}, new.get("environment") or {}
    for key, label in (("git_commit", "rlmlab commit"), ("git_dirty", "uncommitted changes"),
                       ("python", "Python")):
        if e0.get(key) != e1.get(key):
            out.append(f"{label}: {e0.get(key)} -> {e1.get(key)}")
    l0, l1 = e0.get("libraries") or {}, e1.get("libraries") or {}
    out += [f"{name}: {l0.get(name)} -> {l1.get(name)}" for name in sorted(set(l0) | set(l1))
            if l0.get(name) != l1.get(name)]
    g0 = ((old.get("lm") or {}).get("engine") or {}).get("gguf") or {}
    g1 = ((new.get("lm") or {}).get("engine") or {}).get("gguf") or {}
    if g0.get("sha256") != g1.get("sha256"):
        out.append(f"GGUF sha256: {g0.get('sha256')} -> {g1.get('sha256')}")
    s0, s1 = (old.get("lm") or {}).get("sampling"), (new.get("lm") or {}).get("sampling")
    if s0 != s1:
        out.append(f"LM sampling: {s0} -> {s1}")
    f0 = {f["path"]: f.get("sha256") for f in old.get("files", [])}
    f1 = {f["path"]: f.get("sha256") for f in new.get("files", [])}
    out += [f"{path}: sha256 {f0.get(path)} -> {f1.get(path)}" for path in sorted(set(f0) | set(f1))
            if f0.get(path) != f1.get(path)]
    return out
