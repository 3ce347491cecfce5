"""Bad input on the command line is one line naming the option, exit code 2, no traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from rlmlab.cli import main


@pytest.mark.parametrize("args, option, words", [
    (["--lm", "scripted"], "--lm", "named script"),
    (["--lm", "local:/nope/model.gguf"], "--lm", "no GGUF file at /nope/model.gguf"),
    (["--lm", "scripted:probe", "--turing", "--turing-config", "configs/turing.yml"], "--turing-config",
     "no such file"),
])
def test_rlm_run_reports_a_bad_option_in_one_line(tmp_path, args, option, words):
    source = tmp_path / "a.rs"
    source.write_text("fn main() {}\n")
    res = CliRunner().invoke(main, ["rlm", "run", "q", str(source), "--runs-dir", str(tmp_path), *args])
    assert res.exit_code == 2 and res.exception is None or isinstance(res.exception, SystemExit)
    assert option in res.output and words in res.output and "Traceback" not in res.output
    assert not list(tmp_path.glob("rlm-*"))  # nothing run, nothing written
