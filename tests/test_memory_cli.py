"""``rlmlab memory`` on a real SQLite file with the curated pack."""

import json

from click.testing import CliRunner

from rlmlab.cli import main

PACK = "data/packs/rlm_procedures.jsonl"


def test_import_search_show_export_stats(tmp_path):
    db = str(tmp_path / "mem.sqlite")
    run = CliRunner().invoke
    first = run(main, ["memory", "import", PACK, "--db", db])
    again = run(main, ["memory", "import", PACK, "--db", db])
    n = sum(1 for line in open(PACK) if line.strip())
    assert first.exit_code == 0 and f"{n} added, 0 already stored" in first.output
    assert f"0 added, {n} already stored" in again.output
    hits = run(main, ["memory", "search", "ctx_find slice lines", "--db", db, "--json", "-k", "3"])
    rows = [json.loads(line) for line in hits.output.splitlines()]
    assert hits.exit_code == 0 and 1 <= len(rows) <= 3 and "content" not in rows[0]
    shown = run(main, ["memory", "show", rows[0]["id"], "--db", db, "--json"])
    assert json.loads(shown.output)["title"] == rows[0]["title"]
    missing = run(main, ["memory", "show", "mem_0000", "--db", db])
    assert missing.exit_code == 1 and "mem_0000" in missing.output
    out = tmp_path / "pack.jsonl"
    assert run(main, ["memory", "export", str(out), "--db", db]).exit_code == 0
    assert len(out.read_text().splitlines()) == n
    stats = json.loads(run(main, ["memory", "stats", "--db", db, "--json"]).output)
    assert stats["items"] == n and sum(stats["by_polarity"].values()) == n
