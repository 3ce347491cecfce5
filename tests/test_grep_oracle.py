"""GrepOracle verdicts on a real Rust file (tokio's src/fs/file.rs)."""

import re

import pytest

from rlmlab.oracle import (
    CODE_LINE, GrepClaim, GrepOracle, GrepVerification as V, is_count_query, parse_claim, parse_claims,
    pattern_for_query,
)
from rlmlab.oracle._grep import INTENT_PATTERNS
from rlmlab.oracle._source import ParseCache

Q_ALL = "Find all async functions"


@pytest.fixture(scope="module")
def oracle(rust_file):
    return GrepOracle(rust_file.read_text(), str(rust_file))


@pytest.fixture(scope="module")
def truth(oracle):
    found = oracle.ground_truth(pattern_for_query(Q_ALL))
    assert len(found) >= 10
    return found


def grep_n(rows):
    return "\n".join(f"{i}:{t}" for i, t in rows)


def test_exact_match_with_indented_lines_trimmed_by_the_agent(oracle, truth):
    # The agent trims indentation; real lines are indented. Both sides are normalised.
    answer = "\n".join(f"{i}:{t.strip()}" for i, t in truth)
    assert oracle.verify(answer, Q_ALL) is V.ExactMatch


def test_unordered_match(oracle, truth):
    assert oracle.verify(grep_n(reversed(truth)), Q_ALL) is V.UnorderedMatch


def test_strict_subset_depends_on_sample_or_all(oracle, truth):
    assert oracle.verify(grep_n(truth[:3]), "Show some async functions") is V.SubsetMatch
    assert oracle.verify(grep_n(truth[:3]), "Give the first 3 async functions") is V.SubsetMatch
    result = oracle.verify_detailed(grep_n(truth[:3]), Q_ALL)
    assert result.verdict is V.HasFalseNegatives and len(result.false_negatives) == len(truth) - 3


def test_false_positives_listed(oracle, truth):
    result = oracle.verify_detailed(grep_n(truth) + "\n1:async fn invented()", Q_ALL)
    assert result.verdict is V.HasFalsePositives and result.false_positives == ["1:async fn invented()"]


def test_mismatch_when_nothing_shared(oracle):
    assert oracle.verify("3:fn nothing()\n4:fn else()", Q_ALL) is V.Mismatch
    assert oracle.verify("", Q_ALL) is V.Mismatch


def test_bare_line_numbers_and_path_prefix(oracle, truth, rust_file):
    assert oracle.verify("\n".join(str(i) for i, _ in truth), Q_ALL) is V.ExactMatch
    assert oracle.verify("\n".join(f"src/fs/file.rs:{i}:{t}" for i, t in truth), Q_ALL) is V.ExactMatch


def test_count_queries(oracle, truth):
    n = len(truth)
    assert oracle.verify(f"There are {n}.", "Count occurrences of async functions") is V.ExactMatch
    assert oracle.verify(str(n - 1), "How many async functions are there?") is V.HasFalseNegatives
    assert oracle.verify(str(n + 1), "Count async functions") is V.HasFalsePositives


def test_ground_truth_equals_grep(oracle, rust_file):
    text = rust_file.read_text().splitlines()
    assert [i for i, _ in oracle.ground_truth(r"\.await")] == [i for i, t in enumerate(text, 1) if ".await" in t]


def test_quoted_pattern_and_unverifiable_query(oracle):
    assert pattern_for_query('Find all lines containing "spawn_blocking"') == re.escape("spawn_blocking")
    assert pattern_for_query("List all structs matching pattern Inner") == CODE_LINE + r"\bstruct\s+\w*Inner\w*"
    assert pattern_for_query("Explain why the file is buffered") is None
    assert oracle.verify("12:anything", "Explain why the file is buffered") is None


def test_parse_claims_reads_the_claim_forms_and_skips_prose():
    answer = "Here they are:\n  12:  async fn open()  \nsrc/fs/file.rs:40:pub async fn sync_all(&self)\n7\n\nDone."
    assert parse_claims(answer) == [
        GrepClaim("12:  async fn open()", 12, None, "  async fn open()  "),
        GrepClaim("src/fs/file.rs:40:pub async fn sync_all(&self)", 40, "src/fs/file.rs",
                  "pub async fn sync_all(&self)"),
        GrepClaim("7", 7),
    ]
    assert parse_claim("Here they are:") is None and parse_claims("") == []


