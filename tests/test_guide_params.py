"""What the guide notebooks rely on, without a notebook: list parameters in every form papermill passes them,
reopening a finished run of the same parameters, the run browser's static "how to open" lines, and the
kernel-status line every displayed widget carries."""

from __future__ import annotations

import json
import os

import pytest

from rlmlab.errors import ConfigError
from rlmlab.experiments import as_list, finished_run, run_experiment


@pytest.mark.parametrize("value, expected", [
    (["grammar_templates"], ["grammar_templates"]),
    (("free", "grammar"), ["free", "grammar"]),
    ('["grammar_templates"]', ["grammar_templates"]),  # papermill -p conditions '["grammar_templates"]'
    ('["free", "grammar"]', ["free", "grammar"]),
    ("free,grammar", ["free", "grammar"]),
    (" free , grammar ", ["free", "grammar"]),
    ("grammar_templates", ["grammar_templates"]),
    ("", None), (None, None), ([], None),
])
def test_as_list_takes_a_list_a_json_list_or_a_comma_separated_string(value, expected):
    assert as_list(value, "conditions") == expected


@pytest.mark.parametrize("value, says", [
    ('["free", ', "not a JSON list"), ("[1, 2]", "expected a list of names"), (3, "expected a list"),
    ("free,,grammar", "expected a list"), ({"a": 1}, "expected a list"),
])
def test_as_list_refuses_other_values_in_one_line_naming_the_parameter(value, says):
    with pytest.raises(ConfigError) as info:
        as_list(value, "conditions")
    text = str(info.value)
    assert text.startswith("conditions: ") and says in text and "\n" not in text


@pytest.mark.parametrize("value, expected", [
    ([1, 2], [1, 2]), ("[1, 2]", [1, 2]), ("1,2", [1, 2]), ("2", [2]), (2, [2]), (None, None), ("", None),
])
def test_as_list_of_int_takes_levels_in_every_form(value, expected):
    assert as_list(value, "levels", int) == expected


@pytest.mark.parametrize("value", ["[1, \"a\"]", "a,b", "[1,", True, 1.5, {"a": 1}])
def test_as_list_of_int_refuses_what_is_not_integers(value):
    with pytest.raises(ConfigError, match=r"^levels: .*expected"):
        as_list(value, "levels", int)


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_json_string_of_conditions_runs_those_conditions(tmp_path):
    run = run_experiment("E13", lm="scripted:probe", suite="arith", tasks=1, runs_dir=tmp_path, progress=False,
                         conditions=as_list('["grammar_templates"]', "conditions"))
    assert {r["condition"] for r in json.loads("[" + ",".join(
        (run.run_dir / "results.jsonl").read_text().splitlines()) + "]")} == {"grammar_templates"}


@pytest.mark.slow  # two experiment runs (about 1 s)
def test_reuse_reopens_the_newest_finished_run_of_the_same_parameters(tmp_path, capsys):
    kw = dict(lm="scripted:probe", suite="arith", tasks=1, runs_dir=tmp_path, progress=False)
    first = run_experiment("E1", reuse=True, **kw)
    assert "reusing" not in capsys.readouterr().out
    results = (first.run_dir / "results.jsonl").read_text()
    again = run_experiment("E1", reuse=True, **kw)
    assert again.run_dir == first.run_dir and (first.run_dir / "results.jsonl").read_text() == results
    said = capsys.readouterr().out
    assert f"reusing {first.run_dir.resolve()}" in said and "fresh=True" in said
    # other parameters, or reuse off (a notebook's fresh=True), start a new run
    other = run_experiment("E1", reuse=True, **{**kw, "tasks": 2})
    fresh = run_experiment("E1", reuse=False, **kw)
    assert len({first.run_dir, other.run_dir, fresh.run_dir}) == 3
    assert len(list(tmp_path.glob("E1-*/summary.json"))) == 3
    # the newest finished one is reused; one cut short (rows after its summary) is not
    assert run_experiment("E1", reuse=True, **kw).run_dir == fresh.run_dir
    st = (fresh.run_dir / "summary.json").stat()
    os.utime(fresh.run_dir / "results.jsonl", (st.st_atime, st.st_mtime + 5))
    assert finished_run(tmp_path, "E1", json.loads((first.run_dir / "config.json").read_text())["params"]) \
        == first.run_dir


