"""``rlmlab scorecard``: does each seed's claim hold on a model? One row per claim: paired effect, interval, verdict."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import click

from rlmlab.cli._errors import cli_error, interrupts_in_one_line
from rlmlab.text import plural


def _split(values: tuple[str, ...]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


@click.command()
@click.option("--lm", default="local", show_default=True,
              help="local (embedded SmolLM2), scripted:<name>, or a LiteLLM model string (openai/gpt-4o-mini).")
@click.option("--api-base", default=None, help="Server URL for a LiteLLM model (an OpenAI-compatible server).")
@click.option("--n", "n", type=click.IntRange(1), default=None,
              help="Paired tasks (items) per claim [default: 60; 4 with --quick]; a suite with fewer gives fewer.")
@click.option("--seeds", multiple=True, help="Only the claims of these seed documents: 001,002,003,004.")
@click.option("--claims", multiple=True, help="Only these claims by name (s004.E7, or s004.* for a prefix).")
@click.option("--quick", is_flag=True, help="4 items per claim and at most 3 agent steps: a first look.")
@click.option("--suite", default=None, help="Run every agent row on this suite instead of each config's own.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=Path("runs/scorecard"),
              show_default=True, help="Folder for scorecard.json and the runs it read.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object per row (seed, claim, comparison, n, difference, ci_low, ci_high, verdict).")
@click.option("--notebook", is_flag=True,
              help="Run notebooks/scorecard.ipynb under papermill instead: OUT also gets the executed notebook.")
@click.option("--list", "list_only", is_flag=True, help="List the registered claims and exit.")
@click.option("--plan", "plan_only", is_flag=True,
              help="Print the arms the run needs (shared arms once), items and projected time, and exit.")
@click.option("--fresh", is_flag=True,
              help="Start a new table: a scorecard.json in OUT is moved aside (scorecard.<time>.json) instead of "
                   "keeping its other rows.")
@click.option("--resume", is_flag=True,
              help="Continue each experiment arm's newest run of the same parameters in OUT/runs (agent arms: "
                   "OUT/turing) made by this commit (clean tree): one cut short runs only its remaining tasks, a "
                   "finished one is read again.")
@click.option("--show", "show_only", is_flag=True,
              help="Print OUT's scorecard.json (table, --json or --markdown) and exit; nothing runs. With "
                   "--notebook, the notebook renders it (OUT/scorecard.ipynb, scorecard.png).")
@click.option("--markdown", is_flag=True, help="Print the table as Markdown (with each row's commit and date).")
@click.option("--workers", type=click.IntRange(1, 8), default=1, show_default=True,
              help="Threads an experiment arm's tasks run on (learning conditions stay sequential).")
@click.option("--procs", type=click.IntRange(1, 16), default=None,
              help="Processes the claims run in, each on its own cores with its own model; claims that share an arm "
                   "stay together [default: one per two cores for --lm local, else 1].")
@click.option("--max-steps", "steps", type=click.IntRange(1, 50), default=None,
              help="At most this many agent steps in every experiment arm [default: each condition's own; 3 with "
                   "--quick].")
def scorecard(lm: str, api_base: str | None, n: int | None, seeds: tuple[str, ...], claims: tuple[str, ...],
              quick: bool, suite: str | None, out: Path, as_json: bool, notebook: bool, list_only: bool,
              plan_only: bool, fresh: bool, resume: bool, show_only: bool, markdown: bool, workers: int,
              procs: int | None, steps: int | None) -> None:
    """Measure each seed claim on LM: two arms on the same items, the difference with its 95% interval
    (Newcombe for pass rates, paired bootstrap otherwise) and the verdict: holds, contradicted or cannot tell.

    A scorecard.json already in OUT, measured with the same LM, n, step cap, suite and seed, keeps its other
    rows: run the claims in parts (--claims) into one table."""
    from rlmlab.cli._console import wide_console
    from rlmlab.errors import RLMLabError
    from rlmlab.scorecard import SCORECARD_FILE, read_scorecard, select_claims

    console = wide_console()
    try:
        if show_only:
            if not (out / SCORECARD_FILE).is_file():
                raise click.UsageError(f"--show: no {SCORECARD_FILE} in {out}; give the folder a run wrote with --out")
            card = _via_notebook(lm, api_base, n, seeds, claims, quick, suite, out, measure=False) if notebook \
                else read_scorecard(out)
        elif list_only:
            for entry in select_claims(_split(seeds) or None, _split(claims) or None):
                console.print(f"{entry.name}\t{entry.seed}\t{entry.comparison}")
            return
        elif plan_only:
            for line in _plan(n, seeds, claims, quick, suite, out, steps, procs if procs else _auto(lm)):
                click.echo(line)
            return
        else:
            card = _measure(lm, api_base, n, seeds, claims, quick, suite, out, notebook, workers, steps, fresh,
                            resume, procs)
    except (RLMLabError, ValueError) as exc:
        raise cli_error(exc) from None
    if as_json:
        for row in card.rows:
            click.echo(json.dumps(row.summary(), ensure_ascii=False))
        return
    if markdown:
        click.echo(card.markdown(), nl=False)
        return
    console.print(card)
    if not show_only:
        click.echo(f"{plural(len(card.rows), 'claim')} in {card.seconds:.0f} s; results: {card.path}", err=True)


def _measure(lm: str, api_base: str | None, n: int | None, seeds: tuple[str, ...], claims: tuple[str, ...],
             quick: bool, suite: str | None, out: Path, notebook: bool, workers: int, steps: int | None,
             fresh: bool, resume: bool = False, procs: int | None = None) -> Any:
    from rlmlab.scorecard import run_scorecard

    with interrupts_in_one_line():
        if notebook:
            return _via_notebook(lm, api_base, n, seeds, claims, quick, suite, out, steps, fresh, resume=resume)
        return run_scorecard(lm, n=n, seeds=_split(seeds) or None, claims=_split(claims) or None, quick=quick,
                             out=out, api_base=api_base, suite=suite, workers=workers, steps=steps, fresh=fresh,
                             resume=resume, procs=procs,
                             progress=lambda line: click.echo(line, err=True))


def _plan(n: int | None, seeds: tuple[str, ...], claims: tuple[str, ...], quick: bool, suite: str | None,
          out: Path, steps: int | None, procs: int = 1) -> list[str]:
    """The plan's summary, one line per arm and, with ``procs`` > 1, what each process runs; nothing runs and no
    model loads (a scripted LM stands in)."""
    from rlmlab.lm import make_lm
    from rlmlab.scorecard import DEFAULT_N, QUICK_N, ScoreContext, partition, plan_scorecard, select_claims

    entries = select_claims(_split(seeds) or None, _split(claims) or None)
    ctx = ScoreContext(make_lm("scripted:probe"), "plan", n or (QUICK_N if quick else DEFAULT_N), out, quick=quick,
                       suite=suite, steps=steps)
    plan = plan_scorecard(entries, ctx, previous=out / "scorecard.json")
    parts = partition(plan, procs) if procs > 1 else []
    split = [f"process p{p.index} on {plural(len(p.cores), 'core')} ({','.join(map(str, p.cores))}): "
             f"projected {p.seconds / 60:.1f} min, "
             f"{', '.join(p.claims)}" for p in parts] if len(parts) > 1 else []
    return [plan.summary(), *plan.lines(), *split]


def _auto(lm: str) -> int:
    from rlmlab.scorecard import auto_procs

    return auto_procs(lm)


def _via_notebook(lm: str, api_base: str | None, n: int | None, seeds: tuple[str, ...], claims: tuple[str, ...],
                  quick: bool, suite: str | None, out: Path, steps: int | None = None, fresh: bool = False,
                  measure: bool = True, resume: bool = False) -> Any:
    """Execute the scorecard notebook with these parameters (its cells' output streamed to this terminal) and read
    back the scorecard it wrote; the executed notebook is ``OUT/scorecard.ipynb``. The cells' output goes to stderr.
    ``measure=False`` (``--show --notebook``) runs nothing: the notebook shows OUT's saved table and its plot."""
    from rlmlab.errors import ConfigError
    from rlmlab.experiments import run_notebook
    from rlmlab.scorecard import read_scorecard, select_claims

    if suite:
        raise ConfigError("--suite: the notebook has no suite parameter; run without --notebook")
    select_claims(_split(seeds) or None, _split(claims) or None)  # a bad name fails here, before a kernel starts
    params = {"lm": lm, "api_base": api_base, "n": n, "seeds": ",".join(_split(seeds)) or "001,002,003,004",
              "claims": ",".join(_split(claims)) or None, "quick": quick, "run_dir": str(out), "max_steps": steps,
              "fresh": fresh, "measure": measure, "resume": resume}
    with contextlib.redirect_stdout(sys.stderr):  # the cells' output is progress: stdout keeps the table or JSON
        done = run_notebook("scorecard.ipynb", params, progress=False, log_output=True)
    return read_scorecard(done.run_dir)
