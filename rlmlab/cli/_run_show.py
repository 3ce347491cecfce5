"""What ``rlmlab experiment show`` prints: a run's conditions and task rows, or one task's trajectory with the
exact prompt and completion of every LM call; and ``rlmlab rlm show``, one run. A recursive run (rlm_query) shows
its call tree, then each sub-run's steps indented under the step that started it, each LM call in the run that
made it. Rich renderables; the figures' labels are ``rlmlab._figures``'."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from rlmlab._figures import (
    FIGURES, RELATION_KEYS, fmt, fmt_seconds, node_figures, node_outcome, own_calls, resend_note, sub_runs_of,
    token_rows,
)
from rlmlab._paths import rlmlab_command
from rlmlab.text import plural

__all__ = ["run_overview", "task_detail", "single_run", "trajectory_detail", "call_tree", "node_row", "ended_by",
           "why_no_answer"]

_COLOURS = {"pass": "green", "fail": "yellow", "error": "red"}
ROW_WIDTH = 120  # a sub-run's row (in the call tree and above its steps) fits in this many columns
_INDENT = 4  # a sub-run's steps are indented this much under its parent's step


def _table(title: str, header: list[str], rows: list[list[str]], right_from: int = 1) -> Table:
    table = Table(title=title, title_justify="left", show_lines=False)
    for i, h in enumerate(header):
        table.add_column(h, justify="right" if i >= right_from else "left", overflow="fold")
    for r in rows:
        table.add_row(*r)
    return table


def run_overview(run_dir: Path) -> list[Any]:
    """Each condition's pass rate with its 95% Wilson interval, then one row per condition x task x rollout."""
    from rlmlab.experiments import (
        TASK_COLUMNS, condition_stats, is_experiment_run, outcome, read_interruption, run_rows, time_table,
    )

    stopped = read_interruption(run_dir)
    note = [Text(stopped.line(run_dir), style="bold yellow")] if stopped else []
    # cut short before its first task finished: no results file yet, and nothing else to show
    rows = run_rows(run_dir) if stopped is None or is_experiment_run(run_dir) else []
    stats = condition_stats(rows)
    summary = _table(f"{run_dir.name}: {plural(len(rows), 'row')}", [
        "condition", "tasks", "passed", FIGURES["pass_rate"].label, "95% CI (Wilson)", FIGURES["errors"].label,
        f"{FIGURES['prompt_tokens'].label} / task", f"{FIGURES['completion_tokens'].label} / task",
        f"{FIGURES['elapsed_ms'].label} / task"],
        [[cond, str(s["tasks"]), str(s["passed"]), fmt(s["pass_rate"], "share"),
          f"{100 * s['ci'][0]:.0f}–{100 * s['ci'][1]:.0f}%", str(s["errors"]), fmt(s["input_tokens"], "tokens"),
          fmt(s["output_tokens"], "tokens"), fmt(s["elapsed_ms"], "s")] for cond, s in stats.items()])
    tasks = Table(title="tasks (rollout * = the selected one; open one with --task ID [--condition C])",
                  title_justify="left")
    for h in ["condition", "task", "rollout", "pass"]:
        tasks.add_column(h, no_wrap=True)  # a name is never cut: the figures' headers fold first
    for _, key in TASK_COLUMNS:
        tasks.add_column(FIGURES[key].heading, justify="right")
    tasks.add_column("error", overflow="fold")
    for r in rows:
        verdict = outcome(r)
        tasks.add_row(r["condition"], r["task_id"], f"{r.get('rollout', 0)}{'*' if r.get('best') else ''}",
                      f"[{_COLOURS[verdict]}]{verdict}[/]",
                      *[FIGURES[k].format(r.get(field)) for field, k in TASK_COLUMNS], escape(r.get("error") or ""))
    header, times = time_table(rows)
    timing = [_table("where the time went, per task (mean s; cached share: prompt tokens from llama.cpp's prefix "
                     "cache / sent)", header, times)] if times else []
    return [*note, summary, *timing, tasks]


