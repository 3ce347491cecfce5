"""``rlmlab memory``: search, show, import, export and count the items of a memory store; preview the
ContextBuilder's injected context; memory health; store L3 artifacts; list and admit the candidates agents
proposed with mem_add."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from rlmlab._paths import rlmlab_command
from rlmlab.cli._errors import InputError
from rlmlab.text import plural

DEFAULT_DB = Path("runs/memory.sqlite")

_db_option = click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB,
                          show_default=True, help="The memory store (a SQLite file; import and artifact create it).")


SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file


def _open(db: Path, create: bool = False):
    """The store at ``db``. Commands that only read refuse a missing file, an empty one or one that is not SQLite
    (they would create or migrate a store in it and report nothing); a file that is not a SQLite database is a
    one-line error either way (exit code 2)."""
    import sqlite3

    from rlmlab.memory import MemoryStore

    if not create and not db.exists():
        raise InputError(f"--db {db}: no memory store there; create one with "
                         f"`{rlmlab_command()} memory import PACK --db {db}`")
    if db.is_dir():
        raise InputError(f"--db {db}: a directory; give the store's SQLite file")
    if not create:
        with open(db, "rb") as f:
            if f.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
                raise InputError(f"--db {db}: not a memory store (not a SQLite database file)")
    db.parent.mkdir(parents=True, exist_ok=True)
    try:
        return MemoryStore(db)
    except sqlite3.DatabaseError as exc:
        raise InputError(f"--db {db}: not a memory store ({exc})") from None


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


@click.group()
def memory() -> None:
    """Layered memory: the ReasoningBank store behind mem_search / mem_get."""


@memory.command("search")
@click.argument("query")
@_db_option
@click.option("-k", default=6, show_default=True, type=click.IntRange(1, 100))
@click.option("--polarity", type=click.Choice(["success", "failure"]), default=None)
@click.option("--role", default=None)
@click.option("--domain", default=None)
@click.option("--json", "as_json", is_flag=True)
def search(query: str, db: Path, k: int, polarity: str | None, role: str | None, domain: str | None,
           as_json: bool) -> None:
    """Search items by words (FTS5 bm25); shows ids, titles and descriptions, not content."""
    from rlmlab.memory import MemoryStoreError

    try:
        hits = _open(db).search(query, k=k, polarity=polarity, role=role, domain=domain)
    except MemoryStoreError as exc:
        raise _fail(exc) from None
    _listing(hits, as_json, f"{plural(len(hits), 'hit')} for {query!r} in {db}",
             ("id", "polarity", "role", "title", "description", "score"),
             lambda h: (h.id, h.polarity, h.role, h.title, h.description, f"{h.score:.2f}"), right=("score",))


def _listing(records: list, as_json: bool, title: str, columns: tuple[str, ...], row, right: tuple[str, ...] = ()):
    """Records as JSON Lines (``--json``) or a table of ``columns`` (``row(record)`` gives a row's cells)."""
    if as_json:
        for record in records:
            click.echo(json.dumps(record.to_dict(), ensure_ascii=False))
        return
    table = Table(title=title, title_justify="left")
    for col in columns:
        table.add_column(col, overflow="fold", justify="right" if col in right else "left", no_wrap=col == "id")
    for record in records:
        table.add_row(*row(record))
    Console().print(table)


@memory.command("show")
@click.argument("ids", nargs=-1, required=True)
@_db_option
@click.option("--json", "as_json", is_flag=True)
def show(ids: tuple[str, ...], db: Path, as_json: bool) -> None:
    """Show whole items by id."""
    from rich.markup import escape

    from rlmlab.memory import MemoryStoreError, admission_summary

    store = _open(db)
    console = Console()
    for item_id in ids:
        try:
            item = store.get(item_id)
        except (KeyError, MemoryStoreError) as exc:
            raise _fail(exc if isinstance(exc, MemoryStoreError) else
                        click.ClickException(f"{db}: no item {item_id!r}")) from None
        if as_json:
            click.echo(json.dumps(item.to_dict(), ensure_ascii=False))
            continue
        meta = (f"{item.polarity} · role {item.role} · scope {item.scope} · tags {', '.join(item.tags) or '-'}"
                f" · uses {item.uses} wins {item.wins}")
        admitted = admission_summary(item)
        meta += f"\nadmission: {admitted}" if admitted else ""
        code = f"\n\n[bold]Template[/bold]\n{escape(item.template)}" if item.template else ""
        console.print(Panel(f"[bold]{item.description}[/bold]\n\n{item.content}{code}\n\n[dim]{meta}[/dim]",
                            title=f"{item.id}: {item.title}", title_align="left"))


@memory.command("candidates")
@_db_option
@click.option("--run", "run_id", default=None, help="Only those this run proposed.")
@click.option("--json", "as_json", is_flag=True)
def candidates(db: Path, run_id: str | None, as_json: bool) -> None:
    """Items agents proposed with mem_add that are not in the bank: no search or run sees them until admitted."""
    from rlmlab.memory import candidate_items

    held = candidate_items(_open(db), run_id=run_id)
    _listing(held, as_json, f"{plural(len(held), 'candidate')} in {db}",
             ("id", "polarity", "run", "trajectory", "title", "content"),
             lambda it: (it.id, it.polarity, it.run_id or "-", it.trajectory_id or "-", it.title, it.content[:200]))


@memory.command("admit")
@click.argument("ids", nargs=-1, required=True)
@_db_option
def admit(ids: tuple[str, ...], db: Path) -> None:
    """Admit candidates into the bank as active items (after reading them: `rlmlab memory candidates`)."""
    import getpass

    from rlmlab.memory import MemoryStoreError, admit_candidates

    try:
        results = admit_candidates(_open(db), ids, by=f"person:{getpass.getuser()}")
    except MemoryStoreError as exc:
        raise _fail(exc) from None
    for r in results:
        click.echo(f"{r.id}: {'admitted' if r.created else 'already in the bank'}")


@memory.command("import")
@click.argument("packs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_db_option
def import_(packs: tuple[Path, ...], db: Path) -> None:
    """Import JSONL packs (ids are stable: importing twice adds nothing).

    Every pack is read and checked before the store is opened, so a bad line (one error naming file and line,
    exit code 2) leaves the store as it was, and creates none.
    """
    from rlmlab.memory import MemoryStoreError, PackError, import_pack, read_pack

    try:
        read = [(pack, read_pack(pack)) for pack in packs]
    except PackError as exc:
        raise InputError(exc) from None
    store = _open(db, create=True)
    for pack, items in read:
        try:
            report = import_pack(store, pack, items)
        except MemoryStoreError as exc:
            raise _fail(exc) from None
        click.echo(f"{pack}: {len(report.added)} added, {len(report.existing)} already stored")


@memory.command("export")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@_db_option
@click.option("--polarity", type=click.Choice(["success", "failure"]), default=None)
@click.option("--role", default=None)
@click.option("--domain", default=None)
def export(out: Path, db: Path, polarity: str | None, role: str | None, domain: str | None) -> None:
    """Export items as a JSONL pack, sorted by id (diff-friendly for data/packs/)."""
    from rlmlab.memory import MemoryStoreError, export_pack

    try:
        n = export_pack(_open(db), out, polarity=polarity, role=role, domain=domain)
    except MemoryStoreError as exc:
        raise _fail(exc) from None
    click.echo(f"{plural(n, 'item')} written to {out}")


@memory.command("stats")
@_db_option
@click.option("--json", "as_json", is_flag=True)
def stats(db: Path, as_json: bool) -> None:
    """Active items by polarity, role, domain and layer; all items by status; artifacts, events, usage rows, size."""
    s = _open(db).stats()
    if as_json:
        click.echo(json.dumps(s.to_dict(), indent=2))
        return
    table = Table(title=f"{s.path}: {plural(s.items, 'item')}, {plural(s.artifacts, 'artifact')}, "
                        f"{plural(s.events, 'event')}, {plural(s.usage_rows, 'usage row')}, "
                        f"{s.db_bytes / 1024:.0f} KiB", title_justify="left")
    table.add_column("by")
    table.add_column("value")
    table.add_column("items", justify="right")
    for name, counts in (("polarity", s.by_polarity), ("role", s.by_role), ("domain", s.by_domain),
                         ("layer", s.by_layer), ("status", s.by_status)):
        for value, n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))):
            table.add_row(name, str(value), str(n))
    Console().print(table)


