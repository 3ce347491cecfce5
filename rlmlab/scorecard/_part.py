"""One process of a scorecard run in several (:mod:`rlmlab.scorecard._procs`): ``python -m rlmlab.scorecard._part
'{"kwargs": {...}, "cores": [0]}'`` pins itself to ``cores`` (so the embedded model takes one thread per core)
and runs :func:`~rlmlab.scorecard.run_scorecard` with ``kwargs``, its progress lines on stdout. Exit status 130
when interrupted (its finished rows are in its card file), 1 on an error (one line on stdout)."""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> int:
    spec = json.loads(argv[1])
    cores = spec.get("cores")
    if cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, set(cores))
    from rlmlab.errors import RLMLabError
    from rlmlab.scorecard._run import run_scorecard

    try:
        run_scorecard(**spec["kwargs"], progress=lambda line: print(line, flush=True))
    except KeyboardInterrupt as exc:
        print(f"interrupted: {exc}", flush=True)
        return 130
    except (RLMLabError, ValueError, OSError) as exc:
        print(f"error: {type(exc).__name__}: {exc}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
