"""Redraw docs/img/ast_query.svg: one real ast_query call over tokio's fs/file.rs, printed as `rlmlab repl` prints it.

Run from the checkout: .venv/bin/python docs/img/make_ast_query_svg.py (needs Debian's librust-tokio-dev).
"""

from pathlib import Path

from rich.console import Console

from rlmlab import ast_query

SOURCE = sorted(Path("/usr/share/cargo/registry").glob("tokio-1.*/src/fs/file.rs"))[-1]
QUERY = '(function_item (visibility_modifier) (function_modifiers "async") name: (identifier) @name)'

console = Console(record=True, width=100)
console.print(f">>> hits = ast_query(\"tokio/src/fs/file.rs\",\n...     '{QUERY}', k=6)", markup=False, highlight=False)
console.print(">>> hits", markup=False, highlight=False)
console.print(ast_query(str(SOURCE), QUERY, k=6))
Path(__file__).with_name("ast_query.svg").write_text(console.export_svg(title="rlmlab repl"), encoding="utf-8")
