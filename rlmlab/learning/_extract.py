"""Extraction policies: distil a judged trajectory (or several rollouts of one task) into memory items.

Two plug-ins in ``EXTRACTORS``: ``heuristic`` reads only concrete evidence from the trajectory (tool calls,
ToolErrors, exceptions, Turing violations, large returns, SUBMIT or not) and writes no item without it;
``llm`` asks a language model with a versioned ReasoningBank-style prompt and falls back to the heuristic
when the reply holds no valid item. Successes give "success" items (a strategy that worked), failures give
"failure" items (a guardrail: what went wrong and what to do instead). At most 3 items per trajectory.
The ``llm`` plug-in lives in ``_extract_llm``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from rlmlab.errors import ConfigError
from rlmlab.registry import Registry
from rlmlab.memory import MemoryItem
from rlmlab.memory import MemoryTask, Verdict

if TYPE_CHECKING:  # rlmlab.executors imports rlmlab.tools, which imports rlmlab.memory
    from rlmlab.executors import Trajectory

__all__ = ["EXTRACTORS", "Extractor", "ExtractionReport", "HeuristicExtractor", "EXTRACT_LIMITS", "MAX_EXTRACT_ITEMS",
           "LARGE_RETURN_CHARS", "Rollout", "answer_form", "best_rollout", "check_max_items", "clip_line",
           "split_by_success", "merged_tags"]

EXTRACTORS: Registry = Registry("extractor")

# ReasoningBank keeps a handful of items per trajectory; more is mostly paraphrase and noise.
MAX_EXTRACT_ITEMS = 3
# Tighter than the store's LIMITS: an extracted item is one strategy in 1-3 sentences, not a document.
EXTRACT_LIMITS = {"title": 120, "description": 300, "content": 1200}
LARGE_RETURN_CHARS = 2000  # the LeakageMeter's default threshold for a large tool return

Rollout = tuple["Trajectory", Verdict]


@runtime_checkable
class Extractor(Protocol):
    """Turns judged trajectories into candidate items (not stored: a consolidator persists them)."""

    def extract(self, task: MemoryTask, trajectory: Trajectory, verdict: Verdict) -> list[MemoryItem]: ...

    def contrastive(self, task: MemoryTask, rollouts: list[Rollout]) -> list[MemoryItem]: ...


@dataclass
class ExtractionReport:
    """What an extraction did. ``dropped`` lists rejected LM items as ``{"index", "reason"}`` (index in the
    reply's array; the template extractor adds the rejected ``"template"``); ``fallback`` is True when the
    heuristic replaced an LM reply without valid items (or a failure without code to name)."""

    items: list[MemoryItem]
    policy: str
    dropped: list[dict[str, Any]] = field(default_factory=list)
    fallback: bool = False
    prompt_version: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"items": [i.to_dict() for i in self.items], "policy": self.policy, "dropped": list(self.dropped),
                "fallback": self.fallback, "prompt_version": self.prompt_version, "notes": list(self.notes)}


def check_max_items(max_items: Any) -> int:
    if isinstance(max_items, bool) or not isinstance(max_items, int) or not 1 <= max_items <= MAX_EXTRACT_ITEMS:
        raise ConfigError(f"extractor max_items: {max_items!r} is not allowed; use an integer from 1 to "
                          f"{MAX_EXTRACT_ITEMS} (more items per trajectory are mostly noise)")
    return max_items


# -- small text helpers ----------------------------------------------------------------------------------


def clip_line(text: Any, n: int) -> str:
    """One line of at most ``n`` characters (an ellipsis marks a cut)."""
    s = " ".join(str(text).split())
    return s if len(s) <= n else s[: max(0, n - 1)].rstrip() + "…"


_TAG_BAD = re.compile(r"[^a-z0-9_.:\-]+")


def _tag(text: str | None) -> str | None:
    """A valid tag from free text (lower case, other characters become '-'), or None if nothing is left."""
    if not text:
        return None
    t = _TAG_BAD.sub("-", text.strip().lower()).strip("-_.:")[:40].rstrip("-_.:")
    return t or None


def merged_tags(*groups: Sequence[str | None]) -> list[str]:
    out: dict[str, None] = {}
    for group in groups:
        for raw in group:
            t = _tag(raw)
            if t:
                out.setdefault(t, None)
    return list(out)[:16]


def _fmt_args(args: Any, n: int = 80) -> str:
    if not isinstance(args, dict):
        return ""
    return clip_line(", ".join(f"{k}={clip_line(repr(v), 30)}" for k, v in args.items()), n)


def answer_form(answer: Any) -> str:
    """A short description of the submitted answer's shape, with the value clipped."""
    if answer is None or not str(answer).strip():
        return "an empty answer"
    a = str(answer).strip()
    if re.fullmatch(r"[-+]?\d+", a):
        return f"an integer ({a})"
    if re.fullmatch(r"[-+]?\d*\.\d+(?:[eE][-+]?\d+)?%?|[-+]?\d+%", a):
        return f"a number ({a})"
    if a.lower() in ("yes", "no", "true", "false"):
        return f"a yes/no answer ({a})"
    if re.match(r"(?i)\s*(prefix|select|ask|construct|describe)\b", a):
        return "a SPARQL query"
    if a[:1] in "[{":
        return f"a JSON value ({clip_line(a, 50)})"
    parts = [p for p in re.split(r"[,;\n]", a) if p.strip()]
    if len(parts) > 1:
        return f"a list of {len(parts)} items ('{clip_line(a, 50)}')"
    return f"a short text ('{clip_line(a, 50)}')"


# -- evidence in a trajectory ----------------------------------------------------------------------------

# An exception line as the REPL reports it: at a line start (a traceback's last line) or after "[Error] ".
_EXC = re.compile(r"(?m)(?:^|\[Error\]\s*)([A-Z][A-Za-z]*(?:Error|Exception))\s*:\s*([^\n]+)")
_EXC_HINTS = {
    "NameError": "define or re-read the variable in the same step; state from a failed step may be missing",
    "KeyError": "print the keys of the tool result before indexing it",
    "TypeError": "print type() of the tool result before using it",
    "AttributeError": "print type() of the tool result before using it",
    "IndexError": "check the length before indexing",
    "SyntaxError": "keep each step's code short and complete",
    "ValueError": "print the raw value before converting it",
}


@dataclass
class _Evidence:
    tools: list[str] = field(default_factory=list)  # in call order
    ok_calls: list[dict[str, Any]] = field(default_factory=list)
    errors: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (tool, message, args), distinct
    exceptions: list[str] = field(default_factory=list)  # "NameError: ...", distinct
    turing: list[tuple[str, str, str]] = field(default_factory=list)  # (hook, reason, correction), distinct
    large: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)  # (tool or "print", chars, args)
    iterations: int = 0
    sub_llm_calls: int = 0
    submitted: bool = False
    error: str | None = None

    def sequence(self, limit: int = 6) -> str:
        """Distinct tools in first-use order with repeat counts: ``ctx_find ×2 → ctx_slice``."""
        counts: dict[str, int] = {}
        for t in self.tools:
            counts[t] = counts.get(t, 0) + 1
        parts = [f"{t} ×{n}" if n > 1 else t for t, n in list(counts.items())[:limit]]
        if len(counts) > limit:
            parts.append(f"+{len(counts) - limit} more")
        return " → ".join(parts)

    def signatures(self) -> set[str]:
        """Comparable labels of what went wrong (for contrastive extraction)."""
        out = {f"error:{t}:{m}" for t, m, _ in self.errors} | {f"exc:{e.split(':')[0]}" for e in self.exceptions}
        out |= {f"large:{t}" for t, _, _ in self.large} | {f"turing:{h}" for h, _, _ in self.turing}
        if self.iterations and not self.submitted:
            out.add("nosubmit")
        return out

    @property
    def has_error(self) -> bool:
        return bool(self.errors or self.exceptions or self.error)


