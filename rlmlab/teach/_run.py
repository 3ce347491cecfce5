"""A teacher-learner run: every mode x arm on the same items and learner, written as it goes."""

from __future__ import annotations

import json
import time
from contextlib import nullcontext
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlmlab._files import write_atomic
from rlmlab._lock import lock_run_dir
from rlmlab.provenance import PROVENANCE_FILE, Collected, provenance, recording
from rlmlab.errors import RLMLabError
from rlmlab.teach._config import RunConfig
from rlmlab.teach._data import Item, load_dataset
from rlmlab.teach._learner import DemoLearner, LMLearner, VotingLearner
from rlmlab.teach._loop import ARMS, TEACHER_MODES, ArmSummary, run_arm
from rlmlab.teach._traces import ItemTrace, read_traces, write_traces
from rlmlab.teach._policy import load_templates
from rlmlab.teach._stop import ExpectedGain, load_stop_rules
from rlmlab.text import plural

__all__ = ["TeachReport", "make_learner", "run_teach", "arm_traces_path", "output_files", "finished_teach"]


def make_learner(config: RunConfig, items: list[Item] = (), *, lm: Any = None, turing: Any = None) -> Any:
    """The learner the config names: the demo simulator, the local model, or a LiteLLM model (decoding as the
    config says); k>1 votes.

    The demo simulator computes arithmetic itself and takes word problems' answers from ``items`` (documented
    as a simulator). ``lm`` overrides the provider's LM (tests pass a scripted one).
    """
    provider = config.effective_provider
    if provider == "demo" and lm is None:
        references = {i.question: i.reference for i in items}
        base: Any = DemoLearner(references.get, error_rate=config.error_rate, seed=config.seed)
    else:
        if lm is None:
            from rlmlab.lm import make_lm

            lm = make_lm(provider, temperature=config.learner_temperature, max_tokens=256)
        base = LMLearner(lm, temperature=config.learner_temperature, seed=config.seed, turing=turing,
                         decoding=config.decoding)
    return VotingLearner(base, config.parallel_learners_k) if config.parallel_learners_k > 1 else base


def arm_traces_path(traces_out: str | Path, mode: str, arm: str) -> Path:
    """Where one (mode, arm)'s traces go: ``traces.<mode>.<arm>.json`` beside ``traces_out``."""
    out = Path(traces_out)
    return out.with_name(f"{out.stem}.{mode}.{arm}{out.suffix or '.json'}")


def output_files(traces_out: str | Path) -> list[Path]:
    """Every file a run may write beside ``traces_out``, in any mode: ``traces_out`` itself, the per-arm files,
    ``summary.json``, and the ``.tmp`` files of their atomic writes. (``turing.sqlite`` is a log that runs share.)"""
    out = Path(traces_out)
    files = [out, out.with_name("summary.json"), *(arm_traces_path(out, m, a) for m in TEACHER_MODES for a in ARMS)]
    return files + [f.with_name(f.name + ".tmp") for f in files]


def _clear_earlier_run(traces_out: str | Path) -> None:
    """Remove an earlier run's files (only those, never a file the run would not write), so the new summary
    never sits beside another run's traces."""
    for f in output_files(traces_out):
        if f.is_file():
            f.unlink()


@dataclass
class TeachReport:
    config: RunConfig
    items: int
    rows: list[ArmSummary] = field(default_factory=list)
    traces: dict[tuple[str, str], list[ItemTrace]] = field(default_factory=dict)
    seconds: float = 0.0
    outputs: list[Path] = field(default_factory=list)
    decoding: str = "free"  # what the learner used: the config's on the embedded model, else free (demo, LiteLLM)

    @property
    def turns(self) -> int:
        return sum(len(t.turns) for ts in self.traces.values() for t in ts)

    def row(self, mode: str, arm: str) -> ArmSummary:
        return next(r for r in self.rows if r.mode == mode and r.arm == arm)

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config.to_dict(), "provider": self.config.effective_provider, "items": self.items,
                "rows": [r.to_dict() for r in self.rows], "turns": self.turns, "seconds": round(self.seconds, 3),
                "turns_per_second": round(self.turns / self.seconds, 1) if self.seconds else None,
                "decoding": self.decoding}

    def __rich__(self) -> Any:
        from rlmlab.teach._render import summary_table

        return summary_table(self.rows, self._title())

    def _repr_html_(self) -> str:
        from rlmlab.teach._render import summary_html

        return summary_html(self.rows, self._title())

    def _title(self) -> str:
        c = self.config
        return (f"{c.dataset}: {plural(self.items, 'item')}, provider {c.effective_provider}, "
                f"decoding {self.decoding}, k={c.parallel_learners_k}, max turns {c.max_turns}")


