"""What a run needs to be reproduced: git commit, model id, library versions, platform (``env.json``); the whole
record, plug-ins and data files included, is :mod:`rlmlab.provenance`'s ``provenance.json``."""

from __future__ import annotations

from rlmlab.provenance import LIBRARIES, environment

__all__ = ["environment", "LIBRARIES"]
