"""``rlmlab teach``: run the teacher-learner loop (three arms, both teacher modes) and show its traces."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from rlmlab.cli._errors import InputError
from rlmlab.text import plural


@click.group()
def teach() -> None:
    """The teacher-learner loop: bias-aware reprompting, measured against single pass and try-again."""


@teach.command("run")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("configs/run.yaml"), show_default=True, help="Run config (seed 002's run.yaml shape).")
@click.option("--dataset", default=None, help="A question,reference CSV or a GSM8K-style JSONL.")
@click.option("--max-turns", type=click.IntRange(1), default=None, help="Answers per question, the first included.")
@click.option("--provider", default=None, help="demo | local | any LiteLLM model string (e.g. openai/gpt-4o-mini).")
@click.option("--decoding", type=click.Choice(["code", "grammar", "free"]), default=None,
              help="How an LM learner decodes (default: the config's): code = one expression over the question's "
                   "numbers, computed by rlmlab; grammar = working then 'Answer: <number>'; free. An LM that cannot "
                   "follow a grammar runs free.")
@click.option("--mode", "modes", multiple=True, type=click.Choice(["reference", "reference_free"]),
              help="Teacher mode; repeat for both (default: the config's modes, both).")
@click.option("-k", "--parallel-learners", "k", type=click.IntRange(1), default=None,
              help="k sampled learners voting (needs a learner temperature > 0).")
@click.option("--limit", type=click.IntRange(1), default=None, help="Only the first N items.")
@click.option("--out", "traces_out", default=None, help="traces.json path (the other files go beside it).")
@click.option("--history", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Earlier traces.json to learn the expected gain of reprompts from (repeatable).")
@click.option("--turing/--no-turing", default=None, help="Pass learner turns through the Turing Protocol.")
@click.option("--json", "as_json", is_flag=True, help="Print summary.json instead of the table.")
def run(config_path: Path, dataset: str | None, max_turns: int | None, provider: str | None, decoding: str | None,
        modes: tuple[str, ...],
        k: int | None, limit: int | None, traces_out: str | None, history: tuple[str, ...], turing: bool | None,
        as_json: bool) -> None:
    """Run single pass, try-again and bias-aware RTS on the same items, in each teacher mode."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from rlmlab.errors import ConfigError, InputFileError, RLMLabError
    from rlmlab.teach import load_dataset, load_run_config, run_teach
    from rlmlab.teach import ARMS

    try:
        config = load_run_config(config_path).with_overrides(
            dataset=dataset, max_turns=max_turns, provider=provider, decoding=decoding, modes=modes or None,
            parallel_learners_k=k,
            limit=limit, traces_out=traces_out, history=history or None, turing=turing)
        n_items = len(load_dataset(config.dataset, limit=config.limit))
        protocol = None
        if config.turing and config.effective_provider == "demo":
            Console(stderr=True).print("[yellow]--turing: the demo simulator has no model turns to check; ignored")
        elif config.turing:
            from rlmlab.turing import TuringProtocol

            protocol = TuringProtocol.from_config(log=Path(config.traces_out).with_name("turing.sqlite"))
        console = Console(stderr=True)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=as_json, disable=not console.is_terminal) as bar:
            task = bar.add_task("starting", total=n_items * len(ARMS) * len(config.modes))
            report = run_teach(config, turing=protocol,
                               progress=lambda label: bar.update(task, advance=1, description=label))
    except (ConfigError, InputFileError) as exc:
        raise InputError(exc) from None
    except RLMLabError as exc:
        from rlmlab.cli._errors import cli_error

        raise cli_error(exc) from None
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        return
    out = Console()
    out.print(report)
    per_s = report.to_dict()["turns_per_second"]
    out.print(f"{plural(report.turns, 'learner turn')} in {report.seconds:.1f} s ({per_s} turns/s). "
              f"traces: {config.traces_out} (+ per-arm files and summary.json beside it)")


@teach.command("show")
@click.argument("traces", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--qid", multiple=True, help="Only these items (repeatable).")
@click.option("--wrong", is_flag=True, help="Only items whose final answer is wrong.")
@click.option("--reprompted", is_flag=True, help="Only items that were reprompted.")
def show(traces: Path, qid: tuple[str, ...], wrong: bool, reprompted: bool) -> None:
    """Show a traces.json turn by turn."""
    from rlmlab.errors import InputFileError
    from rlmlab.teach import read_traces

    try:
        loaded = read_traces(traces)
    except InputFileError as exc:
        raise InputError(exc) from None
    console = Console()
    shown = 0
    for trace in loaded:
        if (qid and trace.qid not in qid) or (wrong and trace.final_accuracy) or (reprompted and len(trace.turns) < 2):
            continue
        console.print(trace)
        shown += 1
    console.print(f"{shown} of {plural(len(loaded), 'item')} shown")
