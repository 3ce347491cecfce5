"""Run an experiment (E1..E15): every condition over a task suite, one results row per task x rollout.

``run_experiment`` writes under ``runs/<run-id>/``:

- ``config.json``: the resolved experiment config and the run's parameters;
- ``env.json``: git commit, model id, library versions (the spec's reproducibility gate);
- ``results.jsonl``: one row per condition x task x rollout, appended as each task finishes;
- ``memory.<condition>.sqlite``: each condition's memory bank (items, artifacts, the L4 event log);
- ``trajectories/<trajectory-id>/trajectory.jsonl``: every agent run;
- ``summary.json``: per-condition metrics (also printed as a table);
- ``interrupted.json``: written when Ctrl-C stops the run (:mod:`._interrupt`), removed when a resume finishes;
- ``run.lock``: held while a runner writes the directory (:mod:`rlmlab._lock`): a second runner or resume of
  the same run is refused with RunLockedError instead of appending duplicate rows.

A condition with ``samples: N`` runs N rollouts of a task, rollout i sampled at the condition's
``temperature`` with seed i + 1, and keeps the majority answer (:mod:`._vote`); the rollouts' first steps, which
share their whole prompt, are decoded as N sequences of one batch by the embedded model (:func:`shared_samples`); ``rollouts: N`` keeps the
judge's best instead. A row says which (``selected_by``); code-suite rows also say whether the trace is a
golden record by the code oracles (``golden``).

A killed run resumes (``resume=run_id``, or ``run_dir`` pointing at it) from its results file: finished
tasks are not run again, and a task whose memory writes committed before the kill (see
:meth:`ReasoningBankLoop.run_task`) is replayed from its "task" event, not run twice, so a resumed run ends with
the results, memory bank and event log of an uninterrupted one (tests/test_exactly_once.py kills it at every
write point, see :mod:`rlmlab._faults`). A condition that does not learn is split into units, one rollout of one task,
which the backend runs (``threads``: up to ``workers`` threads here; ``ray``: Ray tasks, see
``_backends``); each unit opens the condition's memory DB itself. Conditions that learn run their
tasks in order, because each task may read what the ones before it stored.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rlmlab._faults import write_point
from rlmlab._files import interrupts_deferred, write_atomic, write_jsonl
from rlmlab._interrupt import noting_sigint
from rlmlab._lock import lock_run_dir
from rlmlab.errors import ConfigError
from rlmlab.provenance import PROVENANCE_FILE, Collected, provenance, recording
from rlmlab.experiments._backends import BACKENDS
from rlmlab.experiments._config import Condition, ExperimentConfig, load_experiment, resolve_pack
from rlmlab.experiments._env import environment
from rlmlab.experiments._golden import golden_check
from rlmlab.experiments._interrupt import clear_interruption, record_interruption
from rlmlab.experiments._learning import bank_figures
from rlmlab.experiments._params import pick_run
from rlmlab.experiments._phases import load_test_suite, make_judge
from rlmlab.experiments._summary import read_results, summarise, summary_columns, summary_table
from rlmlab.memory import (BASE_INSTRUCTIONS, PLAIN_INSTRUCTIONS, Artifact, ContextBuilder, MemoryStore, MemoryTask,
                           import_pack, resolve_domain)
from rlmlab.learning import CANNOT_JUDGE, ReasoningBankLoop, TaskOutcome, memory_health, select_rollout, task_kind
from rlmlab.experiments._task_error import task_or_error
from rlmlab.text import plural

__all__ = ["run_experiment", "ExperimentRun", "read_results", "summarise", "summary_table", "summary_columns",
           "sample_lm", "RESULTS", "GUIDE_QUERY"]

RESULTS = "results.jsonl"
GUIDE_QUERY = ("Explore this source and write a short Markdown guide for answering questions about it: "
               "namespaces or modules, the main classes or types, key properties or functions, and 3 patterns to use.")


@dataclass
class ExperimentRun:
    """A finished (or resumed) run: where it is, and the per-condition summary."""

    run_id: str
    run_dir: Path
    summary: dict[str, Any]
    rows: int

    def __rich__(self) -> Any:
        return summary_table(self.summary, title=f"{self.run_id} ({plural(self.rows, 'row')}) in {self.run_dir}")

    @property
    def failed_conditions(self) -> list[str]:
        """Conditions whose every run ended in an error (every LM call failed, say): nothing they report counts."""
        return [cond for cond, s in self.summary.items() if s.get("all_failed")]


def sample_lm(lm: Any, temperature: float, seed: int) -> Any:
    """``lm`` sampling at ``temperature`` with ``seed``: a ``dspy.LM`` copy that records its calls in the same
    CallRecorder; any other LM object is returned as is (it cannot be re-seeded)."""
    import dspy

    from rlmlab.lm import CallRecorder

    if not isinstance(lm, dspy.LM):
        return lm
    copy = lm.copy(temperature=temperature, seed=seed)
    for cb in getattr(lm, "callbacks", None) or []:  # the trajectory's token counts come from the recorder
        if isinstance(cb, CallRecorder) and not any(c is cb for c in copy.callbacks or []):
            copy.callbacks = [*(copy.callbacks or []), cb]
    return copy


def _rollout_index(trajectory_id: str) -> int | None:
    """i of a trajectory id ``<run>-<task>-r<i>`` (the loop's naming), or None (an L3 guide run)."""
    head, sep, tail = trajectory_id.rpartition("-r")
    return int(tail) if sep and head and tail.isdigit() else None


def _executor(cond: Condition, lm: Any, traj_dir: Path) -> Callable[..., Any]:
    """The loop's executor for a condition: the named executor with the condition's tools and decoding; with
    ``samples`` > 1, rollout i samples at the condition's temperature with seed i + 1."""
    from rlmlab.executors import EXECUTORS
    from rlmlab.learning import batch_seeds
    from rlmlab.lm import shared_samples
    from rlmlab.tools import ToolRegistry

    run = EXECUTORS.make(cond.executor, **cond.plugin_options.get("executor", {}))
    if cond.tools == "naive" and cond.executor != "rlm":
        raise ConfigError(f"condition {cond.name}: naive tools are defined for the rlm executor only")
    if cond.sandbox is not None or cond.sandbox_policy is not None:  # required + unavailable: refuse before any task
        from rlmlab.sandbox import choose_sandbox, default_sandbox

        choose_sandbox(cond.sandbox or default_sandbox(), cond.sandbox_policy or "best_effort")

    def execute(task: MemoryTask, instructions: str, workspace: Any, trajectory_id: str) -> Any:
        rollout = _rollout_index(trajectory_id) if cond.runs_per_task > 1 else None
        # voted samples are all sampled; explored samples after the first greedy one, and judged rollouts with resample
        sampled = rollout is not None and (cond.samples > 1 or (rollout > 0 and (cond.explore > 1 or cond.resample)))
        run_lm = sample_lm(lm, cond.temperature, rollout + 1) if sampled else lm
        kwargs: dict[str, Any] = dict(lm=run_lm, workspace=workspace, instructions=instructions,
                                      run_id=trajectory_id, max_iters=cond.max_iters, runs_dir=traj_dir,
                                      source_path=task.meta.get("source_path"))
        kwargs["decoding"] = cond.decoding
        for key in ("sandbox", "sandbox_policy"):  # only executors that run step code take them (not react)
            if getattr(cond, key) is not None and EXECUTORS.accepts(cond.executor, key):
                kwargs[key] = getattr(cond, key)
        if cond.tools == "naive":  # E7 condition A: the context as a plain string, no bounded tools
            kwargs.update(tools=ToolRegistry(), context_mode="string")
        # A vote's rollouts' first steps share their whole prompt: one batch decodes all of them (rlmlab.lm._samples);
        # later steps hold each rollout's own history and are decoded one by one. A vote that stops once settled
        # batches the fewest samples that can settle it, then the rest (decoded only if it has not settled).
        seeds = batch_seeds(cond.samples, rollout, cond.vote_stop) if rollout is not None and cond.samples > 1 else ()
        if len(seeds) < 2:  # judged or explored rollouts are not a vote, and one seed is no batch: nothing shared
            return run(task.query, task.context, **kwargs)
        with shared_samples(seeds, calls=1):
            return run(task.query, task.context, **kwargs)

    return execute


def _materialise_guides(store: MemoryStore, tasks: list[MemoryTask], cond: Condition, lm: Any,
                        traj_dir: Path) -> None:
    """E4's phase 1: store an L3 guide per domain once; its cost (tokens, ms) is logged as a "guide" event."""
    from rlmlab.ontology import crate_sense_card, sense_brief

    for domain_id in dict.fromkeys(t.domain for t in tasks if t.domain):
        if store.artifacts(domain=domain_id, kind="guide"):
            continue
        domain, t0 = resolve_domain(domain_id), time.perf_counter()
        cost = {"input_tokens": 0, "output_tokens": 0}
        if cond.l3_guide == "brief":
            text = sense_brief(domain.source) if domain.kind == "ontology" else crate_sense_card(domain.source, 6000)
        else:
            context = next(t.context for t in tasks if t.domain == domain_id)
            traj = _executor(cond, lm, traj_dir)(MemoryTask(f"guide-{domain_id}", GUIDE_QUERY, context, domain_id),
                                                 "", None, f"guide-{domain_id.replace(':', '_')}")
            if not traj.answer:
                raise ConfigError(f"L3 guide for {domain_id}: the exploration run gave no answer ({traj.error})")
            text, cost = traj.answer, {"input_tokens": traj.input_tokens, "output_tokens": traj.output_tokens}
        art = Artifact("guide", f"{domain_id} guide ({cond.l3_guide})", text, domain=domain_id,
                       source=f"guide:{cond.l3_guide}")
        with store.transaction():  # both or neither: a guide stored without its event would be skipped next time
            store.put_artifact(art)
            store.log_event("guide", {"artifact": art.id, "chars": len(text), "how": cond.l3_guide, **cost,
                                      "elapsed_ms": int((time.perf_counter() - t0) * 1000)}, domain=domain_id)


def _rows(exp: ExperimentConfig, cond: Condition, task: MemoryTask, o: TaskOutcome, lm_name: str,
          golden: Callable[[MemoryTask, str], bool | None] | None = None, phase: str = "stream") -> list[dict]:
    """One row per rollout. ``success`` is by the task's own check (the answer key) even when a key-free judge
    decided what the bank learnt: that judge's decision is ``accepted``; ``undecided``: it could not decide."""
    rows = []
    for i, (tid, verdict, metrics) in enumerate(zip(o.trajectory_ids, o.verdicts, o.rollouts)):
        scored = o.reference[i] if o.reference else verdict
        rows.append({
            "experiment": exp.id, "condition": cond.name, "phase": phase, "task_id": task.id,
            "suite": task.meta.get("suite"), "level": task.meta.get("level"), "kind": task_kind(task),
            "rollout": i, "best": i == o.best, "trajectory_id": tid,
            "lm": lm_name, "executor": cond.executor, "mode": cond.mode, "tools": cond.tools,
            "layers": cond.layers.enabled(), "answer": o.answers[i], "expected": task.expected,
            "success": scored["success"],
            "accepted": verdict["success"], "judge_used": verdict["judge"],
            "score": scored["score"], "judge": scored["judge"], "rationale": scored["rationale"],
            "undecided": str(scored["rationale"]).startswith(CANNOT_JUDGE), "context_chars": o.context_chars, "injected": o.injected, "extracted": o.extracted if i == o.best else [],
            "decoding": cond.decoding, "decoding_asked": cond.decoding, "templates": cond.templates, "samples": cond.samples,
            "vote_stop": cond.vote_stop, "selected_by": cond.selection, "explore": cond.explore,
            "golden": golden(task, tid) if golden else None,
            **metrics,
        })
    return rows


def run_experiment(experiment: str | Path | ExperimentConfig, *, lm: Any = None, suite: str | None = None,
                   tasks: int | None = None, rollouts: int | None = None, workers: int | None = None,
                   conditions: list[str] | None = None, runs_dir: str | Path | None = None, resume: str | None = None,
                   run_dir: str | Path | None = None, backend: str = "threads", progress: bool | str = True,
                   max_iters: int | None = None, lm_options: dict[str, Any] | None = None,
                   task_list: list[MemoryTask] | None = None, levels: list[int] | None = None,
                   parity: str | None = None, test_suite: str | Path | None = None,
                   test_tasks: int | None = None, decoding: str | None = None,
                   explore: int | None = None, reuse: bool = False, resume_latest: bool = False) -> ExperimentRun:
    """Run ``experiment`` (an id like "E7", a path, or a loaded config).

    ``lm`` is an LM spec ("local", "scripted:<name>", a LiteLLM model) or an LM object; ``suite``, ``tasks``
    and ``workers`` default to the config's ``defaults`` (``suite`` may name several, "code,ontology": ``tasks``
    from each); ``rollouts`` and ``max_iters`` override every condition's; ``lm_options`` go to ``make_lm``
    with the spec (``{"max_tokens": 256}``).
    ``runs_dir`` defaults to ``runs_home()``; ``resume`` is the id of a run under it to continue (same parameters);
    ``run_dir`` names the run's directory exactly instead (a notebook's), continuing it if it holds a run.
    ``backend`` is "threads" or "ray" (see ``_backends``). ``progress``: True a live bar, "lines" a printed
    line per finished task, False nothing. ``task_list`` replaces the suite (tests). ``levels`` and ``parity``
    ("odd"/"even": the templates' training or held-out half, see :func:`task_numbers`) filter each suite first.
    ``test_suite`` (a task file; default the config's ``defaults.test_suite``) runs after each condition's stream
    with its bank frozen (:mod:`._phases`); its rows keep the file's task ids and have ``phase`` "test";
    ``test_tasks`` keeps its first N. ``decoding`` ("grammar" or "free") overrides every condition's; ``explore``
    the budget of every condition that explores (a short demo). ``reuse`` (with no ``run_dir`` or ``resume``)
    reopens the newest finished run under ``runs_dir`` of the same parameters instead of starting one (printed).
    ``resume_latest`` (likewise) continues the newest run of the same parameters that this git commit ran on a clean
    tree, finished or cut short (:func:`~rlmlab.experiments.latest_run`; printed): a finished one is only
    summarised again, one cut short runs its remaining tasks.
    """
    exp = experiment if isinstance(experiment, ExperimentConfig) else load_experiment(experiment)
    params = {"suite": suite or exp.defaults["suite"], "tasks": tasks or exp.defaults["tasks"],
              "lm": lm if isinstance(lm, str) else (str(getattr(lm, "model", lm)) if lm is not None else exp.defaults["lm"]),
              "workers": workers or exp.defaults["workers"], "rollouts": rollouts,
              "conditions": conditions or [c.name for c in exp.conditions], "max_iters": max_iters,
              "lm_options": lm_options or None,
              **({"levels": sorted(levels)} if levels else {}), **({"parity": parity} if parity else {})}
    test_suite = test_suite or exp.defaults.get("test_suite")
    if test_suite:  # only when set: a run without one keeps the parameters (and resumes) of earlier runs
        params.update(test_suite=str(test_suite), test_tasks=test_tasks)
    if decoding is not None:
        params["decoding"] = decoding
    if explore is not None:
        params["explore"] = explore
    conds = [exp.condition(name) for name in params["conditions"]]
    if decoding is not None:
        if decoding not in ("grammar", "free"):
            raise ConfigError(f"decoding: {decoding!r}; use grammar or free")
        conds = [replace(c, decoding=decoding) for c in conds]
    if explore is not None:
        if isinstance(explore, bool) or not isinstance(explore, int) or not 1 <= explore <= 16:
            raise ConfigError(f"explore: {explore!r}; use an integer from 1 to 16")
        conds = [replace(c, explore=explore) if c.explore > 1 else c for c in conds]
    if rollouts is not None:
        voting = [c.name for c in conds if c.samples > 1]
        if rollouts > 1 and voting:
            raise ConfigError(f"rollouts {rollouts}: condition(s) {', '.join(voting)} vote over samples, which "
                              "does not combine with judged rollouts; run other conditions or leave rollouts unset")
        conds = [replace(c, rollouts=rollouts, extraction="best" if rollouts == 1 and c.samples == 1 else c.extraction)
                 for c in conds]
    if max_iters is not None:
        conds = [replace(c, max_iters=max_iters) for c in conds]
    run_dir, run_id, resume = pick_run(exp.id, params, runs_dir, run_dir, resume, reuse,
                                       _clean_commit() if resume_latest else None)
    with recording() as collected:  # every plug-in made and data file read from here on goes into provenance.json
        backend_obj = BACKENDS.make(backend, workers=params["workers"])
        config_path = run_dir / "config.json"
        if resume and not config_path.exists():
            raise ConfigError(f"resume: no run {run_id!r} under {run_dir.parent} ({config_path} is missing)")
        with lock_run_dir(run_dir):  # one writer per run: a second runner or resume is refused, not interleaved
            return _run_locked(exp, params, conds, run_id, run_dir, resume, lm, lm_options, task_list, levels,
                               parity, backend, backend_obj, progress, collected)


def _clean_commit() -> str | None:  # the commit a run now records; None with uncommitted changes
    env = environment()
    return env["git_commit"] if env.get("git_dirty") is False else None


def _run_locked(exp: ExperimentConfig, params: dict[str, Any], conds: list[Condition], run_id: str, run_dir: Path,
                resume: str | None, lm: Any, lm_options: dict[str, Any] | None, task_list: list[MemoryTask] | None,
                levels: list[int] | None, parity: str | None, backend: str, backend_obj: Any,
                progress: bool | str, collected: Collected) -> ExperimentRun:
    """The part of :func:`run_experiment` done while holding the run directory's lock."""
    from rlmlab.lm import make_lm

    config_path = run_dir / "config.json"
    if resume:
        before = json.loads(config_path.read_text(encoding="utf-8"))["params"]
        if before != params:
            diff = {k: (before.get(k), v) for k, v in params.items() if before.get(k) != v}
            raise ConfigError(f"resume {run_id}: parameters differ from the first run: {diff}")
    lm_spec = params["lm"] if lm is None or isinstance(lm, str) else None
    if lm_options and lm_spec is None:
        raise ConfigError("lm_options apply to an LM spec string, not to an LM object")
    lm_obj = make_lm(lm_spec, **(lm_options or {})) if lm_spec is not None else lm
    if task_list is None:
        from rlmlab.experiments._suites import load_suite

        # "code,ontology": the first N tasks of each suite, one after the other.
        task_list = [t for name in params["suite"].split(",")
                     for t in load_suite(name.strip(), limit=params["tasks"], levels=levels, parity=parity)]
    test_list = load_test_suite(params["test_suite"], params.get("test_tasks")) if params.get("test_suite") else []
    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(config_path, json.dumps({"experiment": exp.to_dict(), "params": params, "backend": backend,
                                          "conditions": [c.to_dict() for c in conds]}, indent=2))
    env = environment(lm_obj)  # git and library versions: read once, written to env.json and provenance.json
    write_atomic(run_dir / "env.json", json.dumps(env, indent=2))

    def record_provenance() -> None:  # at the start, and again when the run ends however it ends
        write_atomic(run_dir / PROVENANCE_FILE, json.dumps(provenance(
            collected, lm=lm_obj, env=env, command="experiment run", experiment=exp.id, run_id=run_id, params=params,
            backend=backend, conditions=[c.to_dict() for c in conds]), indent=2, default=str))

    record_provenance()
    results = run_dir / RESULTS
    finished = read_results(results)
    # A task is done when all its rollouts' rows are there (an exploring task: or one accepted); rows of a task cut
    # short by a kill are dropped. Rows written before phases existed are the stream's.
    def key(r: dict[str, Any]) -> tuple[str, str, str]:
        return r["condition"], r.get("phase", "stream"), r["task_id"]

    counts = Counter(key(r) for r in finished)
    accepted = {key(r) for r in finished if r.get("accepted", r["success"])}
    need = {c.name: c.runs_per_task for c in conds}
    explores = {c.name for c in conds if c.explore > 1}
    done = {k for k, n in counts.items() if n >= need.get(k[0], 1) or (k[0] in explores and k in accepted)}
    complete = [r for r in finished if key(r) in done]
    if len(complete) != len(finished) or (results.exists() and not results.read_bytes().endswith(b"\n")):
        write_jsonl(results, complete)
    lock = threading.Lock()
    todo = [(c, phase, t) for c in conds for phase, tasks in (("stream", task_list), ("test", test_list))
            for t in tasks if (c.name, phase, t.id) not in done]

    finished_count = [len(done)]

    def append(rows: list[dict[str, Any]]) -> None:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        with lock, results.open("a", encoding="utf-8") as fh:
            with interrupts_deferred():  # Ctrl-C lands before the row or after it and its count, never between
                fh.write(text[: len(text) // 2])
                fh.flush()
                write_point("results:partial")  # a kill here leaves a cut row, which the resume drops
                fh.write(text[len(text) // 2:])
                fh.flush()
                finished_count[0] += 1
            write_point("results:row")
            if progress == "lines":  # a plain line per task: notebooks and logs, where a live bar does not render
                best = next(r for r in rows if r["best"])
                print(f"[{finished_count[0]}/{len(done) + len(todo)}] {exp.id} {best['condition']} {best['task_id']}: "
                      f"{'pass' if best['success'] else 'fail'}, {plural(best['iterations'], 'iteration')}, "
                      f"{best['elapsed_ms'] / 1000:.1f} s", flush=True)

    bar, job = _progress(progress is True, len(todo), f"{exp.id} {run_id}")
    golden = golden_check(run_dir / "trajectories")
    try:
        with noting_sigint():  # a Ctrl-C swallowed in a finalizer is raised again at the next step or LM call
            for cond in conds:
                pending = [t for c, phase, t in todo if c is cond and phase == "stream"]
                _run_condition(exp, cond, pending, lm_obj, params, run_id, run_dir, append,
                               lambda: bar.update(job, advance=1) if bar else None, backend_obj,
                               lm_spec=(lm_spec, lm_options or {}) if lm_spec is not None else None,
                               golden=golden, test=[t for c, phase, t in todo if c is cond and phase == "test"])
    except KeyboardInterrupt as exc:  # the rows so far are on disk; say so, and how to go on (see _interrupt)
        raise record_interruption(run_dir, exp.id, run_id, finished_count[0], len(done) + len(todo), exc) from None
    finally:
        if bar:
            bar.stop()
        record_provenance()
    clear_interruption(run_dir)
    rows = read_results(results)
    summary = summarise(rows)
    for cond in conds:  # what each condition's bank holds after its stream (learning experiments report it)
        if cond.name in summary and (run_dir / f"health.{cond.name}.json").is_file():
            summary[cond.name]["bank"] = bank_figures(run_dir / f"memory.{cond.name}.sqlite")
    write_atomic(run_dir / "summary.json", json.dumps(summary, indent=2))
    return ExperimentRun(run_id, run_dir, summary, len(rows))


def _progress(show: bool, total: int, label: str) -> tuple[Any, Any]:
    if not show:
        return None, None
    from rich.progress import Progress

    bar = Progress()
    bar.start()
    return bar, bar.add_task(label, total=total)


def _open_store(cond: Condition, run_dir: Path) -> MemoryStore:
    store = MemoryStore(run_dir / f"memory.{cond.name}.sqlite")
    for pack in cond.seed_packs:
        import_pack(store, resolve_pack(pack))
    return store


def _loop(cond: Condition, store: MemoryStore, lm: Any, run_id: str, run_dir: Path,
          frozen: bool = False) -> ReasoningBankLoop:
    retrieval = dict(cond.retrieval)
    base = PLAIN_INSTRUCTIONS if cond.tools == "naive" else BASE_INSTRUCTIONS
    builder = ContextBuilder(store, toggles=cond.layers, budgets=cond.budgets, mode=cond.mode,
                             retrieval=retrieval.pop("policy", "mixed"), retrieval_options=retrieval,
                             base_instructions=base)
    extra = cond.plugin_options  # options a config gave as {name, options}: they win over the shorthand keys
    consolidator_options = ({"dup_threshold": cond.dup_threshold, "merge_threshold": cond.merge_threshold}
                            if cond.consolidator == "consolidate" else {}) | extra.get("consolidator", {})
    forgetter_options = ({"max_items": cond.max_bank, "floors": cond.floors} if cond.forgetter == "bounded"
                         else {}) | extra.get("forgetter", {})
    learns = cond.learns and not frozen
    extractor_options = {"max_items": cond.max_items, **extra.get("extractor", {})} if learns else None
    # only when on: ReasoningBankLoop's templates parameter is new, and off is its default
    templates = {"templates": True} if cond.templates else {}
    judge = make_judge(cond.judge, lm)
    # the test phase runs each task once, greedy, under a run id of its own (its task ids may repeat the stream's)
    return ReasoningBankLoop(
        store, lm=lm, builder=builder, executor=_executor(cond, lm, run_dir / "trajectories"),
        extractor=cond.extractor if learns else "none", extractor_options=extractor_options,
        consolidator=cond.consolidator, consolidator_options=consolidator_options,
        forgetter="none" if frozen else cond.forgetter, forgetter_options={} if frozen else forgetter_options,
        rollouts=(cond.samples if frozen else cond.runs_per_task), extraction="best" if frozen else cond.extraction,
        selection=cond.selection, run_id=f"{run_id}-{cond.name}" + ("-test" if frozen else ""),
        judge=judge, reference=judge is not None, until_accepted=cond.explore > 1 and not frozen, frozen=frozen,
        **templates, **({"vote_stop": cond.vote_stop} if cond.vote_stop != "all" else {}))


@dataclass(frozen=True)
class _Unit:
    """One rollout of one task of a condition that does not learn: what a backend worker needs to run it."""

    cond: Condition
    task: MemoryTask
    rollout: int
    lm: Any  # an LM object (threads), or (spec, make_lm options) from which a Ray worker builds its own
    run_id: str
    run_dir: str


def _run_unit(unit: _Unit) -> TaskOutcome:
    """Run one unit with its own store handle (a top-level function, so Ray can ship it)."""
    from rlmlab.lm import make_lm

    lm = make_lm(unit.lm[0], **unit.lm[1]) if isinstance(unit.lm, tuple) else unit.lm
    run_dir = Path(unit.run_dir)
    with MemoryStore(run_dir / f"memory.{unit.cond.name}.sqlite") as store:
        return task_or_error(_loop(unit.cond, store, lm, unit.run_id, run_dir), unit.task, unit.cond, unit.run_id,
                              unit.rollout)


def _merge(parts: list[TaskOutcome], selection: str = "score") -> TaskOutcome:
    """The rollouts of one task run as separate units, as one outcome; best by the loop's rule for
    ``selection`` (score: highest judge score, then first; vote: the majority answer, see ``_vote``)."""
    verdicts = [v for p in parts for v in p.verdicts]
    answers = [a for p in parts for a in p.answers]
    return replace(
        parts[0], trajectory_ids=[t for p in parts for t in p.trajectory_ids], answers=answers,
        verdicts=verdicts, rollouts=[m for p in parts for m in p.rollouts],
        best=select_rollout(selection, answers, [v["score"] for v in verdicts]),
        input_tokens=sum(p.input_tokens for p in parts), output_tokens=sum(p.output_tokens for p in parts),
        iterations=sum(p.iterations for p in parts), elapsed_ms=sum(p.elapsed_ms for p in parts),
        error="; ".join(p.error for p in parts if p.error) or None)


def _run_condition(exp: ExperimentConfig, cond: Condition, pending: list[MemoryTask], lm: Any, params: dict,
                   run_id: str, run_dir: Path, append: Callable[[list[dict]], None], tick: Callable[[], Any],
                   backend: Any, lm_spec: tuple[str, dict[str, Any]] | None,
                   golden: Callable[[MemoryTask, str], bool | None] | None = None,
                   test: list[MemoryTask] = ()) -> None:
    with _open_store(cond, run_dir) as store:
        if cond.layers.L3 and (pending or test):
            _materialise_guides(store, [*pending, *test], cond, lm, run_dir / "trajectories")
        # a learning, exploring or settling condition runs a task's rollouts in order, each seeing the last
        if (cond.learns or cond.explore > 1 or cond.vote_stop == "settled"
                or (backend.name == "threads" and backend.workers == 1)):
            loop = _loop(cond, store, lm, run_id, run_dir)
            for task in pending:
                append(_rows(exp, cond, task, task_or_error(loop, task, cond, run_id), params["lm"], golden))
                tick()
        else:
            unit_lm = lm if backend.ships_lm_objects or lm_spec is None else lm_spec
            units = [_Unit(cond, task, r, unit_lm, run_id, str(run_dir.resolve()))
                     for task in pending for r in range(cond.runs_per_task)]
            parts: dict[str, list[tuple[int, TaskOutcome]]] = defaultdict(list)
            for unit, outcome in backend.map(_run_unit, units):
                parts[unit.task.id].append((unit.rollout, outcome))
                if len(parts[unit.task.id]) == cond.runs_per_task:
                    merged = _merge([o for _, o in sorted(parts.pop(unit.task.id), key=lambda x: x[0])],
                                    cond.selection)
                    append(_rows(exp, cond, unit.task, merged, params["lm"], golden))
                    tick()
        if cond.layers.L2 or cond.learns:
            write_atomic(run_dir / f"health.{cond.name}.json", json.dumps(memory_health(store), indent=2))
        if test:  # after the stream, against the bank it left; the frozen loop writes nothing to it
            frozen = _loop(cond, store, lm, run_id, run_dir, frozen=True)
            for task in test:
                append(_rows(exp, cond, task, frozen.run_task(task), params["lm"], golden, phase="test"))
                tick()
