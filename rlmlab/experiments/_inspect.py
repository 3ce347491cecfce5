"""An experiment run as an Inspect AI eval log, built from inspect_ai's own models (``rlmlab experiment export``).

One sample per results row: id ``condition/task`` (``condition/phase/task`` for the frozen test split), epoch
rollout + 1. Its input is the query, its target the task's expected answer, its score the run's verdict under
the judge's name (C or I, with the judge's rationale), its messages the agent's steps (the reasoning and code as a
``python`` tool call, the output as the tool's reply) and its events what the viewer's Transcript shows: for each
step the LM calls of ``lm_calls.jsonl`` as model events (the exact messages sent, the completion, the tokens and
latency recorded) and the code run as a tool event with its output; calls made while the code ran (``llm_query``)
sit inside the tool's span. Event times are rebuilt from the durations the run recorded (each call's latency, each
step's time), from the trajectory's start. The run's provenance.json and summary.json go into the log's metadata.

inspect_ai is imported only here, and only when a log is built: ``pip install 'rlmlab[inspect]'``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rlmlab.errors import ConfigError, MissingExtraError

__all__ = ["INSPECT_FORMATS", "inspect_log", "export_inspect", "listed_by_inspect_view"]

INSPECT_FORMATS = (".eval", ".json")  # write_eval_log picks the format from the suffix


def _inspect() -> Any:
    try:
        import inspect_ai.log  # noqa: F401  (the models below are in its submodules)
    except ImportError:
        raise MissingExtraError("rlmlab experiment export --format inspect", "inspect", "inspect_ai") from None
    import inspect_ai

    return inspect_ai


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a JSON file ({exc})") from None
    return value if isinstance(value, dict) else {}


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _target(expected: Any) -> str:
    if expected is None or isinstance(expected, str):
        return expected or ""
    if isinstance(expected, (int, float, bool)):
        return str(expected)
    return json.dumps(expected, ensure_ascii=False, default=str)  # facts, name lists: one JSON text, not alternatives


def _sample_id(row: dict[str, Any]) -> str:
    phase = row.get("phase", "stream")
    return "/".join([row["condition"], *([phase] if phase != "stream" else []), row["task_id"]])


class _Clock:
    """Event times of one sample: ``at`` seconds since the epoch, ``start`` the trajectory's start."""

    def __init__(self, start: float):
        self.start = self.at = start

    def advance(self, seconds: float) -> tuple[datetime, float, datetime]:
        """(timestamp, working_start, completed) of an event lasting ``seconds`` that begins now."""
        begin = self.at
        self.at += max(0.0, seconds)
        return _when(begin), begin - self.start, _when(self.at)


