"""Experiment configs (``configs/experiments/E1.yaml`` ... ``E13.yaml``): validated on load.

A config has a ``base`` condition and optionally a list of ``conditions`` that override it (E7: naive vs
handle tools; E8: auto-inject vs tool-mediated). A condition says which layers are on and their budgets,
the integration mode, the tools, the executor, the retrieval policy, the seed packs, the learning
policies (extraction, consolidation, forgetting), the rollouts and how the L3 guide is materialised, the
decoding (constrained to the step grammar by default, or free), code templates from L2 items, and voted samples.
An unknown key or a value of the wrong type is a ConfigError naming the file and the key.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from rlmlab._files import read_yaml
from rlmlab._paths import PROJECT_ROOT
from rlmlab.errors import ConfigError
from rlmlab.memory import Budgets, Toggles

__all__ = ["ExperimentConfig", "Condition", "load_experiment", "experiment_path", "EXPERIMENTS_DIR", "resolve_pack",
           "EXPERIMENT_SCHEMA", "list_experiments"]

EXPERIMENTS_DIR = PROJECT_ROOT / "configs" / "experiments"


def resolve_pack(path: str | Path) -> Path:
    """A seed pack path from a config: absolute, or relative to the project root (where ``data/`` is)."""
    p = Path(path)
    return p if p.is_absolute() else PROJECT_ROOT / p

_LAYER_BOOLS = {"type": "object", "additionalProperties": False,
                "properties": {k: {"type": "boolean"} for k in ("L0", "L1", "L2", "L3")}}
_LAYER_INTS = {"type": "object", "additionalProperties": False,
               "properties": {k: {"type": "integer", "minimum": 0} for k in ("L0", "L1", "L2", "L3")}}
# A plug-in is named by its registry name, or as {name, options}; names and options are checked against the
# registries when the config loads (_plugins below), so a new plug-in needs no change to this schema.
_PLUGIN = {"anyOf": [{"type": "string", "minLength": 1}, {
    "type": "object", "additionalProperties": False, "required": ["name"],
    "properties": {"name": {"type": "string", "minLength": 1}, "options": {"type": "object"}}}]}
_PLUGIN_NAME = {"type": "string", "minLength": 1}
_CONDITION_PROPS: dict[str, Any] = {
    "layers": _LAYER_BOOLS,
    "budgets": _LAYER_INTS,
    "mode": {"enum": ["auto_inject", "tool_mediated"]},
    "tools": {"enum": ["handle", "naive"]},
    "executor": _PLUGIN,
    "max_iters": {"type": "integer", "minimum": 1, "maximum": 50},
    "retrieval": {"type": "object", "additionalProperties": False, "properties": {
        "policy": _PLUGIN_NAME,
        "k_success": {"type": "integer", "minimum": 0, "maximum": 20},
        "k_failure": {"type": "integer", "minimum": 0, "maximum": 20},
        "candidates": {"type": "integer", "minimum": 0, "maximum": 20},
        "scope": {"enum": ["domain", "domain_only", "any"]},
        "retriever": _PLUGIN_NAME}},
    "seed_packs": {"type": "array", "items": {"type": "string", "minLength": 1}},
    "l3_guide": {"enum": ["brief", "explore"]},
    "learning": {"type": "object", "additionalProperties": False, "properties": {
        "extractor": _PLUGIN,  # or "none": no learning
        "max_items": {"type": "integer", "minimum": 1, "maximum": 3},
        "consolidator": _PLUGIN,
        "dup_threshold": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "merge_threshold": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "forgetter": _PLUGIN,
        "max_bank": {"type": "integer", "minimum": 1},
        "floors": {"type": "object", "additionalProperties": False, "properties": {
            "success": {"type": "integer", "minimum": 0}, "failure": {"type": "integer", "minimum": 0}}}}},
    "rollouts": {"type": "integer", "minimum": 1, "maximum": 16},
    "extraction": {"enum": ["best", "contrastive"]},
    "decoding": {"enum": ["free", "grammar"]},
    "templates": {"type": "boolean"},  # YAML on/off load as booleans
    "samples": {"type": "integer", "minimum": 1, "maximum": 16},
    "temperature": {"type": "number", "exclusiveMinimum": 0, "maximum": 2},
    "vote_stop": {"enum": ["all", "settled"]},  # settled: stop sampling once the rest cannot change the majority
    # who decides success for learning: "reference" (each task's own check, the answer key), a JUDGES name, or one
    # per suite ({code: oracle, ontology: constraints, arith: vote}); reports always score by the reference too
    "judge": {"anyOf": [_PLUGIN_NAME, {"type": "object", "minProperties": 1,
                                       "additionalProperties": _PLUGIN_NAME}]},
    "explore": {"type": "integer", "minimum": 1, "maximum": 16},
    # where step code runs (rlmlab.sandbox): confined (default on Linux), pyodide, none; required / best_effort are
    # confined with that policy
    "sandbox": {"enum": ["confined", "pyodide", "none", "required", "best_effort"]},
    "sandbox_policy": {"enum": ["best_effort", "required"]},
    "resample": {"type": "boolean"},  # judged rollouts after the first sampled at temperature (off: all alike)  # samples per task, stopping at the first accepted
}
EXPERIMENT_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["id", "title", "base"],
    "properties": {
        "id": {"type": "string", "pattern": r"^E\d+$"},
        "title": {"type": "string", "minLength": 1},
        "description": {"type": "string"},
        "phase": {"type": "integer", "minimum": 0},
        "base": {"type": "object", "additionalProperties": False, "properties": _CONDITION_PROPS},
        "conditions": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["name"],
            "properties": {"name": {"type": "string", "pattern": r"^[a-z][a-z0-9_]*$"}, **_CONDITION_PROPS}}},
        "defaults": {"type": "object", "additionalProperties": False, "properties": {
            "suite": {"type": "string", "minLength": 1},  # a suite name, several (code,ontology) or a task file
            "test_suite": {"type": "string", "minLength": 1},  # a task file run with the bank frozen after the stream
            "tasks": {"type": "integer", "minimum": 1},
            "lm": {"type": "string", "minLength": 1},
            "workers": {"type": "integer", "minimum": 1, "maximum": 32}}},
    },
}


@dataclass(frozen=True)
class Condition:
    """One arm of an experiment: everything the runner needs to build its context, tools and memory loop."""

    name: str
    layers: Toggles = field(default_factory=Toggles)
    budgets: Budgets = field(default_factory=Budgets)
    mode: str = "auto_inject"
    tools: str = "handle"
    executor: str = "rlm"
    max_iters: int = 6
    retrieval: dict[str, Any] = field(default_factory=lambda: {"policy": "mixed"})
    seed_packs: tuple[str, ...] = ()
    l3_guide: str = "brief"
    extractor: str = "none"
    max_items: int = 3
    consolidator: str = "append"
    dup_threshold: float = 0.8
    merge_threshold: float = 0.5
    forgetter: str = "none"
    max_bank: int = 100
    floors: dict[str, int] = field(default_factory=lambda: {"success": 2, "failure": 2})
    rollouts: int = 1
    extraction: str = "best"
    decoding: str = "grammar"  # every agent step constrained to the step grammar; "free" to turn it off
    templates: bool = False  # the injected L2 items' code templates join the grammar (needs L2)
    samples: int = 1  # > 1: that many sampled rollouts per task, the answer by majority vote (no judge)
    temperature: float = 0.7  # sampling temperature of voted samples, explored samples and rollouts after the first
    # samples > 1: "all" runs every sample; "settled" stops once the samples left cannot change the majority (the
    # same answer as "all", fewer rollouts; the first samples' first steps share a batch, the rest another)
    vote_stop: str = "all"
    judge: Any = "reference"  # "reference", a JUDGES name, or {suite: name}: who decides success for learning
    explore: int = 1  # > 1: up to that many runs per task (the first greedy, then sampled), stop at the first accepted
    resample: bool = False  # rollouts > 1: rollouts after the first sampled at temperature, seeds 2..N (MaTTS)
    sandbox: str | None = None  # None: the executor's default (confined on Linux); see rlmlab.sandbox
    sandbox_policy: str | None = None  # None: best_effort
    plugin_options: dict[str, dict[str, Any]] = field(default_factory=dict)  # {"extractor": {...}, ...} from config

    @property
    def learns(self) -> bool:
        """True when tasks write memory (so they must run in order, one after another)."""
        return self.extractor != "none"

    @property
    def runs_per_task(self) -> int:
        """Agent runs per task at most: ``samples`` when voting, ``explore`` when exploring, else ``rollouts``
        (the three never combine)."""
        return self.samples if self.samples > 1 else self.explore if self.explore > 1 else self.rollouts

    @property
    def selection(self) -> str:
        """How a task's rollout is chosen: "vote" (majority over answers) for samples, else "score" (judge)."""
        return "vote" if self.samples > 1 else "score"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["layers"], d["budgets"] = self.layers.to_dict(), self.budgets.to_dict()
        d["seed_packs"] = list(self.seed_packs)
        d["judge"] = dict(self.judge) if isinstance(self.judge, dict) else self.judge
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Condition":
        """The condition :meth:`to_dict` wrote (a run's config.json); keys this version does not know are
        ignored."""
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in d.items() if k in names}
        values["layers"] = Toggles.parse(d.get("layers"))
        values["budgets"] = Budgets.parse(d.get("budgets"))
        values["seed_packs"] = tuple(d.get("seed_packs") or ())
        return cls(**values)


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated experiment: its id, title, conditions and default run parameters."""

    id: str
    title: str
    description: str
    phase: int
    conditions: tuple[Condition, ...]
    defaults: dict[str, Any]
    path: str

    def condition(self, name: str) -> Condition:
        for c in self.conditions:
            if c.name == name:
                return c
        raise ConfigError(f"{self.path}: no condition {name!r}; it has {', '.join(c.name for c in self.conditions)}")

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "description": self.description, "phase": self.phase,
                "conditions": [c.to_dict() for c in self.conditions], "defaults": dict(self.defaults),
                "path": self.path}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ExperimentConfig":
        """The experiment as a run's config.json recorded it (not as its YAML file reads today)."""
        return cls(d["id"], d["title"], d.get("description", ""), int(d.get("phase", 0)),
                   tuple(Condition.from_dict(c) for c in d["conditions"]), dict(d.get("defaults") or {}),
                   d.get("path", ""))


