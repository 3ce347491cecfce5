"""Aggregate code questions the ``oracle`` judge decides from tree-sitter facts over a module's files.

The grep and tree-sitter oracles count or list one construct; three questions over many constructs at once are
computed here from the same facts, for the judge only (no answer key is read):

- the file with the most unsafe blocks ("Which file of X contains the most unsafe blocks?"): ``unsafe_block``
  nodes per file, the answer a path relative to the module's directory (or to ``src/``);
- the trait implemented by the most distinct types, counting impl blocks ("... counting impl blocks only (not
  derives) and not counting Future?"): impl blocks per trait name, distinct implementing type names, negative
  impls left out, the traits the question sets aside ("not counting Future", "Future aside") excluded;
- the number of distinct trait names impl blocks implement.

A tie for the maximum makes the question ambiguous: :func:`aggregate_verdict` then abstains, as it does for an
aggregate it does not read (a question about derives, or one that does not say it counts impl blocks).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath
from typing import Any

from rlmlab.numbers import final_number

__all__ = ["aggregate_verdict"]

_MOST = r"(?:most|largest\s+number\s+of|greatest\s+number\s+of|highest\s+number\s+of)"
_MOST_UNSAFE = re.compile(rf"\bwhich\s+file\b.*\b{_MOST}\s+unsafe\s+blocks?\b", re.I | re.S)
_MOST_IMPLEMENTED = re.compile(rf"\bwhich\s+trait\b.*\b{_MOST}\s+(?:distinct\s+)?(?:implementing\s+)?types\b",
                               re.I | re.S)
_DISTINCT_TRAITS = re.compile(r"\b(?:how\s+many|count)\b.*\bdistinct\s+trait(?:\s+name)?s\b", re.I | re.S)
_IMPL_BLOCKS = re.compile(r"\bimpl\s+blocks?\b", re.I)
_WITH_DERIVES = re.compile(r"\b(?:including|and|or|with|plus)\s+(?:#\[)?derives?\b", re.I)
_SET_ASIDE = re.compile(r"\b(?:not\s+counting|except(?:ing)?|excluding|aside\s+from)\s+`?(\w+)`?|`?(\w+)`?\s+aside\b",
                        re.I)


def _plain(answer: str) -> str:
    """The answer as one name or path: quotes, backticks, a trailing full stop and surrounding space removed."""
    return answer.strip().strip("`'\"").strip().rstrip(".").strip("`'\"")


def _impls(facts: list[Any]) -> list[Any]:
    return [i for o in facts for i in o.get_impls() if i.trait_name and not i.negative]


def _top(counts: dict[str, int]) -> tuple[list[str], int]:
    top = max(counts.values(), default=0)
    return sorted(k for k, v in counts.items() if v == top), top


def aggregate_verdict(query: str, answer: str, sources: list[tuple[str | None, str]], facts: list[Any],
                      source_path: str) -> tuple[bool | None, str] | None:
    """(success, rationale) for an aggregate question ``query``; (None, why) to abstain; None when ``query`` is
    not an aggregate this module reads. ``sources`` are the (path relative to ``source_path``, text) pairs the
    validator resolved and ``facts`` their TreeSitterOracles, in the same order."""
    if _MOST_UNSAFE.search(query):
        if len(sources) < 2:
            return None, "the question compares files, and the source is one file"
        counts = {str(path): len(o.query("(unsafe_block) @b")) for (path, _), o in zip(sources, facts)}
        winners, top = _top(counts)
        if len(winners) != 1 or top == 0:
            return None, f"{len(winners)} files tie with {top} unsafe blocks"
        root = PurePosixPath(source_path).name
        said = _plain(answer).removeprefix("./")
        ok = said in (winners[0], f"src/{winners[0]}", f"{root}/{winners[0]}")
        return ok, (f"tree-sitter: {winners[0]} has the most unsafe blocks ({top}); the answer "
                    f"{'names it' if ok else 'names another file'}")
    most = _MOST_IMPLEMENTED.search(query)
    if most or _DISTINCT_TRAITS.search(query):
        if not _IMPL_BLOCKS.search(query) or _WITH_DERIVES.search(query):
            return None, "the question does not say it counts impl blocks only (derives would count too)"
        impls = _impls(facts)
        if not most:
            want = len({i.trait_name for i in impls})
            got = final_number(answer)
            ok = got is not None and got == want
            return ok, f"tree-sitter: impl blocks implement {want} distinct traits; the answer says {answer.strip()!r}"
        aside = {a or b for a, b in _SET_ASIDE.findall(query)}
        per = Counter()
        for trait in {i.trait_name for i in impls} - aside:
            per[trait] = len({i.type_name for i in impls if i.trait_name == trait})
        winners, top = _top(dict(per))
        if len(winners) != 1 or top == 0:
            return None, f"{len(winners)} traits tie with {top} implementing types"
        said = re.split(r"::", _plain(answer))[-1].split("<")[0].strip()
        ok = said == winners[0]
        return ok, (f"tree-sitter: {winners[0]} has the most implementing types ({top}, impl blocks only"
                    f"{', not counting ' + ', '.join(sorted(aside)) if aside else ''}); the answer "
                    f"{'names it' if ok else 'names ' + repr(said)}")
    return None
