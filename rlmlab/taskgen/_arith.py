"""Arithmetic tasks: the vendored GSM8K train items, and word problems of several families with numbers drawn by
seed and exact answers.

A GSM8K item is kept when its own calculator annotations (``<<48/2=24>>``) reproduce the reference: the last
annotation's expression, evaluated exactly by :func:`rlmlab.numbers.solve_arithmetic`, must equal the number
after ``####``. Its level is its number of solution steps (2 -> L2 ... 5 or more -> L5), as in the hand suite;
items of the hand suite (data/tasks/arith.jsonl) are left out. A generated problem's answer is computed twice:
by the family from the drawn numbers (Fractions), and by ``solve_arithmetic`` from the expression written in its
note; both must agree and be a whole number >= 0.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path

from rlmlab._paths import PROJECT_ROOT
from rlmlab.experiments import SUITES, Task, read_tasks
from rlmlab.numbers import format_number, solve_arithmetic
from rlmlab.taskgen._common import Candidate, Drop, Kind, phrase
from rlmlab.teach import load_gsm8k

__all__ = ["arith_kinds", "FAMILIES", "GSM8K", "gsm_steps", "recompute"]

GSM8K = PROJECT_ROOT / "data" / "gsm8k_train_500.jsonl"
NAMES = ["Ava", "Ben", "Chloe", "Diego", "Emma", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kira", "Liam", "Maya",
         "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sami", "Tara"]
ITEMS = ["apples", "pencils", "stickers", "marbles", "books", "cards", "shells", "stamps", "buttons", "coins"]
THINGS = ["lamp", "backpack", "kettle", "chair", "scarf", "helmet", "board game", "clock"]
Problem = tuple[str, str, Fraction]  # (question, expression, the family's own value)


def recompute(expression: str) -> str | None:
    """The exact value of an arithmetic expression, by rlmlab.numbers (None when it is not one)."""
    return solve_arithmetic(f"What is {expression}?")


def _bare(rng: random.Random) -> Problem:
    a, b, c = rng.randint(100, 999), rng.randint(2, 99), rng.randint(2, 30)
    shape = rng.randrange(4)
    expr, value = [(f"{a} + {b}", Fraction(a + b)), (f"{a} - {b}", Fraction(a - b)),
                   (f"({b} + {c}) * {c}", Fraction((b + c) * c)), (f"{b} * {c} + {a}", Fraction(b * c + a))][shape]
    return phrase(rng, ["What is {e}?", "Compute {e}.", "Calculate {e}. Answer with a number."], e=expr), expr, value


def _percent(rng: random.Random) -> Problem:
    p, n = rng.choice([5, 10, 15, 20, 25, 30, 40, 50, 75]), rng.randint(2, 60) * 20
    return (phrase(rng, ["What is {p}% of {n}?", "Compute {p}% of {n}.", "How much is {p} percent of {n}?"], p=p, n=n),
            f"{p} * {n} / 100", Fraction(p * n, 100))


def _one_step(rng: random.Random) -> Problem:
    name, item, a, b = rng.choice(NAMES), rng.choice(ITEMS), rng.randint(20, 90), rng.randint(2, 19)
    if rng.random() < 0.5:
        q = phrase(rng, ["{n} has {a} {i}. {n} buys {b} more. How many {i} does {n} have now?",
                         "{n} had {a} {i} and was given {b} more. How many {i} does {n} have?"],
                   n=name, a=a, b=b, i=item)
        return q, f"{a} + {b}", Fraction(a + b)
    q = phrase(rng, ["{n} has {a} {i} and gives away {b}. How many {i} are left?",
                     "There were {a} {i} in a box. {n} took {b} of them. How many {i} remain in the box?"],
               n=name, a=a, b=b, i=item)
    return q, f"{a} - {b}", Fraction(a - b)


def _change(rng: random.Random) -> Problem:
    name, thing, n, p = rng.choice(NAMES), rng.choice(ITEMS), rng.randint(2, 9), rng.randint(2, 12)
    bill = rng.choice([50, 100]) if n * p < 50 else 100 if n * p < 100 else 200
    q = phrase(rng, ["{n} buys {k} packs of {t} at ${p} each and pays with a ${b} bill. How much change does {n} get?",
                     "A pack of {t} costs ${p}. {n} buys {k} packs and hands over ${b}. How many dollars of change "
                     "come back?"], n=name, t=thing, k=n, p=p, b=bill)
    return q, f"{bill} - {n} * {p}", Fraction(bill - n * p)


def _share(rng: random.Random) -> Problem:
    name, f, k = rng.choice(NAMES), rng.randint(2, 8), rng.randint(3, 12)
    t = f * rng.randint(1, 6)  # trays * per tray divisible by the friends
    q = phrase(rng, ["{n} bakes {t} trays of {k} cookies and shares them equally among {f} friends. How many cookies "
                     "does each friend get?",
                     "{t} trays hold {k} cookies each. {n} splits all the cookies equally between {f} friends. How "
                     "many cookies does each friend receive?"], n=name, t=t, k=k, f=f)
    return q, f"{t} * {k} / {f}", Fraction(t * k, f)


def _savings(rng: random.Random) -> Problem:
    name, a, w = rng.choice(NAMES), rng.randint(5, 40), rng.randint(4, 20)
    b, c = rng.randint(5, a * w // 3), rng.randint(1, a * w // 3)
    thing = rng.choice(THINGS)
    q = phrase(rng, ["{n} saves ${a} a week for {w} weeks, then spends ${b} on a {t} and ${c} on lunch. How many "
                     "dollars does {n} have left?",
                     "Every week for {w} weeks, {n} puts ${a} aside. Then {n} buys a {t} for ${b} and a book for ${c}. "
                     "How much money is left?"], n=name, a=a, w=w, b=b, c=c, t=thing)
    return q, f"{a} * {w} - {b} - {c}", Fraction(a * w - b - c)


def _trip(rng: random.Random) -> Problem:
    v1, h1, v2, h2 = rng.randint(30, 90), rng.randint(2, 6), rng.randint(20, 80), rng.randint(1, 5)
    vehicle = rng.choice(["train", "bus", "car", "truck"])
    q = phrase(rng, ["A {v} travels at {a} km per hour for {h} hours and then at {b} km per hour for {g} hours. How "
                     "many kilometres does it travel in total?",
                     "For {h} hours a {v} goes {a} km each hour; after that it goes {b} km each hour for {g} more "
                     "hours. What total distance, in km, does it cover?"], v=vehicle, a=v1, h=h1, b=v2, g=h2)
    return q, f"{v1} * {h1} + {v2} * {h2}", Fraction(v1 * h1 + v2 * h2)


def _discount(rng: random.Random) -> Problem:
    name, thing = rng.choice(NAMES), rng.choice(THINGS)
    p, d, k = rng.randint(2, 20) * 10, rng.choice([10, 20, 30, 40, 50]), rng.randint(2, 5)
    total = Fraction(p) * (100 - d) / 100 * k
    bill = int(total) + rng.choice([10, 20, 50, 100]) - int(total) % 10
    q = phrase(rng, ["A {t} costs ${p}. During a sale it is {d}% off. {n} buys {k} of them and pays with ${b}. How "
                     "much change does {n} get?",
                     "{n} buys {k} copies of a {t} priced at ${p}, each with a {d}% discount, and pays ${b}. How many "
                     "dollars of change should {n} receive?"], t=thing, p=p, d=d, n=name, k=k, b=bill)
    return q, f"{bill} - ({p} - {p} * {d} / 100) * {k}", bill - total


def _wages(rng: random.Random) -> Problem:
    name, h, d, w, t = rng.choice(NAMES), rng.randint(3, 9), rng.randint(3, 7), rng.randint(9, 30), rng.randint(2, 9)
    q = phrase(rng, ["{n} works {h} hours a day for {d} days at ${w} per hour and pays ${t} for the bus each day. How "
                     "much money does {n} keep?",
                     "Over {d} days, {n} works {h} hours daily, earning ${w} an hour, and spends ${t} on travel every "
                     "day. How many dollars are left after travel?"], n=name, h=h, d=d, w=w, t=t)
    return q, f"{h} * {d} * {w} - {t} * {d}", Fraction(h * d * w - t * d)


def _orchard(rng: random.Random) -> Problem:
    a, b, c = rng.randint(3, 12), rng.randint(4, 15), rng.randint(3, 10) * 4  # c * p / 100 whole
    p, price, cost = rng.choice([25, 50, 75, 100]), rng.randint(1, 3), rng.randint(10, 90)
    q = phrase(rng, ["A farmer has {a} rows of {b} apple trees, and each tree gives {c} apples. He sells {p}% of the "
                     "apples at ${r} each and spends ${s} on crates. How many dollars of the sales are left after "
                     "paying for the crates?",
                     "An orchard has {a} rows with {b} trees in each row; every tree yields {c} apples. The owner "
                     "sells {p}% of all the apples for ${r} apiece and pays ${s} for crates. What is the profit in "
                     "dollars?"],
               a=a, b=b, c=c, p=p, r=price, s=cost)
    return q, f"{a} * {b} * {c} * {p} / 100 * {price} - {cost}", Fraction(a * b * c * p, 100) * price - cost


def _stock(rng: random.Random) -> Problem:
    a, b, c, d = rng.randint(5, 20), rng.randint(6, 24), rng.randint(3, 15), rng.randint(2, 10)
    q = phrase(rng, ["A shop starts the week with {a} boxes of {b} pens. It sells {c} pens on Monday and twice as many "
                     "on Tuesday, then receives {d} more boxes. How many pens does it have now?",
                     "There are {a} boxes with {b} pens each in a shop. On Monday {c} pens are sold, on Tuesday twice "
                     "that number, and on Wednesday {d} new boxes arrive. How many pens are in the shop?"],
               a=a, b=b, c=c, d=d)
    return q, f"{a} * {b} - {c} - 2 * {c} + {d} * {b}", Fraction(a * b - 3 * c + d * b)


# family -> (level, draw); the level is the number of steps a worked solution needs (1 for bare arithmetic).
FAMILIES: dict[str, tuple[int, Callable[[random.Random], Problem]]] = {
    "bare_arithmetic": (1, _bare), "percent_of": (1, _percent), "one_step": (1, _one_step),
    "change": (2, _change), "share": (2, _share), "savings": (3, _savings), "trip": (3, _trip),
    "discount": (4, _discount), "wages": (4, _wages), "orchard": (5, _orchard), "stock": (5, _stock),
}


def _family_stream(name: str, level: int, draw: Callable[[random.Random], Problem]):
    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        seen: set[str] = set()
        for _ in range(2000):  # draws are cheap; a family yields far more than any file needs
            question, expression, value = draw(rng)
            if question in seen:
                continue
            seen.add(question)
            exact = recompute(expression)
            if exact is None or exact != format_number(value):
                yield Drop(name, "the two computations disagree", f"{expression}: {exact} vs {value}")
                continue
            if value.denominator != 1 or value < 0:
                yield Drop(name, "answer not a whole number >= 0 (redrawn)", f"{expression} = {value}")
                continue
            yield Candidate(Task(id="pending", suite="arith", level=level, query=question, checker="numeric",
                                 expected=exact, origin=f"generated:{name}",
                                 note=f"computed: {expression} = {exact}"), (f"family:{name}",))
    return stream


def gsm_steps(answer: str) -> int:
    """Solution lines before ``#### <answer>``."""
    return sum(1 for s in answer.split("####")[0].splitlines() if s.strip())


