"""Judges without the answer key: ``constraints`` for SPARQL, ``vote`` for arithmetic, and the choice per task.

``constraints`` passes a SPARQL answer that parses and runs on the task's ontology (at most ``max_rows`` rows
read), passes the L1 checks of :func:`rlmlab.ontology.validate_sparql` (no invented term other than one the
question itself names, no domain or range violation, no cartesian product, no IRI compared as a string),
uses every term the question names, in the relations the question states ("the rdfs:label of prov:Activity"
needs ``prov:Activity rdfs:label ?x``; "whose rdfs:domain is prov:Entity" needs ``?x rdfs:domain prov:Entity``),
has as many columns as the question asks for ("(two columns: ...)"), tests the text the question gives to filter
by (its IRIs, "the word X": ``rlmlab.executors.filter_texts``), types a variable with each OWL/RDFS class it
names (``?x a owl:Class``), and returns rows. No rows pass only when
a term the question names is not in the ontology: that is why there are none.

``vote`` needs every rollout's answer (:meth:`VoteJudge.judge_rollouts`): a rollout passes when its answer
(normalised as :func:`rlmlab.numbers.vote_key` does) is the unique most frequent one and at least ``min_votes``
rollouts gave it. Alone (``judge``) it sees one answer and cannot judge. Only plausible rollouts vote
(``plausible``, on by default; :func:`arith_implausible`): the answer is a number, the program writes every number
the question gives in digits, and a "how many" answer is a whole number >= 0; a small model's samples agree on a
wrong product of two of the question's numbers far more often than on the right answer, and such agreement is
what the check removes. A question that is its own computation ("What is 12% of 300?",
:func:`rlmlab.numbers.stated_arithmetic`) is judged by its exact value instead of a vote.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from rlmlab.errors import ConfigError
from rlmlab.executors import query_slots, filter_texts
from rlmlab.memory import MemoryTask, Verdict, numbers_in
from rlmlab.ontology import (
    CURIE_PATTERN, hierarchy_steps, question_relations, reaches, stated_values, text_tests,
)
from rlmlab.numbers import stated_arithmetic, vote_key
from rlmlab.learning._judge import JUDGES, strip_fences
from rlmlab.learning._judge_oracle import OracleJudge, cannot_judge

if TYPE_CHECKING:
    from rlmlab.executors import Trajectory

__all__ = ["ConstraintsJudge", "VoteJudge", "keyfree_judge_for", "judge_rollouts", "KEYFREE_JUDGES",
           "arith_implausible"]

# The key-free judge of each kind of task (see keyfree_judge_for); the reference judges are the upper bound.
KEYFREE_JUDGES = {"code": "oracle", "ontology": "constraints", "arith": "vote"}
# L1 findings that make an answer wrong; missing_prefix (the graph supplies them) and missing_limit (advice on
# cost, and reference queries have no LIMIT) do not.
_BLOCKING = ("type_is_property", "domain_violation", "range_violation", "cartesian_product", "string_iri_filter")
_UNKNOWN = ("unknown_property", "unknown_class")
_CURIE = re.compile(rf"(?<![\w/#])({CURIE_PATTERN})")
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_HIERARCHY = ("http://www.w3.org/2000/01/rdf-schema#subClassOf", "http://www.w3.org/2000/01/rdf-schema#subPropertyOf")
_COLUMNS = re.compile(r"\((one|two|three|four|five|\d)\s+columns?\b", re.I)


def _verdict(name: str, success: bool, rationale: str) -> Verdict:
    return Verdict(success=success, score=1.0 if success else 0.0, rationale=rationale, judge=name, confidence=1.0)


def _no_answer(trajectory: "Trajectory") -> str | None:
    if trajectory.error:
        return f"The run ended with an error ({str(trajectory.error)[:80]})."
    if trajectory.answer is None or not str(trajectory.answer).strip():
        return "The run gave no answer to judge."
    return None


# -- constraints --------------------------------------------------------------------------------------------

def _triples(query: str, graph: Any) -> list[tuple[str, str, str]]:
    """The query's triple patterns as (subject, predicate, object) strings: IRIs in full, variables as ``?v``;
    a property path's predicate is the text of its IRIs."""
    from rdflib.plugins.sparql import prepareQuery
    from rdflib.plugins.sparql.parserutils import CompValue

    prepared = prepareQuery(query, initNs=dict(graph.namespaces()))
    out: list[tuple[str, str, str]] = []

    def walk(node: Any) -> None:
        if isinstance(node, CompValue):
            if node.name == "BGP":
                out.extend(tuple(_term(x) for x in t) for t in node.triples)
            for value in node.values():
                walk(value)
        elif isinstance(node, (list, tuple)):
            for value in node:
                walk(value)

    walk(prepared.algebra)
    return out