def _evidence(traj: Trajectory, large_return_chars: int) -> _Evidence:
    ev = _Evidence(iterations=len(traj.iterations), submitted=bool(traj.submitted), error=traj.error)
    seen_err: set[tuple[str, str]] = set()
    for it in traj.iterations:
        named_large = 0
        for call in it.tool_calls or []:
            name = str(call.get("name") or call.get("tool") or "?")
            args = call.get("arguments") or call.get("args") or {}
            ev.tools.append(name)
            if call.get("error"):
                msg = str(call["error"])
                if (name, msg) not in seen_err:
                    seen_err.add((name, msg))
                    ev.errors.append((name, msg, args))
            else:
                ev.ok_calls.append({"name": name, "args": args})
            chars = int(call.get("result_chars") or 0)
            if chars > large_return_chars:
                named_large += 1
                ev.large.append((name, chars, args))
        leak = it.leakage
        if leak is not None and leak.large_returns > named_large:
            # Counted by the meter but no call record says which: name the step's biggest call, if any.
            calls = sorted(it.tool_calls or [], key=lambda c: -int(c.get("result_chars") or 0))
            name = str(calls[0].get("name") or "a tool") if calls else "a tool"
            ev.large.append((name, 0, (calls[0].get("arguments") or {}) if calls else {}))
        if leak is not None and leak.stdout_chars > large_return_chars and not it.tool_calls:
            ev.large.append(("print", leak.stdout_chars, {}))
        ev.sub_llm_calls += getattr(leak, "sub_llm_calls", 0) or 0
        for m in _EXC.finditer(it.output or ""):
            kind, msg = m.group(1), m.group(2).strip()
            # A ToolError already recorded on its call (the REPL re-raises it, e.g. as "RuntimeError: ToolError: ...").
            if any(e[1] in msg or msg.startswith(e[1][:40]) for e in ev.errors):
                continue
            text = f"{kind}: {clip_line(msg, 200)}"
            if text not in ev.exceptions:
                ev.exceptions.append(text)
        for rnd in it.turing or []:
            for v in rnd.get("violations") or []:
                key = (str(v.get("hook", "?")), str(v.get("reason", "")), str(rnd.get("correction") or ""))
                if key[:2] not in [t[:2] for t in ev.turing]:
                    ev.turing.append(key)
    if traj.error:
        text = clip_line(traj.error, 200)
        if text not in ev.exceptions:
            ev.exceptions.append(text)
    return ev


