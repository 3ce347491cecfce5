"""Run budgets (issue 54): each one stops a scripted run at a step boundary with its reason, keeping every step done;
the money spent comes from litellm's price table; ``show_budget`` tells the model what is left."""

from __future__ import annotations

import pytest

from rlmlab.executors import TRAJECTORY_FILE, Trajectory, run_rlm
from rlmlab.executors._budget import Budget, call_cost, spent_so_far
from rlmlab.lm import LMCall, make_lm
from helpers import steps

TEXT = "line one\nline two ERROR disk\nline three\n"


def _stopped(traj, which, done):
    assert traj.stopped == f"budget ({which})", (traj.stopped, traj.error, traj.notes)
    assert traj.error is None and traj.answer is None and not traj.submitted
    assert len(traj.iterations) == done  # every step before the boundary is kept
    assert any(n.startswith(f"stopped before the next step: budget {which} reached") for n in traj.notes)


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_max_tokens_stops_before_the_step_that_would_start_past_it(tmp_path):
    lm = make_lm("scripted", script=steps("print(ctx_stats(context)['lines'])", "print(2)", "SUBMIT(answer='3')"))
    traj = run_rlm("How many lines?", TEXT, lm=lm, runs_dir=tmp_path, max_tokens=1)
    _stopped(traj, "max_tokens", 1)
    assert traj.iterations[0].output.strip() == "3"
    saved = Trajectory.read_jsonl(tmp_path / traj.run_id / TRAJECTORY_FILE)  # written, and read back
    assert saved.stopped == "budget (max_tokens)" and len(saved.iterations) == 1
    # the same run without the budget goes to its answer
    free = run_rlm("How many lines?", TEXT, lm=make_lm("scripted", script=steps(
        "print(ctx_stats(context)['lines'])", "print(2)", "SUBMIT(answer='3')")))
    assert free.stopped is None and free.answer == "3"


def test_max_errors_counts_failed_steps_in_a_row():
    lm = make_lm("scripted", script=steps("1/0", "print(1)", "1/0", "x = [][1]", "SUBMIT(answer='no')"))
    traj = run_rlm("q", TEXT, lm=lm, max_errors=2)
    _stopped(traj, "max_errors", 4)  # one failure, a good step, then two in a row: the fifth never starts
    assert [it.output.startswith("[Error]") for it in traj.iterations] == [True, False, True, True]


def test_max_seconds_stops_at_the_next_step_boundary():
    lm = make_lm("scripted", script=steps("s = 0\nfor i in range(3_000_000):\n    s += i\nprint(s)", "SUBMIT(answer='1')"))
    traj = run_rlm("q", TEXT, lm=lm, max_seconds=0.05)
    # the worker's start and the first step take longer than 50 ms: the run may stop before step 1 or after it,
    # never inside it, and never reaches the SUBMIT
    assert traj.stopped == "budget (max_seconds)" and traj.answer is None and len(traj.iterations) <= 1


@pytest.mark.slow  # imports litellm and its price table (about 4 s)
def test_max_cost_prices_calls_from_litellms_table_and_local_models_cost_nothing():
    priced = LMCall(model="gpt-4o-mini", role="main", prompt_chars=0, input_tokens=1000, output_tokens=100,
                    latency_s=0.0)
    import litellm

    expected = sum(litellm.cost_per_token(model="gpt-4o-mini", prompt_tokens=1000, completion_tokens=100))
    assert call_cost(priced) == pytest.approx(expected) and expected > 0
    local = LMCall(model="rlmlab/local/SmolLM2-135M-Instruct.Q4_1", role="main", prompt_chars=0, input_tokens=10**6,
                   output_tokens=10**6, latency_s=0.0)
    assert call_cost(local) == 0.0
    unknown = LMCall(model="openai/no-such-model-xyz", role="main", prompt_chars=0, input_tokens=5, output_tokens=5,
                     latency_s=0.0)
    assert call_cost(unknown) is None
    spent = spent_so_far([priced, local, unknown], started=0.0, outputs=["ok", "[Error] x"])
    assert spent.cost == pytest.approx(expected) and spent.unpriced == ("openai/no-such-model-xyz",)
    assert spent.tokens == 1100 + 2 * 10**6 + 10 and spent.errors == 1
    assert Budget(max_cost=expected / 2).reached(spent)[0] == "max_cost"
    assert Budget(max_cost=expected * 2).reached(spent) is None


@pytest.mark.slow  # imports litellm and its price table (about 4 s)
def test_a_priced_model_is_stopped_by_max_cost_and_a_local_one_says_it_costs_nothing(monkeypatch):
    lm = make_lm("scripted", script=steps("print(1)", "print(2)", "SUBMIT(answer='2')"))
    monkeypatch.setattr(lm, "model", "gpt-4o-mini")  # the calls are recorded under a priced model's name
    traj = run_rlm("q", TEXT, lm=lm, max_cost=1e-9)
    _stopped(traj, "max_cost", 1)
    local = run_rlm("q", TEXT, lm=make_lm("scripted", script=steps("SUBMIT(answer='2')")), max_cost=0.01)
    assert local.answer == "2" and local.stopped is None


def test_show_budget_tells_the_model_what_is_left_in_each_prompt():
    seen: list[str] = []
    replies = iter(steps("print(1)", "print(2)", "SUBMIT(answer='2')"))

    def script(messages):
        seen.append("\n".join(m["content"] for m in messages))
        return next(replies)

    traj = run_rlm("q", TEXT, lm=make_lm("scripted", script=script), max_tokens=100_000, max_errors=3,
                   show_budget=True)
    assert traj.answer == "2"
    assert "Budget for this run: 100,000 LM tokens, 3 failed steps in a row." in seen[0]
    assert "[budget] left:" in traj.iterations[0].output and "[budget] left:" in seen[1]
    left = [int(o.split("[budget] left: ")[1].split(" LM tokens")[0].replace(",", "")) for o in
            (it.output for it in traj.iterations[:2])]
    assert 100_000 > left[0] > left[1]  # what is left goes down as the run spends


@pytest.mark.parametrize("bad", [{"max_tokens": 0}, {"max_seconds": -1}, {"max_cost": "1"}, {"max_errors": 1.5}])
def test_a_bad_budget_is_refused_before_anything_runs(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        run_rlm("q", TEXT, lm=make_lm("scripted", script=[]), **bad)


def test_rlm_run_on_the_command_line_stops_at_a_budget_and_says_so(tmp_path):
    from click.testing import CliRunner

    from rlmlab.cli import main

    source = tmp_path / "log.txt"
    source.write_text(TEXT)
    res = CliRunner().invoke(main, ["rlm", "run", "How many lines?", str(source), "--lm", "scripted:probe",
                                    "--runs-dir", str(tmp_path / "runs"), "--max-tokens", "1", "--sandbox", "none"])
    assert res.exit_code == 0, res.output
    assert "stopped: budget (max_tokens) after 1 step, all kept" in " ".join(res.output.split())
    [run_dir] = (tmp_path / "runs").iterdir()
    assert Trajectory.read_jsonl(run_dir / TRAJECTORY_FILE).stopped == "budget (max_tokens)"
    bad = CliRunner().invoke(main, ["rlm", "run", "q", str(source), "--lm", "scripted:probe", "--max-errors", "0"])
    assert bad.exit_code == 2 and "--max-errors" in bad.output
