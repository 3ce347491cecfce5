"""``rlmlab rlm run``: one RLM task over a file, on any LM."""

from __future__ import annotations

from pathlib import Path

import click

from rlmlab._paths import rlmlab_command, runs_home
from rlmlab.cli._errors import InputError, interrupts_in_one_line
from rlmlab.text import plural

# rlmlab.lm.SERVER_CONSTRAINTS, spelled out so --help needs no import of the LM stack
LM_CONSTRAIN = ("auto", "llamacpp", "vllm", "vllm-guided", "ollama", "none")
LM_CONSTRAIN_HELP = ("How a LiteLLM model's server takes the step grammar: auto asks the server (--api-base); "
                     "llamacpp (grammar), vllm (structured_outputs), vllm-guided (guided_grammar, vLLM < 0.10.2), "
                     "ollama (JSON schemas only), none (steps run free).")
LM_HELP = "scripted is for tests; local = embedded SmolLM2-135M; or a LiteLLM model string (openai/gpt-4o-mini)."
RUNS_DIR_HELP = ("Where runs go. Default: $RLMLAB_RUNS_DIR, else the checkout's runs/ when run inside the checkout "
                 "(the guides write there too), else ./runs.")
WIDE_HELP = ("Piped to a log: every table whole, as wide as its cells (default: within 100 columns, a wide "
             "table in blocks of columns, each row's first cell repeated).")


def run_and_show(query: str, path: Path, *, lm_spec: str, context_mode: str, max_iters: int, runs_dir: str,
                 step_timeout: float, n_threads: int | None, turing_config: Path | None = None,
                 api_base: str | None = None, decoding: str = "grammar", sandbox: str = "confined",
                 lm_constrain: str = "auto", budget: dict | None = None, wide: bool = False) -> int:
    """Run one task, print the summary, return the exit code (1 if the run recorded an error). ``budget``: the
    run's limits (``max_tokens``, ``max_seconds``, ``max_cost``, ``max_errors``, ``show_budget``) and recursion
    (``max_depth``, ``max_concurrent``). Piped to a log, the summary keeps to :data:`FIT_WIDTH` columns (a wide
    table in blocks of whole columns) as ``rlm show`` does, unless ``wide``."""
    from rlmlab._files import read_text
    from rlmlab.errors import ConfigError, InputFileError, RLMLabError
    from rlmlab.executors import TRAJECTORY_FILE, run_rlm, trajectory_summary
    from rlmlab.lm import make_lm

    from rich.markup import escape

    from rlmlab.cli._console import FIT_WIDTH, wide_console
    from rlmlab.cli._run_show import why_no_answer

    # piped to a log: within 100 columns, a wide table in blocks of whole columns (numbers never split), as rlm show
    console = wide_console(fit=None if wide else FIT_WIDTH)
    try:
        text = read_text(path)
    except InputFileError as exc:
        raise InputError(exc) from None
    from rlmlab.sandbox import choose_sandbox

    try:  # before the LM loads: `--sandbox required` where it cannot run is refused at once, in one line
        choose_sandbox(sandbox)
    except ConfigError as exc:
        raise InputError(f"--sandbox {exc}") from None
    options: dict = {"n_threads": n_threads} if lm_spec.startswith("local") else {}
    if api_base:  # an OpenAI-compatible server (vLLM, ollama, llama.cpp's server): --lm openai/<model>
        options["api_base"] = api_base
    if "/" in lm_spec and not lm_spec.startswith("local"):  # a LiteLLM model: how its server takes a grammar
        options["constrain"] = lm_constrain
    if turing_config is not None:
        from rlmlab._paths import PROJECT_ROOT

        found = turing_config if turing_config.exists() else PROJECT_ROOT / turing_config
        if not found.is_file():
            raise InputError(f"--turing-config {turing_config}: no such file (looked in . and {PROJECT_ROOT})")
        from rlmlab.turing import load_turing_config

        try:  # before the LM loads: a bad config is refused at once
            config = load_turing_config(found)
        except ConfigError as exc:
            raise InputError(f"--turing-config {exc}") from None
    try:
        with console.status(f"loading LM {lm_spec} ..."):
            lm = make_lm(lm_spec, **options)
    except (RLMLabError, ValueError) as exc:
        raise click.BadParameter(str(exc), param_hint="--lm") from None
    protocol = None
    if turing_config is not None:
        from rlmlab.turing import TuringProtocol

        protocol = TuringProtocol.from_config(config, lm=lm, log=Path(runs_dir) / "turing.sqlite")
        for problem in protocol.problems:
            console.print(f"[yellow]turing config:[/] {problem}", soft_wrap=True, highlight=False)
    trace = _progress_trace(console, max_iters)
    with console.status(f"running RLM on {path.name} ({plural(len(text), 'char')}, up to "
                        f"{plural(max_iters, 'iteration')}) ..."):
        traj = run_rlm(query, text, lm=lm, context_mode=context_mode, max_iters=max_iters, runs_dir=runs_dir,
                       step_timeout=step_timeout, source_path=str(path), turing=protocol, decoding=decoding,
                       sandbox=sandbox, trace=trace, **(budget or {}))
    console.print(trajectory_summary(traj))
    why = why_no_answer(traj)  # the line rlm show prints under the summary
    if why:
        console.print(why, style="yellow", highlight=False, markup=False)
    if traj.stopped:
        console.print(f"[yellow]stopped: {traj.stopped}[/] after {plural(len(traj.iterations), 'step')}, all kept; "
                      + next((n for n in traj.notes if n.startswith("stopped before")), ""), soft_wrap=True,
                      highlight=False)
    console.print(f"decoding: {traj.decoding}" + "".join(f" ({n})" for n in traj.notes if "decoding" in n),
                  highlight=False, markup=False)
    console.print(f"sandbox: {traj.sandbox}" + "".join(f" ({n})" for n in traj.notes if "sandbox" in n),
                  highlight=False, markup=False)
    # paths and commands to copy stay on one line, however narrow the log
    console.print(f"trajectory: [bold]{escape(str(Path(runs_dir) / traj.run_id / TRAJECTORY_FILE))}[/]",
                  soft_wrap=True)
    console.print(f"each step with its prompts: {rlmlab_command()} rlm show {Path(runs_dir) / traj.run_id}",
                  soft_wrap=True, highlight=False, markup=False)
    if protocol is not None:
        fired = [h for it in traj.iterations for r in it.turing for h in r["hooks"]]
        console.print(f"turing: {plural(len(fired), 'violation')} corrected "
                      f"({', '.join(sorted(set(fired))) or 'none'}); "
                      f"log: {rlmlab_command()} turing log --db {Path(runs_dir) / 'turing.sqlite'} "
                      f"--session {traj.run_id}",
                      soft_wrap=True, highlight=False)
    return 1 if traj.error else 0


