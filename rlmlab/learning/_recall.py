"""Recall@1 of the right code template: does retrieval put a template that solves the task first?

A template is *right* for a task when, filled from the task's query as the step grammar could fill it (each slot
one of :func:`rlmlab.memory.query_slots`'s candidates of its type), and run with the real tools on the task's
context, it gives an answer the task's reference judge accepts. That needs no hand labels, so any bank (the
hand pack, a learned one) and any task file (the suites, a generated stream) can be measured. Tasks no template
of the bank solves are counted apart (``uncovered``): retrieval cannot be blamed for them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlmlab.memory import (
    RETRIEVAL_POLICIES, MemoryItem, MemoryStore, MemoryTask, TemplateError, fill_template, query_slots, template_slots,
)
from rlmlab.records import Record

__all__ = ["run_template", "template_fills", "solves", "right_templates", "template_recall", "RecallReport",
           "task_kind", "template_fits", "BEFORE_RETRIEVAL", "AFTER_RETRIEVAL"]

# What E13 retrieved templates with (words only, two strategies), and the default since retrieval by shape.
BEFORE_RETRIEVAL = {"policy": "success_only", "k_success": 2, "retriever": "fts5"}
AFTER_RETRIEVAL = {"policy": "templates"}
MAX_FILLS = 32  # slot-value combinations tried per template and task (the grammar allows each of them)
_TOKEN = re.compile(r"-?\d+(\.\d+)?|[A-Za-z_]\w*")


class _Submitted(Exception):
    pass


def run_template(template: str, values: dict[str, Any], task: MemoryTask) -> str | None:
    """The answer a template SUBMITs, filled with ``values`` and run on the task's context with the real tools
    (each call through ``Workspace.call``; the task's ontology attached), as a str; None when it raises or
    does not SUBMIT. The template runs in this process: give it only templates that passed ``check_template``."""
    from rlmlab.tools import TOOLS, Workspace, attach_ontology

    code = fill_template(template, values)
    ws = Workspace()
    if task.meta.get("ontology"):
        attach_ontology(ws, task.meta["ontology"])
    namespace: dict[str, Any] = {spec.name: ws.bound(spec.name) for spec in TOOLS}
    namespace["context"] = ws.store.put(task.context or "")
    got: dict[str, Any] = {}

    def submit(**fields: Any) -> None:
        got.update(fields)
        raise _Submitted

    namespace["SUBMIT"] = submit
    try:
        exec(compile(code, "<template>", "exec"), namespace)
    except _Submitted:
        pass
    except Exception:  # a template that does not fit the task (no match, wrong tool): no answer
        return None
    return None if "answer" not in got else str(got["answer"])


def template_fills(template: str, task: MemoryTask, limit: int = MAX_FILLS) -> list[dict[str, str]]:
    """Slot values the step grammar could write for ``task`` (its rules: a value outside a string literal is a
    number or an identifier; slots that are not numbers take different values), at most ``limit``, in order."""
    slots = template_slots(template)
    candidates = query_slots(task.query, task.context)
    names: dict[str, list[str]] = {}
    for s in slots:
        inside = template[:s.offset].rsplit("\n", 1)[-1].count('"') % 2 == 1
        values = [v for v in candidates.get(s.type, []) if inside or _TOKEN.fullmatch(v)]
        names[s.name] = [v for v in names.get(s.name, values) if v in values]
    kinds = {s.name: s.type for s in slots}
    out = []
    for combo in itertools.product(*names.values()):
        picked = dict(zip(names, combo))
        words = [v for n, v in picked.items() if kinds[n] != "number"]
        if len(set(words)) == len(words):
            out.append(picked)
            if len(out) >= limit:
                break
    return out


_SELECT = re.compile(r"[\"']\s*SELECT\b", re.I)


def template_fits(task: MemoryTask | str, item: MemoryItem) -> bool:
    """Whether a retrieved strategy may be the one a constrained first step copies for ``task`` (the
    ``ContextBuilder``'s ``admit``): an item without a template always; a template when it can compute from what the
    task gives (a SPARQL template an ontology, a code tool a context that is not one, a template without tools no
    context at all) and, over Rust, its slots fill from the query (:func:`template_fills`) and it fits the
    query's closed vocabularies (``rlmlab.executors.fits_query``: an unwrap count is not copied onto an unsafe-block
    count). Elsewhere nothing says which of two SPARQL or arithmetic templates is the wrong one: the best ranked of
    the task's kind is taken, filled or not, as before. An ad-hoc query (a str) has no context to check: True."""
    from rlmlab.executors import context_kind, fits_query

    if not item.template:
        return True
    if isinstance(task, str):
        return True
    kind = context_kind(task.context, task.meta.get("ontology"))
    # a template over code reads Rust (its regexes and queries name Rust items): not a plain document's template
    if kind not in {"ontology": ("ontology",), "code": ("rust",), None: ("none",)}[_needs(item.template)]:
        return False
    if kind == "ontology":  # some filling's query is one the question's closed SPARQL space holds
        return _fits_space(item.template, task)
    if kind != "rust":  # no closed vocabulary to check against: the first candidate of the task's kind, as before
        return True
    return bool(template_fills(item.template, task, 1)) and fits_query(
        item.template, task.query, query_slots(task.query, task.context).get("ident") or [])


def _fits_space(template: str, task: MemoryTask) -> bool:
    """Whether a filling of a SPARQL template (up to :data:`MAX_FILLS`) is a query in the task's closed space
    (``rlmlab.executors.sparql_fit``); True without llguidance, which checks it."""
    from rlmlab.executors import sparql_fit

    fit = sparql_fit(task.query)
    if fit is None:
        return True
    filled = []
    for values in template_fills(template, task):
        try:
            filled.append(fill_template(template, values))
        except TemplateError:
            continue
    return bool(fit(filled))


def _needs(template: str) -> str | None:
    """What a template computes from: "ontology" (it runs SPARQL), "code" (a code tool reads the context) or None
    (no tool: arithmetic on the query's numbers). A learnt SPARQL template may submit its SELECT without running
    it (the minimal code of a trajectory leaves out a ``sparql_query`` call the answer does not read): a string
    that is a SELECT makes it one that needs an ontology too."""
    if "sparql_query(" in template or _SELECT.search(template):
        return "ontology"
    if any(f"{tool}(" in template for tool in ("ctx_find", "ast_query", "ctx_slice")):
        return "code"
    return None


def _applies(template: str, task: MemoryTask) -> bool:
    """Whether a template can compute from what the task gives: SPARQL needs an ontology, the code tools a source
    and a template without tools (arithmetic) neither."""
    needs = _needs(template)
    if needs == "ontology":
        return bool(task.meta.get("ontology"))
    if needs == "code":
        return bool(task.meta.get("source_path"))
    return not task.meta.get("ontology") and not task.meta.get("source_path")


def solves(template: str, task: MemoryTask, judge: Any, limit: int = MAX_FILLS) -> dict[str, str] | None:
    """The first fill (slot values) with which the template's answer passes ``judge`` on ``task``, or None."""
    from rlmlab.executors import Trajectory

    if not _applies(template, task):
        return None
    for values in template_fills(template, task, limit):
        answer = run_template(template, values, task)
        if answer is None:
            continue
        traj = Trajectory(run_id="template-recall", query=task.query, lm="template", context_mode="handle",
                          answer=answer, submitted=True)
        if judge.judge(task, traj).success:
            return values
    return None


def right_templates(task: MemoryTask, items: Iterable[MemoryItem], judge: Any = None) -> list[str]:
    """Ids of the items whose template solves ``task`` (:func:`solves`) under ``judge`` (default: the task's
    reference judge, ``judge_for(task)``)."""
    from rlmlab.learning._judge import judge_for

    judge = judge or judge_for(task)
    return [it.id for it in items if it.template and solves(it.template, task, judge) is not None]


def task_kind(task: MemoryTask) -> str:
    """A task's kind for per-kind figures (experiment results rows, the recall report): ``meta["kind"]`` when the
    task file gives one (generated streams), else ``<suite>-l<level>`` ("task-l0" when neither is known)."""
    kind = task.meta.get("kind")
    return str(kind) if kind else f"{task.meta.get('suite') or 'task'}-l{task.meta.get('level') or 0}"


@dataclass
class RecallReport(Record):
    """Recall@1 per kind: ``hits`` tasks whose first retrieved template is right, of ``covered`` tasks that some
    template of the bank solves; ``uncovered`` tasks no template solves. ``rows`` has one dict per task."""

    retrieval: dict[str, Any]
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)

    def recall(self, kind: str | None = None) -> float | None:
        """hits / covered over one kind or all; None when nothing is covered."""
        parts = [self.kinds[kind]] if kind else list(self.kinds.values())
        covered = sum(p["covered"] for p in parts)
        return None if not covered else sum(p["hits"] for p in parts) / covered


