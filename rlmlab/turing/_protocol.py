"""The Turing Protocol engine: detection, validation and one aggregated correction per round."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlmlab.turing._config import (
    DEFAULT_CONFIG, DEFAULT_HOOKS_FILE, TuringConfig, load_custom_hooks, load_turing_config, resolve_hooks,
)
from rlmlab.turing._detectors import Detection, Detector, LLMDetector, ProgrammaticDetector
from rlmlab.turing._hooks import BUILTIN_HOOKS, HookSpec, correction_template_problem, fill_correction
from rlmlab.turing._log import InteractionLog
from rlmlab.turing._turn import Turn
from rlmlab.turing._validators import VALIDATORS, ValidatorContext
from rlmlab.records import Record

__all__ = ["Violation", "HookError", "RoundResult", "TuringProtocol", "FailoverLM"]


@dataclass(frozen=True)
class Violation:
    hook: str
    reason: str


@dataclass(frozen=True)
class HookError:
    """A detector or validator that raised: logged with status ``error``; the round went on without it."""

    hook: str  # "*" when the whole Stage 1 detector raised
    stage: int  # 1 detection, 2 validation
    error: str  # "ExcType: message"


@dataclass
class RoundResult(Record):
    """One round: the confirmed violations, the one correction (or None), and what to do with the reply."""

    phase: str
    violations: list[Violation] = field(default_factory=list)
    correction: str | None = None
    kill: bool = False  # discard the reply (kill_on_detect)
    halt: bool = False  # the reply waited for validation (halt_inference)
    detection: str = ""
    errors: list[HookError] = field(default_factory=list)
    stage_status: tuple[str, str, str] = ("ok", "ok", "ok")
    elapsed_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def hooks(self) -> list[str]:
        return [v.hook for v in self.violations]

    def to_dict(self) -> dict[str, Any]:
        """The one written shape of a round (a step's ``IterationRecord.turing`` entries): every field, plus the
        violated ``hooks`` and their ``reasons`` for readers that want just those."""
        return {**super().to_dict(), "hooks": self.hooks, "reasons": [v.reason for v in self.violations]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RoundResult:
        return cls(phase=data["phase"], violations=[Violation(**v) for v in data.get("violations", [])],
                   correction=data.get("correction"), kill=bool(data.get("kill")), halt=bool(data.get("halt")),
                   detection=data.get("detection", ""), errors=[HookError(**e) for e in data.get("errors", [])],
                   stage_status=tuple(data.get("stage_status", ("ok", "ok", "ok"))),
                   elapsed_ms=float(data.get("elapsed_ms", 0.0)))

    def log_row(self, turn: Any, detector: str, hooks: list[str]) -> dict[str, Any]:
        """The round as a row of the interaction log: the same fields, with the turn it checked."""
        return {"session": turn.session, "turn_id": turn.turn_id, "phase": turn.phase, "scope": turn.scope,
                "detector": detector, "hooks": hooks, "input_context": turn.to_dict(),
                "detection_output": self.detection, "stage1_status": self.stage_status[0],
                "stage2_status": self.stage_status[1], "stage3_status": self.stage_status[2],
                "violations": [asdict(v) for v in self.violations], "correction": self.correction,
                "errors": [asdict(e) for e in self.errors], "elapsed_ms": self.elapsed_ms}


class FailoverLM:
    """The ``backends`` failover list: each LM spec is tried in order until one answers."""

    def __init__(self, specs: Sequence[str], **options: Any):
        if not specs:
            raise ValueError("backends: empty; an empty list disables the protocol instead")
        self.specs, self.options = list(specs), options
        self._lms: dict[str, Any] = {}
        self.failures: list[str] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from rlmlab.lm import make_lm

        last: Exception | None = None
        for spec in self.specs:
            try:
                if spec not in self._lms:
                    self._lms[spec] = make_lm(spec, **self.options)
                return self._lms[spec](*args, **kwargs)
            except Exception as exc:  # next backend; the failure is kept for the log
                self.failures.append(f"{spec}: {type(exc).__name__}: {exc}")
                last = exc
        raise RuntimeError(f"every Turing backend failed: {'; '.join(self.failures[-len(self.specs):])}") from last


class TuringProtocol:
    """Hooks for three phases; ``run(turn)`` does one round and returns a :class:`RoundResult`.

    ``detector`` is Stage 1 for hooks with a detection prompt (programmatic by
    default); ``lm`` is the backend for ``llm`` validators and the LLM detector.
    Each hook fires at most once per (session, turn): a later confirmation in
    the same turn still counts as a violation (a bad tool call is still
    blocked) but adds no second correction.
    """

    def __init__(self, hooks: Sequence[HookSpec] | None = None, *, detector: Detector | None = None, lm: Any = None,
                 log: InteractionLog | str | Path | None = None, enabled: bool = True,
                 problems: Sequence[str] = ()):
        self.problems = list(problems)
        self.hooks = [h for h in (hooks if hooks is not None else BUILTIN_HOOKS) if self._usable(h)]
        self.detector = detector or ProgrammaticDetector()
        self.lm, self.enabled = lm, enabled
        self.log = InteractionLog(log) if isinstance(log, (str, Path)) else log
        self._fired: dict[tuple[str, str], set[str]] = {}
        self._lock = threading.Lock()
        self.rounds = 0

    @classmethod
    def from_config(cls, config: str | Path | TuringConfig = DEFAULT_CONFIG, *,
                    hooks_file: str | Path = DEFAULT_HOOKS_FILE, detector: str = "programmatic", lm: Any = None,
                    log: InteractionLog | str | Path | None = None) -> "TuringProtocol":
        """Built from ``configs/turing.yaml`` and ``data/TURING_PROTOCOL_HOOKS.txt`` (load problems in ``problems``).

        ``lm`` is the agent's LM, used when the config names no backends.
        """
        cfg = config if isinstance(config, TuringConfig) else load_turing_config(config)
        custom, hook_problems = load_custom_hooks(hooks_file)
        backend = FailoverLM(cfg.backends) if cfg.backends else lm
        if detector not in ("programmatic", "llm"):
            raise ValueError(f"detector: {detector!r}; use 'programmatic' or 'llm'")
        if detector == "llm" and backend is None:
            raise ValueError("detector 'llm' needs a backend: set turing_protocol.backends or pass lm=")
        found = LLMDetector(backend) if detector == "llm" else ProgrammaticDetector()
        return cls(resolve_hooks(cfg, custom), detector=found, lm=backend, log=log, enabled=cfg.enabled,
                   problems=cfg.problems + hook_problems)

    def _usable(self, hook: HookSpec) -> bool:
        """A hook that could never fire (no registered validator) or whose correction cannot be filled is left
        out and reported in ``problems``, here rather than at the first violation."""
        if (hook.validator_fn_name or "") not in VALIDATORS:
            self.problems.append(f"hook {hook.name}: validator {hook.validator_fn_name!r} is not registered, so it "
                                 "would never fire; left out")
            return False
        bad = correction_template_problem(hook.correction_template)
        if bad:
            self.problems.append(f"hook {hook.name}: correction_template: {bad}; left out")
            return False
        return True

    def hooks_for(self, phase: str, scope: str) -> list[HookSpec]:
        return [h for h in self.hooks if h.applies_to(phase, scope)] if self.enabled else []

    def correction_for(self, hook: HookSpec, reason: str, turn: Turn) -> str:
        call = turn.current_call
        tool_name = call.name if call is not None else ("llm_query" if hook.name == "workflow_spawn" else "")
        schema = turn.tool_schemas.get(tool_name)
        return fill_correction(
            hook.correction_template, reason=reason, tool_name=tool_name or "the tool",
            tool_schema=json.dumps(schema, ensure_ascii=False) if schema else "(not available)",
            objective=turn.objective or "(none given)")

    def run(self, turn: Turn) -> RoundResult:
        t0 = time.perf_counter()
        hooks = self.hooks_for(turn.phase, turn.scope)
        result = RoundResult(turn.phase)
        if not hooks:
            return result
        stage1 = [h for h in hooks if h.needs_detection]
        direct = [h for h in hooks if not h.needs_detection]
        errors: list[HookError] = []
        try:
            detection = (self.detector.detect(turn, stage1) if stage1
                         else Detection("(skipped: programmatic hooks only)"))
        except Exception as exc:  # a broken detector costs its Stage 1 hooks, not the round
            detection = Detection(f"(detector error: {type(exc).__name__}: {exc})")
            errors.append(HookError("*", 1, f"{type(exc).__name__}: {exc}"))
        errors += [HookError(name, 1, msg) for name, msg in getattr(detection, "errors", {}).items()]
        ctx = ValidatorContext(lm=self.lm)
        confirmed: list[tuple[HookSpec, str]] = []
        for hook in stage1 + direct:
            if hook.needs_detection and hook.name not in detection.flagged:
                continue
            validate = VALIDATORS.get(hook.validator_fn_name or "")
            if validate is None:
                continue  # only if ``hooks`` was changed after __init__, which reports such hooks
            try:
                reason = validate(turn, detection.flagged.get(hook.name), ctx)
            except Exception as exc:  # logged as status `error`; the other hooks still run (inspect_ai's rule)
                errors.append(HookError(hook.name, 2, f"{type(exc).__name__}: {exc}"))
                continue
            if reason:
                confirmed.append((hook, reason))
        key = (turn.session, turn.turn_id)
        with self._lock:
            fired = self._fired.setdefault(key, set())
            fresh = [(h, r) for h, r in confirmed if h.name not in fired]
            fired.update(h.name for h, _ in fresh)
            self.rounds += 1
        result.violations = [Violation(h.name, r) for h, r in confirmed]
        if fresh:
            result.correction = "\n\n".join(self.correction_for(h, r, turn) for h, r in fresh)
        result.kill = any(h.kill_on_detect for h, _ in confirmed)
        result.halt = any(h.halt_inference for h in hooks)
        result.detection = detection.raw
        result.errors = errors
        failed = {e.stage for e in errors}
        result.stage_status = ("error" if 1 in failed else "skipped" if not stage1
                               else "violation_detected" if detection.flagged else "ok",
                               "error" if 2 in failed else "violation_detected" if confirmed else "ok",
                               "violation_detected" if result.correction else "ok")
        result.elapsed_ms = (time.perf_counter() - t0) * 1000
        if self.log is not None:
            self.log.write(result.log_row(turn, self.detector.name, [h.name for h in hooks]))
        return result
