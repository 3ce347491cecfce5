"""N samples of one prompt in one llama.cpp batch, each under its own grammar state and seed.

llama-cpp-python's high-level ``Llama`` decodes one sequence. :class:`BatchDecoder` drives llama.cpp's low-level
API instead (the pattern of llama.cpp's ``examples/batched``): the prompt is prefilled once into sequence 0, its
KV cells are shared with sequences 1..N-1 (``llama_memory_seq_cp``: a unified KV cache stores a shared cell once),
and every step decodes the next token of all live sequences in one ``llama_decode``. Each sequence has its own
sampler chain (top-k 40, typical 1.0, top-p 0.95, min-p 0.05, temperature, ``dist`` seeded with its seed: the
chain ``Llama.create_chat_completion`` builds) and its own grammar state, a *rule*: :class:`GbnfRule` (llama.cpp's
grammar sampler) or :class:`rlmlab.lm._guidance.GuidanceRule` (llguidance's matcher).

The grammar is applied lazily, as llama.cpp's own ``common_sampler_sample`` does: the token is sampled without
the grammar, then checked alone against it; only when the grammar rejects it is the whole vocabulary masked and
the token sampled again. Checking one candidate costs a grammar step; llama.cpp's GBNF sampler masking all 49,152
candidates on every token (4-7 ms of CPU on the step grammars) was what made constrained decoding slower than free.
At temperature 0 (greedy) the lazy rule picks exactly the token the grammar-first chain picks; at temperature > 0
it samples from a slightly different distribution than grammar-first (a token the grammar allows keeps its
unmasked probability), like llama.cpp.

Fast-forward: where the grammar forces a run of tokens (DSPy's field markers, the echoed question, a template's
fixed text), the rule names them (``forced()``: llguidance's ``compute_ff_tokens``, the canonical tokens of the
forced bytes) and they are evaluated in the next ``llama_decode`` together with the sampled token, at prefill
speed, instead of one decode and one sample each; the run the grammar forces before the first token is prefilled
with the prompt. The grammar accepts the same texts either way. Greedy decoding gives the same text with and
without it unless the model, token by token, would have spelled a forced text with other tokens than llguidance's
canonical ones, or a near tie flips (a token evaluated in a batch is not bitwise equal to one evaluated alone);
at temperature > 0 a forced token draws no random number, so the samples after it differ from a run without
fast-forward at the same seed. llama.cpp's GBNF sampler cannot name forced tokens: :class:`GbnfRule` forces none.

Sequence 0's KV cells stay in the context after a call, so the next call reuses the longest common prefix of
its prompt (``cached_tokens``), like ``Llama``'s own prompt cache.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from rlmlab._interrupt import check_stop
from rlmlab.errors import RLMLabError

__all__ = ["BatchDecoder", "Decoded", "SamplerParams", "GbnfRule", "chat_prompt"]


@dataclass(frozen=True)
class SamplerParams:
    """How each sequence samples: ``temperature`` 0 is greedy; the rest are llama-cpp-python's chat defaults."""

    temperature: float = 0.0
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    typical_p: float = 1.0


@dataclass
class Decoded:
    """One sequence's completion: token ids (the end-of-generation token excluded), text, why it stopped, and
    the call's shared figures (every sequence of a batch carries the same ones)."""

    tokens: list[int]
    text: str
    finish_reason: str  # "stop" (end of generation or a stop string) or "length"
    prompt_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens whose KV cells the previous call left (not prefilled again)
    timing: dict[str, float] = field(default_factory=dict)  # prefill_s, decode_s, grammar_s (seconds)
    forced_tokens: int = 0  # tokens of ``tokens`` the grammar forced, fast-forwarded (evaluated in batches)