def _condition(name: str, values: dict[str, Any], where: str) -> Condition:
    values = copy.deepcopy(values)
    learning = values.pop("learning", {}) or {}
    try:
        layers = Toggles.parse(values.pop("layers", None))
        budgets = Budgets.parse(values.pop("budgets", None))
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    floors = learning.pop("floors", None)
    if values.get("templates") and "retrieval" not in values:  # one template, found by shape and words (issue 25)
        values["retrieval"] = {"policy": "templates"}
    plugin_options = _plugins(values, learning, where)
    if "temperature" in values:  # YAML 1 is an int
        values["temperature"] = float(values["temperature"])
    cond = Condition(name=name, layers=layers, budgets=budgets, seed_packs=tuple(values.pop("seed_packs", ())),
                     **values, **learning, **({"floors": {"success": 2, "failure": 2, **floors}} if floors else {}),
                     plugin_options=plugin_options)
    if cond.merge_threshold >= cond.dup_threshold:
        raise ConfigError(f"{where}: learning: merge_threshold {cond.merge_threshold} must be below dup_threshold "
                          f"{cond.dup_threshold}")
    if cond.forgetter == "bounded" and sum(cond.floors.values()) > cond.max_bank:
        raise ConfigError(f"{where}: learning: floors {cond.floors} add up to more than max_bank {cond.max_bank}")
    for pack in cond.seed_packs:
        if not resolve_pack(pack).is_file():
            raise ConfigError(f"{where}: seed_packs: {pack} not found (relative paths start at {PROJECT_ROOT})")
    if cond.samples > 1 and cond.rollouts > 1:
        raise ConfigError(f"{where}: samples: {cond.samples} cannot be combined with rollouts {cond.rollouts}; "
                          "a task runs either judged rollouts or voted samples")
    if cond.vote_stop == "settled" and cond.samples < 2:
        raise ConfigError(f"{where}: vote_stop: settled stops a vote early; it needs samples > 1 "
                          f"(samples: {cond.samples})")
    if cond.explore > 1 and (cond.samples > 1 or cond.rollouts > 1):
        raise ConfigError(f"{where}: explore: {cond.explore} cannot be combined with samples or rollouts; "
                          "exploring is its own way to run a task several times")
    _check_judge(cond.judge, where)
    if cond.runs_per_task == 1 and cond.extraction == "contrastive":
        raise ConfigError(f"{where}: extraction: contrastive needs rollouts > 1")
    if cond.retrieval.get("policy") in ("success_only", "templates") and "k_failure" in cond.retrieval:
        raise ConfigError(f"{where}: retrieval: k_failure does not apply to policy {cond.retrieval['policy']} (it "
                          "retrieves no failures); leave it out")
    if cond.templates and not cond.layers.L2:
        raise ConfigError(f"{where}: templates: on needs the L2 layer (templates arrive with L2 memory items); "
                          "add layers: {L2: true}")
    return cond


