"""Programmatic detectors (Stage 1) and validators (Stage 2), each registered under its validator name.

A detector looks for the symptom in the reply (patterns, the turn's tool
calls) and returns a reason or None. A validator confirms or rejects a
detection by the spec's false-positive rules and returns the confirmed
reason or None. Hooks without a detection prompt skip Stage 1: their
validator is called with ``detection=None`` and both detects and confirms.

"This turn" is the user turn (:attr:`Turn.turn_tool_calls`): a call made in an
earlier inference round of the same user turn counts, as the seed's
``tool_calls_made`` does.

``phantom_tool_result``'s detector and validator are whole in :mod:`._phantom_hook`; this module registers them in
the built-in order (and ``unverified_completion`` leaves presented data to it).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rlmlab.registry import Registry
from rlmlab.turing._evidence import step_code, unsupported_submission
from rlmlab.turing._phantom_hook import detect_phantom_tool_result, validate_phantom_tool_result
from rlmlab.turing._reply import first_unnegated, reply_prose
from rlmlab.turing._turn import SUB_SESSION_TOOLS, Turn

__all__ = ["VALIDATORS", "PATTERN_DETECTORS", "ValidatorContext", "validator", "pattern_detector", "schema_errors",
           "is_courtesy_question", "ends_with_real_question", "ask_lm"]


@dataclass
class ValidatorContext:
    """What a validator may use besides the turn: the backend LM for ``llm`` validators."""

    lm: Any = None


Validator = Callable[[Turn, "str | None", ValidatorContext], "str | None"]
Detector = Callable[[Turn], "str | None"]

VALIDATORS: Registry = Registry("validator")  # name -> validate(turn, reason, context) -> correction or None
PATTERN_DETECTORS: Registry = Registry("pattern detector")  # name -> detect(turn) -> reason or None


def validator(name: str) -> Callable[[Validator], Validator]:
    """Register ``fn`` as the validator ``name`` (a hook's ``validator_fn_name``)."""
    return VALIDATORS.register(name)


def pattern_detector(name: str) -> Callable[[Detector], Detector]:
    """Register ``fn`` as the programmatic detector of the hook whose validator is ``name``."""
    return PATTERN_DETECTORS.register(name)


# -- workflow_spawn -----------------------------------------------------------------------------------

_SPAWN = re.compile(
    r"\b(?:I(?:'ve| have)?|we(?:'ve| have)?)\s+(?:just\s+|now\s+)?(?:started|launched|spawned|kicked off|created|"
    r"set up|initiated|begun|opened)\s+(?:a|an|the)?\s*(?:new\s+|separate\s+)?(?:background\s+)?"
    r"(?:session|workflow|task|job|sub-?agent|sub-?session|worker|process)\b"
    r"|\b(?:a|the)\s+(?:new\s+)?(?:background\s+)?(?:session|workflow|task|job|sub-?agent|sub-?session|worker)\s+"
    r"(?:has been|was|is now|is)\s+(?:started|launched|spawned|running|created|initiated)\b"
    r"|\b(?:is|are)\s+now\s+running\s+in\s+the\s+background\b"
    r"|\b(?:sub-?agent|worker|background\s+(?:task|job|session|process|worker))\s+(?:is\s+now|has\s+been|was|is)\s+"
    r"(?:\w+ing|started|launched|spawned|kicked\s+off|running)\b"
    r"|\bbackground\s+(?:task|job|session|process)\s+(?:kicked\s+off|started|launched|spawned|running)\b"
    r"|\bj'ai\s+(?:lancé|démarré|créé)\s+(?:une?\s+)?(?:nouvelle?\s+)?(?:tâche|session|processus|travail)"
    r"|\bhe\s+(?:iniciado|lanzado|creado)\s+(?:una?\s+)?(?:tarea|sesión|proceso)"
    r"|\bich\s+habe\s+(?:eine[nm]?\s+)?(?:neue[nm]?\s+)?(?:Hintergrund)?(?:sitzung|aufgabe|workflow|prozess|job)\w*"
    r"\s+(?:gestartet|angelegt|erstellt)",
    re.I)


@pattern_detector("validate_workflow_spawn")
def detect_workflow_spawn(turn: Turn) -> str | None:
    claim = first_unnegated(_SPAWN, reply_prose(turn.response))
    return f"the reply claims a background session was started (\"{claim}\")" if claim else None


@validator("validate_workflow_spawn")
def validate_workflow_spawn(turn: Turn, detection: str | None, ctx: ValidatorContext) -> str | None:
    if detection is None or turn.turn_tool_names & SUB_SESSION_TOOLS:
        return None  # a session really was started this user turn (in this round or an earlier one)
    return detection + ", but spawn_sub_session was never called"


# -- phantom_tool_result ------------------------------------------------------------------------------

# The hook is whole in _phantom_hook (its grounding, its rules, the learned model's glue); registered here, in the
# built-in order.
pattern_detector("validate_phantom_tool_result")(detect_phantom_tool_result)
validator("validate_phantom_tool_result")(validate_phantom_tool_result)


# -- empty_promise ------------------------------------------------------------------------------------

_ACTIONS = (r"check|look|search|find|read|open|run|execute|verify|investigate|analy[sz]e|fetch|get|scan|review|"
            r"examine|inspect|call|use|start|try|explore|grep|list|count|go through|dig|query|compute|calculate|"
            r"figure out|find out|take a look|have a look|do that|do this|handle|write|print|extract|fix|update|"
            r"edit|change|correct|patch|prepare|send|create|look up|summari[sz]e|test|compare|ensure|make sure|"
            r"set up|download|upload|install|deploy|restart|clean|fetch|collect|gather|monitor|watch|schedule|"
            r"provide|share|report|deliver")
_PROMISE = re.compile(
    rf"\b(?:I'll|I\s+will|I'm\s+going\s+to|I\s+am\s+going\s+to|I\s+shall|let\s+me|allow\s+me\s+to|I'd\s+like\s+to|"
    rf"I\s+need\s+to|I\s+can\s+now)\s+(?:\w+\s+){{0,3}}?(?:{_ACTIONS})\b"
    r"|\b(?:ich\s+werde|ich\s+schaue|ich\s+prüfe|ich\s+sehe\s+(?:mir|nach)|lass(?:en\s+Sie)?\s+mich|ich\s+suche|"
    r"ich\s+überprüfe|ich\s+kümmere\s+mich|ich\s+mache\s+mich)\b"
    r"|\b(?:je\s+vais|laissez-moi|laisse-moi)\s+(?:\w+\s+)?\w+(?:er|ir|re)\b|\bje\s+m'en\s+occupe\b|\bje\s+vérifie\b"
    r"|\b(?:voy\s+a|vamos\s+a|déjame|dejame)\s+\w+(?:ar|er|ir)\b|\blo\s+reviso\b",
    re.I)
_COURTESY = re.compile(
    r"(?:is\s+there\s+)?anything\s+else|something\s+else|any\s+other\s+questions?|need\s+anything|"
    r"can\s+I\s+help\s+(?:you\s+)?with\s+anything|how\s+else\s+can\s+I\s+help|let\s+me\s+know|"
    r"noch\s+etwas|sonst\s+noch|weitere\s+fragen|kann\s+ich\s+(?:sonst|noch)|autre\s+chose|"
    r"quelque\s+chose\s+d'autre|algo\s+más|alguna\s+otra", re.I)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if s.strip()]


