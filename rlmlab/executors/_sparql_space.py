"""The closed space of a SPARQL step: a SELECT the question itself defines, as GBNF rules.

Offered the ontology's 600 terms as free choices, the embedded 135M model wrote ``SELECT ?d ?d ?d WHERE { ?d ?d
?d }`` or ``{ ?x owl:inverseOf ?x }`` on every question, greedy and sampled alike, so exploration found nothing to
learn from. What the question says closes the space, as the key-free ``constraints`` judge reads it
(:mod:`rlmlab.learning._judge_keyfree`):

- terms: the question's own CURIEs and a few RDF/OWL basics (:data:`SPARQL_BASICS`); every reference query of the
  task suites uses no other term. Every CURIE the question names is used (for up to :data:`MAX_NAMED` of them;
  the judge fails a query that leaves one out);
- a triple pattern holds a variable (``?x``, ``?y``, ``?z``) and never the same variable at both ends; its
  predicate is a property (lowerCamelCase local name) or ``a``, optionally ``+`` (one or more) or ``*``;
- the SELECT has as many columns as the question says; a question asking how many selects a count (``(COUNT(DISTINCT
  ?x) AS ?n)``, or a value and its count grouped by the value when it asks for each value), any other question
  variables only;
- a question that gives text to filter by (its IRIs, quoted text, "the word X", "includes X": :func:`filter_texts`)
  has one FILTER that tests a variable's text against it; any FILTER may keep IRIs. A named OWL/RDFS class
  (``owl:Class``, ``owl:ObjectProperty``) is only the type of a variable (``?x a owl:Class``).

The rules' first entry (``sq-q``) is a Python string literal holding the query.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from rlmlab.executors._gbnf import gbnf_lit
from rlmlab.ontology import Relation, hierarchy_steps, question_relations, reaches, stated_values, text_tests
from rlmlab.text import plural

__all__ = ["sparql_rules", "filter_texts", "sparql_columns", "asks_count", "canonical_select", "space_fit",
           "sparql_fit", "SPARQL_BASICS", "SPARQL_VARS", "MAX_NAMED"]

SPARQL_VARS = ("x", "y", "z")
# The terms a question may use without naming them: the class and property hierarchies and a property's domain
# and range ("the direct superclasses of X", "the domain and the range of P"). Every other term of a reference query
# in the task suites is named by its question (rdfs:label, skos:definition, owl:Class, ...); offered as free
# choices, the model put owl:inverseOf into every query.
SPARQL_BASICS = ("rdfs:subClassOf", "rdfs:subPropertyOf", "rdfs:domain", "rdfs:range")
# Properties of the RDF, RDFS and OWL vocabularies (and rdf:type) describe other terms: a predicate, never a node.
_META_PREFIXES = ("rdf:", "rdfs:", "owl:")
_HIERARCHY = ("rdfs:subClassOf", "rdfs:subPropertyOf")
MAX_NAMED = 4  # named CURIEs whose use is tracked (2**4 states of the body); past that, any order of use
MAX_PATTERNS = 3
_COLUMNS = re.compile(r"\b(one|two|three|[123])\s+columns?\b", re.I)
_COLUMN_WORDS = {"one": 1, "two": 2, "three": 3}
_COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount(s|ed)?\b", re.I)
_NEGATION = re.compile(r"\b(not|outside|except|excluding)\b", re.I)
_EACH = re.compile(r"\b(for each|per|each)\b", re.I)
_FILTER_WORD = re.compile(r"(?=\b(?:word|text|includes?|contains?|mentions?|value|is|in)\s+([A-Za-z][\w-]*)(?![\w:-]))",
                          re.I)  # a lookahead: "value is access-and-query" reads both words after a cue


def sparql_columns(query: str) -> int | None:
    """How many columns the question asks its SELECT for ("(one column: the property)", "two columns: domain,
    range"); None when it does not say."""
    m = _COLUMNS.search(query or "")
    return None if m is None else _COLUMN_WORDS.get(m.group(1).lower()) or int(m.group(1))


def asks_count(query: str) -> bool:
    """Whether the question asks how many ("how many", "the number of", "count")."""
    return bool(_COUNT.search(query or ""))


def filter_texts(slots: dict[str, list[str]], query: str = "") -> list[str]:
    """The text a SPARQL filter may compare with: the question's IRIs, quoted text and the word after "the word",
    "text", "includes", "contains", "mentions", "value", "is" or "in" (not a stopword or a CURIE; a hyphenated
    value such as ``access-and-query`` is one word): "whose rdfs:label includes Collection" gives ``Collection``.
    [] when the question names no text to filter by (then a FILTER can only keep IRIs)."""
    from rlmlab.memory import STOPWORDS

    plain = " ".join(x for x in query.split() if "://" not in x)
    words = [w for w in _FILTER_WORD.findall(plain) if w.lower() not in STOPWORDS and w.lower() != "exactly"]
    return list(dict.fromkeys([*(slots.get("iri") or []), *(slots.get("quoted") or []), *words]))


def _is_property(curie: str) -> bool:
    return curie.split(":", 1)[1][:1].islower()


def _alt(options: Sequence[str]) -> str:
    opts = list(dict.fromkeys(options))
    return opts[0] if len(opts) == 1 else "(" + " | ".join(opts) + ")"


def _body_rules(named: list[str], width: int, rules: dict[str, str], relations: Sequence[Relation] = (),
                reach: bool = False, steps: str = "") -> str:
    """The rule of a body (up to :data:`MAX_PATTERNS` triple patterns, then a FILTER) for a SELECT of ``width``
    variables.

    The patterns together use each of ``named`` at least once and bind ``?x`` ... up to the width; the body ends as
    soon as both hold (offered free patterns, the model filled each with ``?x owl:inverseOf ?y``). Each pattern
    makes progress (a named term or a variable it adds); one without a named term joins a bound variable to another
    (never first). The variable past the SELECT's (the join: ``?y`` for one column) is used twice, the second time
    down a hierarchy (``?x rdfs:domain ?y . ?y rdfs:subClassOf* C``), or once and tested by a text FILTER; never
    once alone (``?x rdfs:domain ?y`` only narrows). A term the question puts on one side of a property
    (``relations``: "the rdfs:domain of P" makes P the subject) stands only there, and is no predicate. States are
    (named terms used, variables bound, how often the join variable was used: 0, 1, 2 for more).

    ``steps`` (:func:`rlmlab.ontology.hierarchy_steps`): a hierarchy predicate takes ``+`` where the question walks
    it at any depth ("any"), ``*`` where the named term itself counts too ("self": "X or a class below X"), neither
    where it says direct ("one", "chain"), either or none otherwise; a
    "chain" question's body goes down two steps through the join variable. Only hierarchy predicates take them."""
    n = len(named)
    # "the domain and the range of P": each stated (subject, property) is a pattern the body must hold, the k-th
    # of them binding the SELECT's k-th variable where they fill the SELECT ("in that order: domain, range")
    stated, ordered = stated_values(relations, width)
    stated_props = {p for _, p in stated}
    full = frozenset(range(n + len(stated)))
    meta = {t for t in named if t.startswith(_META_PREFIXES) and _is_property(t)}
    types = {t for t in named if t.startswith(_META_PREFIXES) and not _is_property(t)}  # owl:Class, ...
    side = {(r.predicate, r.subject or r.object): "s" if r.subject else "o" for r in relations}
    fixed = {term for _, term in side}  # a node of a stated relation: never a predicate
    predicates_only = {r.predicate for r in relations}
    # "whose rdfs:domain is exactly C" (or without "exactly" where the question says nothing of classes below C):
    # C only as the object of rdfs:domain
    exact_of: dict[str, set[str]] = {}
    for r in relations:
        if r.object and (r.exact or not reach):
            exact_of.setdefault(r.object, set()).add(r.predicate)
    subject_of: dict[str, set[str]] = {}
    for r in relations:
        if r.subject:
            subject_of.setdefault(r.subject, set()).add(r.predicate)
    others = [b for b in SPARQL_BASICS if b not in named and _is_property(b)]
    mod = {"any": ' "+"', "self": ' "*"', "one": "", "chain": ""}.get(steps, ' ("+" | "*")?')
    if "sq-bpred" not in rules:  # the unnamed basics but the hierarchy (offered with its term, below) and a
        # property the question states of one term (its patterns are offered with that term, below)
        rules["sq-bpred"] = _alt(['"a"', *[gbnf_lit(b) for b in others if b not in _HIERARCHY and
                                           b not in stated_props]])
    walks = [h for h in _HIERARCHY if h not in named]
    join = SPARQL_VARS[width] if width < len(SPARQL_VARS) else None
    vars_ = [f"?{v}" for v in SPARQL_VARS[:width + 1]]  # the SELECT's and one to join through

    def pred(i: int) -> str:
        if named[i] == "rdf:type":  # SPARQL's "a" is rdf:type
            return '("rdf:type" | "a")'
        return f"{gbnf_lit(named[i])}{mod}" if named[i] in _HIERARCHY else gbnf_lit(named[i])

    State = tuple[frozenset[int], frozenset[str], int]

    def key(st: State) -> str:
        used, bound, j = st
        return f"{'-'.join(map(str, sorted(used))) or 'e'}-{''.join(sorted(bound)) or 'n'}{j}"

    def patterns(st: State) -> dict[State, list[str]]:
        """One triple pattern's alternatives from a state, by the state it leads to."""
        used, bound, j = st
        out: dict[State, list[str]] = {}

        def add(s: str, p: str, p_term: str | None, o: str, uses: set[int]) -> None:
            names = {x[1:] for x in (s, o) if x in vars_}
            if s == o or not names or (not uses and not (names & bound)):
                return  # a variable at both ends, no variable, or a join-less pattern without a named term
            if p_term is not None and p_term in (s, o) or any(x in predicates_only for x in (s, o)):
                return  # a property as the predicate and a node of one pattern, or the P of "the P of T" as a node
            for k, (subj, prop) in enumerate(stated):
                if p_term == prop and s != subj:
                    return  # "the rdfs:range of P": rdfs:range only as P's (never ?y rdfs:range ?x)
                if p_term == prop:
                    if ordered and o != vars_[k]:
                        return  # the k-th stated value is the SELECT's k-th column
                    uses = uses | {n + k}
            if (uses <= used and names <= bound) or any(x in meta for x in (s, o)):
                return  # no progress (a repeat narrows nothing), or a meta-property as a node (?x P rdfs:domain)
            if p_term is not None and (side.get((p_term, o)) == "s" or side.get((p_term, s)) == "o"):
                return  # "whose rdfs:domain is C": never C rdfs:domain ?x
            if any(x in subject_of and (p_term not in subject_of[x] or x != s) for x in (s, o)):
                return  # "the rdfs:domain of P": P only as the subject of rdfs:domain (P rdfs:domain ?x)
            if join in names and j == 1 and p_term not in _HIERARCHY:
                return  # the join variable's second use goes down a hierarchy (?y rdfs:subClassOf* C), nothing else
            if join in names and j == 0 and p_term in _HIERARCHY and not (reach or steps == "chain"):
                return  # a chain of hierarchy steps only where the question says so ("two ... steps", "below")
            if any(x in types for x in (s, o)) and not (p_term == "rdf:type" and o in types):
                return  # "the owl:ObjectProperty resources": ?x a owl:ObjectProperty, nothing else
            if any(x in exact_of and p_term not in exact_of[x] for x in (s, o)):
                return  # "whose rdfs:domain is exactly C": C only as the object of rdfs:domain
            jn = min(2, j + (join in names)) if join else 0
            out.setdefault((used | uses, bound | names, jn), []).append(f'{gbnf_lit(s)} " " {p} " " {gbnf_lit(o)}')

        nodes = vars_ + list(named)
        for s_ in nodes:
            for o in nodes:
                uses = {named.index(x) for x in (s_, o) if x in named}
                add(s_, "sq-bpred", None, o, uses)
                for h in walks:
                    add(s_, f"{gbnf_lit(h)}{mod}", h, o, uses)
                if o in types:
                    add(s_, '"a"', "rdf:type", o, uses)
                for prop in subject_of.get(s_, ()):  # "the superclasses of T": T rdfs:subClassOf ?x, unnamed
                    if prop not in named:
                        add(s_, f"{gbnf_lit(prop)}{mod}" if prop in _HIERARCHY else gbnf_lit(prop), prop, o, uses)
                for i in range(n):
                    if _is_property(named[i]) and named[i] not in fixed:
                        add(s_, pred(i), named[i], o, uses | {i})
        return out

    head = frozenset(SPARQL_VARS[:width])
    filt = "sq-filter" if "sq-str" in rules else "sq-filter?"  # text to filter by: the FILTER uses it
    # used once, the join variable is what a text filter tests ("whose prov:category is qualified"); with no
    # text to filter by, a body that used it once does not end
    join_filter = f'" . FILTER(" sq-scond-{join} (" && " sq-iri)? ")"' if join and "sq-str" in rules else None

    def body(st: State, k: int) -> str | None:
        name = f"sq-b{width}-{key(st)}-{k}"
        if name in rules:
            return name if rules[name] else None
        rules[name] = ""  # reserve
        opts = []
        for after, alts in patterns(st).items():
            tp = f"sq-t{width}-{key(st)}-{key(after)}"
            rules[tp] = " | ".join(alts)
            if after[0] == full and head <= after[1] and (after[2] != 1 or join_filter) and \
                    (steps != "chain" or after[2] == 2):  # two steps down: through the join variable
                opts.append(f"{tp} {join_filter}" if after[2] == 1 else f"{tp} {filt}")
            elif k > 1:
                rest = body(after, k - 1)
                if rest:
                    opts.append(f'{tp} " . " {rest}')
        if not opts:
            del rules[name]
            return None
        rules[name] = " | ".join(opts)
        return name

    start = body((frozenset(), frozenset(), 0), MAX_PATTERNS)
    if start is None:
        raise ValueError(f"no SPARQL body uses {', '.join(named)} with {plural(width, 'variable')}")
    return start


def sparql_rules(curies: list[str], strings: Sequence[str] = (), columns: int | None = None,
                 numbers: Sequence[str] = (), count: bool | None = None, each: bool = False,
                 relations: Sequence[Relation] = (), reach: bool = False, negate: bool = False, steps: str = "",
                 tests: Sequence[str] = ()) -> dict[str, str]:
    """GBNF rules (first ``sq-q``) of a Python string literal holding a SELECT over the question's ``curies``: see
    the module docstring. ``strings``: what a FILTER may compare text with (:func:`filter_texts`); ``columns``:
    the SELECT's width (None: 1 to 3); ``numbers``: what HAVING may compare a count with; ``count``: True selects
    a count only, False never, None either; ``each`` (with a count): the count per value of a grouping variable;
    ``relations``: the triples the question states (:func:`rlmlab.ontology.question_relations`); ``reach``: the
    question allows a chain of hierarchy steps (:func:`rlmlab.ontology.reaches`); ``negate``: a text test may be
    negated (the question says "not"). With ``strings``, the body's FILTER tests one of them (a question that
    gives text to filter by is answered by a query that filters by it); a second condition only keeps IRIs;
    ``tests``: the text tests the question's words name (:func:`rlmlab.ontology.text_tests`; empty: any); ``steps``:
    how it walks a hierarchy (:func:`rlmlab.ontology.hierarchy_steps`)."""
    named = list(dict.fromkeys(curies))
    tracked = named[:MAX_NAMED] if len(named) <= MAX_NAMED else []
    n = columns if columns in (1, 2, 3) else None
    forms: list[tuple[str, int]] = []  # (form, how many variables its body binds)
    if count is not True:
        forms += [(f'("DISTINCT ")? {gbnf_lit(" ".join("?" + v for v in SPARQL_VARS[:w]))} " WHERE {{ " BODY " }}"', w)
                  for w in (1, 2, 3) if n in (None, w)]
    if count is not False and n in (None, 1) and not (each and n is None):
        forms.append(('"(COUNT(DISTINCT ?x) AS ?n) WHERE { " BODY " }"', 1))
    if count is not False and n in (None, 2) and (each or count is None):
        after = ['" ORDER BY DESC(?n) LIMIT 1"']
        ints = [x for x in dict.fromkeys(numbers) if x.isdigit()]
        for a, b in (("x", "y"), ("y", "x")):  # the grouping variable first or second in the body
            having = [f'" HAVING (COUNT(DISTINCT ?{b}) >= " {_alt([gbnf_lit(x) for x in ints])} ")"'] if ints else []
            forms.append((f'"?{a} (COUNT(DISTINCT ?{b}) AS ?n) WHERE {{ " BODY " }} GROUP BY ?{a}" '
                          f'({" | ".join(after + having)})?', 2))
    if not forms:  # the question's words contradict each other: any form
        return sparql_rules(curies, strings, None, numbers, None, each, relations, reach, negate, steps, tests)
    rules: dict[str, str] = {"sq-q": ""}
    not_ = '"!"? ' if negate else ""
    rules["sq-var"] = '"?" ' + _alt([gbnf_lit(v) for v in SPARQL_VARS])
    rules["sq-iri"] = '"isIRI(" sq-var ")"'
    strings = [x for x in dict.fromkeys(strings) if x and "'" not in x and "\\" not in x and "\n" not in x]
    if strings:  # a text test of one variable (negated only where the question says "not")
        fns = [f for f in ("STRSTARTS", "STRENDS", "CONTAINS") if not tests or f in tests]
        conds = ([f'{not_}{_alt([gbnf_lit(f) for f in fns])} "(STR(" VAR "), " sq-str ")"'] if fns else []) + \
            ([f'{not_}"REGEX(STR(" VAR "), " sq-str ", \'i\')"'] if not tests or "REGEX" in tests else []) + \
            (['"STR(" VAR ") = " sq-str'] if not tests or "=" in tests else [])
        rules["sq-str"] = _alt([gbnf_lit(f"'{x}'") for x in strings])
        rules["sq-text"] = " | ".join(c.replace("VAR", "sq-var") for c in conds)
        for v in SPARQL_VARS:  # a text FILTER on the join variable (the body used it once)
            rules[f"sq-scond-{v}"] = " | ".join(c.replace("VAR", gbnf_lit("?" + v)) for c in conds)
        rules["sq-filter"] = '" . FILTER(" (sq-text (" && " sq-iri)? | sq-iri " && " sq-text) ")"'
    else:
        rules["sq-filter"] = '" . FILTER(" sq-iri (" && " sq-iri)? ")"'
    if tracked:
        bodies = {w: _body_rules(tracked, w, rules, relations, reach, steps) for w in {w for _, w in forms}}
    else:  # none named (or too many to track): any of the terms, in any pattern that holds a variable
        words = list(dict.fromkeys([*named, *SPARQL_BASICS]))
        props = [w for w in words if _is_property(w)]
        var = '"?" ' + _alt([gbnf_lit(v) for v in SPARQL_VARS])
        rules["sq-term"] = _alt([gbnf_lit(w) for w in words])
        rules["sq-pred"] = f'"a" | {_alt([gbnf_lit(w) for w in props])} ("+" | "*")?'
        rules["sq-tp"] = f'{var} " " sq-pred " " ({var} | sq-term) | sq-term " " sq-pred " " {var}'
        rules["sq-body"] = f'sq-tp (" . " sq-tp){{0,{MAX_PATTERNS - 1}}} sq-filter?'
        bodies = {w: "sq-body" for _, w in forms}
    rules["sq-q"] = '"\\"SELECT " ' + _alt([f.replace("BODY", bodies[w]) for f, w in forms]) + ' "\\""'
    return rules


def question_sparql_rules(query: str, slots: dict[str, list[str]]) -> dict[str, str]:
    """:func:`sparql_rules` for a question, its literals read by :func:`query_slots`."""
    count = asks_count(query)
    return sparql_rules(list(slots.get("curie") or []), filter_texts(slots, query), sparql_columns(query),
                        list(slots.get("number") or []), count=count, each=count and bool(_EACH.search(query)),
                        relations=question_relations(query), reach=reaches(query),
                        negate=bool(_NEGATION.search(query)), steps=hierarchy_steps(query),
                        tests=sorted(text_tests(query)))


def canonical_select(select: str) -> str | None:
    """``select`` written as the closed space writes a SELECT: PREFIX lines and a trailing LIMIT dropped, variables
    renamed ``?x ?y ?z`` in order of first use (a count's ``?n`` kept), ``S p1 o1 ; p2 o2`` spelled out, double-quoted
    strings single-quoted. None when it has more than three variables or is not one SELECT ... WHERE { ... }."""
    if "SELECT" not in select:
        return None
    sel = " ".join(select[select.index("SELECT"):].split())
    if "ORDER BY" not in sel:  # a LIMIT that only bounds the rows (LIMIT 1000), not "the one carried most"
        sel = re.sub(r"\s+LIMIT\s+\d+\s*$", "", sel)
    names = list(dict.fromkeys(v for v in re.findall(r"\?(\w+)", sel) if v != "n"))
    if len(names) > len(SPARQL_VARS):
        return None
    rename = {v: SPARQL_VARS[i] for i, v in enumerate(names)}
    sel = re.sub(r"\?(\w+)", lambda g: "?" + rename.get(g.group(1), g.group(1)), sel)
    m = re.match(r"SELECT (.*?) WHERE \{ (.*?)( \.? ?FILTER\s*\(.*\))? \}(.*)$", sel)
    if not m:
        return None
    head, body, filt, tail = m.groups()
    patterns = []
    for tp in (t.strip() for t in re.split(r" \. ", body.rstrip(" ."))):
        parts = [p.strip() for p in tp.split(";")]
        if not parts[0]:
            return None
        subject = parts[0].split()[0]
        patterns += [parts[0], *(f"{subject} {p}" for p in parts[1:] if p)]
    filt = re.sub(r'"([^"]*)"', r"'\1'", (filt or "").strip(" ."))
    filt = f" . {filt}" if filt else ""
    return f"SELECT {head} WHERE {{ {' . '.join(patterns)}{filt} }}{tail}"


def space_fit(rules: dict[str, str]):
    """A ``fit`` for :func:`rlmlab.executors.template_rule`: of a SPARQL template's filled texts, those whose every
    SELECT (canonical: :func:`canonical_select`) the question's closed space (``rules``, from
    :func:`question_sparql_rules`) holds. A retrieved template that fills only outside the space (a hand-written
    "superclasses" query for a question about subclasses, a learnt count for a listing) is not offered. None
    without llguidance (the local extra), which checks the fit: then every template is offered."""
    import json

    try:
        import llguidance
    except ImportError:
        return None

    from rlmlab.executors._sparql_fill import sparql_strings

    tok = llguidance.LLTokenizer("byte")
    grammar = llguidance.grammar_from("grammar", "root ::= sq-q\n" + "\n".join(f"{k} ::= {v}" for k, v in rules.items()))
    seen: dict[str, bool] = {}

    def held(select: str) -> bool:
        text = canonical_select(select)
        if text is None:
            return False
        if text not in seen:
            m = llguidance.LLMatcher(tok, grammar, log_level=0)
            seen[text] = m.consume_tokens(tok.tokenize_bytes(json.dumps(text).encode())) and m.is_accepting()
        return seen[text]

    def fit(filled: list[str]) -> list[str]:
        return [code for code in filled if (found := sparql_strings(code)) and all(held(q) for q in found)]

    return fit


@lru_cache(maxsize=32)
def sparql_fit(query: str):
    """:func:`space_fit` for a question (its literals read by :func:`query_slots`); None without llguidance, and
    None when no closed space can be built for the question (its steps then run without one: see
    :func:`rlmlab.executors._constrain.run_step_grammar`). One per question: retrieval asks it of every candidate
    template of the same task."""
    from rlmlab.memory import query_slots

    try:
        rules = question_sparql_rules(query, query_slots(query))
    except ValueError:
        return None
    return space_fit(rules)
