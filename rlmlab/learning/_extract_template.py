"""The ``template`` extractor: learnt procedures the constrained step can copy, admitted only after replay.

From a judged-successful trajectory it makes one success item whose ``template`` is the trajectory's minimal code
with the query's literals as typed slots (:mod:`rlmlab.learning._abstract`). The item is admitted only when

1. the template, filled from its own query, re-solves the source task under the same judge (ASI: programmatic
   skills verified by execution), replayed in the executors' REPL with no model (:mod:`rlmlab.learning._replay`);
2. where sibling tasks of the same query shape are given with their outcomes under the bank as it is, it repairs
   at least as many of them as it regresses (SkillGen's intervention test).

The item's ``meta`` records both (``meta["admission"]``) and the slots' order (``meta["slots"]``), so the bank
says why it holds each template. From a failed rollout that submitted (ReasoningBank learns from failures too;
E12's contrastive mode) it makes a failure item naming the code that misfired for that query shape: a guardrail
that retrieval returns and that shows no code (the context builder shows templates of success items only); its
``meta["filled"]`` is the exact code, for a grammar that excludes it. When a permutation of the failed code's
same-type slots re-solves the task, the item says the slot order was wrong and gives the right one. A failed
rollout without a SUBMIT gets the ``heuristic`` extractor's guardrails (``fallback``).
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rlmlab.errors import ConfigError
from rlmlab.learning._abstract import (
    Abstraction, SlotBinding, same_number, abstract_trajectory, fill_slots, query_shape,
)
from rlmlab.learning._extract import (
    EXTRACT_LIMITS, EXTRACTORS, MAX_EXTRACT_ITEMS, ExtractionReport, HeuristicExtractor, Rollout, answer_form,
    check_max_items, clip_line, split_by_success, merged_tags,
)
from rlmlab.learning._judge import judge_for
from rlmlab.learning._replay import Intervention, ReplayResult, Sibling, intervention, replay_code
from rlmlab.memory import LIMITS, MemoryItem, MemoryTask, Verdict, normalise_template

if TYPE_CHECKING:
    from rlmlab.executors import Trajectory

__all__ = ["TemplateExtractor", "FALLBACKS", "MAX_PERMUTATIONS"]

FALLBACKS = ("none", "failures", "all")
MAX_PERMUTATIONS = 6  # slot orders tried on a failed rollout (each is one replay)
_CODE_CLIP = 600  # characters of filled code kept in a failure item's meta


def _tool_names() -> frozenset[str]:
    from rlmlab.tools import TOOLS

    return frozenset(spec.name for spec in TOOLS)


def _meta(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` made to fit MemoryItem.meta: the largest optional parts are dropped first."""
    for key in ("filled", "slots", "results"):
        if len(json.dumps(data, sort_keys=True)) <= LIMITS["meta"]:
            break
        data.pop(key, None)
        if isinstance(data.get("admission"), dict):
            data["admission"].pop(key, None)
    return data