def is_courtesy_question(sentence: str) -> bool:
    """A closing question that offers more help ("Anything else?"), as opposed to asking for confirmation."""
    return sentence.rstrip().endswith("?") and bool(_COURTESY.search(sentence)) and len(sentence) < 80


def ends_with_real_question(text: str) -> bool:
    """The reply ends with a question that seeks confirmation; trailing courtesy questions are set aside first,
    so "I'll check the file. Anything else?" does not end with a real question."""
    sentences = _sentences(reply_prose(text))
    while sentences and is_courtesy_question(sentences[-1]):
        sentences.pop()
    return bool(sentences) and sentences[-1].rstrip().endswith("?")


@pattern_detector("validate_empty_promise")
def detect_empty_promise(turn: Turn) -> str | None:
    claim = first_unnegated(_PROMISE, reply_prose(turn.response))
    return f"the reply commits to an action (\"{claim}\")" if claim else None


@validator("validate_empty_promise")
def validate_empty_promise(turn: Turn, detection: str | None, ctx: ValidatorContext) -> str | None:
    if detection is None or turn.turn_tool_calls:
        return None  # a tool was called this user turn: the promise was kept
    if ends_with_real_question(turn.response):
        return None  # asking for confirmation before acting is not an empty promise
    return detection + " but makes no tool call"


