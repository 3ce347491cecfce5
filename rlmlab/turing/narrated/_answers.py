"""Answers to a question about one named thing: the reply's shape, not its phrasing, says it narrates contents.

:mod:`._phrases` finds sentences of the form "X contains ...". Replies to "What's in X?" often narrate without
such a sentence; three shapes are read here, each only when the user's message asks about one specific thing of
their project (a question or request naming it, not a kind of thing, an example or a general question):

- a lead-in that ends with ``:`` and refers to the thing or its parts ("Server.log:", "The list of files in the
  tests directory is:", "When running make, it prints the following messages:"), followed by a block or lines;
- a block presented as the thing: the reply opens with it, or the block names the thing in its first lines, or it
  defines the function or class asked about (``def get_user(...)`` answering "what does get_user return?");
- a sentence that names the function or class asked about (written bare, as ``validate_email``, not only as
  ``validate_email()``) and says what it returns, prints or contains, conditions on the input included ("if the
  address is invalid, it returns False");
- the answer to a closed question about the thing: "Yes, ..." to "Does settings.py define DATABASES?", or one
  value (a backticked or quoted value, a number, true/false other than the question's own words) in the first
  sentences answering "Which version does .python-version pin?", "What does config.py set DEBUG to?" or "What's
  the first line of README.md?" (there a one-line reply is the line). "No, ..." is not read: a denial is often
  the truth, and the labelled sets leave it out as uncertain.

A lead-in or a sentence that is a plan, an admission, or general ("a typical X", "for example") is not a claim,
and neither is a block that proposes a command (``ls tests/``).
"""

from __future__ import annotations

import re

from rlmlab.turing.narrated._phrases import (PYTHON_BUILTINS, COMMAND_LINE, GENERAL_PHRASES, IDENT_PATTERN, KIND_OF_WORD, PROJECT_WORDS, UNKNOWN_PHRASES,
                                     NarratedClaim, generic_names, only_named, prose_blocks, split_sentences,
                                     named_things)

__all__ = ["asked_things", "answer_claims", "affirms"]

# "the function validate_email", "the class UserRepository", "la fonction get_user", "the tests directory"
_NAMED_KIND = re.compile(
    rf"\b(?:function|fonction|Funktion|función|class|Klasse|classe|method|méthode|Methode)\s+`?(?P<f>{IDENT_PATTERN})`?"
    rf"|\b(?:the|my|your|this|our)\s+`?(?P<g>{IDENT_PATTERN}(?:/{IDENT_PATTERN}){{0,8}})`?\s+"
    rf"(?P<gk>function|class|method|directory|folder|module)\b",
    re.I)
_NOT_NAMES = frozenset("the a an this that my your our in of to is and named called which".split())
# The user asks about something of their project; not a kind ("a Makefile usually"), an example or advice.
_REQUEST = re.compile(r"\?|\b(?:show|tell|list|read|open|print|give|zeig|liste|montre|muestra|dime)\b", re.I)
_NOT_SPECIFIC = re.compile(r"(?<![\w./-])(?:any|every|usually|typically|generally|normally|in\s+general|example|sample|"
                           r"write|create|generate|should|good\s+name|normalerweise|üblicherweise|"
                           r"généralement|exemple)\b", re.I)
_PLAN = re.compile(r"\b(?:will|'ll|shall|going\s+to|let\s+me|let's|want\s+to|need\s+to|would|could|might|may|"
                   r"should|can|to\s+(?:see|find|check|view|list|get|read|run)|try|please)\b", re.I)
# Kind-level or illustrative talk; narrower than _phrases.GENERAL_PHRASES, whose articles ("a", "an") would also hit
# "Here's a breakdown of the contents:".
_KIND_TALK = re.compile(r"(?<![\w./-])(?:typical|typically|usually|generally|normally|in\s+general|example|examples|e\.g\.|"
                        r"for\s+instance|sample|hypothetical|imagine|suppose|basic|standard|template|exemple|"
                        r"Beispiel|ejemplo)\b", re.I)
_PARTS_OF = re.compile(r"(?i)^(?:so,?\s+)?the\s+(?:[\w-]+\s+)?(?:files?|contents?|entries|functions|services|"
                       r"dependencies|lines?|targets?|tests|classes)\s+(?:in|of|inside|from)\s+(?:the\s+|your\s+)?$")
