"""``rlmlab turing eval`` writes its reports and, beside them, ``<out stem>.provenance.json``: the labelled file with
its sha256, the LM as it ran, the hooks with their settings, the commit and library versions."""

from __future__ import annotations

import hashlib
import json

from click.testing import CliRunner

from rlmlab.cli import main
from rlmlab.turing import BUILTIN_HOOKS

LINES = [{"id": "a", "phase": "post_inference", "scope": "main", "response": "I'll check the file.",
          "tool_calls": [], "expected": ["empty_promise"]},
         {"id": "b", "phase": "pre_execution", "scope": "main", "response": "",
          "tool_calls": [{"name": "ctx_find", "arguments": {"ref": "x", "pattern": "fn", "k": 1000}}],
          "expected": ["tool_schema_validation"]}]


def test_turing_eval_writes_its_reports_and_provenance_beside_them(tmp_path):
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    out = tmp_path / "reports" / "eval.json"
    res = CliRunner().invoke(main, ["turing", "eval", "--data", str(data), "--lm", "scripted:probe", "--detector",
                                    "both", "--max-tokens", "64", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text()) == json.loads(res.output)  # the file holds what --json printed
    prov = json.loads((tmp_path / "reports" / "eval.provenance.json").read_text())
    assert prov["command"] == "turing eval" and prov["detector"] == "both" and prov["cases"] == 2
    assert prov["finished"] == ["programmatic", "llm"] and prov["reports"] == str(out)
    [labelled] = prov["files"]
    assert labelled == {"path": str(data.resolve()), "bytes": data.stat().st_size,
                        "sha256": hashlib.sha256(data.read_bytes()).hexdigest(), "role": "labelled turns"}
    assert prov["lm"]["model"] == "rlmlab/scripted" and prov["lm"]["sampling"]["max_tokens"] == 64
    assert [h["name"] for h in prov["hooks"]] == [h.name for h in BUILTIN_HOOKS]
    assert all({"phase", "scope", "validator_fn_name"} <= set(h) for h in prov["hooks"])
    assert len(prov["environment"]["git_commit"]) == 40 and prov["environment"]["libraries"]["rlmlab"]


def test_turing_eval_without_an_lm_records_none_and_a_bad_file_writes_nothing(tmp_path):
    data = tmp_path / "labelled.jsonl"
    data.write_text(json.dumps(LINES[0]) + "\n")
    out = tmp_path / "eval.json"
    res = CliRunner().invoke(main, ["turing", "eval", "--data", str(data), "--lm", "none", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert f"provenance: {tmp_path / 'eval.provenance.json'}" in res.output
    prov = json.loads((tmp_path / "eval.provenance.json").read_text())
    assert prov["lm"] is None and prov["finished"] == ["programmatic"]
    data.write_text(json.dumps(LINES[0]) + "\n{bad\n")
    again = tmp_path / "again.json"
    bad = CliRunner().invoke(main, ["turing", "eval", "--data", str(data), "--lm", "none", "--out", str(again)])
    assert bad.exit_code == 2 and f"{data}:2: not JSON" in bad.output
    assert not again.exists() and not (tmp_path / "again.provenance.json").exists()  # nothing ran
