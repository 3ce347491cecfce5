"""The one registry core (rlmlab.registry) and experiment configs that name plug-ins as {name, options}."""

from __future__ import annotations

from typing import Literal

import pytest

from rlmlab.errors import ConfigError
from rlmlab.experiments import load_experiment
from rlmlab.learning import EXTRACTORS, HeuristicExtractor
from rlmlab.registry import PluginRef, Registry, options_schema, plugin_ref


class _Thing:
    def __init__(self, size: int, mode: Literal["a", "b"] = "a", scale: float = 1.0, note: str | None = None):
        self.size, self.mode, self.scale, self.note = size, mode, scale, note


def test_options_schema_comes_from_the_factory_signature():
    schema = options_schema(_Thing)
    assert schema["required"] == ["size"] and schema["additionalProperties"] is False
    assert schema["properties"]["size"] == {"type": "integer"}
    assert schema["properties"]["mode"] == {"enum": ["a", "b"], "default": "a"}
    assert schema["properties"]["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}


def test_make_checks_names_and_options_and_tags_what_it_made():
    things = Registry("thing")
    things.register("big", _Thing)
    made = things.make("big", size=3, mode="b")
    assert (made.size, made.mode) == (3, "b")
    assert plugin_ref(made) == PluginRef("thing", "big", {"size": 3, "mode": "b"})
    assert PluginRef.from_dict(plugin_ref(made).to_dict()) == plugin_ref(made)
    with pytest.raises(ConfigError, match=r"thing: unknown 'small'; registered: big"):
        things.make("small")
    with pytest.raises(ConfigError, match=r"thing 'big': unknown option\(s\) colour; it takes size, mode, scale, note"):
        things.make("big", size=1, colour="red")
    with pytest.raises(ConfigError, match=r"thing 'big': missing option\(s\) size"):
        things.make("big")
    with pytest.raises(ConfigError, match=r"thing 'big': option mode: 'c' is not one of \['a', 'b'\]"):
        things.make("big", size=1, mode="c")
    with pytest.raises(ConfigError, match=r"option size: 'x' is not of type 'integer'"):
        things.make("big", size="x")
    with pytest.raises(ValueError, match="already registered"):
        things.register("big", lambda: None)
    assert things.describe() == {"big": ""} and list(things) == ["big"] and "big" in things


def test_every_plug_in_kind_uses_the_core():
    from rlmlab.executors import EXECUTORS
    from rlmlab.learning import CONSOLIDATORS, FORGETTERS, JUDGES
    from rlmlab.lm import LM_PROVIDERS
    from rlmlab.lm._scripts import SCRIPTS
    from rlmlab.memory import RETRIEVAL_POLICIES, RETRIEVERS
    from rlmlab.ontology import LOADERS
    from rlmlab.teach import RTS_RULES
    from rlmlab.turing import PATTERN_DETECTORS, VALIDATORS

    kinds = [EXECUTORS, JUDGES, EXTRACTORS, CONSOLIDATORS, FORGETTERS, RETRIEVAL_POLICIES, RETRIEVERS, LM_PROVIDERS,
             SCRIPTS, LOADERS, RTS_RULES, VALIDATORS, PATTERN_DETECTORS]
    assert all(isinstance(k, Registry) and len(k) > 0 for k in kinds)


def _config(tmp_path, learning: str) -> str:
    path = tmp_path / "E91.yaml"
    path.write_text(f"id: E91\ntitle: plug-ins\nbase: {{layers: {{L2: true}}, learning: {learning}}}\n"
                    "conditions: [{name: a}]\n")
    return str(path)


def test_a_config_names_a_plug_in_with_options(tmp_path):
    cond = load_experiment(_config(tmp_path, "{extractor: {name: heuristic, options: {max_items: 2}}}")).conditions[0]
    assert cond.extractor == "heuristic" and cond.plugin_options == {"extractor": {"max_items": 2}}
    with pytest.raises(ConfigError, match=r"E91.yaml: conditions.0: extractor: extractor: unknown 'magic'; "
                                          r"registered: heuristic, llm"):
        load_experiment(_config(tmp_path, "{extractor: magic}"))
    with pytest.raises(ConfigError, match=r"extractor 'heuristic': option max_items: 'x' is not of type 'integer'"):
        load_experiment(_config(tmp_path, "{extractor: {name: heuristic, options: {max_items: x}}}"))


def test_a_new_plug_in_needs_no_change_to_the_config_schema(tmp_path):
    EXTRACTORS.register("careful_test_only", lambda max_items=1: HeuristicExtractor(max_items=max_items))
    try:
        cond = load_experiment(_config(tmp_path, "{extractor: {name: careful_test_only, options: {max_items: 1}}}"))
        assert cond.conditions[0].extractor == "careful_test_only"
    finally:
        EXTRACTORS.unregister("careful_test_only")
