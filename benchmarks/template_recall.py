"""Recall@1 of the right code template, retrieval by words (before) against by shape and words (after).

For each task of the task files, every template of the bank is filled from the task's query (as the step grammar
could fill it), run with the real tools and judged by the task's reference judge: the templates that pass are
the task's right ones (``rlmlab.learning.right_templates``). Then each retrieval policy retrieves for the task's
query and its first template counts as a hit when it is a right one. Tasks no template solves are reported as
uncovered. Deterministic (no model, no timing).

- before: ``success_only`` with ``k_success`` 2 over FTS5 words (E13's retrieval);
- after: ``templates`` (k=1, the ``shape`` retriever: items of the query's shape first, words fill in);
- admitted: ``templates`` as the learning loop's builder injects it: the best of its 4 candidates that a first
  step can copy (``rlmlab.learning.template_fits``).

Run:  .venv/bin/python benchmarks/template_recall.py [--tasks FILE ...] [--bank PACK_OR_SQLITE ...] [--json PATH]
      [--smoke]  (a few tasks per file and a few templates, for CI)

For the suites of ``data/tasks`` the table also splits each suite by the parity of the task's number: the hand
pack was written from the odd-numbered tasks (their shapes are in the pack), the even ones are held out.
"""
# smoke-marks: slow

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from rlmlab._paths import PROJECT_ROOT
from rlmlab.experiments import load_suite, read_tasks, task_numbers
from rlmlab.learning import AFTER_RETRIEVAL, BEFORE_RETRIEVAL, right_templates, template_fits, template_recall
from rlmlab.memory import MemoryStore, import_pack

DEFAULT_TASKS = [PROJECT_ROOT / "data" / "tasks" / f"{s}.jsonl" for s in ("code", "ontology", "arith")]
DEFAULT_BANK = [PROJECT_ROOT / "data" / "packs" / "step_templates.jsonl"]
SMOKE_TASKS = 2  # per file
SMOKE_TEMPLATES = 8  # of the bank, evenly spread: each task runs every template once


def _store(banks: list[Path], tmp: Path) -> MemoryStore:
    """A bank file (.sqlite) opened as it is (migrated if older), or packs imported into a fresh store."""
    if len(banks) == 1 and banks[0].suffix in (".sqlite", ".db"):
        return MemoryStore(banks[0])
    store = MemoryStore(tmp / "bank.sqlite")
    for pack in banks:
        import_pack(store, pack)
    return store


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", nargs="+", type=Path, default=DEFAULT_TASKS, help="task JSONL files")
    ap.add_argument("--bank", nargs="+", type=Path, default=DEFAULT_BANK, help="packs (JSONL) or one bank (.sqlite)")
    ap.add_argument("--json", type=Path, help="write the per-task rows and counts here")
    ap.add_argument("--right", type=Path, help="reuse the right templates of an earlier --json (same tasks, same bank)")
    ap.add_argument("--smoke", action="store_true",
                    help=f"{SMOKE_TASKS} tasks per file, {SMOKE_TEMPLATES} templates of the bank")
    args = ap.parse_args(argv)
    if args.smoke and args.json is None:  # the smoke check (make check) looks for the JSON a run writes
        args.json = Path("runs/bench_smoke/template_recall.json")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        store = _store(args.bank, Path(tmp))
        templated = [it for it in store.items() if it.template]
        if args.smoke:
            templated = templated[::max(1, len(templated) // SMOKE_TEMPLATES)][:SMOKE_TEMPLATES]
        tasks, parity = [], {}
        for path in args.tasks:
            loaded = load_suite(path)
            if args.smoke:
                loaded = loaded[::max(1, len(loaded) // SMOKE_TASKS)][:SMOKE_TASKS]
            numbers = task_numbers(read_tasks(path))
            for t in loaded:
                parity[t.id] = "odd" if numbers[t.id] % 2 else "even"
            tasks += loaded
        known = {}
        if args.right:
            known = {r["task_id"]: r["right"] for r in json.loads(args.right.read_text())["rows"]["after"]}
        right = {t.id: known[t.id] if t.id in known else right_templates(t, templated) for t in tasks}
        reports = {name: template_recall(tasks, store, retrieval=r, right=right, admit=admit)
                   for name, r, admit in (("before", BEFORE_RETRIEVAL, None), ("after", AFTER_RETRIEVAL, None),
                                          ("admitted", AFTER_RETRIEVAL, template_fits))}
        store.close()
    table = Table(title=f"Recall@1 of the right template ({len(templated)} templates, {len(tasks)} tasks)")
    for col in ("group", "tasks", "covered", "before", "after", "admitted"):
        table.add_column(col, justify="left" if col == "group" else "right")
    groups: dict[str, list[str]] = {}
    for row in reports["after"].rows:
        suite = row["kind"].rsplit("-l", 1)[0]
        for g in (row["kind"], f"{suite} (all)", f"{suite} {parity[row['task_id']]}", "all"):
            groups.setdefault(g, []).append(row["task_id"])
    hits = {name: {r["task_id"]: r["hit"] for r in rep.rows} for name, rep in reports.items()}
    summary = {}
    for g in sorted(groups, key=lambda g: (g == "all", g)):
        ids = groups[g]
        covered = [i for i in ids if right[i]]
        cells = {name: sum(hits[name][i] for i in covered) for name in reports}
        summary[g] = {"tasks": len(ids), "covered": len(covered), **cells}
        shown = [f"{cells[n]}/{len(covered)}" + (f" ({cells[n] / len(covered):.0%})" if covered else "")
                 for n in reports]
        table.add_row(g, str(len(ids)), str(len(covered)), *shown)
    console.print(table)
    misses = [r for r in reports["admitted"].rows if r["right"] and not r["hit"]]
    for r in misses:
        console.print(f"admitted misses {r['task_id']}: first {r['first_title']!r}")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "rows": {n: rep.rows for n, rep in reports.items()},
                                         "retrieval": {"before": BEFORE_RETRIEVAL, "after": AFTER_RETRIEVAL,
                                                       "admitted": {**AFTER_RETRIEVAL, "admit": "template_fits"}}},
                                        indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
