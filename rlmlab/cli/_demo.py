"""``rlmlab demo``: the main job. E13's free baseline against constrained, code-first steps with templates, on
held-out tasks of the three suites with the embedded model, run by executing ``notebooks/main_job.ipynb``
through papermill; prints where everything landed."""

from __future__ import annotations

import glob
from pathlib import Path

import click

from rlmlab.cli._errors import interrupts_in_one_line
from rlmlab.cli._rlm import LM_HELP, RUNS_DIR_HELP
from rlmlab.text import plural

RUST_REGISTRY = "/usr/share/cargo/registry"
DEMO_FILE = "tokio-[0-9]*/src/fs/file.rs"


def demo_rust_file() -> Path:
    """tokio's src/fs/file.rs from Debian's librust-tokio-dev; a clear error if it is not installed."""
    found = sorted(glob.glob(f"{RUST_REGISTRY}/{DEMO_FILE}"))
    if not found:
        raise click.ClickException(
            f"no {DEMO_FILE} under {RUST_REGISTRY}. Install the Rust sources: "
            "apt-get install librust-tokio-dev (make demo does this)"
        )
    return Path(found[-1])


@click.command()
@click.option("--lm", "lm_spec", default="local", show_default=True, help=LM_HELP)
@click.option("--experiments", default="E13", show_default=True, help="Comma-separated experiment ids.")
@click.option("--conditions", default="free,grammar_templates", show_default=True,
              help="Conditions to run, of each experiment that has them (others run all); 'all' for every one.")
@click.option("--suite", default="code,ontology,arith", show_default=True, help="Suites; --tasks of each.")
@click.option("--tasks", default=2, show_default=True, type=click.IntRange(1), help="Tasks per suite.")
@click.option("--levels", default="1,2", show_default=True, help="Task levels, comma-separated; 'all' for 1-5.")
@click.option("--parity", default="even", show_default=True, type=click.Choice(["even", "odd", "all"]),
              help="even: tasks held out from the seed templates; odd: the ones they were written from.")
@click.option("--free-tasks", default=1, show_default=True, type=click.IntRange(0),
              help="Tasks per suite for the free baseline, in a run of its own, E13-free (0: as many as --tasks).")
@click.option("--free-suites", default=1, show_default=True, type=click.IntRange(0),
              help="The free baseline runs on the first N suites of --suite only (0: every suite).")
@click.option("--max-iters", default=3, show_default=True, type=click.IntRange(1, 50), help="Per agent run.")
@click.option("--max-tokens", default=256, show_default=True, type=click.IntRange(16), help="Per LM call.")
@click.option("--learn-suite", default="code", show_default=True, type=click.Choice(["code", "ontology", "arith"]),
              help="Learning from scratch (E14's learned condition): the suite of the short stream.")
@click.option("--learn-tasks", default=4, show_default=True, type=click.IntRange(0),
              help="Stream tasks of the learning part (0 skips it); 3 held-out test tasks run before and after.")
@click.option("--runs-dir", default=None, type=click.Path(file_okay=False, path_type=Path), help=RUNS_DIR_HELP)
@click.option("--wide", is_flag=True, help="The results table as one table, as wide as its cells (default: blocks "
                                           "of columns within 100 characters, each led by the condition).")
@interrupts_in_one_line()  # Ctrl-C interrupts the kernel's cell (its run saves what it did), then one line, 130
def demo(lm_spec: str, experiments: str, conditions: str, suite: str, tasks: int, levels: str, parity: str,
         free_tasks: int, free_suites: int, max_iters: int, max_tokens: int, learn_suite: str, learn_tasks: int,
         runs_dir: Path | None, wide: bool) -> None:
    """The main job: can the embedded SmolLM2 solve tasks? E13's free vs grammar+templates, then learning from
    scratch on a short stream (the bank growing, a held-out test before and after), as a notebook."""
    from rich.console import Console

    from rlmlab.errors import RLMLabError
    from rlmlab.experiments import MAIN_JOB, run_notebook
    from rlmlab.experiments import results_table

    if "code" in suite.split(",") or (learn_tasks and learn_suite == "code"):
        demo_rust_file()  # the code suite's sources; a clear message before anything starts
    ids = [e.strip().upper() for e in experiments.split(",") if e.strip()]
    try:
        level_list = None if levels == "all" else [int(x) for x in levels.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"{levels!r}: give levels as 1,2 or 'all'", param_hint="--levels") from None
    params = {"experiments": ids, "lm": lm_spec, "suite": suite, "tasks": tasks, "max_iters": max_iters,
              "max_tokens": max_tokens, "levels": level_list, "free_tasks": free_tasks or None,
              "free_suites": free_suites or None,
              "parity": None if parity == "all" else parity,
              "conditions": None if conditions == "all" else [c.strip() for c in conditions.split(",") if c.strip()],
              "learn_suite": learn_suite, "learn_tasks": learn_tasks}
    click.echo(f"main job: {', '.join(ids)} on {suite} ({plural(tasks, 'task')} each) with lm {lm_spec}")
    try:
        done = run_notebook(MAIN_JOB, params, runs_dir=runs_dir, log_output=True)
    except RLMLabError as exc:
        raise click.ClickException(str(exc)) from None
    # one run directory per experiment, and the free baseline's own when it ran on fewer tasks
    runs = {d.name: d for d in sorted(done.run_dir.iterdir()) if (d / "results.jsonl").is_file()}
    click.echo("")
    click.echo(results_table(runs).text(None if wide else 100))
    click.echo("")
    Console().print(f"[bold]executed notebook[/]: {done.notebook}", soft_wrap=True)
    Console().print("[bold]results[/]: " + "  ".join(str(d / "results.jsonl") for d in runs.values()), soft_wrap=True)
    Console().print(f"[bold]plots[/]: {done.run_dir / 'plots'}", soft_wrap=True)
    if learn_tasks:
        from rlmlab.experiments import learning_line, read_results, summarise

        for label in ("E14-before", "E14"):
            rows = read_results(done.run_dir / label / "results.jsonl")
            if rows:
                click.echo(f"{label}: " + learning_line("learned", summarise(rows)["learned"]))
    from rlmlab.experiments import read_results, summarise

    failed = [f"{e} {cond}: {s['first_error']}" for e, d in runs.items()
              for cond, s in summarise(read_results(d / "results.jsonl")).items() if s.get("all_failed")]
    if failed:
        raise click.ClickException(f"every run failed in {plural(len(failed), 'condition')}, so the figures measure "
                                   f"nothing; {failed[0]}")