def finished_teach(config: RunConfig) -> TeachReport | None:
    """The run in ``traces_out``'s folder if it finished with this same config (every mode x arm written), read
    back from its files; None otherwise (no run, another config, a run cut short, an unreadable file).

    Traces read back are in the spec's format: turns and final accuracy, not the stop reason.
    """
    config = config.with_paths_resolved()
    summary = Path(config.traces_out).with_name("summary.json")
    try:
        doc = json.loads(summary.read_text(encoding="utf-8"))
        if doc.get("config") != json.loads(json.dumps(config.to_dict())):  # tuples are lists in the file
            return None
        rows = [ArmSummary.from_dict(r) for r in doc["rows"]]
        wanted = [(m, a) for m in config.modes for a in ARMS]
        if sorted((r.mode, r.arm) for r in rows) != sorted(wanted):
            return None
        traces = {(m, a): read_traces(arm_traces_path(config.traces_out, m, a)) for m, a in wanted}
    except (OSError, ValueError, KeyError, TypeError, RLMLabError):
        return None
    outputs = [arm_traces_path(config.traces_out, m, a) for m, a in wanted] + [Path(config.traces_out), summary]
    return TeachReport(config, int(doc["items"]), rows, traces, float(doc.get("seconds") or 0), outputs,
                       decoding=doc.get("decoding", "free"))


def _line_printer(total: int, t0: float) -> Callable[..., None]:
    """A progress callback printing ``[k/total] mode/arm qid: right|wrong after N turn(s), S s elapsed`` per item
    (S since the run started: the arms share an item's first answer, so one item's own time means little)."""
    done = [0]

    def line(label: str, trace: ItemTrace) -> None:
        done[0] += 1
        print(f"[{done[0]}/{total}] {label} {trace.qid}: {'right' if trace.final_accuracy else 'wrong'} after "
              f"{plural(len(trace.turns), 'turn')}, {time.perf_counter() - t0:.1f} s elapsed", flush=True)

    return line


def run_teach(config: RunConfig, *, lm: Any = None, turing: Any = None, write: bool = True,
              progress: Callable[[str], None] | str | None = None, reuse: bool = False) -> TeachReport:
    """Run every mode x arm; after each arm its traces are written, so an interrupted run keeps what it did.

    Files under ``traces_out``'s folder: ``traces.json`` (the spec's format: the RTS arm of the first mode),
    ``traces.<mode>.<arm>.json`` for every arm, and ``summary.json`` (the table, config, turns per second). An
    earlier run's files there (:func:`output_files`) are removed when the first arm is written, so a run that
    fails before it has anything to write leaves the earlier one as it was.
    ``progress`` is called once per item answered, with the arm's label; ``"lines"`` prints a line per item
    instead (notebooks and logs, flushed as each item ends). ``reuse``: when ``traces_out``'s folder holds a
    finished run of the same config (:func:`finished_teach`), return it instead of running again (printed). Relative input paths are resolved as
    :func:`~rlmlab.teach.load_run_config` does (working directory first, then the project root).
    """
    config = config.with_paths_resolved()
    if reuse and lm is None and (done := finished_teach(config)) is not None:
        print(f"reusing {Path(config.traces_out).parent}: a finished run of the same config "
              "(reuse=False, a notebook's fresh=True, runs it again)", flush=True)
        return done
    with recording() as collected:  # plug-ins made and files read go into provenance.json beside summary.json
        return _run(config, lm, turing, write, progress, collected)


def _learner_lm(learner: Any) -> Any:
    """The LM the learner calls (a voting learner's base learner's), or None for the demo learner."""
    return getattr(getattr(learner, "base", learner), "lm", None)


def _run(config: RunConfig, lm: Any, turing: Any, write: bool, progress: Callable[[str], None] | str | None,
         collected: Collected) -> TeachReport:
    items = load_dataset(config.dataset, limit=config.limit)
    rules = load_stop_rules(config.stop_rules, max_turns=config.max_turns)
    gains = ExpectedGain.from_traces(config.history)
    templates = load_templates()
    learner = make_learner(config, items, lm=lm, turing=turing)
    report = TeachReport(config, len(items),
                         decoding=getattr(getattr(learner, "base", learner), "decoding", "free"))
    t0 = time.perf_counter()
    printer = _line_printer(len(items) * len(config.modes) * len(ARMS), t0) if progress == "lines" else None

    def on_item(label: str) -> Callable[[ItemTrace], None] | None:
        if printer is not None:
            return lambda trace: printer(label, trace)
        return (lambda trace: progress(label)) if callable(progress) else None

    # One run writes a traces folder at a time: a second one is refused (RunLockedError), not interleaved.
    with lock_run_dir(Path(config.traces_out).parent) if write else nullcontext():
        try:
            for mode in config.modes:
                for arm in ARMS:
                    label = f"{mode}/{arm}"
                    traces, summary = run_arm(items, learner, arm=arm, mode=mode, rules=rules, gains=gains,
                                              templates=templates,
                                              progress=on_item(label))
                    report.traces[(mode, arm)] = traces
                    report.rows.append(summary)
                    report.seconds = time.perf_counter() - t0
                    if write:
                        if not report.outputs:
                            _clear_earlier_run(config.traces_out)
                        report.outputs.append(write_traces(arm_traces_path(config.traces_out, mode, arm), traces))
                        if mode == config.modes[0] and arm == "rts":
                            report.outputs.append(write_traces(config.traces_out, traces))
                        summary_path = Path(config.traces_out).with_name("summary.json")
                        write_atomic(summary_path, json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        finally:  # however the run ends, once it holds the folder
            if write:
                write_atomic(Path(config.traces_out).parent / PROVENANCE_FILE, json.dumps(provenance(
                    collected, lm=_learner_lm(learner) or lm or config.effective_provider, command="teach run",
                    config=config.to_dict()), indent=2, default=str))
    if write:
        report.outputs.append(Path(config.traces_out).with_name("summary.json"))
    return report