# -- unverified_completion ----------------------------------------------------------------------------

_DONE_WORDS = (r"added|scheduled|saved|created|deleted|removed|updated|renamed|sent|installed|deployed|fixed|"
               r"completed|configured|moved|enabled|disabled|restarted|booked|uploaded|committed|cancell?ed|"
               r"archived|merged|pushed|published|stored|registered|applied|changed|reset|cleared|cleaned\s+up|"
               r"written|copied|backed\s+up|set\s+up|set|done|finished|noted|recorded|logged|submitted|resolved|"
               r"closed|activated|turned\s+(?:on|off)|emailed|posted|renewed|paid|ordered|imported|exported")
_DONE_BASE = (r"add|schedule|save|create|delete|remove|update|rename|send|install|deploy|fix|complete|configure|"
              r"move|enable|disable|restart|book|upload|commit|cancel|archive|merge|push|publish|store|register|"
              r"apply|change|reset|clear|write|copy|finish|note|record|log|submit|resolve|close|activate")
_DE_DONE = (r"gespeichert|hinzugefügt|erstellt|gelöscht|geplant|angelegt|umbenannt|aktualisiert|gesendet|"
            r"verschickt|installiert|eingerichtet|erledigt|entfernt|geändert|behoben|eingetragen|notiert|"
            r"abgeschlossen|hochgeladen|verschoben|aktiviert|deaktiviert|gebucht|erfasst|vorgemerkt")
_FR_DONE = r"ajouté|enregistré|créé|supprimé|planifié|renommé|envoyé|mis\s+à\s+jour|terminé|installé|programmé"
_ES_DONE = r"añadid[oa]s?|guardad[oa]s?|cread[oa]s?|eliminad[oa]s?|programad[oa]s?|enviad[oa]s?|terminad[oa]s?"
_COMPLETION = re.compile(
    # a bare "Done." / "All set." / "Erledigt." / "C'est fait." / "Listo."
    r"^(?:(?:ok(?:ay)?|alright|sure|great|perfect|fine|gut|alles|voilà|vale)[,!.]?\s+)?(?:all\s+)?"
    r"(?:done|finished|completed|complete|all\s+set|erledigt|fertig|c'est\s+fait|fait|terminé|listo|hecho)"
    r"(?:\s+(?:now|already|for\s+you|schon|bereits))?\s*[.!]*$"
    # "It's done." / "Everything is set up." / "Das ist erledigt."
    r"|\b(?:it's|it\s+is|that's|that\s+is|everything(?:'s|\s+is)|all\s+is|this\s+is|es\s+ist|das\s+ist|alles\s+ist)"
    r"\s+(?:now\s+|already\s+|all\s+)?(?:done|finished|complete|completed|taken\s+care\s+of|set\s+up|erledigt|fertig)\b"
    # "Task scheduled." / "The skill has been added." / "Die Datei wurde gespeichert."
    rf"|^(?:the\s+|your\s+|a\s+|an\s+|die\s+|der\s+|das\s+|dein\w*\s+|ihr\w*\s+|le\s+|la\s+|les\s+|l'|el\s+|los\s+|"
    rf"las\s+)?[\w./'-]+(?:\s+[\w./'-]+){{0,3}}\s+(?:has\s+been\s+|have\s+been\s+|was\s+|were\s+|is\s+now\s+|"
    rf"are\s+now\s+|is\s+|are\s+|wurde\s+|wurden\s+|ist\s+|sind\s+|a\s+été\s+|ont\s+été\s+|est\s+|ha\s+sido\s+|"
    rf"fue\s+|está\s+)?(?:successfully\s+|now\s+|erfolgreich\s+)?(?:{_DONE_WORDS}|{_DE_DONE}|{_FR_DONE}|{_ES_DONE})"
    rf"(?:\s+(?:successfully|now|for\s+you|erfolgreich))?\s*[.!]*$"
    # "I have saved the note." / "I've added it." / "I has add the skill" / "I just scheduled it."
    rf"|\b(?:I|we)(?:'ve|\s+have|\s+has|\s+had)\s+(?:\w+\s+)?(?:(?:{_DONE_WORDS})\b|(?:{_DONE_BASE})\b)"
    rf"|\b(?:I|we)\s+(?:just\s+|already\s+|successfully\s+)?(?:{_DONE_WORDS})\b(?!\s+(?:to|for\s+you\s+to)\b)"
    # German, French, Spanish first person perfect
    rf"|\b(?:ich|wir)\s+(?:habe|haben)\b[^.!?]{{0,60}}?\b(?:{_DE_DONE})\b"
    rf"|\bj'ai\s+(?:\w+\s+){{0,4}}?(?:{_FR_DONE}|fait)\b|\bnous\s+avons\s+(?:\w+\s+){{0,4}}?(?:{_FR_DONE})\b"
    rf"|\b(?:he|hemos)\s+(?:{_ES_DONE.replace('[oa]s?', 'o')}|hecho)\b",
    re.I | re.M)
