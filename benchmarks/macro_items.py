"""Items recovered from item-level macro bodies (``cfg_*! { ... }``, ``pin_project! { ... }``) on tokio, checked
against a count made without tree-sitter.

The oracle's side: every function, struct, enum, trait and impl that ``TreeSitterOracle`` reports with
``from_macro`` set, as (file, line, kind, name).

The independent side: a plain scanner over the same files. It blanks comments, strings and char literals
(keeping line breaks), follows braces with a stack that labels each ``{`` by what opens it (a macro
invocation ``name! {``, an item container ``impl``/``trait``/``mod``/``extern``, a ``fn`` body, or anything
else), and takes an invocation as item-level when every enclosing brace is a container or an item-level
macro. Inside those bodies it counts ``fn NAME``, ``struct NAME``, ``enum NAME``, ``trait NAME`` and lines
starting with ``impl``. It shares no code with the oracle.

Printed: both counts per kind, the agreement, every item on one side only, and the share of all oracle items
that come from macro bodies.

Run:  .venv/bin/python benchmarks/macro_items.py [--root DIR] [--json PATH] [--smoke]
(``--smoke``, run by make check: tokio's ``src/fs`` only.)
"""

from __future__ import annotations

import argparse
import glob
import json
import re
from collections import Counter
from pathlib import Path

from rlmlab.oracle import TreeSitterOracle

REGISTRY = "/usr/share/cargo/registry"
_BLANK = re.compile(
    r"//[^\n]*"  # line comment
    r"|/\*(?:[^*]|\*(?!/))*\*/"  # block comment (tokio has no nested ones)
    r'|b?r(#*)"(?:.|\n)*?"\1'  # raw string
    r'|b?"(?:\\.|[^"\\])*"'  # string
    r"|b?'(?:\\.|[^\\'\n])'",  # char literal (a lifetime has no closing quote)
    re.S)
_ITEM = re.compile(r"\b(fn|struct|enum|trait)\s+(?:r#)?([A-Za-z_]\w*)|^[ \t]*(?:unsafe\s+)?(impl)\b", re.M)
_OPENER = re.compile(r"(?:^|[;{}])([^;{}]*)$", re.S)


def blank(text: str) -> str:
    """Comments, strings and char literals replaced by spaces; line breaks kept, so offsets map to lines."""
    return _BLANK.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _label(head: str) -> tuple[str, str | None]:
    """What a ``{`` opens, from the text since the previous ``;``, ``{`` or ``}``."""
    head = " ".join(head.split())
    if m := re.search(r"([A-Za-z_][\w:]*)\s*!\s*$", head):
        return "macro", m.group(1).rsplit("::", 1)[-1]
    if re.search(r"\bfn\b", head):
        return "fn", None
    if re.search(r"^(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?(?:impl|trait|mod|extern)\b", head):
        return "container", None
    return "other", None


def scan(text: str) -> list[tuple[int, str, str]]:
    """(line, kind, name) of the items inside item-level macro bodies of one file; impls are named ''."""
    code = blank(text)
    found, stack, start = [], [], 0  # stack: (label, item_level) per open brace
    item_level_macro_depth = []
    for i, ch in enumerate(code):
        if ch == "{":
            label, _ = _label(_OPENER.search(code[start:i]).group(1))
            outer_ok = all(kind in ("container", "macro_item") for kind, _ in stack)
            kind = "macro_item" if label == "macro" and outer_ok else label
            stack.append((kind, i))
            if kind == "macro_item":
                item_level_macro_depth.append(len(stack))
            start = i + 1
        elif ch == "}":
            if stack:
                kind, opened = stack.pop()
                if kind == "macro_item" and item_level_macro_depth and item_level_macro_depth[-1] == len(stack) + 1:
                    item_level_macro_depth.pop()
                    if not any(k == "macro_item" for k, _ in stack):  # outermost body: scan it once, nesting too
                        body = code[opened + 1:i]
                        base = code.count("\n", 0, opened + 1)
                        for m in _ITEM.finditer(body):
                            line = base + body.count("\n", 0, m.start()) + 1
                            if m.group(3):
                                found.append((line, "impl", ""))
                            else:
                                found.append((line, m.group(1), m.group(2)))
            start = i + 1
        elif ch == ";":
            start = i + 1
    return found


