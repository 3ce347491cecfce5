"""The ``llm`` judge: an LM grades a trajectory with a versioned rubric from :data:`RUBRICS` (for tasks no
deterministic check can decide), and the parser of its VERDICT / CONFIDENCE / RATIONALE reply."""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from rlmlab.errors import ConfigError
from rlmlab.learning._judge import JUDGES, clip_quote, no_answer_reason
from rlmlab.memory import MemoryTask, Verdict

if TYPE_CHECKING:
    from rlmlab.executors import Trajectory

__all__ = ["LLMJudge", "RUBRICS", "DEFAULT_RUBRIC", "parse_llm_verdict", "trajectory_digest"]


# -- llm --------------------------------------------------------------------------------------------------

# Versioned rubrics. NEVER edit a shipped version: verdicts in old logs name it and must stay comparable.
# To change the wording, add "judge_v2" (and make it the default if it should be).
RUBRICS: dict[str, str] = {
    "judge_v1": (
        "You are grading one attempt of an AI agent at a task. Decide whether the agent's final answer "
        "correctly and completely answers the task.\n"
        "- If an expected answer is given, the agent's answer must agree with it in substance; wording, "
        "formatting and extra explanation do not matter.\n"
        "- If no expected answer is given, judge from the task alone: the answer must be specific, relevant and "
        "plausible; a refusal, a guess without support, or an answer to a different question is a failure.\n"
        "- An error or a run that stopped without submitting is a failure unless the answer is still correct.\n"
        "- Do not reward effort or length; judge only the final answer.\n"
        "Reply with exactly these three lines:\n"
        "VERDICT: success or failure\n"
        "CONFIDENCE: a number from 0 to 1 (how sure you are of the verdict)\n"
        "RATIONALE: one or two short sentences saying why"
    ),
}
DEFAULT_RUBRIC = "judge_v1"
_DIGEST_CHARS = 2000
_FIELD_CHARS = 2000  # task query, expected answer and agent answer, each

_VERDICT = re.compile(r"\bverdict\b[\s*_]*[:=\-]\s*[*_\"'`]*\s*"
                      r"(success(?:ful)?|succeeded|failure|failed|fail|pass(?:ed)?|correct|incorrect)\b"
                      r"(?!\s*(?:[|/]|or\b))", re.I)  # not the echoed format line "success|failure"
_CONFIDENCE = re.compile(r"\bconfidence\b[\s*_]*[:=\-]\s*[*_]*\s*(\d+(?:\.\d+)?|\.\d+)\s*(%?)", re.I)
_RATIONALE = re.compile(r"\brationale\b[\s*_]*[:=\-]\s*[*_]*\s*(.+)", re.I)
_REASON = re.compile(r"\breason(?:ing)?\b[\s*_]*[:=\-]\s*[*_]*\s*(.+)", re.I)  # when there is no RATIONALE
_GOOD = {"success", "successful", "succeeded", "pass", "passed", "correct"}


def parse_llm_verdict(reply: str) -> tuple[bool, float, str] | None:
    """(success, confidence, rationale) from a judge's reply, or None when it has no VERDICT line.

    Case-insensitive, tolerant of markdown and prose around the lines; the last VERDICT wins (a model that
    echoes the format first and answers after). A missing CONFIDENCE reads as 0.5; "85%" as 0.85.
    """
    verdicts = _VERDICT.findall(reply)
    if not verdicts:
        return None
    success = verdicts[-1].lower() in _GOOD
    confidence = 0.5
    found = _CONFIDENCE.findall(reply)
    if found:
        value, pct = found[-1]
        number = float(value)
        confidence = min(1.0, max(0.0, number / 100 if pct or number > 1 else number))
    rationale = _RATIONALE.findall(reply) or _REASON.findall(reply)
    text = clip_quote(rationale[-1].strip(" *_"), 300) if rationale else "The judge gave no rationale."
    return success, confidence, text


def trajectory_digest(trajectory: "Trajectory", limit: int = _DIGEST_CHARS) -> str:
    """A short account of a run for the judge: iterations, tools called (in order, counted), submit, error."""
    tools: Counter = Counter()
    for it in trajectory.iterations:
        tools.update(str(call.get("name", "?")) for call in it.tool_calls or [])
    used = ", ".join(f"{name} x{n}" if n > 1 else name for name, n in tools.items()) or "none"
    lines = [f"iterations: {len(trajectory.iterations)}", f"tools called: {used}",
             f"submitted: {'yes' if trajectory.submitted else 'no'}"]
    if trajectory.error:
        lines.append(f"error: {clip_quote(trajectory.error, 300)}")
    text = "\n".join(lines)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _block(text: Any) -> str:
    text = str(text)
    if len(text) <= _FIELD_CHARS:
        return text
    return text[:_FIELD_CHARS] + f"\n… [clipped: {len(text) - _FIELD_CHARS:,} more characters]"


class LLMJudge:
    """An LM grades the answer with the rubric ``RUBRICS[rubric]``; unparseable replies are failures (confidence 0).

    score = confidence for a success and 1 - confidence for a failure (an estimate of P(success)). An LM that
    raises is not caught: as elsewhere in rlmlab, only ToolError lets a loop go on.
    """

    name = "llm"

    def __init__(self, lm: Any, rubric: str = DEFAULT_RUBRIC):
        if rubric not in RUBRICS:
            raise ConfigError(f"judge llm: unknown rubric {rubric!r}; known: {', '.join(sorted(RUBRICS))}")
        if lm is None:
            raise ConfigError("judge llm: needs an lm (e.g. make_lm('scripted', script=[...]))")
        self.lm, self.rubric = lm, rubric

    def __repr__(self) -> str:
        return f"LLMJudge(rubric={self.rubric!r})"

    def prompt(self, task: MemoryTask, trajectory: "Trajectory") -> str:
        expected = "(none given)" if task.expected is None else _block(task.expected)
        return (f"{RUBRICS[self.rubric]}\n\n"
                f"## Task\n{_block(task.query)}\n\n"
                f"## Expected answer\n{expected}\n\n"
                f"## Agent's answer\n{_block(trajectory.answer)}\n\n"
                f"## Run digest\n{trajectory_digest(trajectory)}\n")

    def _verdict(self, success: bool, confidence: float, rationale: str) -> Verdict:
        score = confidence if success else 1.0 - confidence
        return Verdict(success=success, score=round(score, 4), rationale=rationale, judge=self.name,
                       rubric=self.rubric, confidence=round(confidence, 4))

    def judge(self, task: MemoryTask, trajectory: "Trajectory") -> Verdict:
        why = no_answer_reason(trajectory, errors_fail=False)  # an error is shown to the LM; a missing answer is not judged
        if why:
            return Verdict(False, 0.0, why, self.name, self.rubric, 1.0)
        from rlmlab.lm import call_role

        with call_role("judge"):
            replies = self.lm(self.prompt(task, trajectory))
        reply = str(replies[0]) if replies else ""
        parsed = parse_llm_verdict(reply)
        if parsed is None:
            return Verdict(False, 0.0, f"The judge's reply was unparseable: {reply[:200]!r}.", self.name,
                           self.rubric, 0.0)
        return self._verdict(*parsed)



@JUDGES.register("llm")
def _llm(lm: Any = None, rubric: str = DEFAULT_RUBRIC) -> LLMJudge:
    """An LM grades the answer with a versioned rubric (RUBRICS)."""
    return LLMJudge(lm, rubric)
