"""A run's budgets: LM tokens (prompt + completion), seconds, money and failed steps, checked at each step boundary.

A run with a budget stops before the step that would start past it, with ``Trajectory.stopped`` set to
``"budget (<which>)"`` and every step done so far kept (no answer is made up for it). The money spent is priced
from litellm's price table (its local copy: rlmlab never fetches it) for the calls of a priced model; the embedded
model and other local engines cost 0, and a run says so; a model the table does not know cannot be held to
``max_cost`` and the run's notes say that too. Errors are consecutive failed steps (a step whose output starts
with ``[Error]``), as the reference RLM implementation counts them: one failed step followed by a good one is not
a run going wrong.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rlmlab.lm import LMCall

__all__ = ["Budget", "BudgetReached", "Spent", "call_cost", "spent_so_far", "budget_line", "cost_note",
           "LOCAL_PREFIXES"]

# models that run on this machine: they cost nothing (the embedded SmolLM2, a GGUF file, the scripted LM)
LOCAL_PREFIXES = ("rlmlab/", "scripted", "local")


@dataclass(frozen=True)
class Budget:
    """The limits of one run; None: no limit of that kind."""

    max_tokens: int | None = None
    max_seconds: float | None = None
    max_cost: float | None = None
    max_errors: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_tokens", "max_errors"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                raise ValueError(f"{name}: {value!r}; expected an integer > 0 or None")
        for name in ("max_seconds", "max_cost"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
                raise ValueError(f"{name}: {value!r}; expected a number > 0 or None")

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.max_tokens, self.max_seconds, self.max_cost, self.max_errors))

    def reached(self, spent: Spent) -> tuple[str, str] | None:
        """(which, why) for the first limit ``spent`` has reached, else None."""
        if self.max_tokens is not None and spent.tokens >= self.max_tokens:
            return "max_tokens", f"{spent.tokens:,} LM tokens of {self.max_tokens:,}"
        if self.max_seconds is not None and spent.seconds >= self.max_seconds:
            return "max_seconds", f"{spent.seconds:.1f} s of {self.max_seconds:g} s"
        if self.max_cost is not None and spent.cost >= self.max_cost:
            return "max_cost", f"${spent.cost:.6f} of ${self.max_cost:g}"
        if self.max_errors is not None and spent.errors >= self.max_errors:
            return "max_errors", f"{spent.errors} failed steps in a row, the limit is {self.max_errors}"
        return None


@dataclass(frozen=True)
class Spent:
    """What a run has used so far: LM tokens, seconds, dollars (priced calls only), consecutive failed steps,
    and the models it could not price."""

    tokens: int
    seconds: float
    cost: float
    errors: int
    unpriced: tuple[str, ...] = ()


class BudgetReached(Exception):
    """Raised at a step boundary when a budget is reached; the harness stops the run there and keeps its steps."""

    def __init__(self, which: str, why: str):
        super().__init__(f"stopped before the next step: budget {which} reached ({why})")
        self.which, self.why = which, why


def call_cost(call: LMCall) -> float | None:
    """The call's price in dollars from litellm's price table; 0.0 for a local model; None when it has no price."""
    model = call.model or ""
    if model.startswith(LOCAL_PREFIXES):
        return 0.0
    try:
        import litellm

        prompt, completion = litellm.cost_per_token(model=model, prompt_tokens=call.input_tokens,
                                                    completion_tokens=call.output_tokens)
    except Exception:  # noqa: BLE001 - litellm raises its own errors for a model it has no price for
        return None
    return float(prompt) + float(completion)


def spent_so_far(calls: list[LMCall], started: float, outputs: list[str], *, price: bool = True) -> Spent:
    """What ``calls`` (every LM call of the run, sub-calls included), the time since ``started``
    (``time.perf_counter()``) and the steps' ``outputs`` add up to; ``price=False`` leaves the cost at 0 (no
    ``max_cost``: no call is looked up in the price table)."""
    cost, unpriced = 0.0, []
    for call in calls if price else ():
        price_of = call_cost(call)
        if price_of is None:
            unpriced.append(call.model)
        else:
            cost += price_of
    errors = 0
    for output in reversed(outputs):
        if not str(output).lstrip().startswith("[Error]"):
            break
        errors += 1
    return Spent(tokens=sum(c.input_tokens + c.output_tokens for c in calls),
                 seconds=time.perf_counter() - started, cost=cost, errors=errors,
                 unpriced=tuple(sorted(set(unpriced))))


def budget_line(budget: Budget, spent: Spent, lead: str = "[budget] left:") -> str:
    """One line telling the model what is left of each limit the run has (``show_budget``), after ``lead``."""
    parts: list[str] = []
    if budget.max_tokens is not None:
        parts.append(f"{max(0, budget.max_tokens - spent.tokens):,} LM tokens")
    if budget.max_seconds is not None:
        parts.append(f"{max(0.0, budget.max_seconds - spent.seconds):.0f} s")
    if budget.max_cost is not None:
        parts.append(f"${max(0.0, budget.max_cost - spent.cost):.4f}")
    if budget.max_errors is not None:
        parts.append(f"{max(0, budget.max_errors - spent.errors)} failed steps in a row")
    return f"{lead} " + ", ".join(parts) + "." if parts else ""


def cost_note(spent: Spent, budget: Budget, lm: Any) -> str | None:
    """What the trajectory should say about money: local models cost 0; an unpriced model is not held to
    ``max_cost``."""
    if spent.unpriced and budget.max_cost is not None:
        return (f"max_cost: {', '.join(spent.unpriced)} has no price in litellm's table, so its calls are not "
                "counted against max_cost")
    if budget.max_cost is not None and str(getattr(lm, "model", "")).startswith(LOCAL_PREFIXES):
        return f"max_cost: {getattr(lm, 'model', lm)} runs on this machine and costs $0"
    return None
