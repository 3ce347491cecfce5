"""Question sets for the teacher-learner loop, and the rule that says whether an answer is right.

Two formats load into :class:`Item` records:

- CSV with columns ``question,reference`` (and an optional ``qid``), such as ``data/math20.csv``;
- GSM8K-style JSONL, one ``{"question", "answer"}`` object per line, where ``answer`` is a worked
  solution ending in ``#### <number>`` (``data/gsm8k_train_500.jsonl``).

A malformed row is rejected at load, with ``path:line`` and what was expected, rather than turning
into a silently wrong reference halfway through a run.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import asdict, dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from rlmlab._files import decode_line, json_problem, read_text, strict_json
from rlmlab.errors import InputFileError

__all__ = [
    "Item", "DatasetError", "normalise_answer", "answers_match", "load_csv", "load_gsm8k", "load_dataset",
]

# Exact tolerance for numeric comparison; answers are compared as Decimals, so this only matters
# for references or answers written with many decimal places.
TOLERANCE = Decimal("1e-9")


@dataclass(frozen=True)
class Item:
    """One question with its reference answer; ``qid`` is unique within a dataset."""

    qid: str
    question: str
    reference: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, str]) -> Item:
        return cls(qid=data["qid"], question=data["question"], reference=data["reference"])


class DatasetError(InputFileError):
    """A dataset file is malformed; the message reads ``path:line: problem`` so an editor can jump to it."""


def _text(path: Path) -> str:
    try:
        return read_text(path)
    except InputFileError as exc:
        raise DatasetError(exc.path, exc.line, exc.problem) from None


def _open_quote_line(text: str) -> int:
    """The line of the quote still open at the end of ``text`` (CSV rules: a quote opens only at a field's start,
    ``""`` inside quotes is a literal quote)."""
    line = opened = 1
    quoted, field_start, i = False, True, 0
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == '"':
                if text.startswith('"', i + 1):
                    i += 1
                else:
                    quoted = False
        elif ch == '"' and field_start:
            quoted, opened = True, line
        field_start = not quoted and ch in ",\r\n"
        line += ch == "\n"
        i += 1
    return opened


# --- answer normalisation -------------------------------------------------------------------------

# A number not glued to a word or another number on its left ("x2", "v1.2" are not numbers, "5km"
# is 5). A sign glued to a digit or letter on its left is not part of the number ("5-3" yields 5
# and 3, not 5 and -3); _numbers also drops a spaced sign after an operand ("5 - 3").
# Thousands separators must group by three ("1,234,567"); "3,4" is two numbers.
_NUMBER = re.compile(r"(?<![\w.])(?P<sign>[-+]?)(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?!\d)")
# Markers after which the final answer is written, most explicit first; the last occurrence wins
# because models often restate a corrected answer.
_MARKERS = (
    re.compile(r"####"),
    re.compile(r"\\boxed\{"),
    re.compile(r"\banswer\s*(?:is|:|=)", re.IGNORECASE),
)
_CURRENCY = re.compile(r"[$€£]")
_MINUS = re.compile(r"[\u2212\u2013]")  # unicode minus and en dash, as typed in some model output


def _numbers(text: str) -> list[str]:
    out = []
    for m in _NUMBER.finditer(text):
        sign = m.group("sign")
        # "10 - 4" is a subtraction, not 10 and -4: a spaced sign after an operand is binary.
        before = text[:m.start()].rstrip()
        if sign == "+" or (sign and before and (before[-1].isdigit() or before[-1] == ")")):
            sign = ""
        out.append(sign + m.group("num").replace(",", ""))
    return out


def normalise_answer(text: str) -> str | None:
    """The final numeric answer in ``text`` as a canonical string, or None when it holds no number.

    Rules, in order:

    1. Currency signs ($, €, £) are dropped, so "-$5" is -5; a unicode minus counts as "-".
    2. If the text has a marker ("####", "\\boxed{", "answer is", "answer:", "answer ="), the first
       number after the last marker is the answer. A marker followed by no number is ignored.
    3. Otherwise the last number in the text is the answer; a trailing "... = 18" falls under this rule.
    4. Thousands commas are removed ("1,234" -> "1234"); words and units after the number are
       ignored ("18 dollars", "5 km", "20%" -> "20"). A minus is a sign only when it does not
       follow an operand: "5-3" and "5 - 3" hold 5 and 3, while "= -3", "is -3" and "(-3)" hold -3.
    5. The number is written in plain decimal with no trailing zeros: "2.50" -> "2.5", "4.0" -> "4",
       "-0" -> "0", "100" stays "100". Fractions ("3/4") and exponents ("1e5") are not recognised.
    """
    text = _MINUS.sub("-", _CURRENCY.sub("", text))
    chosen: str | None = None
    for marker in _MARKERS:
        hits = list(marker.finditer(text))
        if hits:
            after = _numbers(text[hits[-1].end():])
            if after:
                chosen = after[0]
                break
    if chosen is None:
        found = _numbers(text)
        if not found:
            return None
        chosen = found[-1]
    return _canonical(Decimal(chosen))


def _canonical(value: Decimal) -> str:
    out = format(value.normalize(), "f")
    return "0" if out == "-0" else out


def answers_match(answer: str, reference: str) -> bool:
    """True when ``answer`` and ``reference`` hold the same final number (within 1e-9).

    A reference with no number (a non-arithmetic question) is compared as text instead: equal after
    trimming and case-folding. An answer with no number never matches a numeric reference.
    """
    ref = normalise_answer(reference)
    if ref is None:
        return answer.strip().casefold() == reference.strip().casefold()
    got = normalise_answer(answer)
    if got is None:
        return False
    try:
        return abs(Decimal(got) - Decimal(ref)) <= TOLERANCE
    except InvalidOperation:  # pragma: no cover - both strings come from _canonical
        return False


# --- loaders --------------------------------------------------------------------------------------

def _check_limit(limit: int | None) -> None:
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be None or >= 0, got {limit}")


def _csv_rows(path: Path, text: str):
    """(line the row starts on, row) for each CSV row; csv errors become DatasetError at the row's line (a quote
    never closed: at the line where it opened)."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    line = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                raise DatasetError(path, _open_quote_line(text),
                                   "a quoted field opened here is never closed (unexpected end of data)") from None
            raise DatasetError(path, line, f"bad CSV: {exc}") from None
        yield line, row
        line = reader.line_num + 1


