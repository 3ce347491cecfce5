"""TeacherStepper: step through teacher-learner turns, and run the next turn live on the configured learner.

The teach loop (:func:`rlmlab.teach.run_item`) answers an item to the end in one call; :class:`LiveTeachLoop`
takes the same steps one learner answer at a time by calling the loop's own turn functions
(:func:`rlmlab.teach.judge_turn`, :func:`rlmlab.teach.apply_turn`), and only keeps the state between turns (a
test checks that its traces equal ``run_arm``'s).

Finished turns come from ``run_arm``/``run_teach`` (``ItemTrace`` lists), from a ``traces.json`` written by
``rlmlab teach run`` (read with :func:`rlmlab.teach.read_traces`), or from bare ``TurnRecord`` lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import ipywidgets as W

from rlmlab.errors import ConfigError
from rlmlab.jupyter._widget import RLMLabWidget, esc
from rlmlab.teach import (
    Exchange, ExpectedGain, Item, ItemTrace, RunConfig, StopRules, Template, TurnRecord, apply_turn, bucket,
    check_arm_mode, combine_confidence, judge_turn, load_dataset, load_stop_rules, load_templates, make_learner,
    read_traces,
)

__all__ = ["StepTurn", "LiveTeachLoop", "TurnSource", "TeacherStepper", "step_turns"]


# -- one turn as the stepper shows it ----------------------------------------------------------------------

@dataclass(frozen=True)
class StepTurn:
    """One learner answer with what the teacher made of it.

    ``template`` is the reprompt sent *after* this answer (None when the item stopped here), ``replied_to`` the
    one this answer replied to (None on an item's first turn). ``combined`` is the mean of the confidences; for
    turns loaded from records it is recomputed from ``self_conf`` and ``teacher_conf`` only, because traces do not
    keep a voting learner's vote share (``exact_combined`` says which). ``cue``, ``rule`` and ``stop_reason`` are
    empty when the source did not keep them (traces.json keeps none of them).
    """

    qid: str | None
    question: str | None
    reference: str | None
    turn: int  # 1-based, within the item
    answer: str
    self_conf: float
    teacher_bias: str
    teacher_conf: float
    combined: float
    bucket: str
    template: str | None
    template_text: str | None
    accuracy: int  # 1 right, 0 wrong
    replied_to: str | None = None
    cue: str = ""
    rule: str = ""
    stop_reason: str = ""
    exact_combined: bool = False
    live: bool = False  # produced by the stepper's run button, not loaded


def _turns_of_trace(trace: ItemTrace, templates: dict[str, Template]) -> list[StepTurn]:
    out, before = [], None
    for n, rec in enumerate(trace.turns, 1):
        out.append(_from_record(rec, templates, n, before, qid=trace.qid, question=trace.question,
                                reference=trace.reference,
                                stop_reason=trace.stop_reason if n == len(trace.turns) else ""))
        before = rec.template
    return out


def _from_record(rec: TurnRecord, templates: dict[str, Template], turn: int, replied_to: str | None,
                 **item: Any) -> StepTurn:
    combined = combine_confidence(rec.self_conf, rec.teacher_conf)
    found = templates.get(rec.template) if rec.template else None
    return StepTurn(item.get("qid"), item.get("question"), item.get("reference"), turn, rec.answer, rec.self_conf,
                    rec.teacher_bias, rec.teacher_conf, round(combined, 4), bucket(combined), rec.template,
                    found.text if found else None, int(rec.accuracy), replied_to,
                    stop_reason=item.get("stop_reason", ""))


def _default_templates() -> dict[str, Template]:
    # a checkout without data/rts_templates.json (or a broken one) still steps, without the template texts
    try:
        return load_templates()
    except ConfigError:
        return {}


def step_turns(source: str | Path | Iterable[Any] | None, templates: dict[str, Template] | None = None
               ) -> list[StepTurn]:
    """Flat turn list from a traces.json path, ``ItemTrace``s, ``TurnRecord``s or ``StepTurn``s (mixed is fine).

    Bare ``TurnRecord``s have no item: they are numbered 1, 2, ... as one item. Raises RLMLabError for a bad
    traces.json and TypeError for anything else.
    """
    if source is None:
        return []
    if isinstance(source, (str, Path)):
        source = read_traces(source)
    templates = templates if templates is not None else _default_templates()
    out: list[StepTurn] = []
    bare_before: str | None = None
    bare_turn = 0
    for entry in source:
        if isinstance(entry, StepTurn):
            out.append(entry)
        elif isinstance(entry, ItemTrace):
            out.extend(_turns_of_trace(entry, templates))
        elif isinstance(entry, TurnRecord):
            bare_turn += 1
            out.append(_from_record(entry, templates, bare_turn, bare_before))
            bare_before = entry.template
        else:
            raise TypeError(f"turns: expected ItemTrace, TurnRecord or StepTurn entries (or a traces.json path), "
                            f"got {type(entry).__name__}")
    return out


# -- the teach loop, one turn per call ---------------------------------------------------------------------

class TurnSource(Protocol):
    """What the stepper needs from a live loop: ``step()`` runs one learner turn; ``why_done`` is "" until done."""

    def step(self) -> StepTurn: ...

    @property
    def why_done(self) -> str: ...


class LiveTeachLoop:
    """``run_item`` over ``items``, one learner answer per :meth:`step`; an item's STOP moves on to the next item.

    ``learner`` is anything with ``answer(Exchange) -> LearnerAnswer`` (DemoLearner, LMLearner, VotingLearner).
    ``traces`` holds an ``ItemTrace`` per item started, the current one growing, as ``run_arm`` would return them.
    """

    def __init__(self, items: Sequence[Item], learner: Any, *, arm: str = "rts", mode: str = "reference",
                 rules: StopRules = StopRules(), templates: dict[str, Template] | None = None,
                 gains: ExpectedGain | None = None):
        check_arm_mode(arm, mode)
        self.items, self.learner, self.arm, self.mode, self.rules = list(items), learner, arm, mode, rules
        self.templates = templates if templates is not None else load_templates()
        self.gains = gains or ExpectedGain()
        self.traces: list[ItemTrace] = []
        self._next_item = 0
        self._exchange: Exchange | None = None  # the item in progress; None between items
        self._scores: list[float] = []

    @classmethod
    def from_config(cls, config: RunConfig, *, arm: str = "rts", mode: str | None = None, lm: Any = None,
                    turing: Any = None, skip: int = 0) -> "LiveTeachLoop":
        """The loop ``run_teach`` would run for one arm and mode (default: the config's first mode); ``skip``
        leaves out the dataset's first items (those a finished run already answered)."""
        if skip < 0:
            raise ValueError(f"skip: {skip} is not allowed; use an integer >= 0")
        config = config.with_paths_resolved()
        items = load_dataset(config.dataset, limit=config.limit)[skip:]
        return cls(items, make_learner(config, items, lm=lm, turing=turing), arm=arm, mode=mode or config.modes[0],
                   rules=load_stop_rules(config.stop_rules, max_turns=config.max_turns),
                   gains=ExpectedGain.from_traces(config.history))

    @classmethod
    def continuing(cls, config: RunConfig, *, arm: str = "rts", mode: str | None = None, lm: Any = None,
                   turing: Any = None) -> "LiveTeachLoop":
        """The loop that goes on where ``run_teach(config)`` stopped: every dataset item after the config's first
        ``limit``, to the end of the dataset (no items when the run had no limit), so "run next turn" runs until
        the dataset is used up."""
        answered = config.limit if config.limit is not None else len(
            load_dataset(config.with_paths_resolved().dataset))
        return cls.from_config(replace(config, limit=None), arm=arm, mode=mode, lm=lm, turing=turing, skip=answered)

    @property
    def why_done(self) -> str:
        """Why no further turn can run ("" while one can)."""
        if self._next_item < len(self.items):
            return ""
        if not self.items:
            return "the loop has no items"
        last = self.traces[-1]
        return f"all {len(self.items)} item(s) answered; {last.qid} stopped: {last.stop_reason}"

    def step(self) -> StepTurn:
        """Ask the learner once and judge the answer exactly as ``run_item`` does; raises RuntimeError when done.

        A learner error propagates and leaves the loop as it was, so the same turn can be tried again.
        """
        if self.why_done:
            raise RuntimeError(self.why_done)
        item = self.items[self._next_item]
        ex = self._exchange if self._exchange is not None else Exchange(item.question, item.qid)
        reply = self.learner.answer(ex)
        if self._exchange is None:
            self._exchange, self._scores = ex, []
            self.traces.append(ItemTrace(item.qid, item.question, item.reference))
        replied_to = ex.reprompts[-1][0] if ex.reprompts else None
        turn = judge_turn(item, ex, reply, arm=self.arm, mode=self.mode, rules=self.rules, gains=self.gains,
                          scores=self._scores)
        rec = apply_turn(turn, reply, trace=self.traces[-1], ex=ex, scores=self._scores, templates=self.templates)
        if turn.stop:
            self._exchange = None
            self._next_item += 1
        return StepTurn(item.qid, item.question, item.reference, len(ex.answers), rec.answer, rec.self_conf,
                        rec.teacher_bias, rec.teacher_conf, round(turn.combined, 4), turn.level, rec.template,
                        self.templates[rec.template].text if rec.template else None, rec.accuracy, replied_to,
                        turn.judged.cue, turn.rule, turn.stop or "", exact_combined=True, live=True)


# -- the widget --------------------------------------------------------------------------------------------

_RIGHT, _WRONG = "#1a7f37", "#b42318"


def _pct(x: float) -> str:
    return f"{x:.0%}"


def _short(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


class TeacherStepper(RLMLabWidget):
    """Teacher-learner turns one at a time: prev/next through them, and "run next turn" on a live loop.

    ``turns``: finished turns (see :func:`step_turns` for the accepted forms). ``loop``: a :class:`LiveTeachLoop`
    (or anything with ``step()`` and ``why_done``); each run appends its turn after the loaded ones and moves to it.
    ``index`` is the 0-based position of the current turn, None while there are none.
    """

    css_name = "rlmlab-stepper"

    def __init__(self, turns: str | Path | Iterable[Any] | None = None, loop: TurnSource | None = None, *,
                 templates: dict[str, Template] | None = None, title: str = "teacher-learner turns"):
        super().__init__()
        self.loop, self.title = loop, title
        self._turns = step_turns(turns, templates)
        self._index: int | None = 0 if self._turns else None
        self.last_error = ""  # the last run button failure, shown until the next run
        self.prev_button = W.Button(description="◀ prev", tooltip="previous turn", layout=W.Layout(width="auto"))
        self.next_button = W.Button(description="next ▶", tooltip="next turn", layout=W.Layout(width="auto"))
        self.run_button = W.Button(description="run next turn", button_style="primary",
                                   layout=W.Layout(width="auto", margin="0 0 0 16px"),
                                   tooltip="ask the learner for the loop's next turn")
        self.prev_button.add_class("rlmlab-prev")
        self.next_button.add_class("rlmlab-next")
        self.run_button.add_class("rlmlab-run-turn")
        self.turn_index = W.HTML(layout=W.Layout(margin="0 8px"))
        self.turn_index.add_class("rlmlab-turn-index")
        self.status = W.HTML()
        self.detail = W.HTML()
        self.prev_button.on_click(lambda _: self.prev())
        self.next_button.on_click(lambda _: self.next())
        self.run_button.on_click(self._on_run)
        nav = W.HBox([self.prev_button, self.turn_index, self.next_button, self.run_button],
                     layout=W.Layout(align_items="center"))
        self.view.children = [W.HTML(f"<b>{esc(title)}</b>"), nav, self.status, self.detail]
        self.refresh()

    # -- state --------------------------------------------------------------------------------------------

    @property
    def turns(self) -> tuple[StepTurn, ...]:
        return tuple(self._turns)

    @property
    def index(self) -> int | None:
        return self._index

    @property
    def current(self) -> StepTurn | None:
        return None if self._index is None else self._turns[self._index]

    @property
    def why_run_disabled(self) -> str:
        """Why "run next turn" cannot run ("" when it can)."""
        if self.loop is None:
            return "no live loop: pass loop=LiveTeachLoop(...) to run turns"
        return self.loop.why_done

    def running_accuracy(self, upto: int | None = None) -> float | None:
        """Right answers over turns 0..``upto`` (default: the current turn), in [0, 1]; None with no turns."""
        upto = self._index if upto is None else upto
        if upto is None:
            return None
        shown = self._turns[: upto + 1]
        return sum(t.accuracy for t in shown) / len(shown)

    def items_right(self, upto: int | None = None) -> tuple[int, int]:
        """(items right, items seen) over turns 0..``upto``: each item counted once, by its latest turn there,
        as the arm summary counts items by their final turn (``running_accuracy`` counts turns)."""
        upto = self._index if upto is None else upto
        if upto is None:
            return 0, 0
        latest = {t.qid: t.accuracy for t in self._turns[: upto + 1]}
        return sum(latest.values()), len(latest)

    # -- actions (the buttons call these) -------------------------------------------------------------------

    def next(self) -> None:
        """Move to the next turn; does nothing at the last one."""
        if self._index is not None and self._index + 1 < len(self._turns):
            self._index += 1
            self.refresh()

    def prev(self) -> None:
        """Move to the previous turn; does nothing at the first one."""
        if self._index:
            self._index -= 1
            self.refresh()

    def run_turn(self) -> StepTurn:
        """Run the loop's next turn (this calls the learner), append it and move to it.

        Raises RuntimeError (with the reason) when there is no loop or it is done; a learner error propagates
        and nothing is appended.
        """
        blocked = self.why_run_disabled
        if blocked:
            raise RuntimeError(blocked)
        turn = self.loop.step()
        self._turns.append(turn)
        self._index = len(self._turns) - 1
        self.refresh()
        return turn

    def _on_run(self, _button: Any = None) -> None:
        self.run_button.disabled, self.run_button.description = True, "running…"
        try:
            self.run_turn()
            self.last_error = ""
        except Exception as exc:  # shown in the widget: a button callback has nowhere else to report
            self.last_error = f"{type(exc).__name__}: {exc}"
        finally:
            self.run_button.description = "run next turn"
            self.refresh()

    # -- rendering ------------------------------------------------------------------------------------------

    def refresh(self) -> None:
        n, i = len(self._turns), self._index
        self.prev_button.disabled = not i
        self.next_button.disabled = i is None or i + 1 >= n
        self.run_button.disabled = bool(self.why_run_disabled)
        self.turn_index.value = f"turn <b>{i + 1}</b> of {n}" if i is not None else "no turns yet"
        self.status.value = self._status_html()
        self.detail.value = self._detail_html()

    def _status_html(self) -> str:
        notes = []
        if self.last_error:
            notes.append(f"<span style='color:{_WRONG}'>run failed: {esc(self.last_error)}</span>")
        blocked = self.why_run_disabled
        if blocked:
            notes.append(f"run disabled: {esc(blocked)}")
        cur = self.current
        if cur is not None and cur.stop_reason and not blocked:
            notes.append(f"{esc(cur.qid)} stopped here ({esc(cur.stop_reason)}); the next run starts the next item")
        return "<div style='color:#555'>" + "<br>".join(notes) + "</div>" if notes else ""

    def _detail_html(self) -> str:
        t = self.current
        if t is None:
            return "<i>No turns yet. Press “run next turn” to ask the learner.</i>"
        ok = (f"<b style='color:{_RIGHT}'>✓ right</b>" if t.accuracy
              else f"<b style='color:{_WRONG}'>✗ wrong</b>")
        combined = f"{t.combined:.2f} → <b>{esc(t.bucket)}</b>" + (
            "" if t.exact_combined else " <small>(recomputed from self and teacher; vote share not kept)</small>")
        if t.template:
            reprompt = f"<code>{esc(t.template)}</code>" + (
                f"<div style='margin-top:2px'>“{esc(t.template_text)}”</div>" if t.template_text
                else " <small>(text not found)</small>")
        else:
            reprompt = "none" + (f" — stop: <b>{esc(t.stop_reason)}</b>" if t.stop_reason else "")
        acc = self.running_accuracy()
        right = sum(x.accuracy for x in self._turns[: self._index + 1])
        rows = [
            ("item", f"{esc(t.qid)}: {esc(t.question)}" + (f" <small>(reference {esc(t.reference)})</small>"
                                                           if t.reference is not None else "")),
            ("turn in item", f"{t.turn}" + (f", replying to <code>{esc(t.replied_to)}</code>" if t.replied_to
                                            else ", first answer")),
            ("learner answer", f"<div style='white-space:pre-wrap'>{esc(t.answer)}</div>"),
            ("self-confidence", f"{t.self_conf:.2f}"),
            ("detected bias", esc(t.teacher_bias) + (f" <small>({esc(t.cue)})</small>" if t.cue else "")),
            ("teacher confidence", f"{t.teacher_conf:.2f}"),
            ("combined / bucket", combined),
            ("reprompt sent after", reprompt + (f" <small>(rule {esc(t.rule)})</small>" if t.rule else "")),
            ("correct", ok),
            ("turns right so far", f"{right}/{self._index + 1} = {_pct(acc)}"),
            ("items right so far", "{}/{} = {} <small>(each item by its latest turn, as the arm summary counts)"
                                   "</small>".format(*self.items_right(), _pct(self.items_right()[0]
                                                                            / max(1, self.items_right()[1])))),
        ]
        body = "".join(f"<tr><th style='text-align:left;padding:2px 8px;vertical-align:top;white-space:nowrap'>"
                       f"{esc(k)}</th><td style='padding:2px 8px'>{v}</td></tr>" for k, v in rows)
        return f"<table class='rlmlab-turn' style='border-collapse:collapse'>{body}</table>"

    def static_html(self) -> str:
        """Every turn in one table, the current one marked ▶, and the texts of the reprompts used."""
        head = ["", "#", "item", "turn", "answer", "self", "bias", "teacher", "combined", "reprompt / stop", "ok",
                "turns right so far"]
        th = "".join(f"<th style='text-align:left;padding:2px 6px;border-bottom:1px solid #999'>{esc(h)}</th>"
                     for h in head)
        body, right = [], 0
        for n, t in enumerate(self._turns):
            right += t.accuracy
            here = n == self._index
            cells = ["▶" if here else "", n + 1, t.qid, t.turn, _short(t.answer), f"{t.self_conf:.2f}",
                     t.teacher_bias, f"{t.teacher_conf:.2f}", f"{t.combined:.2f} {t.bucket}",
                     t.template or (f"stop: {t.stop_reason}" if t.stop_reason else "—"),
                     "✓" if t.accuracy else "✗", f"{right}/{n + 1} = {_pct(right / (n + 1))}"]
            style = "font-weight:bold;background:#eef4ff;" if here else ""
            colour = f"color:{_RIGHT}" if t.accuracy else f"color:{_WRONG}"
            tds = "".join(f"<td style='padding:2px 6px;vertical-align:top;{colour if k == 10 else ''}'>{esc(c)}</td>"
                          for k, c in enumerate(cells))
            body.append(f"<tr style='{style}'>{tds}</tr>")
        if not body:
            body.append(f"<tr><td colspan='{len(head)}' style='padding:2px 6px'><i>no turns</i></td></tr>")
        used = {t.template: t.template_text for t in self._turns if t.template}
        texts = "".join(f"<li><code>{esc(k)}</code>: {esc(v) if v else '<i>text not found</i>'}</li>"
                        for k, v in used.items())
        where = (f"turn {self._index + 1} of {len(self._turns)}" if self._index is not None else "no turns")
        blocked = self.why_run_disabled
        return (f"<div><b>{esc(self.title)}</b> — <span class='rlmlab-turn-index'>{where}</span>"
                + (f"<div style='color:#555'>run disabled: {esc(blocked)}</div>" if blocked else "")
                + f"<table class='rlmlab-turns' style='border-collapse:collapse'><thead><tr>{th}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table>"
                + (f"<div><small>reprompt texts:</small><ul style='margin:2px 0'>{texts}</ul></div>" if texts else "")
                + "<p><small>self / teacher: the learner's and the teacher's confidence; combined: their mean and "
                "its bucket; reprompt: the template sent after the answer.</small></p></div>")

    def __repr__(self) -> str:
        where = "no turns" if self._index is None else f"turn {self._index + 1}/{len(self._turns)}"
        return f"<TeacherStepper {where}{', live' if self.loop is not None else ''}>"
