"""STOP rules, and the expected gain of a reprompt estimated from earlier runs' traces."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlmlab._paths import PROJECT_ROOT
from rlmlab._files import read_yaml
from rlmlab.errors import ConfigError
from rlmlab.teach._teacher import bucket, combine_confidence
from rlmlab.teach._traces import load_traces_doc

__all__ = ["StopRules", "ExpectedGain", "load_stop_rules", "DEFAULT_STOP_RULES"]

DEFAULT_STOP_RULES = PROJECT_ROOT / "configs" / "stop_rules.yaml"


@dataclass(frozen=True)
class StopRules:
    max_turns: int = 3
    stop_on_match: bool = True
    stop_on_two_non_improvements: bool = True
    negative_expected_gain_threshold: float = 0.0

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise ConfigError(f"stop_rules.max_turns: {self.max_turns}; must be at least 1")

    def reason_to_stop(self, *, turns: int, matched: bool | None, scores: Sequence[float],
                       expected_gain: float) -> str | None:
        """Why to stop before another reprompt, or None to go on.

        ``turns``: answers so far; ``matched``: the last answer matches the reference (None without one);
        ``scores``: a score per answer (accuracy in reference mode, combined confidence without a reference);
        ``expected_gain``: of the reprompt the policy chose.
        """
        if self.stop_on_match and matched:
            return "match"
        if turns >= self.max_turns:
            return "max_turns"
        if self.stop_on_two_non_improvements and len(scores) >= 3 and \
                scores[-1] <= scores[-2] and scores[-2] <= scores[-3]:
            return "two_non_improvements"
        if expected_gain < self.negative_expected_gain_threshold:
            return "negative_expected_gain"
        return None


def load_stop_rules(path: str | Path = DEFAULT_STOP_RULES, **overrides: Any) -> StopRules:
    """``stop_rules:`` from YAML (defaults if the file is missing); unknown keys are an error naming them."""

    path = Path(path)
    values: dict[str, Any] = {}
    if path.exists():
        doc = read_yaml(path)
        values = (doc.get("stop_rules") if isinstance(doc, dict) else None) or {}
        known = set(StopRules.__dataclass_fields__)
        unknown = set(values) - known
        if unknown:
            raise ConfigError(f"{path}: stop_rules: unknown keys {sorted(unknown)}; known: {sorted(known)}")
    values.update({k: v for k, v in overrides.items() if v is not None})
    return StopRules(**values)


_OPTIONAL = {"string": {"type": ["string", "null"]}, "number": {"type": ["number", "null"]}}
# What from_traces reads of a traces.json (an earlier run's, or a hand-made history with only these fields).
HISTORY_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["traces"],
    "properties": {"traces": {"type": "array", "items": {"type": "object", "properties": {"turns": {
        "type": "array", "items": {"type": "object", "properties": {
            "template": _OPTIONAL["string"], "teacher_bias": _OPTIONAL["string"], "self_conf": _OPTIONAL["number"],
            "teacher_conf": _OPTIONAL["number"], "accuracy": {"type": ["number", "boolean"]}}}}}}}},
}


class ExpectedGain:
    """Per (bias, bucket, template): observed rate of wrong->right minus right->wrong flips; 0 with no history."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])  # up, down, n

    def observe(self, bias: str, level: str, template: str, before: int, after: int) -> None:
        c = self._counts[(bias, level, template)]
        c[0] += before == 0 and after == 1
        c[1] += before == 1 and after == 0
        c[2] += 1

    def gain(self, bias: str, level: str, template: str | None) -> float:
        c = self._counts.get((bias, level, template or ""))
        return 0.0 if not c or not c[2] else (c[0] - c[1]) / c[2]

    @classmethod
    def from_traces(cls, paths: Iterable[str | Path]) -> "ExpectedGain":
        """Learn from earlier ``traces.json`` files: each reprompted turn and the accuracy it led to. A file that is
        not a traces.json raises InputFileError naming it."""
        gains = cls()
        for path in paths:
            doc = load_traces_doc(path, HISTORY_SCHEMA)
            for trace in doc.get("traces", []):
                turns = trace.get("turns", [])
                for prev, nxt in zip(turns, turns[1:]):
                    if prev.get("template"):
                        # the bucket is not a trace field: recomputed from the two confidences the trace keeps
                        level = bucket(combine_confidence(prev.get("self_conf"), prev.get("teacher_conf")))
                        gains.observe(prev.get("teacher_bias", "None"), level, prev["template"],
                                      int(prev.get("accuracy", 0)), int(nxt.get("accuracy", 0)))
        return gains