# The question asks for the thing's text (a block answers it), not one fact of it ("tell me the base image").
_ASKS_FOR_CONTENTS = re.compile(r"\b(?:contains?|contents?|what(?:'s|\s+is|\s+are)\s+(?:in|on)|show|lines?|list|"
                                r"prints?|output|returns?|Inhalt|zeig|enthält|steht|contient|renvoie|contiene)\b",
                                re.I)
_ASKS_OUTPUT = re.compile(r"\b(?:print|prints|printed|output|show|shows|display|return|returns|list)\b", re.I)
_CONTENT_VERB = re.compile(r"\b(?:returns?|returned|prints?|printed|outputs?|yields?|contains?|holds?|raises?|"
                           r"gives?\s+back|renvoie|retourne|devuelve|liefert|gibt\s+\w+\s+zurück)\b", re.I)
_PARTS = re.compile(r"\b(?:contents?|files?|output|lines?|services|entries|functions|dependencies|messages|"
                    r"directories|targets?|list|listing|Inhalt|fichiers|Dateien)\b", re.I)
# A reply that opens with code or data: a comment, a bracket, a definition, "key = value", a Dockerfile or SQL line.
_CODE_START = re.compile(r"\s*(?:#|//|\{|\[|<\?|<!|\"\"\"|def\s|class\s|import\s|from\s\S+\simport|fn\s|use\s|"
                         r"pub\s|package\s|[\w.-]+\s*=\s*\S|[a-z_][\w.-]*:(?:[ \t]*$|[ \t]+[\w\"'\[{])|"
                         r"(?:FROM|RUN|CMD|ENV|COPY|WORKDIR|EXPOSE|ENTRYPOINT|ARG|"
                         r"SELECT|CREATE|INSERT|ALTER)\s+\S|\[[\w. \"-]+\]\s*$)", re.M)
# Code that reads the thing (``open("app.log")``, ``os.listdir("src")``, ``cat app.log``) proposes a step.
_READS_IT = re.compile(r"\b(?:open|read_text|read_file|readlines|listdir|scandir|glob|walk|cat|ls|head|tail|less|"
                       r"Get-Content|subprocess|os\.system)\b")
_DEFINES = r"(?:def|fn|func|function|class|struct|impl|sub)\s+{}\b"
# A closed question: yes/no about the thing, or one value of it.
_YES_NO = re.compile(r"^\s*(?:(?:does|do|did)\b|(?:is|are)\s+there\b.{0,80}?\b(?:in|inside)\b|"
                     r"(?:has|have)\b.{0,80}?\b(?:got|any)\b|(?:enthält|definiert|hat|contient|définit|tiene|"
                     r"contiene|define)\b)", re.I)
_YES = re.compile(r"^\s*(?:yes|yeah|yep|ja|oui|sí|si)\s*[,.!:;-]", re.I)
_VALUE_VERBS = (r"pins?|sets?|uses?|requires?|targets?|specif(?:y|ies)|exposes?|names?|listens?|points?|imports?|"
                r"depends?|defines?|declares?|configures?|runs?|starts?|installs?")
_ASKS_VALUE = re.compile(
    rf"\b(?:which|what)\s+(?:[\w-]+\s+){{0,3}}?(?:does|do|did|is|are)\b.{{0,80}}?\b(?:{_VALUE_VERBS})\b"
    r"|\bvalue\s+of\b|\b(?:first|last|second|top)\s+line\s+(?:of|in)\b|\bset\s+\S+\s+to\s*\?"
    r"|\bwhat(?:'s|\s+is|\s+are)\s+the\s+(?:[\w-]+\s+)?(?:port|version|image|name|value|url|host|database|"
    r"user|key|default|timeout|target)s?\b", re.I)
_ASKS_LINE = re.compile(r"\b(?:first|last|second|top)\s+line\b", re.I)
_VALUE = re.compile(r"`(?P<t>[^`\n]{1,80})`|\"(?P<q>[^\"\n]{1,80})\"|(?<!\w)'(?P<s>[^'\n\s][^'\n]{1,79})'(?!\w)"
                    r"|(?<![\w.])(?P<n>\d+(?:\.\d+)*)(?![\w.]*\w)|\b(?P<b>true|false|none|null|nil)\b", re.I)