def _check_judge(judge: Any, where: str) -> None:
    from rlmlab.learning import JUDGES

    for name in (judge.values() if isinstance(judge, dict) else [judge]):
        if name != "reference" and name not in JUDGES:
            raise ConfigError(f"{where}: judge: unknown {name!r}; use reference or one of {', '.join(JUDGES.names())}")


def _registries() -> dict[str, Any]:
    from rlmlab.executors import EXECUTORS
    from rlmlab.learning import CONSOLIDATORS, EXTRACTORS, FORGETTERS

    return {"executor": EXECUTORS, "extractor": EXTRACTORS, "consolidator": CONSOLIDATORS, "forgetter": FORGETTERS}


def _plugins(values: dict[str, Any], learning: dict[str, Any], where: str) -> dict[str, dict[str, Any]]:
    """Turn each plug-in entry (a name or {name, options}) into its name in place, check the name and the options
    against the plug-in's registry, and return the options by key."""
    from rlmlab.memory import RETRIEVAL_POLICIES, RETRIEVERS

    out: dict[str, dict[str, Any]] = {}
    for key, registry in _registries().items():
        holder = values if key == "executor" else learning
        if key not in holder:
            continue
        entry = holder[key]
        name, options = (entry["name"], dict(entry.get("options") or {})) if isinstance(entry, dict) else (entry, {})
        holder[key] = name
        if key == "extractor" and name == "none":
            if options:
                raise ConfigError(f"{where}: extractor: none takes no options")
            continue
        try:
            registry.factory(name)
            if options:
                registry.check(name, options)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {key}: {exc}") from None
        if options:
            out[key] = options
    retrieval = values.get("retrieval") or {}
    for key, registry in (("policy", RETRIEVAL_POLICIES), ("retriever", RETRIEVERS)):
        if key in retrieval and retrieval[key] not in registry:
            raise ConfigError(f"{where}: retrieval: {key}: unknown {retrieval[key]!r}; registered: "
                              f"{', '.join(registry.names())}")
    return out