class TemplateExtractor:
    """See the module docstring. ``replay`` False admits without replaying (for tests of the abstraction only);
    ``max_siblings`` bounds the intervention test's replays per item; ``lm`` serves a task's LLM judge in a replay
    (the loop passes its LM); ``fallback`` is where the heuristic
    extractor is used: "failures" (a failed rollout with no code to name), "all" (also a success whose template
    was rejected) or "none". ``step_timeout`` (seconds) bounds each replay. ``stats`` counts what happened
    over the extractor's life: templates admitted and rejected, failure items, replays."""

    name = "template"

    def __init__(self, max_items: int = MAX_EXTRACT_ITEMS, replay: bool = True, max_siblings: int = 4,
                 fallback: str = "failures", step_timeout: float = 30.0, lm: Any = None):
        self.max_items = check_max_items(max_items)
        if not isinstance(replay, bool):
            raise ConfigError(f"extractor replay: {replay!r}; use true or false")
        if isinstance(max_siblings, bool) or not isinstance(max_siblings, int) or max_siblings < 0:
            raise ConfigError(f"extractor max_siblings: {max_siblings!r}; use an integer >= 0")
        if fallback not in FALLBACKS:
            raise ConfigError(f"extractor fallback: {fallback!r}; use one of {', '.join(FALLBACKS)}")
        if isinstance(step_timeout, bool) or not isinstance(step_timeout, (int, float)) or step_timeout <= 0:
            raise ConfigError(f"extractor step_timeout: {step_timeout!r}; use a number of seconds > 0")
        self.replay, self.max_siblings, self.fallback = replay, max_siblings, fallback
        self.step_timeout = float(step_timeout)
        self.lm = lm  # for a replay judged by a task's LLM judge (the loop passes its LM)
        self.heuristic = HeuristicExtractor(max_items=max_items)
        self.stats: Counter[str] = Counter()

    # -- the Extractor protocol ---------------------------------------------------------------------------

    def extract(self, task: MemoryTask, trajectory: "Trajectory", verdict: Verdict, *,
                siblings: Sequence[Sibling] | None = None, judge: Any = None,
                workspace: Callable[[MemoryTask], Any] | None = None,
                sibling_judge: Callable[[MemoryTask], Any] | None = None) -> list[MemoryItem]:
        return self.extract_with_report(task, trajectory, verdict, siblings=siblings, judge=judge,
                                        workspace=workspace, sibling_judge=sibling_judge).items

    def extract_with_report(self, task: MemoryTask, trajectory: "Trajectory", verdict: Verdict, *,
                            siblings: Sequence[Sibling] | None = None, judge: Any = None,
                            workspace: Callable[[MemoryTask], Any] | None = None,
                            sibling_judge: Callable[[MemoryTask], Any] | None = None) -> ExtractionReport:
        """Items from one judged trajectory. ``siblings`` (tasks of the same query shape with their outcomes under
        the bank as it is) enable the intervention test; ``judge`` judges the replay on ``task`` (default: the one
        ``task.check`` names) and ``sibling_judge(sibling_task)`` gives each sibling's (default: the one its
        ``check`` names; a loop without the answer key passes its key-free judges); ``workspace`` makes a task's
        workspace for a replay (default: the loop's tools)."""
        report = ExtractionReport([], self.name)
        run = dict(judge=judge, workspace=workspace, sibling_judge=sibling_judge)
        if verdict.success:
            item = self._success(task, trajectory, verdict, siblings or (), report, **run)
            if item is not None:
                report.items.append(item)
            elif self.fallback == "all":
                self._fall_back(task, trajectory, verdict, report)
            return report
        items = self._failure(task, trajectory, verdict, report, judge=judge, workspace=workspace)
        if items:
            report.items += items[: self.max_items]
        elif self.fallback != "none":
            self._fall_back(task, trajectory, verdict, report)
        return report

    def contrastive(self, task: MemoryTask, rollouts: list[Rollout], *, siblings: Sequence[Sibling] | None = None,
                    judge: Any = None, workspace: Callable[[MemoryTask], Any] | None = None,
                    sibling_judge: Callable[[MemoryTask], Any] | None = None) -> list[MemoryItem]:
        return self.contrastive_with_report(task, rollouts, siblings=siblings, judge=judge, workspace=workspace,
                                            sibling_judge=sibling_judge).items

    def contrastive_with_report(self, task: MemoryTask, rollouts: list[Rollout], *,
                                siblings: Sequence[Sibling] | None = None, judge: Any = None,
                                workspace: Callable[[MemoryTask], Any] | None = None,
                                sibling_judge: Callable[[MemoryTask], Any] | None = None) -> ExtractionReport:
        """MaTTS: the best successful rollout's template (replayed and tested as in :meth:`extract`), then a
        guardrail per distinct template the failed rollouts misfired with, each set against the successful one
        (same template with other slot values: the slot order or values were wrong)."""
        wins, losses = split_by_success(rollouts)
        if not wins or not losses:
            best = (wins or losses or [None])[0]
            if best is None:
                return ExtractionReport([], self.name, notes=["no rollouts"])
            out = self.extract_with_report(task, *best, siblings=siblings, judge=judge, workspace=workspace,
                                           sibling_judge=sibling_judge)
            out.notes.insert(0, "one-sided rollouts: extracted from the best one")
            return out
        report = ExtractionReport([], self.name, notes=[f"contrast of {len(wins)} successful and "
                                                        f"{len(losses)} failed"])
        run = dict(judge=judge, workspace=workspace)
        win_traj, win_verdict = wins[0]
        item = self._success(task, win_traj, win_verdict, siblings or (), report, sibling_judge=sibling_judge, **run)
        if item is not None:
            report.items.append(item)
        win = abstract_trajectory(win_traj, task.query, task.context, tool_names=_tool_names())
        seen: set[str] = set()
        for traj, verdict in losses:
            if len(report.items) >= self.max_items:
                break
            for fail in self._failure(task, traj, verdict, report, against=(win, win_traj), seen=seen, **run):
                if len(report.items) < self.max_items and all(fail.id != i.id for i in report.items):
                    report.items.append(fail)
        return report

    # -- success: a template, admitted after replay -------------------------------------------------------

    def _replay(self, code: str, task: MemoryTask, judge: Any, workspace: Any) -> ReplayResult:
        self.stats["replays"] += 1
        return replay_code(code, task, judge=judge or judge_for(task, lm=self.lm), workspace=workspace,
                           step_timeout=self.step_timeout)

    def _success(self, task: MemoryTask, traj: "Trajectory", verdict: Verdict, siblings: Sequence[Sibling],
                 report: ExtractionReport, *, judge: Any, workspace: Any,
                 sibling_judge: Callable[[MemoryTask], Any] | None = None) -> MemoryItem | None:
        ab = abstract_trajectory(traj, task.query, task.context, tool_names=_tool_names())
        if ab.template is None:
            return self._reject(report, f"no template: {ab.reason}", None)
        typed = hard_coded_answer(ab.code, ab.slots)
        if typed is not None:  # it would pass its own replay and fit no sibling: AWM keeps only what generalises
            return self._reject(report, f"the code submits the literal {clip_line(typed, 60)}", ab.template)
        admission: dict[str, Any] = {"replay": None, "siblings": 0, "applicable": 0, "repairs": 0, "regressions": 0}
        if self.replay:
            filled = fill_slots(ab.template, ab.slots, task.query, task.context)
            result = self._replay(filled or ab.code, task, judge, workspace)
            admission.update(replay=result.success, judge=result.judge, answer=clip_line(result.answer, 80))
            if not result.success:
                return self._reject(report, f"replay did not re-solve {task.id}: {clip_line(result.rationale, 160)}",
                                    ab.template)
            others = [s for s in siblings if s.task.id != task.id][: self.max_siblings]
            if others:
                judges = {s.task.id: sibling_judge(s.task) if sibling_judge else judge_for(s.task, lm=self.lm)
                          for s in others}
                iv: Intervention = intervention(ab.template, ab.slots, others, judge=judges, workspace=workspace,
                                                step_timeout=self.step_timeout)
                self.stats["replays"] += iv.applicable
                admission.update(siblings=iv.siblings, applicable=iv.applicable, repairs=iv.repairs,
                                 regressions=iv.regressions, results=iv.results)
                if not iv.admitted:
                    return self._reject(report, f"intervention: {iv.regressions} regressions > {iv.repairs} repairs "
                                                f"on {iv.applicable} siblings", ab.template)
        self.stats["templates_admitted"] += 1
        shape = query_shape(task.query, task.context)
        steps = ", ".join(ab.tools) or "REPL code"
        names = ", ".join(f"{b.name}:{b.type}" for b in ab.slots) or "none"
        tested = (f"; on {admission['applicable']} sibling task(s) it repaired {admission['repairs']} and regressed "
                  f"{admission['regressions']}" if admission["applicable"] else "")
        replayed = "replaying it from the query re-solved the task" if self.replay else "it was not replayed"
        return MemoryItem(
            title=clip_line(f"Template ({steps}) for: {shape}", EXTRACT_LIMITS["title"]),
            description=clip_line(f"Copyable code for queries like '{shape}'; slots ({names}) take the query's "
                              "literals.", EXTRACT_LIMITS["description"]),
            content=clip_line(f"Learnt from '{clip_line(task.query, 160)}': {len(ab.code.splitlines())} line(s) calling "
                          f"{steps} submitted {answer_form(traj.answer)}, which {verdict.judge} accepted; "
                          f"{replayed}{tested}.", EXTRACT_LIMITS["content"]),
            polarity="success", layer="L2", source="extract", domain=task.domain, run_id=traj.run_id,
            trajectory_id=traj.run_id, tags=merged_tags([task.domain, verdict.judge, "template"], ab.tools[:5]),
            template=ab.template, shape=task.query,  # indexed as its shape: a sibling with no content word finds it
            meta=_meta({"kind": "template", "shape": shape, "source_task": task.id,
                        "slots": [b.to_dict() for b in ab.slots], "admission": admission}))

    def _reject(self, report: ExtractionReport, reason: str, template: str | None) -> None:
        self.stats["templates_rejected"] += 1
        report.dropped.append({"index": len(report.dropped), "reason": reason, "template": template})
        return None

    def _fall_back(self, task: MemoryTask, traj: "Trajectory", verdict: Verdict, report: ExtractionReport) -> None:
        extra = self.heuristic.extract_with_report(task, traj, verdict)
        report.items += extra.items[: self.max_items - len(report.items)]
        report.fallback = bool(extra.items)
        report.notes.append("heuristic fallback")

    # -- failure: the code that misfired ------------------------------------------------------------------

    def _failure(self, task: MemoryTask, traj: "Trajectory", verdict: Verdict, report: ExtractionReport, *,
                 judge: Any, workspace: Any, against: tuple[Abstraction, "Trajectory"] | None = None,
                 seen: set[str] | None = None) -> list[MemoryItem]:
        ab = abstract_trajectory(traj, task.query, task.context, tool_names=_tool_names())
        if ab.template is None:
            report.notes.append(f"failed rollout {traj.run_id}: no code to name ({ab.reason})")
            return []
        key = normalise_template(ab.template)
        seen = seen if seen is not None else set()
        if key in seen:
            return []
        seen.add(key)
        shape = query_shape(task.query, task.context)
        filled = fill_slots(ab.template, ab.slots, task.query, task.context) or ab.code
        order = self._right_order(ab, task, judge, workspace) if self.replay else None
        win = against[0] if against is not None else None
        same = win is not None and win.template is not None and normalise_template(win.template) == key
        if order is not None:
            wrong = ", ".join(f"{b.name}={b.value}" for b in sorted(ab.slots, key=lambda b: b.name)
                              if order.get(b.name, b.value) != b.value)
            right = ", ".join(f"{name}={value}" for name, value in sorted(order.items()))
            title = f"Wrong slot order for: {shape}"
            what = f"the slots were filled in the wrong order ({wrong}); the order that solves it is {right}"
        elif same:
            used = ", ".join(f"{b.name}={b.value}" for b in ab.slots)
            right = ", ".join(f"{b.name}={b.value}" for b in win.slots)
            title = f"Right template, wrong slot values for: {shape}"
            what = (f"the template was right but its slots took {used or 'no values'}; the successful rollout "
                    f"used {right}")
        else:
            title = f"Template misfired ({', '.join(ab.tools) or 'REPL code'}) for: {shape}"
            what = "this code does not answer queries of this shape" + (
                "; a successful rollout used other code" if win is not None and win.template else "")
        self.stats["failure_items"] += 1
        content = (f"On '{clip_line(task.query, 160)}' the code below submitted {answer_form(traj.answer)}, which "
                   f"{verdict.judge} rejected ({clip_line(verdict.rationale, 140)}): {what}. Do not copy it for "
                   f"queries like '{shape}'.\n{clip_line(filled, 400)}")
        return [MemoryItem(
            title=clip_line(title, EXTRACT_LIMITS["title"]),
            description=clip_line(f"A guardrail: code that misfired on a query like '{shape}'",
                              EXTRACT_LIMITS["description"]),
            content=content[: EXTRACT_LIMITS["content"]], polarity="failure", layer="L2", source="extract",
            domain=task.domain, run_id=traj.run_id, trajectory_id=traj.run_id,
            tags=merged_tags([task.domain, verdict.judge, "template", "misfire"], ab.tools[:5]), template=ab.template,
            shape=task.query,
            meta=_meta({"kind": "misfire", "shape": shape, "source_task": task.id, "filled": filled[:_CODE_CLIP],
                        "slots": [b.to_dict() for b in ab.slots], "slot_order": order}))]

    def _right_order(self, ab: Abstraction, task: MemoryTask, judge: Any, workspace: Any) -> dict[str, str] | None:
        """Values by slot name of a permutation of same-type slots that re-solves the task, or None (none tried
        does, or no type has two slots). At most :data:`MAX_PERMUTATIONS` replays."""
        by_type: dict[str, list[SlotBinding]] = {}
        for b in ab.slots:
            by_type.setdefault(b.type, []).append(b)
        groups = [g for g in by_type.values() if len(g) > 1 and len({b.value for b in g}) > 1]
        if not groups:
            return None
        tried = 0
        for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
            values = {b.name: b.value for b in ab.slots}
            for group, perm in zip(groups, perms):
                for b, other in zip(group, perm):
                    values[b.name] = other.value
            if values == {b.name: b.value for b in ab.slots}:
                continue
            if tried >= MAX_PERMUTATIONS:
                break
            tried += 1
            code = _fill(ab.template or "", values)
            if code is not None and self._replay(code, task, judge, workspace).success:
                return values
        return None


