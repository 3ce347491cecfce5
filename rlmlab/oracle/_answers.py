"""Reading an agent's answer: its items, names, numbers and yes/no, whether it says anything at all, and the
detailed result of comparing what it claims with the source (:class:`StructuralResult`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rlmlab.oracle._verdicts import Verification, set_verdict

__all__ = ["StructuralResult", "split_items", "squash", "param_key", "split_name_type", "name_type_claims",
           "compare_names", "says_nothing", "says_none", "claims_nothing", "first_number", "said_yes", "claimed_name",
           "PLACEHOLDER"]


@dataclass(frozen=True)
class StructuralResult:
    """The detailed form of a structural verdict: what was expected, what was claimed, what was wrong."""

    verdict: Verification
    aspect: str
    target: str
    expected: list[str] = field(default_factory=list)
    claimed: list[str] = field(default_factory=list)
    false_positives: list[str] = field(default_factory=list)
    false_negatives: list[str] = field(default_factory=list)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        # What asdict gives, without its recursive deep copy (a batch converts every result).
        return {"verdict": self.verdict, "aspect": self.aspect, "target": self.target, "expected": list(self.expected),
                "claimed": list(self.claimed), "false_positives": list(self.false_positives),
                "false_negatives": list(self.false_negatives), "note": self.note}


# An answer that claims there is nothing: "None.", "There are none", "No such functions", "nothing", "[]".
_NONE = re.compile(r"(?:none|nothing|zero|empty|\[\s*\]|no(?:\s+[\w-]+){1,6}|there\s+(?:are|is)\s+(?:none|no\b.*)"
                   r"|(?:it|the\s+\w+)\s+(?:has|have|contains?|defines?)\s+(?:none|no\b.*))", re.I)


def says_none(answer: str) -> bool:
    """Whether the whole answer says there are no items."""
    return bool(_NONE.fullmatch(answer.strip().strip("`*_\"'").strip().rstrip(".!").strip()))


def split_items(answer: str) -> list[str]:
    """Answer items: lines, and within a line commas at bracket depth 0; bullets, numbering, backticks stripped.
    An answer saying there are none has no items."""
    if says_none(answer):
        return []
    items = []
    for line in answer.replace("`", "").splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", line).strip().rstrip(",;.")
        if not line or line.endswith(":"):
            continue
        depth, start = 0, 0
        for i, ch in enumerate(line):
            depth += ch in "<([{"
            depth -= ch in ">)]}" and depth > 0
            if ch == "," and depth == 0:
                items.append(line[start:i].strip())
                start = i + 1
        items.append(line[start:].strip())
    return [i for i in items if i]


def squash(text: str) -> str:
    """Whitespace-insensitive form for comparing types and signatures."""
    return re.sub(r"\s+", "", text)


def param_key(pattern: str) -> str:
    """Compare parameter patterns without `mut` and whitespace; any form of self is ``self``."""
    key = re.sub(r"\bmut\s+", "", pattern).replace(" ", "")
    return "self" if re.fullmatch(r"&?('\w+)?self", key) else key


def split_name_type(item: str) -> tuple[str, str | None]:
    """``name: type`` at the first colon outside brackets (``Foo { a: b }: Foo`` keeps its braces)."""
    depth = 0
    for i, ch in enumerate(item):
        depth += ch in "<([{"
        depth -= ch in ">)]}" and depth > 0
        if ch == ":" and depth == 0 and item[i:i + 2] != "::":
            return item[:i].strip(), item[i + 1:].strip() or None
    return item.strip(), None


def name_type_claims(answer: str) -> list[tuple[str, str | None]]:
    claims = []
    for item in split_items(answer):
        item = re.sub(r"^pub(?:\([^)]*\))?\s+", "", item)
        name, typ = split_name_type(item)
        if typ is None:  # "size" or "size (u64)" or prose: the first word-like token is the name
            m = re.match(r"(&?\s*(?:'\w+\s+)?(?:mut\s+)?\w+)", name)
            name = m.group(1) if m else name
        claims.append((param_key(name), typ))
    return claims


def compare_names(aspect: str, target: str, claims: list[str], actual: list[str], sample: bool,
                  note: str = "") -> StructuralResult:
    """Claimed names against the real ones (order-free sets of names or paths)."""
    hits = [c for c in claims if c in actual]
    wrong = [c for c in claims if c not in actual]
    return StructuralResult(set_verdict(hits, len(wrong), actual, sample), aspect, target, list(actual), claims,
                            wrong, [a for a in actual if a not in set(hits)], note)


# -- answers that say nothing ---------------------------------------------------------------------------------

# A template slot left unfilled ({answer}, <answer>, [answer], {{result}}), or a stand-in word for "no answer".
PLACEHOLDER = re.compile(r"\{+\s*[\w .-]*\}+|<\s*[A-Za-z_][\w .-]+>|\[\s*[A-Za-z_][\w .-]*\s*\]|"
                         r"todo|tbd|fixme|xxx+|\.\.\.+|…|n/?a|null|nil|undefined|placeholder|answer|your answer"
                         r"(?: here)?|insert answer(?: here)?|\?+|-+|_+", re.I)
_WRAPPERS = "\"'`*_ \t\r\n"


def says_nothing(answer: str | None) -> str | None:
    """Why the answer says nothing (empty, or a placeholder such as ``{answer}``, ``'{answer}'``, ``<answer>``,
    ``TODO``, ``...``, ``N/A``), or None when it says something. Read before any oracle: such an answer is never
    verified, whatever the question."""
    if answer is None or not answer.strip():
        return "the answer is empty"
    core = answer.strip()
    while core and core[0] in _WRAPPERS and core[-1] == core[0]:
        core = core[1:-1].strip()
    core = core.rstrip(".").strip() if core not in ("...", "…") else core
    if not core or PLACEHOLDER.fullmatch(core):
        return f"the answer is a placeholder ({answer.strip()[:40]!r}), not an answer"
    return None


def claims_nothing(detail: dict[str, Any]) -> bool:
    """Whether a detailed oracle result records that the answer claimed no item (no line, no name, a count of 0)."""
    claimed = detail.get("claimed")
    if claimed in (0, [], ()):
        return True
    return detail.get("aspect") == "count" and list(claimed or []) == ["0"]


# -- numbers, yes/no, names -----------------------------------------------------------------------------------

def first_number(answer: str) -> int | None:
    m = re.search(r"(?<![\w.])-?\d+(?![\w.]\d)", answer.replace(",", ""))
    return int(m.group(0)) if m else None


def said_yes(answer: str) -> bool | None:
    """True for yes, False for no, None for neither (read from the first yes/no word)."""
    m = re.search(r"\b(yes|no|does not|doesn't|not|true|false)\b", answer, re.I)
    if m is None:
        return None
    return m.group(1).lower() in ("yes", "true")


_ITEM_KEYWORD = re.compile(r"^(?:(?:pub(?:\([^)]*\))?|const|async|unsafe|extern(?:\s+\"[^\"]*\")?|default)\s+)*"
                           r"(?:fn|struct|enum|trait|type|union|impl(?:<[^>]*>)?|mod)\s+")


def claimed_name(item: str) -> str | None:
    """The item name an answer item gives: ``matches_req`` of ``pub(crate) fn matches_req(...)``, ``Sender`` of
    ``crossbeam_channel::Sender<T>``, ``Foo`` of ``impl Display for Foo``; None when it names nothing."""
    item = item.strip().strip("`*").strip()
    if " for " in item and item.startswith("impl"):
        item = item.split(" for ", 1)[1]
    item = _ITEM_KEYWORD.sub("", item)
    m = re.match(r"&?\s*(?:'\w+\s+)?(?:mut\s+)?(?:dyn\s+)?((?:\w+::)*\w+)", item)
    return m.group(1).rsplit("::", 1)[-1] if m else None