def _term(x: Any) -> str:
    from rdflib import Variable

    if isinstance(x, Variable):
        return f"?{x}"
    text = x.n3() if hasattr(x, "n3") else str(x)
    return text


@dataclass
class ConstraintsJudge:
    """SPARQL answers checked on ``meta["ontology"]`` without the reference query; see the module docstring."""

    max_rows: int = 10_000
    name: str = field(default="constraints", init=False)

    def __post_init__(self) -> None:
        if isinstance(self.max_rows, bool) or not isinstance(self.max_rows, int) or self.max_rows < 1:
            raise ConfigError(f"judge constraints: max_rows {self.max_rows!r} must be a positive integer")

    def judge(self, task: MemoryTask, trajectory: "Trajectory") -> Verdict:
        from rlmlab.ontology import load_ontology, validate_sparql

        path = task.meta.get("ontology")
        if not path:
            raise ConfigError(f"task {task.id}: the constraints judge needs meta['ontology'] (a .ttl path)")
        graph = load_ontology(path)
        why = _no_answer(trajectory)
        if why:
            return _verdict(self.name, False, why)
        query = strip_fences(str(trajectory.answer))
        named = list(dict.fromkeys(_CURIE.findall(task.query)))
        expand = {c: _expand(graph, c) for c in named}
        for rel in question_relations(task.query):  # "the superclasses of X" states rdfs:subClassOf, unnamed
            expand.setdefault(rel.predicate, _expand(graph, rel.predicate))
        absent = [c for c in named if expand[c] and not _in_graph(graph, expand[c])]
        # the L1 checks first: a query they reject (a cartesian product, say) is not run at all
        findings = validate_sparql(query, graph)
        syntax = [f for f in findings if f.kind == "syntax_error"]
        if syntax:
            return _verdict(self.name, False, f"The query does not parse: {syntax[0].message[:160]}.")
        blocking = [f for f in findings if f.kind in _BLOCKING or
                    (f.kind in _UNKNOWN and not any(c in (f.term or "") or (expand[c] or "") in (f.term or "")
                                                    for c in absent))]
        if blocking:
            return _verdict(self.name, False, f"L1 check {blocking[0].kind}: {blocking[0].message[:160]}.")
        try:
            result = graph.query(query)
            if result.type != "SELECT":
                return _verdict(self.name, False, f"The query is a {result.type}; the task asks for a SELECT.")
            width = len(result.vars or [])
            columns = [f"?{v}" for v in (result.vars or [])]
            rows = list(itertools.islice(iter(result), self.max_rows + 1))  # rdflib yields SELECT rows lazily
            triples = _triples(query, graph)
        except Exception as exc:  # rdflib's plain Exception for unknown prefixes, evaluation errors
            return _verdict(self.name, False, f"The query does not run: {' '.join(str(exc).split())[:160]}.")
        used = " ".join(" ".join(t) for t in triples) + " " + query
        missing = [c for c in named if not re.search(rf"(?<![\w:]){re.escape(c)}(?![\w.-])", used)
                   and (expand[c] is None or f"<{expand[c]}>" not in used)]
        if missing:
            return _verdict(self.name, False, f"The query does not use {', '.join(missing[:3])}, which the question "
                                              f"names.")
        relation = _relations_missing(task.query, triples, expand)
        if relation:
            return _verdict(self.name, False, f"The question asks for {relation}; no triple pattern of the query "
                                              f"states it (a reversed direction or another property).")
        misordered = _columns_misordered(task.query, triples, expand, columns)
        if misordered:
            return _verdict(self.name, False, misordered)
        texts = filter_texts(query_slots(task.query), task.query)
        if texts and not any(f"'{t}'" in query or f'"{t}"' in query for t in texts):
            return _verdict(self.name, False, f"The question gives text to filter by ({', '.join(texts[:3])}); the "
                                              f"query does not test it.")
        named_tests = text_tests(task.query)
        used_tests = {t for t in ("STRSTARTS", "STRENDS", "CONTAINS", "REGEX") if t + "(" in query.upper()} | \
            ({"="} if re.search(r"STR\(\s*\?\w+\s*\)\s*=", query, re.I) else set())
        if named_tests and used_tests and not used_tests & named_tests:
            return _verdict(self.name, False, f"The question asks for a text test by {', '.join(sorted(named_tests))}; "
                                              f"the query tests with {', '.join(sorted(used_tests))}.")
        steps = hierarchy_steps(task.query)
        walked = re.findall(r"(subClassOf|subPropertyOf)\s*([+*]?)", query)
        if steps in ("any", "self") and walked and not any(m for _, m in walked):
            return _verdict(self.name, False, "The question walks the hierarchy at any depth; the query takes one "
                                              "step (no + or *).")
        if steps == "any" and any(m == "*" for _, m in walked):
            return _verdict(self.name, False, "The question asks for one or more hierarchy steps; the query's * also "
                                              "returns the named term itself (zero steps).")
        if steps == "self" and any(m == "+" for _, m in walked):
            return _verdict(self.name, False, "The question counts the named term itself; the query's + leaves it "
                                              "out (zero steps need *).")
        if steps in ("one", "chain") and any(m for _, m in walked):
            return _verdict(self.name, False, "The question asks for direct steps; the query walks the hierarchy at "
                                              "any depth.")
        if steps == "chain" and len(walked) < 2:
            return _verdict(self.name, False, "The question asks for two hierarchy steps; the query takes fewer.")
        rdf_type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
        for c in named:  # "the owl:ObjectProperty resources": the answer's type, not a node of another relation
            if c.startswith(("owl:", "rdfs:", "rdf:")) and c.split(":", 1)[1][:1].isupper() and expand[c] and \
                    not any(rdf_type in tp and to == f"<{expand[c]}>" for _, tp, to in triples):
                return _verdict(self.name, False, f"The query does not type a variable as {c} (?x a {c}).")
        m = _COLUMNS.search(task.query)
        want = None if m is None else _WORDS.get(m.group(1).lower()) or int(m.group(1))
        if want is not None and width != want:
            return _verdict(self.name, False, f"The query returns {width} column(s); the question asks for {want}.")
        if len(rows) > self.max_rows:
            return _verdict(self.name, False, f"The query returns more than {self.max_rows} rows (max_rows).")
        if not rows:
            if absent:
                return _verdict(self.name, True, f"No rows, and none can exist: {', '.join(absent)} is not in the "
                                                 f"ontology; the query passes the L1 checks.")
            return _verdict(self.name, False, "The query returns no rows, though every term the question names is "
                                              "in the ontology.")
        return _verdict(self.name, True, f"The query runs ({len(rows)} row(s), {width} column(s)), uses the terms "
                                         f"and relations the question names, and passes the L1 checks.")


