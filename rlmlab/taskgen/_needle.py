"""The needle suite: one or several needle sentences planted at seeded depths in a haystack of real Rust sources
(a ``//`` comment) or of generated service logs (a log line), and a question that asks for the value, all the
values, or how many there are.

A value is drawn again while the haystack already contains it, and a haystack that already holds a sentence of
the topic is not used. The check reads the written file: the topic's sentence regex must match exactly the planted
needles, on the planted lines, each value must occur exactly once in the whole text, and the answer is taken from
those matches.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from rlmlab.taskgen._common import Drop, Kind, phrase
from rlmlab.taskgen._haystack import Haystack, log_haystack, plant, rust_haystack
from rlmlab.taskgen._longctx import Built, ContextFiles, context_stream, long_task

__all__ = ["needle_kinds", "TOPICS", "Topic"]

GREEK = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda", "sigma", "omega"]
ADJ = ["amber", "silent", "crimson", "frozen", "gentle", "hollow", "lucky", "rapid", "velvet", "wicked"]
ANIMALS = ["falcon", "otter", "badger", "heron", "lynx", "marmot", "newt", "puffin", "walrus", "yak"]
WORDS = ["Harbor", "Maple", "Cobalt", "Pepper", "Orchid", "Granite", "Willow", "Saffron", "Tundra", "Comet"]


@dataclass(frozen=True)
class Topic:
    """A needle sentence (``{place}`` and ``{value}`` filled in), the places and values it takes, and the
    question forms: ``one`` names a single needle, ``all`` asks for every value, ``count`` for how many."""

    key: str
    sentence: str
    places: tuple[str, ...]
    value: Callable[[random.Random], str]
    value_re: str
    one: tuple[str, ...]
    all: tuple[str, ...]
    count: tuple[str, ...]

    def regex(self) -> re.Pattern[str]:
        pattern = re.escape(self.sentence)
        pattern = pattern.replace(re.escape("{place}"), r"(?P<place>[^\n]+?)")
        return re.compile(pattern.replace(re.escape("{value}"), f"(?P<value>{self.value_re})"))


TOPICS = (
    Topic("vault", "The access code for the {place} vault is {value}.",
          ("north", "harbour", "cellar", "river", "tower", "garden", "eastern", "library", "station", "chapel"),
          lambda r: f"{r.randint(1000, 9999)}-{r.choice(GREEK)}", r"\d{4}-[a-z]+",
          ("What is the access code for the vault mentioned somewhere in this text?",
           "Somewhere in this text someone wrote down the access code for the {place} vault. What is it?",
           "Find the access code for the {place} vault. Answer with the code only."),
          ("Access codes for several vaults are written somewhere in this text. List every vault access code, one "
           "per line.", "Which vault access codes does this text give? List all of them."),
          ("How many vault access codes are written down somewhere in this text?",
           "Count the vaults whose access code this text gives. Answer with a number.")),
    Topic("launch", "The launch password for Project {place} is {value}.",
          ("Heron", "Juniper", "Basalt", "Lantern", "Meridian", "Quartz", "Tidewater", "Kestrel", "Ember", "Solstice"),
          lambda r: f"{r.choice(ADJ)}-{r.choice(ANIMALS)}-{r.randint(10, 99)}", r"[a-z]+-[a-z]+-\d{2}",
          ("A launch password is hidden in this text. What is it?",
           "What is the launch password for Project {place}, according to this text?",
           "Look through the text for the password that launches Project {place} and give it."),
          ("Several projects have their launch password hidden in this text. List all the launch passwords.",
           "Give every project launch password that appears in this text, one per line."),
          ("How many launch passwords for projects are hidden in this text?",
           "For how many projects does this text give a launch password?")),
    Topic("wifi", "The guest Wi-Fi password at the {place} office is {value}.",
          ("Lisbon", "Osaka", "Tallinn", "Quito", "Accra", "Perth", "Bergen", "Cusco", "Dakar", "Hanoi"),
          lambda r: f"{r.choice(WORDS)}{r.randint(1000, 9999)}", r"[A-Z][a-z]+\d{4}",
          ("What is the guest Wi-Fi password mentioned somewhere in this text?",
           "Someone noted the guest Wi-Fi password of the {place} office in this text. What is it?",
           "Which password gets a guest onto the Wi-Fi at the {place} office?"),
          ("This text gives guest Wi-Fi passwords for several offices. List all of them.",
           "What are all the guest Wi-Fi passwords written in this text? One per line."),
          ("How many offices have their guest Wi-Fi password written in this text?",
           "Count the guest Wi-Fi passwords given in this text.")),
    Topic("locker", "The combination for locker {place} is {value}.",
          ("A3", "B7", "C2", "D9", "E4", "F1", "G8", "H5", "J6", "K2"),
          lambda r: f"{r.randint(10, 99)}-{r.randint(10, 99)}-{r.randint(10, 99)}", r"\d{2}-\d{2}-\d{2}",
          ("What is the locker combination written somewhere in this text?",
           "This text mentions the combination for locker {place}. What is it?",
           "Find the combination that opens locker {place}."),
          ("Combinations for several lockers are scattered through this text. List every locker combination.",
           "Give all the locker combinations this text mentions, one per line."),
          ("How many locker combinations does this text mention?",
           "Count the lockers whose combination is written in this text.")),
)


def _code_needle(sentence: str) -> Callable[[str], str]:
    return lambda previous: f"{previous[:len(previous) - len(previous.lstrip())]}// {sentence}\n"


def _log_needle(sentence: str, rng: random.Random) -> Callable[[str], str]:
    pid = rng.randint(100, 32000)

    def line(previous: str) -> str:
        fields = previous.split(" ", 2)
        when, host = (fields[0], fields[1]) if len(fields) == 3 else ("2026-01-01T00:00:00.000Z", "ops-1")
        return f"{when} {host} ops-notes[{pid}]: NOTICE {sentence}\n"
    return line


def _draft(kind: str, level: int, size: int, haystack: str | None, counts: tuple[int, int],
           rng: random.Random) -> Built | Drop:
    topic = rng.choice(TOPICS)
    k = rng.randint(*counts)
    where = haystack or rng.choice(["code", "logs"])
    hay: Haystack = (rust_haystack if where == "code" else log_haystack)(rng, max(size - 20 * k, 200))
    regex = topic.regex()
    if any(regex.search(block) for block in hay.blocks):
        return Drop(kind, "the haystack already holds a needle sentence", hay.origin[:120])
    places, values = rng.sample(topic.places, k), []
    for _ in range(k):
        for _ in range(50):
            value = topic.value(rng)
            if value not in values and not hay.contains(value):
                values.append(value)
                break
        else:
            return Drop(kind, "no value unique in the haystack", topic.key)
    sentences = [topic.sentence.format(place=p, value=v) for p, v in zip(places, values)]
    depths = [rng.uniform(0.02, 0.98) for _ in range(k)]
    makers = [_code_needle(s) if hay.kind == "code" else _log_needle(s, rng) for s in sentences]
    lines = plant(hay, makers, depths)
    if kind in ("needle_code", "needle_logs"):
        query, checker, expected = phrase(rng, topic.one, place=places[0]), "contains", values[0]
    elif kind == "needles_list":
        query, checker, expected = phrase(rng, topic.all), "set", sorted(values)
    else:
        query, checker, expected = phrase(rng, topic.count), "numeric", k
    origin = f"generated: {topic.key} needle(s) in {hay.origin}"
    planted = ", ".join(f"{v!r} at {d:.0%} (line {n})" for v, d, n in zip(values, depths, lines))

    def verify(text: str, name: str, tokens: int):
        found = list(regex.finditer(text))
        got = {m["value"]: text.count("\n", 0, m.start()) + 1 for m in found}
        if len(found) != k or got != dict(zip(values, lines)):
            return Drop(kind, "the needles are not found as planted", f"{len(found)} matches for {k} needles")
        if any(text.count(v) != 1 for v in values):
            return Drop(kind, "a needle value occurs more than once", topic.key)
        answer = {"contains": found[0]["value"], "set": sorted(got), "numeric": len(found)}[checker]
        if answer != expected:
            return Drop(kind, "the written text gives another answer", f"{answer!r} vs {expected!r}")
        return long_task(suite="needle", level=level, query=query, checker=checker, expected=expected, name=name,
                         tokens=tokens, origin=origin,
                         note=f"planted {planted}; re-found in the written file by the sentence regex, each value "
                              "exactly once in the whole text")
    return Built(hay.blocks, verify)


KINDS = {  # kind -> (level, haystack or None for a seeded choice, (min, max) needles)
    "needle_code": (1, "code", (1, 1)), "needle_logs": (1, "logs", (1, 1)),
    "needles_list": (2, None, (3, 5)), "needles_count": (2, None, (2, 6)),
}


def needle_kinds(size_tokens: int, files: ContextFiles) -> list[Kind]:
    """The needle suite's kinds over contexts of about ``size_tokens`` tokens written into ``files``."""
    return [Kind(name, level, context_stream(
        name, files, lambda rng, name=name, level=level, hay=hay, counts=counts:
        _draft(name, level, size_tokens, hay, counts, rng)))
        for name, (level, hay, counts) in KINDS.items()]
