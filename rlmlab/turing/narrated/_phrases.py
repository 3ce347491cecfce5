"""The sentence patterns of narrated contents: the sentences in which a reply states what a named thing holds.

Small models answer "What is in config.toml?" with "The config.toml file contains `port = 8080`" having read
nothing. :func:`rlmlab.turing.narrated.narrated_claims` finds such statements in a reply's prose (English, German,
French, Spanish); this module reads them sentence by sentence: "X contains/returns/prints/lists ...", "It contains ..."
(the thing named just before), "Running X prints ...", "Here's the content of X:", "In X, ...", "There are N files
in X", "The build target is ..." (answering "tell me the build target of the Makefile"), and a bare block
answering "What's in X?". Not a claim: a question, a plan or a condition ("I will read config.toml", "Run `ls` to
see what logs/ contains"), a general statement or example ("A Cargo.toml usually lists ...", names the user asked
about as a kind), a definition of the kind ("Package.json is a JSON file that defines ..."), what a library
function or a command does in general (a command's output needs specifics: a number, a quoted string, a block),
or a sentence saying the data is not available.

Grounding (which claims nothing in the user turn read) is the hook's, :mod:`rlmlab.turing._phantom_hook`; the shapes
of an answer to a question about one named thing (a lead-in and a block, a function named bare) are in
:mod:`._answers`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["NarratedClaim", "PYTHON_BUILTINS", "COMMAND_LINE", "DIR_PATTERN", "EXCLUDED_NAME", "FILE_PATTERN",
           "GENERAL_PHRASES", "IDENT_PATTERN", "KIND_OF_WORD", "PROJECT_WORDS", "STOP_WORDS", "THING_PATTERN",
           "TOKEN_PATTERN", "UNKNOWN_PHRASES", "generic_names", "judged_claims", "name_and_kind", "only_named",
           "prose_blocks", "split_sentences", "named_things"]

_EXT = (r"py|rs|txt|md|json|toml|ya?ml|cfg|ini|conf|log|csv|sh|js|ts|go|c|h|cpp|hpp|java|rb|lock|xml|html|env|"
        r"sql|ipynb|tsv|dat|out|lst|tf|tfvars|hcl|prisma|proto|graphql|php|swift|kt|scala|cs|css|scss|vue|jsx|tsx|"
        r"lua|nix|properties|gradle|mk|cmake|bat|ps1|dart|mod|sum|pem|csproj|tex|rst|plist")
# Names are bounded ({0,60}) and possessive where nothing after them can start inside them: on a 10 kB run of
# "a.a.a..." unbounded ones cost seconds (every start position scans to the end).
FILE_PATTERN = (rf"(?:[\w.~-]{{0,60}}+/){{0,8}}+(?:[\w~-][\w.-]{{0,60}}\.(?:{_EXT})\b|"
         rf"(?<![\w./])\.(?:env(?:\.[a-z][\w-]{{0,20}}+)?|[a-z]+ignore|[a-z]+rc|[a-z]+(?:-[a-z]+)+|editorconfig|"
         rf"gitattributes|gitmodules)\b|\b(?:Makefile|Dockerfile|README|LICENSE|Procfile)\b)")
DIR_PATTERN = r"(?:\.{0,2}/)?[\w.-]{1,60}+(?:/[\w.-]{1,60}+){0,8}+/(?![\w/])"
_FUNC = r"[A-Za-z_][\w.:]{0,60}+\(\)"
_TICK = r"`[^`\n]{1,80}`"
IDENT_PATTERN = r"[A-Za-z_][\w.:-]{0,60}+"
_KIND = (r"file|directory|folder|dir|repository|repo|module|script|function|method|class|command|program|"
         r"Datei|Verzeichnis|Ordner|Funktion|Befehl|Methode")
THING_PATTERN = rf"(?:{_TICK}|{FILE_PATTERN}|{_FUNC}|{DIR_PATTERN})"
_THING_RX = re.compile(THING_PATTERN)
# "the config.yaml file", "`ls -la`", "the parse_config function", "die Datei config.yaml", "le fichier a.txt"
_SUBJECT = (rf"(?:(?:the|this|that|your|my|die|das|der|dem|den|le|la|les|l'|el|los|las|du|des)\s+)?"
            rf"(?:(?:{_KIND}|fichier|répertoire|dossier|fonction|commande|archivo|fichero|directorio|carpeta|"
            rf"función|comando)\s+)?"
            rf"(?:{THING_PATTERN}|(?<=\s){IDENT_PATTERN}(?:/{IDENT_PATTERN}){{0,8}}(?=\s+(?:{_KIND})\b))"
            rf"(?:\s+(?:{_KIND}))?")
_VERBS_EN = (r"contains?|contained|has|had|holds?|held|includes?|included|lists?|listed|shows?|showed|displays?|"
             r"defines?|defined|declares?|returns?|returned|prints?|printed|outputs?|yields?|gives?|gave|reads?|"
             r"says|said|stores?|exports?|imports?|provides?|offers?|describes?|mentions?|consists\s+of|"
             r"looks\s+like|produces?|produced|emits?|"
             r"is\s+made\s+up\s+of|is\s+composed\s+of|is\s+as\s+follows|are\s+as\s+follows|is\s+(?:a\s+)?list\s+of|"
             r"is\s+(?:empty|blank)|are\s+empty|sets?|configures?|specifies|calls")
_VERBS_XX = (r"enthält|enthielt|beinhaltet|listet|zeigt|liefert|gibt|definiert|druckt|"
             r"contient|contenait|renvoie|retourne|affiche|liste|définit|comprend|"
             r"contiene|devuelve|retorna|muestra|imprime|incluye|define|tiene|hat|hatte")
_PRONOUN = (r"(?:it|this|(?:this|the)\s+(?:file|function|directory|folder|script|module|class|method|log\s*file)|es|il|elle|"
            r"(?:die|diese|das)\s+(?:Datei|Logdatei|Funktion)|(?:le|ce)\s+fichier|(?:el|este)\s+(?:archivo|fichero))")
# "The file has 3 errors on line 4": a file the reply names only by its kind (see judged_claims)
_FILE_WORD = re.compile(r"\b(?:file|log\s*file|Datei|Logdatei|fichier|archivo|fichero)\b", re.I)
# After a pronoun only the verbs that state contents ("This gives you ...", "It shows how ..." are too common).
_VERBS_PRONOUN = (r"contains?|contained|includes?|lists?|holds?|defines?|declares?|returns?|prints?|outputs?|has|"
                  r"had|reads|says|consists\s+of|stores?|exports?|imports?|enthält|beinhaltet|definiert|contient|"
                  r"définit|renvoie|retourne|contiene|devuelve|incluye|define|hat|hatte|zeigt|a(?=\s+\d)|tiene")
_NOT_CONTENTS = r"(?!\s+(?:been|to|no\s+idea|nothing\s+to\s+do)\b)"  # "has been updated", "has to be"
_NARRATION = re.compile(
    # "config.toml contains ...", "`cli.py` will return ...", "The function `parse` in `cli.py` returns ..."
    rf"(?P<subject>{_SUBJECT})(?:\s+(?:in|of|from)\s+{THING_PATTERN})?\s*,?\s+(?:(?:also|only|currently|now|just|"
    rf"actually|already|will|auch|nur|aussi|también)\s+)?(?P<verb>{_VERBS_EN}|{_VERBS_XX})\b{_NOT_CONTENTS}"
    # "The config.toml file is a configuration file that defines ..."
    rf"|(?P<subject6>{_SUBJECT})\s+(?:is|was)\s+(?:a|an|the)\s+(?:[\w-]+\s+){{0,4}}?(?:that|which)\s+(?:also\s+)?"
    rf"(?P<verb6>{_VERBS_EN})\b"
    # "It contains ...", "This function returns ...": the thing named just before (or in the user's message)
    rf"|^(?P<pronoun>{_PRONOUN})\s+(?:(?:also|only)\s+)?(?P<verb7>{_VERBS_PRONOUN})\b{_NOT_CONTENTS}"
    # "Running `cargo test` prints ...", "Executing ls shows ..."
    rf"|(?:running|executing|calling|the\s+output\s+of|the\s+result\s+of)\s+(?P<subject2>{THING_PATTERN}|{IDENT_PATTERN}"
    rf"(?:\s+-{{0,2}}[\w./-]+){{0,3}}?)"
    rf"(?:\s+(?:command|function))?\s*,?\s+(?:will\s+)?(?:(?:typically|usually|likely|probably|normally)\s+)?"
    rf"(?P<verb2>{_VERBS_EN}|is|are|was|were|be|gives|returns)\b"
    # "Here's the content of config.yaml:", "Here's a sample of your requirements.txt file:"
    rf"|(?:here(?:'s|\s+is|\s+are)|below\s+(?:is|are)|voici|voilà|hier\s+(?:ist|sind)|aquí\s+(?:está|están|tienes))"
    rf"\s+(?:a\s+summary\s+of\s+)?(?:the\s+|a\s+|le\s+|la\s+|der\s+|die\s+|el\s+|la\s+)?"
    rf"(?:(?:full|complete|entire|whole|first|current)\s+)?"
    rf"(?P<verb3>contents?|content|listing|list\s+of\s+(?:files|functions|entries|lines|tests)|output|"
    rf"source(?:\s+code)?|code|lines?|text|result|sample|copy|snippet|excerpt|version|preview|contenu|Inhalt|"
    rf"contenido|liste|lista|Ausgabe|sortie|salida)"
    rf"\s+(?:of|in|from|for|de|du|des|von|der|des|del)\s+(?P<subject3>{_SUBJECT})"
    # "There are three files in logs/: ...", "The first line of config.toml is ...", "config.toml's contents are"
    rf"|\bthere\s+(?:is|are)\s+(?P<verb8>[^.:;]{{1,60}}?)\s+(?:in|inside)\s+(?P<subject8>{_SUBJECT})"
    rf"|\bthe\s+(?:first|last|second|top|only)\s+(?:\w+\s+)?(?:lines?|entry|entries|function|item)\s+(?:of|in)\s+"
    rf"(?P<subject9>{_SUBJECT})\s+(?:is|are|reads?|says)\b"
    rf"|(?P<subject10>{_SUBJECT})'s\s+(?:contents?|output|first\s+line)\s+(?:is|are|includes?|shows?)\b"
    # "When you run `pytest -q`, you'll see ...": what the run prints (a claim only with specifics, see below)
    rf"|^when\s+(?:(?:you|I|we)\s+(?:run|execute|call)|running|executing|calling)\s+"
    rf"(?P<subject11>{THING_PATTERN}|{IDENT_PATTERN}(?:\s+-{{0,2}}[\w./-]+){{0,3}}?)"
    rf"\s*,\s*(?:it\s+(?:will\s+)?(?:prints?|shows?|outputs?|returns?|gives?|displays?)|you(?:'ll|\s+will|\s+should)?"
    rf"\s+(?:see|get))\b"
    # "The contents of config.yaml are ...", "the output of `ls` is ..."
    rf"|the\s+(?P<verb4>contents?|content|output|listing|text|source)\s+of\s+(?P<subject4>{_SUBJECT}|"
    rf"(?:this|that|the)\s+(?:file|directory|folder|function|script))\s+"
    rf"(?:will\s+)?(?:(?:typically|usually|likely|probably|normally)\s+)?"
    rf"(?:is|are|was|were|be|reads?|looks?\s+like|shows?|includes?)\b"
    # "In the file you'll find:", "In der Datei settings.yaml, the default is ...", "Inside src/ there is ..."
    rf"|\b(?:in|inside|within|im|dans|en)\s+(?P<subject5>{_SUBJECT}|the\s+(?:{_KIND}))\s*(?:,\s*|\s+(?=there|"
    rf"you|we|I\b|steht|stehen|befinde|gibt|il\s+y|on\s+trouve|hay|se\s+encuentra))(?P<verb5>\S+)",
    re.I)

# A plan, condition, question or instruction: "I will read X", "To see what X contains, run cat", "If X contains".
_INTENT = re.compile(
    r"\b(?:will|'ll|shall|going\s+to|gonna|let\s+me|let's|want\s+to|need\s+to|would|could|might|may|should|"
    r"can|if|whether|once|unless|when|whenever|after\s+you|to\s+(?:see|find|check|know|view|list|get|read|learn|"
    r"confirm|verify|inspect|call|use|run|print|open|look|show|display|test|execute)|next\s+step|try|please|"
    r"werde|wird|würde|kann|könnte|falls|wenn|ob|vais|va|pourrait|peut|si|voy|va\s+a|puede|podría)\b"
    r"|\b(?:what|which|how\s+many|welche|ce\s+que|qué|lo\s+que)\s+(?:\S+\s+){0,4}?$", re.I)
# The same words after the subject of "In config.toml, you can set ..." (the sentence goes on past the match).
_MODAL_AFTER = re.compile(r"\b(?:you|we|I)\s+(?:can|could|should|might|may|need|will|'ll|would)\b|\bif\b", re.I)
# "In variables.tf, `region` is a variable that ...": what the key is, a definition, not the value it has there.
_DEFINED_AFTER = re.compile(r"(?!(?:which|that|who|it|this)\b)(?:the\s+)?`?[\w.-]+`?\s+(?:is|are)\s+(?:a|an)\s+(?!\d)",
                            re.I)
# The user's own thing, never a general one: "your requirements.txt", "my config.toml".
_OWN = re.compile(r"\b(?:your|my|our|this\s+project's|dein\w*|ihr\w*|votre|ton|tu|su)\b", re.I)
# A name introduced as a kind of thing ("a Cargo.toml file", "a sample config.yaml"): later claims about it are
# general too.
_GENERIC_INTRO = re.compile(rf"\b(?:a|an|any|every|each|some|typical|sample|example|usual)\s+(?:[\w-]+\s+){{0,2}}?"
                            rf"(?P<name>{THING_PATTERN})", re.I)
_GENERIC_ASK = re.compile(r"\b(?:usually|typically|generally|normally|in\s+general|by\s+default|"
                          r"üblicherweise|normalerweise|généralement|habituellement|normalmente|generalmente)\b", re.I)
# Not knowing: "I don't know what X contains", "I haven't read X", "without access to X".
UNKNOWN_PHRASES = re.compile(
    r"\b(?:I|we)\s+(?:do\s+not|don't|cannot|can't|can\s+not|have\s+not|haven't|did\s+not|didn't|am\s+not|'m\s+not|"
    r"am\s+unable|couldn't|could\s+not)\b|\b(?:no|without)\s+access\b|\bnot\s+(?:available|visible|shown|provided)"
    r"|\bunable\s+to\b|\bweiß\s+nicht|\bje\s+ne\s+(?:sais|peux)|\bno\s+(?:sé|puedo)", re.I)
# A general statement or an example, not this user's thing.
GENERAL_PHRASES = re.compile(
    r"(?<![\w./-])(?:a|an|any|every|each|most|many|some|such|typical|typically|usually|generally|normally|often|commonly|"
    r"standard|by\s+default|in\s+general|example|e\.g\.|for\s+instance|sample|hypothetical|imagine|suppose|"
    r"ein|eine|einer|jede|typischerweise|normalerweise|un|une|chaque|généralement|típicamente|normalmente|"
    r"usualmente|cada)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\d])|\n+")
TOKEN_PATTERN = re.compile(r"[A-Za-z_][\w.-]*[A-Za-z0-9_]|\d+")
STOP_WORDS = frozenset("the and for are was were this that with from there has have not but all any its into it is "
                  "of to in on a an as at by be or file files directory folder function command output contains "
                  "returns lists list which what you your following here "
                  # the same little words in German, French and Spanish ("Le fichier contient les fonctions du ...")
                  "der die das den dem und ein eine ist sind le la les un une des du de et est sont dans pour "
                  "el los las del y es son una en con".split())


@dataclass(frozen=True)
class NarratedClaim:
    """One sentence stating what ``subject`` contains; ``content`` is what it says is there."""

    subject: str
    name: str  # the thing's name as written (``config.yaml``, ``logs/``, ``parse()``, ``ls -la``), or "" if unnamed
    kind: str  # "file" | "directory" | "function" | "command" | "output" (of unnamed code) | "module" … | "thing"
    sentence: str
    content: str
    start: int  # offset of the sentence in the prose


def prose_blocks(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """The reply with fenced code blanked (same offsets), and the fences as (start, end, body)."""
    fences = [(m.start(), m.end(), m.group(1)) for m in re.finditer(r"```[^\n]*\n?(.*?)(?:```|\Z)", text, re.S)]
    prose = list(text)
    for s, e, _ in fences:
        prose[s:e] = " " * (e - s)
    return "".join(prose), fences


def split_sentences(prose: str) -> list[tuple[int, str]]:
    out, pos = [], 0
    for m in _SENTENCE.finditer(prose + "\n"):
        piece = prose[pos:m.start()]
        if piece.strip():
            out.append((pos + len(piece) - len(piece.lstrip()), piece.strip()))
        pos = m.end()
    return out


# "the src/components folder" is a directory like "src/components/"; the other words of _KIND by what they name
KIND_OF_WORD = {"folder": "directory", "dir": "directory", "verzeichnis": "directory", "ordner": "directory",
            "datei": "file", "funktion": "function", "methode": "function", "method": "function", "befehl": "command"}


def name_and_kind(subject: str) -> tuple[str, str]:
    """(name, kind) of a subject phrase."""
    for rx, kind in ((FILE_PATTERN, "file"), (DIR_PATTERN, "directory"), (_FUNC, "function")):
        m = re.search(rx, subject)
        if m and (kind != "directory" or not re.search(FILE_PATTERN, subject)):
            return m.group(0), kind
    m = re.search(_TICK, subject)
    if m:
        name = m.group(0).strip("`")
        kind = "function" if re.search(r"\bfunction|method|Funktion|fonction|función\b", subject, re.I) else (
            "command" if " " in name or re.search(r"command|Befehl|commande|comando", subject, re.I) else "thing")
        return name, kind
    m = re.search(rf"(?<!\w)({IDENT_PATTERN}(?:/{IDENT_PATTERN}){{0,8}})\s+({_KIND})\b", subject, re.I)
    if m and m.group(1).lower() not in ("the", "this", "that", "your", "my", "a", "an"):
        return m.group(1), KIND_OF_WORD.get(m.group(2).lower(), m.group(2).lower())
    return "", "thing"


# Words that make a question about this project's thing, not a library's or a tool's in general.
PROJECT_WORDS = re.compile(r"\b(?:my|our|this|here|project|repo|right\s+now|currently|in\s+\S+\.\w{1,5})\b", re.I)
# Library and built-in names: what they return is general knowledge, not a project's contents.
PYTHON_BUILTINS = frozenset("print len open range str int float bool list dict set tuple sorted sum max min map filter input "
                      "format join split strip replace read write readline readlines append extend keys values items "
                      "json.loads json.dumps json.load json.dump os.listdir os.path.join os.getcwd println! format! "
                      "vec! unwrap expect clone collect iter to_string into as_str len() main".split())
_SPECIFIC = re.compile(r"\d|`|\"|'|\b\w+\.\w{1,4}\b|:\s*$")
# What a command prints, stated as output: a number, a quoted string, a block or lines after a colon. A backticked
# name alone ("prints a message that includes a `test-configuration` variable") describes the command in general.
_OUTPUT = re.compile(r"\d|\"[^\"]{2,}\"|'[^'\s][^']{1,}'|`[^`]*[\s=:/][^`]*`|\n|:\s*$")
_PLACEHOLDER = re.compile(r"(?i)(?:the\s+)?following(?:\s+[\w-]+){0,2}$|as\s+follows$")


def _project_thing(name: str, kind: str, subject: str, content: str, context: str, ran: bool) -> bool:
    """Whether the named thing is the user's (a file, a directory, a function or command they asked about or a
    command said to have run) rather than a library name or a command described in general."""
    bare = name.rstrip("()").lower()
    asked = bool(bare) and re.search(rf"(?<![\w.]){re.escape(bare)}(?![\w])", context, re.I) is not None
    if kind in ("file", "directory", "output"):
        return True
    if kind == "function":
        return bare not in PYTHON_BUILTINS and (asked or "(" in name or bool(re.search(r"function|method|Funktion|"
                                                                                 r"fonction|función", subject, re.I)))
    if kind == "command":  # "`git log -1` shows the latest commit" describes the command; a run shows specifics
        return ran or bool(_OUTPUT.search(content))
    # a bare `name`, "the X module": only the thing the user asked about, as this project's ("What does
    # `json.loads` return?" asks about a library)
    return asked and bare not in PYTHON_BUILTINS and bool(PROJECT_WORDS.search(context))


# The user asks for a thing's contents ("What's in X?", "List the functions defined in X", "Was steht in X?").
_ASKS_CONTENTS = re.compile(
    r"\bwhat(?:'s|\s+is|\s+are)\s+(?:in|inside)\b|\bcontents?\s+of\b|\blist\s+(?:all\s+)?(?:the\s+)?(?:files|functions|"
    r"entries|classes|tests)\b|\bwhat\s+does\s+.{1,60}?\s+(?:contain|define|export|list|hold)\b|\bshow\s+me\s+(?:the\s+)?"
    r"(?:contents?|file|source)\b|\bwas\s+(?:steht|enthält)\b|\bque\s+contient\b|\bqu[ée]\s+(?:contiene|hay\s+en)\b", re.I)
# A block that proposes a command ("```bash\nls tests/\n```") is a plan, not the thing's contents.
COMMAND_LINE = re.compile(r"^\s*(?:\$\s*|(?:ls|cat|find|grep|git|cargo|python3?|pip|npm|make|cd|mkdir|sudo|echo|tree|"
                           r"head|tail|less|more|type|dir)\b)")


def only_named(body: str, name: str) -> bool:
    """A block that holds nothing but the thing's own name ("# cli.py"), or nothing at all: no contents shown."""
    return not TOKEN_PATTERN.search(body.replace("```", "").replace(name, ""))


