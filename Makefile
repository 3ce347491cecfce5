# make demo / make test: each creates .venv if missing, installs what it needs, then runs.
VENV     ?= .venv
PY       := $(VENV)/bin/python
STAMP    := $(VENV)/.rlmlab-installed
RUST_SRC := /usr/share/cargo/registry
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test check install rust-src ctags chromium pyodide bubblewrap bench bench-smoke clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# Reinstall when pyproject.toml changes. llama-cpp-python compiles from source the
# first time (about 6 minutes on 2 cores); pip caches the wheel after that. --no-compile: pip would byte-compile
# every module of every package (109 s -> 59 s of install without it); Python compiles the modules a run imports
# the first time it imports them (about 12 s for everything the tests import).
#
# llama.cpp's AMX kernels (compiled in by -march=native on a CPU that has AMX) die with SIGILL on machines whose
# kernel disables AMX tile data per thread (ggml-org/llama.cpp PR 26954; seen here on a Xeon VM): the build leaves
# them out on x86_64 (-mno-amx-int8; AVX-512 and the rest stay native). pip reuses a wheel it built before whatever
# CMAKE_ARGS say, so after installing, rlmlab/lm/_selfcheck.py decodes a batch in a child process; if the child is
# killed by a signal, the cached wheel is dropped and llama-cpp-python is built again with these flags (once:
# the new wheel is cached).
LLAMA_CMAKE_ARGS := $(if $(filter x86_64,$(shell uname -m)),-DCMAKE_C_FLAGS=-mno-amx-int8 -DCMAKE_CXX_FLAGS=-mno-amx-int8)
LLAMA_ENV := CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc)
$(STAMP): pyproject.toml | $(PY)
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(LLAMA_ENV) $(PY) -m pip install --no-compile -e '.[local,test,ray,sandbox,inspect]'
	$(PY) rlmlab/lm/_selfcheck.py || { [ $$? = 3 ] && \
	  echo "rebuilding llama-cpp-python from source for this CPU (about 6 minutes on 2 cores)" && \
	  $(PY) -m pip cache remove llama_cpp_python && \
	  $(LLAMA_ENV) $(PY) -m pip install --no-compile --force-reinstall --no-deps \
	    "llama-cpp-python==$$($(PY) -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')" && \
	  $(PY) rlmlab/lm/_selfcheck.py; }
	$(VENV)/bin/rlmlab kernel install --sys-prefix  # also JupyterLab's widget saveState (lab/settings/overrides.json)
	touch $@

install: $(STAMP)

# Real Rust sources for the demo, oracle tests and benchmarks (Debian's librust-*-dev packages): tokio (with
# bytes and mio) for the generated suites, and the crates the paraphrase sets ask about (data/paraphrase/README.md).
RUST_CRATES := tokio log memchr smallvec either semver slab indexmap arrayvec itoa anyhow http once-cell \
               flate2 miniz-oxide tiny-keccak rustc-demangle owning-ref socket2 crc32fast adler valuable \
               crossbeam-channel hashbrown lock-api parking-lot scopeguard
rust-src:
	@ls -d $(RUST_SRC)/tokio-[0-9]* $(RUST_SRC)/log-[0-9]* $(RUST_SRC)/hashbrown-[0-9]* $(RUST_SRC)/arrayvec-[0-9]* $(RUST_SRC)/flate2-[0-9]* \
	  >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
	    $(addprefix librust-,$(addsuffix -dev,$(RUST_CRATES))); }

# Universal Ctags, the reference benchmarks/oracle.py compares TreeSitterOracle with, and the second opinion
# tests/test_taskgen.py checks generated code answers with.
ctags:
	@command -v ctags >/dev/null 2>&1 && ctags --version | grep -q Universal || { \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends universal-ctags; }

# Debian's bubblewrap: the default "confined" sandbox of the REPL worker (docs/sandboxes.md); without it rlmlab falls
# back to unshare, then to none with a warning.
bubblewrap:
	@command -v bwrap >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends bubblewrap; }

# Debian's Chromium for tests/test_browser.py (Playwright drives /usr/bin/chromium; it never downloads a browser).
chromium:
	@[ -x /usr/bin/chromium ] && [ -d /usr/share/fonts/truetype/dejavu ] || { \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; }

# Pyodide for the pyodide sandbox's tests (tests/test_pyodide_sandbox.py): Deno fetches it from npm into its cache
# once (13 MB); the sandbox itself then runs with --cached-only and no network permission.
pyodide: install
	$(VENV)/bin/deno cache --no-config --no-lock --node-modules-dir=false rlmlab/executors/_pyodide_runner.js

demo: install rust-src bubblewrap
	$(VENV)/bin/rlmlab demo

# Two passes that together run every test once. First the unit tier, the slow tests (`slow`: a process or a run per
# case, the heavier benchmark smokes), the notebooks (scripted LMs) and the real sandboxes on one pytest-xdist
# worker per core; then the tests that hold both cores, one at a time: the model's threads (llama.cpp's workers spin,
# so a second job beside them slows both), JupyterLab, the browser, Ray, the HTTP server. A marker added to
# pyproject.toml must be added to SERIAL_MARKERS or PARALLEL_MARKERS (tests/test_makefile.py checks it).
SERIAL_MARKERS   := local_model or browser or ray or server or lab
PARALLEL_MARKERS := slow or notebook or sandbox or long_context
SLOW_MARKERS     := $(SERIAL_MARKERS) or $(PARALLEL_MARKERS)
test: install rust-src ctags chromium bubblewrap pyodide
	env -u PYTHONDONTWRITEBYTECODE PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(PY) -m pytest -q -n auto --dist worksteal -m "not ($(SERIAL_MARKERS))" --durations=15
	env -u PYTHONDONTWRITEBYTECODE PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(PY) -m pytest --durations=15 -m "$(SERIAL_MARKERS)"

# ruff (the rules in pyproject.toml's [tool.ruff]), then the unit tests: no model, no notebooks, no browser, no Ray,
# no HTTP server, no JupyterLab, no real sandboxes (the `sandbox` marker: the red-team corpora and the pyodide
# backend), no million-token contexts (`long_context`) and none of the `slow` tests (a subprocess, a kernel or an
# experiment run per case, the heavier benchmark smokes); make test runs every one of them. One worker per core
# (pytest-xdist); its budget is 90 s on 2 cores. PYTHONDONTWRITEBYTECODE is dropped so pytest keeps its rewritten test
# modules and Python its bytecode between runs.
check: install rust-src ctags bubblewrap
	$(VENV)/bin/ruff check
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n auto --dist worksteal -m "not ($(SLOW_MARKERS))"

# Every benchmarks/*.py with --smoke (tiny sizes, scripted or no LM): it completes and writes its JSON. make check
# and make test run them (one that needs the real model says `# smoke-marks: local_model`: make test only), this
# target only them. No timing is asserted; ctags is used when installed, not needed.
bench-smoke: install rust-src bubblewrap
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n auto tests/test_benchmarks_smoke.py

bench: install rust-src ctags
	$(PY) benchmarks/leakage.py
	$(PY) benchmarks/oracle.py
	$(PY) benchmarks/turing.py
	$(PY) benchmarks/experiments.py
	$(PY) benchmarks/widgets.py

clean:
	rm -rf $(VENV) runs .pytest_cache
