"""LlamaEngine's low-level path: constrained calls and N-seed batches through :class:`~rlmlab.lm._batch.BatchDecoder`.

A mixin, so that :mod:`rlmlab.lm._engines` keeps the high-level path (llama-cpp-python's ``Llama``: free decoding,
log-probabilities, ``accepts``) and this module the batched one. Each model gets one BatchDecoder (its own
llama.cpp context, beside ``Llama``'s), shared by every engine of that model and used under the model's lock.
"""

from __future__ import annotations

from typing import Any

from rlmlab.lm._batch import BatchDecoder, GbnfRule, SamplerParams, chat_prompt
from rlmlab.lm._calls import CallTiming, Completion
from rlmlab.lm._constraints import GRAMMARS, active_constraint

__all__ = ["BatchedSampling", "close_decoders"]

_DECODERS: dict[Any, BatchDecoder] = {}  # by the engine's model key


def close_decoders() -> None:
    """Free every decoder's context (before its model is freed)."""
    for decoder in _DECODERS.values():
        decoder.close()
    _DECODERS.clear()


def batch_timing(out: Any) -> CallTiming:
    """A batch decode's figures (seconds) as the CallTiming every LM call records, in milliseconds: sampling with
    grammar masking is what the engine's time holds beyond prefill and decode. Every sequence of a batch carries
    the batch's figures (they share the prefill and the decode steps)."""
    t = out.timing or {}
    prefill, decode, grammar = (1000.0 * t.get(k, 0.0) for k in ("prefill_s", "decode_s", "grammar_s"))
    return CallTiming(engine_ms=round(prefill + decode + grammar, 2), prefill_ms=round(prefill, 2),
                      decode_ms=round(decode, 2), prefill_tokens=max(0, out.prompt_tokens - out.cached_tokens),
                      decode_tokens=len(out.tokens) - out.forced_tokens, cached_tokens=out.cached_tokens,
                      forced_tokens=out.forced_tokens)


class BatchedSampling:
    """What LlamaEngine gets from this module; it needs ``llm``, ``_lock``, ``_key``, ``constraint``,
    ``constraint_engine``, ``max_tokens``, ``prompt_cache``, ``prompt_cache_tokens``, ``shared`` and
    ``fast_forward``."""

    last_timing: dict[str, float] = {}  # seconds of the last low-level call: prefill_s, decode_s, grammar_s

    def generate_n(self, messages: list[dict[str, str]], config: Any, seeds: list[int]) -> list[Any]:
        """One completion of ``messages`` per seed, decoded as ``len(seeds)`` sequences of one llama.cpp batch that
        share the prompt's KV cache (1..8 seeds), each under its own copy of the active constraint.

        ``config`` gives temperature (0: greedy, every sequence alike), max_tokens and stop as in :meth:`generate`.
        A seed gives the same completion in any batch it is decoded in up to llama.cpp's arithmetic: rows of a
        batch are not bitwise equal to a one-row decode, so a sampled sequence may branch off where two tokens were
        nearly tied (see benchmarks/decode.py). Returns :class:`~rlmlab.lm.Completion`s in the order of ``seeds``.
        Raises RLMLabError when the prompt does not fit or more than 8 seeds are given.
        """
        temperature = config.temperature if config is not None and config.temperature is not None else 0.0
        max_tokens = config.max_tokens if config is not None and config.max_tokens else self.max_tokens
        stop = list(config.stop) if config is not None and config.stop else []
        constraint = active_constraint(self.constraint)
        grammar = GRAMMARS.get(constraint) if constraint is not None else None
        with self._lock:
            decoder = self._decoder()
            prompt = chat_prompt(self.llm, messages)
            outs = decoder.decode(prompt, seeds, SamplerParams(temperature), max_tokens,
                                  grammar=grammar._grammar if grammar is not None else None,
                                  root=grammar._root if grammar is not None else "root", stop=stop,
                                  reuse=self.prompt_cache, rule=self._rule(),
                                  fast_forward=self.fast_forward)
        self.prompt_cache_tokens += outs[0].cached_tokens
        self.last_timing = outs[0].timing
        return [Completion(o.text, o.prompt_tokens, len(o.tokens), timing=batch_timing(o), finish_reason=o.finish_reason)
                for o in outs]

    def _rule(self) -> Any:
        if self.constraint_engine == "llguidance":
            from rlmlab.lm._guidance import GuidanceRule, guidance_or_gbnf

            return guidance_or_gbnf if self._fallback else GuidanceRule
        return GbnfRule

    def _decoder(self) -> BatchDecoder:
        decoder = _DECODERS.get(self._key)
        if decoder is None:
            decoder = _DECODERS[self._key] = BatchDecoder(self.llm)
        return decoder

    def _shared(self, messages: list[dict[str, str]], config: Any, share: Any, seed: int) -> Any:
        """A vote's shared call: this seed's completion from an earlier batch, else one batch for every seed."""
        constraint = active_constraint(self.constraint)
        key = (tuple((m["role"], m["content"]) for m in messages), constraint, config.temperature,
               config.max_tokens or self.max_tokens, tuple(config.stop or ()))
        with self._lock:  # one rollout decodes the batch; the others wait here and then find theirs
            found = self.shared.take(key, seed)
            if found is not None:
                share.served += 1
                return found
            outs = self.generate_n(messages, config, list(share.seeds))
            self.shared.put(key, {s: c for s, c in zip(share.seeds, outs) if s != seed})
        return outs[share.seeds.index(seed)]
