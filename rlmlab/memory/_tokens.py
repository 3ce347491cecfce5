"""One tokeniser for both lexical retrievers, and the FTS5 query sanitiser built on it.

The rules mirror FTS5's ``unicode61 remove_diacritics 2`` tokenizer used by the store's index:
lower case, diacritics removed, a token is a run of letters and digits (underscore and all
punctuation separate tokens). So ``FTS5Retriever`` and ``BM25Retriever`` see the same words.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["tokenize", "query_tokens", "fts_query", "STOPWORDS", "MAX_QUERY_TOKENS", "FIELD_WEIGHTS"]

_WORD = re.compile(r"[^\W_]+")

# Words too common to say anything about which strategy applies; dropped from queries only.
STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from how i if in into is it its my not of on or so than "
    "that the their then there these this to was we what when where which who why will with you your".split()
)

MAX_QUERY_TOKENS = 32  # a longer query is cut here: FTS5 cost grows with the number of OR terms


def tokenize(text: str) -> list[str]:
    """Lower-cased, diacritic-free runs of letters and digits, in order."""
    if text.isascii():  # nothing to fold: NFKD leaves ASCII as it is
        return _WORD.findall(text.lower())
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return _WORD.findall(folded)


def query_tokens(query: str) -> list[str]:
    """The searchable words of a query: tokens without stopwords or single characters, deduplicated, in order."""
    seen: dict[str, None] = {}
    for tok in tokenize(query):
        if len(tok) > 1 and tok not in STOPWORDS:
            seen.setdefault(tok, None)
    return list(seen)[:MAX_QUERY_TOKENS]


def fts_query(query: str) -> str | None:
    """An FTS5 MATCH expression for free text, or None if it has no searchable words.

    Every token is double-quoted (tokens hold only letters and digits, so quoting is always safe) and the
    tokens are OR-ed: an item matching any word is a candidate and bm25 ranks items matching more words
    higher. User syntax (quotes, AND/OR/NOT, -, *, ^, column filters, parentheses) is thereby neutralised.
    """
    tokens = query_tokens(query)
    if not tokens:
        return None
    return " OR ".join(f'"{tok}"' for tok in tokens)


# Field weights for lexical ranking, used by FTS5's bm25() (in the index's column order) and by
# BM25Retriever alike. The title names the strategy, so a word there is the strongest evidence the item
# is about the query; the description is the one-line summary mem_search shows; tags are curated keywords,
# more deliberate than an incidental word in the body but short and shared by many items; the content is
# the long body where most words are incidental (bm25 already normalises for its length).
FIELD_WEIGHTS: dict[str, float] = {"title": 8.0, "description": 4.0, "content": 1.0, "tags": 2.0}