def _time_breakdown(timing: dict[str, Any] | None) -> list[Any]:
    """One trajectory's time breakdown as a one-row table (nothing for runs written before it was kept)."""
    from rlmlab.executors import TIME_PARTS, TimeBreakdown

    if not timing:
        return []
    t = TimeBreakdown.from_dict(timing)
    share = t.cached_share
    row = [f"{t.wall_ms / 1000:.2f}", *[f"{v / 1000:.2f}" for v in t.parts().values()],
           f"{t.cached_tokens:,} / {t.prompt_tokens:,}" + (f" ({100 * share:.0f}%)" if share is not None else "")]
    return [_table("where the time went (s)", ["wall", *TIME_PARTS.values(), "cached / prompt tokens"], [row],
                   right_from=0)]


def _calls(calls: list[Any], prompts: bool) -> list[Any]:
    out: list[Any] = []
    for n, c in enumerate(calls, 1):
        line = (f"call {n} · {c.role} · {FIGURES['prompt_tokens'].label} {c.input_tokens:,} · "
                f"{FIGURES['completion_tokens'].label} {c.output_tokens:,} · {FIGURES['prompt_chars'].label} "
                f"{c.prompt_chars:,} · {FIGURES['latency_s'].label} {c.latency_s:.1f} s")
        out.append(Text(line, style="bold blue"))
        if c.error:
            out.append(Text(f"failed: {c.error}", style="red"))
        if prompts:
            for m in c.messages or []:
                out.append(Text(f"── {m.get('role')} ({plural(len(m.get('content', '')), 'char')})", style="dim"))
                out.append(Text(m.get("content", "")))
            if not c.messages:
                out.append(Text("(prompt not recorded)", style="dim"))
        if not c.error:
            out.append(Text("── completion", style="dim"))
            out.append(Text(c.completion if c.completion is not None else "(not recorded)"))
    return out


def task_detail(run_dir: Path, task: str, condition: str | None, rollout: int | None,
                prompts: bool = True) -> list[Any]:
    """One task's trajectory: its row, how its token figures relate, then each iteration (reasoning, code,
    output, figures) with its LM calls (exact prompt and completion unless ``prompts`` is False)."""
    from rlmlab.executors import TRAJECTORY_FILE, Trajectory
    from rlmlab.experiments import find_row, outcome, row_trajectory_dir

    row = find_row(run_dir, task, condition, rollout)
    where = row_trajectory_dir(run_dir, row)
    traj = Trajectory.read_jsonl(where / TRAJECTORY_FILE)
    verdict = outcome(row)
    head = Text.assemble(
        (f"{row['task_id']}", "bold"), f" · condition {row['condition']} · rollout {row.get('rollout', 0)} · ",
        (verdict, _COLOURS[verdict]), f" · answer {row.get('answer')!r}\n",
        f"query: {traj.query}\njudge: {row.get('rationale') or '-'}\ntrajectory: {where}")
    return [head, *trajectory_detail(where, traj, prompts)]


def single_run(run_dir: Path, prompts: bool = True) -> list[Any]:
    """A directory written by ``rlmlab rlm run`` (its trajectory.jsonl and lm_calls.jsonl): the summary ``rlm run``
    printed, then each iteration with its LM calls. ValueError naming the directory if it holds no trajectory
    (an experiment run's directory says to use ``rlmlab experiment show``)."""
    from rlmlab.executors import TRAJECTORY_FILE, Trajectory, trajectory_summary

    if (run_dir / "results.jsonl").is_file() and not (run_dir / TRAJECTORY_FILE).is_file():
        raise ValueError(f"{run_dir}: an experiment run (results.jsonl); show it with: "
                         f"{rlmlab_command()} experiment show {run_dir}")
    if not (run_dir / TRAJECTORY_FILE).is_file():
        raise ValueError(f"{run_dir}: no {TRAJECTORY_FILE}; expected a directory written by rlmlab rlm run "
                         f"(runs/<run-id>/)")
    traj = Trajectory.read_jsonl(run_dir / TRAJECTORY_FILE)
    head = Text(f"{traj.executor} run {traj.run_id} · {traj.lm} · decoding {traj.decoding}\n"
                f"query: {traj.query}\ntrajectory: {run_dir / TRAJECTORY_FILE}")
    notes = [Text(f"note: {n}", style="dim") for n in traj.notes]
    why = why_no_answer(traj)
    return [head, *notes, trajectory_summary(traj), *([Text(why, style="yellow")] if why else []),
            *trajectory_detail(run_dir, traj, prompts)]


