"""The ``phantom_tool_result`` hook: data or contents a reply presents that nothing in the user turn read.

What the reply narrates is found by the detector, :mod:`rlmlab.turing.narrated` (this module imports it; it never
imports this one). The hook itself is here, in three parts:

- Grounding: which narrated claims nothing in the user turn read. Grounded: a tool call of the turn that read
  that thing (its arguments name it; for a file or directory also a call naming no file at all, as RLM code over
  ``context`` does), a thing whose contents the user's message gives (pasted or described: even a misstated
  detail is then not this hook's business), or contents that the context or the history already shows
  (restating the question, quoting an earlier output).
- The rules' Stage 1 and Stage 2 (:func:`detect_phantom_tool_result`, :func:`validate_phantom_tool_result`;
  ``_validators`` registers them in the built-in order): an ungrounded claim, or data presented as obtained from
  a tool with no call in the turn.
- The learned model's glue: a turn's features, where the model may add a detection (:func:`model_may_fire`: no
  call and no earlier round, the seed's Stage 2; no claim the rules found grounded by the context or an earlier
  output; and something specific in the reply that the user's message does not hold, a number, a code span or
  block, a file name, an identifier, a quoted string, a list, outside a sentence that only supposes, "If ..."),
  its detection, and the labelled turns as training rows (:func:`phantom_rows`). The model only adds
  detections; the rules' detections stand as they are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from rlmlab.turing._eval import load_eval_cases
from rlmlab.turing._reply import first_unnegated, reply_prose
from rlmlab.turing._turn import Turn
from rlmlab.turing.narrated import (
    DIR_PATTERN, FILE_PATTERN, STOP_WORDS, THING_PATTERN, TOKEN_PATTERN, NarratedClaim, PhantomModel, PhantomRow,
    affirms, default_phantom_model, name_and_kind, named_things, narrated_claims, narrated_spans, phantom_features,
    prose_blocks,
)

__all__ = ["ungrounded_claims", "phantom_rules_verdict", "detect_phantom_tool_result", "validate_phantom_tool_result",
           "model_may_fire", "turn_features", "learned_score", "learned_detection", "LEARNED_DETECTION",
           "phantom_rows"]

HOOK = "phantom_tool_result"


# -- grounding ----------------------------------------------------------------------------------------

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


# -- the rules: Stage 1 and Stage 2 -------------------------------------------------------------------

_OBTAINED = re.compile(
    r"\b(?:I|we)\s+(?:have\s+)?(?:found|got|ran|searched|looked|checked|read|opened|listed|executed|grepped|"
    r"scanned|queried|retrieved|fetched)\b"
    r"|\bthe\s+(?:output|results?|search|grep|file|command|tool|listing|query)\s+(?:shows?|returns?|returned|contains?|"
    r"gave|lists?|listed|found|reveals?|revealed)\b"
    r"|\bhere\s+(?:is|are)\s+the\s+(?:results?|output|contents?|matches|lines|files|listing)\b"
    r"|\b(?:ctx_\w+|ast_query|grep|search|command|tool|call)\s+(?:returned|found|shows|showed|gave)\b"
    r"|\breturned\s+the\s+following\b|\b(?:output|results?)\s*:\s*\n"
    r"|\bhere(?:'s|\s+is|\s+are)\s+(?:a\s+summary\s+of\s+)?(?:the\s+)?(?:list|contents?|output|results?|summary|"
    r"listing|lines?|files?|matches)\b"
    r"|\b(?:the\s+)?(?:file|directory|folder|repository|repo|log|logs/?|config\S*|\S{1,80}\.(?:py|rs|txt|yaml|yml|json|"
    r"toml|log|cfg|ini)|\S{1,80}/)\s+(?:contains|has|lists|shows|includes|holds|enthält|contient)\b"
    r"|\bline\s+\d+\s+(?:of|in)\s+\S{1,80}\s+(?:is|says|reads|contains|has)\b"
    r"|\b(?:is|are)\s+defined\s+in\s+(?:the\s+)?`?[\w/.-]+\.(?:py|rs|js|ts|go)\b"
    r"|\b(?:ast_query|ctx_\w+|grep)\s+(?:found|returned|shows|listed)\b"
    r"|\bich\s+habe\s+\w*\s*(?:gefunden|gelesen|durchsucht|ausgeführt)",
    re.I)
# (Names above are bounded, \S{1,80}: an unbounded \S+ rescans to the end from every start, 5 s on 10 kB of "a.a.".)
_SPECIFIC_ITEM = re.compile(r"\b\d+\b|`[^`]+`|\b\w+\.(?:rs|py|txt|json|toml|md|yaml|log)\b|^\s*[-*]\s+\S", re.M)


def _specific_items(text: str) -> list[str]:
    return [m.group(0).strip(" `-*") for m in _SPECIFIC_ITEM.finditer(text)]


def _obtained_claim(response: str, context: str = "") -> str | None:
    """A claim of data obtained from a tool, outside the sentences that narrate a named thing's contents (those
    are judged by their own grounding rules, above)."""
    prose = list(response)
    for start, end in narrated_spans(response, context):
        prose[start:end] = " " * (end - start)
    text = reply_prose("".join(prose))
    claim = first_unnegated(_OBTAINED, text)
    return claim if claim is not None and _specific_items(text) else None


def _narration_reason(claim: NarratedClaim) -> str:
    if claim.kind == "event":  # "the last commit", "When I ran pytest, I encountered"
        return f"the reply reports an event nothing in the turn showed (\"{claim.sentence[:160]}\")"
    what = f"{claim.kind} {claim.name}" if claim.name else claim.subject
    return f"the reply states what the {what} contains (\"{claim.sentence[:160]}\")"


def _rules_detection(turn: Turn) -> str | None:
    claims = ungrounded_claims(turn)
    if claims:
        return _narration_reason(claims[0])
    claim = _obtained_claim(turn.response, turn.context)
    return f"the reply presents data as obtained from a tool (\"{claim}\")" if claim else None


def phantom_rules_verdict(turn: Turn) -> str | None:
    """The hand-written rules' verdict alone (detected and validated), without the learned model."""
    detection = _rules_detection(turn)
    return None if detection is None else _validate_rules(turn, detection)


