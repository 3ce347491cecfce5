"""The ``direct`` executor: the base model answers from the context itself in one call, the baseline an RLM is
compared with at long context (E15). As the RLM paper's baseline does, a context longer than the model's window
is cut to fit it (its head is kept, and the prompt says how much was cut); no REPL, no tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from rlmlab.executors._harness import Run, RunOptions, execute_keywords
from rlmlab.executors._trajectory import Trajectory
from rlmlab.tokens import count_tokens
from rlmlab.tools import ToolRegistry, Workspace
from rlmlab.trace import ContextTrace

__all__ = ["DirectLoop", "DirectOptions", "run_direct", "window_of", "fit_to_window"]

_ANSWER_RULE = "Answer the question from the text above. Reply with the answer only, on one line."


@dataclass(frozen=True)
class DirectOptions(RunOptions):
    """``window_tokens``: the model's context window (None: the local engine's ``n_ctx``, or litellm's model table,
    else 8192); ``answer_tokens``: room kept for the reply. A direct call is never constrained."""

    decoding: str = "free"
    window_tokens: int | None = None
    answer_tokens: int = 64

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("window_tokens", "answer_tokens"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                raise ValueError(f"{name}: {value!r}; expected an integer > 0")


def window_of(lm: Any, given: int | None = None) -> int:
    """The context window of ``lm`` in tokens: ``given``, the embedded engine's ``n_ctx``, litellm's
    ``max_input_tokens`` for the model, else 8192."""
    if given:
        return given
    engine = getattr(lm, "rlmlab_engine", None)
    if getattr(engine, "n_ctx", None):
        return int(engine.n_ctx)
    try:
        import litellm

        info = litellm.get_model_info(str(getattr(lm, "model", "")))
        return int(info.get("max_input_tokens") or 8192)
    except Exception:  # noqa: BLE001 - an unknown model: the default
        return 8192


def _counter(lm: Any) -> Callable[[str], int]:
    """Tokens of a text as ``lm`` counts them: the embedded model's tokenizer, else rlmlab's word count."""
    llm = getattr(getattr(lm, "rlmlab_engine", None), "llm", None)
    if llm is not None and hasattr(llm, "tokenize"):
        return lambda text: len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))
    return count_tokens


def fit_to_window(text: str, budget: int, count: Callable[[str], int]) -> tuple[str, int]:
    """(the longest head of ``text`` of at most ``budget`` tokens, cut at a line end where one is near; the
    characters cut). A binary search over lengths, counting only candidate heads: the upper end starts near
    ``budget`` tokens of text and doubles until its head no longer fits, so a million-token context is never
    counted whole."""
    if budget <= 0:
        return "", len(text)
    lo, hi = 0, min(len(text), 8 * budget)
    while hi < len(text) and count(text[:hi]) <= budget:
        lo, hi = hi, min(len(text), 2 * hi)
    if hi == len(text) and count(text) <= budget:
        return text, 0
    while hi - lo > 64:
        mid = (lo + hi) // 2
        if count(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid
    head = text[:lo]
    line_end = head.rfind("\n")
    if line_end > len(head) * 0.9:
        head = head[:line_end + 1]
    return head, len(text) - len(head)


_TEMPLATE_TOKENS = 48  # a chat template's tokens around one user message (SmolLM2's adds a system prompt)


class DirectLoop:
    """One LM call: the context (cut to the window), the question, the answer."""

    name = "direct"
    options = DirectOptions

    def run(self, run: Run) -> None:
        opts = run.options
        count = _counter(run.lm)
        window = window_of(run.lm, opts.window_tokens)
        text = run.context_text
        room = window - opts.answer_tokens - _TEMPLATE_TOKENS  # the chat template's own tokens, and the reply
        budget = room - count(self._prompt(run, "", "", window)[0])  # what the rules and the question take
        while True:  # cut the head until the whole prompt, with its note on the cut, fits
            head, cut = fit_to_window(text, budget, count)
            prompt = self._prompt(run, text, head, window)[0]
            over = count(prompt) - room if cut else 0  # a whole text within its budget fits as counted
            if over <= 0 or budget <= 0:
                break
            budget -= over + 8
        if cut:
            run.traj.notes.append(f"direct: the context was cut to the model's {window:,}-token window "
                                  f"({len(head):,} of {len(text):,} characters kept, the head)")
        scope = run.step(1, len(prompt))
        try:
            reply = run.lm(prompt, max_tokens=opts.answer_tokens)
            answer = _first_text(reply).strip()
            output = answer
        except Exception as exc:  # recorded as the step's output, then the run's error
            answer, output = None, f"[Error] {type(exc).__name__}: {exc}"
            scope.record("", "", output)
            raise
        record = scope.record("", "", output)
        scope.log_context(record, _ANSWER_RULE)
        run.traj.answer = answer.splitlines()[0].strip() if answer else ""
        run.traj.submitted = bool(run.traj.answer)

    @staticmethod
    def _prompt(run: Run, text: str, head: str, window: int) -> tuple[str, str, int]:
        """(the prompt with ``head`` of ``text``, the head, the characters cut)."""
        cut = len(text) - len(head)
        note = (f"\n[... {cut:,} of {len(text):,} characters cut: the text did not fit the model's {window:,}-token "
                "window ...]") if cut else ""
        lead = f"{run.options.instructions}\n" if run.options.instructions else ""
        return f"{lead}Text:\n{head}{note}\n\nQuestion: {run.query}\n{_ANSWER_RULE}", head, cut


def _first_text(reply: Any) -> str:
    first = reply[0] if isinstance(reply, list) and reply else reply
    if isinstance(first, dict):
        first = first.get("text", "")
    return str(getattr(first, "text", first) or "")


def run_direct(query: str, context: Any, *,
               # what the run acts on and where it writes (RunEnv)
               lm: Any, workspace: Workspace | None = None, tools: ToolRegistry | None = None, turing: Any = None,
               trace: ContextTrace | None = None, runs_dir: str | Path | None = None, run_id: str | None = None,
               source_path: str | None = None, parent: Any = None,
               # every executor's options (RunOptions)
               context_mode: str = "handle", max_iters: int = 10, max_output_chars: int = 10_000,
               trace_budget: int = 8000, instructions: str | None = None, decoding: str = "free",
               max_tokens: int | None = None, max_seconds: float | None = None, max_cost: float | None = None,
               max_errors: int | None = None, show_budget: bool = False,
               # the direct call's own (DirectOptions)
               window_tokens: int | None = None, answer_tokens: int = 64) -> Trajectory:
    """Answer one task with a single call of the base model over the context (no REPL, no tools), and return its
    trajectory: the baseline of E15. A context longer than the model's window (``window_tokens``, default the
    model's own) is cut to fit, keeping its head, and the trajectory's notes say how much was cut.

    Each keyword is the field of the same name and default in :class:`RunEnv` or :class:`DirectOptions`
    (``tests/test_public_surface.py`` checks that they stay the same); invalid options raise ValueError before
    anything runs.
    """
    return execute_keywords(_LOOP, DirectOptions, **locals())  # first statement: locals() is the parameters


_LOOP = DirectLoop()