def test_finished_run_skips_foreign_and_broken_directories(tmp_path):
    (tmp_path / "E1-broken").mkdir()
    (tmp_path / "E1-broken" / "config.json").write_text("{not json")
    (tmp_path / "E1-nosummary").mkdir()
    (tmp_path / "E1-nosummary" / "config.json").write_text(json.dumps({"experiment": {"id": "E1"}, "params": {}}))
    assert finished_run(tmp_path, "E1", {}) is None
    assert finished_run(tmp_path / "missing", "E1", {}) is None


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_the_run_browser_static_form_says_how_to_open_each_row_with_an_absolute_run_dir(tmp_path, monkeypatch):
    from rlmlab.jupyter import RunBrowser, TrajectoryExplorer

    monkeypatch.chdir(tmp_path)
    run = run_experiment("E13", lm="scripted:probe", suite="arith", tasks=2, runs_dir="runs", progress=False,
                         conditions=["grammar", "grammar_templates"])
    assert not run.run_dir.is_absolute()  # a relative run_dir, as a notebook's parameter gives it
    browser = RunBrowser(run.run_dir)
    html = browser.static_html()
    absolute = str((tmp_path / run.run_dir).resolve())
    for row in browser.rows:
        code = f"TrajectoryExplorer({absolute!r}, {row['task_id']!r}, condition={row['condition']!r})"
        assert code.replace("'", "&#x27;") in html
    # the printed line opens that row's trajectory from another working directory
    monkeypatch.chdir("/")
    row = browser.rows[-1]
    explorer = eval(browser.open_code(len(browser.rows) - 1), {"TrajectoryExplorer": TrajectoryExplorer})
    assert explorer.row["task_id"] == row["task_id"] and explorer.row["condition"] == row["condition"]


def test_a_displayed_widget_carries_the_kernel_status_line_first(tmp_path):
    from rlmlab.jupyter import RunBrowser
    from rlmlab.jupyter._status import DISCONNECTED

    run = run_experiment("E1", lm="scripted:probe", suite="arith", tasks=1, runs_dir=tmp_path, progress=False)
    browser = RunBrowser(run.run_dir)
    bundle = browser._repr_mimebundle_()
    status = browser.view.children[0]
    assert "rlmlab-kernel-status" in status._dom_classes and "rlmlab-frame" in browser.view._dom_classes
    # shown by ipywidgets' own class for a view whose model has no live comm
    assert DISCONNECTED in status.value and ".rlmlab-frame.jupyter-widgets-disconnected" in status.value
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == browser.view.model_id
    browser.select(0)  # a refresh sets the children again: the line stays first, once
    assert browser.view.children[0] is status and browser.view.children.count(status) == 1
    # an embedded widget (the explorer inside the browser) has no line of its own
    assert not any("rlmlab-kernel-status" in c._dom_classes for c in browser.explorer.view.children)


def test_a_finished_teach_run_of_the_same_config_is_read_back_instead_of_run_again(tmp_path, capsys):
    from rlmlab.teach import finished_teach, load_run_config, run_teach

    config = load_run_config().with_overrides(provider="demo", limit=3, modes=["reference"], max_turns=2,
                                              traces_out=str(tmp_path / "teach" / "traces.json"))
    assert finished_teach(config) is None
    first = run_teach(config, reuse=True)
    assert "reusing" not in capsys.readouterr().out
    again = run_teach(config, reuse=True)
    assert f"reusing {tmp_path / 'teach'}" in capsys.readouterr().out
    assert again.rows == first.rows and again.items == 3
    assert {k: [(t.qid, [x.answer for x in t.turns]) for t in v] for k, v in again.traces.items()} == \
        {k: [(t.qid, [x.answer for x in t.turns]) for t in v] for k, v in first.traces.items()}
    assert finished_teach(config.with_overrides(limit=2)) is None  # another config: run it
    (tmp_path / "teach" / "traces.reference.rts.json").unlink()  # cut short: run it
    assert finished_teach(config) is None