def oracle_items(o: TreeSitterOracle, macro_only: bool = True) -> list[tuple[int, str, str]]:
    out = []
    for kind, items in (("fn", o.get_functions()), ("struct", o.get_structs()), ("enum", o.get_enums()),
                        ("trait", o.get_traits()), ("impl", o.get_impls())):
        for it in items:
            if it.from_macro is not None or not macro_only:
                out.append((it.line, kind, "" if kind == "impl" else it.name))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=None)
    parser.add_argument("--json", metavar="PATH", help="default runs/bench/macro_items.json in the checkout")
    parser.add_argument("--smoke", action="store_true", help="tokio's src/fs only (make check); --json defaults to "
                        "runs/bench_smoke/macro_items.json")
    args = parser.parse_args(argv)
    tokio = sorted(glob.glob(f"{REGISTRY}/tokio-[0-9]*/src"))
    if args.root is None and not tokio:
        raise SystemExit(f"no tokio sources under {REGISTRY}: run make rust-src, or give --root DIR")
    root = args.root or Path(tokio[-1]) / ("fs" if args.smoke else "")
    out = Path(args.json or ("runs/bench_smoke/macro_items.json" if args.smoke
                             else Path(__file__).resolve().parents[1] / "runs/bench/macro_items.json"))
    files = sorted(root.rglob("*.rs"))
    ours, theirs, total = set(), set(), 0
    for path in files:
        rel = str(path.relative_to(root))
        text = path.read_text(encoding="utf-8")
        o = TreeSitterOracle(text, rel)
        ours |= {(rel, *it) for it in oracle_items(o)}
        total += len(oracle_items(o, macro_only=False))
        theirs |= {(rel, *it) for it in scan(text)}
    print(f"{root}: {len(files)} files; oracle items {total:,}, of which from macro bodies {len(ours):,} "
          f"({len(ours) / max(1, total):.1%})")
    print(f"{'kind':<8}{'oracle':>8}{'scanner':>9}{'both':>7}")
    kinds = {}
    for kind in ("fn", "struct", "enum", "trait", "impl"):
        a = {x for x in ours if x[2] == kind}
        b = {x for x in theirs if x[2] == kind}
        kinds[kind] = {"oracle": len(a), "scanner": len(b), "both": len(a & b)}
        print(f"{kind:<8}{len(a):>8}{len(b):>9}{len(a & b):>7}")
    both = ours & theirs
    print(f"{'all':<8}{len(ours):>8}{len(theirs):>9}{len(both):>7}   agreement |A∩B|/|A∪B| "
          f"{len(both) / max(1, len(ours | theirs)):.2%}")
    for side, extra in (("oracle only", sorted(ours - theirs)), ("scanner only", sorted(theirs - ours))):
        print(f"{side}: {len(extra)}")
        for item in extra[:40]:
            print("   ", *item)
    by_macro = Counter()
    for path in files:
        o = TreeSitterOracle(path.read_text(encoding="utf-8"))
        by_macro.update((f.from_macro or "").split(" > ")[0] for f in o.get_functions() if f.from_macro)
    print("functions by outermost macro:", ", ".join(f"{k} {v}" for k, v in by_macro.most_common(12)))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"root": str(root), "files": len(files), "oracle_items": total, "kinds": kinds,
                               "from_macro": len(ours), "scanner": len(theirs), "both": len(both),
                               "oracle_only": sorted(ours - theirs), "scanner_only": sorted(theirs - ours),
                               "functions_by_macro": dict(by_macro)}, indent=1), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