def _cut(text: str, width: int) -> str:
    """The first line of ``text`` in at most ``width`` columns, "…" saying something was left out."""
    line = text.splitlines()[0] if text else ""
    more = line != text
    return line + ("…" if more else "") if len(line) + more <= width else line[: width - 1] + "…"


def node_row(traj: Any, lead: str = "", width: int = ROW_WIDTH) -> str:
    """One run of a recursive run's tree in one line of at most ``width`` columns (the answer is cut to fit):
    "<lead>rlm-….1 · depth 1 · answer '7291' · 2 steps · tokens 3,027 + 80 · 0.3 s"."""
    head, tail = f"{lead}{traj.run_id} · depth {traj.depth} · ", f" · {node_figures(traj)}"
    return head + node_outcome(traj, max(width - len(head) - len(tail), 16)) + tail


def call_tree(traj: Any) -> Group:
    """The run's tree: each sub-run under the step that started it, with its depth, answer or why it stopped,
    steps, tokens (prompt + completion, its sub-runs' included) and seconds."""
    runs = traj.walk()
    root = Tree(Text(node_row(traj)), guide_style="dim")
    levels = max(t.depth for t in runs) - traj.depth + 1
    root_label = (f"call tree: {plural(len(runs), 'run')} in {plural(levels, 'level')}, each sub-run under the step "
                  "that started it (tokens: prompt + completion)")

    def grow(node: Tree, run: Any, level: int) -> None:
        for step in [*(it.index for it in run.iterations), None]:
            subs = sub_runs_of(run, step)
            if subs:
                branch = node.add(Text(f"step {step}" if step is not None else "a step with no record",
                                       style="dim"))
                for sub in subs:
                    # rich draws 4 columns of guide per level: the row keeps to ROW_WIDTH with them
                    grow(branch.add(Text(node_row(sub, width=ROW_WIDTH - 8 * level - 8))), sub, level + 1)

    grow(root, traj, 0)
    return Group(Text(root_label, style="bold"), root)


def trajectory_detail(where: Path, traj: Any, prompts: bool = True) -> list[Any]:
    """How a trajectory's token figures relate, its time breakdown, then each iteration (reasoning, code, output,
    figures) with its LM calls read from ``where`` (exact prompt and completion unless ``prompts`` is False). A
    recursive run shows its call tree first, and each sub-run's steps indented under the step that started it."""
    from rlmlab.lm import CALLS_FILE, read_calls

    calls = read_calls(where / CALLS_FILE)
    header, rows = token_rows(traj, calls)
    out: list[Any] = [_table("how the token figures relate", header, rows), *_time_breakdown(traj.timing)]
    out += [Text(f"{FIGURES[k].label}: {FIGURES[k].means}", style="dim") for k in RELATION_KEYS]
    if resend_note(traj):
        out.append(Text(resend_note(traj)))
    if not calls:
        out.append(Text("no LM calls recorded beside this trajectory (written before calls were kept)", style="dim"))
    if traj.children:
        out.append(call_tree(traj))
    return out + _steps(traj, calls, prompts)


def _sub_runs(traj: Any, step: int | None, calls: list[Any], prompts: bool) -> list[Any]:
    """The sub-runs step ``step`` of ``traj`` started, each its row, query and steps, indented."""
    out: list[Any] = []
    for child in sub_runs_of(traj, step):
        width = ROW_WIDTH - _INDENT * (child.depth - traj.depth)
        row = Text(node_row(child, "↳ sub-run ", width), style="bold cyan")
        query = Text(_cut(f"query: {child.query}" + ("" if step is not None else
                                                     f" (started by step {child.parent_step}, not recorded)"),
                          width), style="dim")
        out.append(Padding(Group(row, query, *_steps(child, calls, prompts)), (0, 0, 0, _INDENT), expand=False))
    return out


