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
        assert f"{digest}  data/{path.name}" in text, f"{README.name}: sha256 of {path.name} is not {digest}"
        pos = sum(bool(r["expected"]) for r in sets[name])
        assert f"| {path.name} | {len(sets[name])} | {pos} | {len(sets[name]) - pos} |" in text, name


def test_every_response_is_an_unedited_raw_reply(sets):
    raw = {r["gen_id"]: r for r in rows(DATA / "turing_narrated_smollm2_raw.jsonl")}
    for name, lines in sets.items():
        for r in lines:
            gen_id = r["note"].rsplit("[raw gen_id=", 1)[1].rstrip("]")
            src = raw[gen_id]
            assert r["id"] == "narr-" + gen_id and src["split"] == name, r["id"]
            assert (r["response"], r["tool_calls"], r["user"], r.get("history", [])) == (
                src["reply"], src["tool_calls"], src["user"], src["history"]), r["id"]
            assert 0.0 <= src["temperature"] <= 1.0, r["id"]
