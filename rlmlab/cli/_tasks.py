"""``rlmlab tasks``: generate task files with verified answers in the suites' JSONL format."""

from __future__ import annotations

import json
from pathlib import Path

import click

from rlmlab.cli._errors import cli_error
from rlmlab.text import plural


@click.group()
def tasks() -> None:
    """Task files for the experiments (data/tasks/ format)."""


@tasks.command("generate")
@click.option("--suite", type=click.Choice(["code", "ontology", "arith", "needle", "aggregate", "twohop"]),
              required=True, help="needle, aggregate and twohop write a long context per task (see --size-tokens).")
@click.option("--source", "sources", multiple=True,
              help="code: a directory of Rust sources or a Debian crate name (repeat for several; each is then "
                   "one unit of the split).")
@click.option("--n", "n", type=click.IntRange(min=1), required=True,
              help="Tasks in all (train plus test when splitting).")
@click.option("--seed", type=int, default=0, show_default=True, help="The same seed writes the same files.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="The (train) JSONL file.")
@click.option("--split-by", type=click.Choice(["source"]), default=None,
              help="Write a test split whose sources (crate or module, ontology term, GSM8K item or problem "
                   "family) no train task uses.")
@click.option("--test-out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The test split's JSONL file (with --split-by).")
@click.option("--test-frac", type=float, default=0.25, show_default=True, help="Share of the tasks in the test split.")
@click.option("--id-prefix", default=None, help="Task ids start with this (default gen-<suite>; test ids add -test).")
@click.option("--report", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the counts per kind and level, and the drops by reason, as JSON.")
@click.option("--size-tokens", default=None, metavar="TOKENS",
              help="needle, aggregate, twohop: each task's context size in tokens (500 to 8M; 8000, 100k, 1M); "
                   "the contexts go to docs/<task id>.txt beside --out.")
def generate(suite: str, sources: tuple[str, ...], n: int, seed: int, out: Path, split_by: str | None,
             test_out: Path | None, test_frac: float, id_prefix: str | None, report: Path | None,
             size_tokens: str | None) -> None:
    """Generate N tasks of SUITE with answers checked by a second computation; deterministic by --seed.

    Prints the counts per level and kind, and why candidates were dropped. Exit status 2 for bad input (a
    missing --source, one with no .rs file, --split-by without --test-out, a bad or missing --size-tokens).
    """
    from rlmlab.errors import ConfigError
    from rlmlab.taskgen import generate_tasks, write_tasks

    if bool(split_by) != bool(test_out):
        raise cli_error(ConfigError("--split-by and --test-out go together: the split writes its test tasks there"))
    try:
        made = generate_tasks(suite, n=n, seed=seed, sources=sources, split_by=split_by, test_frac=test_frac,
                              id_prefix=id_prefix, size_tokens=size_tokens, context_dir=out.parent)
    except ConfigError as exc:
        raise cli_error(exc) from None
    write_tasks(made.train, out)
    wrote = [f"{out} ({plural(len(made.train), 'task')})"]
    if made.report.contexts:
        wrote.append(f"{plural(len(made.report.contexts), 'context')} in {out.parent / 'docs'}")
    if test_out is not None:
        write_tasks(made.test, test_out)
        wrote.append(f"{test_out} ({plural(len(made.test), 'task')})")
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(json.dumps(made.report.to_dict(), indent=1) + "\n", encoding="utf-8")
    for line in made.report.lines():
        click.echo(line, err=True)
    click.echo("wrote " + ", ".join(wrote))
    if len(made.train) + len(made.test) < n:
        click.echo(f"note: {n} asked, {len(made.train) + len(made.test)} made: the sources ran out of questions "
                   "that pass the checks", err=True)
