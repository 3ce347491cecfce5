"""The Turing Protocol: hooks that catch small-model failures in each agent step and inject one correction.

Three stages per round (detect, validate, correct), three phases (post_inference, pre_execution,
post_execution), scopes main and sub_session. Configure with ``configs/turing.yaml``; custom hooks in
``data/TURING_PROTOCOL_HOOKS.txt``; every round is logged to SQLite (``interaction_log``).
"""

from rlmlab.turing._config import (
    TuringConfig, ValidatorSetting, load_custom_hooks, load_turing_config, resolve_hooks,
)
from rlmlab.turing._eval import DEFAULT_EVAL, EvalCase, EvalReport, HookScore, evaluate, load_eval_cases
from rlmlab.turing._detectors import Detection, LLMDetector, ProgrammaticDetector, detection_prompt
from rlmlab.turing._guard import TuringGuard
from rlmlab.turing._hooks import ALWAYS_ON, BUILTIN_HOOKS, HOOK_ENTRY_SCHEMA, HookSpec
from rlmlab.turing._log import INTERACTION_LOG_COLUMNS, InteractionLog, load_interaction_log
from rlmlab.turing._loop import AgentReply, LoopResult, TuringAgentLoop
from rlmlab.turing._protocol import FailoverLM, HookError, RoundResult, TuringProtocol, Violation
from rlmlab.turing._turn import PHASES, SCOPES, Step, ToolCall, Turn, tool_calls_in_code, tool_calls_in_text
from rlmlab.turing.narrated import (
    PHANTOM_MODEL_PATH, PHANTOM_THRESHOLDS, PHANTOM_TRAIN_FILES, PhantomModel, cross_validate_phantom,
    default_phantom_model, fit_phantom_model, phantom_features, pick_threshold,
)
from rlmlab.turing._phantom_hook import phantom_rows
from rlmlab.turing._validators import (
    PATTERN_DETECTORS, VALIDATORS, ValidatorContext, pattern_detector, schema_errors, validator,
)

__all__ = [
    "load_custom_hooks", "load_turing_config",
    "LLMDetector", "ProgrammaticDetector", "detection_prompt", "TuringGuard",
    "ALWAYS_ON", "BUILTIN_HOOKS", "HookSpec", "InteractionLog", "load_interaction_log",
    "INTERACTION_LOG_COLUMNS",
    "HookError", "RoundResult", "TuringProtocol", "Violation", "PHASES", "SCOPES", "Step", "ToolCall", "Turn",
    "tool_calls_in_code", "PATTERN_DETECTORS", "VALIDATORS", "ValidatorContext", "pattern_detector",
    "validator", "AgentReply", "TuringAgentLoop",
    "HookScore", "load_eval_cases", "evaluate",
    "PHANTOM_MODEL_PATH", "PhantomModel", "default_phantom_model", "phantom_features", "PHANTOM_THRESHOLDS",
    "PHANTOM_TRAIN_FILES", "cross_validate_phantom", "fit_phantom_model", "phantom_rows", "pick_threshold",
]
