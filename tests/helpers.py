"""Shared by the tests: a model's step as the scripted LM takes it and as a constrained model writes it, an LM
that answers from a list and notes each request's sampling, an experiment file, what a loader's ConfigError says of a
config file, a free port, a file's digest, the cells of a rich table's row in printed output."""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path


def step(code: str, reasoning: str = "step") -> dict[str, str]:
    """One step of the scripted LM's script: its reasoning and its code."""
    return {"reasoning": reasoning, "code": code}


def steps(*codes: str) -> list[dict[str, str]]:
    """A script of one step per code, the reasoning of each "step N" (N its place, from 1)."""
    return [{"reasoning": f"step {i}", "code": c} for i, c in enumerate(codes, 1)]


def grammar_step(query: str, code: str, plan: str = "count") -> str:
    """A step as the model writes it under the step grammar: the question (white space folded), a plan, the code."""
    return (f"[[ ## reasoning ## ]]\nQuestion: {' '.join(query.split())} Plan: {plan}\n\n[[ ## code ## ]]\n{code}"
            "\n\n[[ ## completed ## ]]")


def answer_lm(answers: list[str]):
    """A scripted LM whose step i SUBMITs ``answers[i]``, and its engine, which notes the (temperature, seed) of
    each request in ``configs``."""
    import dspy

    from rlmlab.lm import CallRecorder, ScriptedEngine

    class RecordingEngine(ScriptedEngine):
        def __init__(self, script):
            super().__init__(script)
            self.configs: list[tuple[float | None, int | None]] = []

        def generate(self, messages, config):
            self.configs.append((config.temperature, getattr(config, "seed", None)))
            return super().generate(messages, config)

    engine = RecordingEngine([{"reasoning": "r", "code": f"SUBMIT(answer={a!r})"} for a in answers])
    return dspy.LM("rlmlab/scripted", engine=engine, cache=False, callbacks=[CallRecorder()], temperature=0.0,
                   max_tokens=512, num_retries=0), engine


def experiment_file(tmp_path: Path, body: str, name: str = "E90") -> str:
    """An experiment config ``tmp_path/<name>.yaml`` with id ``name``, title "t" and ``body``; its path."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"id: {name}\ntitle: t\n{body}")
    return str(path)


def config_error(load, path: Path, text: str, names: str) -> str:
    """What ``load`` says in the ConfigError it raises on a config file holding ``text`` (written to ``path``),
    checked to name the file and ``names`` (the key, or what is wrong)."""
    import pytest

    from rlmlab.errors import ConfigError

    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load(path)
    said = str(err.value)
    assert str(path) in said and names in said, said
    return said


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sha256_of(path: Path) -> str:
    """The hex SHA-256 of the file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


# A run whose step 1 narrates a search it never made (the Turing protocol's phantom_tool_result hook corrects it),
# step 2 searches for real and step 3 submits the count.
PHANTOM_THEN_REAL = [{"reasoning": "I searched the file and found 3 async functions at lines 5, 10 and 12.",
                      "code": "print('done')"},
                     {"reasoning": "Search for real.", "code": "hits = ctx_find(context, r'async fn', k=50)\n"
                                                               "print(hits['total'])"},
                     {"reasoning": "Submit the count.", "code": "SUBMIT(answer=str(hits['total']))"}]


def cells_by_header(out: str, first_cell: str) -> dict[str, str]:
    """Header -> cell of the rows whose first cell is ``first_cell``, over every table (or block of one) in ``out``."""
    found, header = {}, None
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("│┃").split("│" if line.startswith("│") else "┃")]
        if line.startswith("┃"):
            header = cells
        elif line.startswith("│") and header and cells[0] == first_cell and len(cells) == len(header):
            found.update(zip(header, cells))
    return found


def load_script(path: Path, name: str):
    """The module a script (``benchmarks/x.py``, ``studies/<name>/generate.py``) defines, loaded from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def jsonl_rows(path: Path) -> list[dict]:
    """The records of a JSON Lines file (blank lines skipped)."""
    import json

    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def check_manifest_sha256(root: Path, manifest: dict) -> None:
    """AssertionError unless every file a study's MANIFEST.json hashes exists under ``root`` with that sha256."""
    for rel, digest in manifest["sha256"].items():
        path = root / rel
        assert path.is_file(), f"MANIFEST.json lists {rel}, which is missing"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, f"{rel}: sha256 differs from MANIFEST.json"