class _Builder:
    """Builds one EvalLog from a run directory's files."""

    def __init__(self, run_dir: Path):
        from rlmlab.experiments._runs import run_rows

        self.ia = _inspect()
        self.run_dir = run_dir
        self.rows = run_rows(run_dir)
        self.config = _read_json(run_dir / "config.json")
        self.prov = _read_json(run_dir / "provenance.json")
        self.summary = _read_json(run_dir / "summary.json")
        sampling = ((self.prov.get("lm") or {}).get("sampling") or {})
        from inspect_ai.model import GenerateConfig

        self.generate_config = GenerateConfig(**{k: v for k, v in sampling.items()
                                                 if k in GenerateConfig.model_fields and v is not None})
        self.expected = self._expected_from_task_files()

    def _expected_from_task_files(self) -> dict[str, Any]:
        """Expected answers by task id from the task files provenance.json names, for rows written before rows
        carried ``expected``; {} when none can be read."""
        if all("expected" in r for r in self.rows):
            return {}
        from rlmlab.experiments._suites import SuiteError, read_tasks

        out: dict[str, Any] = {}
        for f in self.prov.get("files", []):
            if f.get("role") == "tasks" and Path(f.get("path", "")).is_file():
                try:
                    out.update({t.id: t.expected for t in read_tasks(f["path"])})
                except (SuiteError, OSError, ValueError):
                    continue
        return out

    # -- messages and events ----------------------------------------------------------------------------------
    def _chat(self, messages: list[dict[str, Any]] | None) -> list[Any]:
        from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

        kinds = {"system": ChatMessageSystem, "assistant": ChatMessageAssistant}
        return [kinds.get(m.get("role"), ChatMessageUser)(content=str(m.get("content", ""))) for m in messages or []]

    def _model_event(self, call: Any, clock: _Clock, span: str) -> Any:
        from inspect_ai.event import ModelEvent
        from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput, ModelUsage

        usage = ModelUsage(input_tokens=call.input_tokens, output_tokens=call.output_tokens,
                           total_tokens=call.input_tokens + call.output_tokens)
        text = call.completion if call.completion is not None else ""
        output = ModelOutput(model=call.model, usage=usage, time=call.latency_s, error=call.error, choices=[] if
                             call.error else [ChatCompletionChoice(message=ChatMessageAssistant(
                                 content=text, model=call.model, source="generate"), stop_reason="stop")])
        start, working, done = clock.advance(call.latency_s)
        return ModelEvent(model=call.model, role=call.role, input=self._chat(call.messages), tools=[],
                          tool_choice="none", config=self.generate_config, output=output, error=call.error,
                          cache="read" if call.cached else None, timestamp=start, working_start=working,
                          completed=done, working_time=call.latency_s, span_id=span,
                          metadata={"step": call.step, "prompt_chars": call.prompt_chars, "timing": call.timing})

    def _span(self, events: list[Any], name: str, kind: str | None, parent: str | None, clock: _Clock) -> str:
        from inspect_ai.event import SpanBeginEvent
        from shortuuid import uuid

        ident = uuid()
        start, working, _ = clock.advance(0)
        events.append(SpanBeginEvent(id=ident, name=name, type=kind, parent_id=parent, span_id=ident,
                                     timestamp=start, working_start=working))
        return ident

    def _end(self, events: list[Any], ident: str, clock: _Clock) -> None:
        from inspect_ai.event import SpanEndEvent

        start, working, _ = clock.advance(0)
        events.append(SpanEndEvent(id=ident, span_id=ident, timestamp=start, working_start=working))

    def _step(self, it: Any, calls: list[Any], executor: str, events: list[Any], messages: list[Any],
              clock: _Clock, solver: str) -> None:
        """One agent step: its main LM call(s), then the code run (a tool event; calls made meanwhile inside the
        tool's span), then its Turing rounds. Appends the step's assistant and tool messages too."""
        from inspect_ai.event import InfoEvent, ToolEvent
        from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
        from inspect_ai.tool import ToolCall, ToolCallContent, ToolCallError

        main = [c for c in calls if c.role == "main"]
        for call in main:
            events.append(self._model_event(call, clock, solver))
        react = executor == "react" and len(it.tool_calls) == 1
        function = str(it.tool_calls[0].get("name")) if react else "python"
        arguments = dict(it.tool_calls[0].get("arguments") or {}) if react else {"code": it.code}
        view = None if react else ToolCallContent(title="python", format="markdown",
                                                  content=f"```python\n{it.code.strip()}\n```\n")
        call_id = f"step-{it.index}"
        messages.append(ChatMessageAssistant(content=it.reasoning or "", source="generate", tool_calls=[
            ToolCall(id=call_id, function=function, arguments=arguments, view=view)]))
        # ReAct's one tool call failing is the step failing; a failed call inside code is the code's to handle
        error = str(it.tool_calls[0]["error"]) if react and it.tool_calls[0].get("error") else None
        step_s = max(0.0, it.elapsed_ms / 1000 - sum(c.latency_s for c in main))
        # as inspect_ai records a tool: its span opens, the tool event (in the caller's span) comes first, then
        # what ran inside it (llm_query's calls), then the span closes
        tool_span = self._span(events, function, "tool", solver, clock)
        start, working, _ = clock.advance(0)
        event = ToolEvent(id=call_id, function=function, arguments=json.loads(json.dumps(arguments, default=str)),
                          view=view, result=it.output,
                          error=ToolCallError(type="unknown", message=error) if error else None,
                          timestamp=start, working_start=working, working_time=step_s, span_id=solver,
                          metadata={"step": it.index, "tool_calls": it.tool_calls, "leakage": it.leakage.to_dict()})
        events.append(event)
        inner = [c for c in calls if c.role != "main"]
        for call in inner:
            events.append(self._model_event(call, clock, tool_span))
        clock.advance(step_s - sum(c.latency_s for c in inner))
        event.completed = _when(clock.at)
        self._end(events, tool_span, clock)
        messages.append(ChatMessageTool(content=it.output, tool_call_id=call_id, function=function))
        for r in it.turing:
            start, working, _ = clock.advance(0)
            events.append(InfoEvent(source="turing", data=r, timestamp=start, working_start=working,
                                    span_id=solver))

    def _score(self, row: dict[str, Any]) -> dict[str, Any]:
        from inspect_ai.scorer import CORRECT, INCORRECT, Score

        answer = None if row.get("answer") is None else str(row["answer"])
        scores = {row["judge"]: Score(value=CORRECT if row.get("success") else INCORRECT, answer=answer,
                                      explanation=row.get("rationale"),
                                      metadata={"score": row.get("score"), "judge": row["judge"]})}
        if row.get("judge_used") and row["judge_used"] != row["judge"]:  # a key-free judge decided what was learnt
            scores[row["judge_used"]] = Score(value=CORRECT if row.get("accepted") else INCORRECT, answer=answer,
                                              metadata={"accepted": row.get("accepted")})
        return scores

    def sample(self, row: dict[str, Any]) -> Any:
        from inspect_ai.dataset import Sample
        from inspect_ai.event import SampleInitEvent, ScoreEvent
        from inspect_ai.log import EvalError, EvalSample
        from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput, ModelUsage

        from rlmlab.executors import TRAJECTORY_FILE, Trajectory
        from rlmlab.experiments._runs import row_trajectory_dir
        from rlmlab.lm import CALLS_FILE, read_calls

        where = row_trajectory_dir(self.run_dir, row)
        traj = Trajectory.read_jsonl(where / TRAJECTORY_FILE) if (where / TRAJECTORY_FILE).is_file() else None
        calls = read_calls(where / CALLS_FILE)
        query = traj.query if traj else row["task_id"]
        expected = row["expected"] if "expected" in row else self.expected.get(row["task_id"])
        target = _target(expected)
        started = traj.started if traj and traj.started else (where / CALLS_FILE).stat().st_mtime \
            if (where / CALLS_FILE).is_file() else self.run_dir.stat().st_mtime
        clock = _Clock(started)
        events: list[Any] = []
        init = self._span(events, "init", "init", None, clock)
        messages: list[Any] = [ChatMessageUser(content=query, source="input")]
        start, working, _ = clock.advance(0)
        events.append(SampleInitEvent(sample=Sample(input=query, target=target, id=_sample_id(row)),
                                      state={"messages": [m.model_dump(exclude_none=True) for m in messages]},
                                      timestamp=start, working_start=working, span_id=init))
        self._end(events, init, clock)
        solvers = self._span(events, "solvers", "solvers", None, clock)
        solver = self._span(events, f"{row.get('executor', 'rlm')}[{row['condition']}]", "solver", solvers, clock)
        for it in traj.iterations if traj else []:
            self._step(it, [c for c in calls if c.step == it.index], row.get("executor", "rlm"), events, messages,
                       clock, solver)
        for call in (c for c in calls if c.step is None):  # the extract fallback, a judge: after the steps
            events.append(self._model_event(call, clock, solver))
        answer = "" if row.get("answer") is None else str(row["answer"])
        model = calls[-1].model if calls else str(row.get("lm") or "")
        messages.append(ChatMessageAssistant(content=answer, source="generate", model=model))
        self._end(events, solver, clock)
        self._end(events, solvers, clock)
        scorers = self._span(events, "scorers", "scorers", None, clock)
        scores = self._score(row)
        for name, score in scores.items():
            span = self._span(events, name, "scorer", scorers, clock)
            start, working, _ = clock.advance(0)
            events.append(ScoreEvent(score=score, target=target, scorer=name, timestamp=start,
                                     working_start=working, span_id=span))
            self._end(events, span, clock)
        self._end(events, scorers, clock)
        usage: dict[str, Any] = {}
        for c in calls:
            usage[c.model] = usage.get(c.model, ModelUsage()) + ModelUsage(
                input_tokens=c.input_tokens, output_tokens=c.output_tokens,
                total_tokens=c.input_tokens + c.output_tokens)
        error = row.get("error") if row.get("error") and not row.get("success") else None
        total = (row.get("elapsed_ms") or 0) / 1000
        return EvalSample(
            id=_sample_id(row), epoch=row.get("rollout", 0) + 1, input=query, target=target, messages=messages,
            output=ModelOutput.from_content(model, answer), scores=scores,
            metadata={k: v for k, v in row.items() if k not in ("answer", "expected")}, events=events,
            model_usage=usage, started_at=_when(started).isoformat(), completed_at=_when(started + total).isoformat(),
            total_time=round(total, 3), working_time=round(total, 3), turn_count=len(traj.iterations) if traj else 0,
            error=EvalError(message=str(error), traceback=str(error), traceback_ansi=str(error)) if error else None)

    # -- the log ----------------------------------------------------------------------------------------------
    def results(self, samples: list[Any]) -> Any:
        """Per judge: accuracy (and its standard error) over the selected rollout of each task, as rlmlab's pass
        rate counts; with several conditions (or a test split) also one accuracy per condition."""
        from inspect_ai.log import EvalMetric, EvalResults, EvalScore

        best = [s for s, r in zip(samples, self.rows) if r.get("best", True)]
        out = []
        for name in dict.fromkeys(k for s in best for k in s.scores or {}):
            mine = [s for s in best if name in (s.scores or {})]
            values = [1.0 if s.scores[name].value == "C" else 0.0 for s in mine]
            mean = sum(values) / len(values)
            stderr = (sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values)) ** 0.5 \
                if len(values) > 1 else 0.0
            metrics = {"accuracy": EvalMetric(name="accuracy", value=mean), "stderr": EvalMetric(name="stderr",
                                                                                               value=stderr)}
            groups: dict[str, list[float]] = {}
            for s, v in zip(mine, values):
                group = s.metadata["condition"] + ("" if s.metadata.get("phase", "stream") == "stream"
                                                   else f" ({s.metadata['phase']})")
                groups.setdefault(group, []).append(v)
            if len(groups) > 1:
                metrics.update({f"accuracy/{g}": EvalMetric(name=g, group="accuracy by condition",
                                                            value=sum(v) / len(v)) for g, v in groups.items()})
            out.append(EvalScore(name=name, scorer=name, scored_samples=len(mine), unscored_samples=0,
                                 metrics=metrics, metadata={"over": "the selected rollout of each task"}))
        return EvalResults(total_samples=len(samples), completed_samples=sum(s.error is None for s in samples),
                           scores=out)

    def log(self) -> Any:
        from inspect_ai.log import (
            EvalConfig, EvalDataset, EvalLog, EvalPlan, EvalPlanStep, EvalRevision, EvalSpec, EvalStats,
        )
        from inspect_ai.model import ModelUsage

        from rlmlab.experiments._interrupt import read_interruption

        samples = [self.sample(r) for r in self.rows]
        exp = self.config.get("experiment") or {}
        params = self.config.get("params") or {}
        env = self.prov.get("environment") or {}
        # the model string its calls carry (rlmlab/local/<gguf>), the key of model_usage; rows hold the spec (local)
        model = str((self.prov.get("lm") or {}).get("model") or next((r["lm"] for r in self.rows if r.get("lm")),
                                                                    params.get("lm") or "unknown"))
        starts = sorted(s.started_at for s in samples) or [_when(self.run_dir.stat().st_mtime).isoformat()]
        ends = sorted(s.completed_at for s in samples) or starts
        usage: dict[str, Any] = {}
        for s in samples:
            for m, u in s.model_usage.items():
                usage[m] = usage.get(m, ModelUsage()) + u
        task_files = [f["path"] for f in self.prov.get("files", []) if f.get("role") == "tasks"]
        run_id = self.run_dir.name
        spec = EvalSpec(
            eval_id=run_id, run_id=run_id, created=starts[0], task=str(exp.get("id") or run_id), task_id=run_id,
            task_display_name=exp.get("title"), task_description=exp.get("description"), task_file=exp.get("path"),
            task_args=params, solver=",".join(sorted({str(r.get("executor", "rlm")) for r in self.rows})),
            dataset=EvalDataset(name=str(params.get("suite") or ""), location=",".join(task_files) or None,
                                samples=len({(r.get("phase", "stream"), r["task_id"]) for r in self.rows}),
                                sample_ids=list(dict.fromkeys(_sample_id(r) for r in self.rows)), shuffled=False),
            model=model, model_generate_config=self.generate_config,
            model_base_url=(self.prov.get("lm") or {}).get("api_base"),
            model_args={k: v for k, v in (self.prov.get("lm") or {}).items() if k in ("class", "engine", "cache")},
            config=EvalConfig(epochs=max((r.get("rollout", 0) + 1 for r in self.rows), default=1)),
            revision=EvalRevision(type="git", origin="", commit=env["git_commit"], dirty=env.get("git_dirty"))
            if env.get("git_commit") else None,
            packages={**{k: v for k, v in (env.get("libraries") or {}).items() if v},
                      "inspect_ai": self.ia.__version__},
            metadata={"rlmlab": {"run_dir": str(self.run_dir.resolve()), "provenance": self.prov,
                                 "summary": self.summary}})
        plan = EvalPlan(steps=[EvalPlanStep(solver=f"{c.get('executor', 'rlm')}[{c.get('name')}]", params=c)
                               for c in self.config.get("conditions") or []], config=self.generate_config)
        status = "cancelled" if read_interruption(self.run_dir) else "success" if self.summary else "started"
        return EvalLog(status=status, eval=spec, plan=plan, results=self.results(samples) if samples else None,
                       stats=EvalStats(started_at=starts[0], completed_at=ends[-1], model_usage=usage),
                       samples=samples)


