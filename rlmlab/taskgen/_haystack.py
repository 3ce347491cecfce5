"""Haystacks for the needle suite: real Rust sources from Debian's crate packages, or generated service logs,
cut to a size in tokens; and :func:`plant`, which puts needle lines in at given depths.

A haystack is a list of blocks (each a run of whole lines ending in a newline) with each block's token count
(:func:`rlmlab.tokens.count_tokens`; no token spans a newline, so block counts add up to the text's).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path

from rlmlab.errors import ConfigError
from rlmlab.taskgen._longctx import cut_tokens
from rlmlab.tokens import count_tokens

__all__ = ["REGISTRY", "Haystack", "rust_haystack", "log_haystack", "plant", "crate_sources"]

REGISTRY = Path("/usr/share/cargo/registry")  # Debian's librust-*-dev packages put their crates here
FILE_HEADER = "// file: {}\n"  # as rlmlab.experiments writes before each file of a directory context


@dataclass
class Haystack:
    kind: str  # "code" or "logs"
    blocks: list[str] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    origin: str = ""

    def contains(self, value: str) -> bool:
        return any(value in block for block in self.blocks)


@lru_cache(maxsize=4)
def crate_sources(registry: str) -> tuple[tuple[str, tuple[Path, ...]], ...]:
    """(crate directory name, its ``.rs`` files sorted) for every crate under ``registry`` with one."""
    root = Path(registry)
    crates = sorted(d for d in root.iterdir() if d.is_dir()) if root.is_dir() else []
    out = []
    for crate in crates:
        files = tuple(sorted(p for p in crate.rglob("*.rs") if p.is_file()))
        if files:
            out.append((crate.name, files))
    return tuple(out)


def rust_haystack(rng: random.Random, size_tokens: int, registry: Path = REGISTRY) -> Haystack:
    """About ``size_tokens`` tokens of real Rust: crates in a seeded order, starting at a seeded file of the
    first, each file after a ``// file: <crate>/<path>`` line; the last file is cut at a line boundary."""
    crates = list(crate_sources(str(registry)))
    if not crates:
        raise ConfigError(f"needle: no Rust sources under {registry}; install some librust-*-dev packages")
    rng.shuffle(crates)
    hay, used, total = Haystack("code"), [], 0
    start = rng.randrange(len(crates[0][1]))
    for i, (crate, files) in enumerate(crates):
        for path in files[start if i == 0 else 0:]:
            text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
            block = FILE_HEADER.format(path.relative_to(registry).as_posix()) + text.rstrip("\n") + "\n"
            tokens, full = count_tokens(block), True
            if total + tokens > size_tokens:
                block, full = cut_tokens(block, size_tokens - total), False
                tokens = count_tokens(block)
            hay.blocks.append(block)
            hay.tokens.append(tokens)
            total += tokens
            if not used or used[-1] != crate:
                used.append(crate)
            if not full or total >= size_tokens:
                hay.origin = f"Rust sources of {', '.join(used)} ({registry})"
                return hay
    raise ConfigError(f"--size-tokens: {size_tokens:,} is more than the Rust sources under {registry} hold "
                      f"({total:,} tokens); ask for less or install more librust-*-dev packages")


HOSTS = ["web", "api", "db", "cache", "queue", "auth", "search", "batch", "edge", "mail"]
SERVICES = {"web": "nginx", "api": "gunicorn", "db": "postgres", "cache": "redis", "queue": "rabbitmq",
            "auth": "keycloak", "search": "opensearch", "batch": "cron", "edge": "haproxy", "mail": "postfix"}
LEVELS = ["INFO"] * 16 + ["DEBUG"] * 2 + ["WARN", "ERROR"]
PATHS = ["/api/v1/orders", "/api/v1/users", "/api/v2/cart", "/health", "/login", "/static/app.js", "/search",
         "/api/v1/invoices", "/metrics", "/api/v2/items"]
