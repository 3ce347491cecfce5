"""Recursion (issue 54): at max_depth 2 step code starts sub-runs with rlm_query / rlm_query_batched. The sub-run's
REPL sees only the handle it was given; depths, parent and child ids are in the trajectory and in every LM call;
the run's totals are the sum over its tree; budgets hold over the tree; a sub-run does not use up its parent
step's timeout."""

from __future__ import annotations

import pytest

from rlmlab.executors import TRAJECTORY_FILE, Trajectory, run_rlm
from rlmlab.lm import CALLS_FILE, make_lm, read_calls
from rlmlab.tools._chunks import split_lines
from helpers import steps

TEXT = "".join(f"line {i}: nothing here\n" for i in range(40)) + "the vault code is 7291\n" + "".join(
    f"line {i}: nothing here\n" for i in range(40, 80))


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_depth_2_run_hands_a_child_one_handle_and_records_the_tree(tmp_path):
    lm = make_lm("scripted", script=steps(
        # parent step 1: the second of four parts goes to a sub-run, by handle
        "parts = ctx_chunks(context, 4)\nans = rlm_query('What is the vault code?', parts[1])\nprint(ans)",
        # the child: its context is that part; the parent's context key is not its to read
        "print(ctx_peek('context', 20))",
        "hits = ctx_find(context, 'vault code is ([0-9]+)')\nprint(hits['total'])",
        "SUBMIT(answer=ctx_find(context, 'vault code is [0-9]+')['matches'][0]['text'].split()[-1])",
        # parent step 2
        "SUBMIT(answer=ans)"))
    traj = run_rlm("What is the vault code?", TEXT, lm=lm, runs_dir=tmp_path, max_depth=2)
    assert traj.error is None and traj.answer == "7291", (traj.error, traj.notes)
    [child] = traj.children
    assert (child.depth, child.parent_id, child.parent_step) == (1, traj.run_id, 1)
    assert child.run_id == f"{traj.run_id}.1" and traj.iterations[0].children == [child.run_id]
    assert child.query == "What is the vault code?" and child.answer == "7291"
    assert child.context_ref == split_key(TEXT, 4, 1)  # the handle, passed by reference
    refused = child.iterations[0].output
    assert "context" in refused and "unknown" in refused.lower() and child.context_ref in refused
    # every LM call of the tree, labelled, in the parent's lm_calls.jsonl; the totals are their sums
    calls = read_calls(tmp_path / traj.run_id / CALLS_FILE)
    assert [(c.run_id, c.depth, c.parent_id) for c in calls] == (
        [(traj.run_id, 0, None)] + [(child.run_id, 1, traj.run_id)] * 3 + [(traj.run_id, 0, None)])
    assert traj.lm_calls == 5 and child.lm_calls == 3
    assert traj.input_tokens == sum(c.input_tokens for c in calls) > 0
    assert child.input_tokens == sum(c.input_tokens for c in calls if c.depth == 1)
    # a parent step's own tokens are its own call's: the child's are in the child's steps
    assert traj.iterations[0].input_tokens == calls[0].input_tokens
    # the tree round-trips through the JSONL
    saved = Trajectory.read_jsonl(tmp_path / traj.run_id / TRAJECTORY_FILE)
    assert [t.run_id for t in saved.walk()] == [traj.run_id, child.run_id]
    assert saved.children[0].iterations[2].code == child.iterations[2].code