def _progress_trace(console, max_iters: int):
    """The run's ContextTrace, printing a line per finished iteration (``[2/6] print(x) · 14.2 s``): a step of the
    embedded model takes seconds to minutes, and piped to a log the status spinner shows nothing."""
    import time

    from rlmlab.trace import ContextTrace, EventKind

    trace, code, t0 = ContextTrace(), {}, [time.perf_counter()]

    def line(event) -> None:
        if event.kind is EventKind.AssistantCode:
            code[event.iteration] = next(iter(event.preview.strip().splitlines()), "")[:100]
        elif event.kind is EventKind.ExecutionOutput:
            now = time.perf_counter()
            console.print(f"[{event.iteration}/{max_iters}] {code.get(event.iteration, '')} · {now - t0[0]:.1f} s",
                          soft_wrap=True, highlight=False, markup=False)
            t0[0] = now

    trace.subscribe(line)
    return trace


@click.group()
def rlm() -> None:
    """Run RLM tasks."""


@rlm.command("run")
@click.argument("query")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--lm", "lm_spec", default="local", show_default=True, help=LM_HELP)
@click.option("--context-mode", type=click.Choice(["handle", "string"]), default="handle", show_default=True,
              help="Pass the file as a BlobRef handle or as a plain string (DSPy's default).")
