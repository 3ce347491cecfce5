"""The direct executor (E15's baseline): one call of the base model over the context, cut to its window with the head
kept and the cut said; the window comes from the embedded engine itself."""

from __future__ import annotations

import pytest

from rlmlab.executors import EXECUTORS, run_direct
from rlmlab.executors._direct import fit_to_window, window_of
from rlmlab.lm import make_lm
from rlmlab.tokens import count_tokens

LONG = "".join(f"line {i} of the log: nothing\n" for i in range(3000)) + "the vault code is 7291\n"


def test_a_context_over_the_window_is_cut_to_its_head_and_the_run_says_so():
    lm = make_lm("scripted", script=["7291"])
    traj = run_direct("What is the vault code?", LONG, lm=lm, window_tokens=1500, runs_dir=None)
    assert traj.answer == "7291" and traj.executor == "direct" and len(traj.iterations) == 1
    [note] = [n for n in traj.notes if n.startswith("direct: the context was cut")]
    prompt = lm.history[-1]["prompt"]
    assert prompt.startswith("Text:\nline 0 of the log") and "7291" not in prompt  # the needle was past the cut
    assert "characters cut: the text did not fit the model's 1,500-token window" in prompt
    assert count_tokens(prompt) <= 1500 and "1,500-token window" in note


def test_a_context_that_fits_is_sent_whole():
    lm = make_lm("scripted", script=["7291"])
    traj = run_direct("What is the vault code?", "a\nthe vault code is 7291\n", lm=lm, window_tokens=1500)
    assert "the vault code is 7291" in lm.history[-1]["prompt"] and not traj.notes


def test_fit_to_window_keeps_the_longest_head_that_fits():
    head, cut = fit_to_window(LONG, 500, count_tokens)
    assert LONG.startswith(head) and cut == len(LONG) - len(head) and count_tokens(head) <= 500
    assert count_tokens(LONG[:len(head) + 200]) > 500  # not much more would fit
    assert fit_to_window("short", 500, count_tokens) == ("short", 0)


def test_direct_is_a_registered_executor_with_checked_options():
    assert "direct" in EXECUTORS.names()
    with pytest.raises(ValueError, match="window_tokens"):
        run_direct("q", "text", lm=make_lm("scripted", script=["x"]), window_tokens=0)


@pytest.mark.local_model
def test_the_embedded_model_answers_directly_within_its_own_window():
    lm = make_lm("local", max_tokens=16)
    assert window_of(lm) == lm.rlmlab_engine.n_ctx == 8192
    traj = run_direct("What is the vault code? Reply with the number only.", "Note: the vault code is 7291.\n",
                      lm=lm, answer_tokens=16)
    assert traj.error is None and traj.input_tokens > 0 and "7291" in traj.answer, (traj.answer, traj.error)