def _bare_block(response: str, context: str, asked: list[tuple[str, str]]) -> NarratedClaim | None:
    """A reply that answers "What's in X?" with nothing but a block (after at most "X:"): the block is presented
    as X's contents."""
    if len(asked) != 1 or not _ASKS_CONTENTS.search(context):
        return None
    m = re.match(r"\s*(?:(\S{1,80}?)\s*:\s*)?```[^\n]*\n(.*?)(?:```|\Z)", response, re.S)
    if not m or (m.group(1) and m.group(1).strip("`*").lower() != asked[0][0].lower()):
        return None
    body = m.group(2).strip()
    if not body or COMMAND_LINE.match(body) or only_named(body, asked[0][0]):
        return None
    return NarratedClaim(asked[0][0], asked[0][0], asked[0][1], m.group(0)[:160], body[:500], 0)


EXCLUDED_NAME = "\0"  # the name of a sentence that narrates but was left out (a plan, a question, a general statement)
_HEAD = 400  # characters of a sentence searched for a claim
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s")


def named_things(text: str) -> list[tuple[str, str]]:
    """(name, kind) of every named thing in ``text``, in order."""
    if not re.search(r"[./`(]|Makefile|Dockerfile|README|LICENSE|Procfile", text):
        return []  # most sentences name nothing: skip the full pattern
    return [name_and_kind(m.group(0)) for m in _THING_RX.finditer(text)]