class GbnfRule:
    """One sequence's llama.cpp grammar sampler (GBNF): a rule object as :class:`BatchDecoder` uses it."""

    name = "gbnf"

    def __init__(self, decoder: "BatchDecoder", grammar: str, root: str = "root"):
        self.L, self.np, self.d = decoder.L, decoder.np, decoder
        self.sampler = self.L.llama_sampler_init_grammar(decoder.vocab, grammar.encode("utf-8"), root.encode("utf-8"))
        if not self.sampler:
            raise RLMLabError("grammar: llama.cpp could not parse it (see its log for the line)")

    def allows(self, tok: int) -> bool:
        one = self.d._one
        one["id"][0], one["logit"][0], one["p"][0] = tok, 1.0, 0.0
        arr = self.L.llama_token_data_array(data=one.ctypes.data_as(self.L.llama_token_data_p), size=1,
                                            selected=-1, sorted=False)
        self.L.llama_sampler_apply(self.sampler, ctypes.byref(arr))
        return bool(self.np.isfinite(one["logit"][0]))

    def mask(self, arr: Any) -> None:
        """Set the logit of every candidate of ``arr`` (a llama_token_data_array) the grammar forbids to -inf."""
        self.L.llama_sampler_apply(self.sampler, ctypes.byref(arr))

    def accept(self, tok: int) -> bool:
        """Advance past ``tok``; True when the grammar has ended (GBNF: never said, end of generation follows)."""
        self.L.llama_sampler_accept(self.sampler, tok)
        return False

    def forced(self) -> list[int]:
        """The tokens the grammar forces next: none known (llama.cpp's grammar sampler has no such query)."""
        return []

    def free(self) -> None:
        if self.sampler:
            self.L.llama_sampler_free(self.sampler)
            self.sampler = None


class _Sequence:
    """The sampling state of one sequence: its chain, its grammar rule, its tokens and text so far."""

    def __init__(self, L: Any, params: SamplerParams, seed: int, rule: Any):
        self.L, self.rule = L, rule
        self.chain = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
        add = lambda s: L.llama_sampler_chain_add(self.chain, s)  # noqa: E731
        if params.temperature <= 0:
            add(L.llama_sampler_init_greedy())
        else:
            add(L.llama_sampler_init_top_k(params.top_k))
            add(L.llama_sampler_init_typical(params.typical_p, 1))
            add(L.llama_sampler_init_top_p(params.top_p, 1))
            add(L.llama_sampler_init_min_p(params.min_p, 1))
            add(L.llama_sampler_init_temp(params.temperature))
            add(L.llama_sampler_init_dist(seed & 0xFFFFFFFF))
        self.tokens: list[int] = []
        self.data = bytearray()
        self.finish: str | None = None
        self.stop_at: int | None = None  # byte offset of a stop string found in the text
        self.forced = 0  # tokens fast-forwarded

    def free(self) -> None:
        if self.chain:
            self.L.llama_sampler_free(self.chain)
            self.chain = None
        if self.rule is not None:
            self.rule.free()