# The user is the subject ("Glad you got it done!", "Sie haben es gespeichert"): an acknowledgement, no claim.
_USER_SUBJECT = re.compile(
    r"\b(?:you|du|vous|tú|usted)\s+(?:have|had|did|got|are|were|just|already|finally|hast|habt|avez|as|has|"
    r"\w+ed)\b|\byou(?:'ve|'re)\b|\bSie\s+haben\b|\bglad\s+you\b|\b(?:good|great|nice)\s+(?:job|work)\b",
    re.I)


def _completion_claim(text: str) -> str | None:
    """The first sentence of the prose that claims an action was completed (not a question, not the user's work,
    not negated)."""
    for sentence in _sentences(reply_prose(text)):
        if sentence.rstrip().endswith("?") or _USER_SUBJECT.search(sentence):
            continue
        claim = first_unnegated(_COMPLETION, sentence)
        if claim:
            return claim
    return None


@pattern_detector("validate_unverified_completion")
def detect_unverified_completion(turn: Turn) -> str | None:
    claim = _completion_claim(turn.response)
    return f"the reply claims an action was completed (\"{claim}\")" if claim else None


@validator("validate_unverified_completion")
def validate_unverified_completion(turn: Turn, detection: str | None, ctx: ValidatorContext) -> str | None:
    if detection is None or turn.turn_tool_calls:
        return None  # it follows a real tool call of this user turn: the action may well be done
    if detect_workflow_spawn(turn) or detect_phantom_tool_result(turn):
        return None  # a claimed session start or presented data is those hooks' to correct, not a second hook's
    return detection + ", but no tool was called this turn"


# -- objective_completion (LLM) -----------------------------------------------------------------------

_VERDICT = re.compile(r"\b(NOT\s+MET|MET|UNMET)\b\s*[:\-—]?\s*(.*)", re.I | re.S)
_PROSE_UNMET = re.compile(r"^\s*no\b|\b(?:does|do|did)\s+not\s+(?:fully\s+)?(?:satisfy|meet|achieve|answer|complete)|"
                          r"\bnot\s+(?:fully\s+)?(?:satisfied|met|achieved|complete)\b|\bfails?\s+to\b", re.I)
_PROSE_MET = re.compile(r"^\s*yes\b|\b(?:fully\s+)?satisfies\b|\bis\s+(?:fully\s+)?(?:met|satisfied|achieved)\b", re.I)


