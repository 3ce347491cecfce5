"""Fast-forward: the tokens a grammar forces are evaluated in batches, not sampled one by one (issue 26)."""

from __future__ import annotations

import pytest

from rlmlab.executors import TimeBreakdown, time_breakdown
from rlmlab.lm import CallTiming, LMCall, constrained, make_lm


def test_the_time_breakdown_counts_the_fast_forwarded_tokens_apart_from_the_sampled_ones():
    timing = CallTiming(engine_ms=40.0, prefill_ms=25.0, decode_ms=10.0, prefill_tokens=300, decode_tokens=20,
                        cached_tokens=100, forced_tokens=33)
    old = {k: v for k, v in timing.to_dict().items() if k != "forced_tokens"}  # a call recorded before the field
    calls = [LMCall("m", "main", 10, 400, 53, 0.05, timing=timing.to_dict()),
             LMCall("m", "main", 10, 400, 20, 0.05, timing=old)]
    t = time_breakdown(200.0, calls, None)
    assert (t.forced_tokens, t.decode_tokens) == (33, 40)
    assert TimeBreakdown.from_json(t.to_json()) == t
    assert CallTiming.from_dict(old).forced_tokens == 0


# A forced opening (field marker and sentence), a choice the model makes, and a forced closing that ends the grammar.
CAPITAL = ('root ::= "[[ ## answer ## ]]\\nThe capital of France is " ("Paris" | "Rome" | "Berlin") '
           '".\\n\\n[[ ## completed ## ]]"')
ASK = [{"role": "user", "content": "What is the capital of France?"}]


class _Cfg:
    def __init__(self, temperature, max_tokens=40, seed=None):
        self.temperature, self.max_tokens, self.stop, self.seed = temperature, max_tokens, None, seed


@pytest.mark.local_model
def test_forced_tokens_are_fast_forwarded_and_the_greedy_text_is_the_same():
    pytest.importorskip("llguidance")
    on = make_lm("local", max_tokens=40, n_threads=1, fast_forward=True).rlmlab_engine
    off = make_lm("local", max_tokens=40, n_threads=1, fast_forward=False).rlmlab_engine
    with constrained(grammar=CAPITAL):
        fast, slow = on.generate(ASK, _Cfg(0.0)), off.generate(ASK, _Cfg(0.0))
        votes = on.generate_n(ASK, _Cfg(1.0), [1, 2])
    assert fast.text == slow.text and on.accepts(CAPITAL, fast.text)
    # the opening is prefilled with the prompt, the closing never decoded: one sampled token, the rest forced
    assert fast.timing.forced_tokens >= 15 and fast.timing.decode_tokens <= 2
    assert fast.timing.forced_tokens + fast.timing.decode_tokens == fast.output_tokens
    assert slow.timing.forced_tokens == 0 and slow.timing.decode_tokens == slow.output_tokens
    # in a batch each sequence fast-forwards on its own and ends where its grammar ends
    assert all(on.accepts(CAPITAL, v.text) and v.finish_reason == "stop" and v.timing.forced_tokens > 0
               for v in votes)
