"""``rlmlab turing``: the interaction log, and precision/recall of the hooks on a labelled set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from rlmlab._paths import PROJECT_ROOT
from rlmlab.cli._errors import InputError
from rlmlab.text import plural

DEFAULT_DB = Path("runs/turing.sqlite")
DEFAULT_REPORT = Path("runs/turing_eval.json")


@click.group()
def turing() -> None:
    """The Turing Protocol: live validation of agent steps."""


@turing.command("log")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB, show_default=True)
@click.option("--session", default=None, help="Only this session (an RLM run id).")
@click.option("--hook", default=None, help="Only rounds where this hook confirmed a violation.")
@click.option("--status", type=click.Choice(["ok", "violation_detected"]), default=None,
              help="Only rounds with this final (stage 3) status.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1), help="Newest rounds shown.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per round.")
def log(db: Path, session: str | None, hook: str | None, status: str | None, limit: int, as_json: bool) -> None:
    """Show validation rounds from the interaction log."""
    import sqlite3

    from rlmlab.turing import load_interaction_log

    try:
        rows = load_interaction_log(db, session=session, hook=hook, status=status, limit=limit)
    except FileNotFoundError as exc:
        raise InputError(f"--db {exc}") from None
    except (sqlite3.DatabaseError, IsADirectoryError) as exc:
        raise InputError(f"--db {db}: not an interaction log ({exc})") from None
    if as_json:
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False))
        return
    table = Table(title=f"interaction log {db} ({plural(len(rows), 'round')})")
    for col in ("id", "session", "turn", "phase", "scope", "detector", "stage 1", "stage 2", "stage 3",
                "violations", "ms"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(str(r["id"]), r["session"], r["turn_id"], r["phase"], r["scope"], r["detector"],
                      r["stage1_status"], r["stage2_status"], r["stage3_status"],
                      ", ".join(v["hook"] for v in r["violations"]) or "-", f"{r['elapsed_ms']:.1f}")
    Console().print(table)


@turing.command("eval")
@click.option("--data", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=PROJECT_ROOT / "data" / "turing_eval.jsonl", show_default=True)
@click.option("--detector", type=click.Choice(["programmatic", "llm", "both"]), default="programmatic",
              show_default=True)
@click.option("--lm", "lm_spec", default="local", show_default=True,
              help="Backend for the LLM detector and llm validators (objective_completion); 'none' for no LM.")
@click.option("--max-tokens", default=96, show_default=True, type=click.IntRange(8),
              help="Longest detector/judge reply (the detector answers in a few `name: reason` lines).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_REPORT, show_default=True,
              help="The reports as JSON (as --json prints them); <out stem>.provenance.json beside it says what ran.")
@click.option("--json", "as_json", is_flag=True, help="The reports as JSON.")
def eval_cmd(data: Path, detector: str, lm_spec: str, max_tokens: int, out: Path, as_json: bool) -> None:
    """Precision and recall per hook on a labelled JSONL file of agent turns."""
    from rlmlab.provenance import recording

    with recording() as collected:  # the labelled file (sha256), the LM and what the registries made
        reports = _evaluate(data, detector, lm_spec, max_tokens, out, collected)
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in reports], indent=1))
        return
    console = Console()
    for report in reports:
        table = Table(title=f"{report.detector} detector: {plural(report.cases, 'turn')} from {data}, "
                            f"{report.ms_per_turn:.1f} ms/turn")
        for col in ("hook", "positives", "TP", "FP", "FN", "precision", "recall"):
            table.add_column(col, justify="left" if col == "hook" else "right")
        for s in report.scores.values():
            fmt = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
            table.add_row(s.hook, str(s.positives), str(s.tp), str(s.fp), str(s.fn), fmt(s.precision),
                          fmt(s.recall))
        console.print(table)
        console.print(f"{len(report.mistakes)} of {plural(report.cases, 'turn')} "
                      f"{'differs' if len(report.mistakes) == 1 else 'differ'} from their labels")
    console.print(f"reports: {out}   provenance: {_provenance_path(out)}", soft_wrap=True, highlight=False)


def _provenance_path(out: Path) -> Path:
    return out.with_name(out.stem + ".provenance.json")


def _evaluate(data: Path, detector: str, lm_spec: str, max_tokens: int, out: Path, collected: Any) -> list[Any]:
    """Score each detector; write the reports to ``out`` and, however the evaluation ends once the labelled file
    was read, ``<out stem>.provenance.json`` beside it: the file's sha256, the LM, the hooks as they ran."""
    from rich.progress import Progress

    from rlmlab._files import write_atomic
    from rlmlab.lm import make_lm
    from rlmlab.provenance import provenance
    from rlmlab.turing import LLMDetector, ProgrammaticDetector, TuringProtocol
    from rlmlab.turing import evaluate, load_eval_cases

    try:
        cases = load_eval_cases(data)
    except ValueError as exc:
        raise InputError(exc) from None
    lm = None if lm_spec == "none" else make_lm(lm_spec, max_tokens=max_tokens)
    if lm is None and detector != "programmatic":
        raise click.UsageError("--detector llm needs an LM (--lm local, or a LiteLLM model string)")
    kinds = ["programmatic", "llm"] if detector == "both" else [detector]
    protocols = [TuringProtocol(detector=LLMDetector(lm) if kind == "llm" else ProgrammaticDetector(), lm=lm)
                 for kind in kinds]
    reports: list[Any] = []
    console = Console(stderr=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        for kind, protocol in zip(kinds, protocols):
            with Progress(console=console, transient=True) as bar:
                task = bar.add_task(f"{kind} detector", total=len(cases))
                reports.append(evaluate(cases, protocol, progress=lambda: bar.advance(task)))
        write_atomic(out, json.dumps([r.to_dict() for r in reports], indent=1))
    finally:
        write_atomic(_provenance_path(out), json.dumps(provenance(
            collected, lm=lm, command="turing eval", data=str(data.resolve()), cases=len(cases), detector=detector,
            max_tokens=max_tokens, hooks=[h.to_dict() for h in protocols[0].hooks], problems=protocols[0].problems,
            reports=str(out), finished=[r.detector for r in reports]), indent=2, default=str))
    return reports


@turing.command("train-phantom")
@click.option("--data", "files", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A labelled JSONL file (repeatable); default: rlmlab.turing.PHANTOM_TRAIN_FILES (the "
                   "narrated dev set, splits 1-6 and turing_eval).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where the model goes (default: the shipped rlmlab/turing/phantom_model.json).")
@click.option("--c", "c", default=10.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Inverse L2 strength of the logistic regression.")
@click.option("--threshold", default=None, type=click.FloatRange(0, 1),
              help="The model fires at this score (where the rules did not); default: the lowest of 0.30, 0.35, "
                   "... 0.70 whose pooled leave-one-file-out precision is within --max-precision-loss of the "
                   "rules' own.")
@click.option("--max-precision-loss", default=0.01, show_default=True, type=click.FloatRange(0, 1),
              help="How far below the rules' pooled cross-validated precision the default threshold may go.")
@click.option("--cv", "cv_only", is_flag=True,
              help="Only cross-validate (leave one file out), print the table and write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the cross-validation as JSON.")
def train_phantom(files: tuple[Path, ...], out: Path | None, c: float, threshold: float | None,
                  max_precision_loss: float, cv_only: bool, as_json: bool) -> None:
    """Fit the learned phantom_tool_result model on labelled turns, after leave-one-file-out cross-validation."""
    from rlmlab.provenance import file_sha256
    from rlmlab.turing import (
        PHANTOM_MODEL_PATH, PHANTOM_THRESHOLDS, PHANTOM_TRAIN_FILES, cross_validate_phantom, fit_phantom_model,
        phantom_rows, pick_threshold,
    )

    console = Console(stderr=True)
    paths = [Path(f) for f in files] or list(PHANTOM_TRAIN_FILES)
    try:
        rows = phantom_rows(paths)
        cv = cross_validate_phantom(rows, c=c, thresholds=PHANTOM_THRESHOLDS if threshold is None else (threshold,),
                                    progress=lambda name: console.print(f"cross-validating: {name} left out"))
    except (ValueError, RuntimeError) as exc:
        raise InputError(exc) from None
    rule = None
    if threshold is None:
        grid = f"{PHANTOM_THRESHOLDS[0]}-{PHANTOM_THRESHOLDS[-1]}"
        rules_p = cv["rules"]["pooled"]["precision"] or 0.0
        rule = (f"lowest of {grid} with pooled leave-one-file-out precision >= the rules' {rules_p:.3f} - "
                f"{max_precision_loss:g}")
        threshold = pick_threshold(cv, max_precision_loss)
        if threshold is None:
            best = max(s["precision"] or 0 for s in cv["model"]["pooled"].values())
            raise InputError(f"no threshold of {grid} keeps pooled cross-validated precision within "
                             f"{max_precision_loss:g} of the rules' {rules_p:.3f} (best {best:.3f}); raise "
                             "--max-precision-loss or give --threshold")
    if as_json:
        click.echo(json.dumps({**cv, "threshold": threshold}, indent=1))
    else:
        table = Table(title=f"phantom_tool_result, leave one file out ({plural(len(rows), 'turn')}, C={c:g}, "
                            f"threshold {threshold:g})")
        short = lambda name: name.removeprefix("turing_narrated_").removesuffix(".jsonl")  # noqa: E731
        for col in ("file left out", "rules TP/FP/FN", "P", "R", "rules+model TP/FP/FN", "P", "R"):
            table.add_column(col, justify="left" if col == "file left out" else "right")
        fmt = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
        for name, r in cv["rules"].items():
            m = cv["model"][name][str(threshold)]
            table.add_row(short(name), f"{r['tp']}/{r['fp']}/{r['fn']}", fmt(r["precision"]), fmt(r["recall"]),
                          f"{m['tp']}/{m['fp']}/{m['fn']}", fmt(m["precision"]), fmt(m["recall"]))
        Console().print(table)
    if cv_only:
        return
    target = out or PHANTOM_MODEL_PATH
    model = fit_phantom_model(rows, c=c, threshold=threshold, meta={
        "trained_on": {p.name: file_sha256(p)["sha256"] for p in paths}, "threshold_rule": rule,
        "cv_pooled": cv["model"]["pooled"][str(threshold)], "cv_rules_pooled": cv["rules"]["pooled"]})
    model.save(target)
    console.print(f"model: {target} ({plural(len(model.weights), 'feature')})", soft_wrap=True, highlight=False)
