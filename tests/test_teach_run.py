"""Run config, CLI, rendering, LM learners (scripted) and the Turing Protocol on learner turns."""

import json

import pytest
from click.testing import CliRunner

from rlmlab._paths import PROJECT_ROOT
from rlmlab.cli import main
from rlmlab.errors import RLMLabError
from rlmlab.lm import make_lm
from rlmlab.teach import (
    Exchange, LMLearner, RunConfig, VotingLearner, load_run_config, read_traces, run_teach, solve_arithmetic,
)
from rlmlab.teach._render import summary_html, trace_html, trace_table
from helpers import config_error


def test_run_yaml_has_the_spec_shape_and_loads():
    cfg = load_run_config("configs/run.yaml")
    assert cfg.demo_mode and cfg.max_turns == 3 and cfg.parallel_learners_k == 1 and cfg.provider == "demo"
    assert cfg.temperature == {"learner_math": 0.3, "learner_facts": 0.6, "teacher": 0.0}
    assert cfg.dataset == "data/math20.csv" and cfg.traces_out.endswith("traces.json")
    assert cfg.modes == ("reference", "reference_free")
    assert cfg.decoding == "code" == RunConfig().decoding  # LMLearner writes an expression, rlmlab computes it
    assert cfg.with_overrides(provider="local").effective_provider == "local"


@pytest.mark.parametrize("text, where", [
    ("runtime:\n  max_turns: 0\n", "runtime.max_turns"),
    ("runtime:\n  parallel_learners: 3\n", "runtime"),
    ("runtime:\n  modes: [oracle]\n", "runtime.modes.0"),
    ("runtime: [\n", ":2: invalid YAML"),
])
def test_bad_run_config_names_file_and_key(tmp_path, text, where):
    config_error(load_run_config, tmp_path / "run.yaml", text, where)


def test_config_input_paths_resolve_from_any_working_directory(tmp_path, monkeypatch):
    here = tmp_path / "elsewhere"
    (tmp_path / "cfg").mkdir()
    here.mkdir()
    (tmp_path / "cfg" / "items.csv").write_text("question,reference\nWhat is 2 + 2?,4\n")
    config = tmp_path / "cfg" / "run.yaml"
    config.write_text("paths:\n  dataset: items.csv\n  stop_rules: configs/stop_rules.yaml\n"
                      "  history: [missing.json]\n")
    monkeypatch.chdir(here)
    cfg = load_run_config(config)  # beside the config file, then under the project root; missing: as written
    assert cfg.dataset == str(tmp_path / "cfg" / "items.csv")
    assert cfg.stop_rules == str(PROJECT_ROOT / "configs" / "stop_rules.yaml") and cfg.history == ("missing.json",)
    assert cfg.traces_out == "runs/teach/traces.json"  # an output: relative to the working directory
    project = load_run_config("configs/run.yaml")  # the CLI's default --config, found under the project root
    assert project.dataset == str(PROJECT_ROOT / "data" / "math20.csv")
    assert run_teach(RunConfig(limit=2, modes=("reference",)), write=False).items == 2
    (here / "items.csv").write_text("question,reference\nWhat is 1 + 1?,2\nWhat is 1 + 2?,3\n")
    assert load_run_config(config).dataset == "items.csv"  # found from the working directory: kept as written


def test_demo_mode_env_forces_the_demo_provider(monkeypatch):
    monkeypatch.setenv("DEMO_MODE", "1")
    assert RunConfig(demo_mode=False, provider="local").effective_provider == "demo"