@click.option("--max-iters", default=6, show_default=True, type=click.IntRange(1, 100))
@click.option("--step-timeout", default=30.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds one REPL step may run.")
@click.option("--threads", "n_threads", default=None, type=click.IntRange(1, 256), help="Threads for the local model.")
@click.option("--runs-dir", default=None, type=click.Path(file_okay=False), help=RUNS_DIR_HELP)
@click.option("--turing", "turing_on", is_flag=True, help="Check every step with the Turing Protocol.")
@click.option("--turing-config", type=click.Path(dir_okay=False, path_type=Path), default=Path("configs/turing.yaml"),
              show_default=True, help="The turing_protocol: configuration (used with --turing).")
@click.option("--api-base", default=None, metavar="URL",
              help="An OpenAI-compatible server for a LiteLLM model: --lm openai/<model> "
                   "--api-base http://host:port/v1.")
@click.option("--decoding", type=click.Choice(["grammar", "free"]), default="grammar", show_default=True,
              help="grammar: every step follows the step grammar (the local model; other LMs run free, and the "
                   "trajectory says so); free: unconstrained replies.")
@click.option("--sandbox", type=click.Choice(["confined", "pyodide", "none", "required", "best_effort"]),
              default="confined", show_default=True,
              help="Where the model's code runs (docs/sandboxes.md): confined falls back with a warning where "
                   "it cannot run; required refuses instead; none runs it unconfined.")
@click.option("--lm-constrain", type=click.Choice(LM_CONSTRAIN), default="auto", show_default=True,
              help=LM_CONSTRAIN_HELP)
@click.option("--max-tokens", type=click.IntRange(min=1), default=None,
              help="Stop before the next step once the run's LM calls (sub-calls included) used this many tokens.")
@click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop before the next step once the run has taken this many seconds.")
@click.option("--max-cost", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop before the next step once the run cost this many dollars (litellm's price table; local "
                   "models cost 0).")
@click.option("--max-errors", type=click.IntRange(min=1), default=None,
              help="Stop before the next step after this many failed steps in a row.")
@click.option("--show-budget", is_flag=True, help="Tell the model in each prompt what is left of each budget.")
@click.option("--max-depth", type=click.IntRange(min=1), default=1, show_default=True,
              help="2 or more: step code may start sub-agents with their own REPL (rlm_query, rlm_query_batched); "
                   "1: plain sub-calls only (llm_query).")
@click.option("--max-concurrent", type=click.IntRange(min=1), default=4, show_default=True,
              help="Sub-agents or sub-calls one batched call runs at once.")
@click.option("--wide", is_flag=True, help=WIDE_HELP)
@interrupts_in_one_line()  # Ctrl-C: one line saying what was saved, exit code 130
def run(query: str, file: Path, lm_spec: str, context_mode: str, max_iters: int, step_timeout: float,
        n_threads: int | None, runs_dir: str | None, turing_on: bool, turing_config: Path, api_base: str | None,
        decoding: str, sandbox: str, lm_constrain: str, max_tokens: int | None, max_seconds: float | None,
        max_cost: float | None, max_errors: int | None, show_budget: bool, max_depth: int,
        max_concurrent: int, wide: bool) -> None:
    """Answer QUERY about FILE with an RLM agent; writes runs/<run-id>/trajectory.jsonl (and lm_calls.jsonl)."""
    budget = {"max_tokens": max_tokens, "max_seconds": max_seconds, "max_cost": max_cost, "max_errors": max_errors,
              "show_budget": show_budget, "max_depth": max_depth, "max_concurrent": max_concurrent}
    raise SystemExit(run_and_show(query, file, lm_spec=lm_spec, context_mode=context_mode, max_iters=max_iters,
                                  runs_dir=runs_dir or str(runs_home()), step_timeout=step_timeout, n_threads=n_threads,
                                  turing_config=turing_config if turing_on else None, api_base=api_base,
                                  decoding=decoding, sandbox=sandbox, lm_constrain=lm_constrain, budget=budget,
                                  wide=wide))


@rlm.command("show")
@click.argument("run_dir", type=click.Path(exists=True, path_type=Path))
@click.option("--prompts/--no-prompts", default=True, show_default=True,
              help="Print the exact messages sent on every LM call.")
@click.option("--wide", is_flag=True, help=WIDE_HELP)
def show(run_dir: Path, prompts: bool, wide: bool) -> None:
    """One run written by ``rlmlab rlm run`` (RUN_DIR is runs/<run-id>, or its trajectory.jsonl): the summary
    ``rlm run`` printed, how its token figures relate, then each iteration's code, output and figures with the
    prompt and completion of its LM calls (as ``rlmlab experiment show RUN --task ID`` shows an experiment's). A run
    with sub-runs (``--max-depth 2``) also shows its call tree, and each sub-run's steps under the step that started
    it."""
    from rlmlab.cli._console import FIT_WIDTH, wide_console
    from rlmlab.cli._run_show import single_run
    from rlmlab.errors import RLMLabError

    if run_dir.is_file():
        run_dir = run_dir.parent
    try:
        parts = single_run(run_dir, prompts)
    except (RLMLabError, ValueError) as exc:
        raise InputError(str(exc)) from None
    console = wide_console(fit=None if wide else FIT_WIDTH)
    for part in parts:
        console.print(part)
