"""The ContextBuilder: assembles base instructions and the enabled layers (L0-L3), each within its budget.

This is the experiments' control surface: ``toggles`` switch layers, ``budgets`` bound them, ``mode``
picks auto-inject (the system retrieves, packs and injects L2) or tool-mediated (the agent calls
mem_search/mem_get; nothing from L2 is injected). ``build`` returns the text with a report of what was
retrieved, packed and injected per layer, and writes that report to the L4 event log. L4 itself is
never injected.

An injected success strategy that carries a code template (``MemoryItem.template``) is shown with it, as a
"Code:" block under the item, and listed in ``BuiltContext.templates`` for a step grammar that lets the model
copy it with the slots filled from the query.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from rlmlab.errors import ConfigError
from rlmlab.memory._domains import Domain, resolve_domain
from rlmlab.memory._packers import DEFAULT_BUDGETS, Packed, pack_l2, pack_l3, pack_text
from rlmlab.memory._records import MemoryItem
from rlmlab.memory._policies import RETRIEVAL_POLICIES, MixedRetrieval, Retrieved
from rlmlab.memory._store import MemoryStore
from rlmlab.memory._tasks import MemoryTask
from rlmlab.records import Record

__all__ = ["ContextBuilder", "BuiltContext", "LayerReport", "Toggles", "Budgets", "CONTEXT_MODES", "BASE_INSTRUCTIONS",
           "TOOL_MEDIATED_NOTE", "SPEC_BUDGET_MAX", "PLAIN_INSTRUCTIONS", "CODE_HEADER", "code_block"]

CONTEXT_MODES = ("auto_inject", "tool_mediated")

# The spec's ceilings for the fixed layers (L2's budget is configurable without a ceiling).
SPEC_BUDGET_MAX = {"L0": 600, "L1": 1000, "L3": 1000}

BASE_INSTRUCTIONS = (
    "You answer the query by writing Python in a REPL. Large inputs are handles (BlobRef): inspect them with "
    "ctx_stats, ctx_peek, ctx_slice and ctx_find instead of printing them whole. Base every name, number and "
    "line of your answer on tool output, then call SUBMIT(answer=...)."
)
# For runs without the bounded tools (E7's naive condition): the context is a plain string variable.
PLAIN_INSTRUCTIONS = (
    "You answer the query by writing Python in a REPL; the context is a Python string variable. "
    "Base every name, number and line of your answer on what your code finds, then call SUBMIT(answer=...)."
)
TOOL_MEDIATED_NOTE = (
    "Memory: mem_search(query) lists ids and titles of strategies (polarity='success') and guardrails "
    "(polarity='failure') from earlier tasks; mem_get(ids) fetches up to 3 in full. Check it before you start."
)
_L1_ITEMS_K = 5
CODE_HEADER = "  Code:"  # then the template, indented; its {{name:type}} slots are filled from the query
_CODE_INDENT = "    "


@dataclass(frozen=True)
class Toggles(Record):
    """Which layers to inject. All off is E1's baseline (base instructions only)."""

    L0: bool = False
    L1: bool = False
    L2: bool = False
    L3: bool = False

    @classmethod
    def parse(cls, value: Any) -> "Toggles":
        """From Toggles, a dict ``{"L0": true, ...}``, a list of layer names, "all" or "none"."""
        if isinstance(value, Toggles):
            return value
        names = [f.name for f in fields(cls)]
        if value is None or value == "none":
            return cls()
        if value == "all":
            return cls(*([True] * len(names)))
        if isinstance(value, dict):
            bad = [k for k in value if k not in names]
            if bad:
                raise ConfigError(f"toggles: unknown layer {bad[0]!r}; use {', '.join(names)}")
            wrong = [k for k, v in value.items() if not isinstance(v, bool)]
            if wrong:
                raise ConfigError(f"toggles: {wrong[0]}: {value[wrong[0]]!r}; use true or false")
            return cls(**value)
        if isinstance(value, (list, tuple, set, frozenset)):
            bad = [k for k in value if k not in names]
            if bad:
                raise ConfigError(f"toggles: unknown layer {bad[0]!r}; use {', '.join(names)}")
            return cls(**{k: True for k in value})
        raise ConfigError(f"toggles: {value!r}; use a dict of layer -> bool, a list of layers, 'all' or 'none'")

    def enabled(self) -> list[str]:
        return [f.name for f in fields(self) if getattr(self, f.name)]