def generic_names(text: str) -> set[str]:
    return {name_and_kind(m.group("name"))[0].lower() for m in _GENERIC_INTRO.finditer(text)}


# "Tell me the build target of the Makefile" asks for a part of a named thing; "The build target is X" answers it.
_ASKED_PART = re.compile(r"\b(?:tell\s+me|what(?:'s|\s+is|\s+are)|which\s+is|show\s+me|give\s+me|find)\s+the\s+"
                         r"((?:[\w-]+\s+){0,2}?[\w-]+)\b(?=\s*(?:[.?!,]|$|\s+(?:of|in|from|for|is|are)\b))", re.I)


def _answer_rx(context: str) -> re.Pattern[str] | None:
    """A pattern for a reply sentence that answers the user's question about a part of the thing they named."""
    heads = {m.group(1).split()[-1].lower() for m in _ASKED_PART.finditer(context)} - {"file", "name", "way", "best"}
    if not heads:
        return None
    # "The value of `max_connections` in postgresql.conf is 0", "The `replicas` value is 3"
    return re.compile(rf"^(?:so,?\s+)?(?:the|your)\s+(?:[\w`-]+\s+){{0,2}}?(?:{'|'.join(map(re.escape, heads))})"
                      rf"(?:\s+(?:of|in|for|from)\s+(?:[^.,;:?!]|\.(?=\w)){{1,80}}?)?\s+(?:is|are|was|were)\b", re.I)