@memory.command("context")
@click.argument("query")
@_db_option
@click.option("--domain", default=None, help="Domain id: prov, skos, crate:<name>, an ontology file or a crate dir.")
@click.option("--layers", default="L0,L1,L2,L3", show_default=True, help="Layers to enable, comma-separated ('' for none).")
@click.option("--mode", type=click.Choice(["auto_inject", "tool_mediated"]), default="auto_inject", show_default=True)
@click.option("--budget", "budgets", multiple=True, metavar="LAYER=CHARS", help="Override a layer budget, e.g. L2=800.")
@click.option("--json", "as_json", is_flag=True)
def context(query: str, db: Path, domain: str | None, layers: str, mode: str, budgets: tuple[str, ...],
            as_json: bool) -> None:
    """Show the context the ContextBuilder would inject for QUERY, and its per-layer report (not logged)."""
    from rlmlab.errors import ConfigError
    from rlmlab.memory import ContextBuilder, MemoryStoreError

    overrides: dict[str, int] = {}
    for spec in budgets:
        layer, _, chars = spec.partition("=")
        if not chars.strip().isdigit():
            raise click.BadParameter(f"{spec!r}: use LAYER=CHARS, e.g. L2=800", param_hint="--budget")
        overrides[layer.strip()] = int(chars)
    try:
        builder = ContextBuilder(_open(db), toggles=[x.strip() for x in layers.split(",") if x.strip()],
                                 budgets=overrides or None, mode=mode)
        built = builder.build(query, domain, log=False)
    except (ConfigError, MemoryStoreError) as exc:
        raise _fail(exc) from None
    if as_json:
        click.echo(json.dumps(built.to_dict(), indent=2, ensure_ascii=False))
        return
    console = Console()
    console.print(Panel(built.text, title=f"injected context ({plural(built.chars, 'char')})", title_align="left"))
    console.print(built)


