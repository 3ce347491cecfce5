"""Shared by the step-grammar tests: whether a GBNF grammar accepts a text whole."""

from __future__ import annotations


def accepts(grammar: str, text: str) -> bool:
    """Whether the GBNF ``grammar`` accepts ``text`` whole, byte by byte (llguidance's byte tokenizer)."""
    import llguidance

    tok = llguidance.LLTokenizer("byte")
    m = llguidance.LLMatcher(tok, llguidance.grammar_from("grammar", grammar), log_level=0)
    assert not m.is_error(), m.get_error()
    return m.consume_tokens(tok.tokenize_bytes(text.encode())) and m.is_accepting()
