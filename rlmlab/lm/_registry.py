"""LM providers behind one function: ``make_lm("scripted" | "local" | "<litellm model>")``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import dspy

from rlmlab.errors import MissingExtraError
from rlmlab.registry import Registry
from rlmlab.lm._calls import CallRecorder
from rlmlab.lm._engines import LlamaEngine, ScriptedEngine
from rlmlab.lm._weights import WEIGHTS

__all__ = ["LMProvider", "LM_PROVIDERS", "lm_provider", "provider", "make_lm", "recorder_of"]


@dataclass(frozen=True)
class LMProvider:
    """A named way to build a DSPy engine from the text after ``name:`` in an LM spec."""

    name: str
    build_engine: Callable[..., Any]
    description: str


# name -> factory(arg, **options) -> engine; the factory's docstring is the provider's description
LM_PROVIDERS: Registry = Registry("LM provider")


def lm_provider(name: str, description: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``build_engine(arg, **options)`` as LM provider ``name`` (``make_lm("name:arg")``)."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        func.__doc__ = description
        return LM_PROVIDERS.register(name, func)

    return decorate


def provider(name: str) -> LMProvider:
    """The LM provider registered as ``name``; ConfigError naming the registered ones if unknown."""
    return LMProvider(name, LM_PROVIDERS.factory(name), LM_PROVIDERS.describe()[name])


@lm_provider("scripted", "deterministic replay of a list of responses (or 'scripted:probe'); counts tokens")
def _scripted(arg: str | None, script: Any = None, **_: Any) -> ScriptedEngine:
    if script is None and arg:
        from rlmlab.lm._scripts import script_named

        script = script_named(arg)
    if script is None:
        raise ValueError("the scripted LM needs script=[...] (responses to replay) or a named script: 'scripted:probe'")
    return ScriptedEngine(script)


@lm_provider("local", "embedded SmolLM2-135M-Instruct via llama-cpp-python: 'local' (the wheel's Q4_1 file), "
                      "'local:q8_0' (a Q8_0 copy of it: faster prefill), or any GGUF path after 'local:'")
def _local(arg: str | None, n_threads: int | None = None, n_ctx: int = 8192, max_tokens: int = 512,
           seed: int = 0, grammar: str | None = None, json_schema: Any = None, prompt_cache: bool = True,
           constraint_engine: str = "auto", fast_forward: bool = True, **_: Any) -> LlamaEngine:
    weights = {"weights": arg} if arg in WEIGHTS else {}
    return LlamaEngine(None if weights else arg or None, n_threads=n_threads, n_ctx=n_ctx, max_tokens=max_tokens,
                       seed=seed, grammar=grammar, json_schema=json_schema, prompt_cache=prompt_cache,
                       constraint_engine=constraint_engine, fast_forward=fast_forward, **weights)


def make_lm(spec: str = "local", *, temperature: float = 0.0, max_tokens: int = 512,
            recorder: CallRecorder | None = None, **options: Any) -> dspy.LM:
    """A DSPy LM for ``spec``, with a CallRecorder attached (see :func:`recorder_of`).

    ``spec`` is ``scripted`` (pass ``script=[...]``), ``local`` or
    ``local:/path/model.gguf``, or any LiteLLM model string such as
    ``openai/gpt-4o-mini`` or ``ollama_chat/llama3``, passed to ``dspy.LM``. For those, ``constrain``
    ("auto" default, "llamacpp", "vllm", "vllm-guided", "ollama", "none") says how a grammar reaches their server
    and a local ``api_base`` gets a placeholder key (see :mod:`rlmlab.lm._server`).
    """
    recorder = recorder or CallRecorder()
    name, _, arg = spec.partition(":")
    if name in LM_PROVIDERS:
        engine = LM_PROVIDERS.factory(name)(arg or None, max_tokens=max_tokens, **options)
        lm = dspy.LM(f"rlmlab/{engine.model_name}", engine=engine, cache=False, callbacks=[recorder],
                     temperature=temperature, max_tokens=max_tokens, num_retries=0)
        lm.rlmlab_engine = engine
        return lm
    if "/" not in spec:
        raise ValueError(
            f"LM spec {spec!r}: use one of {', '.join(sorted(LM_PROVIDERS))}, 'local:/path.gguf', "
            "or a LiteLLM model string like 'openai/gpt-4o-mini'"
        )
    try:
        import litellm  # noqa: F401
    except ImportError:
        raise MissingExtraError(f"LM {spec!r}", "api", "litellm") from None
    from rlmlab.lm._server import server_lm

    return server_lm(spec, temperature=temperature, max_tokens=max_tokens, callbacks=[recorder], **options)

def recorder_of(lm: Any) -> CallRecorder:
    """The CallRecorder attached to an LM made by :func:`make_lm` (one is attached if missing)."""
    for cb in getattr(lm, "callbacks", []) or []:
        if isinstance(cb, CallRecorder):
            return cb
    recorder = CallRecorder()
    lm.callbacks = [*(getattr(lm, "callbacks", []) or []), recorder]
    return recorder
