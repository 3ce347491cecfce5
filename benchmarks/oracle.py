"""Code oracles on real Rust: GrepOracle vs grep, TreeSitterOracle vs ctags, batch validation with and without cache.

Runs on the tokio sources of Debian's ``librust-tokio-dev`` (``/usr/share/cargo/registry/tokio-[0-9]*/src``)
or on ``--root DIR``. (1) ``GrepOracle.over_files(...).ground_truth_all`` against ``grep -rnP`` for five
intent queries: the (file, line) sets must be equal; the oracle's time includes reading the files.
(2) ``TreeSitterOracle`` functions (methods and bodiless declarations included), structs and enums against
one Universal Ctags run (kinds f P s g) as (file, name line, name) sets, every disagreement classified; then
the ``fn|struct|enum NAME`` lines that neither reports (macro bodies are token trees to both). Timed in one
process and in ``--workers`` processes (``extract_files``), next to tree-sitter's parse alone (the floor).
(3) ``TraceValidator.batch_validate`` on generated claims with a known intended verdict, with ``use_cache``
off and on: claims/s, verdict counts (must be identical), and the claims whose verdict is not the intended one.
Times are best of N rounds, interleaved, and are reported, never asserted.

Before/after (issue 20): each section also times the implementation as it was before issue 20, side by side in
the same run: the grep ground truth line by line and the tree-sitter node walk are kept here as reference
functions; batch validation runs the whole library of commit ``--before`` (default {BEFORE}, extracted with
``git archive``) in a subprocess, alternating with the current one. The last table is the issue's.

Issue 26: section 2 also times ``extract_files(cache=...)``: cold (an empty ExtractionCache file each round, so
extraction plus storing every record) and warm (the same tree again from the filled file: a hash and a lookup per
file; the tree's own row from the second run on; the first warm run, from the files' rows, is timed once
apart), both with the file reads, against the same ctags run. Without Universal Ctags (``make ctags``) section 2
reports tree-sitter's figures only. Every figure goes to ``--json`` (default runs/bench/oracle.json).
``--smoke`` (make check): tokio's src/sync, one round, 40 claims, to check the script itself.

Run:  .venv/bin/python benchmarks/oracle.py [--root DIR] [--quick | --smoke] [--seed N] [--before REF] [--workers N]
      [--only grep|ctags|batch] [--json PATH]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))  # this checkout's rlmlab, not another install's

from _trees import before_tree
from rich.console import Console
from rich.table import Table

from rlmlab.oracle import (
    GrepOracle, TraceValidator, TreeSitterOracle, classify_query, extract_files, pattern_for_query,
)
from rlmlab.oracle._source import rust_language

BEFORE = "53398e0"  # the last commit before issue 20
__doc__ = __doc__.replace("{BEFORE}", BEFORE)
REGISTRY = "/usr/share/cargo/registry"
ISSUE_ROWS: list[tuple[str, str, str, str]] = []  # (figure, before, after, goal), filled by the sections
FIGURES: dict[str, dict] = {}  # the sections' numbers, by section, for --json
GREP_QUERIES = ["Find all async functions", "Find all unsafe blocks", "Find all TODO comments", "Count unwrap calls",
                "Find all error handling patterns"]
CTAGS_KIND = {"function": "fn", "method": "fn", "struct": "struct", "enum": "enum"}
ITEM_LINE = re.compile(r"^(?!\s*//).*?\b(fn|struct|enum)\s+((?:r#)?\w+)")
LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # str.splitlines() splits on these too, grep only on \n


def read_tree(root: Path, rels: list[str]) -> dict[str, str]:
    return {rel: (root / rel).read_text(encoding="utf-8") for rel in rels}


def best_of(repeats: int, *fns):
    """Best wall time (s) of each function over ``repeats`` interleaved rounds, and each one's last result."""
    best, out = [float("inf")] * len(fns), [None] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            out[i] = fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best, out


def new_table(title: str, cols: list[str], left: tuple[str, ...] = ()) -> Table:
    table = Table(title=title)
    for col in cols:
        table.add_column(col, justify="left" if col in left else "right", overflow="fold")
    return table


# -- 1. GrepOracle vs grep -rnP ---------------------------------------------------------------------------------

def grep_rows(root: Path, pattern: str) -> set[tuple[str, int]]:
    # -Z ends each file name with NUL, so a ':' in a path cannot be read as the line-number separator.
    out = subprocess.run(["grep", "-rnPZ", "--include=*.rs", "-e", pattern, str(root)], capture_output=True)
    if out.returncode > 1:
        raise RuntimeError(f"grep failed: {out.stderr.decode()}")
    rows = set()
    for rec in filter(None, out.stdout.split(b"\n")):
        path, sep, rest = rec.partition(b"\0")
        if not sep:
            raise RuntimeError(f"unparsed grep output: {rec[:200]!r}")
        rows.add((str(Path(path.decode()).relative_to(root)), int(rest.split(b":", 1)[0])))
    return rows


def ground_truth_before(files: dict[str, str], pattern: str) -> list[tuple[str, int, str]]:
    """GrepOracle.ground_truth_all before issue 20: every line of every file searched in a Python loop."""
    oracle, rx = GrepOracle.over_files(files), re.compile(pattern)
    return [(path, i, line) for path, entry in oracle.files for i, line in enumerate(entry.lines, 1)
            if rx.search(line)]


