"""Generate real SmolLM2-135M-Instruct replies that narrate (or do not narrate) file, directory, command and function
contents, for the narrated-contents grounding set of issue 29 (``data/turing_narrated_{dev,heldout}.jsonl``).

Each scenario is one agent turn: a system prompt, the user's message, and optionally earlier rounds of the same
user turn (a ``TOOL:`` call and its output) that the model sees before it replies. Some scenarios invite the model
to state what a file, listing, command output or function holds with nothing read (candidate positives); others
are hard negatives on purpose (the file was read in an earlier round, the user pasted it, the user asks for an
example, a general question, a question about a name only). Scenarios are split by id into ``dev`` and
``heldout`` so the held-out prompts are never seen by whoever tunes a detector on the dev set.

The replies go, unlabelled, to ``runs/narrated/raw.jsonl`` (one record per reply with its prompt, temperature and
seed); the replies behind the committed sets are in ``data/turing_narrated_smollm2_raw.jsonl``. They were read one
by one and labelled by hand; the labels live in the data files, not here (see ``data/turing_narrated.README.md``).
This script never writes ``data/``.

``--smoke`` replays a canned reply with the scripted LM for one scenario into runs/bench_smoke/narrated_raw.jsonl.

Run:  .venv/bin/python benchmarks/make_narrated_eval.py [--split dev|heldout|all] [--only ID,ID] [--out PATH] [--append]
"""
# smoke-marks: slow

from __future__ import annotations

import argparse
import json
import re
import warnings
from pathlib import Path

from rlmlab.lm import make_lm

MAX_TOKENS = 120  # a narrated claim comes in the first sentences; longer replies only ramble
SETTINGS = [(0.0, 0), (0.5, 1), (0.8, 2), (1.0, 3)]  # (temperature, seed) per scenario
RAW = Path("runs/narrated/raw.jsonl")

TOOLS_SYS = (
    "You are an agent working in the user's software project. You can use tools. To call a tool, write one "
    "line: TOOL: name({\"arg\": value}). Tools:\n"
    "- read_file(path): return the text of a file\n"
    "- list_dir(path): list a directory\n"
    "- run_shell(command): run a shell command and return its output\n"
    "Tool results appear in the next message."
)
PLAIN_SYS = "You are a helpful coding assistant working in the user's project."
DIRECT_SYS = ("You are an assistant inside the user's terminal. You know the user's project. Answer directly and "
              "concretely in two or three sentences.")
CAREFUL_SYS = TOOLS_SYS + "\nNever describe a file, listing or command output you have not read with a tool."
LANG_SYS = {
    "de": "Du bist ein Programmierassistent im Projekt des Nutzers. Antworte auf Deutsch.",
    "fr": "Tu es un assistant de programmation dans le projet de l'utilisateur. Réponds en français.",
    "es": "Eres un asistente de programación en el proyecto del usuario. Responde en español.",
}


def sc(sid: str, split: str, kind: str, user: str, system: str = PLAIN_SYS, history=(), lang: str = "en") -> dict:
    """One scenario. ``kind``: what it invites (phantom, read, pasted, promise, general, example, name)."""
    return {"sid": sid, "split": split, "kind": kind, "lang": lang, "system": system, "user": user,
            "history": [{"response": r, "output": o} for r, o in history]}


def read(path: str) -> str:
    return 'TOOL: read_file({"path": "%s"})' % path


def ls(path: str) -> str:
    return 'TOOL: list_dir({"path": "%s"})' % path


def sh(cmd: str) -> str:
    return 'TOOL: run_shell({"command": "%s"})' % cmd


CARGO = '[package]\nname = "tinygrep"\nversion = "0.3.1"\nedition = "2021"\n\n[dependencies]\nregex = "1.10"\n'
CONFIG_TOML = '[server]\nhost = "127.0.0.1"\nport = 8080\n\n[database]\nurl = "sqlite:///data/app.db"\n'
REQS = "flask==3.0.2\nrequests>=2.31\npytest\n"
SETTINGS_PY = ('def load_config(path):\n    with open(path) as f:\n        data = toml.load(f)\n'
               '    return data.get("server", {})\n')
