"""``rlmlab demo``: the main job, one RLM task on the embedded model over a real Rust file."""

from __future__ import annotations

import glob
from pathlib import Path

import click

from rlmlab.cli._rlm import LM_HELP, run_and_show

RUST_REGISTRY = "/usr/share/cargo/registry"
DEMO_FILE = "tokio-[0-9]*/src/fs/file.rs"
DEMO_QUERY = "Find all async functions in this Rust file. Answer with grep -n style lines (LINE:TEXT)."


def demo_rust_file() -> Path:
    """tokio's src/fs/file.rs from Debian's librust-tokio-dev; a clear error if it is not installed."""
    found = sorted(glob.glob(f"{RUST_REGISTRY}/{DEMO_FILE}"))
    if not found:
        raise click.ClickException(
            f"no {DEMO_FILE} under {RUST_REGISTRY}. Install the Rust sources: "
            "apt-get install librust-tokio-dev (make demo does this)"
        )
    return Path(found[-1])


@click.command()
@click.option("--lm", "lm_spec", default="local", show_default=True, help=LM_HELP)
@click.option("--file", "path", default=None, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Rust file to analyse (default: tokio's src/fs/file.rs).")
@click.option("--max-iters", default=4, show_default=True, type=click.IntRange(1, 50))
@click.option("--runs-dir", default="runs", show_default=True, type=click.Path(file_okay=False))
@click.option("--turing/--no-turing", "turing_on", default=True, show_default=True,
              help="Check every step with the Turing Protocol (configs/turing.yaml).")
def demo(lm_spec: str, path: Path | None, max_iters: int, runs_dir: str, turing_on: bool) -> None:
    """Run one RLM task with the embedded SmolLM2 model on a real Rust file; write runs/<run-id>/."""
    target = path or demo_rust_file()
    raise SystemExit(run_and_show(DEMO_QUERY, target, lm_spec=lm_spec, context_mode="handle", max_iters=max_iters,
                                  runs_dir=runs_dir, step_timeout=30.0, n_threads=None,
                                  turing_config=Path("configs/turing.yaml") if turing_on else None))