def _fill(template: str, values: dict[str, str]) -> str | None:
    from rlmlab.memory import TemplateError, fill_template

    try:
        return fill_template(template, values)
    except TemplateError:
        return None


_QUERY_TEXT = re.compile(r"(?is)\s*(?:PREFIX\s|BASE\s|SELECT\b|ASK\b|CONSTRUCT\b|DESCRIBE\b)")


def hard_coded_answer(code: str, slots: list[SlotBinding]) -> str | None:
    """The literal the code SUBMITs, when it submits a constant (directly or through one variable) that is no slot:
    a value the model read off an output and typed in, which re-solves its own task and no other. None
    otherwise."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    call = next((n for s in reversed(body) for n in ast.walk(s)
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "SUBMIT"), None)
    if call is None or not (call.args or call.keywords):
        return None
    value = call.args[0] if call.args else call.keywords[0].value
    if isinstance(value, ast.Name):
        assigned = [s.value for s in body if isinstance(s, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == value.id for t in s.targets)]
        value = assigned[-1] if assigned else value
    if not isinstance(value, ast.Constant) or value.value is None:
        return None
    if isinstance(value.value, str) and (_QUERY_TEXT.match(value.value) or any(b.value in value.value for b in slots)):
        return None  # a query the judge runs (SPARQL is code), or text built around the task's literals
    if any(same_number(value.value, b.value) if b.type == "number" else str(value.value) == b.value for b in slots):
        return None
    return repr(value.value)


@EXTRACTORS.register("template")
def _template(max_items: int = MAX_EXTRACT_ITEMS, replay: bool = True, max_siblings: int = 4,
              fallback: str = "failures", step_timeout: float = 30.0, lm: Any = None) -> TemplateExtractor:
    """Copyable code templates from successful trajectories, admitted after replay (and the intervention test on
    siblings); failure items naming code that misfired (no LM)."""
    return TemplateExtractor(max_items=max_items, replay=replay, max_siblings=max_siblings, fallback=fallback,
                             step_timeout=step_timeout, lm=lm)