def section_grep(console: Console, root: Path, texts: dict[str, str], repeats: int) -> str:
    rels, rows, diffs = sorted(texts), [], []
    table = new_table(f"1. GrepOracle vs grep -rnP on {len(rels)} files (best of {repeats}, interleaved)",
                      ["query", "regex", "oracle\nrows", "grep\nrows", "equal", "before\nms", "oracle\nms",
                       "grep\nms", "ratio before/\ngrep", "ratio\noracle/grep"], left=("query", "regex"))
    for query in GREP_QUERIES:
        pattern = pattern_for_query(query)
        (t_b, t_o, t_g), (old, mine, theirs) = best_of(
            repeats, lambda: {(p, i) for p, i, _ in ground_truth_before(read_tree(root, rels), pattern)},
            lambda: {(p, i) for p, i, _ in GrepOracle.over_files(read_tree(root, rels)).ground_truth_all(pattern)},
            lambda: grep_rows(root, pattern))
        rows.append({"query": query, "rows": len(mine), "equal": mine == theirs == old, "ratio": t_o / t_g,
                     "ratio_before": t_b / t_g})
        table.add_row(query, pattern, f"{len(mine):,}", f"{len(theirs):,}",
                      "yes" if mine == theirs == old else "[red]NO[/]", f"{t_b * 1e3:.1f}", f"{t_o * 1e3:.1f}",
                      f"{t_g * 1e3:.1f}", f"{t_b / t_g:.2f}", f"{t_o / t_g:.2f}")
        for side, extra in (("oracle only", mine - theirs), ("grep only", theirs - mine)):
            diffs += [f"{query}, {side}: {p}:{i}: {texts[p].splitlines()[i - 1].strip()}" for p, i in sorted(extra)]
    console.print(table)
    # Python re reads \b \s \w as Unicode, grep 3.8 -P (UTF, no UCP) as ASCII; splitlines() also breaks on LINE_BREAKS.
    wide = sorted({c for t in texts.values() for c in t if ord(c) > 127})
    risky = [c for c in wide if re.match(r"[\w\s]", c)]
    breaks = sum(any(b in t for b in LINE_BREAKS) for t in texts.values())
    escapes = sorted({e for q in GREP_QUERIES for e in re.findall(r"\\[bBwWsSdD]", pattern_for_query(q))})
    console.print(f"re vs PCRE: the regexes use groups, classes, a (?!...) lookahead and {' '.join(escapes)} (Unicode "
                  f"in Python re, ASCII in grep 3.8 -P). The corpus has {len(wide)} distinct non-ASCII characters "
                  f"({''.join(wide[:20])}), {len(risky)} of them word or space characters for re, and {breaks} files "
                  "with line breaks other than \\n: " + ("lines with those characters may differ." if risky or breaks
                                                      else "so the sets must agree line for line."))
    for d in diffs[:20]:
        console.print(f"  [red]{d}[/]")
    ratios, before = [r["ratio"] for r in rows], [r["ratio_before"] for r in rows]
    ISSUE_ROWS.append((f"grep-oracle ground truth, {len(rels)} files, 5 queries: time / grep -rnP's (median, range);"
                       f" sets equal to grep on {sum(r['equal'] for r in rows)}/{len(rows)}",
                       f"{statistics.median(before):.1f}x ({min(before):.1f}-{max(before):.1f})",
                       f"{statistics.median(ratios):.1f}x ({min(ratios):.1f}-{max(ratios):.1f})", "<= 1.5x"))
    return (f"GrepOracle vs grep -rnP: {sum(r['equal'] for r in rows)}/{len(rows)} queries give identical (file, line) "
            "sets (" + ", ".join(f"{re.sub(r'^(Find all|Count) ', '', r['query'])} {r['rows']}" for r in rows) +
            f"); time oracle/grep median {statistics.median(ratios):.1f}x ({min(ratios):.1f}-{max(ratios):.1f}x).")


# -- 2. TreeSitterOracle vs Universal Ctags ---------------------------------------------------------------------

def ts_items(texts: dict[str, str], workers: int = 1,
             cache: Path | None = None) -> tuple[dict[str, set], dict[str, TreeSitterOracle]]:
    items, oracles = {"fn": set(), "struct": set(), "enum": set()}, extract_files(texts, workers=workers, cache=cache)
    for rel, o in oracles.items():
        items["fn"] |= {(rel, f.line, f.name) for f in o.get_functions()}
        items["struct"] |= {(rel, s.line, s.name) for s in o.get_structs()}
        items["enum"] |= {(rel, e.line, e.name) for e in o.get_enums()}
    return items, oracles


def _walk(root, *types: str):
    """Nodes of the given types in source order, by a Python TreeCursor walk (the extraction before issue 20)."""
    from rlmlab.oracle._treesitter import walk_nodes

    return walk_nodes(root, *types)


def ts_items_before(texts: dict[str, str]) -> dict[str, set]:
    """ts_items as TreeSitterOracle extracted before issue 20: node walks in Python, one per item kind."""
    items = {"fn": set(), "struct": set(), "enum": set()}
    for rel, text in texts.items():
        o = TreeSitterOracle(text, rel)
        items["fn"] |= {(rel, f.line, f.name) for f in (o._function(n) for n in _walk(
            o.root, "function_item", "function_signature_item"))}
        items["struct"] |= {(rel, s.line, s.name) for s in (o._struct(n) for n in _walk(o.root, "struct_item"))}
        items["enum"] |= {(rel, e.line, e.name) for e in (o._enum(n) for n in _walk(o.root, "enum_item"))}
    return items