def detect_phantom_tool_result(turn: Turn) -> str | None:
    detection = _rules_detection(turn)
    if detection is not None and _validate_rules(turn, detection) is not None:
        return detection
    return learned_detection(turn) or detection


def validate_phantom_tool_result(turn: Turn, detection: str | None, ctx: object) -> str | None:
    # ctx: the ValidatorContext every validator is given (_validators); the rules need no backend LM
    if detection is None:
        return None
    if detection.startswith(LEARNED_DETECTION):  # its own Stage 2: no call, no earlier round, nothing given holds it
        return detection + ", and no tool was called this turn" if model_may_fire(turn) else None
    return _validate_rules(turn, detection)


def _validate_rules(turn: Turn, detection: str) -> str | None:
    claims = ungrounded_claims(turn)
    if claims:  # narrated contents of a thing no call of the turn read and no context or earlier output shows
        return _narration_reason(claims[0]) + ", but nothing in this turn read it"
    if narrated_claims(turn.response, turn.context) and _obtained_claim(turn.response, turn.context) is None:
        return None  # every narrated claim is grounded and nothing else is presented as tool output
    # The seed's Stage 2 read per user turn: a call in any round of the turn may hold the data. (Checking the
    # data against those rounds' outputs instead would be stricter than the seed; it was measured and not
    # taken: studies/turing_eval/REPORT.md.)
    if turn.turn_tool_calls:
        return None
    # earlier outputs of the turn and what the user pasted (restating the context's own text is no phantom)
    pasted = re.findall(r"```[^\n]*\n(.*?)```", turn.context or "", re.S)
    outputs = "\n".join([step.output for step in turn.turn_steps] + pasted)
    items = [i for i in _specific_items(reply_prose(turn.response)) if i]
    if outputs and items and all(i in outputs for i in items):
        return None  # every specific item appeared verbatim in an earlier output of this user turn: grounded
    return detection + ", but no tool was called this turn"