def _expand(graph: Any, curie: str) -> str | None:
    prefix, local = curie.split(":", 1)
    ns = dict(graph.namespaces()).get(prefix)
    return None if ns is None else f"{ns}{local}"


def _in_graph(graph: Any, iri: str) -> bool:
    from rdflib import URIRef

    ref = URIRef(iri)
    return (ref, None, None) in graph or (None, ref, None) in graph or (None, None, ref) in graph


def _relations_missing(question: str, triples: list[tuple[str, str, str]], expand: dict[str, str | None]) -> str:
    """The first relation the question states that no triple pattern has, as text; "" when all are there."""
    def iri(c: str) -> str:
        return f"<{expand.get(c) or c}>"

    def has(s: str | None, p: str, o: str | None) -> bool:
        return any(p in tp and (s is None or ts == s) and (o is None or to == o) for ts, tp, to in triples)

    for rel in question_relations(question):
        if rel.subject is not None:
            if not has(iri(rel.subject), iri(rel.predicate), None):
                return f"{rel.subject} {rel.predicate} ?value"
            continue
        target = iri(rel.object)
        # "whose rdfs:range is prov:Agent or a class below it": the value may reach the class through a variable,
        # down the class or property hierarchy (not through another rdfs:range)
        reach = {target} | ({ts for ts, tp, to in triples if to == target and ts.startswith("?")
                             and any(h in tp for h in _HIERARCHY)} if reaches(question) and not rel.exact else set())
        if not any(iri(rel.predicate) in tp and to in reach for _, tp, to in triples):
            return f"?x {rel.predicate} {rel.object}"
    return ""


