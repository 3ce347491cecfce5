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
@pytest.mark.slow
def test_rlm_run_reports_a_bad_option_in_one_line(tmp_path, args, option, words):
    source = tmp_path / "a.rs"
    source.write_text("fn main() {}\n")
    res = CliRunner().invoke(main, ["rlm", "run", "q", str(source), "--runs-dir", str(tmp_path), *args])
    assert res.exit_code == 2 and res.exception is None or isinstance(res.exception, SystemExit)
    assert option in res.output and words in res.output and "Traceback" not in res.output
    assert not list(tmp_path.glob("rlm-*"))  # nothing run, nothing written


def test_repl_and_turing_log_refuse_a_file_that_is_not_their_database(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database\n")
    res = CliRunner().invoke(main, ["repl", "--store", str(junk)], input="")
    assert res.exit_code == 2 and res.stderr.startswith(f"Error: --store {junk}: not a SQLite database")
    res = CliRunner().invoke(main, ["turing", "log", "--db", str(junk)])
    assert res.exit_code == 2 and res.stderr.startswith(f"Error: --db {junk}: not an interaction log")
    assert junk.read_text() == "not a database\n"
