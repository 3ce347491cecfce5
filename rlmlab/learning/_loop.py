"""The ReasoningBank loop: retrieve -> run -> judge -> extract -> persist (consolidate) -> forget.

``ReasoningBankLoop`` runs tasks one after another against one memory store, so what is learnt from a
task can be retrieved for the next. Each step is a plug-in from a registry (judges, extractors,
consolidators, forgetters, retrieval policies); MaTTS is ``rollouts > 1``: N runs per task, the best by
the judge's score, extraction from the best only or contrastive across all. Every decision lands in the
L4 event log ("context", "judge", "extract", "consolidation", "forget", "task"), and with ``runs_dir``
each task's outcome is appended to ``runs_dir/<run-id>/results.jsonl`` as soon as it is done. A task's memory
writes commit together, after its agent runs, and the "task" event marks it done: a rerun after a kill at any
point replays a committed task instead of running it twice.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlmlab._faults import write_point
from rlmlab.errors import ConfigError
from rlmlab.learning._consolidate import CONSOLIDATORS
from rlmlab.learning._extract import EXTRACTORS
from rlmlab.learning._forget import FORGETTERS
from rlmlab.learning._judge import JUDGES, judge_for
from rlmlab.learning._siblings import nearest_siblings
from rlmlab.learning._vote import VOTE_STOPS, settled
from rlmlab.memory import (
    STEP_TEMPLATES_KEY, ContextBuilder, MemoryStore, MemoryTask, Verdict, query_shape, resolve_domain,
    template_matches,
)
from rlmlab.records import Record

__all__ = ["ReasoningBankLoop", "TaskOutcome", "EXTRACTION_MODES", "RESULTS_FILE", "rlm_executor"]

EXTRACTION_MODES = ("best", "contrastive")
RESULTS_FILE = "results.jsonl"

# executor(task, instructions, workspace, trajectory_id) -> Trajectory
Executor = Callable[[MemoryTask, str, Any, str], Any]


def rlm_executor(lm: Any, *, max_iters: int = 6, max_llm_calls: int = 12, runs_dir: str | Path | None = None,
                 turing: Any = None) -> Executor:
    """The default executor: the registered ``rlm`` executor (the entry point the experiment runner uses too) with the
    built context as instructions and the task's context as a handle."""
    from rlmlab.executors import make_executor

    rlm = make_executor("rlm", lm=lm, max_iters=max_iters, max_llm_calls=max_llm_calls, runs_dir=runs_dir,
                        turing=turing)

    def run(task: MemoryTask, instructions: str, workspace: Any, trajectory_id: str) -> Any:
        return rlm(task.query, task.context, workspace=workspace, instructions=instructions, run_id=trajectory_id,
                   source_path=task.meta.get("source_path"))

    return run


@dataclass
class TaskOutcome(Record):
    """One task of a loop run: its rollouts' verdicts, the best one, and what the memory learnt from it."""

    run_id: str
    task_id: str
    domain: str | None
    mode: str
    trajectory_ids: list[str]
    answers: list[str | None]
    verdicts: list[dict[str, Any]]
    best: int
    context_chars: int
    injected: list[str]
    extracted: list[str] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    admitted: list[str] = field(default_factory=list)  # the agent's own mem_add candidates the judge admitted
    rollouts: list[dict[str, Any]] = field(default_factory=list)  # per rollout: trajectory_metrics()
    # per rollout, the task's own check (the answer key) when the loop's judge is another one (a key-free judge):
    # what a report scores, while ``verdicts`` are what the loop learnt from; empty when they are the same judge
    reference: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    iterations: int = 0
    elapsed_ms: int = 0
    error: str | None = None

    @property
    def success(self) -> bool:
        return bool(self.verdicts) and bool(self.verdicts[self.best]["success"])

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "success": self.success}  # from_dict (Record's) drops the derived success


class _AgainstAnswer:
    """Judges a replay by whether it reproduces an accepted answer (``agreed.expected``), whatever task it is given."""

    def __init__(self, judge: Any, agreed: MemoryTask):
        self.inner, self.agreed = judge, agreed
        self.name = f"reproduces {judge.name}"

    def judge(self, task: MemoryTask, trajectory: Any) -> Verdict:
        return self.inner.judge(self.agreed, trajectory)


