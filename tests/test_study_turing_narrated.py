"""studies/turing_narrated: the manifest's files are there with their sha256, each round's scenarios are the prompts
of its raw replies, and the one generator runs every round (scripted LM) and checks the manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import check_manifest_sha256, jsonl_rows, load_script

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "studies" / "turing_narrated"
MANIFEST = json.loads((STUDY / "MANIFEST.json").read_text(encoding="utf-8"))
ROUNDS = [r["round"] for r in MANIFEST["rounds"]]


def load_generator():
    return load_script(STUDY / "generate.py", "narrated_generate")


rows = jsonl_rows


def test_every_file_of_the_manifest_exists_with_its_sha256():
    check_manifest_sha256(ROOT, MANIFEST)


def test_the_manifest_lists_every_file_the_rounds_name_and_every_data_file_of_the_study():
    named = {MANIFEST["prompts"]}
    for entry in MANIFEST["rounds"]:
        f = entry["files"]
        named |= {f["scenarios"], f["raw"], *f["labelled"]} | ({f["excluded"]} if f["excluded"] else set())
    on_disk = {str(p.relative_to(ROOT)) for d in ("raw", "rounds") for p in (STUDY / d).iterdir()}
    assert named == set(MANIFEST["sha256"]) and on_disk <= named, (named ^ set(MANIFEST["sha256"]), on_disk - named)
    assert ROUNDS == list(range(1, len(ROUNDS) + 1))


@pytest.mark.parametrize("k", ROUNDS)
def test_a_rounds_scenarios_are_the_prompts_of_its_raw_replies_at_its_settings(k):
    gen = load_generator()
    entry = gen.round_of(k)
    scenarios = {s["sid"]: s for s in gen.scenarios(entry)}
    raw = rows(ROOT / entry["files"]["raw"])
    assert {r["sid"] for r in raw} == set(scenarios), f"round {k}: scenario ids differ from the raw file's"
    settings = {tuple(s) for s in entry["settings"]}
    for r in raw:
        assert {key: r[key] for key in scenarios[r["sid"]]} == scenarios[r["sid"]], r["gen_id"]
        assert (r["temperature"], r["seed"]) in settings, r["gen_id"]
        assert r["gen_id"] == f"{r['sid']}_t{r['temperature']}_s{r['seed']}"
    assert entry["max_tokens"] in {r["max_tokens"] for r in raw}


@pytest.mark.parametrize("k", [ROUNDS[0], ROUNDS[-1]])
def test_the_generator_smoke_run_writes_the_first_scenario_with_the_canned_reply(k, tmp_path, capsys):
    gen = load_generator()
    entry = gen.round_of(k)
    out = tmp_path / "raw.jsonl"
    assert gen.main(["--round", str(k), "--smoke", "--out", str(out)]) == 0
    [rec] = rows(out)
    first = rows(ROOT / entry["files"]["raw"])[0]
    temp, seed = entry["settings"][0]
    assert rec == {**{key: first[key] for key in ("sid", "split", "kind", "lang", "system", "user", "history")},
                   "gen_id": f"{first['sid']}_t{temp}_s{seed}", "temperature": temp, "seed": seed,
                   "max_tokens": entry["max_tokens"], "reply": entry["smoke_reply"],
                   "tool_calls": gen.tool_calls(entry["smoke_reply"])}
    assert rec["tool_calls"] and rec["tool_calls"][0]["name"] in entry["smoke_reply"]


def test_the_generator_selects_parts_and_ids_and_refuses_data_and_unknown_rounds(tmp_path):
    gen = load_generator()
    todo = gen.scenarios(gen.round_of(1))
    assert [s["sid"] for s in gen.selected(todo, "all", "h05,d01,zz", "1/1")] == ["h05", "d01"]
    assert [s["sid"] for s in gen.selected(todo, "dev", "h05,d01", "1/1")] == ["d01"]
    assert gen.selected(todo, "all", "", "2/3") == todo[1::3]
    with pytest.raises(SystemExit, match="refusing to write under data/"):
        gen.main(["--round", "1", "--smoke", "--out", str(tmp_path / "data" / "x.jsonl")])
    with pytest.raises(SystemExit, match="no round 99"):
        gen.main(["--round", "99", "--smoke", "--out", str(tmp_path / "x.jsonl")])


def test_verify_passes_on_the_study_and_names_a_missing_or_changed_file():
    gen = load_generator()
    assert gen.verify() == [] and gen.main(["--verify"]) == 0
    bad = {"sha256": {MANIFEST["prompts"]: "0" * 64, "studies/turing_narrated/raw/gone.jsonl": "0" * 64}}
    assert gen.verify(bad) == [f"{MANIFEST['prompts']}: sha256 differs from MANIFEST.json",
                               "studies/turing_narrated/raw/gone.jsonl: missing"]
