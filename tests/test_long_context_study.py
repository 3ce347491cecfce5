"""E15 on the embedded model at the two smallest sizes that show its point: one context inside the model's window and
one past it. The base model's prompt is capped by its window (the context cut, the cut said); the RLM's largest
prompt stays the same size while the context grows (the handle invariant); every number lands in e15.json."""

from __future__ import annotations

import json

import pytest

from rlmlab.scorecard import long_context_markdown, long_context_study

pytestmark = pytest.mark.local_model


def test_e15_on_the_embedded_model_inside_and_past_its_window(tmp_path):
    # the model's window set to 2,048 tokens: past it at 2,500 (rlmlab's token count; the model's is higher) with
    # the fewest tokens to prefill (prefill is most of the time: about 150 tokens/s here), and replies of at most
    # 128 tokens; the RLM's own prompts (about 1,200 tokens) still fit. The path is under test, not the answers.
    doc = long_context_study(lm="local", sizes=[500, 2500], n=1, suites=["needle"], out=tmp_path, max_iters=2,
                             lm_options={"n_ctx": 2048, "max_tokens": 128}, progress=None)
    assert json.loads((tmp_path / "e15.json").read_text()) == doc
    rows = {(r["size_tokens"], r["condition"]): r for r in doc["rows"]}
    assert set(rows) == {(s, c) for s in (500, 2500) for c in ("direct", "rlm_d1", "rlm_d2")}
    assert all(r["errors"] == 0 and r["n"] == 1 and r["cost"] == 0 for r in rows.values()), doc["rows"]
    small, large = rows[500, "direct"], rows[2500, "direct"]
    assert small["max_prompt_tokens"] < large["max_prompt_tokens"] <= 2048  # grows with the context, up to the window
    for cond in ("rlm_d1", "rlm_d2"):  # the RLM's prompt does not grow with the context
        assert rows[2500, cond]["max_prompt_tokens"] <= 1.3 * rows[500, cond]["max_prompt_tokens"]
    assert len(doc["comparisons"]) == 6 and "| needle | 2,500 | rlm_d1 - direct |" in long_context_markdown(doc)