def _columns_misordered(question: str, triples: list[tuple[str, str, str]], expand: dict[str, str | None],
                        columns: list[str]) -> str:
    """Where the question's stated values of one term fill the SELECT ("the domain and the range of P": two
    columns, domain then range), the k-th column must be the k-th value; the reason when it is not, else ""."""
    stated, ordered = stated_values(question_relations(question), len(columns))
    if not ordered:
        return ""
    for k, (subj, prop) in enumerate(stated):
        s_iri, p_iri = f"<{expand.get(subj) or subj}>", f"<{expand.get(prop) or prop}>"
        values = [to for ts, tp, to in triples if ts == s_iri and p_iri in tp]
        if values and columns[k] not in values:
            return (f"The question asks for {', '.join(p for _, p in stated)} of {subj} in that order; column {k + 1} "
                    f"({columns[k]}) is not its {prop}.")
    return ""


# -- vote -----------------------------------------------------------------------------------------------------

_CANONICAL_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_HOW_MANY = re.compile(r"\bhow many\b", re.I)
_HOW_MUCH_ASK = re.compile(r"\bhow (?:many|much)\b", re.I)


def arith_implausible(query: str, trajectory: "Trajectory") -> str | None:
    """Why a rollout's answer to an arithmetic word problem cannot be right, without the answer key; None when
    nothing rules it out.

    The answer must be a number; the program (every step's code) must write each number the question gives in
    digits (a well-posed word problem uses its quantities; a distractor makes the check reject a right answer,
    never accept a wrong one); a "how many" answer is whole and a "how many / how much" answer is not negative.
    """
    why = _no_answer(trajectory)
    if why:
        return why
    key = vote_key(trajectory.answer)  # a one-number answer is written canonically ("-7", "2.5"), else text
    if key is None or not _CANONICAL_NUMBER.fullmatch(key):
        return "The answer is not a number."
    value = Fraction(key)
    code = " ".join(it.code for it in trajectory.iterations)
    written = set(numbers_in(code))
    unused = [n for n in dict.fromkeys(numbers_in(query)) if n not in written]
    if unused:
        return f"The program never uses {', '.join(unused[:3])}, which the question gives."
    if value < 0 and _HOW_MUCH_ASK.search(query):
        return f"The answer {key} is negative; the question asks how many or how much."
    if value.denominator != 1 and _HOW_MANY.search(query):
        return f"The answer {key} is not whole; the question asks how many."
    return None