def asked_things(context: str) -> list[tuple[str, str]]:
    """(name, kind) of the things a user's question or request names, a function or class first; [] when the
    message asks nothing specific (a kind, an example, advice)."""
    if not _REQUEST.search(context) or _NOT_SPECIFIC.search(context) or "```" in context:
        return []
    funcs: list[tuple[str, str]] = []
    for m in _NAMED_KIND.finditer(context):
        name, kind = (m.group("f"), "function") if m.group("f") else (m.group("g"), m.group("gk").lower())
        kind = "function" if kind == "class" else KIND_OF_WORD.get(kind, kind)
        if name.lower() not in _NOT_NAMES and ("." not in name or kind == "directory"):
            funcs.append((name.strip("`").rstrip("()"), kind))
    paths = [t for t in named_things(context) if t[0]]
    generic = generic_names(context)  # "a Cargo.toml file", "an example .gitignore"
    return [t for t in funcs + [p for p in paths if p[0].rstrip("()").lower() not in {f[0].lower() for f in funcs}]
            if t[0].lower() not in generic and (t[0].rstrip("()").lower() not in PYTHON_BUILTINS or len(paths) > 1)]


def _variants(name: str) -> str:
    """A pattern for ``name`` as written in a reply: any case, CamelCase also as snake_case."""
    bare = name.rstrip("()/")
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", bare).lower()
    alts = {re.escape(bare), re.escape(snake)}
    if "/" in bare:
        alts.add(re.escape(bare.rsplit("/", 1)[-1]))
    return rf"(?<![\w.])(?:{'|'.join(sorted(alts))})(?![\w])"


def _block_after(prose: str, fences: list[tuple[int, int, str]], end: int, response: str) -> str:
    """The fenced block or the lines right after offset ``end`` (a lead-in's colon)."""
    for s, _, body in fences:
        if s >= end - 1 and not prose[end:s].strip():
            return body
    tail = response[end:end + 400]
    return tail if tail.strip() and tail.lstrip("\n ").startswith(("-", "*", "#", "{", "[", "1", "`")) or \
        tail.startswith("\n") else ""


def answer_claims(response: str, context: str, taken: set[int], left_out: set[int]) -> list[NarratedClaim]:
    """Claims in the three shapes of the module doc about the thing the user asked about. ``taken`` holds the
    offsets of sentences already found as claims, ``left_out`` those left out as a plan, question or general
    statement; a function's sentence is read again ("In utils.py, the function f is defined, which returns ...")."""
    asked = asked_things(context)
    if not asked:
        return []
    name, kind = asked[0]
    if kind == "thing" and not PROJECT_WORDS.search(context):
        return []  # "What does `json.loads` return?": a bare name with nothing saying it is this project's
    rx = re.compile(_variants(name), re.I)
    prose, fences = prose_blocks(response)
    claims: list[NarratedClaim] = []
    last_named = False
    sentences = split_sentences(prose)
    for start, sentence in sentences:
        mention = rx.search(sentence)
        named_here, last_named = last_named, bool(mention)
        if start in taken or sentence.rstrip().endswith("?") or UNKNOWN_PHRASES.search(sentence):
            continue
        if sentence.rstrip().endswith(":"):  # a lead-in: its block or lines are the thing's contents
            if start in left_out or (kind in ("command", "thing") and not _ASKS_OUTPUT.search(context)):
                continue  # "Some key features of the `ls` command are:" answers what a command does
            body = _block_after(prose, fences, start + len(sentence), response)
            refers = mention or _PARTS.search(sentence) or (named_here and re.match(r"(?i)(?:they|it|these|this)\b",
                                                                                    sentence))
            if body.strip() and refers and not _PLAN.search(sentence) and not _KIND_TALK.search(sentence) and \
                    not COMMAND_LINE.match(body.strip()):
                claims.append(NarratedClaim(sentence, name, kind, sentence, body.strip()[:500], start))
            continue
        parts = mention and _PARTS_OF.search(sentence[:mention.start()])
        if parts and re.match(r"/?\s*(?:(?:folder|directory|dir|file|module)\s+)?(?:is|are|include|includes|contain)\b",
                              sentence[mention.end():]) and not \
                _PLAN.search(sentence) and not _KIND_TALK.search(sentence):
            claims.append(NarratedClaim(sentence, name, kind, sentence, sentence[mention.end():][:500], start))
            continue  # "The files in the src/ folder are ...", "The services of docker-compose.yml are ..."
        if kind != "function":
            continue
        it = re.search(r"(?i)(?:^|,\s*)(it|this\s+function|the\s+function|this\s+method)\b", sentence)
        at = mention.end() if mention else (it.end() if it and named_here else -1)
        verb = _CONTENT_VERB.search(sentence, at) if at >= 0 else None
        before = sentence[:mention.start()] if mention else ""
        if verb and not _PLAN.search(before) and not GENERAL_PHRASES.search(before) and not _PLAN.search(
                sentence[at:verb.start()]):
            claims.append(NarratedClaim(sentence[:at], name, kind, sentence, sentence[verb.start():][:500], start))
    closed = _closed_answer(prose, sentences, context, name, kind, taken | left_out)
    if closed is not None and not any(c.start == closed.start for c in claims):
        claims.append(closed)
    block = _block_claim(response, prose, fences, name, kind) if _ASKS_FOR_CONTENTS.search(context) else None
    if block is not None and not any(c.start == block.start for c in claims):
        claims.insert(0, block)
    return claims


