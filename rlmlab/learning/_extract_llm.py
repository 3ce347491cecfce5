"""The LLM extraction policy: a language model distils memory items with a versioned ReasoningBank-style
prompt (success, failure and contrastive variants); when its reply holds no valid item the heuristic
extractor's items are used instead, and the report says so."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rlmlab.errors import ConfigError
from rlmlab.memory import ItemValidationError
from rlmlab.learning._extract import (
    EXTRACT_LIMITS, EXTRACTORS, LARGE_RETURN_CHARS, MAX_EXTRACT_ITEMS, ExtractionReport, HeuristicExtractor, Rollout,
    best_rollout, check_max_items, clip_line, split_by_success, merged_tags,
)
from rlmlab.memory import MemoryItem
from rlmlab.memory import MemoryTask, Verdict

if TYPE_CHECKING:
    from rlmlab.executors import Trajectory

__all__ = ["LLMExtractor", "EXTRACT_PROMPTS", "render_trajectory", "parse_items"]

_FORMAT = """Each memory item has:
- "title": a short name of the strategy (at most 12 words),
- "description": one sentence saying when it applies,
- "content": 1 to 3 sentences: what to do (or avoid), citing the tool, argument or check involved.
Write items that transfer to other tasks of this kind: do not restate this query or its answer, and do not
write generic advice ("be careful", "double-check") that names no tool, argument or check.
Reply with only a JSON list of at most {max_items} objects with the keys "title", "description" and "content".
Reply [] if the trajectory holds nothing specific worth remembering."""

EXTRACT_PROMPTS: dict[str, dict[str, str]] = {
    "extract_v1": {
        "success": """You are distilling reusable strategies from an agent's successful attempt.
The agent works in a Python REPL with tools and answers with SUBMIT(answer=...).

Task ({domain}): {query}
Judge {judge} said: SUCCESS. {rationale}

Trajectory:
{trajectory}

Think about why this attempt succeeded: which tool calls, in which order, and which checks led to the answer.
Extract at most {max_items} strategies that would help on similar tasks.
""" + _FORMAT,
        "failure": """You are distilling guardrails from an agent's failed attempt.
The agent works in a Python REPL with tools and answers with SUBMIT(answer=...).

Task ({domain}): {query}
Judge {judge} said: FAILURE. {rationale}

Trajectory:
{trajectory}

Reflect on why this attempt failed: the error, the wasted step, the missing check or the wrong answer.
Extract at most {max_items} guardrails, each saying what went wrong and what to do instead.
""" + _FORMAT,
        "contrastive": """You are comparing several attempts by an agent at the same task.
The agent works in a Python REPL with tools and answers with SUBMIT(answer=...).

Task ({domain}): {query}

{rollouts}

Compare the successful attempts with the failed ones: what did the successes do that the failures did not,
and what did the failures do that the successes avoided? Extract at most {max_items} items.
""" + _FORMAT.replace('the keys "title", "description" and "content".',
                      'the keys "title", "description", "content" and "polarity" ("success" for a strategy the '
                      'successful attempts used, "failure" for a mistake of the failed attempts).'),
    },
}


def render_trajectory(traj: Trajectory, max_chars: int = 6000) -> str:
    """A bounded text view of a trajectory for a prompt: each step's code, output, tool errors and Turing
    violations (clipped); the middle is cut when the whole exceeds ``max_chars``."""
    lines = []
    for it in traj.iterations:
        lines.append(f"--- step {it.index}")
        lines.append("code:\n" + str(it.code)[:600])
        lines.append("output:\n" + str(it.output)[:400])
        for call in it.tool_calls or []:
            if call.get("error"):
                lines.append(f"tool error in {call.get('name')}: {clip_line(call['error'], 200)}")
        for rnd in it.turing or []:
            for v in rnd.get("violations") or []:
                lines.append(f"turing violation {v.get('hook')}: {clip_line(v.get('reason', ''), 200)}")
    lines.append(f"--- end: submitted={traj.submitted} answer={clip_line(traj.answer, 200)!r}"
                 + (f" error={clip_line(traj.error, 200)!r}" if traj.error else ""))
    text = "\n".join(lines)
    if len(text) > max_chars:
        half = max_chars // 2
        text = text[:half] + f"\n[... {len(text) - 2 * half} characters cut ...]\n" + text[-half:]
    return text


def parse_items(reply: str) -> tuple[list[Any] | None, str]:
    """The first JSON array in an LM reply (``` fences stripped), or None and why not.

    A lone JSON object is taken as a one-item array.
    """
    text = re.sub(r"(?m)^\s*```[\w-]*\s*$", "", reply or "")
    decoder = json.JSONDecoder()
    obj_found: Any = None
    for m in re.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text, m.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, list):
            return value, "ok"
        if isinstance(value, dict) and obj_found is None:
            obj_found = value
    if obj_found is not None:
        return [obj_found], "a single JSON object, taken as a one-item list"
    return None, "no JSON array in the reply"