def test_cli_teach_run_writes_traces_and_prints_the_table(tmp_path):
    out = tmp_path / "t" / "traces.json"
    res = CliRunner().invoke(main, ["teach", "run", "--dataset", "data/math20.csv", "--max-turns", "2",
                                    "--provider", "demo", "--mode", "reference_free", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "reference_free" in res.output and "try_again" in res.output and "rts" in res.output
    summary = json.loads((out.parent / "summary.json").read_text())
    assert [r["arm"] for r in summary["rows"]] == ["single", "try_again", "rts"]
    assert all(r["mode"] == "reference_free" and r["avg_turns"] <= 2 for r in summary["rows"])
    assert len(read_traces(out)) == 20
    shown = CliRunner().invoke(main, ["teach", "show", str(out), "--reprompted"])
    assert shown.exit_code == 0 and "template" in shown.output and "teacher" in shown.output and "items shown" in shown.output


def test_cli_reports_a_malformed_dataset_row_with_its_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("question,reference\nWhat is 1 + 1?,2\nWhat is 2 + 2?\n")
    res = CliRunner().invoke(main, ["teach", "run", "--dataset", str(bad), "--out", str(tmp_path / "o.json")])
    assert res.exit_code == 2 and res.stderr.startswith(f"Error: {bad}:3: ")


@pytest.mark.parametrize("make, words", [
    (lambda p: p.write_bytes(b"question,reference\nQu\xe9 es 1 + 1?,2\n"), ":2: not UTF-8 text"),
    (lambda p: None, ": no such file"),
    (lambda p: p.mkdir(), ": a directory; expected a file"),
])
def test_cli_refuses_a_dataset_it_cannot_read_in_one_line(tmp_path, make, words):
    data = tmp_path / "items.csv"
    make(data)
    res = CliRunner().invoke(main, ["teach", "run", "--dataset", str(data), "--out", str(tmp_path / "o" / "t.json")])
    assert res.exit_code == 2 and res.stderr.startswith(f"Error: {data}{words}")
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output
    assert not (tmp_path / "o").exists()


def test_a_rerun_into_the_same_out_leaves_none_of_the_earlier_runs_files(tmp_path):
    out = tmp_path / "t" / "traces.json"
    args = ["teach", "run", "--dataset", "data/math20.csv", "--limit", "2", "--provider", "demo", "--out", str(out)]
    assert CliRunner().invoke(main, args).exit_code == 0
    first = sorted(p.name for p in out.parent.iterdir())
    assert "traces.reference_free.rts.json" in first and "traces.json" in first
    (out.parent / "notes.txt").write_text("mine")  # not the run's: must survive
    (out.parent / "traces.reference.rts.json.tmp").write_text("{")  # a temp file left by a killed run
    again = CliRunner().invoke(main, [*args, "--mode", "reference_free"])
    assert again.exit_code == 0, again.output
    assert sorted(p.name for p in out.parent.iterdir()) == [
        "notes.txt", "provenance.json", "run.lock", "summary.json", "traces.json", "traces.reference_free.rts.json",
        "traces.reference_free.single.json", "traces.reference_free.try_again.json"]
    summary = json.loads((out.parent / "summary.json").read_text())
    assert {r["mode"] for r in summary["rows"]} == {"reference_free"}
    # a run that fails before it writes anything leaves the earlier run as it was
    failed = CliRunner().invoke(main, [*args[:3], str(tmp_path / "missing.csv"), *args[4:]])
    assert failed.exit_code == 2 and (out.parent / "traces.reference_free.rts.json").exists()


def test_read_traces_rejects_a_file_not_in_the_spec_format(tmp_path):
    path = tmp_path / "traces.json"
    path.write_text(json.dumps({"summary": {"items": 1, "final_accuracy_mean": 1.0},
                                "traces": [{"qid": "q1", "question": "?", "reference": "4", "final_accuracy": 1,
                                            "turns": [{"answer": "4", "self_conf": 1.3, "teacher_bias": "None",
                                                       "teacher_conf": 0.95, "template": None, "accuracy": 1}]}]}))
    with pytest.raises(RLMLabError, match=r"traces/0/turns/0/self_conf"):
        read_traces(path)


def test_trace_renders_as_a_turn_table_and_html(tmp_path):
    report = run_teach(RunConfig(error_rate=0.3, traces_out=str(tmp_path / "traces.json")))
    trace = next(t for t in report.traces[("reference", "rts")] if len(t.turns) > 1)
    table = trace_table(trace)
    assert table.row_count == len(trace.turns) and trace.qid in table.title
    html = trace_html(trace)
    assert html.count("<tr>") == len(trace.turns) + 1 and trace.turns[0].template in html
    assert trace._repr_html_() == html
    page = summary_html(report.rows)
    assert page.count("<tr>") == 7 and "reference_free" in page and report._repr_html_().startswith("<table")


def test_arithmetic_solver():
    assert solve_arithmetic("What is 12.5% of 64?") == "8"
    assert solve_arithmetic("What is 7 - 12?") == "-5"
    assert solve_arithmetic("What is 1 / 3?") == "0.333333"
    assert solve_arithmetic("What is 2 ** 100?") is None  # not one of + - * /
    assert solve_arithmetic("What is 1 / 0?") is None
    assert solve_arithmetic("Tom has 48 apples.") is None


def test_stated_arithmetic_reads_more_phrasings_than_the_solver():
    from rlmlab.numbers import stated_arithmetic

    assert stated_arithmetic("How much is 40 percent of 1140?") == "456"
    assert stated_arithmetic("Compute 25% of 160.") == "40"
    assert stated_arithmetic("Calculate 12 * 9 + 300. Answer with a number.") == "408"
    assert stated_arithmetic("What is (12 + 3) * 3?") == solve_arithmetic("What is (12 + 3) * 3?") == "45"
    assert stated_arithmetic("There were 71 marbles in a box. Farid took 4 of them. How many remain?") is None
    assert stated_arithmetic("How much is 5 apples and 3 pears?") is None


def test_lm_learner_on_a_scripted_model_counts_tokens_and_memoises():
    lm = make_lm("scripted", script=["12 * 12 = 144\nAnswer: 144\nConfidence: 0.8"])
    learner = LMLearner(lm)
    ex = Exchange("What is 12 * 12?", "q")
    a = learner.answer(ex)
    assert a.answer.endswith("Confidence: 0.8") and a.self_conf == 0.8 and a.input_tokens > 0 and a.output_tokens > 0
    assert learner.answer(ex) is a  # the same conversation is not asked twice (the script has one reply)


def test_voting_over_a_model_uses_distinct_seeds():
    seen = []

    def script(messages):
        seen.append(messages)
        return f"Answer: {4 if len(seen) != 2 else 5}"

    lm = make_lm("scripted", script=script)
    reply = VotingLearner(LMLearner(lm, temperature=0.7), k=3).answer(Exchange("What is 2 + 2?", "q"))
    assert len(seen) == 3 and reply.answer == "Answer: 4" and reply.vote_share == pytest.approx(2 / 3)


@pytest.mark.slow
def test_learner_turns_pass_through_the_turing_protocol(tmp_path):
    from rlmlab.turing import TuringProtocol, load_interaction_log

    db = tmp_path / "turing.sqlite"
    lm = make_lm("scripted", script=["I will calculate 17 * 23 step by step for you now.",
                                     "17 * 23 = 391\nAnswer: 391"])
    learner = LMLearner(lm, turing=TuringProtocol.from_config(log=db))
    reply = learner.answer(Exchange("What is 17 * 23?", "q2"))
    assert reply.corrections == 1 and reply.answer.endswith("Answer: 391")
    rows = load_interaction_log(db, session="q2")
    assert [v["hook"] for v in rows[0]["violations"]] == ["empty_promise"]


def test_a_run_with_a_scripted_model_and_turing_reports_corrections(tmp_path):
    from rlmlab.turing import TuringProtocol

    def script(messages):
        last = messages[-1]["content"]
        if "What is 2 + 2" in last:
            return "I will calculate 2 + 2 step by step for you now."
        return "Answer: 4"

    cfg = RunConfig(provider="scripted", demo_mode=False, limit=1, modes=("reference",),
                    traces_out=str(tmp_path / "traces.json"))
    report = run_teach(cfg, lm=make_lm("scripted", script=script), turing=TuringProtocol.from_config())
    assert all(r.accuracy == 1.0 and r.corrections == 1 for r in report.rows)


def test_history_with_harmful_reprompts_stops_them_in_the_next_run(tmp_path):
    """Expected gain from earlier traces: devils_advocate_v1 at (Confirmation, mid) only ever broke answers."""
    turn = {"answer": "I get 7.", "self_conf": 0.65, "teacher_bias": "Confirmation", "teacher_conf": 0.6,
            "template": "devils_advocate_v1", "accuracy": 1}
    history = tmp_path / "old.json"
    history.write_text(json.dumps({"summary": {"items": 1, "final_accuracy_mean": 0.0}, "traces": [
        {"qid": "h1", "question": "?", "reference": "7", "final_accuracy": 0,
         "turns": [turn, {**turn, "template": None, "accuracy": 0}]}]}))
    base = RunConfig(error_rate=1.0, modes=("reference",), traces_out=str(tmp_path / "a" / "traces.json"))
    before = run_teach(base).traces[("reference", "rts")]
    after = run_teach(base.with_overrides(history=(str(history),))).traces[("reference", "rts")]
    stopped = [t for t in after if t.stop_reason == "negative_expected_gain"]
    assert stopped and all(t.turns[0].teacher_bias == "Confirmation" and len(t.turns) == 1 for t in stopped)
    assert not any(t.stop_reason == "negative_expected_gain" for t in before)
