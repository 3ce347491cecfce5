"""Exactly-once tasks: a run killed at any write point and resumed ends as an uninterrupted run does.

For E1 (no learning) and E9 (the ReasoningBank loop: judge, extract, append), a three-task run over file.rs is
killed at every write point of its second task (each memory write, the agent run, half a results row, the whole
row; see ``rlmlab._faults``), resumed, and compared with an uninterrupted run: the results rows, the memory bank
(items with their uses/wins, usage rows) and the L4 event log must be the same, timestamps and durations aside.
The agent is scripted and stateless (its reply depends only on the prompt), so a rerun task gives the same
answer. The kill is an exception no handler catches (cleanup that a real kill skips only closes files and
rolls back what was not committed, as the OS and SQLite do for a killed process); one test kills a real
process with ``os._exit`` to check that.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rlmlab._faults import FAULT_ENV, FAULT_EXIT_CODE, fault_hook
from rlmlab.experiments import read_results, run_experiment
from rlmlab.lm import make_lm
from rlmlab.lm._scripts import output_fields
from rlmlab.memory import MemoryStore, MemoryTask

COUNT = "hits = ctx_find(context, r'pub async fn', k=50)\nprint('counted', hits['total'])"
SUBMIT = "SUBMIT(answer=str(hits['total']))"
QUERIES = ("How many public async functions does file.rs define?", "How many public async functions are in file.rs?",
           "Count the public async functions of file.rs")
# Values that differ between two uninterrupted runs: clock times and durations.
VOLATILE = {"created_at", "updated_at", "retrieved_at", "elapsed_ms", "ts", "timing"}  # timing: wall times


class Killed(BaseException):
    """A simulated kill: a BaseException, so no ``except Exception`` on the way up can carry on."""


def count_agent(messages: list[dict[str, str]]) -> Any:
    """Count with ctx_find, then SUBMIT the count; the same prompt always gets the same reply."""
    fields = output_fields(messages)
    if not fields:
        return "[]"
    history = "\n".join(m["content"] for m in messages[1:]).replace(COUNT, "")
    return {name: (SUBMIT if "counted" in history else COUNT) if name == "code" else "step" for name in fields}


def count_tasks(rust_file: Path) -> list[MemoryTask]:
    text = rust_file.read_text()
    meta = {"source_path": str(rust_file), "suite": "code", "level": 2}
    return [MemoryTask(f"t{i}", q, text, "crate:tokio", text.count("pub async fn"), "numeric", dict(meta))
            for i, q in enumerate(QUERIES)]


def run(experiment: str, run_dir: Path, rust_file: Path) -> Any:
    return run_experiment(experiment, lm=make_lm("scripted", script=count_agent), task_list=count_tasks(rust_file),
                          run_dir=run_dir, progress=False)


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def state(run_dir: Path) -> dict[str, Any]:
    """What a resume must reproduce: results rows, and per memory DB its items, usage and events."""
    out: dict[str, Any] = {"rows": _strip(read_results(run_dir / "results.jsonl"))}
    for db in sorted(run_dir.glob("memory.*.sqlite")):
        with MemoryStore(db) as store:
            out[db.name] = {
                "items": _strip([dict(r) for r in store.execute("SELECT * FROM items ORDER BY id")]),
                "usage": _strip(sorted(store.usage(), key=lambda u: (u["trajectory_id"], u["item_id"]))),
                "events": [(e.kind, _strip(e.payload), e.domain, e.run_id, e.trajectory_id) for e in store.events()],
            }
    return out


def _differences(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    parts = [("rows", got.get("rows"), want.get("rows"))]
    for db in sorted((set(got) | set(want)) - {"rows"}):
        for part in ("items", "usage", "events"):
            parts.append((f"{db}:{part}", (got.get(db) or {}).get(part), (want.get(db) or {}).get(part)))
    return [name for name, a, b in parts if a != b]


def _points(experiment: str, run_dir: Path, rust_file: Path) -> list[str]:
    seen: list[str] = []
    with fault_hook(seen.append):
        run(experiment, run_dir, rust_file)
    return seen


@pytest.mark.parametrize("experiment", ["E1", "E9"])
@pytest.mark.slow
def test_a_kill_at_every_write_point_of_a_task_then_a_resume_matches_an_uninterrupted_run(tmp_path, rust_file,
                                                                                          experiment):
    points = _points(experiment, tmp_path / "base" / "run", rust_file)
    want = state(tmp_path / "base" / "run")
    assert want["rows"] and want == state(run(experiment, tmp_path / "again" / "run", rust_file).run_dir)
    if experiment == "E9":  # the loop learnt: t0's strategy was injected into t1 and t2 and counted
        assert want["rows"][1]["injected"] == want["rows"][0]["extracted"] != []
    rows_done = [i for i, name in enumerate(points) if name == "results:row"]
    second_task = range(rows_done[0] + 1, rows_done[1] + 1)  # every write point of task t1, its row included
    table = []
    for n in second_task:
        run_dir = tmp_path / f"kill{n}" / "run"

        def kill(name: str, seen: list[int] = [0], at: int = n) -> None:
            seen[0] += 1
            if seen[0] == at + 1:
                raise Killed(name)

        with pytest.raises(Killed), fault_hook(kill):
            run(experiment, run_dir, rust_file)
        run(experiment, run_dir, rust_file)  # the resume
        table.append((points[n], _differences(state(run_dir), want)))
    print(f"\n{experiment}: kill at each write point of task t1, then resume (differences from an uninterrupted run)")
    for name, diff in table:
        print(f"  {name:28} {'identical' if not diff else 'DIFFERENT: ' + ', '.join(diff)}")
    assert [name for name, diff in table if diff] == []


@pytest.mark.slow
def test_a_process_killed_with_half_a_row_written_resumes_to_the_uninterrupted_run(tmp_path, rust_file):
    # A real kill (os._exit: no finally, no close) of a learning run after task t1's memory writes, half its row on
    # disk. Before exactly-once tasks the resume ran t1 again: its own strategy injected, uses and events doubled.
    run("E9", tmp_path / "base" / "run", rust_file)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; import test_exactly_once as t; "
            "t.run('E9', Path(sys.argv[2]), Path(sys.argv[3]))")
    killed = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), str(tmp_path / "kill" / "run"),
                             str(rust_file)], env={**os.environ, FAULT_ENV: "results:partial:2"},
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == FAULT_EXIT_CODE, killed.stderr[-2000:]
    cut = (tmp_path / "kill" / "run" / "results.jsonl").read_text()
    assert cut.count("\n") == 1 and not cut.endswith("\n")  # t0's row, and half of t1's
    run("E9", tmp_path / "kill" / "run", rust_file)
    assert _differences(state(tmp_path / "kill" / "run"), state(tmp_path / "base" / "run")) == []
    summary = json.loads((tmp_path / "kill" / "run" / "summary.json").read_text())
    assert summary["main"]["rows"] == summary["main"]["tasks"] == 3


def test_a_store_transaction_commits_all_its_writes_or_none(tmp_path):
    from rlmlab.memory import ItemValidationError, MemoryItem

    item = MemoryItem("Peek before slicing", "first", "Call ctx_peek first.", "success")
    with MemoryStore(tmp_path / "bank.sqlite") as store, MemoryStore(tmp_path / "bank.sqlite") as other:
        with pytest.raises(Killed), store.transaction():
            store.log_event("note", {"n": 1})
            store.add(item)
            assert len(store.events()) == 1 and item.id in store  # the block reads its own writes
            assert other.events() == [] and item.id not in other  # nobody else does before the commit
            raise Killed("mid-transaction")
        assert store.events() == [] and len(store) == 0
        with store.transaction():
            store.log_event("note", {"n": 2})
            with pytest.raises(ItemValidationError):  # a write that fails inside is undone alone (a savepoint)
                store.log_event("note", {"nan": float("nan")})
            store.add(item)
        assert [e.payload for e in other.events()] == [{"n": 2}] and item.id in other


def test_a_loop_runs_a_task_once_per_run_id_and_replays_it_after(tmp_path, rust_file):
    from rlmlab.learning import ReasoningBankLoop

    task = count_tasks(rust_file)[0]
    with MemoryStore(tmp_path / "bank.sqlite") as store:
        loop = ReasoningBankLoop(store, lm=make_lm("scripted", script=count_agent), run_id="r1",
                                 runs_dir=tmp_path / "runs")
        first = loop.run_task(task)
        events, items = store.events(), store.items()
        again = ReasoningBankLoop(store, lm=make_lm("scripted", script=lambda m: pytest.fail("ran twice")),
                                  run_id="r1", runs_dir=tmp_path / "runs").run_task(task)
        assert again == first and store.events() == events and store.items() == items
    assert len((tmp_path / "runs" / "r1" / "results.jsonl").read_text().splitlines()) == 1