def parse_only(texts: dict[str, str]) -> int:
    """Tree-sitter's parse of every file and nothing else: the floor of any tree-sitter extraction in one process."""
    import tree_sitter

    parser = tree_sitter.Parser(rust_language())
    return sum(parser.parse(t.encode("utf-8", "surrogatepass")).root_node.child_count for t in texts.values())


def have_ctags() -> bool:
    """Whether ``ctags`` is Universal Ctags (the JSON output and Rust kinds used here)."""
    if shutil.which("ctags") is None:
        return False
    return "Universal" in subprocess.run(["ctags", "--version"], capture_output=True, text=True).stdout


def ctags_items(root: Path, rels: list[str]) -> dict[str, set]:
    out = subprocess.run(["ctags", "--languages=Rust", "--output-format=json", "--fields=+nK", "--kinds-Rust=fPsg",
                          "-f", "-", "-L", "-"], input="\n".join(rels), cwd=root, capture_output=True, text=True,
                         check=True)
    items: dict[str, set] = {"fn": set(), "struct": set(), "enum": set()}
    for tag in map(json.loads, out.stdout.splitlines()):
        if tag.get("_type") == "tag" and tag["kind"] in CTAGS_KIND:
            items[CTAGS_KIND[tag["kind"]]].add((tag["path"], tag["line"], tag["name"]))
    return items


def ancestors(o: TreeSitterOracle, line: int, name: str) -> list:
    """The nodes from ``name`` on ``line`` up to the root ([] if the name is not on that line)."""
    text = o.source.splitlines()[line - 1]
    if (col := text.find(name)) < 0:
        return []
    point, chain = (line - 1, len(text[:col].encode("utf-8"))), []
    node = o.root.descendant_for_point_range(point, point)
    while node is not None:
        chain.append(node)
        node = node.parent
    return chain


def where_hidden(chain: list) -> str:
    """Why an item-looking line is no item to a parser: macro body (token tree), comment, string, parse error."""
    for node in chain:
        if node.type == "macro_definition":
            return "macro_rules! body"
        if node.type == "macro_invocation" and "token_tree" in [n.type for n in chain]:
            macro = node.child_by_field_name("macro").text.decode().rsplit("::", 1)[-1]
            return "cfg_*! macro body" if macro.startswith("cfg_") else f"{macro}! body"
    types = {n.type for n in chain}
    for label, kinds in (("comment", {"line_comment", "block_comment"}), ("parse error", {"ERROR"}),
                         ("string literal", {"string_literal", "raw_string_literal"})):
        if types & kinds:
            return label
    return "other"


def classify(side: str, item: tuple, other_lines: dict, oracle: TreeSitterOracle, in_run: bool) -> str:
    """The class of one disagreement, from the tree-sitter nodes around the item; 'unexplained' if no rule fits."""
    rel, line, name = item
    if any(abs(ln - line) <= 5 for ln in other_lines.get((rel, name), ())):
        return "line number differs"
    chain = ancestors(oracle, line, name)
    if (hidden := where_hidden(chain)) != "other":
        return f"inside {hidden}"
    if side == "ctags only":
        return "unexplained"
    if name.startswith("r#"):
        return "ctags skips raw identifiers (r#name)"
    node = next((n for n in chain if n.type.endswith("_item")), None)
    params = node.child_by_field_name("parameters") if node is not None else None
    if params is not None and any((p.child_by_field_name("pattern") or p).type.endswith("_pattern")
                                  for p in params.named_children if p.type == "parameter"):
        return "ctags drops a fn with a destructuring parameter pattern"
    if any('\\\\"' in ln for ln in oracle.source.splitlines()[:line - 1]):
        return 'ctags lexer: an earlier string ending in \\\\" (read as an escaped quote) hides what follows'
    if in_run:
        return "ctags parse gap (>= 3 consecutive items missed)"
    if node is not None and node.type == "function_signature_item":
        return "declaration without body (trait or extern)"
    return "nested in a function body" if sum(n.type == "function_item" for n in chain) > 1 else "unexplained"


