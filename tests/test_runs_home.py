"""One runs directory wherever a run starts: the CLI from the checkout's top, a guide from notebooks/ (JupyterLab's
working directory), or anywhere with $RLMLAB_RUNS_DIR."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from rlmlab import PROJECT_ROOT, runs_home
from rlmlab._paths import RUNS_ENV


def test_runs_home_is_the_checkouts_runs_from_any_folder_of_it(monkeypatch):
    monkeypatch.delenv(RUNS_ENV, raising=False)
    for folder in (PROJECT_ROOT, PROJECT_ROOT / "notebooks", PROJECT_ROOT / "rlmlab" / "jupyter"):
        monkeypatch.chdir(folder)
        assert runs_home() == PROJECT_ROOT / "runs", folder


def test_runs_home_outside_the_checkout_is_the_working_directorys_and_the_env_var_wins(monkeypatch, tmp_path):
    monkeypatch.delenv(RUNS_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert runs_home() == tmp_path.resolve() / "runs"
    monkeypatch.setenv(RUNS_ENV, str(tmp_path / "shared"))
    monkeypatch.chdir(PROJECT_ROOT / "notebooks")
    assert runs_home() == (tmp_path / "shared").resolve()


@pytest.mark.slow
def test_run_experiment_and_the_cli_default_to_runs_home(monkeypatch, tmp_path):
    from rlmlab.cli import main
    from rlmlab.experiments import run_experiment

    monkeypatch.setenv(RUNS_ENV, str(tmp_path / "shared"))
    monkeypatch.chdir(tmp_path)
    run = run_experiment("E1", lm="scripted:probe", suite="arith", tasks=1, progress=False)
    assert run.run_dir.parent == (tmp_path / "shared").resolve()
    for command in (["rlm", "run"], ["experiment", "run"], ["experiment", "notebook"], ["demo"]):
        said = " ".join(CliRunner().invoke(main, [*command, "--help"]).output.split())
        assert "--runs-dir" in said and "Default: $RLMLAB_RUNS_DIR, else the checkout's runs/" in said, command
