"""``rlmlab oracle``: validate RLM traces into golden JSONL; run tree-sitter queries over Rust files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from rlmlab.cli._errors import InputError, Interrupted
from rlmlab.text import plural


@click.group()
def oracle() -> None:
    """Verify agents' FINAL answers about source code."""


@oracle.command("validate")
@click.argument("traces", type=click.Path(exists=True, path_type=Path))
@click.option("--source-root", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Directory that relative source paths in the traces are resolved against.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=Path("golden.jsonl"),
              show_default=True, help="Golden traces (the spec's fields only).")
@click.option("--review", type=click.Path(dir_okay=False, path_type=Path), default=Path("failed.jsonl"),
              show_default=True, help="Failed and consensus results, with reasons, for review.")
@click.option("--no-cache", is_flag=True, help="Re-read and re-parse every source for every trace.")
@click.option("--lm", "lm_spec", default=None,
              help="Check semantic queries by self-consistency with this LM (e.g. local); default: unverified.")
def validate(traces: Path, source_root: Path | None, out: Path, review: Path, no_cache: bool,
             lm_spec: str | None) -> None:
    """Validate TRACES (a JSONL file, or a runs/ directory of trajectory.jsonl files).

    Golden and review records are written as each trace is decided (Ctrl-C keeps them). Exit status: 0 when every
    line was read, 2 when malformed lines were skipped (each named ``file:line`` on stderr), 130 on Ctrl-C.
    ``<out stem>.provenance.json`` beside the golden file says what ran.
    """
    from rlmlab.provenance import recording

    with recording() as collected:
        _validate(traces, source_root, out, review, no_cache, lm_spec, collected)


def _validate(traces: Path, source_root: Path | None, out: Path, review: Path, no_cache: bool, lm_spec: str | None,
              collected: Any) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from rlmlab._files import interrupts_deferred, write_atomic
    from rlmlab.oracle import MalformedLine, ResultWriter, TraceValidator, read_analysis_results
    from rlmlab.provenance import note_file, provenance

    console = Console(stderr=True)
    if traces.is_file():
        note_file(traces, "traces")
    items = list(read_analysis_results(traces))
    for bad in (i for i in items if isinstance(i, MalformedLine)):
        console.print(f"[yellow]skipped[/] {bad}", soft_wrap=True, highlight=False)
    lm = None
    if lm_spec:
        from rlmlab.lm import make_lm

        lm = make_lm(lm_spec)
    validator = TraceValidator(source_root, use_cache=not no_cache, lm=lm)
    todo = sum(not isinstance(i, MalformedLine) for i in items)
    done = 0
    with ResultWriter(out, review) as writer, Progress(
            TextColumn("validating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console,
            transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task("validate", total=todo)

        def decided(result) -> None:
            nonlocal done
            with interrupts_deferred():  # the record and the count that reports it: both or neither
                writer.write(result)
                done += 1
            bar.advance(task)

        try:
            stats = validator.batch_validate(items, progress=decided)
        except KeyboardInterrupt:
            stats = None
        finally:  # beside the golden file: what validated it (sources root, LM, commit, versions), however it ended
            write_atomic(out.with_name(out.stem + ".provenance.json"), json.dumps(provenance(
                collected, lm=lm, command="oracle validate", traces=str(traces.resolve()), golden=str(out),
                review=str(review), source_root=str(source_root) if source_root else None,
                cache=not no_cache), indent=2, default=str))
    if stats is None:
        raise Interrupted(f"interrupted after {done} of {plural(todo, 'trace')}: "
                          f"{plural(writer.golden, 'golden record')} kept in "
                          f"{out}, {writer.review} for review in {review}")
    n_golden, n_review = writer.golden, writer.review
    out_console = Console()
    out_console.print(stats)
    for reason, n in list(stats.unverified_reasons.items())[:5]:
        out_console.print(f"unverified x{n}: {reason}", markup=False, highlight=False, soft_wrap=True)
    out_console.print(f"golden: [bold]{n_golden}[/] -> {out}    review: [bold]{n_review}[/] -> {review}",
                      soft_wrap=True, highlight=False)
    if stats.malformed:
        out_console.print(f"[yellow]{plural(len(stats.malformed), 'malformed line')} skipped[/]")
        raise SystemExit(2)


@oracle.command("ast-query")
@click.argument("query")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("-k", "limit", default=50, show_default=True, type=click.IntRange(1), help="Matches shown per file.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per match instead of text lines.")
def ast_query_cmd(query: str, paths: tuple[Path, ...], limit: int, as_json: bool) -> None:
    """Run a tree-sitter QUERY (s-expression) over Rust files (directories: every *.rs under them)."""
    from rlmlab._files import read_text
    from rlmlab.errors import InputFileError
    from rlmlab.oracle import AstQueryError, TreeSitterOracle

    files = [f for p in paths for f in (sorted(p.rglob("*.rs")) if p.is_dir() else [p])]
    console, errors = Console(), Console(stderr=True)
    total, skipped = 0, 0
    for file in files:
        try:
            text = read_text(file)
        except InputFileError as exc:
            if file in paths:  # named on the command line: refuse it
                raise InputError(exc) from None
            skipped += 1  # found under a directory: skip it and go on with the others
            errors.print(f"{exc}; skipped", markup=False, highlight=False, soft_wrap=True)
            continue
        try:
            matches = TreeSitterOracle(text, str(file)).query(query)
        except AstQueryError as exc:
            raise click.BadParameter(str(exc), param_hint="QUERY") from None
        total += len(matches)
        for m in matches[:limit]:
            if as_json:
                click.echo(json.dumps({"path": str(file), **m.to_dict()}))
            else:
                console.print(f"{file}:{m.format()}", markup=False, highlight=False, soft_wrap=True)
        if len(matches) > limit:
            console.print(f"{file}: ... {len(matches) - limit} more (use -k)", style="dim")
    if not as_json:
        errors.print(f"{plural(total, 'match', 'matches')} in {plural(len(files) - skipped, 'file')}"
                     + (f", {skipped} skipped" if skipped else ""), style="dim")
