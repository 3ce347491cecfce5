"""Grounding of narrated contents: which claims of a reply nothing in the user turn read.

Claims come from :mod:`._narrated` (sentences such as "X contains ...") and :mod:`._answers` (the shapes of an
answer to a question about one named thing). Grounded: a tool call of the turn that read that thing (its
arguments name it; for a file or directory also a call naming no file at all, as RLM code over ``context``
does), a thing whose contents the user's message gives (pasted or described: even a misstated detail is then not
this hook's business), or contents that the context or the history already shows (restating the question,
quoting an earlier output).
"""

from __future__ import annotations

import functools
import json
import re

from rlmlab.turing.narrated._answers import affirms, answer_claims
from rlmlab.turing.narrated._events import event_claims
from rlmlab.turing.narrated._phrases import (EXCLUDED_NAME, FILE_PATTERN, DIR_PATTERN, THING_PATTERN, TOKEN_PATTERN, STOP_WORDS, NarratedClaim, judged_claims,
                                     generic_names, name_and_kind, prose_blocks, named_things)
from rlmlab.turing._turn import Turn

__all__ = ["narrated_claims", "narrated_spans", "ungrounded_claims"]


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


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in TOKEN_PATTERN.findall(text) if t.lower() not in STOP_WORDS]


def _shown_in(content: str, pool: str, name: str = "", shown: str = "") -> bool:
    """Most of the stated contents already appear in ``pool`` (the context, the turn's earlier rounds). The thing's
    own name counts only where ``shown`` (pasted blocks, earlier outputs) holds it: "- tests/" repeated as the
    listing of tests/ shows nothing a question naming tests/ held."""
    stem = name.rstrip("/").rsplit("/", 1)[-1].split(".")[0]  # "utils" of utils.py: the name said short
    own = set(_tokens(name.replace("/", " ") + " " + stem)) - set(_tokens(shown))
    words = [w for w in _tokens(content) if w not in own]
    if not words or not pool:
        return False
    have = set(_tokens(pool))
    return sum(w in have for w in words) / len(words) >= 0.75


def _named_targets(arguments: dict) -> list[str]:
    text = json.dumps(arguments, default=str)
    return re.findall(rf"{FILE_PATTERN}|{DIR_PATTERN}", text)


def _read_by(claim: NarratedClaim, turn: Turn) -> bool:
    """A tool call of the turn read the claim's thing: its arguments (or its name) name it; for a file or directory,
    also a call that names no file or directory at all (RLM code over ``context``); for a function or an unnamed
    thing, any call (the seed's rule: which file a call read does not tell). "The output of your code" is read by
    a call of this round only: an earlier round's output is in the history, where its contents are compared."""
    calls = turn.turn_tool_calls
    if claim.kind == "event":  # a run or a commit: any call or earlier output of the turn may have shown it
        return bool(calls) or any(step.output.strip() for step in turn.turn_steps)
    if claim.kind == "output":
        return bool(turn.tool_calls)
    if any(step.output.strip() and not step.tool_calls and _names(step.response, claim) for step in turn.turn_steps):
        return True  # an earlier round written as text ("TOOL: read_file({...})") read it and has an output
    if not calls:
        return False
    if claim.kind not in ("file", "directory", "command"):
        return True
    if claim.kind == "command":  # every word of the command (flags aside) in one call's arguments or name
        words = [w.rstrip("/").lower() for w in claim.name.split() if not w.startswith("-")]
        return any(all(w in f"{c.name} {json.dumps(c.arguments, default=str)}".lower() for w in words)
                   for c in calls)
    key = claim.name.lower().rstrip("/").rsplit("/", 1)[-1]
    return any(key in json.dumps(c.arguments, default=str).lower() or not _named_targets(c.arguments)
               for c in calls)


def _names(text: str, claim: NarratedClaim) -> bool:
    """``text`` names the claim's thing (a command: each of its words but flags)."""
    text = text.lower()
    if claim.kind == "command":
        words = [w.rstrip("/").lower() for w in claim.name.split() if not w.startswith("-")]
        return bool(words) and all(w in text for w in words)
    key = claim.name.lower().rstrip("/()").rsplit("/", 1)[-1]
    return bool(key) and key in text


# The user gives a thing's contents: "Here is my config.toml:", "My requirements.txt has flask==3.0.2".
_PASTED = re.compile(rf"(?:here\s+is|here's|this\s+is|below\s+is|attached\s+is)\s+(?:my|our|the)\s+"
                     rf"(?P<name>{THING_PATTERN})|\b(?:my|our)\s+(?P<name2>{THING_PATTERN})(?:\s+(?:file|directory|folder))?\s+"
                     rf"(?:has|have|contains?|holds?|lists?|says|reads|looks\s+like|is)\b|(?P<name3>{THING_PATTERN})\s*:\s*\n",
                     re.I)


_ASKING = re.compile(r"\?\s*$|^\s*(?:please\s+)?(?:read|tell|show|list|open|check|look|print|give|find|zeig|lies|"
                     r"montre|lis|muestra|lee|what|which|how|can\s+you|could\s+you)\b", re.I)


def _stated_names(context: str) -> set[str]:
    """Names whose contents the user's message itself gives (pasted or described): talking about them narrates
    nothing invented, even when the reply misstates them (accuracy is not this hook's business)."""
    # Only statements give contents: "What does my .bashrc contain?" and "Read X and tell me what it defines" ask.
    lines = context.split("\n")
    names = {n.lower() for i, line in enumerate(lines[:-1]) if lines[i + 1].lstrip().startswith("```")
             for n in [t[0] for t in named_things(line)] + re.findall(r"^\s*`?([A-Za-z_]\w*)`?\s+(?:in|is|from)\b", line)}
    context = "\n".join(sent for line in lines for sent in re.split(r"(?<=[.!?])\s+(?=[A-Z`])", line)
                        if not _ASKING.search(sent))
    names |= {c.name.lower() for c in narrated_claims(context)}
    for m in _PASTED.finditer(context):
        names.add(name_and_kind(m.group("name") or m.group("name2") or m.group("name3"))[0].lower())
    return names - {""}


def ungrounded_claims(turn: Turn) -> list[NarratedClaim]:
    """The narrated claims of ``turn.response`` that nothing in the user turn read (see the module doc)."""
    claims = narrated_claims(turn.response, turn.context)
    if not claims:
        return []
    stated = _stated_names(turn.context)
    pool = "\n".join([turn.context, turn.objective or ""] + [f"{s.response}\n{s.output}" for s in turn.history])
    shown = "\n".join([b for _, _, b in prose_blocks(turn.context)[1]] + [s.output for s in turn.history])
    pasted = "\n".join(b for _, _, b in prose_blocks(turn.context)[1]).lower()
    return [c for c in claims if c.name.lower() not in stated and not _read_by(c, turn)
            and (affirms(c, turn.context) or not _shown_in(c.content, pool, c.name, shown))
            and not _in_paste(c, pasted)]


def _in_paste(claim: NarratedClaim, pasted: str) -> bool:
    """A test, function or command that the user's pasted block shows ("test_login FAILED"): the reply talks about
    the pasted output. A file or directory named in a paste (a listing) still has unread contents."""
    return claim.kind not in ("file", "directory") and bool(claim.name) and claim.name.lower() in pasted
