"""Language models behind one interface: scripted, the embedded local model, any LiteLLM model."""

from rlmlab.lm._adapter import LenientChatAdapter, salvage_fields
from rlmlab.lm._constraints import (
    DecodingConstraint, active_constraint, can_constrain, constrained, pop_constraint, push_constraint,
)
from rlmlab.lm._calls import (
    CALLS_FILE, CallRecorder, CallScope, CallTiming, LMCall, call_role, call_scope, current_role, current_scope, note_timing, read_calls,
    write_calls,
)
from rlmlab.lm._calls import Completion
from rlmlab.lm._engines import LlamaEngine, ScriptedEngine, default_gguf_path, format_fields
from rlmlab.lm._weights import DEFAULT_WEIGHTS, WEIGHTS, shipped_gguf_path
from rlmlab.lm._samples import shared_samples
from rlmlab.lm._server import PLACEHOLDER_KEY, SERVER_CONSTRAINTS, ServerLM, detect_constraint
from rlmlab.lm._registry import LM_PROVIDERS, LMProvider, lm_provider, make_lm, provider, recorder_of
from rlmlab.tokens import count_tokens

__all__ = [
    "DecodingConstraint", "active_constraint", "can_constrain", "constrained", "pop_constraint", "push_constraint",
    "LenientChatAdapter", "salvage_fields", "CallRecorder", "CallTiming", "LMCall", "call_role",
    "call_scope", "CallScope", "current_scope",
    "CALLS_FILE", "read_calls", "write_calls",
    "Completion", "LlamaEngine", "ScriptedEngine", "default_gguf_path", "shipped_gguf_path", "WEIGHTS",
    "DEFAULT_WEIGHTS", "format_fields",
    "shared_samples", "PLACEHOLDER_KEY", "SERVER_CONSTRAINTS", "ServerLM", "LM_PROVIDERS", "LMProvider", "lm_provider", "provider", "make_lm", "recorder_of", "count_tokens",
]
