"""Narrated events: the reply reports what happened in the user's environment that nothing in the turn observed.

"Which tests failed when I ran pytest?" or "What changed in the last commit?" asks about an event (a run, a
commit, a build, a command the user ran) that only a tool call or the user's own paste can show. A small model
answers anyway: "The last commit changed the `main.rb` file ...", "The tests that failed in the last CI run were:",
"When I ran pytest, I encountered the following errors:", "The `cargo test` command failed with a `TypeError`".
:func:`event_claims` finds such sentences; they are :class:`~._phrases.NarratedClaim` of kind ``"event"``, whose
grounding (:mod:`rlmlab.turing._phantom_hook`) is any tool call or earlier output of the turn.

A claim needs the question to ask about such an event, a sentence that opens with the event as its subject (or the
model saying it ran the command), and something specific in that sentence or the next one that the question does
not already hold (a number, a backticked or quoted string, a file name, a list or block after a colon). Not a claim:
a reply that says it cannot see the run or asks the user to share or run something, and a sentence that hedges or
speaks in general ("usually", "for example", "would", "if").
"""

from __future__ import annotations

import re

from rlmlab.turing.narrated._phrases import UNKNOWN_PHRASES, NarratedClaim, prose_blocks, split_sentences

__all__ = ["event_claims"]

_NOUN = (r"commits?|commit\s+messages?|runs?|builds?|deploy(?:ment)?s?|releases?|pipelines?|jobs?|workflows?|"
         r"workflow\s+runs?|CI(?:\s+runs?)?|test\s+runs?|migrations?|pushe?s?|merges?|tags?|errors?|crash(?:es)?|"
         r"commands?|steps?|changes?|outputs?|log\s+entr(?:y|ies)")
_RECENT = r"last|latest|previous|most\s+recent|recent|current|newest|failing|failed"
_OUTCOME = (r"failed|fails|fail|passed|passes|succeeded|errored|crashed|exited|returned|reported|printed|showed|"
            r"gave|produced|output|threw|raised|broke|timed\s+out|regressed|changed")
# The user asks about an event only a tool (or their paste) can show.
_ASKS = re.compile(
    rf"\b(?:{_RECENT})\s+(?:[\w`'.-]+\s+){{0,2}}?(?:{_NOUN})\b"
    rf"|\b(?:which|what)\s+(?:tests?|steps?|jobs?|checks?|errors?)\s+(?:{_OUTCOME}|did|were|was)\b"
    rf"|\b(?:when|after)\s+I\s+ran\b|\bjust\s+now\b"
    rf"|\bwhat\s+(?:did|does)\s+(?:the\s+)?(?:{_RECENT}\s+)?(?:command|build|run|test|script|job|it)\s+"
    rf"(?:print|output|say|show|return|give|report)\b"
    rf"|\brun\s+(?:the\s+)?(?:tests?|test\s+suite|build|linter|benchmarks?)\b", re.I)
# A sentence whose subject is that event, or the model saying it ran the command.
_SUBJECT = re.compile(
    rf"^(?:(?:so|yes|sure|ok(?:ay)?|well)[,!]?\s+)?(?:"
    rf"(?:the|your|our|my)\s+(?:(?:{_RECENT})\s+)(?:[\w`'.:/-]+\s+){{0,4}}?(?:{_NOUN})(?:'s)?\b"
    rf"|(?:the\s+)?(?:tests?|steps?|jobs?|checks?)\s+that\s+(?:{_OUTCOME})\b"
    rf"|the\s+following\s+(?:[\w-]+\s+){{1,2}}?(?:{_OUTCOME}|were|occurred)\b"
    rf"|the\s+failing\s+(?:tests?|steps?|jobs?|checks?)\s+(?:are|were|is|was|include)\b"
    rf"|when\s+I\s+ran\s+[^,]{{1,80}},\s*I\s+(?:got|saw|encountered|found|received|noticed|observed)\b"
    rf"|(?:the\s+)?`[^`\n]{{1,80}}`\s+(?:command\s+|run\s+)?(?:{_OUTCOME}|ran)\b)", re.I)
_HEDGE = re.compile(
    r"\b(?:usually|typically|generally|normally|often|commonly|for\s+example|for\s+instance|e\.g\.|example|"
    r"hypothetical|would|could|might|may|if|whether|should|can)\b", re.I)
_DEFERS = re.compile(
    r"\b(?:please|could\s+you|can\s+you|you\s+(?:can|could|should|may|might|need\s+to|will\s+need\s+to))\s+"
    r"(?:\w+\s+){0,2}?(?:share|provide|paste|send|run|check|use|look|see|try|find|post|attach)\b", re.I)
_SPECIFIC = re.compile(r"\d+|`[^`\n]+`|\"[^\"\n]{2,}\"|\b[\w-]+\.[a-z]{1,5}\b")
_WORD = re.compile(r"[\w.-]+")
# A test run's tally: "48 passed, 2 failed", "12 tests passed and 1 failed", "3 failures, 1 error"
_TALLY = re.compile(r"\b\d+\s+(?:tests?\s+)?(?:passed|failed|failures?|errors?)\b\s*(?:,|;|and)\s*\d+\s+(?:tests?\s+)?"
                    r"(?:passed|failed|failures?|errors?|skipped|warnings?)\b", re.I)


def event_claims(response: str, context: str) -> list[NarratedClaim]:
    """Sentences of ``response`` that report an event ``context`` (the user's message) asks about, or a test run's
    tally ("48 passed, 2 failed") whatever was asked; see the module doc. At most one claim: the first one."""
    if "```" in context or context.count("\n") >= 3:
        return []  # the user pasted the output
    asks = bool(context) and _ASKS.search(context) is not None
    asked = {w.lower() for w in _WORD.findall(context)}
    prose, fences = prose_blocks(response)
    sentences = split_sentences(prose)
    for i, (start, sentence) in enumerate(sentences):
        if UNKNOWN_PHRASES.search(sentence) or _DEFERS.search(sentence):
            return []  # the reply says it cannot see the run, or hands the looking to the user
        if sentence.rstrip().endswith("?") or _HEDGE.search(sentence):
            continue
        tally = _TALLY.search(sentence)
        if tally and tally.group(0) not in context:
            return [NarratedClaim(tally.group(0), "test run", "event", sentence, sentence[tally.start():][:500], start)]
        m = _SUBJECT.match(sentence) if asks else None
        if not m:
            continue
        end = start + len(sentence)
        after = sentence[m.end():]
        if sentence.rstrip().endswith(":"):  # the list or block that follows is what it reports
            block = next((body for s, _, body in fences if s >= end - 1 and not prose[end:s].strip()),
                         prose[end:end + 400]).strip()
            if not block:
                continue
            after = f"{after} {block}"
        else:
            if i + 1 < len(sentences) and not _HEDGE.search(sentences[i + 1][1]):
                after += " " + sentences[i + 1][1]
            if not _specific(after, asked):
                continue
        return [NarratedClaim(m.group(0).strip(), m.group(0).strip(), "event", sentence, after.strip()[:500], start)]
    return []


def _specific(text: str, asked: set[str]) -> bool:
    """Something in ``text`` the question did not already hold: a number, a quoted string, a file name."""
    for m in _SPECIFIC.finditer(text):
        piece = m.group(0).strip("`\" ")
        if piece and not {w.lower() for w in _WORD.findall(piece)} <= asked:
            return True
    return False
