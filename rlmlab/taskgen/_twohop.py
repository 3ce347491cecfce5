"""The twohop suite: a collection of short documents (host records, staff profiles, incident reports), each under a
``=== DOC <n> | <title> ===`` line, and a question whose clue picks one document that points to another:

- ``office_of_owner`` (L2): host -> its owner -> the owner's profile -> office city;
- ``owner_of_affected_host`` (L2): incident report -> the host it names -> that host's owner;
- ``cause_by_owner`` (L3): host -> its owner -> the one report the owner wrote -> its root cause.

People, hosts and reports are drawn in rounds until the size is reached, then the documents are shuffled. A
question is asked only where every hop is unique (one record per host, one profile per person, exactly one report
by the owner). The check parses the written file back into documents and follows the hops there.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict

from rlmlab.taskgen._common import Drop, Kind, phrase
from rlmlab.taskgen._longctx import Built, ContextFiles, draft_kinds, long_task
from rlmlab.tokens import count_tokens

__all__ = ["twohop_kinds", "DOC_RE", "parse_docs"]

FIRST = ("Priya", "Tomas", "Aiko", "Kwame", "Elif", "Marco", "Nadia", "Pavel", "Ines", "Jun", "Greta", "Samir",
         "Hana", "Omar", "Lena", "Ravi", "Sofia", "Diego", "Mira", "Anton", "Chloe", "Farid", "Yusuf", "Lucia",
         "Bram", "Keiko", "Tariq", "Vera", "Emil", "Zara", "Noor", "Felix", "Ada", "Ivo", "Rosa", "Malik",
         "Oskar", "Amara", "Luca", "Selin", "Hugo", "Maya", "Ken", "Leila", "Rui", "Dara", "Nils", "Thea")
LAST = ("Raman", "Novak", "Tanaka", "Mensah", "Demir", "Rossi", "Haddad", "Petrov", "Silva", "Park", "Berg",
        "Khan", "Okafor", "Larsen", "Costa", "Ibrahim", "Moreau", "Fischer", "Varga", "Nakamura", "Quispe",
        "Horvat", "Lindqvist", "Adeyemi", "Sato", "Kowalski", "Dubois", "Alvarez", "Nguyen", "Iyer", "Weber",
        "Osei", "Castro", "Jensen", "Romero", "Volkov", "Achebe", "Brennan", "Ito", "Mendes", "Kaur", "Lund",
        "Ferreira", "Yilmaz", "Abbott", "Hale", "Marin", "Oduya", "Pereira", "Santos")
MIDDLE = ("Ann", "Lee", "Max", "Rae", "Jo", "Kai", "Sam", "Eve", "Ray", "Liv", "Mae", "Jay", "Sol", "Ines", "Tom",
          "Bea", "Ole", "Uma", "Ezra", "Ida", "Noa", "Remy", "Cy", "Dov", "Fay", "Gus", "Hal", "Ilse", "Kit", "Lou")
ROLES = {"db": "PostgreSQL primary", "web": "nginx front end", "cache": "Redis cache", "queue": "RabbitMQ broker",
         "api": "API gateway", "batch": "batch worker", "search": "search node", "mail": "mail relay"}
SITES = ("Frankfurt", "Dublin", "Virginia", "Singapore", "Sao Paulo", "Tokyo")
CITIES = ("Lisbon", "Osaka", "Tallinn", "Quito", "Accra", "Perth", "Bergen", "Cusco", "Dakar", "Hanoi", "Krakow",
          "Montreal", "Nairobi", "Porto", "Seville", "Tbilisi")
TEAMS = ("storage", "network", "platform", "payments", "identity", "observability", "data", "release")
CAUSES = ("an expired TLS certificate", "a full disk on the log volume", "a DNS record pointing at the old load "
          "balancer", "a memory leak in the session cache", "a bad firewall rule pushed by automation",
          "clock drift after an NTP outage", "a schema migration that locked the orders table",
          "connection pool exhaustion", "a kernel update that disabled the NIC offload", "a typo in the feature "
          "flag config", "a runaway cron job", "a split brain between two replicas", "an exhausted API rate limit",
          "a corrupted package mirror", "a power cut in one rack", "an unrotated service password")
IMPACTS = ("checkout errors for {m} minutes", "slow logins for {m} minutes", "{m} minutes of lost metrics",
           "a partial outage in one region for {m} minutes", "delayed emails for {m} minutes")
DOC_RE = re.compile(r"^=== DOC (\d+) \| (.+?) ===\n(.+)$", re.M)
_HOST = re.compile(r"^host record: (\S+)$")
_OWNER = re.compile(r"(?:^|(?<=\. ))(?:It is owned by ([^.]+)|Owner: ([^.]+)|([^.]+) is responsible for it)\.")
_PROFILE = re.compile(r"^staff profile: (.+)$")
_CITY = re.compile(r"works from the (.+?) office")
_REPORT = re.compile(r"^incident report (IR-\d+)$")
_AUTHOR = re.compile(r"(?:Written by|Filed by|Author:) ([^.;]+?)(?: on \d{4}-\d{2}-\d{2})?[.;]")
_AFFECTED = re.compile(r"Affected host: (\S+?)\.")
_CAUSE = re.compile(r"Root cause: ([^.]+)\.")


def _name(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if name in taken:
            name = f"{rng.choice(FIRST)} {rng.choice(MIDDLE)} {rng.choice(LAST)}"
        if name not in taken:
            taken.add(name)
            return name


def _host_doc(rng: random.Random, host: str, owner: str) -> tuple[str, str]:
    owned = rng.choice([f"It is owned by {owner}.", f"Owner: {owner}.", f"{owner} is responsible for it."])
    return (f"host record: {host}", f"{host} is a {ROLES[host.split('-')[0]]} in rack {rng.choice('ABCDEFG')}"
            f"{rng.randint(1, 12)} at the {rng.choice(SITES)} site. {owned} Last patched on 2026-"
            f"{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}.")


def _report_doc(rng: random.Random, rid: str, author: str, host: str, cause: str) -> tuple[str, str]:
    day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    by = rng.choice([f"Written by {author} on {day}.", f"Filed by {author} on {day}.", f"Author: {author}; {day}."])
    impact = rng.choice(IMPACTS).format(m=rng.randint(3, 240))
    return (f"incident report {rid}", f"{by} Affected host: {host}. Impact: {impact}. Root cause: {cause}. "
            f"Follow-up owner: the {rng.choice(TEAMS)} team.")


def _render(number: int, title: str, body: str) -> str:
    return f"=== DOC {number:05d} | {title} ===\n{body}\n\n"


def _build(rng: random.Random, size: int):
    """The documents (title, body) in a seeded order, and the facts they state."""
    people: dict[str, str] = {}  # name -> city
    hosts: dict[str, str] = {}  # host -> owner
    reports: dict[str, tuple[str, str, str]] = {}  # id -> (author, host, cause)
    docs, total, taken, numbers, names, host_names = [], 0, set(), defaultdict(int), [], []
    while total < size:  # rounds of a profile, two hosts and one to three reports, stopping at the size
        for what in ["profile", "host", "host"] + ["report"] * rng.choice([1, 2, 2, 3]):
            if what == "profile":
                name, city = _name(rng, taken), rng.choice(CITIES)
                people[name] = city
                names.append(name)
                doc = (f"staff profile: {name}", f"{name} is on the {rng.choice(TEAMS)} team and works from the "
                                                 f"{city} office. Extension {rng.randint(1000, 9999)}.")
            elif what == "host":
                role = rng.choice(list(ROLES))
                numbers[role] += rng.randint(1, 3)
                host = f"{role}-{numbers[role]}"
                hosts[host] = rng.choice(names)
                host_names.append(host)
                doc = _host_doc(rng, host, hosts[host])
            else:
                rid = f"IR-{rng.randint(1000, 99999)}"
                if rid in reports:
                    continue
                reports[rid] = (rng.choice(names), rng.choice(host_names), rng.choice(CAUSES))
                doc = _report_doc(rng, rid, *reports[rid])
            docs.append(doc)
            total += count_tokens(_render(0, *doc))
            if total >= size:
                break
    rng.shuffle(docs)
    return docs, people, hosts, reports


def parse_docs(text: str) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, list[tuple[str, ...]]]]:
    """(host -> owners, person -> cities, author -> [(report id, host, cause)]) as the written text states them;
    a list longer than one is a fact stated twice."""
    owners, cities, by_author = defaultdict(list), defaultdict(list), defaultdict(list)
    for m in DOC_RE.finditer(text):
        title, body = m[2], m[3]
        if found := _HOST.match(title):
            owner = _OWNER.search(body)
            owners[found[1]].append(next(g for g in owner.groups() if g) if owner else "")
        elif found := _PROFILE.match(title):
            city = _CITY.search(body)
            cities[found[1]].append(city[1] if city else "")
        elif found := _REPORT.match(title):
            author, host, cause = _AUTHOR.search(body), _AFFECTED.search(body), _CAUSE.search(body)
            by_author[author[1] if author else ""].append(
                (found[1], host[1] if host else "", cause[1] if cause else ""))
    return owners, cities, by_author


def _draft(kind: str, level: int, size: int, rng: random.Random) -> Built | Drop:
    docs, people, hosts, reports = _build(rng, size)
    written = defaultdict(list)
    for rid, (author, _, _) in reports.items():
        written[author].append(rid)
    if kind == "owner_of_affected_host":
        rid = rng.choice(sorted(reports))
        host = reports[rid][1]
        query = phrase(rng, ["Incident report {r} names an affected host. Who owns that host?",
                             "Who is the owner of the host that incident report {r} says was affected?"], r=rid)
        expected, path = hosts[host], f"{rid} -> {host} -> {hosts[host]}"
    else:
        fit = sorted(h for h, o in hosts.items() if kind == "office_of_owner" or len(written[o]) == 1)
        if not fit:
            return Drop(kind, "no host whose owner wrote exactly one report (redrawn)")
        host = rng.choice(fit)
        owner = hosts[host]
        if kind == "office_of_owner":
            query = phrase(rng, ["Which city's office does the owner of host {h} work from?",
                                 "The engineer who owns host {h} works from an office. In which city?"], h=host)
            expected, path = people[owner], f"{host} -> {owner} -> {people[owner]}"
        else:
            rid = written[owner][0]
            query = phrase(rng, ["The incident report written by the engineer who owns host {h} names a root cause. "
                                 "What is it?", "What root cause is given in the incident report by the owner of "
                                 "host {h}? Quote it as the report words it."], h=host)
            cause = reports[rid][2]
            bare = re.sub(r"^(an?|the) ", "", cause)  # "an expired TLS certificate" or "expired TLS certificate"
            expected, path = [cause, bare] if bare != cause else cause, f"{host} -> {owner} -> {rid} -> {cause}"
    pieces = (_render(i, title, body) for i, (title, body) in enumerate(docs, 1))
    counts = f"{len(docs)} documents: {len(people)} profiles, {len(hosts)} hosts, {len(reports)} reports"
    start = host if kind != "owner_of_affected_host" else rid

    def verify(text: str, name: str, tokens: int):
        owners, cities, by_author = parse_docs(text)
        if kind == "owner_of_affected_host":
            found = [r for rs in by_author.values() for r in rs if r[0] == start]
            hops = [found[0][1]] if len(found) == 1 else []
            answer = owners[hops[0]] if hops else []
        else:
            hops = owners.get(start, [])
            answer = [] if len(hops) != 1 else cities.get(hops[0], []) if kind == "office_of_owner" else [
                r[2] for r in by_author.get(hops[0], [])]
        if len(hops) != 1 or len(answer) != 1:
            return Drop(kind, "a hop is not unique in the written documents", f"{start}: {hops} -> {answer}")
        if answer[0] != (expected[0] if isinstance(expected, list) else expected):
            return Drop(kind, "the written documents give another answer", f"{answer[0]!r} vs {expected!r}")
        return long_task(suite="twohop", level=level, query=query, checker="contains", expected=expected, name=name,
                         tokens=tokens, origin=f"generated: {counts}",
                         note=f"hops {path}; followed again by parsing the written documents")
    return Built(pieces, verify)


KINDS = {"office_of_owner": 2, "owner_of_affected_host": 2, "cause_by_owner": 3}


def twohop_kinds(size_tokens: int, files: ContextFiles) -> list[Kind]:
    """The twohop suite's kinds over contexts of about ``size_tokens`` tokens written into ``files``."""
    return draft_kinds(KINDS, files, lambda name, level, rng: _draft(name, level, size_tokens, rng))