def split_key(text: str, n: int, i: int) -> str:
    from rlmlab.handles import content_key

    return content_key(split_lines(text, n)[i])


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_depth_1_offers_no_rlm_query_and_a_forged_handle_is_refused():
    lm = make_lm("scripted", script=steps("rlm_query('q', context)", "ctx_chunks(context, 2)", "SUBMIT(answer='x')"))
    traj = run_rlm("q", TEXT, lm=lm)  # max_depth 1: today's behaviour, and no tool for handing out parts
    assert "NameError" in traj.iterations[0].output and not traj.children
    assert "NameError" in traj.iterations[1].output
    lm = make_lm("scripted", script=steps("print(rlm_query('q', BlobRef('someone_elses_blob', 5)))",
                                           "SUBMIT(answer='x')"))
    traj = run_rlm("q", TEXT, lm=lm, max_depth=2)
    assert "holds no blob 'someone_elses_blob'" in traj.iterations[0].output and not traj.children


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_rlm_query_batched_runs_children_side_by_side_and_keeps_their_order():
    child = "SUBMIT(answer=str(ctx_stats(context)['lines']))"
    lm = make_lm("scripted", script=steps(
        "answers = rlm_query_batched(['How many lines?'] * 3, ctx_chunks(context, 3))\nprint(answers)",
        child, child, child, "SUBMIT(answer=','.join(answers))"))
    traj = run_rlm("q", TEXT, lm=lm, max_depth=2, max_concurrent=3)
    sizes = [str(len(p.splitlines())) for p in split_lines(TEXT, 3)]
    assert traj.answer == ",".join(sizes), (traj.error, [it.output for it in traj.iterations])
    assert sorted(c.run_id for c in traj.children) == [f"{traj.run_id}.{i}" for i in (1, 2, 3)]
    assert sorted(traj.iterations[0].children) == sorted(c.run_id for c in traj.children)


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_budget_holds_over_the_tree_and_nothing_done_is_lost():
    lm = make_lm("scripted", script=steps(
        "ans = rlm_query('q', ctx_chunks(context, 2)[0])\nprint(ans)",
        "print(1)", "print(2)", "SUBMIT(answer='never')", "SUBMIT(answer=ans)"))
    probe = run_rlm("q", TEXT, lm=make_lm("scripted", script=steps("print(1)")), max_iters=1)
    one_call = probe.input_tokens + probe.output_tokens
    traj = run_rlm("q", TEXT, lm=lm, max_depth=2, max_tokens=int(2.5 * one_call))
    [child] = traj.children
    # the child stops at its own step boundary when the tree's tokens pass the root's budget ...
    assert child.stopped == "budget (max_tokens)" and child.answer is None and len(child.iterations) >= 1
    # ... its parent step gets a value saying so, and the parent stops at its next boundary
    assert "[rlm_query] the sub-run ended without an answer (budget (max_tokens))" in traj.iterations[0].output
    assert traj.stopped == "budget (max_tokens)" and len(traj.iterations) == 1


@pytest.mark.slow
def test_a_sub_run_does_not_use_up_its_parent_steps_timeout():
    slow = "import time\ntime.sleep(1.7)\nprint('slept')"
    lm = make_lm("scripted", script=steps("print(rlm_query('q', 'some text'))", slow, slow,
                                           "SUBMIT(answer='done')", "SUBMIT(answer='ok')"))
    traj = run_rlm("q", TEXT, lm=lm, max_depth=2, step_timeout=3.0)
    # the child ran 3.4 s of steps inside the parent's first step, whose timeout is 3 s. What the clock does not
    # hold (the parent's own step around the call) must stay under 3 s: with 2 s and 2.4 s it ran over once in make
    # test's parallel pass beside the red-team corpora, though never alone or beside three busy loops
    assert traj.answer == "ok" and "TimeoutError" not in traj.iterations[0].output, traj.iterations[0].output
    assert traj.iterations[0].output.strip() == "done" and traj.children[0].answer == "done"


@pytest.mark.parametrize("bad", [0, -1, True, "2"])
def test_bad_depth_and_concurrency_fail_before_anything_runs(bad):
    with pytest.raises(ValueError, match="max_depth"):
        run_rlm("q", TEXT, lm=make_lm("scripted", script=[]), max_depth=bad)
    with pytest.raises(ValueError, match="max_concurrent"):
        run_rlm("q", TEXT, lm=make_lm("scripted", script=[]), max_concurrent=bad)


def test_split_lines_cuts_at_line_ends_and_loses_nothing():
    for n in (1, 2, 3, 7, 200):
        parts = split_lines(TEXT, n)
        assert "".join(parts) == TEXT and len(parts) <= n and all(p.endswith("\n") for p in parts)
    assert split_lines("one long line", 4) == ["one long line"]