class BatchDecoder:
    """Batched, grammar-constrained sampling over a llama.cpp context of its own (see the module docstring).

    Args:
        llm: a ``llama_cpp.Llama``; its model is shared, its context is not (that one keeps serving the
            high-level calls: free decoding, log-probabilities, :meth:`LlamaEngine.accepts`).
        n_seq_max: the most sequences one call may decode (llama.cpp fixes it when the context is made).

    Not thread-safe: the caller serialises calls (LlamaEngine holds its model lock).
    """

    def __init__(self, llm: Any, n_seq_max: int = 8):
        import llama_cpp as L
        import numpy as np

        self.L, self.np, self.llm = L, np, llm
        params = L.llama_context_params()
        ctypes.memmove(ctypes.byref(params), ctypes.byref(llm.context_params), ctypes.sizeof(params))
        params.n_seq_max = n_seq_max
        params.kv_unified = True  # one KV buffer: the prompt's cells are shared by every sequence, not copied
        # Llama() leaves batches on every core whatever n_threads says; a batch of N decode tokens is this
        # context's usual work, so it gets the threads the caller asked for.
        params.n_threads_batch = params.n_threads
        self.ctx = L.llama_init_from_model(llm._model.model, params)
        if not self.ctx:
            raise RLMLabError(f"llama.cpp could not make a context for {n_seq_max} sequences")
        self.mem = L.llama_get_memory(self.ctx)
        self.n_ctx, self.n_seq_max = int(params.n_ctx), n_seq_max
        self.n_batch = int(params.n_batch)
        self.batch = L.llama_batch_init(max(self.n_batch, n_seq_max), 0, 1)
        self.vocab = llm._model.vocab
        self.n_vocab = int(L.llama_vocab_n_tokens(self.vocab))
        self._ids = np.arange(self.n_vocab, dtype=np.intc)
        self._cand = np.zeros(self.n_vocab, dtype=np.dtype([("id", np.intc), ("logit", np.single),
                                                            ("p", np.single)], align=True))
        self._one = np.zeros(1, dtype=self._cand.dtype)
        self.cached: list[int] = []  # the tokens whose KV cells sequence 0 holds, in order

    def close(self) -> None:
        if getattr(self, "ctx", None):
            self.L.llama_batch_free(self.batch)
            self.L.llama_free(self.ctx)
            self.ctx = None

    def __del__(self) -> None:  # pragma: no cover - interpreter teardown
        try:
            self.close()
        except Exception:
            pass

    def forget(self) -> None:
        """Drop the prompt cache: the next call prefills its whole prompt."""
        self.L.llama_memory_clear(self.mem, True)
        self.cached = []

    # -- the steps ------------------------------------------------------------------------------------------

    def _prefill(self, prompt: Sequence[int], reuse: bool) -> int:
        """Make sequence 0 hold ``prompt``; returns how many of its tokens were already there. The logits of its
        last token are the last output of the last ``llama_decode`` afterwards (index -1)."""
        L = self.L
        keep = 0
        if reuse:
            for a, b in zip(self.cached, prompt):
                if a != b:
                    break
                keep += 1
        keep = min(keep, len(prompt) - 1)  # the last prompt token is decoded again: its logits are needed
        L.llama_memory_seq_rm(self.mem, -1, keep, -1)
        self.cached = list(prompt[:keep])  # true even if a decode below fails
        for start in range(keep, len(prompt), self.n_batch):
            chunk = prompt[start:start + self.n_batch]
            b = self.batch
            for j, tok in enumerate(chunk):
                b.token[j], b.pos[j], b.n_seq_id[j], b.logits[j] = tok, start + j, 1, False
                b.seq_id[j][0] = 0
            b.logits[len(chunk) - 1] = start + len(chunk) == len(prompt)
            b.n_tokens = len(chunk)
            self._decode()
        self.cached = list(prompt)
        return keep

    def _decode(self) -> None:
        # Between two decodes (a prompt chunk, or one token of every sequence) Ctrl-C gets through: SIGINT's
        # KeyboardInterrupt in the main thread, check_stop in a thread asked to stop.
        check_stop()
        rc = self.L.llama_decode(self.ctx, self.batch)
        if rc != 0:
            raise RLMLabError(f"llama_decode returned {rc} (KV cache full or batch invalid)")

    def _sample(self, seq: _Sequence, out: int) -> tuple[int, float]:
        """The next token of ``seq`` from output ``out`` of the last decode; the seconds spent on the grammar."""
        L, np = self.L, self.np
        logits = np.ctypeslib.as_array(L.llama_get_logits_ith(self.ctx, out), shape=(self.n_vocab,))
        tok = self._apply(seq.chain, logits, None)
        spent = 0.0
        if seq.rule is not None:
            t0 = time.perf_counter()
            if not seq.rule.allows(tok):  # rejected: mask the whole vocabulary and sample again
                tok = self._apply(seq.chain, logits, seq.rule)
            if seq.rule.accept(tok):
                seq.finish = "stop"
            spent = time.perf_counter() - t0
        L.llama_sampler_accept(seq.chain, tok)
        return tok, spent

    def _apply(self, chain: Any, logits: Any, rule: Any) -> int:
        L, cand = self.L, self._cand
        cand["id"], cand["logit"], cand["p"] = self._ids, logits, 0.0
        arr = L.llama_token_data_array(data=cand.ctypes.data_as(L.llama_token_data_p), size=self.n_vocab,
                                       selected=-1, sorted=False)
        if rule is not None:
            rule.mask(arr)
        L.llama_sampler_apply(chain, ctypes.byref(arr))
        if arr.selected < 0:
            raise RLMLabError("sampler chain selected no token")
        return int(cand["id"][arr.selected])

    # -- the call -------------------------------------------------------------------------------------------

    def decode(self, prompt: Sequence[int], seeds: Sequence[int], params: SamplerParams, max_tokens: int,
               grammar: str | None = None, root: str = "root", stop: Sequence[str] = (),
               reuse: bool = True, rule: Any = GbnfRule, fast_forward: bool = True) -> list[Decoded]:
        """``len(seeds)`` completions of ``prompt`` (token ids, chat template applied), one per seed, in order.

        ``max_tokens`` caps each completion (lowered so that the prompt plus every sequence fits the context);
        ``grammar`` is GBNF text whose start rule is ``root``, enforced by ``rule(decoder, grammar, root)`` per
        sequence (:class:`GbnfRule`, or :class:`rlmlab.lm._guidance.GuidanceRule`); ``stop`` strings end a
        completion (not included). ``fast_forward`` evaluates the tokens the grammar forces in batches (see the
        module docstring); False samples every token.
        Raises RLMLabError when the prompt does not fit, more sequences than ``n_seq_max`` are asked for, or the
        grammar does not parse. The context is left with sequence 0 only, whatever happens.
        """
        L, n = self.L, len(seeds)
        if not 1 <= n <= self.n_seq_max:
            raise RLMLabError(f"seeds: {n} sequences; this decoder takes 1..{self.n_seq_max}")
        if not prompt:
            raise RLMLabError("prompt: no tokens")
        budget = (self.n_ctx - len(prompt)) // n
        if budget < 1:
            raise RLMLabError(f"prompt does not fit: {len(prompt)} tokens and {n} sequences in a "
                              f"{self.n_ctx}-token context")
        max_tokens = min(max_tokens, budget)
        stops = [s.encode("utf-8") for s in stop if s]
        seqs: list[_Sequence] = []
        timing = {"prefill_s": 0.0, "decode_s": 0.0, "grammar_s": 0.0}
        try:
            for seed in seeds:
                state = rule(self, grammar, root) if grammar is not None else None
                seqs.append(_Sequence(L, params, int(seed), state))
            t0 = time.perf_counter()
            # the grammar's opening run (field marker, echoed question) is the same for every sequence: prefilled
            head = list(seqs[0].rule.forced()) if fast_forward and seqs[0].rule is not None else []
            cached = min(self._prefill(list(prompt) + head, reuse), len(prompt))
            for i in range(1, n):
                L.llama_memory_seq_cp(self.mem, 0, i, -1, -1)
            for seq in seqs:
                self._take_forced(seq, head, max_tokens, stops)
            timing["prefill_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            # each sequence's first sampled token comes from the prefill's last output
            outs = {i: -1 for i in range(n) if seqs[i].finish is None}
            pos = [len(prompt) + len(head)] * n
            cap = max(0, self.n_batch // n - 1)  # forced tokens one sequence may add to one decode
            while outs:
                feeds: dict[int, list[int]] = {}
                for i, out in outs.items():
                    seq = seqs[i]
                    tok, spent = self._sample(seq, out)
                    if self._finished(seq, tok, max_tokens, stops):
                        timing["grammar_s"] += spent
                        continue
                    feed = [tok]
                    if fast_forward and seq.rule is not None:
                        t1 = time.perf_counter()
                        run = list(seq.rule.forced())[:cap]
                        ended = self._take_forced(seq, run, max_tokens, stops)
                        spent += time.perf_counter() - t1
                        if ended:
                            timing["grammar_s"] += spent
                            continue
                        feed += run
                    timing["grammar_s"] += spent
                    feeds[i] = feed
                if not feeds:
                    break
                b, j, outs = self.batch, 0, {}
                for i, feed in feeds.items():
                    for k, tok in enumerate(feed):  # only a sequence's last token needs logits
                        b.token[j], b.pos[j], b.n_seq_id[j], b.logits[j] = tok, pos[i] + k, 1, k == len(feed) - 1
                        b.seq_id[j][0] = i
                        j += 1
                    outs[i] = j - 1
                    pos[i] += len(feed)
                b.n_tokens = j
                self._decode()
                if 0 in feeds:
                    self.cached.extend(feeds[0])
            timing["decode_s"] = time.perf_counter() - t0 - timing["grammar_s"]
        finally:
            for i in range(1, self.n_seq_max):
                L.llama_memory_seq_rm(self.mem, i, -1, -1)
            for seq in seqs:
                seq.free()
        return [Decoded(s.tokens, self._text(s), s.finish or "length", len(prompt), cached, dict(timing), s.forced)
                for s in seqs]

    def _take_forced(self, seq: _Sequence, run: Sequence[int], max_tokens: int, stops: Sequence[bytes]) -> bool:
        """Append the forced ``run`` to ``seq`` (its grammar advanced past each token); True when ``seq`` ends
        inside it (grammar ended, a stop string, or ``max_tokens``): its remaining tokens are dropped."""
        for tok in run:
            if seq.rule.accept(tok):
                seq.finish = "stop"
            self.L.llama_sampler_accept(seq.chain, tok)
            seq.forced += 1
            if self._finished(seq, tok, max_tokens, stops):
                return True
        return False

    def _finished(self, seq: _Sequence, tok: int, max_tokens: int, stops: Sequence[bytes]) -> bool:
        """Record ``tok`` for ``seq``; True when the sequence ends here (and needs no further decode)."""
        if self.L.llama_vocab_is_eog(self.vocab, tok):
            seq.finish = "stop"
            return True
        seq.tokens.append(tok)
        seq.data += self.llm.detokenize([tok])
        if self._stop_found(seq, stops) or seq.finish == "stop":  # a stop string, or the grammar has ended
            seq.finish = "stop"
            return True
        if len(seq.tokens) >= max_tokens:
            seq.finish = "length"
            return True
        return False

    def _stop_found(self, seq: _Sequence, stops: Sequence[bytes]) -> bool:
        for s in stops:
            at = seq.data.find(s, max(0, len(seq.data) - len(s) - 64))
            if at >= 0:
                seq.stop_at = at
                return True
        return False

    def _text(self, seq: _Sequence) -> str:
        data = bytes(seq.data if seq.stop_at is None else seq.data[:seq.stop_at])
        return data.decode("utf-8", "ignore")


def chat_prompt(llm: Any, messages: list[dict[str, str]]) -> list[int]:
    """``messages`` as the prompt tokens ``Llama.create_chat_completion`` decodes: the model's own chat template
    (GGUF metadata; ChatML when it has none), special tokens parsed."""
    from llama_cpp import llama_chat_format

    formatter = getattr(llm, "_rlmlab_formatter", None)
    if formatter is None:
        template = llm.metadata.get("tokenizer.chat_template")
        if template:
            text = lambda tid: llm._model.token_get_text(tid) if tid != -1 else ""  # noqa: E731
            formatter = llama_chat_format.Jinja2ChatFormatter(template=template, eos_token=text(llm.token_eos()),
                                                              bos_token=text(llm.token_bos()))
        else:
            formatter = lambda messages: llama_chat_format.format_chatml(messages=messages)  # noqa: E731
        llm._rlmlab_formatter = formatter
    result = formatter(messages=messages)
    return llm.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)