def affirms(claim: NarratedClaim, context: str) -> bool:
    """The claim's sentence says "Yes" to the user's yes/no question about the thing's contents: restating the
    question's words then asserts them ("Yes, settings.py defines DATABASES")."""
    return bool(_YES.match(claim.sentence) and _YES_NO.match(context))


def _closed_answer(prose: str, sentences: list[tuple[int, str]], context: str, name: str, kind: str,
                   seen: set[int]) -> NarratedClaim | None:
    """The answer to a closed question about the thing (see the module doc), from the first two of the reply's
    ``sentences`` (:func:`split_sentences` of ``prose``); ``seen`` holds sentences already judged (a claim, or left out as
    a plan or a general statement)."""
    yes_no, value = bool(_YES_NO.match(context)), bool(_ASKS_VALUE.search(context))
    if not (yes_no or value) or kind == "command":
        return None
    asked_words = {w.lower() for w in re.findall(r"[\w.-]+", context)} | {name.lower().rstrip("()")}
    for start, sentence in sentences[:2]:
        if start in seen or sentence.rstrip().endswith("?") or UNKNOWN_PHRASES.search(sentence) or _PLAN.search(
                sentence) or _KIND_TALK.search(sentence):
            continue
        if yes_no and _YES.match(sentence):
            return NarratedClaim(name, name, kind, sentence, sentence[:500], start)
        if not value:
            continue
        for m in _VALUE.finditer(sentence):
            got = next(g for g in m.groups() if g is not None).strip().lower()
            if got not in asked_words and got.rstrip("()") not in asked_words:
                return NarratedClaim(name, name, kind, sentence, m.group(0), start)
        if _ASKS_LINE.search(context) and len(sentences) == 1 and "\n" not in prose.strip() and \
                len(sentence) <= 200:
            return NarratedClaim(name, name, kind, sentence, sentence, start)  # the reply is the line
    return None


def _block_claim(response: str, prose: str, fences: list[tuple[int, int, str]], name: str,
                 kind: str) -> NarratedClaim | None:
    """A block presented as the thing asked about (see the module doc)."""
    rx = re.compile(_variants(name), re.I)
    lead = re.match(r"\s*(?:([^\n]{0,100})\n\s*)?", response)
    opening = response[lead.end():] if lead and lead.group(1) is not None and len(lead.group(1)) <= 100 and (
        lead.group(1).rstrip().endswith(":") or rx.search(lead.group(1))) else response
    if opening.lstrip().startswith("```") or _CODE_START.match(opening):
        body = re.sub(r"^\s*```[^\n]*\n?", "", opening)
        after = prose[len(response) - len(opening):][:400]  # "```...``` This is a typical Cargo.toml."
        fenced = re.search(r"```[^\n]*\n.*?```(?P<after>.{0,200})", response, re.S)
        framed = _KIND_TALK.search(fenced.group("after") if fenced else after)
        if not only_named(body, name) and not COMMAND_LINE.match(body.lstrip()) and not framed and not UNKNOWN_PHRASES.search(
                body[:200]) and not _READS_IT.search(body[:400]):
            return NarratedClaim(name, name, kind, response[:160], body.strip()[:500], 0)
    for s, _, body in fences:
        head = "\n".join(body.strip().splitlines()[:3])
        intro = prose[max(0, s - 160):s].strip().rsplit("\n\n", 1)[-1]
        if _KIND_TALK.search(intro) or _PLAN.search(intro) or COMMAND_LINE.match(body.strip()) or _READS_IT.search(
                head) or only_named(body, name):
            continue
        if rx.search(head) or rx.search(intro.strip().splitlines()[-1] if intro.strip() else "") or (
                kind == "function" and re.search(_DEFINES.format(re.escape(name.rstrip("()"))), body)):
            return NarratedClaim(name, name, kind, intro.strip()[-160:] or body[:160], body.strip()[:500], s)
    return None

