"""``rlmlab experiment``: list the E1..E15 configs, run one, show a run (or one task's trajectory), compare two
runs, export one to Inspect AI's log format."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from rlmlab.cli._errors import InputError, interrupts_in_one_line
from rlmlab.cli._rlm import LM_CONSTRAIN, LM_CONSTRAIN_HELP, RUNS_DIR_HELP, WIDE_HELP
from rlmlab.errors import InputFileError
from rlmlab.text import plural


def _fail(exc: Exception) -> click.ClickException:
    """A config or argument problem is bad input (exit code 2); anything else is a failed run (exit code 1)."""
    from rlmlab.cli._errors import cli_error

    return cli_error(exc)


# What `summarise` reads from each results.jsonl row (written by the runner's _rows).
_ROW_NUMBERS = ("success", "converged", "input_tokens", "output_tokens", "lm_calls", "iterations", "tool_calls",
                "stdout_chars", "variables_info_chars", "large_returns", "sub_llm_calls", "prompt_chars_mean",
                "context_chars", "elapsed_ms")


def _results_rows(path: Path) -> list[dict]:
    """The rows of a run's results.jsonl, checked line by line: InputError ``file:line: problem`` for a line that is
    not UTF-8, not strict JSON, not an object, or lacks a field a summary needs. A last line cut short by a kill is
    skipped, as the runner does when it resumes."""
    from rlmlab._files import read_jsonl

    rows = []
    try:
        numbered = list(read_jsonl(path, objects=False, torn_tail=True))
    except InputFileError as exc:
        raise InputError(f"{exc}; the results file is damaged") from None
    for n, row in numbered:
        if not isinstance(row, dict):
            raise InputError(f"{path}:{n}: expected a JSON object (a results row), got {type(row).__name__}")
        for key, kinds in (("condition", str), ("task_id", str), ("rollout", int), ("best", bool), ("answer", object),
                           *((k, (int, float)) for k in _ROW_NUMBERS)):
            if key not in row or not isinstance(row[key], kinds) or (kinds is int and isinstance(row[key], bool)):
                problem = "missing" if key not in row else f"expected {getattr(kinds, '__name__', 'a number')}"
                raise InputError(f"{path}:{n}: field {key!r}: {problem}; not a results row of rlmlab experiment run")
        rows.append(row)
    return rows


@click.group()
def experiment() -> None:
    """Experiments E1..E15 (configs/experiments/): memory layers, decoding, learning, long context."""


@experiment.command("list")
def list_() -> None:
    """The experiment configs with their conditions and enabled layers."""
    from rlmlab.experiments import list_experiments, load_experiment

    table = Table(title="configs/experiments", title_justify="left")
    for col in ("id", "title", "conditions", "layers", "learning", "suite"):
        table.add_column(col, overflow="fold")
    for name in list_experiments():
        e = load_experiment(name)
        c = e.conditions[0]
        learning = f"{c.extractor}/{c.consolidator}/{c.forgetter}" if c.learns else "-"
        table.add_row(e.id, e.title, ", ".join(x.name for x in e.conditions), ",".join(c.layers.enabled()) or "none",
                      learning, e.defaults["suite"])
    from rlmlab.cli._console import wide_console

    wide_console().print(table)


@experiment.command("run")
@click.argument("name")
@click.option("--lm", default=None, help="local (default), scripted:probe, or a LiteLLM model string.")
@click.option("--suite", default=None, help="code, ontology or arith; several: code,ontology (--tasks of each); "
                                            "or a task file (JSONL, rlmlab tasks generate).")
@click.option("--test-suite", default=None, metavar="FILE",
              help="A task file run after each condition's stream with its bank frozen (rows: phase test).")
@click.option("--test-tasks", type=click.IntRange(1), default=None, help="Only the first N tasks of --test-suite.")
@click.option("--decoding", type=click.Choice(["grammar", "free"]), default=None,
              help="Override every condition's decoding (default: the config's; grammar unless it says free).")
@click.option("--tasks", type=click.IntRange(1), default=None, help="How many tasks of the suite (default: config).")
@click.option("--rollouts", type=click.IntRange(1, 16), default=None, help="Override every condition's rollouts.")
@click.option("--workers", type=click.IntRange(1, 32), default=None, help="Parallel tasks (conditions that learn run in order).")
@click.option("--condition", "conditions", multiple=True, help="Run only these conditions (repeatable).")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help=RUNS_DIR_HELP)
@click.option("--resume", default=None, metavar="RUN_ID", help="Continue a killed run; finished tasks are kept.")
@click.option("--backend", type=click.Choice(["threads", "ray"]), default="threads", show_default=True,
              help="Where units run: threads here, or Ray tasks (RAY_ADDRESS, else a local Ray instance).")
@click.option("--max-iters", type=click.IntRange(1, 50), default=None, help="Override every condition's max_iters.")
@click.option("--max-tokens", type=click.IntRange(16), default=None, help="Completion cap per LM call (make_lm).")
@click.option("--level", "levels", type=click.IntRange(1, 5), multiple=True, help="Only tasks of these levels (repeatable).")
@click.option("--parity", type=click.Choice(["odd", "even"]), default=None,
              help="Only odd- or even-numbered tasks of each level (even: held out from the seed templates).")
@click.option("--api-base", default=None, metavar="URL",
              help="An OpenAI-compatible server for a LiteLLM model: --lm openai/<model> "
                   "--api-base http://host:port/v1.")
@click.option("--lm-constrain", type=click.Choice(LM_CONSTRAIN), default="auto", show_default=True,
              help=LM_CONSTRAIN_HELP)
@interrupts_in_one_line()  # Ctrl-C: one line saying what was saved, exit code 130
def run(name: str, lm: str | None, suite: str | None, tasks: int | None, rollouts: int | None, workers: int | None,
        conditions: tuple[str, ...], runs_dir: Path | None, resume: str | None, backend: str, max_iters: int | None,
        max_tokens: int | None, levels: tuple[int, ...], parity: str | None, api_base: str | None,
        test_suite: str | None, test_tasks: int | None, decoding: str | None, lm_constrain: str) -> None:
    """Run experiment NAME (E1..E15 or a config path); writes runs/<run-id>/ and prints the summary."""
    from rlmlab.cli._console import wide_console
    from rlmlab.errors import RLMLabError
    from rlmlab.experiments import run_experiment

    console = wide_console()
    # a live bar at a terminal; piped to a log, a line per finished task (a bar there prints only at the end)
    progress = True if console.is_terminal else "lines"
    try:
        result = run_experiment(name, lm=lm, suite=suite, tasks=tasks, rollouts=rollouts, workers=workers,
                                conditions=list(conditions) or None, runs_dir=runs_dir, resume=resume,
                                backend=backend, max_iters=max_iters, levels=list(levels) or None, parity=parity,
                                test_suite=test_suite, test_tasks=test_tasks, decoding=decoding,
                                lm_options={**({"max_tokens": max_tokens} if max_tokens else {}),
                                            **({"api_base": api_base} if api_base else {}),
                                            **({"constrain": lm_constrain} if lm_constrain != "auto" else {})} or None,
                                progress=progress)
    except (RLMLabError, ValueError) as exc:
        raise _fail(exc) from None
    console.print(result)
    console.print(f"results: {result.run_dir / 'results.jsonl'}")
    for cond, s in result.summary.items():  # a learning run: the curve and the frozen test split, in one line each
        if s.get("test") or len(s.get("learning_curve") or []) > 1:
            from rlmlab.experiments import learning_line

            console.print(learning_line(cond, s), soft_wrap=True, highlight=False)
    if result.failed_conditions:
        first = result.summary[result.failed_conditions[0]]["first_error"]
        raise click.ClickException(f"every run of {', '.join(result.failed_conditions)} failed, so its figures "
                                   f"measure nothing; first error: {first}")


@experiment.command("show")
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--task", default=None, metavar="ID", help="Show this task's trajectory, with every LM call's prompt.")
@click.option("--condition", default=None, help="The task's condition (needed when several ran it).")
@click.option("--rollout", type=click.IntRange(0), default=None, help="The rollout (default: the selected one).")
@click.option("--prompts/--no-prompts", default=True, show_default=True,
              help="With --task: print the exact messages sent on every LM call.")
@click.option("--wide", is_flag=True, help=WIDE_HELP)
def show(run: Path, task: str | None, condition: str | None, rollout: int | None, prompts: bool,
         wide: bool) -> None:
    """A run's conditions (pass rate with its 95% Wilson interval) and one row per task; with --task, that
    task's trajectory: each iteration's code, output and figures, and the prompt and completion of its LM calls."""
    from rlmlab.cli._console import FIT_WIDTH, wide_console
    from rlmlab.cli._run_show import run_overview, single_run, task_detail

    console = wide_console(fit=None if wide else FIT_WIDTH)
    try:
        if task is None and not (run / "results.jsonl").is_file() and (run / "trajectory.jsonl").is_file():
            parts = single_run(run, prompts)  # a directory of rlmlab rlm run: shown as rlmlab rlm show shows it
        else:
            parts = run_overview(run) if task is None else task_detail(run, task, condition, rollout, prompts)
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(exc) from None
    for part in parts:
        console.print(part)


@experiment.command("rerun")
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the new run goes (default: beside RUN).")
@click.option("--json", "as_json", is_flag=True, help="The comparison as JSON.")
@interrupts_in_one_line()  # Ctrl-C: one line saying what was saved, exit code 130
def rerun(run: Path, runs_dir: Path | None, as_json: bool) -> None:
    """Run RUN again from its files alone (config.json, provenance.json) and compare: per task, the same answer
    and verdict or not, and what differs between the two environments. Exit status 1 when any task differs."""
    import json

    from rlmlab.cli._console import wide_console
    from rlmlab.experiments import rerun_experiment

    try:
        report = rerun_experiment(run, runs_dir=runs_dir, progress="lines" if as_json else True)
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(exc) from None
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=1, ensure_ascii=False, default=str))
    else:
        table = Table(title=f"{run} (original) and {report.rerun} (rerun)")
        for col in ("condition", "phase", "task", "rollout", "answer", "rerun answer", "pass", "rerun pass", "same"):
            table.add_column(col, overflow="fold")
        for r in report.rows:
            table.add_row(r["condition"], r["phase"], r["task_id"], str(r["rollout"]), str(r["answer"]),
                          str(r["rerun_answer"]), str(r["success"]), str(r["rerun_success"]),
                          "yes" if r["same_answer"] and r["same_verdict"] else "NO")
        console = wide_console()
        console.print(table)
        same = sum(r["same_answer"] and r["same_verdict"] for r in report.rows)
        console.print(f"{same} of {plural(len(report.rows), 'row')} the same (answer and verdict)", highlight=False)
        for line in report.differences or ["environment: no difference recorded"]:
            console.print(f"differs: {line}" if report.differences else line, markup=False, highlight=False,
                          soft_wrap=True)
    if not report.identical:
        raise SystemExit(1)


@experiment.command("export")
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["inspect"]), default="inspect", show_default=True,
              help="inspect: an Inspect AI eval log (needs pip install 'rlmlab[inspect]').")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, metavar="FILE",
              help="The log file: .eval (Inspect's zipped format) or .json.")
def export(run: Path, fmt: str, out: Path) -> None:
    """Write RUN as an Inspect AI eval log: one sample per task and rollout with its score (the run's verdict
    under the judge's name), and a transcript of each step (the LM call, the code run and its output); open it
    with ``inspect view --log-dir <FILE's folder>``."""
    from rlmlab.errors import RLMLabError
    from rlmlab.experiments import export_inspect, listed_by_inspect_view

    try:
        written = export_inspect(run, out)
    except FileNotFoundError as exc:  # not a run directory
        raise InputError(exc) from None
    except (RLMLabError, ValueError) as exc:  # a bad --out suffix (exit 2); inspect_ai not installed (exit 1)
        raise _fail(exc) from None
    click.echo(f"wrote {written} ({fmt}); view it with: inspect view --log-dir {written.parent}")
    if not listed_by_inspect_view(written):
        click.echo("note: inspect view lists a .json log only when its name starts with an ISO time, as Inspect's "
                   "own do (2026-11-25T02-21-45_E1.json); an .eval log under any name")


@experiment.command("compare")
@click.argument("run_a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(exists=True, file_okay=False, path_type=Path))
def compare(run_a: Path, run_b: Path) -> None:
    """Two run directories side by side (A and B): per metric, each condition's value in A and B, B − A and
    B / A. Conditions are paired by name (a one-condition run is paired with each condition of the other)."""
    from rich.table import Table

    from rlmlab.cli._console import wide_console
    from rlmlab.experiments import summarise
    from rlmlab.experiments import compare_table

    summaries = []
    for d in (run_a, run_b):
        if not (d / "results.jsonl").is_file():
            raise InputError(f"{d}: no results.jsonl (is it a run directory?)")
        summaries.append(summarise(_results_rows(d / "results.jsonl")))
    header, rows = compare_table(*summaries)
    table = Table(title=f"A = {run_a.name}   B = {run_b.name}", title_justify="left")
    for i, h in enumerate(header):
        table.add_column(h, justify="right" if i else "left", overflow="fold")
    for r in rows:
        table.add_row(*r)
    wide_console().print(table)


@experiment.command("notebook")
@click.argument("name")
@click.option("-p", "--parameter", "parameters", nargs=2, multiple=True, metavar="NAME VALUE",
              help="A notebook parameter (repeatable): -p lm local -p tasks 10. Values are Python literals or text.")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help=RUNS_DIR_HELP)
@click.option("--kernel", default="rlmlab", show_default=True, help="Jupyter kernel to execute on.")
@click.option("--log-output/--no-log-output", default=False, help="Stream the cells' output to the terminal.")
@interrupts_in_one_line()  # Ctrl-C interrupts the kernel's cell (its run saves what it did), then one line, 130
def notebook(name: str, parameters: tuple[tuple[str, str], ...], runs_dir: Path | None, kernel: str, log_output: bool) -> None:
    """Execute the notebook of experiment NAME (E1..E15, or a .ipynb path) through papermill.

    The executed notebook is written into the run directory, next to results.jsonl and the plots.
    """
    from rlmlab.errors import RLMLabError
    from rlmlab.experiments import parse_parameter, run_notebook

    try:
        done = run_notebook(name, {k: parse_parameter(v) for k, v in parameters}, runs_dir=runs_dir, kernel=kernel,
                            log_output=log_output)
    except (RLMLabError, ValueError) as exc:
        raise _fail(exc) from None
    click.echo(f"notebook: {done.notebook}")  # click, not rich: a long path must stay on one line
    click.echo(f"results:  {done.run_dir}")