def section_ctags(console: Console, root: Path, texts: dict[str, str], repeats: int, workers: int) -> str:
    rels, ctags = sorted(texts), have_ctags()
    cache_dir = Path(tempfile.mkdtemp(prefix="bench-extraction-cache-"))
    colds = iter(range(10**6))
    try:
        warm_file = cache_dir / "warm.sqlite"
        ts_items(read_tree(root, rels), cache=warm_file)  # cold: fills the files' rows, outside the timing
        t0 = time.perf_counter()
        ts_items(read_tree(root, rels), cache=warm_file)  # first warm run: the files' rows, then the tree's row
        t_warm1 = time.perf_counter() - t0
        (t_old, t_ts, t_par, t_parse, t_cold, t_warm, t_ct), (old, (ts, oracles), (ts_par, _), _, (ts_cold, _),
                                                              (ts_warm, _), ct) = best_of(
            repeats, lambda: ts_items_before(read_tree(root, rels)), lambda: ts_items(read_tree(root, rels)),
            lambda: ts_items(read_tree(root, rels), workers), lambda: parse_only(read_tree(root, rels)),
            lambda: ts_items(read_tree(root, rels), cache=cache_dir / f"cold{next(colds)}.sqlite"),
            lambda: ts_items(read_tree(root, rels), cache=warm_file),
            (lambda: ctags_items(root, rels)) if ctags else (lambda: None))
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    cached_same = ts_cold == ts_warm == ts
    FIGURES["extraction"] = {"files": len(rels), "ms": {
        "before_issue_20": t_old * 1e3, "one_process": t_ts * 1e3, f"{workers}_processes": t_par * 1e3,
        "parse_only": t_parse * 1e3, "cache_cold": t_cold * 1e3, "cache_warm": t_warm * 1e3,
        "cache_first_warm_once": t_warm1 * 1e3,
        "ctags": t_ct * 1e3 if ctags else None}, "cached_items_identical": cached_same}
    cache_row = (f"extraction cache, {len(rels)} files: cold (extract + store) / warm (lookup) time; items identical"
                 f" to no cache: {'yes' if cached_same else 'NO'}")
    if not ctags:
        console.print(f"[yellow]Universal Ctags not installed (make ctags): tree-sitter figures only.[/] read+parse+"
                      f"extract {t_ts * 1e3:.0f} ms in 1 process, {t_par * 1e3:.0f} ms in {workers}; parse alone "
                      f"{t_parse * 1e3:.0f} ms; cache cold {t_cold * 1e3:.0f} ms, warm {t_warm * 1e3:.0f} ms (first warm run"
                      f", from the files' rows, once: {t_warm1 * 1e3:.0f} ms) "
                      f"({t_warm / t_ts:.2f}x no cache); items identical with and without the cache: "
                      f"{'yes' if cached_same else 'NO'}")
        ISSUE_ROWS.append((cache_row + " (ms; no ctags)", f"{t_ts * 1e3:.0f} (no cache)",
                           f"{t_cold * 1e3:.0f} / {t_warm * 1e3:.0f}", ""))
        return (f"TreeSitterOracle (no ctags here): {t_ts * 1e3:.0f} ms; extraction cache cold {t_cold * 1e3:.0f} ms, "
                f"warm {t_warm * 1e3:.0f} ms.")
    ISSUE_ROWS.append((f"{cache_row}; time / Universal Ctags' (cold: unchanged or better than no cache)",
                       f"{t_ts / t_ct:.1f}x (no cache, {t_ts * 1e3:.0f} vs {t_ct * 1e3:.0f})",
                       f"cold {t_cold / t_ct:.1f}x ({t_cold * 1e3:.0f}), warm {t_warm / t_ct:.2f}x "
                       f"({t_warm * 1e3:.0f}; first warm run, once: {t_warm1 / t_ct:.2f}x)", "warm <= 0.5x"))
    table = new_table(f"2. TreeSitterOracle vs Universal Ctags on {len(rels)} files (best of {repeats})",
                      ["kind", "tree-sitter", "ctags", "both", "agreement\n|A∩B|/|A∪B|", "only\ntree-sitter",
                       "only\nctags"])
    ordered = sorted(set().union(*ts.values()))
    missed = {it for k in ts for it in ts[k] - ct[k]}
    in_run = {it for i in range(len(ordered) - 2) for it in ordered[i:i + 3]
              if set(ordered[i:i + 3]) <= missed and len({x[0] for x in ordered[i:i + 3]}) == 1}
    agreement, classes = {}, defaultdict(list)
    for kind in ("fn", "struct", "enum"):
        a, b = ts[kind], ct[kind]
        agreement[kind] = len(a & b) / len(a | b) if a | b else 1.0
        table.add_row(kind, f"{len(a):,}", f"{len(b):,}", f"{len(a & b):,}", f"{agreement[kind]:.2%}",
                      f"{len(a - b):,}", f"{len(b - a):,}")
        for side, extra, other in (("tree-sitter only", a - b, b), ("ctags only", b - a, a)):
            other_lines = defaultdict(list)
            for rel, line, name in other:
                other_lines[(rel, name)].append(line)
            for item in sorted(extra):
                classes[(kind, side, classify(side, item, other_lines, oracles[item[0]], item in in_run))].append(item)
    # The extraction before issue 20 had no items from macro bodies (issue 18): compare it with the file's own items.
    own = {"fn": {(r, f.line, f.name) for r, o in oracles.items() for f in o.get_functions() if f.from_macro is None},
           "struct": {(r, x.line, x.name) for r, o in oracles.items() for x in o.get_structs() if x.from_macro is None},
           "enum": {(r, x.line, x.name) for r, o in oracles.items() for x in o.get_enums() if x.from_macro is None}}
    same = "yes" if old == own and ts == ts_par else "NO"
    table.caption = (f"time: tree-sitter read+parse+extract {t_ts * 1e3:.0f} ms in 1 process, {t_par * 1e3:.0f} ms "
                     f"in {workers} (before issue 20: {t_old * 1e3:.0f} ms); tree-sitter's parse alone "
                     f"{t_parse * 1e3:.0f} ms; one ctags run {t_ct * 1e3:.0f} ms. Ratios: {t_ts / t_ct:.1f} (1 process),"
                     f" {t_par / t_ct:.1f} ({workers} processes), parse alone {t_parse / t_ct:.1f}, before "
                     f"{t_old / t_ct:.1f}. Same items before (outside macro bodies) / 1 process / {workers} processes:"
                     f" {same}")
    row = (f"functions/structs/enums, {len(rels)} files: time / Universal Ctags' (ms); agreement fn "
           f"{agreement['fn']:.1%}, struct {agreement['struct']:.1%}, enum {agreement['enum']:.1%}; items identical "
           f"before/after: {same}")
    ISSUE_ROWS.append((f"{row}; 1 process", f"{t_old / t_ct:.1f}x ({t_old * 1e3:.0f} vs {t_ct * 1e3:.0f})",
                       f"{t_ts / t_ct:.1f}x ({t_ts * 1e3:.0f} vs {t_ct * 1e3:.0f})", "<= 2x"))
    ISSUE_ROWS.append((f"  the same in {workers} processes (extract_files(workers={workers}); ctags runs in one)", "",
                       f"{t_par / t_ct:.1f}x ({t_par * 1e3:.0f} vs {t_ct * 1e3:.0f})", "<= 2x"))
    ISSUE_ROWS.append(("  floor: tree-sitter's parse of every file alone, 1 process", "",
                       f"{t_parse / t_ct:.1f}x ({t_parse * 1e3:.0f} vs {t_ct * 1e3:.0f})", ""))
    console.print(table)
    FIGURES["ctags"] = {"agreement": agreement, "same_items_before_and_after": same == "yes"}
    decls = {(o.path, f.line, f.name) for o in oracles.values() for f in o.get_functions() if not f.has_body}
    console.print(f"Bodiless declarations (trait methods, extern fns): tree-sitter {len(decls)} (function_signature_"
                  f"item), {len(decls & ct['fn'])} of them in ctags too (kind method in an interface scope, or "
                  "function in an extern block).")
    dis = new_table("Disagreements, every one classified ('unexplained' if no rule fits)",
                    ["item", "side", "class", "count", "examples"], left=("item", "side", "class", "examples"))
    for (kind, side, label), items in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        dis.add_row(kind, side, label, str(len(items)), "; ".join(f"{r}:{ln} {n}" for r, ln, n in items[:2]))
    if not classes:
        dis.add_row("-", "-", "none: the two sets are identical for every kind", "0", "")
    console.print(dis)
    unexplained = sum(len(v) for k, v in classes.items() if k[2] == "unexplained")
    return ("TreeSitterOracle vs ctags: agreement " + ", ".join(f"{k} {v:.1%}" for k, v in agreement.items()) +
            f"; {sum(map(len, classes.values()))} disagreements ({unexplained} unexplained); time ratio "
            f"{t_ts / t_ct:.1f}x.\n- " + blind_spots(console, texts, oracles, ts, ct))


