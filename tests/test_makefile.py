"""``make test`` runs every test: its unit pass deselects exactly the markers its end-to-end pass selects, and
every marker pyproject.toml declares is one of them (a new marker left out would be run by neither pass or by
the parallel one)."""

from __future__ import annotations

import re
import tomllib

from rlmlab import PROJECT_ROOT


def _slow_markers() -> set[str]:
    text = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    [value] = re.findall(r"^SLOW_MARKERS\s*:?=\s*(.+)$", text, re.MULTILINE)
    return {m.strip() for m in value.split(" or ")}


def test_every_declared_marker_is_a_slow_marker_of_make_test():
    config = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = {m.split(":")[0].strip() for m in config["tool"]["pytest"]["ini_options"]["markers"]}
    assert declared == _slow_markers()


def test_make_test_runs_the_unit_pass_and_the_marked_pass_as_complements():
    text = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", text, re.MULTILINE).group(1)
    lines = [ln.strip() for ln in recipe.splitlines()]
    assert len(lines) == 2
    assert '-n auto -m "not ($(SLOW_MARKERS))"' in lines[0]
    assert lines[1].endswith('-m "$(SLOW_MARKERS)"') and " -n " not in lines[1]
