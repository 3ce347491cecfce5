"""Grammar decoding is the default wherever the LM can be constrained, and every run records what it used."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from rlmlab.cli import main
from rlmlab.executors import CodeRunOptions, RunOptions, run_rlm
from rlmlab.lm import Completion, active_constraint, make_lm
from rlmlab.teach import LMLearner
from rlmlab.teach._learner import LEARNER_GRAMMAR, Exchange


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_run_options_default_to_grammar_and_a_scripted_lm_records_that_it_ran_free(tmp_path):
    assert RunOptions().decoding == "grammar" and CodeRunOptions().decoding == "grammar"
    lm = make_lm("scripted", script=[{"reasoning": "r", "code": "SUBMIT(answer=4)"}])
    traj = run_rlm("What is 2 + 2?", "", lm=lm, max_iters=1, runs_dir=tmp_path)
    assert traj.answer == "4" and traj.decoding == "free" and "grammar ignored" in traj.notes[0]
    header = json.loads((tmp_path / traj.run_id / "trajectory.jsonl").read_text().splitlines()[0])
    assert header["decoding"] == "free"
    free = run_rlm("What is 2 + 2?", "", lm=make_lm("scripted", script=[{"reasoning": "r", "code": "SUBMIT(answer=4)"}]),
                   max_iters=1, decoding="free")
    assert free.decoding == "free" and free.notes == []  # asked free: nothing to note


def test_rlm_run_cli_takes_decoding_and_prints_what_was_used(tmp_path):
    source = tmp_path / "a.rs"
    source.write_text("fn main() {}\n")
    res = CliRunner().invoke(main, ["rlm", "run", "q", str(source), "--lm", "scripted:probe", "--runs-dir",
                                    str(tmp_path / "runs")])
    assert "decoding: free (decoding: grammar ignored" in res.output
    res = CliRunner().invoke(main, ["rlm", "run", "q", str(source), "--lm", "scripted:probe", "--decoding", "beam"])
    assert res.exit_code == 2 and "--decoding" in res.output


class _Engine:
    """An engine that says it applies grammars and keeps the constraint active at each call."""

    supports_constraints = True

    def __init__(self) -> None:
        self.seen: list = []

    def generate(self, messages, config):
        self.seen.append(active_constraint())
        return Completion(text="2 + 2 = 4\nAnswer: 4", input_tokens=10, output_tokens=8)


def test_the_learner_decodes_under_its_answer_grammar_when_the_lm_can_follow_one():
    engine = _Engine()
    lm = SimpleNamespace(rlmlab_engine=engine)
    assert LMLearner(lm).decoding == "code"  # the default: one expression, computed by rlmlab (test_teach_code.py)
    reply = LMLearner(lm, decoding="grammar").answer(Exchange("What is 2 + 2?"))
    assert reply.answer.endswith("Answer: 4") and engine.seen[0].grammar == LEARNER_GRAMMAR
    free = LMLearner(lm, decoding="free", memo=False)
    free.answer(Exchange("What is 2 + 2?"))
    assert free.decoding == "free" and engine.seen[1] is None
    assert LMLearner(make_lm("scripted:probe")).decoding == "free"  # cannot constrain: recorded as free
    with pytest.raises(ValueError, match="decoding"):
        LMLearner(lm, decoding="beam")