@dataclass(frozen=True)
class Budgets(Record):
    """Characters per layer. L0, L1 and L3 may be lowered but not raised above the spec (600/1000/1000)."""

    L0: int = DEFAULT_BUDGETS["L0"]
    L1: int = DEFAULT_BUDGETS["L1"]
    L2: int = DEFAULT_BUDGETS["L2"]
    L3: int = DEFAULT_BUDGETS["L3"]

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"budgets: {f.name}: {value!r}; use an integer number of characters >= 0")
            ceiling = SPEC_BUDGET_MAX.get(f.name)
            if ceiling is not None and value > ceiling:
                raise ConfigError(f"budgets: {f.name}: {value} is over the spec's {ceiling} characters for this layer")

    @classmethod
    def parse(cls, value: Any) -> "Budgets":
        if isinstance(value, Budgets):
            return value
        if value is None:
            return cls()
        if not isinstance(value, dict):
            raise ConfigError(f"budgets: {value!r}; use a dict of layer -> characters")
        names = [f.name for f in fields(cls)]
        bad = [k for k in value if k not in names]
        if bad:
            raise ConfigError(f"budgets: unknown layer {bad[0]!r}; use {', '.join(names)}")
        return cls(**value)


@dataclass
class LayerReport(Record):
    """One layer of one build: whether it was enabled and injected, what was retrieved and packed, its size."""

    layer: str
    enabled: bool
    injected: bool = False
    budget: int = 0
    chars: int = 0
    source: str = ""
    retrieved: list[str] = field(default_factory=list)
    packed: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    note: str = ""


@dataclass
class BuiltContext:
    """The assembled instructions (``text``) and the per-layer report (written to L4 as a "context" event)."""

    task_id: str
    query: str
    domain: str | None
    mode: str
    text: str
    layers: list[LayerReport]
    retrieval: dict[str, Any] | None = None
    event_id: int | None = None
    # Code templates shown in the text, in injection order: {"id", "title", "template"} per item.
    templates: list[dict[str, str]] = field(default_factory=list)

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def injected_ids(self) -> list[str]:
        """Memory items packed into the text (L1 items and L2 strategies/guardrails)."""
        return [i for rep in self.layers if rep.injected and rep.layer in ("L1", "L2") for i in rep.packed]

    def report(self) -> dict[str, Any]:
        """Everything but the event id: what the L4 "context" event holds."""
        d = self.to_dict()
        d.pop("event_id")
        return d

    def to_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "query": self.query, "domain": self.domain, "mode": self.mode,
                "chars": self.chars, "text": self.text, "layers": [r.to_dict() for r in self.layers],
                "retrieval": self.retrieval, "templates": [dict(t) for t in self.templates],
                "event_id": self.event_id}

    def __rich__(self) -> Any:
        from rich.table import Table

        table = Table(title=f"context for {self.task_id} ({self.mode}, {self.chars} chars)", title_justify="left")
        for col in ("layer", "on", "injected", "chars/budget", "packed", "dropped", "note"):
            table.add_column(col)
        for r in self.layers:
            table.add_row(r.layer, "yes" if r.enabled else "-", "yes" if r.injected else "-",
                          f"{r.chars}/{r.budget}", str(len(r.packed)), str(len(r.dropped)), r.note)
        return table


