"""Notebook parameters as papermill passes them, and finding a finished run of the same parameters.

papermill's ``-p conditions '["a"]'`` (and ``-p conditions a,b``) arrive as strings; :func:`as_list` turns
every form a user may type into the list the runner wants, so a notebook calls one helper instead of parsing.
:func:`finished_run` is how a guide notebook's default ``run_dir`` reopens a run already on disk instead of
starting another one of the same parameters; :func:`latest_run` is how a scorecard measured in parts continues an
arm that was cut short (or reads one that finished) instead of running it again from its first task.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rlmlab.errors import ConfigError

__all__ = ["as_list", "finished_run", "latest_run", "pick_run"]


def as_list(value: Any, name: str = "value", of: type = str) -> list[Any] | None:
    """A list parameter from a list or tuple, a JSON list (``'["a", "b"]'``), a comma-separated string
    (``"a, b"``) or one item (``"a"``); None, "" and [] give None (the caller's default). ``of=int`` makes a
    list of integers (``levels``: ``[1, 2]``, ``"[1, 2]"``, ``"1,2"``, ``2``).

    ConfigError in one line naming ``name`` for anything else (a dict, JSON that is not a list, an item that is
    not ``of``, an empty item as in ``"a,,b"``).
    """
    if value is None or (isinstance(value, (str, list, tuple)) and not value):
        return None
    if of is int:
        return _int_list(value, name)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError as exc:
                raise ConfigError(f"{name}: {value!r} is not a JSON list ({exc.msg} at column {exc.colno}); "
                                  'expected ["a", "b"] or a,b') from None
        else:
            value = [part.strip() for part in text.split(",")]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{name}: {value!r}; expected a list of names, a JSON list or a comma-separated string")
    return [v.strip() for v in value] or None


def _int_list(value: Any, name: str) -> list[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    if isinstance(value, str) and not value.strip().startswith("["):
        value = [part.strip() for part in value.split(",")]
    elif isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ConfigError(f"{name}: {value!r} is not a JSON list ({exc.msg} at column {exc.colno}); "
                              "expected [1, 2] or 1,2") from None
    if isinstance(value, (list, tuple)):
        out = []
        for v in value:
            if isinstance(v, str) and v.strip().lstrip("-").isdigit():
                v = int(v)
            if not isinstance(v, int) or isinstance(v, bool):
                break
            out.append(v)
        else:
            return out
    raise ConfigError(f"{name}: {value!r}; expected a list of integers, a JSON list or a comma-separated string")


def _runs_of(runs_dir: str | Path, experiment_id: str, params: dict[str, Any]) -> Iterator[Path]:
    """Run directories under ``runs_dir`` of ``experiment_id`` whose ``config.json`` has exactly ``params``;
    unreadable or foreign directories are skipped, never an error (this only decides whether to reopen a run)."""
    root = Path(runs_dir)
    if not root.is_dir():
        return
    for config in root.glob(f"{experiment_id}-*/config.json"):
        try:
            doc = json.loads(config.read_text(encoding="utf-8"))
            if doc.get("experiment", {}).get("id") != experiment_id or doc.get("params") != params:
                continue
        except (OSError, ValueError, AttributeError):
            continue
        yield config.parent


def finished_run(runs_dir: str | Path, experiment_id: str, params: dict[str, Any]) -> Path | None:
    """The newest run directory under ``runs_dir`` of ``experiment_id`` whose parameters equal ``params`` and
    that finished (its ``summary.json`` is at least as new as its ``results.jsonl``); None if there is none.

    Unreadable or foreign directories are skipped, never an error: this only decides whether to reuse.
    """
    found: list[tuple[float, str, Path]] = []
    for run_dir in _runs_of(runs_dir, experiment_id, params):
        summary, results = run_dir / "summary.json", run_dir / "results.jsonl"
        try:
            done = summary.stat().st_mtime
            if results.is_file() and results.stat().st_mtime > done:
                continue  # rows written after the last summary: a run cut short on resume
        except OSError:
            continue
        found.append((done, run_dir.name, run_dir))
    return max(found)[2] if found else None


def latest_run(runs_dir: str | Path, experiment_id: str, params: dict[str, Any],
               commit: str | None) -> Path | None:
    """The newest run directory under ``runs_dir`` of ``experiment_id`` with exactly ``params``, finished or cut
    short, that was run by git commit ``commit`` on a clean tree (its ``env.json``); None if there is none, or if
    ``commit`` is None (a tree with uncommitted changes: nothing vouches that the code is the one that ran).

    Like :func:`finished_run`, unreadable or foreign directories are skipped, never an error.
    """
    if commit is None:
        return None
    found: list[tuple[float, str, Path]] = []
    for run_dir in _runs_of(runs_dir, experiment_id, params):
        try:
            env = json.loads((run_dir / "env.json").read_text(encoding="utf-8"))
            if env.get("git_commit") != commit or env.get("git_dirty") is not False:
                continue
            found.append(((run_dir / "config.json").stat().st_mtime, run_dir.name, run_dir))
        except (OSError, ValueError, AttributeError):
            continue
    return max(found)[2] if found else None


def pick_run(experiment_id: str, params: dict[str, Any], runs_dir: str | Path | None, run_dir: str | Path | None,
             resume: str | None, reuse: bool, commit: str | None) -> tuple[Path, str, str | None]:
    """``(run_dir, run_id, resume)`` for :func:`~rlmlab.experiments.run_experiment`: ``run_dir`` exactly (continued
    if it holds a run); else ``resume``'s run; else with ``reuse`` the newest finished run of ``params``, or with a
    ``commit`` the newest run of ``params`` that commit made (:func:`latest_run`), each printed; else a new run.
    ``runs_dir`` None: :func:`~rlmlab._paths.runs_home`."""
    from rlmlab._paths import runs_home
    from rlmlab.executors import new_run_id

    runs_dir = runs_home() if runs_dir is None else runs_dir

    if run_dir is not None:
        run_dir = Path(run_dir)
        return run_dir, run_dir.name, run_dir.name if (run_dir / "config.json").exists() else None
    if not resume and reuse and (previous := finished_run(runs_dir, experiment_id, params)) is not None:
        print(f"reusing {previous.resolve()}: a finished {experiment_id} run of the same parameters "
              "(reuse=False, a notebook's fresh=True, starts a new one)", flush=True)
        return previous, previous.name, previous.name
    if not resume and (previous := latest_run(runs_dir, experiment_id, params, commit)) is not None:
        print(f"continuing {previous.resolve()}: a {experiment_id} run of the same parameters at this commit",
              flush=True)
        return previous, previous.name, previous.name
    run_id = resume or new_run_id(experiment_id)
    return Path(runs_dir) / run_id, run_id, resume
