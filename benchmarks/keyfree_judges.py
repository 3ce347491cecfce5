"""Key-free judges against the reference judge: precision and recall on the suites' tasks.

Answers judged, per task of ``data/tasks`` (or the ``--tasks`` files):

- code (``oracle``): the reference answer; a count off by one each way; yes and no flipped; a list missing its
  last item; for other text, the reference answer of another task (a plausible answer to another question).
- ontology (``constraints``): the reference query; a named term replaced by another term of the ontology; a
  named term misspelt (an invented term: no rows); another task's reference query; and the hand-written wrong
  answers of ``benchmarks/sparql_judge_cases.py`` (the inverse property, direction reversed, a guessed term).
- arith (``vote``): groups of 5 rollouts built from the reference r and wrong values: unanimous r; r r r w1 w2
  (right majority); w1 w1 w1 r w2 (wrong majority); r r w1 w1 w2 (tie); r w1 w2 w3 w4 (all disagree). These are
  patterns, not model samples: the vote's precision depends on how often a model's majority is wrong. A question
  that states its arithmetic ("What is 125 + 389?", group "stated") is judged by its exact value, not the vote;
  on a word problem (group "word") only a rollout whose program writes every number of the question votes, and
  these patterns have no program, so the vote passes none of them (recall 0: the check fails closed).

Run:  .venv/bin/python benchmarks/keyfree_judges.py [--tasks FILE ...] [--json PATH] [--smoke]
"""
# smoke-marks: slow

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from rlmlab._paths import PROJECT_ROOT
from rlmlab.experiments import load_suite
from rlmlab.learning import judge_agreement, keyfree_kind
from rlmlab.numbers import final_number, format_number, stated_arithmetic

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sparql_judge_cases import CASES as SPARQL_CASES  # noqa: E402  (the issue-18 wrong answers)

DEFAULT_TASKS = [PROJECT_ROOT / "data" / "tasks" / f"{s}.jsonl" for s in ("code", "ontology", "arith")]
_CURIE = re.compile(r"(?<![\w/#<])([a-z][a-z0-9]*:[A-Za-z_][\w.-]*[\w])")


def _reference(task) -> str:
    ref = task.meta.get("reference") if task.expected is None else task.expected
    return ref[0] if isinstance(ref, list) else ref  # several acceptable answers: the first


def _code_cases(tasks):
    texts = [t for t in tasks if not re.fullmatch(r"\d+|yes|no", str(_reference(t)).strip(), re.I)]
    for task in tasks:
        ref = str(_reference(task)).strip()
        yield task, [ref], "reference"
        if re.fullmatch(r"\d+", ref):
            n = int(ref)
            yield task, [str(n + 1)], "count + 1"
            if n > 0:
                yield task, [str(n - 1)], "count - 1"
        elif ref.lower() in ("yes", "no"):
            yield task, ["no" if ref.lower() == "yes" else "yes"], "yes/no flipped"
        else:
            parts = [p for p in re.split(r",\s*|\n", ref) if p.strip()]
            if len(parts) > 1:
                yield task, [(", " if "," in ref else "\n").join(parts[:-1])], "list missing its last item"
            other = next((str(_reference(o)).strip() for o in texts if o.id != task.id
                          and str(_reference(o)).strip() != ref), None)
            if other:
                yield task, [other], "another task's answer"


def _ontology_cases(tasks):
    from rlmlab.ontology import load_ontology

    refs = {t.id: t.expected for t in tasks}
    for task in tasks:
        ref = task.expected
        yield task, [ref], "reference"
        named = [c for c in dict.fromkeys(_CURIE.findall(task.query)) if c in ref]
        target = next((c for c in named if not c.startswith(("rdfs:", "rdf:", "owl:"))), named[0] if named else None)
        if target:
            graph = load_ontology(task.meta["ontology"])
            prefix, local = target.split(":", 1)
            ns = dict(graph.namespaces())[prefix]
            same_case = sorted({str(s)[len(ns):] for s in graph.subjects() if str(s).startswith(str(ns))
                                and str(s)[len(ns):][:1].isupper() == local[:1].isupper()
                                and re.fullmatch(r"\w+", str(s)[len(ns):])})
            other = next((n for n in same_case if n > local), same_case[0] if same_case else None)
            if other and other != local:
                yield task, [re.sub(rf"{re.escape(target)}\b", f"{prefix}:{other}", ref)], "another term"
            yield task, [re.sub(rf"{re.escape(target)}\b", f"{target}x", ref)], "misspelt term (no rows)"
        other_ref = next((q for i, q in refs.items() if i != task.id and q != ref
                          and task.meta["ontology"].endswith(Path(i).suffix or ".ttl")), None)
        if other_ref:
            yield task, [other_ref], "another task's query"
        for label, answer, should in SPARQL_CASES.get(task.id, []):
            yield task, [answer], f"issue 18: {label}"


def _arith_cases(tasks):
    for task in tasks:
        r = final_number(str(task.expected if not isinstance(task.expected, list) else task.expected[0]))
        if r is None:
            continue
        w = [format_number(r + 1), format_number(r * 2), format_number(r + 10), format_number(r + 100)]
        ref = format_number(r)
        for label, group in [("unanimous", [ref] * 5), ("right majority 3/5", [ref, ref, ref, w[0], w[1]]),
                             ("wrong majority 3/5", [w[0], w[0], w[0], ref, w[1]]),
                             ("tie 2-2-1", [ref, ref, w[0], w[0], w[1]]),
                             ("all disagree", [ref, *w])]:
            yield task, group, f"{label} ({'stated' if stated_arithmetic(task.query) else 'word'})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", nargs="+", type=Path, default=DEFAULT_TASKS)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--smoke", action="store_true", help="3 tasks per file")
    args = ap.parse_args(argv)
    if args.smoke and args.json is None:  # the smoke check (make check) looks for the JSON a run writes
        args.json = Path("runs/bench_smoke/keyfree_judges.json")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
    cases = []
    for path in args.tasks:
        tasks = load_suite(path)
        if args.smoke:
            tasks = tasks[:3]
        kind = keyfree_kind(tasks[0]) if tasks else "arith"
        cases += list({"code": _code_cases, "ontology": _ontology_cases, "arith": _arith_cases}[kind](tasks))
    reports = judge_agreement(cases, group_of=lambda task, label: label.split(":")[0])
    console = Console()
    for name, rep in reports.items():
        table = Table(title=f"{name}: key-free judge against the reference")
        for col in ("answers", "n", "tp", "fp", "fn", "tn", "abstain", "precision", "recall"):
            table.add_column(col, justify="left" if col == "answers" else "right")
        for group in [*sorted(rep.groups), None]:
            c = rep.counts(group)
            p, r = rep.precision(group), rep.recall(group)
            table.add_row(group or "[bold]all[/]", str(sum(c[k] for k in ("tp", "fp", "fn", "tn"))),
                          *(str(c[k]) for k in ("tp", "fp", "fn", "tn", "abstain")),
                          "-" if p is None else f"{p:.3f}", "-" if r is None else f"{r:.3f}")
        console.print(table)
        for row in rep.rows:
            if row["cell"] in ("fp", "fn"):
                console.print(f"  {row['cell']} {row['task_id']} [{row['label']}] {str(row['answer'])[-60:]!r}: "
                              f"{row['keyfree_rationale'][:110]}")
    if args.json:
        args.json.write_text(json.dumps({n: r.to_dict() for n, r in reports.items()}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
