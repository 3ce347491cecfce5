"""Stage 1 detectors behind one interface: programmatic patterns (default) or one LLM call for all hooks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rlmlab.turing._hooks import HookSpec
from rlmlab.turing._turn import Turn
from rlmlab.turing._validators import PATTERN_DETECTORS, ask_lm

__all__ = ["Detection", "Detector", "ProgrammaticDetector", "LLMDetector", "detection_prompt"]


@dataclass
class Detection:
    """Stage 1 output: the raw text (logged) and the hooks flagged, with a reason each."""

    raw: str
    flagged: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # hook -> "ExcType: message" of a pattern that raised


class Detector(Protocol):
    name: str

    def detect(self, turn: Turn, hooks: Sequence[HookSpec]) -> Detection: ...


class ProgrammaticDetector:
    """Patterns and the turn's tool-call record; a hook with no registered pattern is never flagged."""

    name = "programmatic"

    def detect(self, turn: Turn, hooks: Sequence[HookSpec]) -> Detection:
        flagged, errors = {}, {}
        for hook in hooks:
            fn = PATTERN_DETECTORS.get(hook.validator_fn_name or "")
            try:
                reason = fn(turn) if fn is not None else None
            except Exception as exc:  # one broken pattern must not hide the other hooks (logged by the protocol)
                errors[hook.name] = f"{type(exc).__name__}: {exc}"
                continue
            if reason:
                flagged[hook.name] = reason
        raw = "\n".join(f"{k}: {v}" for k, v in flagged.items()) or "none"
        return Detection(raw, flagged, errors)


def detection_prompt(turn: Turn, hooks: Sequence[HookSpec]) -> str:
    """The universal Stage 1 prompt: every hook's detection bullet, the reply and the tool calls made."""
    bullets = "\n".join(h.detection_prompt.strip() for h in hooks)
    calls = ", ".join(sorted(turn.turn_tool_names)) or "none"  # every round of the user turn
    return ("You check an AI assistant's reply for the problems below.\n"
            f"{bullets}\n\n"
            f"Assistant reply:\n\"\"\"\n{turn.response.strip()}\n\"\"\"\n"
            f"Tool calls made in this turn: {calls}\n\n"
            "List each problem that applies, one per line, as `name: short reason`, using the names in bold "
            "above. If none applies, answer `none`.")


def _echoes(reason: str, prompt: str) -> bool:
    """Whether a detector's reason is a copy of the hook's detection bullet (small models echo the prompt)."""
    words = lambda t: re.findall(r"\w+", t.lower())  # noqa: E731
    said, bullet = words(reason), set(words(prompt))
    return bool(said) and sum(w in bullet for w in said) / len(said) >= 0.8 and len(said) >= 6


class LLMDetector:
    """The spec's Stage 1: one call to the backend LM with every hook's detection prompt."""

    name = "llm"

    def __init__(self, lm: Any):
        self.lm = lm

    def detect(self, turn: Turn, hooks: Sequence[HookSpec]) -> Detection:
        if not hooks:
            return Detection("none")
        raw = ask_lm(self.lm, detection_prompt(turn, hooks))
        flagged: dict[str, str] = {}
        for hook in hooks:
            m = re.search(rf"\*{{0,2}}{re.escape(hook.name)}\*{{0,2}}\s*[:\-—]\s*(.*)", raw)
            if m:
                reason = m.group(1).strip().splitlines()[0] if m.group(1).strip() else "flagged by the detector"
                if re.match(r"(?i)^(none|no|n/?a|not applicable|does not apply)\b", reason):
                    continue
                if _echoes(reason, hook.detection_prompt):
                    continue  # the model repeated the hook's own bullet from the prompt: not a finding
                flagged[hook.name] = f"detector: {reason[:200]}"
        return Detection(raw, flagged)