@memory.command("health")
@_db_option
@click.option("--json", "as_json", is_flag=True)
def health(db: Path, as_json: bool) -> None:
    """Memory health: active size, duplicate and novelty rates, usage distribution, win rate."""
    from rlmlab.learning import memory_health

    h = memory_health(_open(db))
    if as_json:
        click.echo(json.dumps(h, indent=2))
        return
    table = Table(title=f"memory health of {db}", title_justify="left")
    table.add_column("metric")
    table.add_column("value", overflow="fold")
    for key, value in h.items():
        table.add_row(key, json.dumps(value) if isinstance(value, (dict, list)) else str(value))
    Console().print(table)


@memory.command("artifact")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_db_option
@click.option("--domain", required=True, help="The domain the artifact is about (e.g. prov).")
@click.option("--kind", default="guide", show_default=True)
@click.option("--title", default=None, help="Default: the file name.")
@click.option("--summary", "summary_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A hand-written summary to inject instead of the extractive one.")
def artifact(path: Path, db: Path, domain: str, kind: str, title: str | None, summary_path: Path | None) -> None:
    """Store an L3 artifact (e.g. an ontology guide); only its packed summary (<= 1000 chars) is ever injected."""
    from rlmlab.memory import Artifact, ItemValidationError, pack_l3

    from rlmlab._files import read_text
    from rlmlab.errors import InputFileError

    def read(p: Path) -> str:
        try:
            return read_text(p)
        except InputFileError as exc:
            raise InputError(f"{exc}; artifacts are text such as Markdown") from None

    try:
        art = Artifact(kind, title or path.name, read(path), domain=domain, source=f"file:{path}",
                       summary=read(summary_path) if summary_path else None)
    except ItemValidationError as exc:
        raise InputError(f"{path}: {exc}") from None
    result = _open(db, create=True).put_artifact(art)
    packed = pack_l3(art)
    click.echo(f"{'stored' if result.created else 'already stored'} {art.id} ({plural(len(art.content), 'char')}); "
               f"packed summary: {plural(packed.chars, 'char')}")