# -- the learned model's glue ---------------------------------------------------------------------------

# Something specific: a number, a code span or block, a file name, an identifier (snake_case, camelCase), a quoted
# string, a list item. Its first word must be missing from the user's message for the reply to add it.
_ADDED_SPECIFIC = re.compile(r"```[\s\S]*?(?:```|$)|`[^`\n]+`|\b\d[\w.]*|\b\w+_\w+\b|\b[a-z]+[A-Z]\w*\b"
                             r"|\b\w+\.\w{1,5}\b|^\s*[-*]\s+\S+|\"[^\"\n]{2,}\"", re.M)
_TOKEN = re.compile(r"[\w.]+")
# A sentence that supposes rather than states ("If 31 passed and 4 failed, the rate is 89%."): its specifics are the
# supposition's, not the project's.
_SUPPOSING = re.compile(r"(?:^|(?<=[.!?])\s+|\n+)\s*(?:if|suppose|supposing|assuming|imagine|say|let's\s+say|wenn|"
                        r"falls|angenommen|si|supposons|suponiendo)\b[^.!?\n]*[.!?]?", re.I)


def _adds_specifics(response: str, context: str) -> bool:
    given = {w.lower().strip(".") for w in _TOKEN.findall(context)}
    for m in _ADDED_SPECIFIC.finditer(_SUPPOSING.sub(" ", response)):
        first = _TOKEN.search(m.group(0))
        if first is not None and first.group(0).lower().strip(".") not in given:
            return True
    return False


def model_may_fire(turn: Turn) -> bool:
    """Where the learned model may add a detection (see the module's docstring)."""
    if turn.turn_tool_calls or turn.history:
        return False
    if narrated_claims(turn.response, turn.context) and not ungrounded_claims(turn):
        return False  # every claim the rules found is grounded by what the turn was given
    return _adds_specifics(turn.response, turn.context)


def turn_features(turn: Turn, fired: bool) -> list[str]:
    """:func:`phantom_features` of a turn; ``fired``: whether the rules' detection held (detected and validated)."""
    return phantom_features(turn.response, turn.context, calls=len(turn.turn_tool_calls), rounds=len(turn.turn_steps),
                            fired=fired, narrated=len(narrated_claims(turn.response, turn.context)),
                            ungrounded=len(ungrounded_claims(turn)))


LEARNED_DETECTION = "the reply reads as narrating contents"


def learned_score(model: PhantomModel, turn: Turn) -> float:
    """``model``'s score of a turn the rules did not flag; 0.0 where :func:`model_may_fire` does not allow it."""
    return model.score(turn_features(turn, fired=False)) if model_may_fire(turn) else 0.0


def learned_detection(turn: Turn) -> str | None:
    """The model's detection where :func:`model_may_fire` allows it and the score reaches the threshold."""
    model = default_phantom_model()
    if model is None:
        return None
    p = learned_score(model, turn)
    if p < model.threshold:
        return None
    return (f"{LEARNED_DETECTION} nothing in this turn read (learned model: {p:.2f} >= {model.threshold:.2f}; "
            "no rule matched)")


def phantom_rows(files: Iterable[str | Path]) -> list[PhantomRow]:
    """One row per labelled turn of each file (the files' line format: ``data/turing_narrated.README.md``)."""
    rows = []
    for path in map(Path, files):
        for case in load_eval_cases(path):
            fired = phantom_rules_verdict(case.turn) is not None
            rows.append(PhantomRow(path.name, case.id, case.turn, HOOK in case.expected, fired,
                                   tuple(turn_features(case.turn, fired)), model_may_fire(case.turn)))
    return rows