def blind_spots(console: Console, texts: dict, oracles: dict, ts: dict, ct: dict, top: int = 15) -> str:
    """Lines defining fn/struct/enum NAME (by regex) that neither tool reports, by where they hide."""
    seen = {it for side in (ts, ct) for items in side.values() for it in items}
    counts, examples = Counter(), defaultdict(list)
    for rel, text in texts.items():
        for i, line in enumerate(text.splitlines(), 1):
            if (m := ITEM_LINE.search(line)) and (rel, i, m.group(2)) not in seen:
                where = where_hidden(ancestors(oracles[rel], i, m.group(2)))
                counts[(where, m.group(1))] += 1
                examples[where].append(f"{rel}:{i}: {line.strip()[:70]}")
    table = new_table("Seen by neither: code lines with fn|struct|enum NAME that no tool reports as an item",
                      ["hidden in", "fn", "struct", "enum", "example"], left=("hidden in", "example"))
    ranked = sorted(examples, key=lambda w: -len(examples[w]))
    for where in ranked[:top]:
        table.add_row(where, *(str(counts[(where, k)]) for k in ("fn", "struct", "enum")), examples[where][0])
    table.caption = f"and {len(ranked) - top} more places" if ranked[top:] else None
    console.print(table)
    return (f"Seen by neither: {sum(counts.values())} fn/struct/enum lines (" + ", ".join(
        f"{w} {len(examples[w])}" for w in ranked[:6]) + (", ..." if ranked[6:] else "") + ").")


# -- 3. Batch validation with and without the parse cache -------------------------------------------------------

def grep_claims(q_all: str, q_some: str, truth: list, lines_of: dict, rng: random.Random) -> list:
    """(query, answer, intended verdict) for a list query; ``truth`` is [(path or None, line, text)]."""
    fmt = lambda rows: "\n".join(f"{p + ':' if p else ''}{i}:{t.strip()}" for p, i, t in rows) or "None."  # noqa: E731
    p, lines = rng.choice(sorted(lines_of.items(), key=lambda kv: str(kv[0])))
    taken = {(q, i) for q, i, _ in truth}
    free = [i for i in range(1, len(lines) + 1) if (p, i) not in taken and lines[i - 1].strip()]
    invented = [(p, i, lines[i - 1]) for i in sorted(rng.sample(free, min(2, len(free))))]
    out = [(q_all, fmt(truth), "ExactMatch"), (q_some, fmt(truth), "ExactMatch"), (q_all, fmt(invented), "Mismatch")]
    out += [(q_all, fmt(truth + invented[:1]), "HasFalsePositives")] if truth else []
    if len(truth) >= 2:
        drop = rng.randrange(len(truth))
        out += [(q_all, fmt(truth[::-1]), "UnorderedMatch"),
                (q_all, fmt(truth[:drop] + truth[drop + 1:]), "HasFalseNegatives"),
                (q_some, fmt(sorted(rng.sample(truth, rng.randrange(1, len(truth))))), "SubsetMatch")]
    return out


