"""``rlmlab memory`` on a real SQLite file with the curated pack."""

import json

import pytest
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


@pytest.mark.slow
def test_artifact_context_and_health(tmp_path):
    db = str(tmp_path / "mem.sqlite")
    run = CliRunner().invoke
    run(main, ["memory", "import", PACK, "--db", db])
    guide = tmp_path / "prov_guide.md"
    guide.write_text("# PROV guide\n\n## Attribution\n\nUse prov:wasAttributedTo from an entity to its agent. "
                     "Details follow.\n\n" + "More notes on PROV. " * 500)
    stored = run(main, ["memory", "artifact", str(guide), "--db", db, "--domain", "prov"])
    assert stored.exit_code == 0 and stored.output.startswith("stored art_")
    again = run(main, ["memory", "artifact", str(guide), "--db", db, "--domain", "prov"])
    assert "already stored" in again.output
    shown = run(main, ["memory", "context", "which agent was it attributed to; avoid large prints", "--db", db,
                       "--domain", "prov", "--budget", "L2=500", "--json"])
    built = json.loads(shown.output)
    layers = {r["layer"]: r for r in built["layers"]}
    assert shown.exit_code == 0 and all(layers[x]["injected"] for x in ("L0", "L1", "L2", "L3"))
    assert layers["L2"]["chars"] <= 500 and layers["L3"]["chars"] <= 1000
    assert "Use prov:wasAttributedTo from an entity to its agent." in built["text"]
    assert "More notes on PROV. More notes" not in built["text"]
    over = run(main, ["memory", "context", "q", "--db", db, "--budget", "L0=900"])
    assert over.exit_code == 1 and "L0: 900 is over the spec's 600" in over.output
    health = json.loads(run(main, ["memory", "health", "--db", db, "--json"]).output)
    assert health["active"] == sum(1 for line in open(PACK) if line.strip())
    binary = tmp_path / "x.bin"
    binary.write_bytes(b"\xfb\xff\x00")
    bad = run(main, ["memory", "artifact", str(binary), "--db", db, "--domain", "prov"])
    assert bad.exit_code == 2 and "not UTF-8 text" in bad.output


def test_reading_commands_refuse_a_missing_or_foreign_database(tmp_path):
    run = CliRunner().invoke
    missing = tmp_path / "nowhere" / "mem.sqlite"
    for cmd in (["memory", "search", "q"], ["memory", "stats"], ["memory", "health"], ["memory", "context", "q"]):
        res = run(main, [*cmd, "--db", str(missing)])
        assert res.exit_code == 2 and "no memory store there" in res.output and "Traceback" not in res.output
    assert not missing.exists() and not missing.parent.exists()  # nothing created by a read
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database\n")
    res = run(main, ["memory", "stats", "--db", str(junk)])
    assert res.exit_code == 2 and "not a memory store" in res.output


# -- issue 17 -------------------------------------------------------------------------------------------------

def test_a_pack_that_is_not_utf8_is_one_line_and_creates_no_database(tmp_path):
    pack = tmp_path / "pack.jsonl"
    good = json.dumps({"title": "T", "description": "D", "content": "C", "polarity": "success"})
    pack.write_bytes(good.encode() + b"\n" + b'{"title": "caf\xe9"}\n')
    db = tmp_path / "new.sqlite"
    res = CliRunner().invoke(main, ["memory", "import", str(PACK), str(pack), "--db", str(db)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert res.stderr == f"Error: {pack}:2: not UTF-8 text (byte 0xe9 at column 15)\n"
    assert not db.exists()  # every pack is read before the store is opened: nothing half-imported


def test_an_empty_file_is_not_a_store_for_reading_commands(tmp_path):
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    res = CliRunner().invoke(main, ["memory", "search", "q", "--db", str(empty)])
    assert res.exit_code == 2 and "not a memory store" in res.stderr and empty.read_bytes() == b""


def test_the_shipped_antipattern_pack_imports_and_is_found(tmp_path):
    from rlmlab.ontology import load_antipatterns

    pack = "data/packs/sparql_antipatterns.jsonl"
    db = str(tmp_path / "mem.sqlite")
    res = CliRunner().invoke(main, ["memory", "import", pack, "--db", db])
    n = len(load_antipatterns())
    assert res.exit_code == 0 and f"{n} added, 0 already stored" in res.output, res.output
    hits = CliRunner().invoke(main, ["memory", "search", "LIMIT unbounded SELECT", "--db", db, "--json"])
    rows = [json.loads(line) for line in hits.output.splitlines()]
    assert hits.exit_code == 0 and rows[0]["title"] == "Unbounded SELECT without LIMIT"
    assert rows[0]["polarity"] == "failure"
    shown = json.loads(CliRunner().invoke(main, ["memory", "show", rows[0]["id"], "--db", db, "--json"]).output)
    assert "ap-select-no-limit" in shown["tags"] and shown["source"] == "pack:sparql_antipatterns"
    assert shown["layer"] == "L2" and shown["domain"] is None
    again = CliRunner().invoke(main, ["memory", "import", pack, "--db", db])
    assert f"0 added, {n} already stored" in again.output

