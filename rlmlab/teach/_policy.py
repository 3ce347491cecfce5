"""RTS policy: (bias, confidence bucket) -> (reprompt?, template id), and the templates it names.

The rules are seed 002's tables, as small functions tried in order (``RTS_RULES``);
adding a rule is adding one function with ``@rts_rule``. Templates live in
``data/rts_templates.json`` (id, text, style, cognitive_load, length, bias);
adding a template is adding an entry.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlmlab.provenance import note_file
from rlmlab.registry import Registry
from rlmlab._paths import PROJECT_ROOT
from rlmlab.errors import ConfigError
from rlmlab.records import Record

__all__ = ["Decision", "Template", "TemplateNotFound", "RTS_RULES", "rts_rule", "select_template", "load_templates",
           "DEFAULT_TEMPLATES", "TEMPLATE_SCHEMA"]

DEFAULT_TEMPLATES = PROJECT_ROOT / "data" / "rts_templates.json"

TEMPLATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["id", "text", "style", "cognitive_load", "length", "bias"],
    "properties": {
        "id": {"type": "string", "pattern": r"^[a-z0-9_]+$"},
        "text": {"type": "string", "minLength": 1},
        "style": {"enum": ["supportive", "neutral", "adversarial"]},
        "cognitive_load": {"enum": ["low", "med", "high"]},
        "length": {"enum": ["short", "long"]},
        "bias": {"type": "string"},
    },
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Decision:
    reprompt: bool
    template: str | None
    rule: str = ""  # which rule decided


@dataclass(frozen=True)
class Template(Record):
    id: str
    text: str
    style: str
    cognitive_load: str
    length: str
    bias: str


class TemplateNotFound(ConfigError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


Rule = Callable[[str, str, bool], "Decision | None"]
RTS_RULES: Registry = Registry("RTS rule")  # tried in registration order (RTS_RULES.items())


def rts_rule(name: str) -> Callable[[Rule], Rule]:
    """Register a policy rule ``(bias, bucket, reference_free) -> Decision | None``; rules run in order."""
    return RTS_RULES.register(name)


# -- the answer looks right ----------------------------------------------------------------------------

@rts_rule("no-bias")
def _no_bias(bias: str, level: str, reference_free: bool) -> Decision | None:
    if bias != "None":
        return None
    if reference_free and level != "high":
        return Decision(True, "calming_focus_v1")  # no cue and unsure: confirm, avoid churn
    return Decision(False, None)


# -- bias-specific rules (seed 002, "Bias-Specific Rules") ---------------------------------------------

@rts_rule("anchoring-high")
def _anchoring(bias: str, level: str, reference_free: bool) -> Decision | None:
    return Decision(True, "counter_anchor_v1") if bias == "Anchoring" and level == "high" else None


@rts_rule("confirmation-mid-high")
def _confirmation(bias: str, level: str, reference_free: bool) -> Decision | None:
    return Decision(True, "devils_advocate_v1") if bias == "Confirmation" and level in ("mid", "high") else None


@rts_rule("availability-mid")
def _availability(bias: str, level: str, reference_free: bool) -> Decision | None:
    return Decision(True, "evidence_only_v1") if bias == "Availability/Bandwagon" and level == "mid" else None


@rts_rule("hindsight-any")
def _hindsight(bias: str, level: str, reference_free: bool) -> Decision | None:
    return Decision(True, "recompute_no_story_v1") if bias == "Hindsight" else None


@rts_rule("overgeneralization-low-mid")
def _overgeneralization(bias: str, level: str, reference_free: bool) -> Decision | None:
    if bias == "Overgeneralization" and level in ("low", "mid"):
        return Decision(True, "quantify_uncertainty_v1")
    return None


# -- general fallbacks ----------------------------------------------------------------------------------

@rts_rule("fallback")
def _fallback(bias: str, level: str, reference_free: bool) -> Decision | None:
    return Decision(True, {"high": "are_you_sure_recheck", "low": "think_step_by_step"}.get(level, "try_again_concise"))


def select_template(bias: str, level: str, reference_free: bool = False) -> Decision:
    """The first rule that decides, with its name; levels are ``low``, ``mid``, ``high``."""
    if level not in ("low", "mid", "high"):
        raise ValueError(f"level: {level!r}; use 'low', 'mid' or 'high'")
    for name, rule in RTS_RULES.items():
        decision = rule(bias, level, reference_free)
        if decision is not None:
            return Decision(decision.reprompt, decision.template, name)
    raise RuntimeError("no RTS rule decided; the fallback rule must stay last")  # pragma: no cover


def load_templates(path: str | Path = DEFAULT_TEMPLATES) -> dict[str, Template]:
    """Templates by id; a bad file or entry raises ConfigError naming the file, entry and field."""
    import jsonschema

    path = Path(path)
    note_file(path, "teach templates")
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no template file here") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})") from None
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: expected a JSON array of templates")
    check = jsonschema.Draft202012Validator(TEMPLATE_SCHEMA)
    out: dict[str, Template] = {}
    for index, entry in enumerate(entries):
        for err in check.iter_errors(entry):
            fld = ".".join(str(p) for p in err.path) or "(entry)"
            raise ConfigError(f"{path}: template {index} ({entry.get('id', '?') if isinstance(entry, dict) else '?'})"
                              f": field {fld}: {err.message}")
        if entry["id"] in out:
            raise ConfigError(f"{path}: template {index}: duplicate id {entry['id']!r}")
        out[entry["id"]] = Template(**entry)
    return _Templates(out, path)


class _Templates(dict):
    """A dict of templates whose missing-key error names the id and the file."""

    def __init__(self, items: dict[str, Template], path: Path):
        super().__init__(items)
        self.path = path

    def __missing__(self, key: str) -> Template:
        raise TemplateNotFound(f"template {key!r} is not in {self.path}; known: {', '.join(sorted(self))}")
