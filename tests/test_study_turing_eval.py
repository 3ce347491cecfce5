"""studies/turing_eval: the manifest's files are there with their sha256, the raw replies are the generator's
scenarios at the manifest's settings, every labelled SmolLM2 line is one of them unedited, and the generator reads
its settings from the manifest (smoke run) and checks it (--verify)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import check_manifest_sha256, jsonl_rows, load_script

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "studies" / "turing_eval"
MANIFEST = json.loads((STUDY / "MANIFEST.json").read_text(encoding="utf-8"))
GEN = MANIFEST["generation"]
RAW = ROOT / MANIFEST["files"]["raw"]
RAW_ID = re.compile(r"\[raw gen_id=([^\]]+)\]\s*$")


def load_generator():
    return load_script(STUDY / "generate.py", "turing_eval_generate")


rows = jsonl_rows


def test_every_file_of_the_manifest_exists_with_its_sha256():
    check_manifest_sha256(ROOT, MANIFEST)


def test_the_manifest_hashes_every_file_it_names_and_every_raw_file_of_the_study():
    labelled = MANIFEST["files"]["labelled"]
    named = {MANIFEST["files"]["raw"], GEN["out"]} | {entry["file"] for entry in labelled}
    on_disk = {str(p.relative_to(ROOT)) for p in (STUDY / "raw").iterdir()}
    assert named == set(MANIFEST["sha256"]) and on_disk <= named, (named ^ set(MANIFEST["sha256"]), on_disk - named)
    for entry in labelled:
        assert len(rows(ROOT / entry["file"])) == entry["lines"], entry["file"]
        assert (ROOT / entry["readme"]).is_file(), entry["readme"]


def test_the_raw_replies_are_the_generators_scenarios_at_the_manifests_settings():
    gen = load_generator()
    scenarios = {s["gen_id"]: s for s in gen.SCENARIOS}
    settings = [tuple(s) for s in GEN["settings"]]
    raw = rows(RAW)
    expected = [f"{sid}_t{t}_s{seed}" for sid in scenarios for t, seed in settings]
    assert [r["gen_id"] for r in raw] == expected  # every scenario at every setting, in the generator's order
    for r in raw:
        sid = r["gen_id"].rsplit("_t", 1)[0]
        assert {key: r[key] for key in scenarios[sid] if key != "gen_id"} == {
            key: v for key, v in scenarios[sid].items() if key != "gen_id"}, r["gen_id"]
        assert (r["temperature"], r["seed"]) in settings and r["max_tokens"] == GEN["max_tokens"], r["gen_id"]


def test_every_labelled_smollm2_line_is_a_raw_reply_unedited():
    raw = {r["gen_id"]: r for r in rows(RAW)}
    labelled = [r for r in rows(ROOT / "data" / "turing_eval.jsonl") if r.get("source") == "smollm2"]
    assert labelled
    for r in labelled:
        m = RAW_ID.search(r["note"])
        assert m and m.group(1) in raw, r["id"]
        assert r["response"] == raw[m.group(1)]["reply"], r["id"]
    assert all(r.get("source") == "written" for r in rows(ROOT / "data" / "turing_heldout.jsonl"))


def test_the_smoke_run_writes_the_first_scenario_with_the_manifests_canned_replies(tmp_path, capsys):
    gen = load_generator()
    out = tmp_path / "raw.jsonl"
    assert gen.main(["--smoke", "--out", str(out)]) == 0
    got = rows(out)
    first = gen.SCENARIOS[0]
    assert [r["gen_id"] for r in got] == [f"{first['gen_id']}_t{t}_s{s}" for t, s in GEN["settings"]]
    assert [r["reply"] for r in got] == [GEN["smoke_reply"].format(i=i) for i in range(len(GEN["settings"]))]
    assert {r["max_tokens"] for r in got} == {GEN["max_tokens"]}
    with pytest.raises(SystemExit, match="refusing to overwrite the labelled file"):
        gen.main(["--smoke", "--out", str(tmp_path / "turing_eval.jsonl")])


def test_verify_passes_on_the_study_and_names_a_missing_or_changed_file(capsys):
    gen = load_generator()
    assert gen.verify() == [] and gen.main(["--verify"]) == 0
    assert f"{len(MANIFEST['sha256'])} files match MANIFEST.json" in capsys.readouterr().out
    bad = {"sha256": {"data/turing_eval.jsonl": "0" * 64, "studies/turing_eval/raw/gone.jsonl": "0" * 64}}
    assert gen.verify(bad) == ["data/turing_eval.jsonl: sha256 differs from MANIFEST.json",
                               "studies/turing_eval/raw/gone.jsonl: missing"]
