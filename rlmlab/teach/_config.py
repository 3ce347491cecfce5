"""``configs/run.yaml``: the shape of seed 002's run config, plus rlmlab's documented extras.

Input paths (``dataset``, ``stop_rules``, ``history``) that are relative and not found from the working
directory are looked up beside the config file, then under the project root (as experiment seed packs are), so a
run works from any directory. ``traces_out`` is an output and stays relative to the working directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rlmlab._paths import PROJECT_ROOT
from rlmlab._files import read_yaml
from rlmlab.errors import ConfigError
from rlmlab.teach._learner import DECODINGS
from rlmlab.teach._loop import TEACHER_MODES
from rlmlab.records import Record

__all__ = ["RunConfig", "load_run_config", "resolve_input_path", "DEFAULT_RUN_CONFIG", "RUN_CONFIG_SCHEMA"]

DEFAULT_RUN_CONFIG = PROJECT_ROOT / "configs" / "run.yaml"



def resolve_input_path(path: str | Path, config_dir: str | Path | None = None) -> str:
    """Where a relative input path from a run config is: unchanged if absolute or found from the working
    directory (command-line paths keep their meaning), else the first that exists of ``config_dir/path`` and
    ``PROJECT_ROOT/path``; unchanged if neither exists, so the loader's error names the path as written.
    """
    p = Path(path)
    if p.is_absolute() or p.exists():
        return str(path)
    for base in ([Path(config_dir)] if config_dir is not None else []) + [PROJECT_ROOT]:
        if (base / p).exists():
            return str((base / p).resolve())
    return str(path)


_NUM = {"type": "number", "minimum": 0}
RUN_CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "runtime": {"type": "object", "additionalProperties": False, "properties": {
            "demo_mode": {"type": "boolean"}, "max_turns": {"type": "integer", "minimum": 1},
            "parallel_learners_k": {"type": "integer", "minimum": 1},
            "modes": {"type": "array", "minItems": 1, "items": {"enum": list(TEACHER_MODES)}},
            "limit": {"type": ["integer", "null"], "minimum": 1}, "turing": {"type": "boolean"}}},
        "models": {"type": "object", "additionalProperties": False, "properties": {
            "provider": {"type": "string", "minLength": 1}, "decoding": {"enum": list(DECODINGS)},
            "temperature": {"type": "object", "additionalProperties": _NUM}}},
        "demo": {"type": "object", "additionalProperties": False, "properties": {
            "error_rate": {"type": "number", "minimum": 0, "maximum": 1}, "seed": {"type": "integer"}}},
        "paths": {"type": "object", "additionalProperties": False, "properties": {
            "dataset": {"type": "string"}, "traces_out": {"type": "string"}, "stop_rules": {"type": "string"},
            "history": {"type": "array", "items": {"type": "string"}}}},
    },
}


@dataclass
class RunConfig(Record):
    demo_mode: bool = True
    max_turns: int = 3
    parallel_learners_k: int = 1
    modes: tuple[str, ...] = TEACHER_MODES
    limit: int | None = None
    turing: bool = False
    provider: str = "demo"
    decoding: str = "code"  # LMLearner's decoding (DECODINGS); an LM that cannot follow a grammar runs free
    temperature: dict[str, float] = field(
        default_factory=lambda: {"learner_math": 0.3, "learner_facts": 0.6, "teacher": 0.0})
    error_rate: float = 0.1
    seed: int = 0
    dataset: str = "data/math20.csv"
    traces_out: str = "runs/teach/traces.json"
    stop_rules: str = "configs/stop_rules.yaml"
    history: tuple[str, ...] = ()

    @property
    def effective_provider(self) -> str:
        """``demo`` when demo mode is on (also forced by ``DEMO_MODE=1``, as in the spec), else ``provider``."""
        return "demo" if self.demo_mode or os.environ.get("DEMO_MODE") == "1" else self.provider

    @property
    def learner_temperature(self) -> float:
        return float(self.temperature.get("learner_math", 0.3))

    def with_overrides(self, **overrides: Any) -> "RunConfig":
        """Command-line overrides (None means "not given"); ``provider=`` also sets demo_mode accordingly."""
        given = {k: v for k, v in overrides.items() if v is not None}
        if "provider" in given:
            given["demo_mode"] = given["provider"] == "demo"
        if given.get("decoding", DECODINGS[0]) not in DECODINGS:
            raise ConfigError(f"decoding {given['decoding']!r}: expected one of {', '.join(DECODINGS)}")
        if "modes" in given:
            given["modes"] = tuple(given["modes"])
            bad = [m for m in given["modes"] if m not in TEACHER_MODES]
            if bad:
                raise ConfigError(f"mode {bad[0]!r}: expected one of {', '.join(TEACHER_MODES)}")
        return replace(self, **given)

    def with_paths_resolved(self, config_dir: str | Path | None = None) -> "RunConfig":
        """This config with ``dataset``, ``stop_rules`` and ``history`` put through :func:`resolve_input_path`."""
        return replace(self, dataset=resolve_input_path(self.dataset, config_dir),
                       stop_rules=resolve_input_path(self.stop_rules, config_dir),
                       history=tuple(resolve_input_path(h, config_dir) for h in self.history))


def load_run_config(path: str | Path = DEFAULT_RUN_CONFIG) -> RunConfig:
    """Read a run config; a missing default file gives the defaults, a bad one a ConfigError naming file and key.

    A relative ``path`` not found from the working directory is looked for under the project root; the config's
    relative input paths are resolved as the module docstring says.
    """
    import jsonschema

    path = Path(path)
    if not path.is_absolute() and not path.exists() and (PROJECT_ROOT / path).exists():
        path = PROJECT_ROOT / path
    if not path.exists():
        if path == DEFAULT_RUN_CONFIG:
            return RunConfig().with_paths_resolved()
        raise ConfigError(f"{path}: no such run config")
    doc = read_yaml(path)
    errors = sorted(jsonschema.Draft202012Validator(RUN_CONFIG_SCHEMA).iter_errors(doc), key=lambda e: e.path)
    if errors:
        where = ".".join(str(p) for p in errors[0].absolute_path) or "(top level)"
        raise ConfigError(f"{path}: {where}: {errors[0].message}")
    runtime, models = doc.get("runtime") or {}, doc.get("models") or {}
    demo, paths = doc.get("demo") or {}, doc.get("paths") or {}
    base = RunConfig()
    values: dict[str, Any] = {**runtime, **demo, **{k: v for k, v in paths.items()}}
    for key in ("provider", "decoding"):
        if key in models:
            values[key] = models[key]
    if "temperature" in models:
        values["temperature"] = {**base.temperature, **models["temperature"]}
    for key in ("modes", "history"):
        if key in values:
            values[key] = tuple(values[key])
    return replace(base, **values).with_paths_resolved(path.parent)
