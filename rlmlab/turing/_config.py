"""The ``turing_protocol:`` configuration and custom hooks; problems are reported, built-ins stay in force."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlmlab._paths import PROJECT_ROOT
from rlmlab._files import read_text, read_yaml
from rlmlab.turing._hooks import ALWAYS_ON, BUILTIN_HOOKS, HOOK_ENTRY_SCHEMA, HookSpec, correction_template_problem
from rlmlab.turing._validators import VALIDATORS

__all__ = ["TuringConfig", "ValidatorSetting", "load_turing_config", "load_custom_hooks", "resolve_hooks",
           "DEFAULT_CONFIG", "DEFAULT_HOOKS_FILE"]

DEFAULT_CONFIG = PROJECT_ROOT / "configs" / "turing.yaml"
DEFAULT_HOOKS_FILE = PROJECT_ROOT / "data" / "TURING_PROTOCOL_HOOKS.txt"


@dataclass(frozen=True)
class ValidatorSetting:
    enabled: bool = True
    scope: tuple[str, ...] | None = None  # None: the hook's own scope


@dataclass
class TuringConfig:
    """``backends``: LM specs tried in order (None: use the agent's LM; [] disables the protocol)."""

    backends: list[str] | None = None
    validators: dict[str, ValidatorSetting] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def enabled(self) -> bool:
        return self.backends != []


def _scope(value: Any, where: str, problems: list[str]) -> tuple[str, ...] | None:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or any(v not in ("main", "sub_session") for v in values):
        problems.append(f"{where}.scope: {value!r} is not 'main', 'sub_session' or a list of them; hook's own scope kept")
        return None
    return tuple(values)


def load_turing_config(path: str | Path = DEFAULT_CONFIG) -> TuringConfig:
    """Read ``turing_protocol:`` from a YAML file. A missing file gives the defaults (all built-ins on).

    A YAML syntax error raises ConfigError with the file and line; a bad entry is
    reported in ``problems`` (file, key and what was expected) and skipped.
    """

    from rlmlab.errors import ConfigError

    path = Path(path)
    if not path.exists():
        return TuringConfig()
    doc = read_yaml(path)
    section = doc.get("turing_protocol") if isinstance(doc, dict) else None
    config = TuringConfig()
    if section is None:
        config.problems.append(f"{path}: no 'turing_protocol:' section; defaults used")
        return config
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: turing_protocol: expected a mapping, got {type(section).__name__}")
    backends = section.get("backends")
    if backends is not None and not (isinstance(backends, list) and all(isinstance(b, str) for b in backends)):
        raise ConfigError(f"{path}: turing_protocol.backends: expected a list of LM specs (e.g. [\"local\"]), "
                          f"got {backends!r}")
    config.backends = backends
    known = {h.name for h in BUILTIN_HOOKS}
    for name, value in (section.get("validators") or {}).items():
        where = f"{path}: turing_protocol.validators.{name}"
        if name in ALWAYS_ON:
            config.problems.append(f"{where}: always on and not configurable; setting ignored")
            continue
        if isinstance(value, bool):
            config.validators[name] = ValidatorSetting(value)
        elif isinstance(value, dict):
            unknown = set(value) - {"enabled", "scope"}
            if unknown:
                config.problems.append(f"{where}: unknown keys {sorted(unknown)}; expected 'enabled' and 'scope'")
            enabled = value.get("enabled", True)
            if not isinstance(enabled, bool):
                config.problems.append(f"{where}.enabled: expected true or false, got {enabled!r}; left enabled")
                enabled = True
            scope = _scope(value["scope"], where, config.problems) if "scope" in value else None
            config.validators[name] = ValidatorSetting(enabled, scope)
        else:
            config.problems.append(f"{where}: expected true, false or {{enabled, scope}}, got {value!r}; ignored")
            continue
        if name not in known:
            config.problems.append(f"{where}: not a built-in hook (applies if a custom hook has this name)")
    return config


def load_custom_hooks(path: str | Path = DEFAULT_HOOKS_FILE) -> tuple[list[HookSpec], list[str]]:
    """Custom hooks from a JSON array; each bad entry is reported (index, name, field) and skipped.

    Checked at load, as pluggy checks a plug-in when it registers: the entry's fields against the spec's table, its
    validator against the registry (an ``llm`` hook needs one too: without it the hook could never fire), and its
    correction template by filling it once. A file that is not UTF-8 or not JSON gives one problem and no hooks.
    """
    import jsonschema

    from rlmlab.errors import InputFileError

    path = Path(path)
    if not path.exists():
        return [], []
    try:
        entries = json.loads(read_text(path))
    except InputFileError as exc:
        return [], [f"{exc}; built-in hooks stay in force"]
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f":{exc.lineno}:{exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        return [], [f"{path}{where}: not JSON ({getattr(exc, 'msg', 'nested too deeply')}); built-in hooks stay "
                    "in force"]
    if not isinstance(entries, list):
        return [], [f"{path}: expected a JSON array of hooks, got {type(entries).__name__}; built-in hooks stay in force"]
    check = jsonschema.Draft202012Validator(HOOK_ENTRY_SCHEMA)
    hooks, problems = [], []
    for index, entry in enumerate(entries):
        name = entry.get("name", "?") if isinstance(entry, dict) else "?"
        errors = sorted(check.iter_errors(entry), key=lambda e: list(e.path))
        if errors:
            for err in errors:
                fld = ".".join(str(p) for p in err.path) or "(entry)"
                problems.append(f"{path}: entry {index} ({name}): field {fld}: {err.message}; entry skipped")
            continue
        where = f"{path}: entry {index} ({name}): field"
        fn = entry.get("validator_fn_name")
        if fn is None:  # the schema already requires one for programmatic hooks
            problems.append(f"{where} validator_fn_name: an llm hook needs a registered validator for Stage 2 "
                            f"(known: {', '.join(sorted(VALIDATORS))}); without one it would never fire; "
                            "entry skipped")
            continue
        if fn not in VALIDATORS:
            problems.append(f"{where} validator_fn_name: {fn!r} is not a registered "
                            f"validator (known: {', '.join(sorted(VALIDATORS))}); entry skipped")
            continue
        bad_template = correction_template_problem(entry["correction_template"])
        if bad_template:
            problems.append(f"{where} correction_template: {bad_template}; entry skipped")
            continue
        hooks.append(HookSpec.from_dict(entry))
    return hooks, problems


def resolve_hooks(config: TuringConfig, custom: list[HookSpec] = ()) -> list[HookSpec]:
    """Built-ins, overridden by custom hooks of the same name, then the config's enable/scope settings."""
    by_name = {h.name: h for h in BUILTIN_HOOKS}
    for hook in custom:
        by_name[hook.name] = hook
    out = []
    for name, hook in by_name.items():
        setting = config.validators.get(name)
        if setting is not None and name not in ALWAYS_ON:
            if not setting.enabled:
                continue
            if setting.scope is not None:
                hook = hook.with_scope(setting.scope)
        out.append(hook)
    return out