def test_the_teach_run_prints_a_flushed_line_per_item_and_arm(tmp_path, capsys):
    from rlmlab.teach import load_run_config, run_teach

    config = load_run_config().with_overrides(provider="demo", limit=2, modes=["reference"],
                                              traces_out=str(tmp_path / "traces.json"))
    run_teach(config, progress="lines")
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        f"[{i + 1}/6] reference/{arm} q{q}" for i, (arm, q) in enumerate(
            (arm, q) for arm in ("single", "try_again", "rts") for q in (1, 2))]


def _at_commit(monkeypatch, sha: str, dirty: bool = False) -> None:
    # what the runner reads of git: the commit a run records in env.json and whether the tree was clean
    from rlmlab.experiments import _runner

    real = _runner.environment
    monkeypatch.setattr(_runner, "environment", lambda *a, **k: {**real(*a, **k), "git_commit": sha,
                                                                  "git_dirty": dirty})


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_resume_latest_continues_a_run_cut_short_at_the_same_commit_and_runs_only_its_remaining_tasks(
        tmp_path, monkeypatch, capsys):
    from rlmlab._faults import fault_hook
    from rlmlab.errors import RunInterrupted

    _at_commit(monkeypatch, "a" * 40)
    kw = dict(lm="scripted:probe", suite="arith", tasks=3, runs_dir=tmp_path, progress=False)
    rows_written = []

    def ctrl_c_after_the_first_row(name: str) -> None:
        if name == "results:row":
            rows_written.append(name)
            if len(rows_written) == 1:
                raise KeyboardInterrupt

    with fault_hook(ctrl_c_after_the_first_row), pytest.raises(RunInterrupted, match="after 1 of 3 tasks"):
        run_experiment("E1", **kw)
    (cut,) = tmp_path.glob("E1-*")
    first_row = (cut / "results.jsonl").read_text().splitlines()
    assert len(first_row) == 1
    with fault_hook(rows_written.append):
        done = run_experiment("E1", resume_latest=True, **kw)
    assert done.run_dir == cut and f"continuing {cut.resolve()}" in capsys.readouterr().out
    lines = (cut / "results.jsonl").read_text().splitlines()
    assert len(lines) == 3 and lines[0] == first_row[0]  # the finished task was not run again
    assert rows_written.count("results:row") == 1 + 2
    # finished: read again, nothing runs
    rows_written.clear()
    with fault_hook(rows_written.append):
        assert run_experiment("E1", resume_latest=True, **kw).run_dir == cut
    assert "results:row" not in rows_written and (cut / "results.jsonl").read_text().splitlines() == lines


@pytest.mark.parametrize("later", ["another commit", "uncommitted changes", "other parameters"])
@pytest.mark.slow
def test_resume_latest_starts_afresh_when_the_code_or_the_parameters_differ(tmp_path, monkeypatch, capsys, later):
    kw = dict(lm="scripted:probe", suite="arith", tasks=1, runs_dir=tmp_path, progress=False)
    _at_commit(monkeypatch, "a" * 40)
    first = run_experiment("E1", **kw)
    if later == "another commit":
        _at_commit(monkeypatch, "b" * 40)
    elif later == "uncommitted changes":
        _at_commit(monkeypatch, "a" * 40, dirty=True)
    else:
        kw["tasks"] = 2
    again = run_experiment("E1", resume_latest=True, **kw)
    assert again.run_dir != first.run_dir and "continuing" not in capsys.readouterr().out
