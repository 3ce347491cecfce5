"""``make test`` runs every test: its parallel pass deselects exactly the markers its one-at-a-time pass selects,
``make check`` leaves out every marked test, and every marker pyproject.toml declares is a serial or a parallel
marker (a new marker left out would be run by neither ``make check``'s exclusion nor the serial pass's choice)."""

from __future__ import annotations

import re
import tomllib

from rlmlab import PROJECT_ROOT


def _makefile() -> str:
    return (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")


def _markers(name: str) -> set[str]:
    [value] = re.findall(rf"^{name}\s*:?=\s*(.+)$", _makefile(), re.MULTILINE)
    return {m.strip() for m in value.split(" or ")}


def _recipe(target: str) -> list[str]:
    recipe = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", _makefile(), re.MULTILINE).group(1)
    return [ln.strip() for ln in recipe.splitlines()]


def test_every_declared_marker_is_a_serial_or_a_parallel_marker_and_never_both():
    config = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = {m.split(":")[0].strip() for m in config["tool"]["pytest"]["ini_options"]["markers"]}
    serial, parallel = _markers("SERIAL_MARKERS"), _markers("PARALLEL_MARKERS")
    assert declared == serial | parallel and not serial & parallel
    assert _markers("SLOW_MARKERS") == {"$(SERIAL_MARKERS)", "$(PARALLEL_MARKERS)"}
    assert {"local_model", "browser", "server"} <= serial  # the model's threads and the browser hold both cores


def test_make_test_runs_the_parallel_pass_and_the_serial_pass_as_complements():
    lines = _recipe("test")
    assert len(lines) == 2
    assert '-n auto -m "not ($(SERIAL_MARKERS))"' in lines[0]
    assert lines[1].endswith('-m "$(SERIAL_MARKERS)"') and " -n " not in lines[1]


def test_make_check_runs_no_marked_test():
    [line] = _recipe("check")
    assert line.endswith('-n auto -m "not ($(SLOW_MARKERS))"')
