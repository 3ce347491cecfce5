"""Generate the SmolLM2-135M-Instruct replies of one round of the narrated-contents study (issue 29).

A round is data, not code: ``MANIFEST.json`` lists each round's (temperature, seed) settings, reply cap, default
output, smoke reply and files, ``rounds/roundK.scenarios.jsonl`` holds its scenarios (one agent turn each: the
name of a system prompt of ``prompts.json``, the user's message, earlier ``TOOL:`` rounds of the same user turn),
and ``MANIFEST.json`` gives the sha256 of every file the study holds or labels. A new round is a new scenarios file
and a new entry in the manifest.

The model sees the system prompt, the user's message, then each earlier round as an assistant message
``TOOL: name({...})`` and a user message ``Tool output:\\n...``. Every scenario runs at every setting; each reply
goes, unlabelled, to one JSON line (the scenario, ``gen_id``, temperature, seed, ``max_tokens``, the reply and its
``TOOL:`` lines parsed into ``tool_calls``). Labels are written by hand into ``data/turing_narrated_*.jsonl``;
this script never writes under ``data/``.

Run:   taskset -c 1 .venv/bin/python studies/turing_narrated/generate.py --round 7 [--only ID,ID] [--part K/N]
       [--split S] [--out PATH] [--append] [--max-tokens N] [--threads 1]
Check: python studies/turing_narrated/generate.py --verify    (every file of MANIFEST.json has its sha256)
Smoke: python studies/turing_narrated/generate.py --round 7 --smoke   (the scripted LM on the first scenario)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import warnings
from pathlib import Path

STUDY = Path(__file__).resolve().parent
ROOT = STUDY.parents[1]
MANIFEST = STUDY / "MANIFEST.json"
TOOL_LINE = re.compile(r"TOOL:\s*(\w+)\((.*?)\)\s*$", re.MULTILINE)


def manifest() -> dict:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def round_of(number: int, man: dict | None = None) -> dict:
    """The manifest's entry for round ``number``; SystemExit naming the rounds there are."""
    rounds = {r["round"]: r for r in (man or manifest())["rounds"]}
    if number not in rounds:
        raise SystemExit(f"{MANIFEST}: no round {number} (rounds: {sorted(rounds)})")
    return rounds[number]


def scenarios(entry: dict, man: dict | None = None) -> list[dict]:
    """The round's scenarios in file order, each system prompt's name replaced by its text (keys in record order:
    sid, split, kind, lang, system, user, history)."""
    prompts = json.loads((ROOT / (man or manifest())["prompts"]).read_text(encoding="utf-8"))
    out = []
    path = ROOT / entry["files"]["scenarios"]
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        s = json.loads(line)
        if s["system"] not in prompts:
            raise SystemExit(f"{path}:{n}: system prompt {s['system']!r} is not in prompts.json")
        out.append({**s, "system": prompts[s["system"]]})
    return out


def verify(man: dict | None = None) -> list[str]:
    """Problems with the manifest's files: each missing file or sha256 that differs, one line each."""
    problems = []
    for rel, digest in (man or manifest())["sha256"].items():
        path = ROOT / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            problems.append(f"{rel}: sha256 differs from MANIFEST.json")
    return problems


def tool_calls(reply: str) -> list[dict]:
    """The ``TOOL: name({json})`` lines of a reply; arguments that are not JSON are kept as ``{"raw": text}``."""
    calls = []
    for name, args in TOOL_LINE.findall(reply):
        try:
            parsed = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            parsed = {"raw": args}
        calls.append({"name": name, "arguments": parsed if isinstance(parsed, dict) else {"raw": args}})
    return calls


def messages_of(s: dict) -> list[dict]:
    """The chat the model sees: system, the user's message, then each earlier round as a call and its output."""
    msgs = [{"role": "system", "content": s["system"]}, {"role": "user", "content": s["user"]}]
    for h in s["history"]:
        msgs += [{"role": "assistant", "content": h["response"]},
                 {"role": "user", "content": "Tool output:\n" + h["output"]}]
    return msgs


def selected(todo: list[dict], split: str, only: str, part: str) -> list[dict]:
    """``--split`` (a split name or all), then ``--part K/N`` (every N-th from the K-th) or ``--only`` (ids, in
    their order; it wins over ``--part``)."""
    todo = [s for s in todo if split in ("all", s["split"])]
    ids = list(filter(None, only.split(",")))
    if ids:
        by_id = {s["sid"]: s for s in todo}
        return [by_id[sid] for sid in ids if sid in by_id]
    k, n_parts = (int(x) for x in part.split("/"))
    return todo[k - 1::n_parts]


def parse(argv: list[str] | None, man: dict) -> argparse.Namespace:
    latest = max(r["round"] for r in man["rounds"])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--round", type=int, default=latest, help=f"the round to generate (default {latest})")
    ap.add_argument("--out", type=Path, help="default: the round's out in MANIFEST.json")
    ap.add_argument("--split", default="all", help="only the scenarios of this split (round 1: dev or heldout)")
    ap.add_argument("--only", default="", help="comma-separated scenario ids, run in this order")
    ap.add_argument("--part", default="1/1", help="K/N: every N-th scenario from the K-th (parallel runs)")
    ap.add_argument("--max-tokens", type=int, help="reply cap in tokens (default: the round's)")
    ap.add_argument("--append", action="store_true", help="append to --out instead of rewriting it")
    ap.add_argument("--threads", type=int, default=1,
                    help="llama.cpp threads (default 1: on a shared, loaded machine more threads spin-wait)")
    ap.add_argument("--smoke", action="store_true", help="the scripted LM on one scenario, one setting")
    ap.add_argument("--verify", action="store_true", help="check every file of MANIFEST.json, generate nothing")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    man = manifest()
    args = parse(argv, man)
    if args.verify:
        problems = verify(man)
        print("\n".join(problems) or f"{len(man['sha256'])} files match MANIFEST.json")
        return 1 if problems else 0
    entry = round_of(args.round, man)
    out = args.out or Path(entry["smoke_out"] if args.smoke else entry["out"])
    if out.resolve().parent.name == "data":
        raise SystemExit(f"{out}: refusing to write under data/ (the labelled files are made by hand)")
    max_tokens = args.max_tokens or entry["max_tokens"]
    todo = selected(scenarios(entry, man), args.split, args.only, args.part)
    settings = [tuple(s) for s in entry["settings"]]
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    from rlmlab.lm import make_lm

    if args.smoke:
        todo, settings = todo[:1], settings[:1]
        lms = {settings[0]: make_lm("scripted", script=[entry["smoke_reply"]])}
    else:
        lms = {s: make_lm("local", max_tokens=max_tokens, temperature=s[0], seed=s[1], n_threads=args.threads)
               for s in settings}
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with out.open("a" if args.append else "w", encoding="utf-8") as f:
        for s in todo:
            for (temp, seed), lm in lms.items():
                reply = lm(messages=messages_of(s))[0]
                rec = {**s, "gen_id": f"{s['sid']}_t{temp}_s{seed}", "temperature": temp, "seed": seed,
                       "max_tokens": max_tokens, "reply": reply, "tool_calls": tool_calls(reply)}
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                f.flush()
                n += 1
                print(rec["gen_id"], repr(reply[:80]), flush=True)
    print(f"wrote {n} replies to {out}")
    return 0 if n else 1


if __name__ == "__main__":
    raise SystemExit(main())