_MESSAGES: list[Callable[[random.Random], str]] = [
    lambda r: f"GET {r.choice(PATHS)}/{r.randint(1, 99999)} {r.choice([200, 200, 200, 201, 304, 404, 500])} "
              f"{r.randint(2, 900)}ms",
    lambda r: f"connection from 10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)} closed after "
              f"{r.randint(1, 600)}s",
    lambda r: f"checkpoint complete: wrote {r.randint(10, 9000)} buffers ({r.randint(1, 99)}.{r.randint(0, 9)}%)",
    lambda r: f"cache hit ratio {r.randint(40, 99)}% over the last {r.randint(1, 60)} minutes",
    lambda r: f"job {r.choice(['backup', 'reindex', 'rotate-logs', 'sync-users', 'report'])}-{r.randint(100, 999)} "
              f"finished in {r.randint(1, 3000)}s",
    lambda r: f"retrying request to {r.choice(HOSTS)}-{r.randint(1, 30)} (attempt {r.randint(1, 5)}/5)",
    lambda r: f"disk usage on /var at {r.randint(20, 97)}%",
    lambda r: f"worker {r.randint(1, 64)} heartbeat ok, queue depth {r.randint(0, 500)}",
    lambda r: f"user u{r.randint(1000, 99999)} signed in from 192.168.{r.randint(0, 255)}.{r.randint(1, 254)}",
    lambda r: f"slow query took {r.randint(500, 20000)}ms on table {r.choice(['orders', 'users', 'events'])}",
    lambda r: f"certificate for {r.choice(HOSTS)}.internal expires in {r.randint(1, 365)} days",
    lambda r: f"garbage collection freed {r.randint(1, 900)} MB in {r.randint(1, 400)}ms",
]


def log_line(rng: random.Random, when: datetime) -> str:
    host = rng.choice(HOSTS)
    return (f"{when.strftime('%Y-%m-%dT%H:%M:%S')}.{when.microsecond // 1000:03d}Z {host}-{rng.randint(1, 30)} "
            f"{SERVICES[host]}[{rng.randint(100, 32000)}]: {rng.choice(LEVELS)} {rng.choice(_MESSAGES)(rng)}\n")


def log_haystack(rng: random.Random, size_tokens: int, block_lines: int = 200) -> Haystack:
    """About ``size_tokens`` tokens of syslog-like service lines (time, host, service[pid], level, message),
    in time order from a seeded start."""
    hay = Haystack("logs")
    when = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(days=rng.randrange(300),
                                                                  seconds=rng.randrange(86400))
    total = 0
    while total < size_tokens:
        lines = []
        for _ in range(block_lines):
            when += timedelta(milliseconds=rng.randint(1, 4000))
            lines.append(log_line(rng, when))
        block = "".join(lines)
        tokens = count_tokens(block)
        if total + tokens > size_tokens:
            block = cut_tokens(block, size_tokens - total)
            tokens = count_tokens(block)
        hay.blocks.append(block)
        hay.tokens.append(tokens)
        total += tokens
    hay.origin = "generated service logs (syslog-like lines; seeded hosts, services, levels and messages)"
    return hay


def plant(hay: Haystack, needles: Sequence[Callable[[str], str]], depths: Sequence[float]) -> list[int]:
    """Insert each needle line at its depth (a fraction of the haystack's tokens), at a line boundary; a needle
    is made from the line before it (``needle(previous_line)``, "" at the very start). The 1-based line numbers
    of the needles in the final text, in the order given."""
    total = sum(hay.tokens)
    marks = [-1] * len(hay.blocks)  # which needle a block is (-1: haystack)
    for i in sorted(range(len(needles)), key=lambda k: depths[k]):
        target, seen, b = depths[i] * total, 0, 0
        while b < len(hay.blocks) - 1 and seen + hay.tokens[b] < target:
            seen += hay.tokens[b]
            b += 1
        block = hay.blocks[b]
        share = (target - seen) / hay.tokens[b] if hay.tokens[b] else 0.0
        cut = block.find("\n", int(min(max(share, 0.0), 1.0) * len(block)))
        cut = len(block) if cut < 0 else cut + 1
        head, tail = block[:cut], block[cut:]
        before = head if head else next((x for x in reversed(hay.blocks[:b]) if x), "")
        line = needles[i](before.rstrip("\n").rsplit("\n", 1)[-1])
        hay.blocks[b:b + 1] = [head, line, tail]
        hay.tokens[b:b + 1] = [count_tokens(head), count_tokens(line), count_tokens(tail)]
        marks[b:b + 1] = [marks[b] if head else -1, i, marks[b] if tail else -1]
    found, lines = [0] * len(needles), 0
    for block, mark in zip(hay.blocks, marks):
        if mark >= 0:
            found[mark] = lines + 1
        lines += block.count("\n")
    return found