def experiment_path(name_or_path: str | Path) -> Path:
    """``E7`` -> configs/experiments/E7.yaml; a path is returned as is."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        return p
    return EXPERIMENTS_DIR / f"{name_or_path}.yaml"


def list_experiments() -> list[str]:
    """Experiment ids with a config file, in numeric order."""
    return sorted((p.stem for p in EXPERIMENTS_DIR.glob("E*.yaml")), key=lambda s: int(s[1:]) if s[1:].isdigit() else 0)


def load_experiment(name_or_path: str | Path) -> ExperimentConfig:
    """Load and validate an experiment config by id (``E7``) or path."""
    import jsonschema

    path = experiment_path(name_or_path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such experiment config; known: {', '.join(list_experiments())}")
    doc = read_yaml(path)
    errors = sorted(jsonschema.Draft202012Validator(EXPERIMENT_SCHEMA).iter_errors(doc),
                    key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        err = errors[0]
        where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ConfigError(f"{path}: {where}: {err.message}")
    if doc["id"] != path.stem and path.parent == EXPERIMENTS_DIR:
        raise ConfigError(f"{path}: id: {doc['id']!r} does not match the file name {path.stem!r}")
    base = doc["base"]
    raw = doc.get("conditions") or [{"name": "main"}]
    names = [c["name"] for c in raw]
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}: conditions: names repeat: {names}")
    conditions = []
    for i, over in enumerate(raw):
        merged = copy.deepcopy(base)
        for key, value in over.items():
            if key == "name":
                continue
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
        conditions.append(_condition(over["name"], merged, f"{path}: conditions.{i}" if doc.get("conditions") else
                                     f"{path}: base"))
    defaults = {"suite": "code", "tasks": 5, "lm": "local", "workers": 1, **(doc.get("defaults") or {})}
    return ExperimentConfig(doc["id"], doc["title"], doc.get("description", "").strip(), int(doc.get("phase", 0)),
                            tuple(conditions), defaults, str(path))