@dataclass
class VoteJudge:
    """Agreement of the plausible rollouts of one task (MaTTS samples): see the module docstring.
    ``min_votes`` >= 2; ``plausible`` False lets every answer vote (the vote of sessions before it)."""

    min_votes: int = 3
    plausible: bool = True
    name: str = field(default="vote", init=False)

    def __post_init__(self) -> None:
        if isinstance(self.min_votes, bool) or not isinstance(self.min_votes, int) or self.min_votes < 2:
            raise ConfigError(f"judge vote: min_votes {self.min_votes!r}; use an integer >= 2 (one vote agrees "
                              "with nothing)")
        if not isinstance(self.plausible, bool):
            raise ConfigError(f"judge vote: plausible {self.plausible!r}; use true or false")

    def judge(self, task: MemoryTask, trajectory: "Trajectory") -> Verdict:
        return self.judge_rollouts(task, [trajectory])[0]

    def judge_rollouts(self, task: MemoryTask, trajectories: Sequence["Trajectory"]) -> list[Verdict]:
        """One verdict per rollout, from the answers of all of them."""
        stated = stated_arithmetic(task.query) if self.plausible else None
        if stated is not None:  # the question is its own computation: its exact value, no vote
            out, exact = [], vote_key(stated)
            for t in trajectories:
                why = _no_answer(t)
                ok = why is None and vote_key(t.answer) == exact
                out.append(_verdict(self.name, ok, why or f"The question states its arithmetic; its exact value is "
                                                          f"{stated}, the answer {'is' if ok else 'is not'}."))
            return out
        ruled_out = [arith_implausible(task.query, t) if self.plausible else _no_answer(t) for t in trajectories]
        keys = [None if why else vote_key(t.answer) for why, t in zip(ruled_out, trajectories)]
        counts = Counter(k for k in keys if k is not None)
        ranked = counts.most_common(2)
        if len(keys) < self.min_votes:
            return [cannot_judge(self.name, f"{len(keys)} rollout(s); a vote needs at least {self.min_votes}.")
                    for _ in keys]
        top = ranked[0] if ranked else None
        unique = top is not None and (len(ranked) == 1 or ranked[1][1] < top[1])
        out = []
        for key, why in zip(keys, ruled_out):
            if key is None:
                out.append(_verdict(self.name, False, f"{why} The rollout has no vote."))
            elif not unique or top[1] < self.min_votes:
                best = f"{top[1]} of {len(keys)}" if top else "none"
                out.append(_verdict(self.name, False, f"No answer has a clear majority of at least {self.min_votes} "
                                                      f"(the most agreeing: {best}{'' if unique else ', tied'})."))
            else:
                ok = key == top[0]
                out.append(_verdict(self.name, ok, f"{counts[key]} of {len(keys)} rollouts gave this answer; the "
                                                   f"majority ({top[1]}) {'agrees' if ok else 'gave another'}."))
        return out


# -- choice per task --------------------------------------------------------------------------------------

def judge_rollouts(judge: Any, task: MemoryTask, trajectories: Sequence["Trajectory"]) -> list[Verdict]:
    """Verdicts for all rollouts of a task: ``judge.judge_rollouts`` when the judge needs them together (a vote),
    else ``judge.judge`` on each."""
    if hasattr(judge, "judge_rollouts"):
        return list(judge.judge_rollouts(task, trajectories))
    return [judge.judge(task, t) for t in trajectories]


def keyfree_kind(task: MemoryTask) -> str:
    """"code" (a task with a source), "ontology" (with an ontology or a SPARQL check) or "arith" (anything else)."""
    if task.meta.get("source_path"):
        return "code"
    if task.meta.get("ontology") or task.check == "sparql":
        return "ontology"
    return "arith"


def keyfree_judge_for(task: MemoryTask, **options: Any) -> Any:
    """The key-free judge of the task's kind (:data:`KEYFREE_JUDGES`), built with ``options``."""
    return JUDGES.make(KEYFREE_JUDGES[keyfree_kind(task)], **options)


# -- registry -------------------------------------------------------------------------------------------------

@JUDGES.register("oracle")
def _oracle(source_root: str | None = None) -> OracleJudge:
    """Code answers against meta['source_path'] by the oracles and tree-sitter facts; no answer key."""
    return OracleJudge(source_root)


@JUDGES.register("constraints")
def _constraints(max_rows: int = 10_000) -> ConstraintsJudge:
    """SPARQL that runs on meta['ontology'], uses the question's terms and relations, passes L1; no answer key."""
    return ConstraintsJudge(max_rows)


@JUDGES.register("vote")
def _vote(min_votes: int = 3, plausible: bool = True) -> VoteJudge:
    """A plausible rollout agrees with the unique majority of at least min_votes plausible rollouts; a question
    that states its arithmetic is judged by its exact value; no answer key."""
    return VoteJudge(min_votes, plausible)