def _annotated(answer: str) -> str | None:
    """The value of the solution's last calculator annotation ``<<expr=value>>``, evaluated (not read)."""
    found = re.findall(r"<<([^=<>]+)=[^<>]*>>", answer)
    return recompute(found[-1].replace("x", "*")) if found else None


def _hand_items() -> set[str]:
    path = SUITES["arith"]
    return {t.id.removeprefix("arith-") for t in read_tasks(path)} if path.is_file() else set()


def _gsm_stream(level: int, path: Path):
    def stream(rng: random.Random) -> Iterator[Candidate | Drop]:
        raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        hand = _hand_items()
        items = [i for i in load_gsm8k(path) if i.qid not in hand]
        rng.shuffle(items)
        for item in items:
            line = int(item.qid.split("-")[1])
            answer = raw[line - 1]["answer"]
            if min(max(gsm_steps(answer), 2), 5) != level:
                continue
            if _annotated(answer) != item.reference:
                yield Drop("gsm8k", "calculator annotations do not reproduce the answer", item.qid)
                continue
            yield Candidate(Task(id="pending", suite="arith", level=level, query=item.question, checker="numeric",
                                 expected=item.reference, origin=f"{path.relative_to(PROJECT_ROOT).as_posix()}:{line}"
                                 if path.is_relative_to(PROJECT_ROOT) else f"{path}:{line}",
                                 note="GSM8K reference; the last calculator annotation recomputes it "
                                      f"({gsm_steps(answer)} steps)"), (item.qid,))
    return stream


def arith_kinds(gsm8k: Path = GSM8K) -> list[Kind]:
    kinds = [Kind(name, level, _family_stream(name, level, draw)) for name, (level, draw) in FAMILIES.items()]
    kinds += [Kind("gsm8k", level, _gsm_stream(level, gsm8k)) for level in (2, 3, 4, 5)]
    return kinds
