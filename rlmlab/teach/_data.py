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
from dataclasses import dataclass
from pathlib import Path

from rlmlab.provenance import note_file
from rlmlab._files import decode_line, json_problem, read_text, strict_json
from rlmlab.errors import InputFileError
from rlmlab.numbers import answers_match, normalise_answer
from rlmlab.records import Record
from rlmlab.text import plural

__all__ = [
    "Item", "DatasetError", "normalise_answer", "answers_match", "load_csv", "load_gsm8k", "load_dataset",
]



@dataclass(frozen=True)
class Item(Record):
    """One question with its reference answer; ``qid`` is unique within a dataset."""

    qid: str
    question: str
    reference: str


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
        raise DatasetError(path, 1, f"header {header} lacks {' and '.join(map(repr, missing))}; expected "
                                    "'question,reference'")
    col = {name: header.index(name) for name in ("question", "reference", "qid") if name in header}
    row_no = 0
    for line, row in rows:
        if limit is not None and len(items) >= limit:
            break
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise DatasetError(path, line, f"{plural(len(row), 'field')}, expected {len(header)} ({','.join(header)})")
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
    note_file(path, "dataset")
    items = load_csv(path, limit=limit) if suffix == ".csv" else load_gsm8k(path, limit=limit)
    if not items and limit != 0:
        raise DatasetError(path, None, "no items; expected a question on each row (CSV) or line (JSONL)")
    return items