class _NoEvidence:
    """The judge of a replay nothing can check (a vote's sibling that never reached agreement): it fails."""

    name = "no agreed answer"

    def judge(self, task: MemoryTask, trajectory: Any) -> Verdict:
        return Verdict(False, 0.0, "The sibling has no agreed answer to reproduce.", self.name)


class ReasoningBankLoop:
    """Closed-loop memory over a sequence of tasks.

    ``builder`` decides the layers, budgets and integration mode (auto-inject by default). ``judge`` is a
    name in ``JUDGES`` or a judge object; None picks each task's ``check``. ``extractor`` "none" turns
    learning off (E5: retrieval only); ``consolidator`` "append" is E9, "consolidate" E10; ``forgetter``
    "bounded" (with ``forgetter_options``) is E11; ``rollouts`` > 1 with ``extraction`` "best" or
    "contrastive" is E12; ``selection`` "vote" keeps the rollout with the majority answer instead of the judge's
    best (E13's voted samples). ``judge_lm`` and ``extractor_lm`` serve the LLM judge/extractor (default: ``lm``).
    ``until_accepted`` (exploration) runs the rollouts one after another and stops at the first the judge accepts,
    so ``rollouts`` is a budget per task. With a ``judge`` other than the tasks' own checks, ``reference=True`` also
    scores every rollout by the task's check (the answer key) into ``TaskOutcome.reference``, for reports only.
    ``frozen=True`` is a test phase: the bank is read, never written (no extraction, usage, outcomes, events or
    forgetting), so a frozen task leaves no trace to resume from: its caller keeps the results.

    A task runs once per ``run_id`` (see :meth:`run_task`): running it again, in this process or after a kill,
    returns the outcome recorded in the store. Writes an agent makes itself through memory tools (tool-mediated
    mode: ``mem_add``, ``event_log``) happen when it makes them, outside the task's transaction, so a task killed
    before its commit makes them again when it reruns (``mem_add`` and usage links are idempotent; events repeat).
    """

    def __init__(self, store: MemoryStore, *, lm: Any = None, builder: ContextBuilder | None = None,
                 executor: Executor | None = None, judge: Any = None, judge_lm: Any = None,
                 extractor: Any = "heuristic", extractor_options: dict[str, Any] | None = None,
                 extractor_lm: Any = None, consolidator: Any = "append",
                 consolidator_options: dict[str, Any] | None = None, forgetter: Any = "none",
                 forgetter_options: dict[str, Any] | None = None, rollouts: int = 1, extraction: str = "best",
                 run_id: str | None = None, runs_dir: str | Path | None = None, max_iters: int = 6,
                 templates: bool = False, selection: str = "score", until_accepted: bool = False,
                 reference: bool = False, frozen: bool = False, vote_stop: str = "all"):
        if selection not in ("score", "vote"):
            raise ConfigError(f"selection: {selection!r}; use score (the judge's best) or vote (the majority answer)")
        if vote_stop not in VOTE_STOPS:
            raise ConfigError(f"vote_stop: {vote_stop!r}; use all (every sample) or settled (stop once the rest "
                              "cannot change the majority)")
        if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 1:
            raise ConfigError(f"rollouts: {rollouts!r}; use an integer >= 1")
        if extraction not in EXTRACTION_MODES:
            raise ConfigError(f"extraction: {extraction!r}; use one of {', '.join(EXTRACTION_MODES)}")
        if executor is None and lm is None:
            raise ConfigError("give an lm (for the default RLM executor) or an executor")
        from rlmlab.executors import new_run_id

        self.store, self.lm = store, lm
        self.builder = builder or ContextBuilder(store)
        self.run_id = run_id or new_run_id("rb")
        self.runs_dir = Path(runs_dir) if runs_dir is not None else None
        self._written: set[tuple[str, ...]] | None = None  # trajectory ids of the lines in results.jsonl
        traj_dir = self.runs_dir / self.run_id / "trajectories" if self.runs_dir else None
        self.executor = executor or rlm_executor(lm, max_iters=max_iters, runs_dir=traj_dir)
        self.judge_lm = judge_lm or lm
        self.judge = judge
        if isinstance(judge, str):
            self.judge = JUDGES.make(judge, **({"lm": self.judge_lm} if JUDGES.accepts(judge, "lm") else {}))
        ext_opts = dict(extractor_options or {})
        if isinstance(extractor, str) and extractor != "none" and EXTRACTORS.accepts(extractor, "lm"):
            ext_opts.setdefault("lm", extractor_lm or lm)
        self.extractor = None if extractor in (None, "none") else (
            EXTRACTORS.make(extractor, **ext_opts) if isinstance(extractor, str) else extractor)
        self.consolidator = CONSOLIDATORS.make(consolidator, **(consolidator_options or {})) \
            if isinstance(consolidator, str) else consolidator
        self.forgetter = FORGETTERS.make(forgetter, **(forgetter_options or {})) \
            if isinstance(forgetter, str) else forgetter
        self.rollouts, self.extraction = rollouts, extraction
        self.selection = selection
        self.vote_stop = vote_stop if selection == "vote" else "all"
        if not isinstance(templates, bool):
            raise ConfigError(f"templates: {templates!r}; use true or false")
        self.templates = templates
        if templates and getattr(self.builder, "admit", False) is None:
            # a first step must copy the template it is given: inject the best retrieved one it can copy
            from rlmlab.learning._recall import template_fits

            self.builder.admit = template_fits
        if frozen and self.extractor is not None:
            raise ConfigError("frozen: a frozen bank learns nothing; use extractor none")
        self.until_accepted, self.reference, self.frozen = bool(until_accepted), bool(reference), bool(frozen)
        self.outcomes: list[TaskOutcome] = []
        # (task, solved) of the stream so far: the siblings of the template extractor's intervention test
        self.history: list[tuple[MemoryTask, bool]] = []
        self._agreed: dict[str, str] = {}  # task id -> the answer its judge accepted (a vote's, for siblings)

    # -- one task ----------------------------------------------------------------------------------------

    def _workspace(self, task: MemoryTask, trajectory_id: str, built: Any = None) -> Any:
        """A fresh workspace for one rollout of ``task``: its tools, its ontology, and with ``templates=True``
        the code templates of the injected strategies in ``extras["step_templates"]`` (a list of {"id",
        "title", "template"} in injection order, empty when none was injected), for an executor that constrains
        its steps to a grammar. ``built`` (a BuiltContext) defaults to the builder's last build if that was for
        this task."""
        from rlmlab.tools import TOOLS, Workspace, attach_memory, attach_ontology

        groups = {spec.group for spec in TOOLS}
        if self.builder.mode == "auto_inject":
            groups.discard("memory")  # memory reaches the agent only through the injected context
        ws = Workspace(registry=TOOLS.select(groups=groups))
        if self.builder.mode == "tool_mediated":
            attach_memory(ws, self.store, read_only=self.frozen)
        if task.domain:
            domain = resolve_domain(task.domain)
            if domain.kind == "ontology":
                attach_ontology(ws, domain.source)
        if self.templates:
            if built is None:
                last = getattr(self.builder, "last", None)
                built = last if last is not None and last.task_id == task.id else None
            ws.extras[STEP_TEMPLATES_KEY] = [dict(t) for t in built.templates] if built is not None else []
        return ws

    def _task_judge(self, task: MemoryTask) -> Any:
        """The judge of ``task``: the loop's (resolved per task when it has ``for_task``, as a judge per suite
        does), else the task's own check."""
        judge = self.judge or judge_for(task, lm=self.judge_lm)
        return judge.for_task(task) if hasattr(judge, "for_task") else judge

    def _replay_options(self, task: MemoryTask, judge: Any, accepted: str | None) -> dict[str, Any]:
        """What an extractor that replays (``template``) needs to replay under this loop: the loop's judge (a key-free
        one when learning runs without the answer key) and its workspaces. A judge that needs several rollouts (a
        vote) cannot judge one replay: the replay must then reproduce the answer the vote accepted."""
        import inspect

        params = inspect.signature(self.extractor.extract).parameters
        out: dict[str, Any] = {}
        if "siblings" in params:  # SkillGen's intervention test over earlier stream tasks asked alike
            out["siblings"] = nearest_siblings(task, self.history, k=getattr(self.extractor, "max_siblings", 4))
        if "judge" not in params or self.judge is None:
            return out
        if hasattr(judge, "judge_rollouts"):
            from rlmlab.learning._judge import NumericJudge

            agreed = dataclasses.replace(task, expected=accepted, check="numeric")
            replay_judge: Any = _AgainstAnswer(NumericJudge(), agreed)
        else:
            replay_judge = judge
        out["judge"] = replay_judge
        if "workspace" in params:
            out["workspace"] = lambda t: self._workspace(t, f"{self.run_id}-{t.id}-replay")
        if "sibling_judge" in params:  # siblings are judged without the key too (each by its own suite's judge)
            out["sibling_judge"] = self._sibling_judge
        return out

    def _sibling_judge(self, sibling: MemoryTask) -> Any:
        """A sibling's judge for one replay. A vote cannot judge one run: the replay must reproduce the answer the
        sibling's vote agreed on, and a sibling with no agreed answer cannot be repaired (no evidence)."""
        judge = self._task_judge(sibling)
        if not hasattr(judge, "judge_rollouts"):
            return judge
        from rlmlab.learning._judge import NumericJudge

        agreed = self._agreed.get(sibling.id)
        return _AgainstAnswer(NumericJudge(), dataclasses.replace(sibling, expected=agreed, check="numeric")) \
            if agreed is not None else _NoEvidence()

    def run_task(self, task: MemoryTask, rollout: int | None = None) -> TaskOutcome:
        """Run ``task`` (``rollouts`` times), judge, extract, persist and forget; returns the outcome.

        ``rollout=i`` runs only rollout ``i`` (trajectory id ``<run>-<task>-r<i>``): the unit the experiment
        runner spreads over workers when a condition does not learn.

        Exactly once per run id: the agent runs, judging and extraction write nothing; then every memory write
        of the task (usage, outcomes, the "context", "judge", "extract", "consolidation", "forget" and "task"
        events, new items) commits in one transaction. A task whose "task" event is already in the store (the
        process was killed after the commit, before its results row was written) is not run again: its recorded
        outcome is returned. So a kill at any point and a rerun leave the same bank and event log as one run.
        """
        from rlmlab.executors import trajectory_metrics

        t0 = time.perf_counter()
        indices = range(self.rollouts) if rollout is None else [rollout]
        ids = [f"{self.run_id}-{task.id}-r{i}" for i in indices]
        recorded = None if self.frozen else self.recorded(task.id, ids)
        if recorded is not None:
            self.outcomes.append(recorded)
            self._append_result(recorded)
            return recorded
        self.store.bind(run_id=self.run_id, domain=task.domain)
        built = self.builder.build(task, trajectory_id=ids[0], record=False)
        judge = self._task_judge(task)
        # a judge that needs every rollout's answer (a vote) judges them together, so it cannot stop early
        together = hasattr(judge, "judge_rollouts")
        trajectories: list[Any] = []
        verdicts: list[Verdict] = []
        forced = True  # whether a rollout's first step must copy an injected template (see _workspace)
        for tid in ids:
            self.store.bind(run_id=self.run_id, trajectory_id=tid, domain=task.domain)
            ws = self._workspace(task, tid, built)
            if not forced:
                ws.extras[STEP_TEMPLATES_KEY] = []
            trajectories.append(self.executor(task, built.text, ws, tid))
            write_point("loop:rollout")
            if not together:
                verdicts.append(judge.judge(task, trajectories[-1]))
                if self.until_accepted and verdicts[-1].success:
                    break
                # exploring: a template the judge just rejected is not forced on the next samples (its guardrail
                # commits with the task, too late for them), so they search the step's own space instead
                if self.until_accepted and ws.extras.get(STEP_TEMPLATES_KEY):
                    forced = False
                # a settled vote: the remaining samples cannot change the majority (exact; see learning._vote)
                if self.vote_stop == "settled" and settled([t.answer for t in trajectories], len(ids)):
                    break
        if together:
            verdicts = list(judge.judge_rollouts(task, trajectories))
        ids = ids[:len(trajectories)]
        errors = [t.error for t in trajectories if t.error]
        rollouts: list[tuple[Any, Verdict]] = list(zip(trajectories, verdicts))
        reference = ([judge_for(task, lm=self.judge_lm).judge(task, t).to_dict() for t in trajectories]
                     if self.reference and self.judge is not None else [])
        if self.selection == "vote":
            # no reference needed; lazy: rlmlab.experiments sits above memory (the runner's _merge uses the same rule)
            from rlmlab.learning._vote import majority

            best = majority([t.answer for t, _ in rollouts])
        else:
            best = max(range(len(rollouts)), key=lambda i: (rollouts[i][1].score, -i))
        outcome = TaskOutcome(
            run_id=self.run_id, task_id=task.id, domain=task.domain, mode=self.builder.mode, trajectory_ids=ids,
            answers=[t.answer for t, _ in rollouts], verdicts=[v.to_dict() for _, v in rollouts], best=best,
            context_chars=built.chars, injected=built.injected_ids,
            input_tokens=sum(t.input_tokens for t, _ in rollouts), output_tokens=sum(t.output_tokens for t, _ in rollouts),
            iterations=sum(len(t.iterations) for t, _ in rollouts), error="; ".join(errors) or None,
            rollouts=[trajectory_metrics(t) for t, _ in rollouts], reference=reference)
        if self.frozen:  # a test phase: nothing of the task reaches the bank
            outcome.elapsed_ms = int((time.perf_counter() - t0) * 1000)
            self.store.bind(run_id=self.run_id)
            self.outcomes.append(outcome)
            self._append_result(outcome)
            return outcome
        items = None
        admission: dict[str, int] = {}
        solved = bool(rollouts[best][1].success)
        if self.extractor is not None:  # may call an LM: before the transaction, which holds the write lock
            extra = self._replay_options(task, judge, rollouts[best][0].answer)
            stats = dict(getattr(self.extractor, "stats", None) or {})
            if self.extraction == "contrastive" and len(rollouts) > 1:
                items = self.extractor.contrastive(task, rollouts, **extra)
            else:
                items = self.extractor.extract(task, *rollouts[best], **extra)
            shape = query_shape(task.query)
            for it in items:  # the extractor names the trajectory; the loop's run id is the run's provenance
                it.run_id = self.run_id
                if it.shape is None:  # retrieval by shape finds it for tasks asked the same way
                    it.shape = shape
            after = getattr(self.extractor, "stats", None) or {}
            admission = {k: int(after.get(f"templates_{k}", 0)) - int(stats.get(f"templates_{k}", 0))
                         for k in ("admitted", "rejected") if f"templates_{k}" in after}
        self.history.append((task, solved))
        if solved and rollouts[best][0].answer is not None:
            self._agreed[task.id] = str(rollouts[best][0].answer)
        with self.store.transaction():
            self.builder.record(built, trajectory_id=ids[0])
            for other in ids[1:]:  # every rollout saw the same injected items
                if built.injected_ids:
                    self.store.record_usage(built.injected_ids, trajectory_id=other)
            for tid, (traj, verdict) in zip(ids, rollouts):
                self.store.record_outcome(tid, verdict.success)
                self.store.log_event("judge", {"task_id": task.id, "answer": traj.answer, **verdict.to_dict()},
                                     trajectory_id=tid)
            outcome.admitted = self._admit_candidates(task, ids, rollouts)
            self.store.bind(run_id=self.run_id, trajectory_id=ids[best], domain=task.domain)
            if solved and built.injected_ids:  # a template that won takes the task's shape: a guardrail for that
                code = "\n".join(it.code for it in rollouts[best][0].iterations)  # shape no longer retires it
                for used in self.store.get_many(built.injected_ids):
                    if used.template and used.polarity == "success" and template_matches(used.template, code):
                        self.store.add_shape(used.id, task.query)
            if items is not None:
                self.store.log_event("extract", {"task_id": task.id, "mode": self.extraction,
                                                 "items": [it.to_dict() for it in items],
                                                 **({"admission": admission} if admission else {})},
                                     trajectory_id=ids[best])
                actions = self.consolidator.persist(self.store, items)
                outcome.extracted = [it.id for it in items]
                outcome.actions = [a.to_dict() for a in actions]
            forgotten = self.forgetter.forget(self.store)
            outcome.forgotten = [a.item_id for a in forgotten if a.action == "forget"]
            outcome.elapsed_ms = int((time.perf_counter() - t0) * 1000)
            self.store.log_event("task", outcome.to_dict(), trajectory_id=ids[best])
        self.store.bind(run_id=self.run_id)
        self.outcomes.append(outcome)
        self._append_result(outcome)
        return outcome

    def _admit_candidates(self, task: MemoryTask, ids: list[str], rollouts: list[tuple[Any, Verdict]]) -> list[str]:
        """The items the agent proposed with ``mem_add`` (candidates) in the rollouts the judge accepted enter the
        bank; a rejected rollout's stay candidates (the event log keeps them; ``rlmlab memory admit`` can still
        take one). Inside the task's transaction. Returns the ids admitted."""
        from rlmlab.memory import admit_candidates, candidate_items

        accepted = [c.id for tid, (_, verdict) in zip(ids, rollouts) if verdict.success
                    for c in candidate_items(self.store, run_id=self.run_id, trajectory_id=tid)]
        if accepted:
            admit_candidates(self.store, accepted, by=f"judge:{getattr(self._task_judge(task), 'name', 'judge')}")
        return list(dict.fromkeys(accepted))

    def recorded(self, task_id: str, trajectory_ids: list[str]) -> TaskOutcome | None:
        """The outcome of ``task_id`` stored by an earlier ``run_task`` of this run id with these trajectories
        (its "task" event), or None if it has not committed."""
        for event in self.store.events(kind="task", run_id=self.run_id, payload={"task_id": task_id}):
            payload = event.payload
            ran = payload.get("trajectory_ids") or []
            # an exploring loop stops at the first accepted rollout: its record holds a prefix of the ids
            # and so does a settled vote once the rest cannot change its majority
            stops = self.until_accepted or self.vote_stop == "settled"
            if ran == trajectory_ids or (stops and ran and ran == trajectory_ids[:len(ran)]):
                return TaskOutcome.from_dict(payload)
        return None

    def _append_result(self, outcome: TaskOutcome) -> None:
        """With ``runs_dir``: the outcome's line in ``<run-id>/results.jsonl``, unless a replayed task has it.

        The file is read once, on the first append (a line cut by a kill is dropped then: its task is written
        again); after that this loop knows every line it holds."""
        if self.runs_dir is None:
            return
        path = self.runs_dir / self.run_id / RESULTS_FILE
        if self._written is None:
            self._written = set()
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists():
                text = path.read_text(encoding="utf-8")
                if text and not text.endswith("\n"):
                    text = text[: text.rfind("\n") + 1]
                    path.write_text(text, encoding="utf-8")
                self._written = {tuple(json.loads(line).get("trajectory_ids") or ())
                                 for line in text.splitlines() if line.strip()}
        key = tuple(outcome.trajectory_ids)
        if key in self._written:
            return
        self._written.add(key)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(outcome.to_dict(), ensure_ascii=False) + "\n")

    def run(self, tasks: Iterable[MemoryTask], *, progress: bool = False) -> list[TaskOutcome]:
        """``run_task`` for each task in order (later tasks see what earlier ones taught)."""
        tasks = list(tasks)
        if not progress:
            return [self.run_task(t) for t in tasks]
        from rich.progress import Progress

        out = []
        with Progress() as bar:
            job = bar.add_task(f"memory loop {self.run_id}", total=len(tasks))
            for t in tasks:
                out.append(self.run_task(t))
                ok = sum(o.success for o in out)
                bar.update(job, advance=1, description=f"memory loop: {ok}/{len(out)} judged success")
        return out
