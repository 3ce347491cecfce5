"""The teacher-learner loop for one item and the three arms of a run (traces.json: :mod:`._traces`).

One turn is :func:`judge_turn` (the teacher's verdict and the STOP decision) then :func:`apply_turn` (recorded in
the trace and the exchange); ``run_item`` repeats it until a STOP rule fires, and the Jupyter stepper calls it
one turn at a time, so both take exactly the same steps.

Arms: ``single`` (one answer), ``try_again`` (the generic ``try_again_concise`` reprompt every time) and ``rts``
(bias-aware: teacher, RTS policy, STOP rules). Mode ``reference``: the teacher knows the reference, as in seed
002, so it never reprompts a right answer. Mode ``reference_free``: the teacher decides from bias cues and
confidence only, which is the honest setting; reports show both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rlmlab.teach._data import Item, answers_match
from rlmlab.teach._learner import Exchange, LearnerAnswer
from rlmlab.teach._policy import Template, load_templates, select_template
from rlmlab.teach._stop import ExpectedGain, StopRules
from rlmlab.teach._teacher import BiasResult, bucket, combine_confidence, detect_bias
from rlmlab.teach._traces import ItemTrace, TurnRecord
from rlmlab.records import Record

__all__ = ["ArmSummary", "JudgedTurn", "judge_turn", "apply_turn", "check_arm_mode", "run_item", "run_arm", "ARMS",
           "TEACHER_MODES"]

ARMS = ("single", "try_again", "rts")
TEACHER_MODES = ("reference", "reference_free")

def check_arm_mode(arm: str, mode: str) -> None:
    """Raise ValueError unless ``arm`` is one of :data:`ARMS` and ``mode`` one of :data:`TEACHER_MODES`."""
    if arm not in ARMS or mode not in TEACHER_MODES:
        raise ValueError(f"arm {arm!r} / mode {mode!r}; arms: {ARMS}, modes: {TEACHER_MODES}")


@dataclass(frozen=True)
class JudgedTurn:
    """The teacher's verdict on one learner answer and what the loop does next (see :func:`judge_turn`).

    ``template`` is the reprompt the arm chose (None: none); it is sent only if ``stop`` is None, so ``sent`` is
    what the trace records. ``score`` is what the STOP rules compare across an item's turns: the accuracy (0.0 or
    1.0) in reference mode, ``combined`` in reference-free mode. ``rule`` names the RTS rule that chose the
    template ("" for the other arms).
    """

    correct: bool
    judged: BiasResult  # detect_bias's verdict: bias, teacher_conf, cue
    combined: float  # mean of self, teacher (and vote share) confidence, in [0, 1]
    level: str  # bucket(combined): low, mid or high
    score: float
    template: str | None
    rule: str
    stop: str | None  # the STOP reason, None to reprompt with ``template``

    @property
    def sent(self) -> str | None:
        """The reprompt sent after this answer: ``template``, or None when the item stops here."""
        return None if self.stop else self.template


def judge_turn(item: Item, ex: Exchange, reply: LearnerAnswer, *, arm: str = "rts", mode: str = "reference",
               rules: StopRules = StopRules(), gains: ExpectedGain | None = None,
               scores: Sequence[float] = ()) -> JudgedTurn:
    """Judge the learner's ``reply`` to ``ex``: rightness, bias, confidence, the arm's reprompt and the STOP rule.

    ``ex`` is the exchange before this answer and ``scores`` the earlier answers' scores; neither is changed
    (:func:`apply_turn` records the turn). ``gains`` None means no history (every expected gain 0). Raises
    ValueError for an unknown arm or mode.
    """
    check_arm_mode(arm, mode)
    correct = answers_match(reply.answer, item.reference)
    # keeping an answer the teacher just asked it to keep (calming_focus_v1) is not sticking to a first guess
    kept_on_request = bool(ex.reprompts) and ex.reprompts[-1][0] == "calming_focus_v1"
    judged = detect_bias(item.question, reply.answer, item.reference if mode == "reference" else None,
                         previous_answers=() if kept_on_request else ex.answers)
    combined = combine_confidence(reply.self_conf, judged.teacher_conf, reply.vote_share)
    level = bucket(combined)
    score = float(correct) if mode == "reference" else combined
    if arm == "single":
        return JudgedTurn(correct, judged, combined, level, score, None, "", "single_pass")
    rule = ""
    if arm == "try_again":
        template = None if (mode == "reference" and correct) else "try_again_concise"
    else:
        decision = select_template(judged.bias, level, reference_free=(mode == "reference_free"))
        template, rule = (decision.template if decision.reprompt else None), decision.rule
    gain = gains.gain(judged.bias, level, template) if gains is not None and arm == "rts" else 0.0
    matched = correct if mode == "reference" else None
    stop = ("match" if rules.stop_on_match and matched else
            "no_reprompt" if template is None else
            rules.reason_to_stop(turns=len(ex.answers) + 1, matched=matched, scores=[*scores, score],
                                 expected_gain=gain))
    if arm == "try_again" and stop == "two_non_improvements":
        stop = None  # the generic baseline retries until max_turns
    return JudgedTurn(correct, judged, combined, level, score, template, rule, stop)


def apply_turn(turn: JudgedTurn, reply: LearnerAnswer, *, trace: ItemTrace, ex: Exchange, scores: list[float],
               templates: dict[str, Template]) -> TurnRecord:
    """Record a judged turn: its ``TurnRecord`` and tokens in ``trace``, the answer in ``ex``, its score in
    ``scores``; then either the stop reason and final accuracy in ``trace``, or the reprompt (id and text) in
    ``ex`` for the learner's next answer. Raises KeyError if the reprompt is not in ``templates``.
    """
    trace.tokens += reply.input_tokens + reply.output_tokens
    trace.corrections += reply.corrections
    ex.answers.append(reply.answer)
    scores.append(turn.score)
    record = TurnRecord(reply.answer, round(reply.self_conf, 4), turn.judged.bias, turn.judged.teacher_conf,
                        turn.sent, int(turn.correct))
    trace.turns.append(record)
    if turn.stop:
        trace.stop_reason, trace.final_accuracy = turn.stop, record.accuracy
    else:
        ex.reprompts.append((turn.template, templates[turn.template].text))
    return record


def run_item(item: Item, learner: Any, *, arm: str = "rts", mode: str = "reference",
             rules: StopRules = StopRules(), templates: dict | None = None,
             gains: ExpectedGain | None = None) -> ItemTrace:
    """Answer one item under one arm and mode; the learner sees each chosen template's text as the reprompt."""
    check_arm_mode(arm, mode)
    templates = templates if templates is not None else load_templates()
    ex = Exchange(item.question, item.qid)
    trace = ItemTrace(item.qid, item.question, item.reference)
    scores: list[float] = []
    while not trace.stop_reason:
        reply = learner.answer(ex)
        turn = judge_turn(item, ex, reply, arm=arm, mode=mode, rules=rules, gains=gains, scores=scores)
        apply_turn(turn, reply, trace=trace, ex=ex, scores=scores, templates=templates)
    return trace


