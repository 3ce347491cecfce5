"""The ``oracle`` judge: code answers judged without the answer key, by what the source says.

:class:`rlmlab.oracle.TraceValidator` computes the truth from the task's source (counts and listings by the grep
oracle, signatures, parameters, fields, implementations by tree-sitter): Golden passes, Failed fails. For the
kinds it cannot classify, tree-sitter facts decide: the return type of a function ("What does fn X return?", "What
is the return type of X?", "Which type does X return?") and whether a file defines an item ("Does P define a [pub]
struct named X?", "Is a struct called X declared in P?"); three aggregates over a module's files are computed
from the same facts (:mod:`._judge_aggregate`: the file with the most unsafe blocks, the trait with the most
implementing types, the number of distinct traits impl blocks implement). Anything else is judged "cannot
judge": a failure with confidence 0, never a guess. ``task.expected`` and ``meta["reference"]`` are not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlmlab.learning._judge import SourceJudge
from rlmlab.learning._judge_aggregate import aggregate_verdict
from rlmlab.memory import MemoryTask, Verdict
from rlmlab.numbers import normalise_text

if TYPE_CHECKING:
    from rlmlab.executors import Trajectory

__all__ = ["OracleJudge", "CANNOT_JUDGE", "cannot_judge"]

CANNOT_JUDGE = "Cannot judge"  # how the rationale of an abstention starts

_FN = r"(?:the\s+)?(?:(?:async\s+)?(?:fn|function|method)\s+)?`?(\w+)`?"
# "What does fn X return?", "What is the return type of X?", "Which type does X (P) return?"
_RETURN = [re.compile(p, re.I | re.S) for p in (
    rf"\bwhat\s+does\s+{_FN}\b.*?\breturn\b",
    rf"\b(?:what|which)\s+is\s+the\s+return\s+type\s+of\s+{_FN}",
    rf"\b(?:what|which)\s+(?:return\s+)?type\s+does\s+{_FN}\b.*?\breturn\b")]
_KIND = r"(pub\s+)?(struct|enum|trait|type|fn|function|item|union)"
# "Does P define a [pub] struct named X?", "does the file P declare struct X?", "Is a struct called X declared in P?"
# (groups: pub, kind, name)
_DEFINES = [re.compile(p, re.I) for p in (
    rf"\bdoes\s+(?:the\s+file\s+)?\S+\s+(?:define|declare)s?\s+(?:an?\s+)?{_KIND}\w*\s+"
    r"(?:named\s+|called\s+)?`?(\w+)`?",
    rf"\bis\s+(?:there\s+)?(?:an?\s+)?{_KIND}\w*\s+(?:named|called)\s+`?(\w+)`?\s+(?:defined|declared)\b")]
# Questions over many constructs at once (an argmax, distinct names): the grep and tree-sitter oracles read them
# as a count or list of one construct and would judge another question.
_AGGREGATE = re.compile(r"\b(most|fewest|least|largest|smallest|distinct|each\s+\w+\s+(?:name\s+)?once)\b", re.I)
_YES_NO = re.compile(r"^\W*(yes|no)\b", re.I)


def _verdict(success: bool, rationale: str, confidence: float = 1.0) -> Verdict:
    return Verdict(success=success, score=1.0 if success else 0.0, rationale=rationale, judge="oracle",
                   confidence=confidence)


def cannot_judge(judge: str, why: str) -> Verdict:
    """An abstention: not a success, confidence 0, the rationale says why nothing could decide."""
    return Verdict(success=False, score=0.0, rationale=f"{CANNOT_JUDGE}: {why}", judge=judge, confidence=0.0)


def _norm_type(text: str) -> str:
    return re.sub(r"\s+", "", text.replace("`", "")).rstrip(".;")


@dataclass
class OracleJudge(SourceJudge):
    """Code answers checked against the task's source (``meta["source_path"]``, a file or a directory, relative
    to ``source_root`` if given) by the code oracles, then by tree-sitter facts; see the module docstring."""

    name: str = field(default="oracle", init=False)

    def _sources(self, task: MemoryTask) -> Any:
        return self.task_source(task)[1][0]

    def judge(self, task: MemoryTask, trajectory: "Trajectory") -> Verdict:
        if trajectory.error:
            self._sources(task)  # a task without a readable source is a config error whatever the run did
            return _verdict(False, f"The run ended with an error ({str(trajectory.error)[:80]}).")
        return self.verify(task, "" if trajectory.answer is None else str(trajectory.answer))

    def verify(self, task: MemoryTask, answer: str) -> Verdict:
        """The verdict on ``answer`` to ``task.query`` from the task's source alone (the judge without a run: the
        experiment runner's golden check reads FINAL answers back from trajectory files)."""
        from rlmlab.oracle import AnalysisResult, TreeSitterOracle

        sources = self._sources(task)
        if not answer.strip():
            return _verdict(False, "The run gave no answer to judge.")

        facts = [TreeSitterOracle(text, path) for path, text in sources]
        verdict = self._facts(task.query, str(answer), facts)  # the narrower question first (see _facts)
        if verdict is not None:
            return verdict
        if _AGGREGATE.search(task.query):
            found = aggregate_verdict(task.query, str(answer), sources, facts, str(task.meta["source_path"]))
            if found is None or found[0] is None:
                why = found[1] if found else ("the question asks for an aggregate (most, largest, distinct, ...) "
                                              "that neither the oracles nor the tree-sitter facts compute")
                return cannot_judge(self.name, why + ".")
            return _verdict(found[0], found[1] + ".")
        outcome = self._validator.validate(AnalysisResult(task.query, str(answer),
                                                          source_path=task.meta["source_path"]))
        if outcome.status == "Golden":
            return _verdict(True, f"{outcome.method} verified the answer ({outcome.verdict}).")
        if outcome.status == "Failed":
            return _verdict(False, f"The oracle contradicts the answer: {str(outcome.reason)[:240]}.")
        return cannot_judge(self.name, f"the oracles could not decide ({str(outcome.reason)[:160]}) and no "
                                       "tree-sitter fact answers this kind of question.")

    def _facts(self, query: str, answer: str, facts: list[Any]) -> Verdict | None:
        """A verdict from tree-sitter facts (one TreeSitterOracle per source) for a return-type or defines
        question, else None. Asked before the oracles: "does P define a pub struct named X" reads to the grep
        oracle as a count of structs."""
        m = next((found for pattern in _RETURN if (found := pattern.search(query))), None)
        if m:
            name = m.group(1)
            found = [f for o in facts for f in o.get_functions() if f.name == name]
            types = {_norm_type(f.return_type or "()") for f in found}
            if not found:
                return None
            if len(types) > 1:  # several fns of that name disagree: the question is ambiguous here
                return cannot_judge(self.name, f"{len(found)} functions named {name} return different types.")
            want = types.pop()
            ok = _norm_type(answer) == want
            return _verdict(ok, f"tree-sitter: fn {name} returns {want}; the answer "
                                f"{'matches' if ok else 'does not match'}.")
        m = next((found for pattern in _DEFINES if (found := pattern.search(query))), None)
        if m:
            said = _YES_NO.match(answer)
            if said is None:
                return _verdict(False, "The question asks yes or no; the answer is neither.")
            pub, kind, name = bool(m.group(1)), m.group(2).lower(), m.group(3)
            defined = _defined(facts, kind, name, pub)
            ok = (said.group(1).lower() == "yes") == defined
            what = f"{'a pub ' if pub else ''}{kind} named {name}"
            return _verdict(ok, f"tree-sitter: the source {'defines' if defined else 'does not define'} {what}; "
                                f"the answer {said.group(1).lower()!r} {'agrees' if ok else 'disagrees'}.")
        return None


def _defined(facts: list[Any], kind: str, name: str, pub: bool) -> bool:
    """Whether any source defines an item of ``kind`` ("item": any kind) named ``name`` (with ``pub``: public)."""
    items: list[Any] = []
    for o in facts:
        if kind in ("struct", "item", "union"):
            items += o.get_structs()
        if kind in ("enum", "item"):
            items += o.get_enums()
        if kind in ("trait", "item"):
            items += o.get_traits()
        if kind in ("fn", "function", "item"):
            items += o.get_functions()
        if kind in ("type", "item"):
            items += [s for s in o.get_structs()] + o.get_enums()
    for it in items:
        if it.name != name:
            continue
        vis = normalise_text(str(getattr(it, "visibility", "") or ""))
        if not pub or vis.startswith("pub"):
            return True
    return False