def inspect_log(run_dir: str | Path) -> Any:
    """An experiment run directory as an ``inspect_ai.log.EvalLog`` (see the module docstring for the mapping).
    FileNotFoundError when ``run_dir`` has no results.jsonl; MissingExtraError without inspect_ai."""
    return _Builder(Path(run_dir)).log()


def listed_by_inspect_view(path: str | Path) -> bool:
    """Whether ``inspect view`` lists the log file: an .eval file under any name, a .json file only when its name
    starts with an ISO time as Inspect's own do (2026-11-25T02-21-45...), so that other JSON files are not read."""
    name = Path(path).name
    return name.endswith(".eval") or bool(re.match(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}", name))


def export_inspect(run_dir: str | Path, out: str | Path) -> Path:
    """Write ``run_dir`` as an Inspect AI log to ``out`` (``.eval``: zipped, what ``inspect view`` lists first;
    ``.json``: one JSON file), through ``inspect_ai.log.write_eval_log``. ConfigError for another suffix."""
    out = Path(out)
    if out.suffix not in INSPECT_FORMATS:
        raise ConfigError(f"{out}: expected a file name ending in .eval or .json (Inspect AI's two log formats)")
    log = inspect_log(run_dir)
    from inspect_ai.log import write_eval_log

    out.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(out))
    return out