def test_false_positives_are_the_raw_claims_that_parse_claims_returns(oracle, truth):
    answer = grep_n(truth) + "\nprose in between\n  1:async fn invented()  "
    [wrong] = [c for c in parse_claims(answer) if c.line == 1]
    assert oracle.verify_detailed(answer, Q_ALL).false_positives == [wrong.raw] == ["1:async fn invented()"]


def test_is_count_query():
    assert is_count_query("Count occurrences of async functions") and is_count_query("  how many structs?")
    assert not is_count_query(Q_ALL) and not is_count_query("List the functions that count bytes")


QUOTED_WITH_KEYWORDS = ["Find all occurrences of 'async fn'", 'grep for "async fn"', "Search for `async fn`",
                        "Find tokio's 'async fn' lines"]


@pytest.mark.parametrize("query", QUOTED_WITH_KEYWORDS)
def test_quoted_text_with_item_keywords_is_a_literal_pattern(oracle, rust_file, query):
    # Regression (issue 18): the words inside the quote ("fn") were read as an item kind and the text after
    # them as its name, so the regex matched nothing and a correct `grep -n 'async fn'` answer was Mismatch.
    text = rust_file.read_text().splitlines()
    grep = [(i, t) for i, t in enumerate(text, 1) if "async fn" in t]
    assert len(grep) >= 10 and pattern_for_query(query) == re.escape("async fn")
    assert oracle.verify(grep_n(grep), query) is V.ExactMatch


def test_count_of_a_quoted_pattern_counts_the_literal_text(oracle, rust_file):
    n = sum("async fn" in t for t in rust_file.read_text().splitlines())
    assert oracle.verify(str(n), "Count occurrences of 'async fn'") is V.ExactMatch
    assert oracle.verify(str(n - 1), "Count occurrences of 'async fn'") is V.HasFalseNegatives


def test_a_quote_after_a_naming_word_is_still_an_item_name(oracle, rust_file):
    assert pattern_for_query("Find all structs matching 'Inner'") == CODE_LINE + r"\bstruct\s+\w*Inner\w*"
    # the item keyword of a multi-word intent is kept whole ("async fn", not "async" alone)
    query = "Find all async functions named 'sync'"
    found = [i for i, t in enumerate(rust_file.read_text().splitlines(), 1)
             if re.search(r"^(?!\s*//).*\basync\s+fn\s+\w*sync\w*", t)]
    assert found and [i for i, _ in oracle.ground_truth(pattern_for_query(query))] == found


# -- ground truth over the whole text (issue 20): same lines as testing every line, computed once per batch ------

_TRICKY = """fn a() {}
// fn commented() {}
    async fn b() -> Result<(), E> { x?; }
let s = "fn in a string"; async
fn c() {} async   fn d() {}
\tpub(crate) async unsafe fn e() {}
"""


@pytest.mark.parametrize("pattern", [p for _, p in INTENT_PATTERNS] + [
    r"\s+$", r"^$", r"(?i)ASYNC", r"(?i:fn)\s", r"async|string", r"x(abc)*", r"\bfn\b.*\W\W", r"fn \w\(\)"])
def test_ground_truth_equals_a_line_by_line_search(pattern):
    expected = [(i, line) for i, line in enumerate(_TRICKY.splitlines(), 1) if re.search(pattern, line)]
    assert GrepOracle(_TRICKY).ground_truth(pattern) == expected


def test_other_line_breaks_keep_str_splitlines_numbering():
    text = "fn a() {}\x0cfn b() {}\r\nfn c() {}\n"
    assert [i for i, _ in GrepOracle(text).ground_truth(r"\bfn\s+\w+")] == [1, 2, 3]


def test_ground_truth_is_shared_through_the_parse_cache():
    cache = ParseCache()
    first = GrepOracle(_TRICKY, cache=cache).ground_truth_all(r"\bfn\s+\w+")
    again = GrepOracle.over_files({"x.rs": _TRICKY}, cache=cache).ground_truth_all(r"\bfn\s+\w+")
    assert [(i, t) for _, i, t in again] == [(i, t) for _, i, t in first]
    assert any(k.startswith("grep:") for k in cache.entry(_TRICKY).memo)