class LLMExtractor:
    """Extraction by a language model (``lm(prompt) -> [text]``) with a versioned prompt from ``EXTRACT_PROMPTS``.

    Items the model gets wrong (not an object, missing or over-long fields, an invalid polarity) are dropped
    and listed in the report; if none is valid the heuristic extractor's items are used (``fallback``). An
    explicit empty list ``[]`` is the model saying there is nothing worth keeping: no items, no fallback.
    """

    name = "llm"

    def __init__(self, lm: Callable[[str], Any] | str, prompt_version: str = "extract_v1",
                 max_items: int = MAX_EXTRACT_ITEMS, large_return_chars: int = LARGE_RETURN_CHARS,
                 max_trajectory_chars: int = 6000):
        if prompt_version not in EXTRACT_PROMPTS:
            raise ConfigError(f"extractor prompt_version: unknown {prompt_version!r}; "
                              f"known: {', '.join(sorted(EXTRACT_PROMPTS))}")
        if isinstance(lm, str):
            from rlmlab.lm import make_lm

            lm = make_lm(lm)
        if not callable(lm):
            raise ConfigError(f"extractor lm: {lm!r} is not callable; pass an LM from rlmlab.lm.make_lm")
        self.lm, self.prompt_version = lm, prompt_version
        self.max_items = check_max_items(max_items)
        self.max_trajectory_chars = max_trajectory_chars
        self.fallback = HeuristicExtractor(max_items=max_items, large_return_chars=large_return_chars)

    def extract(self, task: MemoryTask, trajectory: Trajectory, verdict: Verdict) -> list[MemoryItem]:
        return self.extract_with_report(task, trajectory, verdict).items

    def extract_with_report(self, task: MemoryTask, trajectory: Trajectory, verdict: Verdict) -> ExtractionReport:
        if not trajectory.iterations:
            return ExtractionReport([], self.name, prompt_version=self.prompt_version,
                                    notes=["empty trajectory: no items, LM not called"])
        kind = "success" if verdict.success else "failure"
        prompt = EXTRACT_PROMPTS[self.prompt_version][kind].format(
            domain=task.domain or "general", query=task.query, judge=verdict.judge, rationale=verdict.rationale,
            trajectory=render_trajectory(trajectory, self.max_trajectory_chars), max_items=self.max_items)
        return self._run(prompt, task, {"success": (trajectory, verdict)} if verdict.success
                         else {"failure": (trajectory, verdict)}, kind,
                         lambda: self.fallback.extract_with_report(task, trajectory, verdict))

    def contrastive(self, task: MemoryTask, rollouts: list[Rollout]) -> list[MemoryItem]:
        return self.contrastive_with_report(task, rollouts).items

    def contrastive_with_report(self, task: MemoryTask, rollouts: list[Rollout]) -> ExtractionReport:
        wins, losses = split_by_success(rollouts)
        if not wins or not losses:
            if not rollouts:
                return ExtractionReport([], self.name, prompt_version=self.prompt_version, notes=["no rollouts"])
            report = self.extract_with_report(task, *best_rollout(rollouts))
            report.notes.insert(0, "one-sided rollouts: extracted from the best one")
            return report
        per = max(1500, self.max_trajectory_chars // len(rollouts))
        blocks = [f"=== Attempt {i} ({'SUCCESS' if v.success else 'FAILURE'}, score {v.score:.2f}): "
                  f"{clip_line(v.rationale, 200)}\n{render_trajectory(t, per)}"
                  for i, (t, v) in enumerate(wins + losses, 1)]
        prompt = EXTRACT_PROMPTS[self.prompt_version]["contrastive"].format(
            domain=task.domain or "general", query=task.query, rollouts="\n\n".join(blocks),
            max_items=self.max_items)
        return self._run(prompt, task, {"success": wins[0], "failure": losses[0]}, None,
                         lambda: self.fallback.contrastive_with_report(task, rollouts))

    def _run(self, prompt: str, task: MemoryTask, sources: dict[str, Rollout], polarity: str | None,
             fallback: Callable[[], ExtractionReport]) -> ExtractionReport:
        """Call the LM, parse and validate; ``polarity`` None means each object names its own (contrastive)."""
        report = ExtractionReport([], self.name, prompt_version=self.prompt_version)
        try:
            reply = _reply_text(self.lm(prompt))
        except Exception as exc:  # any LM failure: the heuristic still gives the loop something to learn
            report.notes.append(f"LM call failed ({type(exc).__name__}: {clip_line(exc, 200)})")
            reply = None
        raw = None
        if reply is not None:
            raw, why = parse_items(reply)
            if why != "ok":
                report.notes.append(why)
        if raw is not None and not raw:
            report.notes.append("the model returned an empty list: nothing to keep")
            return report
        for index, obj in enumerate(raw or []):
            try:
                item = self._item(obj, task, sources, polarity)
            except ItemValidationError as exc:
                report.dropped.append({"index": index, "reason": str(exc)})
                continue
            if any(item.id == other.id for other in report.items):
                report.dropped.append({"index": index, "reason": "repeats an earlier item"})
            elif len(report.items) >= self.max_items:
                report.dropped.append({"index": index, "reason": f"over max_items={self.max_items}"})
            else:
                report.items.append(item)
        if not report.items:
            backup = fallback()
            report.items, report.fallback = backup.items, True
            report.notes.append(f"no valid item in the reply: used the heuristic ({len(backup.items)} item(s))")
            report.notes.extend(backup.notes)
        return report

    def _item(self, obj: Any, task: MemoryTask, sources: dict[str, Rollout], polarity: str | None) -> MemoryItem:
        if not isinstance(obj, dict):
            raise ItemValidationError("item", f"expected a JSON object, got {type(obj).__name__}")
        for key, limit in EXTRACT_LIMITS.items():
            value = obj.get(key)
            if not isinstance(value, str) or not value.strip():
                raise ItemValidationError(key, "missing or not a non-empty string")
            if len(value.strip()) > limit:
                raise ItemValidationError(key, f"{len(value.strip())} characters, over the extraction limit of {limit}")
        pol = polarity or obj.get("polarity")
        if pol not in sources:
            raise ItemValidationError("polarity", f"{pol!r} is not allowed; use 'success' or 'failure'")
        traj, verdict = sources[pol]
        tags = merged_tags([task.domain, verdict.judge, "llm"], ["contrastive"] if polarity is None else [])
        return MemoryItem(title=obj["title"], description=obj["description"], content=obj["content"],
                          polarity=pol, layer="L2", source="extract", domain=task.domain, run_id=traj.run_id,
                          trajectory_id=traj.run_id, tags=tags)


def _reply_text(reply: Any) -> str:
    """The text of an LM reply: a DSPy LM returns a list of strings (or of dicts with "text")."""
    if isinstance(reply, list):
        reply = reply[0] if reply else ""
    if isinstance(reply, dict):
        reply = reply.get("text", "")
    return str(reply)


@EXTRACTORS.register("llm")
def _llm(lm: Any, prompt_version: str = "extract_v1", max_items: int = MAX_EXTRACT_ITEMS,
         large_return_chars: int = LARGE_RETURN_CHARS, max_trajectory_chars: int = 6000) -> LLMExtractor:
    """ReasoningBank-style LM extraction with versioned prompts; falls back to the heuristic."""
    return LLMExtractor(lm, prompt_version=prompt_version, max_items=max_items,
                        large_return_chars=large_return_chars, max_trajectory_chars=max_trajectory_chars)

