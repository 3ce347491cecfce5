"""The generic operations over a whole tool result's matches that a step may submit (issue 53): offered whenever a
``ctx_find`` or ``ast_query`` result is in scope over code or a document, never chosen by the question's words.
They are what a run without memory composes a many-item answer from; whole procedures live in memory (L2)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rlmlab.executors._gbnf import gbnf_alt, gbnf_lit

__all__ = ["match_operations", "ASK_LINES"]

ASK_LINES = 20  # matched lines a sub-call reads


def match_operations(var: str, joins: Sequence[str] = (), *, names: Sequence[str] = (), files: bool = False,
                     form: str | None = None, ask: bool = False) -> list[str]:
    """GBNF alternatives of the generic operations over the matches of the whole tool result held by ``var``, as
    ``SUBMIT`` values. They depend on the result's type only, never on the question's words:

    - every match as ``line:text`` (``file:file_line:text`` when ``files``), one per line;
    - with ``files``, the file with the most matches (ties to the first in sorted order);
    - over each capture name of ``joins``: how many distinct values, the most frequent value, the most frequent
      value other than one of ``names``, and (a filter) the distinct values of a capture in the matches whose
      other capture equals one of ``names``, joined with ", ".

    - with ``ask``, a sub-call (``llm_query``) reading the first :data:`ASK_LINES` matched lines for the question
      (the REPL's ``query`` variable, so the grammar holds no words of it): the value a line states, in the
      sub-model's words.

    ``form`` "count" keeps the counts only and "choice" none (a yes/no answer is the choice over a result)."""
    if form == "choice":
        return []
    over = f' for m in {var}["matches"]'
    out: list[str] = []
    name_rule = gbnf_alt(gbnf_lit(json.dumps(n)) for n in dict.fromkeys(names)) if names else None
    if form != "count":
        place = 'm["file"] + ":" + str(m["file_line"])' if files else 'str(m["line"])'
        out.append(gbnf_lit(f'"\\n".join({place} + ":" + m["text"].strip(){over})'))
        if files:
            out.append(gbnf_lit(f'max(sorted({{m["file"]{over}}}), key=[m["file"]{over}].count)'))
        if ask:
            lines = f' for m in {var}["matches"][:{ASK_LINES}]'
            out.append(gbnf_lit(f'llm_query(query + "\\n" + "\\n".join(m["text"].strip(){lines}))'))
    for k in dict.fromkeys(joins):
        cap = f'm["captures"][{json.dumps(k)}]'
        out.append(gbnf_lit(f"len({{{cap}{over}}})"))
        if form == "count":
            continue
        out.append(gbnf_lit(f"max(sorted({{{cap}{over}}}), key=[{cap}{over}].count)"))
        if name_rule is None:
            continue
        out.append(f'{gbnf_lit(f"max(sorted({{{cap}{over} if {cap} != ")} {name_rule} '
                   f'{gbnf_lit(f"}}), key=[{cap}{over}].count)")}')
        for other in dict.fromkeys(joins):
            if other != k:
                head = '", ".join(dict.fromkeys(' + f'{cap}{over} if m["captures"][{json.dumps(other)}] == '
                out.append(f'{gbnf_lit(head)} {name_rule} {gbnf_lit("))")}')
    return out