# -- the heuristic extractor -----------------------------------------------------------------------------


class HeuristicExtractor:
    """Deterministic extraction from concrete evidence; no LM. See the module docstring."""

    name = "heuristic"

    def __init__(self, max_items: int = MAX_EXTRACT_ITEMS, large_return_chars: int = LARGE_RETURN_CHARS):
        self.max_items = check_max_items(max_items)
        if isinstance(large_return_chars, bool) or not isinstance(large_return_chars, int) or large_return_chars < 1:
            raise ConfigError(f"extractor large_return_chars: {large_return_chars!r}; use an integer >= 1")
        self.large_return_chars = large_return_chars

    def extract(self, task: MemoryTask, trajectory: Trajectory, verdict: Verdict) -> list[MemoryItem]:
        return self.extract_with_report(task, trajectory, verdict).items

    def extract_with_report(self, task: MemoryTask, trajectory: Trajectory, verdict: Verdict) -> ExtractionReport:
        if not trajectory.iterations:
            # Nothing the agent did: an error before the first step is an infrastructure problem, not a strategy.
            return ExtractionReport([], self.name, notes=["empty trajectory: no items"])
        ev = _evidence(trajectory, self.large_return_chars)
        drafts = (self._success(task, trajectory, verdict, ev) if verdict.success
                  else self._failure(task, trajectory, verdict, ev))
        limit = self.max_items
        if not verdict.success and not ev.tools and not ev.has_error:
            limit = 1  # little evidence: one guardrail at most
        items = _build(drafts, "success" if verdict.success else "failure", task, trajectory, verdict, limit)
        return ExtractionReport(items, self.name)

    def contrastive(self, task: MemoryTask, rollouts: list[Rollout]) -> list[MemoryItem]:
        return self.contrastive_with_report(task, rollouts).items

    def contrastive_with_report(self, task: MemoryTask, rollouts: list[Rollout]) -> ExtractionReport:
        wins, losses = split_by_success(rollouts)
        if not wins or not losses:
            return self._from_best(task, rollouts, "one-sided rollouts: extracted from the best one")
        evs = {id(t): _evidence(t, self.large_return_chars) for t, _ in rollouts}
        best, best_v = wins[0]
        bev = evs[id(best)]
        win_sets = [set(evs[id(t)].tools) for t, _ in wins]
        common = [t for t in dict.fromkeys(bev.tools) if all(t in s for s in win_sets)]
        loss_tools = set().union(*(set(evs[id(t)].tools) for t, _ in losses))
        only_win = [t for t in common if t not in loss_tools]
        win_bad = set().union(*(evs[id(t)].signatures() for t, _ in wins))
        n, m = len(wins), len(rollouts)
        succ_drafts: list[tuple[str, str, str, list[str]]] = []
        fail_drafts: list[tuple[tuple[str, str, str, list[str]], Rollout]] = []  # (draft, where it was seen)
        loss_seqs = "; ".join(sorted({evs[id(t)].sequence() or "no tools" for t, _ in losses}))
        all_submit = all(evs[id(t)].submitted for t, _ in wins)
        if only_win:
            succ_drafts.append((
                f"Use {', '.join(only_win[:3])}: the failed rollouts never did",
                f"{n} of {m} rollouts succeeded; only they called {', '.join(only_win)}",
                f"On '{clip_line(task.query, 80)}', the successful rollouts called {bev.sequence()} and submitted "
                f"{answer_form(best.answer)}; the failed ones ({loss_seqs}) never called {', '.join(only_win)}.",
                only_win))
        # What went wrong only in failed rollouts, one guardrail per kind, higher-scoring failures first.
        seen: set[str] = set()
        for traj, verdict in losses:
            lev = evs[id(traj)]
            fix = f"the successful rollouts ran {bev.sequence() or 'no tools'} instead"
            for tool, msg, args in lev.errors:
                key = f"error:{tool}:{msg}"
                if key not in win_bad and key not in seen:
                    seen.add(key)
                    fail_drafts.append(((
                        f"{tool}: avoid '{clip_line(msg, 50)}'",
                        f"A ToolError from {tool} seen only in failed rollouts",
                        f"Failed rollouts called {tool}({_fmt_args(args)}) and got ToolError: {clip_line(msg, 200)}; "
                        f"{fix}.", [tool, "tool-error"]), (traj, verdict)))
            for exc in lev.exceptions:
                key = f"exc:{exc.split(':')[0]}"
                if key not in win_bad and key not in seen:
                    seen.add(key)
                    fail_drafts.append(((
                        f"Guard against {exc.split(':')[0]} in REPL code",
                        "An exception seen only in failed rollouts",
                        f"Failed rollouts raised {exc}; {fix}.", ["exception"]), (traj, verdict)))
            for tool, chars, args in lev.large:
                key = f"large:{tool}"
                if key not in win_bad and key not in seen:
                    seen.add(key)
                    size = f"{chars:,} characters" if chars else "a large result"
                    fail_drafts.append(((
                        f"Bound {tool} output: {size} flooded the history",
                        "A large return seen only in failed rollouts",
                        f"Failed rollouts let {tool} put {size} into the history; {fix}, with bounded reads.",
                        [tool, "leakage"]), (traj, verdict)))
            if lev.iterations and not lev.submitted and all_submit and "nosubmit" not in seen:
                seen.add("nosubmit")
                fail_drafts.append(((
                    "Call SUBMIT once a tool result supports the answer",
                    "Failed rollouts ended without SUBMIT; the successful ones submitted",
                    f"Failed rollouts ran {lev.iterations} steps ({lev.sequence() or 'no tools'}) without SUBMIT; "
                    f"the successful ones called {bev.sequence() or 'no tools'} and submitted "
                    f"{answer_form(best.answer)}.", ["no-submit"]), (traj, verdict)))
        if not succ_drafts and not fail_drafts:
            return self._from_best(task, rollouts, "no contrast between successes and failures: used the best")
        items = _build(succ_drafts[:1], "success", task, best, best_v, self.max_items, extra_tags=["contrastive"])
        for draft, (traj, verdict) in fail_drafts:
            if len(items) >= self.max_items:
                break
            items += [i for i in _build([draft], "failure", task, traj, verdict, 1, extra_tags=["contrastive"])
                      if all(i.id != other.id for other in items)]
        return ExtractionReport(items, self.name, notes=[f"contrast of {n} successful and {len(losses)} failed"])

    def _from_best(self, task: MemoryTask, rollouts: list[Rollout], note: str) -> ExtractionReport:
        if not rollouts:
            return ExtractionReport([], self.name, notes=["no rollouts"])
        traj, verdict = best_rollout(rollouts)
        report = self.extract_with_report(task, traj, verdict)
        report.notes.insert(0, note)
        return report

    # Each draft: (title, description, content, extra tags); the first ones are the most informative.

    def _success(self, task: MemoryTask, traj: Trajectory, verdict: Verdict, ev: _Evidence) -> list[list[tuple]]:
        form = answer_form(traj.answer)
        how = "submitting" if ev.submitted else "answering through the forced extract with"
        main: list[tuple] = []
        if ev.tools:
            main.append((
                f"{ev.sequence(4)}, then SUBMIT {form.split(' (')[0]}",
                f"A tool sequence that solved a {task.domain or 'general'} task",
                f"On '{clip_line(task.query, 80)}', calling {ev.sequence()} and then {how} {form} was judged correct "
                f"by {verdict.judge} ({clip_line(verdict.rationale, 120)}).", sorted(set(ev.tools))[:6]))
        elif ev.submitted:
            main.append((
                f"Answer from REPL code without tools: {form.split(' (')[0]}",
                f"A {task.domain or 'general'} task solved by computing in the REPL",
                f"On '{clip_line(task.query, 80)}', the agent computed the answer in {ev.iterations} step(s) without "
                f"tools and submitted {form}; {verdict.judge} accepted it.", []))
        recover: list[tuple] = []
        for tool, msg, args in ev.errors:
            later = [c for c in ev.ok_calls if c["name"] == tool]
            if later:
                recover.append((
                    f"Recover from {tool} '{clip_line(msg, 40)}'",
                    f"Fixing the arguments after a {tool} ToolError still led to a correct answer",
                    f"{tool}({_fmt_args(args)}) failed with ToolError: {clip_line(msg, 160)}; retrying as "
                    f"{tool}({_fmt_args(later[-1]['args'])}) worked and the run succeeded.", [tool, "recovery"]))
        delegate: list[tuple] = []
        if ev.sub_llm_calls:
            delegate.append((
                f"Delegate with {ev.sub_llm_calls} sub-LLM call(s)",
                "Sub-LLM calls over chunks helped solve the task",
                f"On '{clip_line(task.query, 80)}', {ev.sub_llm_calls} llm_query sub-call(s) alongside "
                f"{ev.sequence() or 'no tools'} led to {form}.", ["delegation"]))
        return [main, recover, delegate]

    def _failure(self, task: MemoryTask, traj: Trajectory, verdict: Verdict, ev: _Evidence) -> list[list[tuple]]:
        errors = []
        for tool, msg, args in ev.errors:
            later = [c for c in ev.ok_calls if c["name"] == tool]
            fix = (f"A later call {tool}({_fmt_args(later[-1]['args'])}) did work: use arguments like those."
                   if later else f"Instead, fix the argument the message names before calling {tool} again.")
            errors.append((f"{tool}: avoid '{clip_line(msg, 50)}'", f"{tool} raised a ToolError in a failed run",
                           f"Calling {tool}({_fmt_args(args)}) failed with ToolError: {clip_line(msg, 200)}. {fix}",
                           [tool, "tool-error"]))
        excs = []
        for exc in ev.exceptions:
            kind = exc.split(":")[0]
            hint = _EXC_HINTS.get(kind, "print the intermediate value and fix that step before going on")
            excs.append((f"Guard against {kind} in REPL code", f"The run hit {kind}",
                         f"The code raised {exc}. Instead, {hint}.", ["exception"]))
        turing = [(f"Turing hook {hook}: {clip_line(reason, 60)}", f"The Turing check {hook} flagged a step",
                   f"The {hook} check flagged: {clip_line(reason, 200)}."
                   + (f" Correction given: {clip_line(corr, 200)}" if corr else ""), ["turing", hook])
                  for hook, reason, corr in ev.turing]
        large = []
        for tool, chars, args in ev.large:
            size = f"{chars:,} characters" if chars else "a large result"
            what = (f"A print put {size} into the history" if tool == "print"
                    else f"The call {tool}({_fmt_args(args)}) returned {size} into the history")
            large.append((f"Bound {tool} output: {size} flooded the history",
                          f"A large return from {tool} in a failed run",
                          f"{what}. Instead, look with ctx_stats or ctx_find first and read "
                          "a bounded range (a few hundred characters).", [tool, "leakage"]))
        nosubmit = []
        if not ev.submitted:
            why = f"stopped with {clip_line(ev.error, 120)}" if ev.error else "ended without SUBMIT"
            nosubmit.append((
                "Call SUBMIT before the iteration budget runs out",
                "The run produced no submitted answer",
                f"After {ev.iterations} step(s) ({ev.sequence() or 'no tools'}) the run {why}"
                + (f"; the forced extract gave '{clip_line(traj.answer, 60)}'" if traj.answer else "")
                + ". Instead, SUBMIT(answer=...) as soon as a tool result supports the answer.", ["no-submit"]))
        wrong = []
        if ev.submitted and not (errors or excs or turing or large):
            form = answer_form(traj.answer)
            wrong.append((
                f"Verify the answer ({form.split(' (')[0]}) before SUBMIT",
                f"A submitted answer the {verdict.judge} judge rejected",
                f"On '{clip_line(task.query, 80)}', the agent used {ev.sequence() or 'no tools'} and submitted {form}, "
                f"which {verdict.judge} rejected: {clip_line(verdict.rationale, 160)}. Instead, check the value "
                "against a tool result before SUBMIT.", []))
        return [errors, excs, turing, large, nosubmit, wrong]


