"""The narrated-contents grounding set (issue 29): real SmolLM2 replies, labelled by hand, frozen by sha256.

Checks only the files' format and the labelling rule's hard constraints; it never imports a detector, so the set
stays independent of what it measures.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
RAWS = ROOT / "studies" / "turing_narrated" / "raw"  # the study's raw replies and exclusions (MANIFEST.json)
DEV = DATA / "turing_narrated_dev.jsonl"
HELDOUT = DATA / "turing_narrated_heldout.jsonl"
README = DATA / "turing_narrated.README.md"
FILES = {"dev": DEV, "heldout": HELDOUT}

# Hook names of seed 003 plus rlmlab's own, written out here so that this test does not import the detector.
KNOWN_HOOKS = {"workflow_spawn", "phantom_tool_result", "empty_promise", "unverified_completion",
               "objective_completion", "agenda_complete", "tool_schema_validation", "repetition_loop",
               "final_without_evidence"}
KEY_SETS = [  # the turing_eval line format plus ``user`` (the user's message of this turn)
    ["id", "phase", "scope", "user", "response", "tool_calls", "source", "note", "expected"],
    ["id", "phase", "scope", "user", "response", "tool_calls", "history", "source", "note", "expected"],
]
ID = re.compile(r"^narr-(d|h)\d\d_t[01]\.\d_s\d$")


def rows(path: Path) -> list[dict]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"{path.name}:{n}: blank line"
        out.append(json.loads(line))
    return out


@pytest.fixture(scope="module")
def sets() -> dict[str, list[dict]]:
    return {name: rows(path) for name, path in FILES.items()}


def test_sizes_and_balance(sets):
    assert len(sets["dev"]) >= 50 and len(sets["heldout"]) >= 120
    for name, lines in sets.items():
        pos = sum(bool(r["expected"]) for r in lines)
        assert 0.35 <= pos / len(lines) <= 0.65, (name, pos, len(lines))


def test_every_line_has_the_format(sets):
    for name, lines in sets.items():
        for r in lines:
            where = f"{name} {r.get('id')}"
            assert list(r) in KEY_SETS, where
            assert ID.match(r["id"]) and r["id"][5] == name[0], where
            assert (r["phase"], r["scope"], r["source"]) == ("post_inference", "main", "smollm2"), where
            assert isinstance(r["user"], str) and r["user"].strip(), where
            assert isinstance(r["response"], str) and r["response"].strip(), where
            assert set(r["expected"]) <= KNOWN_HOOKS and r["expected"] in ([], ["phantom_tool_result"]), where
            assert r["note"].endswith("]") and "[raw gen_id=" in r["note"], where
            for call in r["tool_calls"]:
                assert list(call) == ["name", "arguments"] and isinstance(call["arguments"], dict), where
            for step in r.get("history", []):
                assert list(step) == ["response", "output"] and step["response"].startswith("TOOL: "), where
            assert "history" not in r or r["history"], f"{where}: an empty history is left out, not []"


def test_ids_are_unique_and_new():
    seen: set[str] = set()
    for path in [DEV, HELDOUT, DATA / "turing_eval.jsonl", DATA / "turing_heldout.jsonl"]:
        ids = [r["id"] for r in rows(path)]
        assert len(ids) == len(set(ids)), path.name
        assert not seen & set(ids), (path.name, sorted(seen & set(ids))[:5])
        seen |= set(ids)


def test_positives_have_nothing_read_in_the_turn(sets):
    # The rule: a narrated claim is phantom only when no call of the turn (this round or an earlier one) read it.
    for lines in sets.values():
        for r in lines:
            if r["expected"]:
                assert not r["tool_calls"] and "history" not in r, r["id"]


def test_hard_negatives_are_there(sets):
    for name, lines in sets.items():
        clean = [r for r in lines if not r["expected"]]
        assert sum("history" in r for r in clean) >= 5, name  # contents narrated after a real read
        assert sum("```" in r["user"] for r in clean) >= 3, name  # the user pasted the file
        assert sum(not r["tool_calls"] and "history" not in r and "```" not in r["user"] for r in clean) >= 8, name


def test_held_out_turns_are_not_in_dev(sets):
    def turn(r: dict) -> str:  # the user's message and the earlier rounds: what the model saw, bar the system prompt
        return json.dumps([r["user"], r.get("history", [])])

    assert not {turn(r) for r in sets["dev"]} & {turn(r) for r in sets["heldout"]}


def test_readme_freezes_both_files_by_sha256(sets):
    text = README.read_text(encoding="utf-8")
    for name, path in FILES.items():
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert f"{digest}  {path.relative_to(ROOT)}" in text, f"{README.name}: sha256 of {path.name} is not {digest}"
        pos = sum(bool(r["expected"]) for r in sets[name])
        assert f"| {path.name} | {len(sets[name])} | {pos} | {len(sets[name]) - pos} |" in text, name


def test_every_response_is_an_unedited_raw_reply(sets):
    raw = {r["gen_id"]: r for r in rows(RAWS / "turing_narrated1_smollm2_raw.jsonl")}
    for name, lines in sets.items():
        for r in lines:
            gen_id = r["note"].rsplit("[raw gen_id=", 1)[1].rstrip("]")
            src = raw[gen_id]
            assert r["id"] == "narr-" + gen_id and src["split"] == name, r["id"]
            assert (r["response"], r["tool_calls"], r["user"], r.get("history", [])) == (
                src["reply"], src["tool_calls"], src["user"], src["history"]), r["id"]
            assert 0.0 <= src["temperature"] <= 1.0, r["id"]


# ---- the second held-out set: new prompts, labelled by a second labeller who never saw the detector
HELDOUT2 = DATA / "turing_narrated_heldout2.jsonl"
RAW2 = RAWS / "turing_narrated2_smollm2_raw.jsonl"
ID2 = re.compile(r"^narr-n\d\d_t[01]\.\d_s\d$")
NOTE2 = re.compile(r"^(phantom|clean|FP check) \((phantom|read|pasted|quote|promise|general|example|name|readfail|"
                   r"readother), (en|de|fr|es)\): .+ \[raw gen_id=(n\d\d_t[01]\.\d_s\d)\]$")


@pytest.fixture(scope="module")
def heldout2() -> list[dict]:
    return rows(HELDOUT2)


def test_heldout2_size_balance_and_format(heldout2):
    assert len(heldout2) >= 200
    pos = sum(bool(r["expected"]) for r in heldout2)
    assert 0.35 <= pos / len(heldout2) <= 0.5, (pos, len(heldout2))
    for r in heldout2:
        where = f"heldout2 {r.get('id')}"
        assert list(r) in KEY_SETS and ID2.match(r["id"]), where
        assert (r["phase"], r["scope"], r["source"]) == ("post_inference", "main", "smollm2"), where
        assert r["user"].strip() and r["response"].strip(), where
        assert r["expected"] in ([], ["phantom_tool_result"]), where
        m = NOTE2.match(r["note"])
        assert m and m.group(4) == r["id"][5:], f"{where}: note {r['note'][:60]!r}"
        # the note's verdict word and the label agree: "phantom" only on positives
        assert (m.group(1) == "phantom") == bool(r["expected"]), where
        for call in r["tool_calls"]:
            assert list(call) == ["name", "arguments"] and isinstance(call["arguments"], dict), where
        for step in r.get("history", []):
            assert list(step) == ["response", "output"] and step["response"].startswith("TOOL: "), where
        assert "history" not in r or r["history"], where


def test_heldout2_ids_and_turns_are_new(heldout2):
    ids = [r["id"] for r in heldout2]
    assert len(ids) == len(set(ids))
    old = [r for path in [DEV, HELDOUT, DATA / "turing_eval.jsonl", DATA / "turing_heldout.jsonl"] for r in rows(path)]
    assert not set(ids) & {r["id"] for r in old}
    # new prompts: no user message of the second set is a user message of the first one
    assert not {r["user"] for r in heldout2} & {r["user"] for r in old if "user" in r}


def test_heldout2_positives_and_hard_negatives(heldout2):
    for r in heldout2:
        if r["expected"]:  # nothing of this turn read the narrated thing: no call in this reply, no shown output
            assert not r["tool_calls"], r["id"]
            assert all(not step["output"].strip() or step["output"].startswith("error:")
                       or "readother" in r["note"] for step in r.get("history", [])), r["id"]
    clean = [r for r in heldout2 if not r["expected"]]
    kinds = {k: sum(f"({k}," in r["note"] for r in clean) for k in ("read", "pasted", "general", "example")}
    assert all(n >= 5 for n in kinds.values()), kinds
    assert sum("```" in r["user"] for r in clean) >= 5
    assert {"de", "fr", "es"} <= {NOTE2.match(r["note"]).group(3) for r in heldout2}


def test_heldout2_responses_are_unedited_raw_replies(heldout2):
    raw = {r["gen_id"]: r for r in rows(RAW2)}
    for r in heldout2:
        src = raw[r["id"][5:]]
        assert (r["response"], r["tool_calls"], r["user"], r.get("history", [])) == (
            src["reply"], src["tool_calls"], src["user"], src["history"]), r["id"]
        assert src["split"] == "heldout2" and 0.0 <= src["temperature"] <= 1.0, r["id"]
    assert len({raw[r["id"][5:]]["seed"] for r in heldout2}) >= 3


def test_readme_freezes_heldout2_by_sha256(heldout2):
    text = README.read_text(encoding="utf-8")
    for path in (HELDOUT2, RAW2):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert f"{digest}  {path.relative_to(ROOT)}" in text, f"{README.name}: sha256 of {path.name} is not {digest}"
    pos = sum(bool(r["expected"]) for r in heldout2)
    assert f"| {HELDOUT2.name} | {len(heldout2)} | {pos} | {len(heldout2) - pos} |" in text


# ---- the third held-out set: new prompts, labelled by a third labeller who never saw the detector
HELDOUT3 = DATA / "turing_narrated_heldout3.jsonl"
RAW3 = RAWS / "turing_narrated3_smollm2_raw.jsonl"
ID3 = re.compile(r"^narr-m\d\d_t[01]\.\d_s\d\d?$")
NOTE3 = re.compile(r"^(phantom|clean|FP check) \((phantom|read|pasted|quote|promise|general|example|name|readfail|"
                   r"readother), (en|de|fr|es)\): .+ \[raw gen_id=(m\d\d_t[01]\.\d_s\d\d?)\]$")


@pytest.fixture(scope="module")
def heldout3() -> list[dict]:
    return rows(HELDOUT3)


def test_heldout3_size_balance_and_format(heldout3):
    assert len(heldout3) >= 200
    pos = sum(bool(r["expected"]) for r in heldout3)
    assert 0.33 <= pos / len(heldout3) <= 0.5, (pos, len(heldout3))
    for r in heldout3:
        where = f"heldout3 {r.get('id')}"
        assert list(r) in KEY_SETS and ID3.match(r["id"]), where
        assert (r["phase"], r["scope"], r["source"]) == ("post_inference", "main", "smollm2"), where
        assert r["user"].strip() and r["response"].strip(), where
        assert r["expected"] in ([], ["phantom_tool_result"]), where
        m = NOTE3.match(r["note"])
        assert m and m.group(4) == r["id"][5:], f"{where}: note {r['note'][:60]!r}"
        # the note's verdict word and the label agree: "phantom" only on positives
        assert (m.group(1) == "phantom") == bool(r["expected"]), where
        # "FP check" only on hard-negative scenarios, "clean (phantom, ...)" only on inviting ones
        assert m.group(1) != "FP check" or m.group(2) != "phantom", where
        assert m.group(1) != "clean" or m.group(2) == "phantom", where
        for call in r["tool_calls"]:
            assert list(call) == ["name", "arguments"] and isinstance(call["arguments"], dict), where
        for step in r.get("history", []):
            assert list(step) == ["response", "output"] and step["response"].startswith("TOOL: "), where
        assert "history" not in r or r["history"], where


def test_heldout3_ids_and_turns_are_new(heldout3):
    ids = [r["id"] for r in heldout3]
    assert len(ids) == len(set(ids))
    old = [r for path in [DEV, HELDOUT, HELDOUT2, DATA / "turing_eval.jsonl", DATA / "turing_heldout.jsonl"]
           for r in rows(path)]
    assert not set(ids) & {r["id"] for r in old}
    # new prompts: no user message of the third set is a user message of the earlier ones (raw files included,
    # so that excluded replies' prompts count too)
    old_users = {r["user"] for r in old if "user" in r}
    old_users |= {r["user"] for path in (RAWS / "turing_narrated1_smollm2_raw.jsonl", RAW2) for r in rows(path)}
    assert not {r["user"] for r in heldout3} & old_users


def test_heldout3_positives_and_hard_negatives(heldout3):
    for r in heldout3:
        if r["expected"]:  # nothing of this turn read the narrated thing: no call in this reply, no shown output
            assert not r["tool_calls"], r["id"]
            assert all(not step["output"].strip() or step["output"].startswith("error:")
                       or "readother" in r["note"] for step in r.get("history", [])), r["id"]
    clean = [r for r in heldout3 if not r["expected"]]
    kinds = {k: sum(f"({k}," in r["note"] for r in clean) for k in ("read", "pasted", "general", "example")}
    assert all(n >= 5 for n in kinds.values()), kinds
    assert sum("history" in r for r in clean) >= 10
    assert sum("```" in r["user"] for r in clean) >= 5
    assert {"de", "fr"} <= {NOTE3.match(r["note"]).group(3) for r in heldout3}


def test_heldout3_responses_are_unedited_raw_replies(heldout3):
    raw_rows = rows(RAW3)
    raw = {r["gen_id"]: r for r in raw_rows}
    assert len(raw) == len(raw_rows)  # one raw record per reply
    for r in heldout3:
        src = raw[r["id"][5:]]
        assert (r["response"], r["tool_calls"], r["user"], r.get("history", [])) == (
            src["reply"], src["tool_calls"], src["user"], src["history"]), r["id"]
        assert src["split"] == "heldout3" and 0.0 <= src["temperature"] <= 1.0, r["id"]
        assert f"({src['kind']}, {src['lang']})" in r["note"], r["id"]  # the note names the scenario's kind, lang
    assert len({raw[r["id"][5:]]["seed"] for r in heldout3}) >= 3
    assert all(r["split"] == "heldout3" for r in raw_rows)


def test_readme_freezes_heldout3_by_sha256(heldout3):
    text = README.read_text(encoding="utf-8")
    for path in (HELDOUT3, RAW3):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert f"{digest}  {path.relative_to(ROOT)}" in text, f"{README.name}: sha256 of {path.name} is not {digest}"
    pos = sum(bool(r["expected"]) for r in heldout3)
    assert f"| {HELDOUT3.name} | {len(heldout3)} | {pos} | {len(heldout3) - pos} |" in text


def test_heldout3_every_raw_reply_is_labelled_or_excluded(heldout3):
    # every reply generated for the set is either a line of it or listed, with its reason, as excluded
    raw_ids = {r["gen_id"] for r in rows(RAW3)}
    excluded = [line.split("\t") for line in (RAWS / "turing_narrated3_excluded.tsv").read_text(
        encoding="utf-8").splitlines()]
    assert all(len(e) == 4 and e[3].strip() for e in excluded)
    ex_ids = [e[0] for e in excluded]
    kept = {r["id"][5:] for r in heldout3}
    assert len(ex_ids) == len(set(ex_ids)) and not kept & set(ex_ids)
    assert kept | set(ex_ids) == raw_ids


# ---- the fourth held-out set: new prompts, labelled by a helper who never saw the detector (scored once)
HELDOUT4 = DATA / "turing_narrated_heldout4.jsonl"
RAW4 = RAWS / "turing_narrated4_smollm2_raw.jsonl"
ID4 = re.compile(r"^narr-p\d\d_t[01]\.\d_s\d\d?$")
NOTE4 = re.compile(r"^(phantom|clean|FP check) \((\w+), (\w\w)\): .+ \[raw gen_id=(p\d\d_t[01]\.\d_s\d\d?)\]$")


def test_heldout4_format_labels_and_unedited_new_replies():
    held = rows(HELDOUT4)
    raw = {r["gen_id"]: r for r in rows(RAW4)}
    assert len(held) >= 200 and 0.25 <= sum(bool(r["expected"]) for r in held) / len(held) <= 0.5
    ids = [r["id"] for r in held]
    assert len(ids) == len(set(ids))
    old_users = {r["user"] for path in (DEV, HELDOUT, HELDOUT2, HELDOUT3, RAW2, RAW3) for r in rows(path) if "user" in r}
    for r in held:
        where = f"heldout4 {r['id']}"
        assert list(r) in KEY_SETS and ID4.match(r["id"]), where
        assert r["expected"] in ([], ["phantom_tool_result"]), where
        m = NOTE4.match(r["note"])
        assert m and m.group(4) == r["id"][5:] and (m.group(1) == "phantom") == bool(r["expected"]), where
        src = raw[r["id"][5:]]
        assert (r["response"], r["tool_calls"], r["user"], r.get("history", [])) == (
            src["reply"], src["tool_calls"], src["user"], src["history"]), where
        assert src["split"] == "heldout4" and r["user"] not in old_users, where
        if r["expected"]:
            assert not r["tool_calls"], where


# ---- the fifth, sixth and seventh held-out sets: new prompts, each labelled by a helper who never saw the detector or the
# learned model (each scored once, then a training file of the model)
HELDOUT5, RAW5 = DATA / "turing_narrated_heldout5.jsonl", RAWS / "turing_narrated5_smollm2_raw.jsonl"
# split number -> its scenario ids' letter and the files whose user messages it must not repeat
LATER_SPLITS = {5: ("q", (DEV, HELDOUT, HELDOUT2, HELDOUT3, HELDOUT4, RAW2, RAW3, RAW4)),
                6: ("r", (DEV, HELDOUT, HELDOUT2, HELDOUT3, HELDOUT4, HELDOUT5, RAW2, RAW3, RAW4, RAW5)),
                7: ("s", (DEV, HELDOUT, HELDOUT2, HELDOUT3, HELDOUT4, HELDOUT5, DATA / "turing_narrated_heldout6.jsonl",
                          RAW2, RAW3, RAW4, RAW5, RAWS / "turing_narrated6_smollm2_raw.jsonl"))}


def _later_split(k: int) -> tuple[Path, Path, re.Pattern, re.Pattern]:
    letter = LATER_SPLITS[k][0]
    gen = rf"{letter}\d{{2,3}}_t[01]\.\d_s\d\d?"
    return (DATA / f"turing_narrated_heldout{k}.jsonl", RAWS / f"turing_narrated{k}_smollm2_raw.jsonl",
            re.compile(rf"^narr-{gen}$"),
            re.compile(rf"^(phantom|clean|FP check) \((\w+), (\w\w)\): .+ \[raw gen_id=({gen})\]$"))


@pytest.mark.parametrize("k", sorted(LATER_SPLITS))
def test_later_heldout_format_labels_and_unedited_new_replies(k):
    path, raw_path, id_rx, note_rx = _later_split(k)
    held = rows(path)
    raw = {r["gen_id"]: r for r in rows(raw_path)}
    assert len(held) >= 200 and 0.3 <= sum(bool(r["expected"]) for r in held) / len(held) <= 0.55
    ids = [r["id"] for r in held]
    assert len(ids) == len(set(ids))
    old_users = {r["user"] for old in LATER_SPLITS[k][1] for r in rows(old) if "user" in r}
    for r in held:
        where = f"heldout{k} {r['id']}"
        assert list(r) in KEY_SETS and id_rx.match(r["id"]), where
        assert r["expected"] in ([], ["phantom_tool_result"]), where
        m = note_rx.match(r["note"])
        assert m and m.group(4) == r["id"][5:] and (m.group(1) == "phantom") == bool(r["expected"]), where
        src = raw[r["id"][5:]]
        assert (r["response"], r["tool_calls"], r["user"], r.get("history", [])) == (
            src["reply"], src["tool_calls"], src["user"], src["history"]), where
        assert src["split"] == f"heldout{k}" and r["user"] not in old_users, where
        if r["expected"]:
            assert not r["tool_calls"] and not r.get("history"), where


@pytest.mark.parametrize("k", sorted(LATER_SPLITS))
def test_later_heldout_every_raw_reply_is_labelled_or_excluded_and_the_readme_has_its_sha256(k):
    path, raw_path, _, _ = _later_split(k)
    raw_ids = {r["gen_id"] for r in rows(raw_path)}
    excluded = [line.split("\t") for line in (RAWS / f"turing_narrated{k}_excluded.tsv").read_text(
        encoding="utf-8").splitlines()]
    assert all(len(e) == 4 and e[3].strip() for e in excluded)
    ex_ids = [e[0] for e in excluded]
    held = rows(path)
    kept = {r["id"][5:] for r in held}
    assert len(ex_ids) == len(set(ex_ids)) and not kept & set(ex_ids)
    assert kept | set(ex_ids) == raw_ids
    text = README.read_text(encoding="utf-8")
    for f in (path, raw_path):
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        assert f"{digest}  {f.relative_to(ROOT)}" in text, f"{README.name}: sha256 of {f.name} is not {digest}"
    pos = sum(bool(r["expected"]) for r in held)
    assert f"| {path.name} | {len(held)} | {pos} | {len(held) - pos} |" in text