def _steps(traj: Any, calls: list[Any], prompts: bool) -> list[Any]:
    """Each iteration of ``traj`` with its own LM calls, the sub-runs each started indented below it, then its
    calls outside any iteration and its final answer."""
    mine_all = own_calls(calls, traj)
    sub = f" of {traj.run_id} (depth {traj.depth})" if traj.depth else ""
    out: list[Any] = []
    for it in traj.iterations:
        figures = Table.grid(padding=(0, 2))
        figures.add_column()
        figures.add_column(justify="right")
        for name in ("prompt_tokens", "completion_tokens", "prompt_chars", "stdout_chars", "variables_info_chars",
                     "tool_calls", "large_returns", "sub_llm_calls"):
            figures.add_row(FIGURES[name].label, f"{getattr(it.leakage, name):,}")
        figures.add_row(FIGURES["elapsed_ms"].label, fmt_seconds(it.elapsed_ms))
        body: list[Any] = [Text("reasoning", style="dim"), Text(it.reasoning or "(none)"), Text("code", style="dim"),
                           Syntax(it.code or "# (no code)", "python", word_wrap=True),
                           Text(f"output ({plural(len(it.output), 'char')})", style="dim"),
                           Text(it.output or "(empty)"),
                           Text("figures of this step", style="dim"), figures]
        if it.tool_calls:
            body.append(Text("tool calls: " + ", ".join(str(c.get("name")) for c in it.tool_calls), style="dim"))
        for r in it.turing:
            body.append(Text(f"Turing {r.get('phase')}: {', '.join(r.get('reasons', []))}", style="magenta"))
        mine = [c for c in mine_all if c.step == it.index]
        if mine:
            body += [Rule(f"LM calls of iteration {it.index}{sub} ({len(mine)})", style="blue"),
                     *_calls(mine, prompts)]
        out.append(Panel(Group(*body), title=f"iteration {it.index}{sub}", title_align="left"))
        out += _sub_runs(traj, it.index, calls, prompts)
    out += _sub_runs(traj, None, calls, prompts)  # started by a step the run has no record of (interrupted)
    outside = [c for c in mine_all if c.step is None]
    if outside:
        out += [Rule(f"LM calls outside any iteration{sub} ({len(outside)})", style="blue"),
                *_calls(outside, prompts)]
    final = "final answer: " if not traj.depth else f"final answer of {traj.run_id}: "
    out.append(Text.assemble((final, "bold"), repr(traj.answer), f"  (ended by {ended_by(traj)})"))
    return out


def ended_by(traj: Any) -> str:
    """How a run ended, as its final-answer line says: "SUBMIT", "extract fallback (no SUBMIT)", "interrupted
    (Ctrl-C)", "error: ..."; a sub-run a budget stopped, "stopped: ..."."""
    how = f"error: {traj.error}" if traj.error else ("SUBMIT" if traj.submitted else "interrupted (Ctrl-C)"
                                                     if traj.interrupted else "extract fallback (no SUBMIT)")
    if traj.depth and traj.stopped and not traj.error:  # (a top run's line reads as it always has)
        how = f"stopped: {traj.stopped}"
    return how


def why_no_answer(traj: Any) -> str | None:
    """One line saying why a run ended with an empty answer (None when it has one), from its record: how it ended
    (:func:`ended_by`), what stopped it, why the extract step's answer was dropped, and the last step's error (or
    the first line it printed).
    ``rlm run`` and ``rlm show`` print it under the summary."""
    if traj.answer is not None and str(traj.answer).strip():
        return None
    how = ended_by(traj)
    parts = [f"ended by {how}"] + ([f"stopped: {traj.stopped}"] if traj.stopped and traj.stopped not in how else [])
    from rlmlab.executors import dropped_extract

    dropped = dropped_extract(traj.notes)
    if dropped:
        parts.append(dropped)
    if not traj.iterations:
        parts.append("no step ran")
    else:
        last = traj.iterations[-1]
        error = next((ln for ln in last.output.splitlines() if ln.startswith("[Error] ")), None)
        shown = _cut(error or last.output.strip(), 100) or "(nothing)"
        parts.append(f"the last step ({last.index}) {'failed' if error else 'printed'}: {shown}")
    return "no answer: " + "; ".join(parts)