def _build(drafts: list, polarity: str, task: MemoryTask, traj: Trajectory, verdict: Verdict, limit: int,
           extra_tags: Sequence[str] = (), diverse: bool = True) -> list[MemoryItem]:
    """Items from drafts (groups of (title, description, content, tags)), at most ``limit``, distinct by id.

    With ``diverse`` the first draft of every group comes before the second of any group, so three ToolErrors
    do not crowd out the one missing SUBMIT.
    """
    groups = drafts if drafts and isinstance(drafts[0], list) else [drafts]
    if diverse:
        order = [g[i] for i in range(max((len(g) for g in groups), default=0)) for g in groups if i < len(g)]
    else:
        order = [d for g in groups for d in g]
    items: list[MemoryItem] = []
    for title, description, content, tags in order:
        if len(items) >= limit:
            break
        item = MemoryItem(
            title=clip_line(title, EXTRACT_LIMITS["title"]), description=clip_line(description, EXTRACT_LIMITS["description"]),
            content=clip_line(content, EXTRACT_LIMITS["content"]), polarity=polarity, layer="L2", source="extract",
            domain=task.domain, run_id=traj.run_id, trajectory_id=traj.run_id,
            tags=merged_tags([task.domain, verdict.judge], list(extra_tags), tags))
        if all(item.id != other.id for other in items):
            items.append(item)
    return items


def split_by_success(rollouts: list[Rollout]) -> tuple[list[Rollout], list[Rollout]]:
    """Successful and failed rollouts, each best score first (stable for ties)."""
    ranked = sorted(rollouts, key=lambda r: -float(r[1].score))
    return [r for r in ranked if r[1].success], [r for r in ranked if not r[1].success]


def best_rollout(rollouts: list[Rollout]) -> Rollout:
    """The best rollout: successful before failed, then the highest score, then the first given."""
    return sorted(rollouts, key=lambda r: (not r[1].success, -float(r[1].score)))[0]


@EXTRACTORS.register("heuristic")
def _heuristic(max_items: int = MAX_EXTRACT_ITEMS, large_return_chars: int = LARGE_RETURN_CHARS) -> HeuristicExtractor:
    """Deterministic items from tool calls, errors, Turing violations, large returns and SUBMIT (no LM)."""
    return HeuristicExtractor(max_items=max_items, large_return_chars=large_return_chars)