def _subject_of(m: re.Match[str]) -> str:
    return next(g for g in (m.group("subject"), m.group("subject6"), m.group("pronoun"), m.group("subject2"),
                            m.group("subject3"), m.group("subject4"), m.group("subject5"), m.group("subject8"),
                            m.group("subject9"), m.group("subject10"), m.group("subject11")) if g)


def judged_claims(response: str, context: str = "") -> tuple[NarratedClaim, ...]:
    prose, fences = prose_blocks(response)
    asked = [t for t in named_things(context) if t[0]]
    # names the user asked about as a kind ("What does a Cargo.toml file usually contain?") are general
    generic = generic_names(context) | {n.lower() for sent in re.split(r"(?<=[.!?])\s+", context)
                                         if _GENERIC_ASK.search(sent) for n, _ in named_things(sent) if n}
    last = asked[0] if len(asked) == 1 else ("", "thing")
    last_file = next((t for t in asked if t[1] in ("file", "directory")), ("", "thing"))
    answer_rx = _answer_rx(context)
    claims: list[NarratedClaim] = []
    lead_left_out = False
    for start, sentence in split_sentences(prose):
        bullet = bool(_BULLET.match(sentence))
        if bullet and lead_left_out:
            claims.append(NarratedClaim("", EXCLUDED_NAME, "", sentence, "", start))
            continue
        lead_left_out = False
        answer = (answer_rx.search(sentence) if answer_rx and asked and not _NARRATION.search(sentence[:_HEAD])
                  else None)
        # A claim opens its sentence or sits early in it; searching the first _HEAD characters keeps a 10 kB
        # sentence (SmolLM2 rambles without a full stop) from costing seconds.
        for m in [answer] if answer else _NARRATION.finditer(sentence[:_HEAD]):
            left_out = NarratedClaim(m.group(0), EXCLUDED_NAME, "", sentence, "", start)
            grp = (lambda _: None) if answer else m.group  # noqa: E731 (an answer match has no named groups)
            subject = asked[0][0] if answer else _subject_of(m)
            name, kind = asked[0] if answer else name_and_kind(subject)
            if grp("subject11") and kind not in ("file", "function"):
                name, kind = subject.strip("` "), "command"
            if not name and not answer and grp("subject2"):
                if re.match(r"(?i)(?:the|your|my|our|this|that|it)\b", subject):
                    # "the output of your code is 5": which output is meant shows only in its contents
                    name, kind = "", "output"
                else:  # "Running cargo test prints": the command itself
                    name, kind = subject.strip("` "), "command"
            if not name and kind != "output":
                if not (grp("pronoun") or re.search(r"\b(?:the|this|that|die|das|le|el)\s+(?:file|directory|"
                                                        r"folder|function|script|Datei|Verzeichnis|Ordner)\b",
                                                        subject, re.I)):
                    continue  # "the repository has", "the build target is": no named thing
                # "this file" is the file named last, "it" any thing named last
                name, kind = last_file if last_file[0] and re.search(r"(?i)\b(?:file|directory|folder|Datei|Verzeichnis|Ordner)\b",
                                                    subject) else last
                if not name and _FILE_WORD.search(subject) and re.search(r"\d|`|\"", sentence[m.end():]):
                    kind = "file"  # no file named anywhere, yet specifics of "the file": unnamed, read by any call
                elif not name:
                    continue
            if sentence.rstrip().endswith("?"):
                claims.append(left_out)
                break
            before, after = sentence[:m.start()], sentence[m.end():]
            own = bool(_OWN.search(subject))
            if (_INTENT.search(before) or UNKNOWN_PHRASES.search(sentence) or (grp("subject5") and (_MODAL_AFTER.search(
                    grp("verb5") + " " + after) or _DEFINED_AFTER.match(grp("verb5") + " " + after))) or (not own and (GENERAL_PHRASES.search(before + " " + subject)
                                                                   or name.lower() in generic))):
                claims.append(left_out)
                lead_left_out = sentence.rstrip().endswith(":")
                break
            content = (grp("verb5") + " " + after if grp("subject5") else
                       grp("verb8") + " " + after if grp("subject8") else after).strip(" :.")
            end = start + len(sentence)
            if not TOKEN_PATTERN.search(content) and re.search(r"\b(?:empty|blank)$", m.group(0), re.I):
                content = "empty"  # "The logs/ directory is empty." says what it holds: nothing
            if not TOKEN_PATTERN.search(content) or _PLACEHOLDER.match(content):
                # "Here's the content of config.yaml:", "it prints the following:" -> the block or lines that follow
                nxt = next((body for s, _, body in fences if s >= end - 1 and not prose[end:s].strip()), "")
                content = (nxt or (prose[end:end + 400] if sentence.rstrip().endswith(":") else "")).strip()
            if grp("subject6") and not own:
                # "Package.json is a JSON file that defines ...", "`grep -c` is a command that prints ...": a
                # definition of the kind; what this project's one holds comes in the sentences after it
                claims.append(left_out)
                break
            if (grp("pronoun") or grp("subject11")) and kind in ("command", "thing") and not _SPECIFIC.search(
                    content + (":" if sentence.rstrip().endswith(":") else "")):
                continue  # "It lists the files in the current directory": what a command does, no output shown
            if not content:
                continue
            if not _project_thing(name, kind, subject, content, context, bool(grp("subject2"))):
                continue
            claims.append(NarratedClaim(subject.strip(), name, kind, sentence, content[:500], start))
            break
        named = [t for t in named_things(sentence) if t[0]]
        if named:
            last = named[0]
            last_file = next((t for t in named if t[1] in ("file", "directory")), last_file)
        generic |= generic_names(sentence)
    bare = _bare_block(response, context, asked)
    if bare is not None and bare.name.lower() not in generic:
        claims.insert(0, bare)
    return tuple(claims)
