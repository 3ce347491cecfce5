"""Teach datasets: the vendored files load, answers normalise by the documented rules, bad rows are named by line."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlmlab.teach._data import (
    DatasetError, Item, answers_match, load_csv, load_dataset, load_gsm8k, normalise_answer,
)

ROOT = Path(__file__).resolve().parents[1]
MATH20 = ROOT / "data" / "math20.csv"
GSM8K = ROOT / "data" / "gsm8k_train_500.jsonl"


# --- the vendored files ---------------------------------------------------------------------------

def test_math20_loads_twenty_items_with_numeric_references():
    items = load_dataset(MATH20)
    assert len(items) == 20
    assert [i.qid for i in items] == [f"q{n}" for n in range(1, 21)]
    assert items[1] == Item(qid="q2", question="What is 17 * 23?", reference="391")
    for item in items:
        # references are written already normalised, so normalising changes nothing
        assert normalise_answer(item.reference) == item.reference, item
        assert answers_match(item.reference, item.reference)
    refs = {i.reference for i in items}
    assert {"-5", "2.5", "22.5"} <= refs  # the negative and decimal cases are really there


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_math80_is_math20_then_sixty_generated_word_problems_with_answers_that_recompute():
    """data/math80.csv (the scorecard's seed-002 items past 20) is what data/make_math80.py writes, starts with
    math20, and every added answer is the exact value of the expression its family generated it from."""
    import importlib.util

    from rlmlab.taskgen import generate_tasks

    spec = importlib.util.spec_from_file_location("make_math80", ROOT / "data" / "make_math80.py")
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    path = ROOT / "data" / "math80.csv"
    assert path.read_text(encoding="utf-8") == maker.build()  # committed file = the script's output
    items, first = load_dataset(path), load_dataset(MATH20)
    assert len(items) == 80 and [(i.question, i.reference) for i in items[:20]] == \
        [(i.question, i.reference) for i in first]
    generated = {" ".join(t.query.split()): t for t in generate_tasks("arith", n=300, seed=maker.SEED).train}
    for item in items[20:]:
        task = generated[item.question]
        assert task.kind in maker.FAMILIES and normalise_answer(task.expected) == item.reference
    assert len({generated[i.question].kind for i in items[20:]}) == len(maker.FAMILIES)


def test_math20_plain_expressions_are_correct():
    # Recompute every question of the form "What is <expr>?" so a typo in a reference fails here.
    checked = 0
    for item in load_csv(MATH20):
        q = item.question
        if q.startswith("What is ") and "%" not in q:
            value = eval(q.removeprefix("What is ").rstrip("?"), {"__builtins__": {}})  # noqa: S307 - our own file
            assert answers_match(str(value), item.reference), item
            checked += 1
    assert checked == 9


def test_gsm8k_slice_loads_500_numeric_items():
    items = load_dataset(GSM8K)
    assert len(items) == 500
    assert len({i.qid for i in items}) == 500
    assert items[0].qid == "gsm-1" and items[0].reference == "72"
    assert items[0].question.startswith("Natalia sold clips")
    for item in items:
        Decimal(item.reference)  # raises if not a plain number
        assert normalise_answer(item.reference) == item.reference
    # "#### 1,080"-style references lose their thousands comma
    assert all("," not in i.reference for i in items)


def test_gsm8k_limit_keeps_first_items():
    assert [i.qid for i in load_gsm8k(GSM8K, limit=3)] == ["gsm-1", "gsm-2", "gsm-3"]
    assert load_dataset(GSM8K, limit=0) == []
    with pytest.raises(ValueError, match="limit"):
        load_gsm8k(GSM8K, limit=-1)


def test_item_round_trips_through_json():
    item = Item(qid="q1", question="What is 2 + 2?", reference="4")
    assert Item.from_dict(json.loads(json.dumps(item.to_dict()))) == item


# --- normalise_answer / answers_match --------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("1,234", "1234"),
    ("The total is 1,234,567 apples", "1234567"),
    ("$1,234.50", "1234.5"),
    ("It costs €3.00 each", "3"),
    ("£7", "7"),
    ("18 dollars", "18"),
    ("5 km", "5"),
    ("5km", "5"),
    ("20%", "20"),
    ("2.50", "2.5"),
    ("4.0", "4"),
    ("100", "100"),
    (".5", "0.5"),
    ("-3", "-3"),
    ("-$5", "-5"),
    ("\u22124", "-4"),
    ("x = -3", "-3"),
    ("The temperature is -7 degrees", "-7"),
    ("-0", "0"),
    ("5-3", "3"),          # subtraction, not 5 and -3
    ("10 - 4", "4"),
    ("First 3, then 4, so 12", "12"),              # last number wins
    ("17 * 23 = 391", "391"),                      # trailing "= n"
    ("Natalia sold 24 in May.\n#### 72", "72"),    # GSM8K marker
    ("#### 1,080", "1080"),
    ("The answer is 42. Check: 6*7 = 42, times 2", "42"),
    ("answer is 5. Wait, the answer is 6 since 2*3", "6"),  # last marker wins
    ("Final answer: 12 apples, 3 left over", "12"),
    ("\\boxed{12} and 3", "12"),
    ("The answer is unclear, maybe 9", "9"),       # marker without a number falls back to last number
])
def test_normalise_answer_rules(text, expected):
    assert normalise_answer(text) == expected


@pytest.mark.parametrize("text", ["", "no number here", "I don't know.", "v2 of the plan"])
def test_normalise_answer_none_without_a_number(text):
    assert normalise_answer(text) is None


@given(st.decimals(min_value=-10**9, max_value=10**9, places=4, allow_nan=False, allow_infinity=False))
def test_normalise_answer_round_trips_plain_numbers(value):
    text = format(value, "f")
    assert Decimal(normalise_answer(text)) == value
    assert normalise_answer(f"The answer is {text}.") == normalise_answer(text)


def test_answers_match():
    assert answers_match("The answer is 391.", "391")
    assert answers_match("$2.50", "2.5")
    assert answers_match("That is 1,080 dollars", "1080")
    assert answers_match("-5", "-5.0")
    assert answers_match("0.30000000000000004", "0.3")  # within 1e-9
    assert not answers_match("0.300001", "0.3")
    assert not answers_match("392", "391")
    assert not answers_match("-5", "5")
    assert not answers_match("I am not sure", "4")
    # a reference without a number is compared as trimmed, case-folded text
    assert answers_match(" paris", "Paris")
    assert not answers_match("Lyon", "Paris")


# --- malformed files ------------------------------------------------------------------------------

def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_qid_column_and_blank_lines(tmp_path):
    path = _write(tmp_path, "d.csv", 'qid,question,reference\na,"What is 1, plus 1?",2\n\nb,What is 3?,3\n')
    assert load_csv(path) == [
        Item("a", "What is 1, plus 1?", "2"), Item("b", "What is 3?", "3"),
    ]


@pytest.mark.parametrize("body, line, fragment", [
    ("question,reference\nWhat is 1?,1\nWhat is 2?,2,extra\n", 3, "3 fields, expected 2"),
    ("question,reference\nWhat is 1?,1\n\nWhat is 2?\n", 4, "1 field, expected 2"),
    ("question,reference\nWhat is 1?,1\nWhat is 2?,\n", 3, "empty 'reference'"),
    ("question,reference\n ,1\n", 2, "empty 'question'"),
    ("qid,question,reference\na,Q1,1\na,Q2,2\n", 3, "qid 'a' already used on line 2"),
    ("question,answer\nWhat is 1?,1\n", 1, "lacks 'reference'; expected"),
    ("", 1, "empty file"),
])
def test_malformed_csv_names_the_line(tmp_path, body, line, fragment):
    path = _write(tmp_path, "bad.csv", body)
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert fragment in str(info.value)
    assert info.value.line == line and info.value.path == str(path)
    assert isinstance(info.value, ValueError)


GOOD = json.dumps({"question": "What is 2 + 2?", "answer": "2 + 2 = 4\n#### 4"})


@pytest.mark.parametrize("bad, fragment", [
    ("{not json", "not valid JSON"),
    ('["question", "answer"]', "a JSON list; expected an object"),
    (json.dumps({"question": "Q?"}), "missing or empty 'answer'"),
    (json.dumps({"question": "", "answer": "#### 1"}), "missing or empty 'question'"),
    (json.dumps({"question": "Q?", "answer": "It is 4."}), "has no '####'"),
    (json.dumps({"question": "Q?", "answer": "It is 4.\n#### four"}), "no number after '####'"),
])
def test_malformed_jsonl_names_the_line(tmp_path, bad, fragment):
    path = _write(tmp_path, "bad.jsonl", f"{GOOD}\n\n{bad}\n{GOOD}\n")
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value).startswith(f"{path}:3: ")
    assert fragment in str(info.value)


def test_jsonl_qids_use_line_numbers(tmp_path):
    path = _write(tmp_path, "ok.jsonl", f"{GOOD}\n\n{GOOD}\n")
    assert [(i.qid, i.reference) for i in load_gsm8k(path)] == [("gsm-1", "4"), ("gsm-3", "4")]


def test_unknown_suffix_is_rejected(tmp_path):
    path = _write(tmp_path, "d.txt", "question,reference\n")
    with pytest.raises(DatasetError, match=r"d\.txt: unknown suffix '\.txt'; expected \.csv or \.jsonl"):
        load_dataset(path)


# --- issue 17: files that are not datasets at all ------------------------------------------------------------

@pytest.mark.parametrize("body, line, fragment", [
    ('question,reference\nWhat is 1?,1\n"What is 2?,2\nWhat is 3?,3\n', 3, "quoted field opened here is never closed"),
    ('question,reference\nWhat is 1?,1\nWhat is 2?,"2\n\n', 3, "quoted field opened here is never closed"),
    ('question,reference\n"What is\n1?",1\n"What is 2?"x,2\n', 4, "',' expected after '\"'"),
    ("question,reference\n" + "x" * 200_000 + ",1\n", 2, "field larger than field limit"),
])
def test_bad_csv_syntax_is_reported_where_it_starts(tmp_path, body, line, fragment):
    path = _write(tmp_path, "bad.csv", body)
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value).startswith(f"{path}:{line}: ") and fragment in str(info.value)


@pytest.mark.parametrize("name, data, where", [
    ("latin1.csv", b"question,reference\nWhat is 1?,1\nQu\xe9 es 2?,2\n", ":3: not UTF-8 text (byte 0xe9 at column 3)"),
    ("latin1.jsonl", GOOD.encode() + b"\n" + b'{"question": "Qu\xe9?", "answer": "#### 1"}\n', ":2: not UTF-8 text"),
    ("nan.jsonl", b'{"question": "Q?", "answer": NaN}\n', ":1: not valid JSON (NaN is not JSON"),
    ("missing.csv", None, ": no such file"),
    ("folder.csv", "dir", ": a directory; expected a file"),
])
def test_a_file_that_cannot_be_read_as_text_is_a_dataset_error(tmp_path, name, data, where):
    path = tmp_path / name
    if data == "dir":
        path.mkdir()
    elif data is not None:
        path.write_bytes(data)
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value).startswith(f"{path}{where}"), str(info.value)
