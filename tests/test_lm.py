import os
import shutil
import subprocess
import sys

import dspy
import pytest

from rlmlab.errors import MissingExtraError, RLMLabError
from rlmlab.lm import LenientChatAdapter, count_tokens, make_lm, recorder_of, salvage_fields


def test_scripted_replays_in_order_and_counts_tokens():
    lm = make_lm("scripted", script=["first answer", {"answer": "4"}])
    assert lm("What is 2+2?") == ["first answer"]
    calls = recorder_of(lm).calls
    assert calls[0].input_tokens == count_tokens("What is 2+2?") == 6
    assert calls[0].output_tokens == 2 and calls[0].prompt_chars == len("What is 2+2?")
    with dspy.context(lm=lm):
        assert dspy.Predict("question -> answer")(question="2+2?").answer == "4"
    second = recorder_of(lm).calls[1]
    assert second.input_tokens > 20 and second.latency_s >= 0
    with pytest.raises(Exception, match="ran out of responses after 2 calls"):
        lm("third")


def test_spec_errors_say_what_to_do():
    with pytest.raises(ValueError, match="use one of local, scripted"):
        make_lm("gpt4")
    with pytest.raises(ValueError, match="needs script="):
        make_lm("scripted")
    with pytest.raises(RLMLabError, match="no GGUF file at /nonexistent.gguf"):
        make_lm("local:/nonexistent.gguf")


def test_missing_extra_names_the_pip_install():
    err = MissingExtraError("the local model", "local", "llama-cpp-python")
    assert "pip install 'rlmlab[local]'" in str(err) and "llama-cpp-python" in str(err)


@pytest.mark.slow  # imports litellm (about 4 s)
def test_litellm_string_passes_through_to_dspy_lm():
    lm = make_lm("openai/gpt-4o-mini")
    assert isinstance(lm, dspy.LM) and lm.model == "openai/gpt-4o-mini"
    assert recorder_of(lm) in lm.callbacks


def test_lenient_adapter_salvages_off_format_code():
    reply = "I will look at the data.\n```python\nprint(ctx_peek(context, 100))\n```\nThen decide."
    assert salvage_fields(["reasoning", "code"], reply) == {
        "reasoning": "I will look at the data.\n\nThen decide.", "code": "print(ctx_peek(context, 100))"}
    lm = make_lm("scripted", script=[reply])
    adapter = LenientChatAdapter()
    with dspy.context(lm=lm, adapter=adapter):
        out = dspy.Predict("question -> reasoning, code")(question="q")
    assert out.code == "print(ctx_peek(context, 100))" and adapter.salvaged == 1


@pytest.mark.skipif(shutil.which("taskset") is None or not hasattr(os, "sched_getaffinity"),
                    reason="needs taskset (util-linux) and a platform with CPU affinity")
@pytest.mark.slow
def test_the_local_model_defaults_to_the_cores_the_process_may_run_on():
    """A run pinned to one core (taskset) gets one llama.cpp thread, not os.cpu_count()'s: two spinning threads
    on one core slow each other."""
    code = "from rlmlab.lm._engines import _usable_cores; print(_usable_cores())"
    pinned = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert pinned.stdout.strip() == "1"
    from rlmlab.lm._engines import _usable_cores

    assert _usable_cores() == len(os.sched_getaffinity(0))
