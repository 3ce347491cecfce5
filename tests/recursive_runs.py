"""A scripted recursive run (issue 54) for the viewers' tests: ``rlm show``, the explorer, the budget timeline and
the browser check. Step 1 hands the first half of the text to a sub-run (which, at max_depth 3, hands its whole
context to one of its own); step 2 asks a second sub-run about the other half; step 3 submits. Each step's
reasoning is "script step N", N its place in the script, so every completion is told apart."""

from __future__ import annotations

from pathlib import Path

TEXT = "".join(f"line {i}: nothing here\n" for i in range(40)) + "the vault code is 7291\n" + "".join(
    f"line {i}: nothing here\n" for i in range(40, 80))
_FIND = "SUBMIT(answer=ctx_find(context, 'vault code is [0-9]+')['matches'][0]['text'].split()[-1])"


def recursive_script(max_depth: int = 2) -> list[dict[str, str]]:
    """The scripted model's replies, in call order (a sub-run's come when its parent's step calls it)."""
    child = ["b = rlm_query('Read the vault code', context)\nprint(b)", _FIND, "SUBMIT(answer=b)"] if (
        max_depth >= 3) else [_FIND]
    codes = ["parts = ctx_chunks(context, 2)\na = rlm_query('Where is the vault code?', parts[0])\nprint(a)", *child,
             "c = rlm_query('Anything else?', parts[1])\nprint(c)", "SUBMIT(answer='nothing else')",
             "SUBMIT(answer=a)"]
    return [{"reasoning": f"script step {i}", "code": c} for i, c in enumerate(codes, 1)]


def recursive_run(runs_dir: str | Path, max_depth: int = 2):
    """Run the script with ``max_depth`` (2 or 3), writing runs_dir/<run-id>/; the Trajectory."""
    from rlmlab.executors import run_rlm
    from rlmlab.lm import make_lm

    traj = run_rlm("What is the vault code?", TEXT, lm=make_lm("scripted", script=recursive_script(max_depth)),
                   runs_dir=runs_dir, max_depth=max_depth)
    assert traj.answer == "7291" and len(traj.walk()) == max_depth + 1, (traj.error, traj.notes)
    return traj
