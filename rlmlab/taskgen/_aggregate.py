"""The aggregate suite (OOLONG-like): many short records, each needing a small judgement (which category a support
ticket is about, whether a product review is happy or unhappy), and a question whose answer is a count or a
distribution over the whole context.

The generator chooses each record's label, then writes the record from that label's phrases (:data:`TICKETS`,
:data:`REVIEWS`) between neutral openers and closers: a reader tells the label from the wording, while no record
names its label. The check parses the written file back line by line, labels every record again from which
label's phrases it contains (exactly one label must match), and recounts.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable
from datetime import date, timedelta

from rlmlab.taskgen._common import Drop, Kind, phrase
from rlmlab.taskgen._longctx import Built, ContextFiles, draft_kinds, long_task
from rlmlab.tokens import count_tokens

__all__ = ["aggregate_kinds", "relabel", "TICKETS", "REVIEWS", "RECORD_RE"]

TICKETS: dict[str, tuple[str, ...]] = {
    "billing": ("I was charged twice for my {month} plan", "the invoice shows an amount I never agreed to",
                "my card was declined although there is money on it", "the refund you promised has not reached me",
                "the monthly fee went up without any notice", "there is a payment on my statement I do not recognise",
                "I need a receipt with our company tax number on it", "you took money after I cancelled",
                "the discount code was not taken off the total", "I paid {amount} but the order says unpaid"),
    "delivery": ("the parcel never arrived", "the courier left the box at the wrong address",
                 "the tracking number has not moved for {days} days", "the package came crushed and the contents broke",
                 "it says handed over but nothing was at my door", "my order is stuck at the depot",
                 "only two of the three items were in the box", "the driver did not ring and took it back again",
                 "the parcel went to my old address", "the box was soaked through when it came"),
    "technical": ("the app crashes as soon as I open the settings page", "the website shows error 500 on checkout",
                  "the app freezes whenever I upload a photo", "sync between my phone and laptop stopped working",
                  "the export button does nothing", "notifications arrive hours late",
                  "search results never finish loading", "the app drains my battery since the last update",
                  "videos stutter and then stop playing", "the page layout is broken on my tablet"),
    "account": ("I forgot my password and the reset email never comes", "I want to change the email on my profile",
                "someone else seems to have signed in to my profile", "please close my profile and erase my data",
                "the two-factor code is not accepted", "I need to merge my two profiles into one",
                "my username is spelled wrong and I cannot edit it", "I am locked out after too many attempts",
                "I want to add my partner as a second user", "the sign-in link says it has expired"),
}
REVIEWS: dict[str, tuple[str, ...]] = {
    "positive": ("works exactly as described", "sturdy and well made", "I would buy it again without a second thought",
                 "it exceeded what I hoped for", "my kids love it", "worth every penny", "easy to set up in minutes",
                 "the quality surprised me in a good way", "it still looks new after months of use",
                 "does the job perfectly"),
    "negative": ("it stopped working after {days} days", "the handle snapped the first time I used it",
                 "much smaller than the photos suggest", "I sent it back, a waste of money",
                 "it smells of burnt plastic", "the instructions are useless and parts were missing",
                 "it scratched within a week", "louder than a lawnmower", "the battery barely lasts an hour",
                 "I regret buying it"),
}
OPENERS = ("Hello.", "Hi team.", "Good morning.", "", "Quick one.", "Hey there.", "Dear support team.")
CLOSERS = ("Thanks.", "Please help.", "Order ref {ref}.", "Can someone look at this today?", "", "Regards.",
           "Second time I write about this.")
CONTEXTS = ("Bought it for my sister.", "Used it for {days} days now.", "Got it in the sale.", "",
            "Second one I have owned.", "Ordered the {colour} one.", "")
PRODUCTS = ("kettle", "desk lamp", "backpack", "blender", "headphones", "office chair", "rice cooker", "yoga mat")
NAMES = ("Hana", "Omar", "Lena", "Tomas", "Aiko", "Ravi", "Sofia", "Kwame", "Elif", "Marco", "Nadia", "Pavel",
         "Ines", "Jun", "Greta", "Samir")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October")
CHANNELS = ("email", "chat", "phone", "web form")
COLOURS = ("red", "grey", "green", "white", "black")
RECORD_RE = re.compile(r"^(Ticket|Review) (\d{6}) \| (\d{4}-\d{2}-\d{2}) \| ([^|\n]+) \| ([^|\n:]+): (.+)$", re.M)
ABOUT = {"billing": "billing", "delivery": "delivery", "technical": "technical problems",
         "account": "account access"}
CATEGORY_HELP = ("billing (charges, payments, refunds), delivery (parcels and couriers), technical (the app or "
                 "website misbehaving) or account (sign-in, passwords, profile settings)")


def _fill(text: str, rng: random.Random) -> str:
    return text.format(month=rng.choice(MONTHS), amount=f"{rng.randint(5, 400)}.{rng.randint(0, 99):02d} EUR",
                       days=rng.randint(2, 30), ref=f"#{rng.randint(10000, 99999)}", colour=rng.choice(COLOURS))


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _record(rng: random.Random, number: int, day: date, label: str, tickets: bool) -> str:
    vocab = (TICKETS if tickets else REVIEWS)[label]
    said = [_fill(p, rng) for p in rng.sample(vocab, rng.choice([1, 1, 2]))]
    who = f"{rng.choice(NAMES)} {chr(rng.randint(65, 90))}."
    if tickets:
        body = " ".join(x for x in (rng.choice(OPENERS), _upper(", and ".join(said)) + ".",
                                    _fill(rng.choice(CLOSERS), rng)) if x)
        return f"Ticket {number:06d} | {day.isoformat()} | {rng.choice(CHANNELS)} | {who}: {body}\n"
    body = " ".join(x for x in (_fill(rng.choice(CONTEXTS), rng), _upper("; ".join(said)) + ".") if x)
    return f"Review {number:06d} | {day.isoformat()} | {rng.choice(PRODUCTS)} | {who}: {body}\n"


def _matchers(vocab: dict[str, tuple[str, ...]]) -> dict[str, re.Pattern[str]]:
    """One regex per label: any of its phrases in lower case, a ``{slot}`` matching any short text."""
    def one(p: str) -> str:
        return ".{1,30}?".join(re.escape(part) for part in re.split(r"\{\w+\}", p.lower()))
    return {label: re.compile("|".join(one(p) for p in phrases)) for label, phrases in vocab.items()}


def relabel(text: str, vocab: dict[str, tuple[str, ...]]) -> tuple[Counter, int, list[str]]:
    """(labels counted from the records of ``text``, records read, problems): each record's label is the one
    whose phrases it contains; a record matching no label, several labels, or naming a label is a problem."""
    matchers, counts, problems, n = _matchers(vocab), Counter(), [], 0
    names = re.compile(r"\b(" + "|".join(vocab) + r")\b")
    for m in RECORD_RE.finditer(text):
        n += 1
        body = m[6].lower()
        hits = [label for label, rx in matchers.items() if rx.search(body)]
        if len(hits) != 1 or names.search(body):
            problems.append(f"{m[1]} {m[2]}: {hits or 'no label'}")
        else:
            counts[hits[0]] += 1
    return counts, n, problems


def _draft(kind: str, level: int, size: int, rng: random.Random) -> Built | Drop:
    tickets = kind != "count_sentiment"
    vocab = TICKETS if tickets else REVIEWS
    labels = list(vocab)
    weights = [rng.uniform(0.3, 3.0) for _ in labels]
    lines, made, total, number = [], Counter(), 0, rng.randint(1000, 90000)
    day = date(2025, 1, 1) + timedelta(days=rng.randrange(365))
    while total < size:
        label = rng.choices(labels, weights)[0]
        number += rng.randint(1, 9)
        day += timedelta(days=rng.random() < 0.05)
        line = _record(rng, number, day, label, tickets)
        lines.append(line)
        made[label] += 1
        total += count_tokens(line)
    if len(made) < len(labels):
        return Drop(kind, "a label drew no record (redrawn)", f"{dict(made)}")
    records = len(lines)
    noun = "tickets" if tickets else "reviews"
    if kind == "count_category":
        target = rng.choice(labels)
        query = phrase(rng, ["Each support ticket below is about one of: {h}. How many of the tickets are about "
                             "{c}?", "How many of these support tickets concern {c}? Every ticket is about one of: "
                             "{h}.", "Count the tickets about {c}. (Each ticket is about exactly one of {h}.)"],
                       h=CATEGORY_HELP, c=ABOUT[target])
        checker, expected = "numeric", made[target]
    elif kind == "category_distribution":
        query = phrase(rng, ["Each support ticket below is about one of: {h}. How many tickets are there in each "
                             "category? Answer with one line per category, as `category: count`.",
                             "Sort the tickets into the categories {h}, and give the number in each, one "
                             "`category: count` line per category."], h=CATEGORY_HELP)
        checker, expected = "set", [f"{label}:{made[label]}" for label in labels]
    else:
        target = rng.choice(labels)
        query = phrase(rng, {"negative": ["How many of these product reviews are negative, from an unhappy buyer?",
                                          "Count the reviews whose writer was disappointed with the product."],
                             "positive": ["How many of these product reviews are positive, from a happy buyer?",
                                          "Count the reviews whose writer was pleased with the product."]}[target])
        checker, expected = "numeric", made[target]
    answer: Callable[[Counter], object] = {
        "numeric": lambda c: c[target], "set": lambda c: [f"{label}:{c[label]}" for label in labels]}[checker]
    shares = ", ".join(f"{label} {made[label]}" for label in labels)

    def verify(text: str, name: str, tokens: int):
        counts, n, problems = relabel(text, vocab)
        if problems:
            return Drop(kind, "a record does not carry exactly one label", problems[0])
        if n != records or counts != made or answer(counts) != expected:
            return Drop(kind, "the recount differs", f"{n} records, {dict(counts)} vs {dict(made)}")
        return long_task(suite="aggregate", level=level, query=query, checker=checker, expected=expected,
                         name=name, tokens=tokens, origin=f"generated: {records} {noun} from seeded phrase lists",
                         note=f"labels chosen by the generator ({shares}); recounted from the written file by "
                              "parsing every record and labelling it by the phrases it contains")
    return Built(lines, verify)


KINDS = {"count_category": 3, "count_sentiment": 3, "category_distribution": 4}


def aggregate_kinds(size_tokens: int, files: ContextFiles) -> list[Kind]:
    """The aggregate suite's kinds over contexts of about ``size_tokens`` tokens written into ``files``."""
    return draft_kinds(KINDS, files, lambda name, level, rng: _draft(name, level, size_tokens, rng))