class ContextBuilder:
    """Builds the runtime context of a task from the layer cake.

    ``store`` holds L1 items, L2 strategies/guardrails and L3 artifacts (None: only L0 and the ontology's
    L1 constraints are available). ``retrieval`` is a policy name in ``RETRIEVAL_POLICIES`` (with
    ``retrieval_options``) or a policy object. ``artifact_kind`` selects the L3 artifact (the newest of
    the task's domain). ``template_share`` is the largest fraction of the L2 budget that code templates of
    injected strategies may take (a template that does not fit is neither shown nor listed; 0 shows none).
    ``admit`` (``admit(task, item) -> bool``, default None: every item) decides which retrieved success strategies
    may be injected for a task (the task a MemoryTask, or the query string of an ad-hoc build): the first
    ``k_success`` it admits are, in retrieval order, from the policy's ``candidates``. The learning loop admits a
    code template only where a constrained step can copy it (``rlmlab.learning.template_fits``). ``last`` is the
    most recent build.
    """

    def __init__(self, store: MemoryStore | None = None, *, toggles: Any = None, budgets: Any = None,
                 mode: str = "auto_inject", retrieval: Any = "mixed", retrieval_options: dict[str, Any] | None = None,
                 base_instructions: str = BASE_INSTRUCTIONS, artifact_kind: str = "guide",
                 template_share: float = 0.5, admit: Callable[[Any, MemoryItem], bool] | None = None):
        if mode not in CONTEXT_MODES:
            raise ConfigError(f"mode: {mode!r}; use one of {', '.join(CONTEXT_MODES)}")
        if isinstance(template_share, bool) or not isinstance(template_share, (int, float)) \
                or not 0.0 <= template_share <= 1.0:
            raise ConfigError(f"template_share: {template_share!r}; use a fraction from 0 to 1")
        self.template_share = float(template_share)
        self.admit = admit
        self.last: BuiltContext | None = None
        self.store, self.mode = store, mode
        self.toggles, self.budgets = Toggles.parse(toggles), Budgets.parse(budgets)
        self.retrieval = (RETRIEVAL_POLICIES.make(retrieval, **(retrieval_options or {}))
                          if isinstance(retrieval, str) else retrieval)
        self.base_instructions, self.artifact_kind = base_instructions.strip(), artifact_kind

    def build(self, task: MemoryTask | str, domain_id: str | None = None, *, trajectory_id: str | None = None,
              log: bool = True, record: bool = True) -> BuiltContext:
        """Assemble the context for ``task`` (a MemoryTask, or a query string with ``domain_id``).

        Injected memory items are linked to ``trajectory_id`` (usage), so judging the trajectory later
        updates their uses/wins. With ``log`` and a store, the report is appended to L4 as a "context" event.
        With ``record=False`` nothing is written: the caller writes it later with :meth:`record` (the loop does,
        in the transaction that holds the rest of the task's writes).
        """
        if isinstance(task, MemoryTask):
            task_id, query, domain_id = task.id, task.query, domain_id or task.domain
        else:
            task_id, query = "adhoc", str(task)
        domain = resolve_domain(domain_id) if domain_id else None
        parts = [self.base_instructions]
        layers: list[LayerReport] = []
        retrieved: Retrieved | None = None
        templates: list[dict[str, str]] = []
        for layer in ("L0", "L1", "L2", "L3"):
            report = LayerReport(layer, getattr(self.toggles, layer), budget=getattr(self.budgets, layer))
            layers.append(report)
            if not report.enabled:
                continue
            packed: Packed | None
            if layer == "L0":
                packed = self._l0(domain, report)
            elif layer == "L1":
                packed = self._l1(domain, query, report)
            elif layer == "L2":
                packed, retrieved, templates = self._l2(task, query, domain_id, report)
            else:
                packed = self._l3(domain_id, report)
            if packed is not None and packed.text:
                parts.append(packed.text)
                report.injected, report.chars = True, packed.chars
                report.packed, report.dropped = packed.item_ids, packed.dropped
                report.source = report.source or packed.source
        if self.mode == "tool_mediated":
            parts.append(TOOL_MEDIATED_NOTE)
        built = BuiltContext(task_id, query, domain_id, self.mode, "\n\n".join(parts), layers,
                             retrieved.to_dict() if retrieved else None, templates=templates)
        if record:
            self.record(built, trajectory_id, log=log)
        self.last = built
        return built

    def record(self, built: BuiltContext, trajectory_id: str | None = None, *, log: bool = True) -> BuiltContext:
        """Write what :meth:`build` decided: link the injected items to ``trajectory_id`` (usage) and, with
        ``log``, append the report to L4 as a "context" event (its id lands in ``built.event_id``). No-op
        without a store."""
        if self.store is not None:
            used = built.injected_ids
            if used and trajectory_id:
                self.store.record_usage(used, trajectory_id=trajectory_id)
            if log:
                built.event_id = self.store.log_event("context", built.report(), trajectory_id=trajectory_id,
                                                      domain=built.domain)
        return built

    # -- layers ------------------------------------------------------------------------------------------

    def _l0(self, domain: Domain | None, report: LayerReport) -> Packed | None:
        if domain is None:
            report.note = "no domain: no sense card"
            return None
        report.source = f"{domain.kind}:{domain.source}"
        return pack_text("L0", domain.sense_card(report.budget), report.budget, source=report.source)

    def _l1(self, domain: Domain | None, query: str, report: LayerReport) -> Packed | None:
        from rlmlab.ontology import pack_constraints

        items = self._l1_items(query, domain.id if domain else None)
        report.retrieved = [it.id for it in items]
        bullets = [f"{it.title}: {it.description}" for it in items]
        constraints = domain.constraints() if domain else []
        antipatterns = domain.antipatterns() if domain else []
        if not (constraints or antipatterns or bullets):
            report.note = "nothing to pack (no domain constraints and no L1 items)"
            return None
        text = pack_constraints(constraints, [*bullets, *antipatterns], report.budget)
        packed_ids = [it.id for it, b in zip(items, bullets) if " ".join(b.split())[:60] in text]
        report.source = f"{domain.kind}:{domain.source}" if domain else "memory"
        return Packed("L1", text, report.budget, packed_ids, [i for i in report.retrieved if i not in packed_ids],
                      source=report.source)

    def _l1_items(self, query: str, domain_id: str | None) -> list[MemoryItem]:
        if self.store is None:
            return []
        hits = self.store.search(query, _L1_ITEMS_K * 4, layer="L1")
        items = [it for it in self.store.get_many([h.id for h in hits]) if it.domain in (None, domain_id)]
        return items[:_L1_ITEMS_K]

    def _l2(self, task: Any, query: str, domain_id: str | None, report: LayerReport
            ) -> tuple[Packed | None, Retrieved | None, list[dict[str, str]]]:
        if self.mode == "tool_mediated":
            report.note = "tool-mediated: the agent retrieves with mem_search/mem_get"
            return None, None, []
        if self.store is None:
            report.note = "no memory store"
            return None, None, []
        retrieved = self.retrieval.retrieve(self.store, query, domain_id)
        report.retrieved = retrieved.ids
        if not retrieved.ids:
            report.note = "no item matched the query"
            return None, retrieved, []
        k_s = getattr(self.retrieval, "k_success", len(retrieved.successes))
        k_f = getattr(self.retrieval, "k_failure", len(retrieved.failures))
        successes = retrieved.successes[:max(k_s, 0)]
        if self.admit is not None:  # the first k_s candidates it admits, in retrieval order; the rest go unchecked
            successes, passed = [], []
            for it in retrieved.successes:
                if len(successes) >= k_s:
                    break
                (successes if self.admit(task, it) else passed).append(it)
            if passed:
                report.note = f"passed over {len(passed)} that do not fit the task: {', '.join(i.id for i in passed)}"
        packed, shown = self._pack_l2(successes, retrieved.failures, report.budget, k_s, k_f)
        return packed, retrieved, shown

    def _pack_l2(self, successes: list[MemoryItem], failures: list[MemoryItem], budget: int, k_s: int, k_f: int
                 ) -> tuple[Packed, list[dict[str, str]]]:
        """pack_l2 with each success strategy's code template as a block under the item.

        Room for the blocks (at most ``template_share`` of the budget, taken in retrieval order) is set aside
        first and the items are packed in the rest, so the text stays within the budget. Only success
        strategies show templates: a guardrail's code is what not to do.
        """
        room = int(budget * self.template_share)
        blocks: dict[str, str] = {}
        for it in successes:
            if it.template is None:
                continue
            block = code_block(it.template)
            if len(block) + 1 <= room:
                blocks[it.id] = block
                room -= len(block) + 1
        reserved = sum(len(b) + 1 for b in blocks.values())
        packed = pack_l2(successes, failures, budget - reserved, k_success=k_s, k_failure=k_f)
        if not blocks:
            return packed, []
        lines = packed.text.split("\n")
        heads = [i for i, line in enumerate(lines) if line.startswith("- ")]  # one per packed item, in order
        out: list[str] = []
        shown: list[str] = []
        owner = dict(zip(heads, packed.item_ids))
        current: str | None = None
        for i, line in enumerate(lines):
            if i in owner or not line.startswith("  "):  # the previous item's lines end here
                if current in blocks:
                    out.append(blocks[current])
                    shown.append(current)
                current = owner.get(i)
            out.append(line)
        if current in blocks:
            out.append(blocks[current])
            shown.append(current)
        by_id = {it.id: it for it in successes}
        templates = [{"id": i, "title": by_id[i].title, "template": by_id[i].template or ""} for i in shown]
        return Packed("L2", "\n".join(out), budget, packed.item_ids, packed.dropped, packed.clipped,
                      source=packed.source), templates

    def _l3(self, domain_id: str | None, report: LayerReport) -> Packed | None:
        if self.store is None:
            report.note = "no memory store"
            return None
        found = self.store.artifacts(domain=domain_id, kind=self.artifact_kind) if domain_id else []
        if not found:
            report.note = f"no {self.artifact_kind} artifact for domain {domain_id!r}"
            return None
        report.retrieved = [found[0].id]
        return pack_l3(found[0], report.budget)

    def __repr__(self) -> str:
        return (f"ContextBuilder(mode={self.mode!r}, layers={self.toggles.enabled()}, budgets={self.budgets.to_dict()}, "
                f"retrieval={self.retrieval!r})")


def code_block(template: str) -> str:
    """How a template is shown under its item: :data:`CODE_HEADER`, then the code indented by four spaces."""
    return "\n".join([CODE_HEADER, *(_CODE_INDENT + line if line else "" for line in template.split("\n"))])


# MixedRetrieval is the default policy; imported here so a reader finds it from the builder.
_ = MixedRetrieval