def template_recall(tasks: Sequence[MemoryTask], store: MemoryStore, *, retrieval: dict[str, Any] | None = None,
                    right: dict[str, list[str]] | None = None,
                    kind_of: Callable[[MemoryTask], str] = task_kind,
                    admit: Callable[[MemoryTask, MemoryItem], bool] | None = template_fits) -> RecallReport:
    """Recall@1 of the right template (see the module docstring) for ``tasks`` over the bank in ``store``.

    ``retrieval`` is ``{"policy": name, **options}`` of ``RETRIEVAL_POLICIES`` (default :data:`AFTER_RETRIEVAL`);
    the first success item with a template that the policy returns is the task's template. ``right`` maps task
    id to the right item ids when already computed (:func:`right_templates` runs every template, the slow part),
    so two policies can be compared on one computation. ``admit`` (default :func:`template_fits`, as the learning
    loop's builder) passes over templates a step could not copy for the task; None takes the first retrieved.
    """
    retrieval = dict(retrieval or AFTER_RETRIEVAL)
    options = dict(retrieval)
    policy = RETRIEVAL_POLICIES.make(options.pop("policy"), **options)
    templated = [it for it in store.items() if it.template]
    report = RecallReport(retrieval)
    for task in tasks:
        ids = right[task.id] if right is not None and task.id in right else right_templates(task, templated)
        found = policy.retrieve(store, task.query, task.domain)
        first = next((it for it in found.successes if it.template and (admit is None or admit(task, it))), None)
        kind = kind_of(task)
        counts = report.kinds.setdefault(kind, {"tasks": 0, "covered": 0, "hits": 0, "uncovered": 0})
        counts["tasks"] += 1
        hit = bool(ids) and first is not None and first.id in ids
        counts["covered" if ids else "uncovered"] += 1
        counts["hits"] += hit
        report.rows.append({"task_id": task.id, "kind": kind, "right": ids, "first": first.id if first else None,
                            "first_title": first.title if first else None, "hit": hit})
    return report
