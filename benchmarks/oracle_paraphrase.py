"""Issue 53: the code oracle on questions in a researcher's own words (the paraphrase sets, written blind).

For each question of a split (``--split dev`` = data/paraphrase/code/A, ``--split test`` = code/B), the writer's
reference answer (``expected``: a set joined one per line, a number as text) is given to
:class:`rlmlab.oracle.TraceValidator` as the agent's answer, against the question's source (a file, or the
directory for scope module or crate, under /usr/share/cargo/registry/<crate>-<version>/src/). Counted per path:
agree (Golden), disagree (Failed) and undecided (Unverified); agreement = agree / (agree + disagree), and the
undecided share of all questions. Two placeholder answers, ``'{answer}'`` and the empty answer, are given to every
question too: none may be Golden.

Both paths run side by side in one process: **reader**, the validator as shipped (the question reader decides the
kind, the targets and the check), and **rules**, ``TraceValidator(read_questions=False)``, the classifier's regex
rules alone (the routing before the reader; the answer checks that every oracle shares, such as the placeholder
check, apply to both). The reader's kind, scope and targets are also compared with the writer's labels.

Measured with the code before the reader (the same loop, the dev split, the validator of that commit): agree 14,
disagree 29, undecided 4 (agreement 14/43 = 32.6%, undecided 8.5%), and 5 of the 94 placeholder answers Golden.

``--smoke`` (make check): the first 8 dev questions, to check the script itself; JSON to
runs/bench_smoke/oracle_paraphrase.json (else runs/bench/oracle_paraphrase_<split>.json). ``--details`` prints
one row per question (dev only: the test split's questions are not to be read).

Run:  .venv/bin/python benchmarks/oracle_paraphrase.py [--split dev|test] [--smoke] [--details] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from rlmlab.oracle import AnalysisResult, TraceValidator, TreeSitterOracle, read_question

PROJECT = Path(__file__).resolve().parents[1]
REGISTRY = Path("/usr/share/cargo/registry")
SPLITS = {"dev": PROJECT / "data" / "paraphrase" / "code" / "A" / "questions.jsonl",
          "test": PROJECT / "data" / "paraphrase" / "code" / "B" / "questions.jsonl",
          # writer C (other crates), written after the reader: a second dev split, first measured untouched
          "dev2": PROJECT / "data" / "paraphrase" / "code" / "C" / "questions.jsonl"}
PLACEHOLDERS = ("'{answer}'", "")
SMOKE_QUESTIONS = 8
PATHS = {"reader": {}, "rules": {"read_questions": False}}
RUST_WORDS = {"fn", "impl", "struct", "enum", "trait", "type", "unsafe", "pub"}


def reference_answer(q: dict[str, Any]) -> str:
    """The writer's expected answer as an agent would give it."""
    expected = q["expected"]
    if q["checker"] == "set":
        return "\n".join(str(e) for e in expected)
    if q["checker"] == "numeric":
        return str(expected)
    return expected if isinstance(expected, str) else str(expected[0])


def source_of(q: dict[str, Any]) -> Path:
    """The file or folder the question is about, under the crate's sources in the cargo registry."""
    crate = q["domain"].split(":", 1)[1]
    return REGISTRY / f"{crate}-{q['crate_version']}" / "src" / q["source"]


def sources(path: Path) -> list[tuple[str | None, str]]:
    """(path, text) of the source: a file as (None, text); a folder as each .rs file under it, its path relative."""
    if path.is_file():
        return [(None, path.read_text(encoding="utf-8"))]
    return [(str(p.relative_to(path)), p.read_text(encoding="utf-8")) for p in sorted(path.rglob("*.rs"))]


def last(name: str) -> str:
    """A target's last path segment, generics cut: ``Sender`` for ``mpsc::Sender<T>``."""
    return name.split("<", 1)[0].rsplit("::", 1)[-1]


def defined_names(srcs: list[tuple[str | None, str]]) -> set[str]:
    """Every name the files define or name in an impl header."""
    out: set[str] = set()
    for path, text in srcs:
        o = TreeSitterOracle(text, path)
        out |= {f.name for f in o.get_functions()} | {s.name for s in o.get_structs()}
        out |= {e.name for e in o.get_enums()} | {t.name for t in o.get_traits()}
        out |= {n for i in o.get_impls() for n in (i.type_name, i.trait_name) if n}
    return out


def labels_agree(q: dict[str, Any], intent: Any, srcs: list[tuple[str | None, str]]) -> dict[str, bool]:
    """Whether the reader's kind, scope and targets are the writer's. A writer's target that is an item name
    (it names something in the source, or any name of a yes/no question) must be a reader's target; one that is
    a construct (`unsafe fn`, `#[test]`, `unwrap`) must be in the reader's subject or name pattern."""
    defined = defined_names(srcs)
    names = {last(t) for t in q["targets"] if re.fullmatch(r"[\w:]+", t) and t not in RUST_WORDS
             and (last(t) in defined or q["kind"] == "yes_no")}
    constructs = [t for t in q["targets"] if last(t) not in names]
    return {"kind": intent.kind == q["kind"], "scope": intent.scope == q["scope"],
            "targets": set(intent.targets) == names
            and all(c in f"{intent.subject} {intent.name_pattern}" for c in constructs)}


