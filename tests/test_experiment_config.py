"""configs/experiments/E1..E15.yaml: every config loads and says what the spec says; bad configs name file and key."""

from __future__ import annotations

import pytest

from rlmlab.errors import ConfigError
from rlmlab.experiments._config import list_experiments, load_experiment
from helpers import config_error


def test_all_twelve_experiments_load_and_match_the_spec():
    assert list_experiments() == [f"E{i}" for i in range(1, 16)]
    e = {name: load_experiment(name) for name in list_experiments()}
    assert e["E1"].conditions[0].layers.enabled() == []
    assert [e[x].conditions[0].layers.enabled() for x in ("E2", "E3", "E4", "E5")] == [["L0"], ["L1"], ["L3"], ["L2"]]
    assert e["E6"].conditions[0].layers.enabled() == ["L0", "L1", "L2", "L3"]
    assert [(c.name, c.tools) for c in e["E7"].conditions] == [("naive", "naive"), ("handle", "handle")]
    assert [c.mode for c in e["E8"].conditions] == ["auto_inject", "tool_mediated"]
    assert e["E8"].conditions[0].budgets == e["E8"].conditions[1].budgets  # identical budgets across modes
    # E15: the base model reading the context against RLM at depth 1 and 2, no memory in any arm
    assert [(c.name, c.executor, c.plugin_options.get("executor", {}).get("max_depth", 1))
            for c in e["E15"].conditions] == [("direct", "direct", 1), ("rlm_d1", "rlm", 1), ("rlm_d2", "rlm", 2)]
    assert all(not c.layers.enabled() for c in e["E15"].conditions)
    assert not e["E5"].conditions[0].learns and e["E5"].conditions[0].seed_packs
    nine, ten, eleven = (e[x].conditions[0] for x in ("E9", "E10", "E11"))
    assert (nine.extractor, nine.consolidator, nine.forgetter) == ("heuristic", "append", "none")
    assert (ten.consolidator, ten.forgetter) == ("consolidate", "none")
    assert eleven.forgetter == "bounded" and eleven.floors == {"success": 3, "failure": 3}
    # E14: every learning condition retires the templates that keep failing on the stream; the others learn nothing
    assert {c.name: c.forgetter for c in e["E14"].conditions} == {
        "no_memory": "none", "hand_pack": "none", "learned": "failing", "learned_matts": "failing",
        "pack_plus_learned": "failing", "learned_ref": "failing"}
    assert [(c.rollouts, c.extraction) for c in e["E12"].conditions] == [(3, "best"), (3, "contrastive")]
    # best of N and contrastive extraction need rollouts that can differ: greedy ones were all alike (stop 60: the
    # three rollouts of each of 40 tasks gave one answer, so E12 could measure nothing)
    assert all(c.resample and c.temperature > 0 for c in e["E12"].conditions)


@pytest.mark.parametrize("body, message", [
    ("id: E99\ntitle: t\nbase: {colour: red}\n", "base: Additional properties are not allowed ('colour'"),
    ("id: E99\ntitle: t\nbase: {budgets: {L2: big}}\n", "base.budgets.L2: 'big' is not of type 'integer'"),
    ("id: E99\ntitle: t\nbase: {budgets: {L0: 900}}\n", "L0: 900 is over the spec's 600"),
    ("id: E99\ntitle: t\nbase: {}\nconditions: [{name: a, tools: fancy}]\n", "conditions.0.tools: 'fancy' is not one of"),
    ("id: E99\ntitle: t\nbase: {rollouts: 1, extraction: contrastive}\n", "contrastive needs rollouts > 1"),
    ("id: E99\ntitle: t\nbase: {learning: {forgetter: bounded, max_bank: 3, floors: {success: 2, failure: 2}}}\n",
     "add up to more than max_bank 3"),
    ("title: t\nbase: {}\n", "(top level): 'id' is a required property"),
    ("id: E99\ntitle: t\nbase: [\n", "invalid YAML"),
])
def test_bad_configs_name_the_file_and_key(tmp_path, body, message):
    config_error(load_experiment, tmp_path / "bad.yaml", body, message)


def test_unknown_experiment_lists_the_known_ones():
    with pytest.raises(ConfigError, match="known: E1, E2"):
        load_experiment("E42")


def test_a_missing_seed_pack_is_an_error_naming_the_file_and_key(tmp_path):
    path = tmp_path / "E90.yaml"
    path.write_text("id: E90\ntitle: t\nbase:\n  seed_packs: [data/packs/nope.jsonl]\n")
    with pytest.raises(ConfigError, match=r"E90.yaml.*seed_packs: data/packs/nope.jsonl not found"):
        load_experiment(path)