@validator("validate_objective_completion")
def validate_objective_completion(turn: Turn, detection: str | None, ctx: ValidatorContext) -> str | None:
    if not (turn.final and turn.objective) or turn.tool_calls or ctx.lm is None:
        return None  # fires only on a final text-only reply with an objective, and needs a backend
    prompt = ("You judge whether a worker's final response satisfies its objective.\n"
              f"Objective: {turn.objective}\n\nFinal response:\n{turn.response}\n\n"
              "Does the response fully satisfy the objective? Answer with exactly one line: "
              "'MET: <reason>' or 'NOT MET: <reason>'.")
    reply = ask_lm(ctx.lm, prompt).strip()
    m = _VERDICT.search(reply)
    if m is not None:
        unmet = m.group(1).upper().replace(" ", "") in ("NOTMET", "UNMET")
        reason = m.group(2).strip()
    else:  # small judges answer in prose: "No, the response does not fully satisfy the objective."
        unmet = bool(_PROSE_UNMET.search(reply))
        if not unmet and not _PROSE_MET.search(reply):
            return None  # an unreadable judgement does not block the worker
        reason = reply
    if unmet:
        first = reason.splitlines()[0][:200] if reason else "objective not met"
        return f"the final response does not satisfy the objective ({first})"
    return None


def ask_lm(lm: Any, prompt: str) -> str:
    """One user-message call to a DSPy LM (or any callable taking a prompt), as text."""
    out = lm(prompt)
    return str(out[0] if isinstance(out, list) and out else out)


# -- agenda_complete ----------------------------------------------------------------------------------

@validator("validate_agenda_complete")
def validate_agenda_complete(turn: Turn, detection: str | None, ctx: ValidatorContext) -> str | None:
    call = turn.current_call
    if call is None or call.name != "agenda" or call.arguments.get("action") != "complete":
        return None
    reason = call.arguments.get("reason")
    text = reason.strip() if isinstance(reason, str) else ""
    if len(text) >= 10:
        return None
    what = "no reason" if not text else f"a reason of {len(text)} characters ({text!r})"
    return f"agenda(action='complete') with {what}; at least 10 characters of evidence are required"


# -- tool_schema_validation ---------------------------------------------------------------------------

def schema_errors(arguments: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """One line per JSON Schema violation, with the argument's path."""
    import jsonschema

    from rlmlab.handles import encode_handles

    check = jsonschema.Draft202012Validator(schema)
    lines = []
    for err in sorted(check.iter_errors(encode_handles(arguments)), key=lambda e: (list(e.path), e.message)):
        where = ".".join(str(p) for p in err.path) or "(arguments)"
        lines.append(f"- {where}: {err.message} [{err.validator}]")
    return lines


@validator("validate_tool_schema")
def validate_tool_schema(turn: Turn, detection: str | None, ctx: ValidatorContext) -> str | None:
    call = turn.current_call
    if call is None or call.name not in turn.tool_schemas:
        return None
    errors = schema_errors(call.arguments, turn.tool_schemas[call.name])
    return "\n".join(errors) if errors else None


# -- repetition_loop ----------------------------------------------------------------------------------

def _norm(text: str) -> str:
    return " ".join(text.split())


@validator("validate_repetition_loop")
def validate_repetition_loop(turn: Turn, detection: str | None, ctx: ValidatorContext) -> str | None:
    now = _norm(step_code(turn.response))
    if len(now) < 8:
        return None
    for back, step in enumerate(reversed(turn.history[-2:]), 1):
        before = _norm(step_code(step.response))
        ratio = 1.0 if before == now else difflib.SequenceMatcher(None, before, now).ratio()
        if ratio >= 0.9:
            return f"this step repeats the step {back} back ({ratio:.0%} identical)"
    return None


# -- final_without_evidence ---------------------------------------------------------------------------

@validator("validate_final_without_evidence")
def validate_final_without_evidence(turn: Turn, detection: str | None, ctx: ValidatorContext) -> str | None:
    return unsupported_submission(turn)  # the data flow of the step's code, see _evidence