@dataclass
class ArmSummary(Record):
    arm: str
    mode: str
    items: int
    accuracy: float
    right_to_wrong: int  # first answer right, final wrong
    wrong_to_right: int
    avg_turns: float
    tokens: int
    corrections: int = 0  # Turing Protocol corrections


def run_arm(items: Sequence[Item], learner: Any, *, arm: str, mode: str,
            rules: StopRules = StopRules(), gains: ExpectedGain | None = None, templates: dict | None = None,
            progress: Callable[[ItemTrace], None] | None = None) -> tuple[list[ItemTrace], ArmSummary]:
    """Run one arm over ``items`` with one learner (anything with ``answer(Exchange) -> LearnerAnswer``);
    ``progress`` is called with each item's trace as it finishes."""
    templates = templates if templates is not None else load_templates()
    traces = []
    for item in items:
        traces.append(run_item(item, learner, arm=arm, mode=mode, rules=rules, templates=templates, gains=gains))
        if progress:
            progress(traces[-1])
    n = max(1, len(traces))
    summary = ArmSummary(
        arm, mode, len(traces), sum(t.final_accuracy for t in traces) / n,
        sum(t.turns[0].accuracy == 1 and t.final_accuracy == 0 for t in traces),
        sum(t.turns[0].accuracy == 0 and t.final_accuracy == 1 for t in traces),
        sum(len(t.turns) for t in traces) / n, sum(t.tokens for t in traces), sum(t.corrections for t in traces))
    return traces, summary