def run(questions: list[dict[str, Any]], details: bool, console: Console) -> dict[str, Any]:
    validators = {name: TraceValidator(**kw) for name, kw in PATHS.items()}
    status: dict[str, Counter] = {name: Counter() for name in PATHS}
    golden_placeholders: dict[str, int] = {name: 0 for name in PATHS}
    labels: Counter = Counter()
    rows = []
    for q in questions:
        path = source_of(q)
        row: dict[str, Any] = {"id": q["id"]}
        for name, v in validators.items():
            r = v.validate(AnalysisResult(q["query"], reference_answer(q)), source_path=str(path))
            status[name][r.status] += 1
            row[name] = r.status
            row[f"{name}_reason"] = r.reason[:160]
            for answer in PLACEHOLDERS:
                golden_placeholders[name] += v.validate(AnalysisResult(q["query"], answer),
                                                        source_path=str(path)).is_golden
        srcs = sources(path)
        intent = read_question(q["query"], srcs)
        agree = labels_agree(q, intent, srcs)
        labels.update(k for k, ok in agree.items() if ok)
        labels["all"] += all(agree.values())
        rows.append(row)
        if details:
            console.print(f"{q['id']} reader={row['reader']} rules={row['rules']} {q['query'][:90]!r}"
                          + (f"\n    {row['reader_reason']}" if row["reader"] != "Golden" else ""))
    out: dict[str, Any] = {"questions": len(questions), "labels_agree": dict(labels), "rows": rows, "paths": {}}
    for name in PATHS:
        agree, disagree, undecided = (status[name][s] for s in ("Golden", "Failed", "Unverified"))
        decided = agree + disagree
        out["paths"][name] = {"agree": agree, "disagree": disagree, "undecided": undecided,
                              "agreement": round(agree / decided, 4) if decided else None,
                              "undecided_share": round(undecided / len(questions), 4) if questions else None,
                              "placeholders_golden": golden_placeholders[name],
                              "placeholders_given": len(PLACEHOLDERS) * len(questions)}
    return out


def table(split: str, out: dict[str, Any]) -> Table:
    t = Table(title=f"code oracle on the {split} paraphrase split ({out['questions']} questions): reference answers")
    t.add_column("path")
    for col in ("agree", "disagree", "undecided", "agreement", "undecided share", "placeholders Golden"):
        t.add_column(col, justify="right")
    for name, p in out["paths"].items():
        t.add_row(name, str(p["agree"]), str(p["disagree"]), str(p["undecided"]),
                  "-" if p["agreement"] is None else f"{p['agreement']:.1%}",
                  "-" if p["undecided_share"] is None else f"{p['undecided_share']:.1%}",
                  f"{p['placeholders_golden']}/{p['placeholders_given']}")
    return t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=sorted(SPLITS), default="dev", help="dev = code/A (default), test = code/B, dev2 = code/C")
    ap.add_argument("--smoke", action="store_true", help=f"the first {SMOKE_QUESTIONS} dev questions (make check); "
                    "--json defaults to runs/bench_smoke/oracle_paraphrase.json")
    ap.add_argument("--details", action="store_true", help="one line per question (refused for the test split)")
    ap.add_argument("--json", metavar="PATH", help="default runs/bench/oracle_paraphrase_<split>.json in the checkout")
    args = ap.parse_args(argv)
    if args.details and args.split == "test":
        sys.exit("--details prints the questions: not for the test split")
    split = "dev" if args.smoke else args.split
    questions = [json.loads(line) for line in SPLITS[split].read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = questions[:SMOKE_QUESTIONS] if args.smoke else questions
    json_path = Path(args.json or ("runs/bench_smoke/oracle_paraphrase.json" if args.smoke
                                   else PROJECT / "runs" / "bench" / f"oracle_paraphrase_{split}.json"))
    console, t0 = Console(width=120), time.perf_counter()
    out = run(questions, args.details, console)
    console.print(table(split, out))
    labels = out["labels_agree"]
    n = out["questions"]
    print(f"reader vs the writer's labels: kind {labels.get('kind', 0)}/{n}, scope {labels.get('scope', 0)}/{n}, "
          f"targets {labels.get('targets', 0)}/{n}, all three {labels.get('all', 0)}/{n}")
    out.update(split=split, smoke=args.smoke, seconds=round(time.perf_counter() - t0, 2))
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(f"wrote {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