def load_csv(path: str | Path, limit: int | None = None) -> list[Item]:
    """Items from a CSV with a header naming ``question`` and ``reference`` (extra columns are ignored).

    ``qid`` comes from a ``qid`` column when there is one, else "q1".."qN" in row order. Blank lines
    are skipped. Raises DatasetError (``path:line``, the line a row starts on) for a file that is not UTF-8 text,
    bad CSV syntax (a quote never closed is reported where it opened), a missing header column, a row with the
    wrong number of fields, an empty question/reference/qid, or a repeated qid. ``limit`` keeps the first N.
    """
    _check_limit(limit)
    path = Path(path)
    rows = _csv_rows(path, _text(path).removeprefix("\ufeff"))
    items: list[Item] = []
    seen: dict[str, int] = {}
    header = next(rows, (1, None))[1]
    if header is None:
        raise DatasetError(path, 1, "empty file; expected a header row 'question,reference'")
    header = [h.strip() for h in header]
    missing = [c for c in ("question", "reference") if c not in header]
    if missing:
        raise DatasetError(path, 1, f"header {header} lacks column(s) {missing}; expected 'question,reference'")
    col = {name: header.index(name) for name in ("question", "reference", "qid") if name in header}
    row_no = 0
    for line, row in rows:
        if limit is not None and len(items) >= limit:
            break
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise DatasetError(path, line, f"{len(row)} field(s), expected {len(header)} ({','.join(header)})")
        row_no += 1
        fields = {name: row[i].strip() for name, i in col.items()}
        for name, value in fields.items():
            if not value:
                raise DatasetError(path, line, f"empty '{name}' field; expected a non-empty value")
        qid = fields.get("qid", f"q{row_no}")
        if qid in seen:
            raise DatasetError(path, line, f"qid {qid!r} already used on line {seen[qid]}; expected unique qids")
        seen[qid] = line
        items.append(Item(qid=qid, question=fields["question"], reference=fields["reference"]))
    return items


def load_gsm8k(path: str | Path, limit: int | None = None) -> list[Item]:
    """Items from GSM8K-style JSONL: ``{"question": ..., "answer": "<worked solution>\\n#### 72"}``.

    The reference is the normalised number after the last "####" (so "#### 1,080" gives "1080");
    ``qid`` is "gsm-<line number>". Blank lines are skipped. Raises DatasetError (``path:line``) for a
    line that is not a JSON object, lacks a string ``question`` or ``answer``, or has no number after
    "####". ``limit`` keeps the first N items and leaves later lines unread.
    """
    _check_limit(limit)
    path = Path(path)
    items: list[Item] = []
    if path.is_dir() or not path.exists():
        _text(path)  # the one-line error for a directory or a missing file
    with path.open("rb") as f:
        for line_no, data in enumerate(f, start=1):
            if limit is not None and len(items) >= limit:
                break
            try:
                raw = decode_line(data)
            except ValueError as exc:
                raise DatasetError(path, line_no, str(exc)) from None
            if not raw.strip():
                continue
            try:
                record = strict_json(raw)
            except ValueError as exc:
                problem = json_problem(exc).removeprefix("not JSON (").removesuffix(")")
                raise DatasetError(path, line_no, f"not valid JSON ({problem}); expected one object per line") from None
            if not isinstance(record, dict):
                raise DatasetError(path, line_no, f"a JSON {type(record).__name__}; expected an object")
            for key in ("question", "answer"):
                if not isinstance(record.get(key), str) or not record[key].strip():
                    raise DatasetError(path, line_no, f"missing or empty '{key}'; expected a non-empty string")
            answer = record["answer"]
            if "####" not in answer:
                raise DatasetError(path, line_no, "'answer' has no '####'; expected a solution ending in '#### <number>'")
            reference = normalise_answer(answer.rsplit("####", 1)[1])
            if reference is None:
                raise DatasetError(path, line_no, "no number after '####'; expected '#### <number>'")
            items.append(Item(qid=f"gsm-{line_no}", question=record["question"].strip(), reference=reference))
    return items


def load_dataset(path: str | Path, limit: int | None = None) -> list[Item]:
    """Load ``.csv`` with :func:`load_csv` or ``.jsonl`` with :func:`load_gsm8k`; other suffixes, and a file with no
    items (unless ``limit`` is 0), raise DatasetError."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise DatasetError(path, None, f"unknown suffix {path.suffix!r}; expected .csv or .jsonl")
    items = load_csv(path, limit=limit) if suffix == ".csv" else load_gsm8k(path, limit=limit)
    if not items and limit != 0:
        raise DatasetError(path, None, "no items; expected a question on each row (CSV) or line (JSONL)")
    return items
