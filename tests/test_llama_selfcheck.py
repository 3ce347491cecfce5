"""``make install``'s check that llama-cpp-python runs here (rlmlab/lm/_selfcheck.py): a child killed by a signal
(SIGILL from instructions this CPU cannot run) is exit 3, which makes the Makefile rebuild the library; any other
failure is exit 4 with the child's output; the real library on this machine decodes (exit 0)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from rlmlab import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "rlmlab" / "lm" / "_selfcheck.py"


def _selfcheck():
    spec = importlib.util.spec_from_file_location("selfcheck", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_child_killed_by_sigill_is_exit_3_and_named(capsys):
    assert _selfcheck().main("import os, signal; os.kill(os.getpid(), signal.SIGILL)") == 3
    assert "killed by SIGILL" in capsys.readouterr().out


def test_a_child_that_fails_is_exit_4_with_its_error(capsys):
    assert _selfcheck().main("raise RuntimeError('no model here')") == 4
    assert "no model here" in capsys.readouterr().out


def test_the_makefile_rebuilds_only_on_a_signal_and_checks_again():
    text = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    assert "$(PY) rlmlab/lm/_selfcheck.py || { [ $$? = 3 ]" in text
    assert "pip cache remove llama_cpp_python" in text and "-mno-amx-int8" in text


@pytest.mark.local_model
def test_the_installed_llama_cpp_decodes_a_batch_on_this_cpu():
    run = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "runs the embedded model here" in run.stdout
