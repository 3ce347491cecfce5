"""A reply's narrated claims: the sentence patterns', the answer shapes' and the events' claims, merged."""

from __future__ import annotations

import functools

from rlmlab.turing.narrated._answers import answer_claims
from rlmlab.turing.narrated._events import event_claims
from rlmlab.turing.narrated._phrases import EXCLUDED_NAME, NarratedClaim, generic_names, judged_claims, prose_blocks

__all__ = ["narrated_claims", "narrated_spans"]


@functools.lru_cache(maxsize=64)  # Stage 1 and Stage 2 (and the other patterns) read the same reply
def _all_claims(response: str, context: str = "") -> tuple[NarratedClaim, ...]:
    claims = list(judged_claims(response, context))
    taken = {c.start for c in claims if c.name != EXCLUDED_NAME}
    generic = generic_names(prose_blocks(response)[0])  # "Here's a sample config.toml:": an example
    claims += [c for c in answer_claims(response, context, taken, {c.start for c in claims} - taken)
               if c.start not in taken and c.name.lower() not in generic]
    taken = {c.start for c in claims}
    claims += [c for c in event_claims(response, context) if c.start not in taken]
    return tuple(claims)


def narrated_claims(response: str, context: str = "") -> list[NarratedClaim]:
    """Sentences of the prose that state what a named file, directory, command output or function contains.

    Questions, plans, conditions, general statements, examples and "I don't know" sentences are left out, and so
    are the list items under a left-out lead-in. "It contains" is about the thing named last before it (or the
    one the user's ``context`` names). A sentence ending in ``:`` takes the fenced block after it as its content.
    """
    return [c for c in _all_claims(response, context) if c.name != EXCLUDED_NAME]


def narrated_spans(response: str, context: str = "") -> list[tuple[int, int]]:
    """(start, end) in the prose of every sentence that narrates a named thing's contents, as a claim or left out
    as a plan, question, general statement or admission (phantom_tool_result's other patterns skip them)."""
    return [(c.start, c.start + len(c.sentence)) for c in _all_claims(response, context)]