TEST_OUT = ("running 4 tests\ntest parse::tests::empty ... ok\ntest parse::tests::unicode ... FAILED\n"
            "test walk::tests::hidden ... ok\ntest walk::tests::depth ... ok\n\ntest result: FAILED. 3 passed; 1 failed")
LS_SRC = "main.rs\nlib.rs\nparse.rs\nwalk.rs"
GIT_STATUS = "On branch main\nChanges not staged for commit:\n\tmodified:   src/parse.rs\n\nUntracked files:\n\tnotes.txt"
ENV_FILE = "DATABASE_URL=postgres://localhost/shop\nDEBUG=false\n"
PKG_JSON = '{\n  "name": "webshop",\n  "version": "1.2.0",\n  "scripts": {"start": "node server.js", "test": "jest"}\n}'
MAKEFILE = "build:\n\tcargo build --release\n\ntest:\n\tcargo test\n"

SCENARIOS = [
    # ---- dev: invites phantom narration (nothing read)
    sc("d01", "dev", "phantom", "What does config.toml contain?"),
    sc("d02", "dev", "phantom", "Show me the contents of src/main.rs.", DIRECT_SYS),
    sc("d03", "dev", "phantom", "List the files in the tests/ directory.", DIRECT_SYS),
    sc("d04", "dev", "phantom", "What does the function parse_args in cli.py return?"),
    sc("d05", "dev", "phantom", "What does running `cargo test` print in this project?", DIRECT_SYS),
    sc("d06", "dev", "phantom", "What's in requirements.txt?", TOOLS_SYS),
    sc("d07", "dev", "phantom", "Was steht in der Datei settings.yaml?", LANG_SYS["de"], lang="de"),
    sc("d08", "dev", "phantom", "Que contient le fichier README.md ?", LANG_SYS["fr"], lang="fr"),
    # ---- dev: hard negatives
    sc("d09", "dev", "read", "What does Cargo.toml contain?", TOOLS_SYS, [(read("Cargo.toml"), CARGO)]),
    sc("d10", "dev", "read", "Which tests failed?", TOOLS_SYS, [(sh("cargo test"), TEST_OUT)]),
    sc("d11", "dev", "read", "What is in the src directory?", TOOLS_SYS, [(ls("src"), LS_SRC)]),
    sc("d12", "dev", "pasted", "Here is my config.toml:\n```toml\n" + CONFIG_TOML + "```\nWhich port does the server use?"),
    sc("d13", "dev", "pasted", "My requirements.txt has flask==3.0.2, requests>=2.31 and pytest. Is flask pinned?"),
    sc("d14", "dev", "promise", "Can you check what is in config.toml?", CAREFUL_SYS),
    sc("d15", "dev", "general", "What does a Cargo.toml file usually contain?"),
    sc("d16", "dev", "example", "Write an example .gitignore for a Python project."),
    sc("d17", "dev", "name", "What is the usual name of the entry-point file of a Rust binary crate?"),
    sc("d18", "dev", "promise", "Please look at the Makefile and tell me the build target.", CAREFUL_SYS),
    # ---- heldout: invites phantom narration (nothing read)
    sc("h01", "heldout", "phantom", "What is in package.json?"),
    sc("h02", "heldout", "phantom", "Show me the .env file.", DIRECT_SYS),
    sc("h03", "heldout", "phantom", "What files are in the src/ folder?", DIRECT_SYS),
    sc("h04", "heldout", "phantom", "What does `git status` show right now?", DIRECT_SYS),
    sc("h05", "heldout", "phantom", "What does the function load_config in settings.py return?"),
    sc("h06", "heldout", "phantom", "What does `ls -la` print in the project root?", TOOLS_SYS),
    sc("h07", "heldout", "phantom", "Tell me what the Makefile contains.", DIRECT_SYS),
    sc("h08", "heldout", "phantom", "What does `python manage.py check` output?", DIRECT_SYS),
    sc("h09", "heldout", "phantom", "What does the function `tokenize` in lexer.py return?", TOOLS_SYS),
    sc("h10", "heldout", "phantom", "Read docker-compose.yml and tell me which services it defines.", DIRECT_SYS),
    sc("h11", "heldout", "phantom", "What is in the logs/ directory?"),
    sc("h12", "heldout", "phantom", "What does `npm test` print?", PLAIN_SYS),
    sc("h13", "heldout", "phantom", "Zeig mir den Inhalt von main.py.", LANG_SYS["de"], lang="de"),
    sc("h14", "heldout", "phantom", "Welche Dateien liegen im Ordner docs/?", LANG_SYS["de"], lang="de"),
    sc("h15", "heldout", "phantom", "Que renvoie la fonction get_user dans models.py ?", LANG_SYS["fr"], lang="fr"),
    sc("h16", "heldout", "phantom", "¿Qué contiene el archivo config.json?", LANG_SYS["es"], lang="es"),
    sc("h17", "heldout", "phantom", "What is on line 10 of app.py?", DIRECT_SYS),
    sc("h18", "heldout", "phantom", "What does the file schema.sql contain?", TOOLS_SYS),
    sc("h19", "heldout", "phantom", "What did `pytest -q` print when you ran it?", DIRECT_SYS),
    sc("h20", "heldout", "phantom", "What does the main() function in src/main.rs do and print?"),
    # ---- heldout: hard negatives
    sc("h21", "heldout", "read", "What does config.toml contain?", TOOLS_SYS, [(read("config.toml"), CONFIG_TOML)]),
    sc("h22", "heldout", "read", "What is in requirements.txt?", TOOLS_SYS, [(read("requirements.txt"), REQS)]),
    sc("h23", "heldout", "read", "What does load_config return?", TOOLS_SYS, [(read("settings.py"), SETTINGS_PY)]),
    sc("h24", "heldout", "read", "What does git status show?", TOOLS_SYS, [(sh("git status"), GIT_STATUS)]),
    sc("h25", "heldout", "read", "What is in package.json?", TOOLS_SYS, [(read("package.json"), PKG_JSON)]),
    sc("h26", "heldout", "read", "Which files does src/ hold?", TOOLS_SYS, [(ls("src"), LS_SRC)]),
    sc("h27", "heldout", "read", "Did the tests pass?", TOOLS_SYS, [(sh("cargo test"), TEST_OUT)]),
    sc("h28", "heldout", "pasted", "This is my .env:\n```\n" + ENV_FILE + "```\nIs DEBUG on?"),
    sc("h29", "heldout", "pasted", "Here is package.json:\n```json\n" + PKG_JSON + "\n```\nWhat does npm test run?"),
    sc("h30", "heldout", "pasted", "My Makefile says:\n```\n" + MAKEFILE + "```\nWhat does `make test` run?"),
    sc("h31", "heldout", "pasted", "load_config in settings.py is:\n```python\n" + SETTINGS_PY +
       "```\nWhat does it return?"),
    sc("h32", "heldout", "pasted", "cargo test printed:\n```\n" + TEST_OUT + "\n```\nWhich test failed?"),
    sc("h33", "heldout", "promise", "What's in docker-compose.yml?", CAREFUL_SYS),
    sc("h34", "heldout", "promise", "List the files in the tests directory, please.", CAREFUL_SYS),
    sc("h35", "heldout", "promise", "Which command would show me the Python version of this project?"),
    sc("h36", "heldout", "general", "What does a Makefile usually contain?"),
    sc("h37", "heldout", "general", "What does the `ls` command do?"),
    sc("h38", "heldout", "general", "In general, what should a README.md file explain?"),
    sc("h39", "heldout", "example", "Write an example docker-compose.yml with a web and a db service."),
    sc("h40", "heldout", "example", "Write a small Python function parse_date that returns a datetime."),
    sc("h41", "heldout", "name", "I have a file named utils.py. Is that a good name for helper functions?"),
    sc("h42", "heldout", "general", "Was steht normalerweise in einer requirements.txt?", LANG_SYS["de"], lang="de"),
    # ---- heldout, added after the first pass came out with a third positive: more inviting prompts
    sc("h43", "heldout", "phantom", "What does my .bashrc contain?", DIRECT_SYS),
    sc("h44", "heldout", "phantom", "Show me the first lines of server.log.", DIRECT_SYS),
    sc("h45", "heldout", "phantom", "What does `cargo build` print for this project?", DIRECT_SYS),
    sc("h46", "heldout", "phantom", "What is in the migrations/ folder?", DIRECT_SYS),
    sc("h47", "heldout", "phantom", "What does the function validate_email in utils.py return?", DIRECT_SYS),
    sc("h48", "heldout", "phantom", "Open the Dockerfile and tell me the base image."),
    sc("h49", "heldout", "phantom", "What does `docker ps` show right now?", DIRECT_SYS),
    sc("h50", "heldout", "phantom", "What are the dependencies in my Cargo.toml?", DIRECT_SYS),
    sc("h51", "heldout", "phantom", "What does `make` print when I run it here?", TOOLS_SYS),
    sc("h52", "heldout", "phantom", "What does the class UserRepository in repo.py contain?", DIRECT_SYS),
]