def named_claims(q_all: str, q_some: str, items: list[str], rng: random.Random, retype=None) -> list:
    """Claims listing names (parameters, fields, variants, traits); ``retype(item)`` gives the item mistyped."""
    out = [(q_all, "\n".join(items), "ExactMatch"), (q_all, "- invented_x: u8\n- invented_y", "Mismatch")]
    if len(items) >= 2:
        drop = rng.randrange(len(items))
        wrong = items[:-1] + [retype(items[-1])] if retype else items + ["invented_z"]
        out += [(q_all, "\n".join(items[::-1]), "UnorderedMatch"), (q_some, items[0], "SubsetMatch"),
                (q_all, "\n".join(items[:drop] + items[drop + 1:]), "HasFalseNegatives"),
                (q_all, "\n".join(wrong), "HasFalsePositives")]
    return out


def file_claims(rel: str, text: str, rng: random.Random) -> list[tuple[str, str, str, str]]:
    """Claims about one file: grep lists and counts, signatures, parameters, fields, variants, traits, semantic."""
    grep = GrepOracle(text)
    truth = [(None, i, t) for i, t in grep.ground_truth(pattern_for_query("Find all async functions"))]
    out = grep_claims("Find all async functions", "Show some async functions", truth, {None: text.splitlines()}, rng)
    m, q = len(grep.ground_truth(pattern_for_query("Count unwrap calls"))), "Count unwrap calls"
    out += [(q, f"There are {m} calls to .unwrap().", "ExactMatch"), (q, f"{m + 2}", "HasFalsePositives"),
            (q, "many", "Mismatch")] + ([(q, f"{m - 1}", "HasFalseNegatives")] if m else [])
    o = TreeSitterOracle(text)
    names = Counter(f.name for f in o.get_functions())
    retype = lambda item: item.split(":")[0] + ": Invented" if ":" in item else "invented: u8"  # noqa: E731
    for f in (f for f in o.get_functions() if names[f.name] == 1 and re.fullmatch(r"\w+", f.name)):
        q, sig = f"What is the signature of {f.name}?", f.signature
        out += [(q, f"```rust\n{sig}\n```", "ExactMatch"), (q, f"{sig} -> bool" if f.return_type is None else
                sig.replace(f"-> {f.return_type}", f"-> Option<{f.return_type}>", 1), "Mismatch")]
        if f.visibility and sig.startswith(f.visibility + " "):
            out.append((q, sig[len(f.visibility) + 1:], "HasFalseNegatives"))
        out += [(q, sig.replace("fn ", "async fn ", 1), "HasFalsePositives")] if not (f.is_async or f.is_const) else []
        params = [p.name if p.type is None else f"{p.name}: {p.type}" for p in f.parameters]
        if len(params) == len({p.name for p in f.parameters}) and all(
                re.fullmatch(r"&?(mut )?('\w+ )?\w+", p.name) for p in f.parameters):
            out += named_claims(f"What are the parameters of {f.name}?", f"Name some parameters of {f.name}", params,
                                rng, retype) if params else []
    types = Counter([s.name for s in o.get_structs()] + [e.name for e in o.get_enums()])
    for s in (s for s in o.get_structs() if types[s.name] == 1 and s.kind == "named" and s.fields):
        out += named_claims(f"List the fields of {s.name}", f"Name some fields of {s.name}",
                            [f"{fl.name}: {fl.type}" for fl in s.fields], rng, retype)
    for e in (e for e in o.get_enums() if types[e.name] == 1 and e.variants):
        out += named_claims(f"What are the variants of {e.name}?", f"Name some variants of {e.name}",
                            [v.name for v in e.variants], rng)
    impls = defaultdict(list)
    for i in o.get_impls():
        if i.trait_name and not i.negative and i.trait_name not in impls[i.type_name]:
            impls[i.type_name].append(i.trait_name)
    for typ, traits in ((t, tr) for t, tr in impls.items() if re.fullmatch(r"\w+", t)):
        out += named_claims(f"Which traits does {typ} implement?", f"Which traits does {typ} implement? Some will do",
                            traits, rng)
        out += [(f"Does {typ} implement {traits[0]}?", "Yes.", "ExactMatch"),
                (f"Does {typ} implement {traits[0]}?", "No, it does not.", "Mismatch")]
    out += [(q, "It coordinates tasks through shared state.", "Unverified") for q in
            ("Explain what this file is for", "Why does this code use atomics?", "What does this module do?")]
    return [(q, a, rel, v) for q, a, v in out]


def dir_claims(root: Path, rel_dir: str, rng: random.Random) -> list[tuple[str, str, str, str]]:
    """Grep claims over a directory, as ``path:line:text`` with paths relative to that directory."""
    base = root / rel_dir
    files = read_tree(base, sorted(str(p.relative_to(base)) for p in base.rglob("*.rs")))
    oracle, lines_of = GrepOracle.over_files(files), {p: t.splitlines() for p, t in files.items()}
    out = [c for q_all, q_some in (("Find all async functions", "Show some async functions"),
                                   ("Find all unsafe blocks", "Show a few unsafe blocks"))
           for c in grep_claims(q_all, q_some, oracle.ground_truth_all(pattern_for_query(q_all)), lines_of, rng)]
    return [(q, a, rel_dir, v) for q, a, v in out]


