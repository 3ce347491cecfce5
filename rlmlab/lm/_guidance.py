"""llguidance as the constraint engine of :class:`~rlmlab.lm._batch.BatchDecoder` (measured against GBNF).

llguidance (PyPI ``llguidance``, the Rust engine behind guidance and llama.cpp's ``--llguidance`` build) compiles
a grammar once against the tokenizer and computes the set of allowed tokens as a bitmask. :class:`GuidanceRule`
gives it the interface of :class:`~rlmlab.lm._batch.GbnfRule`: the step grammars are GBNF, converted to Lark by
llguidance's own ``gbnf_to_lark``; a token is checked with ``validate_tokens``; on a rejection the bitmask is
computed and applied to the candidates' logits. benchmarks/decode.py compares both engines (speed, and acceptance
of the same texts); the engine keeps GBNF unless that benchmark shows llguidance faster at equal acceptance.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Any

from rlmlab.errors import MissingExtraError, RLMLabError

__all__ = ["GuidanceRule", "lark_grammar", "guidance_accepts", "guidance_or_gbnf"]

_log = logging.getLogger("rlmlab.lm")

_LOCK = threading.Lock()
_TOKENIZERS: dict[int, Any] = {}  # by address of the llama.cpp vocab: building one reads every token (~1 s)
_GRAMMARS: OrderedDict[str, str] = OrderedDict()  # GBNF text -> llguidance grammar, LRU-bounded
_WARNED: set[str] = set()  # grammars llguidance could not take, said once each


def _llguidance() -> Any:
    try:
        import llguidance
    except ImportError:
        raise MissingExtraError("the llguidance constraint engine", "local", "llguidance") from None
    return llguidance


def tokenizer_for(vocab: Any) -> Any:
    """llguidance's tokenizer over a llama.cpp vocabulary (built once per vocabulary)."""
    import ctypes

    key = ctypes.cast(vocab, ctypes.c_void_p).value or 0
    with _LOCK:
        if key not in _TOKENIZERS:
            _llguidance()
            import warnings

            from llguidance.llamacpp import lltokenizer_from_vocab

            with warnings.catch_warnings():  # it reads each token's attributes by a name llama-cpp-python deprecated
                warnings.simplefilter("ignore", DeprecationWarning)
                _TOKENIZERS[key] = lltokenizer_from_vocab(vocab)
        return _TOKENIZERS[key]


def lark_grammar(gbnf: str) -> str:
    """A GBNF grammar (start rule ``root``) as an llguidance grammar; RLMLabError naming the problem if llguidance
    cannot convert it."""
    with _LOCK:
        if gbnf in _GRAMMARS:
            _GRAMMARS.move_to_end(gbnf)
            return _GRAMMARS[gbnf]
    llg = _llguidance()
    try:
        built = llg.grammar_from("gbnf", gbnf)
    except ValueError as exc:
        raise RLMLabError(f"grammar: llguidance could not convert it ({exc})") from None
    with _LOCK:
        _GRAMMARS[gbnf] = built
        while len(_GRAMMARS) > 64:
            _GRAMMARS.popitem(last=False)
    return built


class GuidanceRule:
    """One sequence's llguidance matcher, with :class:`~rlmlab.lm._batch.GbnfRule`'s interface."""

    name = "llguidance"

    def __init__(self, decoder: Any, grammar: str, root: str = "root"):
        import numpy as np

        if root != "root":
            raise RLMLabError(f"grammar: llguidance takes GBNF whose start rule is 'root', not {root!r}")
        llg = _llguidance()
        self.np, self.d = np, decoder
        self.matcher = llg.LLMatcher(tokenizer_for(decoder.vocab), lark_grammar(grammar), log_level=0)
        if self.matcher.is_error():
            raise RLMLabError(f"grammar: llguidance: {self.matcher.get_error()}")
        self.bits = np.zeros((decoder.n_vocab + 31) // 32, dtype=np.int32)

    def allows(self, tok: int) -> bool:
        return self.matcher.validate_tokens([tok]) == 1

    def mask(self, arr: Any) -> None:
        """Set the logit of every token the grammar forbids to -inf in the decoder's candidate array."""
        np = self.np
        self.matcher.unsafe_compute_mask_ptr(self.bits.ctypes.data, self.bits.nbytes)
        allowed = np.unpackbits(self.bits.view(np.uint8), bitorder="little")[: self.d.n_vocab].astype(bool)
        self.d._cand["logit"][~allowed] = -np.inf

    def accept(self, tok: int) -> bool:
        """Advance past ``tok``; True when the grammar admits nothing more (the sequence ends)."""
        self.matcher.consume_token(tok)
        return self.matcher.is_stopped()

    def forced(self) -> list[int]:
        """The tokens the grammar forces next (llguidance's fast-forward tokens: the canonical tokens of the
        forced bytes, short of any last bytes a free token could extend); [] when the next token is a choice."""
        return self.matcher.compute_ff_tokens()

    def free(self) -> None:
        pass


def guidance_or_gbnf(decoder: Any, grammar: str, root: str = "root") -> Any:
    """A :class:`GuidanceRule`, or llama.cpp's :class:`~rlmlab.lm._batch.GbnfRule` when llguidance cannot take the
    grammar (said once per grammar in the log): the engine's "auto" choice."""
    from rlmlab.lm._batch import GbnfRule

    try:
        return GuidanceRule(decoder, grammar, root)
    except RLMLabError as exc:
        with _LOCK:
            first = grammar not in _WARNED
            _WARNED.add(grammar)
        if first:
            _log.warning("constraint engine: llguidance cannot take a grammar (%s); llama.cpp's GBNF sampler "
                         "decodes it", exc)
        return GbnfRule(decoder, grammar, root)


def guidance_accepts(decoder: Any, grammar: str, tokens: list[int], eos: int) -> bool:
    """Whether llguidance accepts ``tokens`` then end-of-sequence as a whole reply under ``grammar`` (GBNF)."""
    rule = GuidanceRule(decoder, grammar)
    m = rule.matcher
    return m.validate_tokens(tokens) == len(tokens) and m.consume_tokens(tokens) and (
        m.is_stopped() or m.validate_tokens([eos]) == 1)
