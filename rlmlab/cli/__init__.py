"""The ``rlmlab`` command line: one module per command group."""

from __future__ import annotations

import click

from rlmlab.cli._demo import demo
from rlmlab.cli._experiment import experiment
from rlmlab.cli._kernel import kernel
from rlmlab.cli._memory import memory
from rlmlab.cli._oracle import oracle
from rlmlab.cli._repl import repl
from rlmlab.cli._rlm import rlm
from rlmlab.cli._scorecard import scorecard
from rlmlab.cli._tasks import tasks
from rlmlab.cli._teach import teach
from rlmlab.cli._turing import turing

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="rlmlab")
def main() -> None:
    """rlmlab: run, see, verify and improve Recursive Language Model agents."""


for command in (repl, kernel, demo, rlm, oracle, turing, teach, memory, experiment, tasks, scorecard):
    main.add_command(command)
