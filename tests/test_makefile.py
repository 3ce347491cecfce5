"""``make test`` runs every test: its parallel pass deselects exactly the markers its one-at-a-time pass selects,
``make check`` lints with ruff and leaves out every marked test, and every marker pyproject.toml declares is a serial
or a parallel marker (a new marker left out would be run by neither ``make check``'s exclusion nor the serial pass's
choice)."""

from __future__ import annotations

import itertools
import re
import tomllib

from _pytest.mark.expression import Expression

from rlmlab import PROJECT_ROOT


def _makefile() -> str:
    return (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")


def _markers(name: str) -> set[str]:
    [value] = re.findall(rf"^{name}\s*:?=\s*(.+)$", _makefile(), re.MULTILINE)
    return {m.strip() for m in value.split(" or ")}


def _declared() -> set[str]:
    config = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {m.split(":")[0].strip() for m in config["tool"]["pytest"]["ini_options"]["markers"]}


def _selections() -> dict[str, Expression]:
    """The -m expressions of make check and of make test's two passes, with the Makefile's variables expanded."""
    variables = dict(re.findall(r"^([A-Z_]+)\s*:=\s*(.+)$", _makefile(), re.MULTILINE))
    expand = lambda text: re.sub(r"\$\(([A-Z_]+)\)", lambda m: expand(variables[m.group(1)]), text)  # noqa: E731
    [check] = [ln for ln in _recipe("check") if " -m " in ln]
    first, second = _recipe("test")
    return {name: Expression.compile(expand(re.search(r'-m "([^"]+)"', line).group(1)))
            for name, line in (("check", check), ("test 1", first), ("test 2", second))}


def _picks(selections: dict[str, Expression], marks: set[str]) -> set[str]:
    return {name for name, expr in selections.items() if expr.evaluate(lambda name, **kw: name in marks)}


def _recipe(target: str) -> list[str]:
    recipe = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", _makefile(), re.MULTILINE).group(1)
    return [ln.strip() for ln in recipe.splitlines()]


def test_every_declared_marker_is_a_serial_or_a_parallel_marker_and_never_both():
    declared = _declared()
    serial, parallel = _markers("SERIAL_MARKERS"), _markers("PARALLEL_MARKERS")
    assert declared == serial | parallel and not serial & parallel
    assert _markers("SLOW_MARKERS") == {"$(SERIAL_MARKERS)", "$(PARALLEL_MARKERS)"}
    assert {"local_model", "browser", "server"} <= serial  # the model's threads and the browser hold both cores


def test_make_test_runs_the_parallel_pass_and_the_serial_pass_as_complements():
    lines = _recipe("test")
    assert len(lines) == 2
    assert '-n auto --dist worksteal -m "not ($(SERIAL_MARKERS))"' in lines[0]
    assert lines[1].endswith('-m "$(SERIAL_MARKERS)"') and " -n " not in lines[1]


def test_make_check_lints_with_ruff_then_runs_no_marked_test():
    lint, line = _recipe("check")
    assert lint == "$(VENV)/bin/ruff check"
    assert line.endswith('-n auto --dist worksteal -m "not ($(SLOW_MARKERS))"')
    config = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert any(req.startswith("ruff") for req in config["project"]["optional-dependencies"]["test"])
    assert config["tool"]["ruff"]["lint"]["select"]


def test_whatever_its_markers_a_test_runs_once_in_make_test_and_make_check_runs_it_only_unmarked():
    """Every combination of the declared markers, through the Makefile's own -m expressions as pytest reads them
    (a test is selected by its markers' names alone, and --strict-markers makes an undeclared one an error)."""
    config = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "--strict-markers" in config["tool"]["pytest"]["ini_options"]["addopts"]
    selections, declared = _selections(), sorted(_declared())
    for n in range(len(declared) + 1):
        for marks in map(set, itertools.combinations(declared, n)):
            picks = _picks(selections, marks)
            assert len(picks - {"check"}) == 1, (marks, picks)  # one pass of make test, never both, never none
            assert ("check" in picks) == (not marks), (marks, picks)
            assert "check" not in picks or "test 1" in picks, (marks, picks)
