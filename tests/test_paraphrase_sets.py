"""The paraphrase sets (data/paraphrase/): frozen as the README says, loadable, their references still true.

Each file's sha256 must be the one data/paraphrase/README.md gives, each source a manifest names must still hash as
the writer saw it, and every ontology reference query must still return the rows the writer froze (recomputed here
with rdflib, the writers' own tool). The code and text references were computed by the writers with their own
tools; their inputs are pinned by the manifests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rlmlab.experiments import load_suite
from rlmlab.experiments._suites import SUITES
from helpers import sha256_of

ROOT = Path(__file__).resolve().parents[1] / "data" / "paraphrase"
REGISTRY = Path("/usr/share/cargo/registry")
SPLITS = [(suite, split) for suite in ("code", "ontology", "text") for split in ("dev", "test")] + [("code", "dev2")]
WRITERS = {"dev": "A", "test": "B", "dev2": "C"}


def _readme_hashes() -> dict[tuple[str, str], str]:
    rows = re.findall(r"^\| (\w+) \| (dev2|dev|test) \| [ABC] \| \d+ \| [^|]+ \| ([0-9a-f]{64}) \|",
                      (ROOT / "README.md").read_text(), re.M)
    return {(suite, split): sha for suite, split, sha in rows}


@pytest.mark.parametrize("suite,split", SPLITS)
def test_each_set_is_frozen_and_loads(suite, split):
    path = SUITES[f"{suite}-paraphrase-{split}"]
    assert sha256_of(path) == _readme_hashes()[(suite, split)], f"{path} changed: a frozen set is never edited"
    manifest = json.loads((path.parent / "MANIFEST.json").read_text())
    assert manifest["questions"] == sha256_of(path) and manifest["writer"] == WRITERS[split]
    tasks = load_suite(f"{suite}-paraphrase-{split}")
    assert len(tasks) == manifest["count"] >= 40
    assert {t.meta["level"] for t in tasks} == {1, 2, 3, 4, 5}
    assert all(t.context for t in tasks)


@pytest.mark.parametrize("suite,split", SPLITS)
def test_the_sources_are_the_ones_the_writer_used(suite, split):
    path = SUITES[f"{suite}-paraphrase-{split}"]
    manifest = json.loads((path.parent / "MANIFEST.json").read_text())
    base = {"code": Path(manifest.get("files_root", REGISTRY)), "ontology": ROOT.parents[0] / "ontology",
            "text": path.parent / manifest.get("docs_dir", "")}[suite]
    changed = [name for name, sha in manifest["files"].items() if sha256_of(base / name) != sha]
    assert not changed, f"sources differ from what the writer saw: {changed[:5]}"


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_dev_and_test_share_no_source():
    for suite in ("code", "text"):
        dev, test = ({t.domain for t in load_suite(f"{suite}-paraphrase-{s}")} for s in ("dev", "test"))
        assert not dev & test, (suite, dev & test)
    dev2 = {t.domain for t in load_suite("code-paraphrase-dev2")}
    others = {t.domain for s in ("dev", "test") for t in load_suite(f"code-paraphrase-{s}")}
    assert not dev2 & others, dev2 & others


@pytest.mark.slow  # every reference query on rdflib (about 2 s a split)
@pytest.mark.parametrize("split", ["dev", "test"])
def test_ontology_references_still_return_the_frozen_rows(split):
    import rdflib

    graphs = {}
    for line in SUITES[f"ontology-paraphrase-{split}"].read_text().splitlines():
        task = json.loads(line)
        if task["domain"] not in graphs:
            graphs[task["domain"]] = rdflib.Graph().parse(ROOT.parents[0] / "ontology" / f"{task['domain']}.ttl")
        rows = sorted([str(v) if v is not None else "" for v in row] for row in graphs[task["domain"]].query(task["expected"]))
        assert rows == sorted(task["rows"]), task["id"]


def test_the_set_judge_compares_items_in_any_order_and_layout():
    from types import SimpleNamespace

    from rlmlab.learning import JUDGES
    from rlmlab.memory import MemoryTask

    judge = JUDGES.make("set")
    task = MemoryTask(id="t", query="q", context="", expected=["404: 17", "500: 3"], check="set")
    ok = judge.judge(task, SimpleNamespace(answer="- 500:3\n- 404 : 17", error=None, submitted=True))
    assert ok.success
    short = judge.judge(task, SimpleNamespace(answer="404: 17", error=None, submitted=True))
    assert not short.success and "missing" in short.rationale
    assert not judge.judge(task, SimpleNamespace(answer="'{answer}'", error=None, submitted=True)).success