def make_claims(root: Path, texts: dict[str, str], n: int, rng: random.Random) -> tuple[list[dict], int, int]:
    """n claims over 36 files and 4 directories, drawn round-robin from (query kind, intended verdict) buckets."""
    rels = sorted(rng.sample(sized := [r for r, t in sorted(texts.items()) if 150 <= t.count("\n") <= 1500],
                             min(36, len(sized))))
    dirs = [d for d in sorted({str(Path(r).parent) for r in texts if "/" in r})
            if 3 <= sum(r.startswith(d + "/") for r in texts) <= 25]
    nested = [d for d in dirs if any(r.startswith(d + "/") and r.count("/") > d.count("/") + 1 for r in texts)]
    dirs = sorted(set(rng.sample(nested, min(2, len(nested))) + rng.sample(dirs, min(2, len(dirs)))))
    pool = [c for r in rels for c in file_claims(r, texts[r], rng)]
    pool += [c for d in dirs for c in dir_claims(root, d, rng)]
    buckets = defaultdict(list)
    for q, a, src, v in pool:
        buckets[(classify_query(q).value, v)].append({"query": q, "answer": a, "source_path": src, "expect": v})
    for b in buckets.values():
        rng.shuffle(b)
    keys, claims = sorted(buckets), []
    for i in range(n):  # round-robin over the buckets, cycling through each bucket's shuffled claims
        bucket = buckets[keys[i % len(keys)]]
        claims.append(bucket[(i // len(keys)) % len(bucket)])
    return claims, len(rels) + len(dirs), len(pool)



_WORKER = """
import json, sys, time
from rlmlab.oracle import TraceValidator
root, claims = sys.argv[1], json.load(open(sys.argv[2]))
t0 = time.perf_counter()
stats = TraceValidator(root, use_cache=True).batch_validate(claims)
seconds = time.perf_counter() - t0
import rlmlab
print(json.dumps({"seconds": seconds, "verdicts": [[r.status, r.verdict] for r in stats.results],
                  "rlmlab": rlmlab.__file__}))
"""


def batch_before_after(root: Path, inputs: list[dict], before: Path, repeats: int) -> dict[str, dict]:
    """batch_validate with the cache on, in fresh processes running the library before issue 20 and now,
    alternating; the best time of each and its verdicts."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(inputs, f)
    out: dict[str, dict] = {}
    try:
        for _ in range(repeats):
            for name, tree in (("before", before), ("after", PROJECT)):
                run = subprocess.run([sys.executable, "-c", _WORKER, str(root), f.name], capture_output=True,
                                     text=True, check=True, env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree)
                got = json.loads(run.stdout.strip().splitlines()[-1])
                if not got["rlmlab"].startswith(str(tree)):
                    raise RuntimeError(f"the {name} worker imported {got['rlmlab']}, not the tree under {tree}")
                if name not in out or got["seconds"] < out[name]["seconds"]:
                    out[name] = got
    finally:
        Path(f.name).unlink(missing_ok=True)
    return out


def section_batch(console: Console, root: Path, texts: dict[str, str], n: int, seed: int,
                  before: Path | None = None, repeats: int = 1) -> str:
    claims, sources, pool = make_claims(root, texts, n, random.Random(seed))
    inputs, runs = [{k: v for k, v in c.items() if k != "expect"} for c in claims], {}
    for use_cache in (False, True):
        t0 = time.perf_counter()
        stats = TraceValidator(root, use_cache=use_cache).batch_validate(inputs)
        runs[use_cache] = (time.perf_counter() - t0, stats)
    (t_off, off), (t_on, on) = runs[False], runs[True]
    same = off.by_verdict == on.by_verdict and off.by_status == on.by_status and \
        [(a.status, a.verdict) for a in off.results] == [(b.status, b.verdict) for b in on.results]
    table = new_table(f"3. batch_validate: {n:,} claims over {sources} sources (drawn from {pool:,} distinct), "
                      f"seed {seed}",
                      ["verdict / status", "intended", "no cache", "cache", "cache:\ngrep", "cache:\ntree-sitter"])
    intended, per_oracle = Counter(c["expect"] for c in claims), Counter((r.method, r.verdict) for r in on.results)
    for key in sorted(set(intended) | set(off.by_verdict) | set(on.by_verdict)):
        table.add_row(key, str(intended[key]), str(off.by_verdict.get(key, "-")), str(on.by_verdict.get(key, "-")),
                      str(per_oracle[("GrepOracle", key)]), str(per_oracle[("TreeSitterOracle", key)]))
    for key in ("Golden", "Failed", "Unverified"):
        table.add_row(f"[bold]{key}[/]", "", str(off.by_status.get(key, 0)), str(on.by_status.get(key, 0)), "", "")
    table.add_row("[bold]claims/s[/]", "", f"{n / t_off:,.0f}", f"{n / t_on:,.0f}", "", "")
    table.caption = (f"speed-up {t_off / t_on:.1f}x ({t_off:.2f} s vs {t_on:.2f} s); by_verdict, by_status and "
                     f"every claim's verdict identical in both modes: {'yes' if same else 'NO'}")
    console.print(table)
    if before is not None:
        ba = batch_before_after(root, inputs, before, repeats)
        same_ba = ba["before"]["verdicts"] == ba["after"]["verdicts"] == [[r.status, r.verdict] for r in on.results]
        console.print(f"batch_validate, cache on, fresh process each (best of {repeats}): before issue 20 "
                      f"{n / ba['before']['seconds']:,.0f} claims/s, now {n / ba['after']['seconds']:,.0f} claims/s; "
                      f"every claim's verdict identical: {'yes' if same_ba else '[red]NO[/]'}")
        ISSUE_ROWS.append((f"batch validation of {n:,} claims, parse cache on (claims/s); verdicts identical: "
                           f"{'yes' if same_ba else 'NO'}", f"{n / ba['before']['seconds']:,.0f}",
                           f"{n / ba['after']['seconds']:,.0f}", ">= 5,000"))
    wrong = defaultdict(list)
    for c, r in zip(claims, on.results):
        if (r.verdict or r.status) != c["expect"]:
            wrong[(re.split(r" of | does |\?", c["query"])[0], c["expect"], r.verdict or r.status)].append((c, r))
    for (q, want, got), cases in sorted(wrong.items(), key=lambda kv: -len(kv[1])):
        c, r = cases[0]
        both = set(r.detail.get("false_positives", [])) & set(r.detail.get("false_negatives", []))
        console.print(f"[yellow]intended {want}, got {got}[/]: {len(cases)} claims ({q}...), e.g. {c['source_path']}: "
                      f"{c['query']!r} answer {c['answer'][:90]!r} -> {r.reason[:200]}" +
                      (f" [red]({len(both)} correct claimed lines are both false positive and false negative)[/]"
                       if both else ""))
    return (f"batch_validate, {n:,} claims over {sources} sources: {n / t_off:,.0f} claims/s without cache, "
            f"{n / t_on:,.0f} with ({t_off / t_on:.1f}x); identical verdicts: {'yes' if same else 'NO'}; "
            f"verdict as intended: {n - sum(map(len, wrong.values())):,}/{n:,}.")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, help="a directory of Rust sources (default: the tokio-*/src tree)")
    ap.add_argument("--quick", action="store_true", help="1 timing round instead of 3, 1,000 claims instead of 10,000")
    ap.add_argument("--seed", type=int, default=0, help="seed of the claim generator (default 0)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="processes for the parallel tree-sitter extraction (default: the CPU count)")
    ap.add_argument("--only", choices=("grep", "ctags", "batch"), help="run one section only")
    ap.add_argument("--before", default=BEFORE, help=f"git ref whose rlmlab is the 'before' column (default {BEFORE})")
    ap.add_argument("--json", metavar="PATH", help="default runs/bench/oracle.json in the checkout")
    ap.add_argument("--smoke", action="store_true", help="tokio's src/sync, 1 round, 100 claims (make check); --json "
                    "defaults to runs/bench_smoke/oracle.json")
    args = ap.parse_args(argv)
    if args.root is None and not (found := sorted(glob.glob(f"{REGISTRY}/tokio-[0-9]*/src"))):
        sys.exit(f"no tokio sources under {REGISTRY}: apt-get install librust-tokio-dev (or `make rust-src`)")
    root = (args.root or Path(found[-1]) / ("sync" if args.smoke else "")).resolve()
    repeats, n_claims = (1, 40) if args.smoke else (1, 1_000) if args.quick else (3, 10_000)
    json_path = Path(args.json or ("runs/bench_smoke/oracle.json" if args.smoke
                                   else PROJECT / "runs" / "bench" / "oracle.json"))
    t_start, console = time.perf_counter(), Console(width=120)
    texts = read_tree(root, sorted(str(p.relative_to(root)) for p in root.rglob("*.rs") if p.is_file()))
    console.print(f"[bold]{root}[/]: {len(texts)} .rs files, {sum(t.count(chr(10)) for t in texts.values()):,} lines")
    before: list[Path] = []  # the extracted old tree, removed at the end
    sections = {"grep": lambda: section_grep(console, root, texts, repeats),
                "ctags": lambda: section_ctags(console, root, texts, repeats, args.workers),
                "batch": lambda: section_batch(console, root, texts, n_claims, args.seed,
                                               before.append(before_tree(args.before)) or before[-1], repeats)}
    try:
        lines = [run() for name, run in sections.items() if args.only in (None, name)]
    finally:
        for tree in before:
            shutil.rmtree(tree, ignore_errors=True)
    issue = new_table(f"Issue 20: before (commit {args.before}) and after, measured side by side in this run "
                      f"(load average {os.getloadavg()[0]:.1f})", ["figure", "before", "after", "goal"],
                      left=("figure",))
    for row in ISSUE_ROWS:
        issue.add_row(*row)
    console.print(issue)
    # Plain text, to paste into a note.
    print(f"\nSummary: {root}, {len(texts)} files, seed {args.seed}, {time.perf_counter() - t_start:.0f} s")
    print("\n".join(f"- {line}" for line in lines))
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps({"root": str(root), "files": len(texts), "seed": args.seed, "repeats": repeats,
                                     "claims": n_claims, "loadavg": os.getloadavg(), "figures": FIGURES,
                                     "issue_rows": ISSUE_ROWS, "summary": lines}, indent=1), encoding="utf-8")
    print(f"wrote {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
