"""The compact prompt's task part (issue 26): one line per REPL variable, no format reminder under a grammar, and
memory's strategies best-ranked last, nearest the step the model writes. Scripted LM."""

from __future__ import annotations

from rlmlab.executors import run_rlm
from rlmlab.executors._prompt import best_last
from rlmlab.lm import make_lm, recorder_of
from rlmlab.lm._scripts import output_fields

GUIDANCE = """You answer the query by writing Python in a REPL.

Strategies that worked before:
- Sum of two numbers: add them.
  Add the query's two numbers in one expression.
  Code:
    n = {{a:number}} + {{b:number}}

    SUBMIT(answer=n)
- Count lines: ctx_stats.
  Code:
    s = ctx_stats(context)

Guardrails from past failures:
- Never print the context.
- Never guess a number."""


def _script(messages):
    fields = output_fields(messages)
    if fields != ["reasoning", "code"]:
        return {name: "x" for name in fields}
    return {"reasoning": "Question: q Plan: add", "code": "SUBMIT(answer=12 + 30)"}


def _lm():
    lm = make_lm("scripted", script=_script)
    lm.rlmlab_engine.supports_constraints = True  # takes the grammar path (the scripted LM ignores grammars)
    return lm


def test_best_last_reverses_each_bulleted_list_and_keeps_every_line():
    out = best_last(GUIDANCE)
    assert sorted(out.splitlines()) == sorted(GUIDANCE.splitlines())
    lines = out.splitlines()
    # the best-ranked strategy (listed first by memory) now ends its list, its code block whole, blank line included
    assert lines.index("- Count lines: ctx_stats.") < lines.index("- Sum of two numbers: add them.")
    tail = lines[lines.index("- Sum of two numbers: add them."):]
    assert tail[:6] == ["- Sum of two numbers: add them.", "  Add the query's two numbers in one expression.",
                        "  Code:", "    n = {{a:number}} + {{b:number}}", "", "    SUBMIT(answer=n)"]
    assert lines.index("- Never guess a number.") < lines.index("- Never print the context.")
    assert out.startswith("You answer the query") and "\n\nGuardrails from past failures:\n" in out
    assert best_last("no list here\n\n- one") == "no list here\n\n- one"


def test_the_task_part_has_a_line_per_variable_no_format_reminder_and_the_best_strategy_last():
    lm = _lm()
    traj = run_rlm("What is 12 + 30?", "line one\nline two\n", lm=lm, max_iters=2, decoding="grammar",
                   instructions=GUIDANCE)
    assert traj.prompt == "compact" and traj.error is None
    [system, user] = recorder_of(lm).calls[0].messages
    user = user["content"]
    assert "`context`: a handle (BlobRef) to 18 characters\n`query` (str, 16 characters): What is 12 + 30?" in user
    assert "«««" not in user and "Variable: `" not in user and "Preview:" not in user
    # the grammar writes the field markers: no reminder of their order after the task
    assert "Respond with the corresponding output fields" not in user
    assert user.index("- Count lines") < user.index("- Sum of two numbers") < user.index("[[ ## variables_info ## ]]")


def test_free_decoding_keeps_dspys_variable_blocks_and_the_format_reminder():
    lm = _lm()
    run_rlm("What is 12 + 30?", "line one\nline two\n", lm=lm, max_iters=2, decoding="free", instructions=GUIDANCE)
    [system, user] = recorder_of(lm).calls[0].messages
    assert "Variable: `query`" in user["content"] and "Respond with the corresponding output fields" in user["content"]
    assert system["content"].index("- Sum of two numbers") < system["content"].index("- Count lines")