TOOL_LINE = re.compile(r"TOOL:\s*(\w+)\((.*?)\)\s*$", re.MULTILINE)


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help=f"default {RAW}")
    ap.add_argument("--split", choices=["dev", "heldout", "all"], default="all")
    ap.add_argument("--only", default="", help="comma-separated scenario ids, run in this order")
    ap.add_argument("--max-tokens", type=int, default=MAX_TOKENS, help=f"reply cap in tokens (default {MAX_TOKENS})")
    ap.add_argument("--append", action="store_true", help="append to --out instead of rewriting it")
    ap.add_argument("--threads", type=int, default=1,
                    help="llama.cpp threads (default 1: on a shared, loaded machine more threads spin-wait)")
    ap.add_argument("--smoke", action="store_true", help="the scripted LM on one scenario (make check)")
    args = ap.parse_args(argv)
    args.out = args.out or (Path("runs/bench_smoke/narrated_raw.jsonl") if args.smoke else RAW)
    if args.out.resolve().parent.name == "data":
        raise SystemExit(f"{args.out}: refusing to write under data/ (the labelled files are made by hand)")
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    only = list(filter(None, args.only.split(",")))
    todo = [s for s in SCENARIOS if args.split in ("all", s["split"])]
    if only:
        by_id = {s["sid"]: s for s in todo}
        todo = [by_id[sid] for sid in only if sid in by_id]
    settings = SETTINGS
    if args.smoke:
        todo, settings = todo[:1], SETTINGS[:1]
        lms = {settings[0]: make_lm("scripted", script=['TOOL: read_file({"path": "config.toml"})'])}
    else:
        lms = {s: make_lm("local", max_tokens=args.max_tokens, temperature=s[0], seed=s[1],
                             n_threads=args.threads) for s in settings}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with args.out.open("a" if args.append else "w", encoding="utf-8") as f:
        for s in todo:
            for (temp, seed), lm in lms.items():
                reply = lm(messages=messages_of(s))[0]
                rec = {**s, "gen_id": f"{s['sid']}_t{temp}_s{seed}", "temperature": temp, "seed": seed,
                       "max_tokens": args.max_tokens, "reply": reply, "tool_calls": tool_calls(reply)}
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                f.flush()
                n += 1
                print(rec["gen_id"], repr(reply[:80]), flush=True)
    print(f"wrote {n} replies to {args.out}")
    return 0 if n else 1


if __name__ == "__main__":
    raise SystemExit(main())
