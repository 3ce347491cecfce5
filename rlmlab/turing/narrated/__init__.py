"""The narrated-contents detector of ``phantom_tool_result``: where a reply states what a named thing holds.

Small models answer "What is in config.toml?" with "The config.toml file contains `port = 8080`" having read
nothing. This package finds such claims and scores a turn's words; whether a claim is grounded, and when the model
may add a detection, is the hook's (:mod:`rlmlab.turing._phantom_hook`), which imports this package (this package
imports no part of the hook).

- ``_phrases``: the sentence patterns ("X contains ...", "It returns ...", "Here's the content of X:"), the names
  of things (files, directories, functions, commands) and the sentences that are plans, questions or general.
- ``_answers``: the shapes of an answer to a question about one named thing (a lead-in and a block, a block
  given as the thing, a function named bare, the answer to a closed question).
- ``_events``: reported events nothing in the turn observed (a run, a commit, a test tally).
- ``_claims``: :func:`narrated_claims`, the three merged.
- ``_model``: :class:`PhantomModel`, the learned second opinion, scored from :func:`phantom_features` without
  scikit-learn; ``_train`` fits and cross-validates it on rows of labelled turns.
"""

from rlmlab.turing.narrated._answers import affirms
from rlmlab.turing.narrated._claims import narrated_claims, narrated_spans
from rlmlab.turing.narrated._model import PHANTOM_MODEL_PATH, PhantomModel, default_phantom_model, phantom_features
from rlmlab.turing.narrated._phrases import (
    DIR_PATTERN, FILE_PATTERN, STOP_WORDS, THING_PATTERN, TOKEN_PATTERN, NarratedClaim, name_and_kind, named_things,
    prose_blocks,
)
from rlmlab.turing.narrated._train import (
    PHANTOM_THRESHOLDS, PHANTOM_TRAIN_FILES, PhantomRow, cross_validate_phantom, fit_phantom_model, pick_threshold,
)

__all__ = [
    "NarratedClaim", "narrated_claims", "narrated_spans", "affirms", "prose_blocks", "named_things", "name_and_kind",
    "FILE_PATTERN", "DIR_PATTERN", "THING_PATTERN", "TOKEN_PATTERN", "STOP_WORDS",
    "PHANTOM_MODEL_PATH", "PhantomModel", "default_phantom_model", "phantom_features",
    "PHANTOM_THRESHOLDS", "PHANTOM_TRAIN_FILES", "PhantomRow", "cross_validate_phantom", "fit_phantom_model",
    "pick_threshold",
]
