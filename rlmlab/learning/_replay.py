"""Replay: run a piece of code as one agent step on a task, with no model, and judge what it SUBMITs.

The code runs through the registered ``rlm`` executor (the same REPL worker, the task's context as a handle, the
same tools, an ontology attached for an ontology domain) with a scripted LM whose only step is that code, so a
replay meets exactly what a rollout meets. The judge is the loop's (by default the one ``task.check`` names).

:func:`intervention` is SkillGen's admission test: replay a template on sibling tasks whose outcome under the
bank as it is is known; a *repair* solves a sibling the bank failed, a *regression* fails one it solved.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlmlab.learning._abstract import SlotBinding, fill_slots
from rlmlab.learning._judge import judge_for
from rlmlab.memory import MemoryTask, Verdict, resolve_domain
from rlmlab.records import Record

__all__ = ["ReplayResult", "Sibling", "Intervention", "replay_code", "replay_template", "replay_workspace",
           "intervention"]

_FIELDS = re.compile(r"Your output fields are:\n(.*?)(?:\n\n|All interactions)", re.S)
_FIELD = re.compile(r"^\d+\. `(\w+)`", re.M)


@dataclass(frozen=True)
class ReplayResult(Record):
    """One replay: whether the judge accepted the SUBMIT value, the value, the judge's rationale and the run's
    error (None when it ran), and the code that ran (None when the template could not be filled)."""

    success: bool
    answer: str | None = None
    rationale: str = ""
    judge: str = ""
    error: str | None = None
    code: str | None = None


@dataclass(frozen=True)
class Sibling:
    """A task of the same query shape and whether the bank as it is solved it (its recorded outcome)."""

    task: MemoryTask
    solved: bool


@dataclass
class Intervention(Record):
    """The intervention test over siblings: ``applicable`` of them could be filled; ``repairs`` and
    ``regressions`` as in the module docstring; ``results`` per applicable sibling: {"task_id", "solved",
    "replay"}."""

    siblings: int = 0
    applicable: int = 0
    repairs: int = 0
    regressions: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def admitted(self) -> bool:
        return self.repairs >= self.regressions


def replay_workspace(task: MemoryTask) -> Any:
    """The workspace a loop rollout of ``task`` gets in auto-inject mode: every tool group but memory, and the
    domain's ontology for an ontology domain."""
    from rlmlab.tools import TOOLS, Workspace, attach_ontology

    groups = {spec.group for spec in TOOLS} - {"memory"}
    ws = Workspace(registry=TOOLS.select(groups=groups))
    if task.domain:
        domain = resolve_domain(task.domain)
        if domain.kind == "ontology":
            attach_ontology(ws, domain.source)
    return ws


def _script(code: str) -> Callable[[list[dict[str, str]]], dict[str, Any]]:
    """The scripted LM of a replay: the action step is ``code``; any other prompt (the extract fallback of a
    step that did not SUBMIT) gets empty fields, which the judge then rejects."""

    def reply(messages: list[dict[str, str]]) -> dict[str, Any]:
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        found = _FIELDS.search(system)
        names = _FIELD.findall(found.group(1)) if found else []
        if "code" in names:
            return {name: (code if name == "code" else "replay") for name in names}
        return {name: "" for name in names}

    return reply


def replay_code(code: str, task: MemoryTask, *, judge: Any = None,
                workspace: Callable[[MemoryTask], Any] | None = None, step_timeout: float = 30.0) -> ReplayResult:
    """Run ``code`` as the single step of an ``rlm`` run on ``task`` and judge it (``judge`` defaults to
    ``judge_for(task)``; ``workspace`` makes the task's workspace, default :func:`replay_workspace`). A step
    longer than ``step_timeout`` seconds is stopped and fails. Never raises for what the code does."""
    from rlmlab.executors import make_executor, new_run_id
    from rlmlab.lm import make_lm

    judge = judge if judge is not None else judge_for(task)
    # a replay executes given code: nothing to constrain (and no "grammar ignored" note for the scripted LM)
    rlm = make_executor("rlm", lm=make_lm("scripted", script=_script(code)), max_iters=1, step_timeout=step_timeout,
                        decoding="free")
    traj = rlm(task.query, task.context, workspace=(workspace or replay_workspace)(task),
               run_id=new_run_id("replay"), source_path=task.meta.get("source_path"))
    if not traj.submitted and traj.error is None:
        return ReplayResult(False, traj.answer, "the code did not SUBMIT", getattr(judge, "name", ""), None, code)
    verdict: Verdict = judge.judge(task, traj)
    return ReplayResult(verdict.success, traj.answer, verdict.rationale, verdict.judge, traj.error, code)


def replay_template(template: str, slots: list[SlotBinding], task: MemoryTask, **options: Any) -> ReplayResult:
    """The template filled from ``task``'s query (:func:`fill_slots`), replayed; a template that cannot be filled
    fails with ``code`` None."""
    code = fill_slots(template, slots, task.query, task.context)
    if code is None:
        return ReplayResult(False, None, "the query has no literal for every slot", "", None, None)
    return replay_code(code, task, **options)


def intervention(template: str, slots: list[SlotBinding], siblings: Sequence[Sibling], *, judge: Any = None,
                 **options: Any) -> Intervention:
    """Replay the template on each sibling it can be filled for and count repairs and regressions (siblings it
    cannot be filled for are not applicable: the grammar would not offer it there). ``judge`` is one judge, or a
    dict of judges by task id (default: each task's own); ``options`` go to :func:`replay_code`."""
    out = Intervention(siblings=len(siblings))
    for sib in siblings:
        one = judge.get(sib.task.id) if isinstance(judge, dict) else judge
        result = replay_template(template, slots, sib.task, judge=one, **options)
        if result.code is None:
            continue
        out.applicable += 1
        out.repairs += int(result.success and not sib.solved)
        out.regressions += int(sib.solved and not result.success)
        out.results.append({"task_id": sib.task.id, "solved": sib.solved, "replay": result.success})
    return out
