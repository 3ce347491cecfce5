"""Generate the second held-out narrated-contents set of issue 29 (``data/turing_narrated_heldout2.jsonl``): real
SmolLM2-135M-Instruct replies to new prompts, written by a labeller who never saw the detector.

Same turn shape and chat as ``make_narrated_eval.py`` (system prompt, user message, earlier ``TOOL:`` rounds shown
as an assistant call and a ``Tool output:`` user message; ``TOOL:`` lines of the reply parsed into ``tool_calls``),
with new prompts: other file kinds and languages (JS, Go, SQL, notebooks, logs, shell output, config files), other
system prompts (a REPL agent that writes code, a chat assistant, a project assistant told it knows the repository),
German, French and Spanish questions, and new hard negatives (a read that failed, a read of a different file,
the user's paste quoted back). Scenario ids are ``n01``...; the scenario kind is in each record.

The replies go, unlabelled, to ``runs/narrated2/raw.jsonl``; the ones behind the committed set are in
``data/turing_narrated2_smollm2_raw.jsonl``. Labels were written by hand in the data file, not here. This script
never writes ``data/``.

``--smoke`` replays a canned reply with the scripted LM for one scenario into runs/bench_smoke/narrated2_raw.jsonl.

Run:  .venv/bin/python benchmarks/make_narrated_eval2.py [--only ID,ID] [--part K/N] [--out PATH]
"""
# smoke-marks: slow

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the first set's helpers, when run from anywhere
from make_narrated_eval import LANG_SYS, PLAIN_SYS, TOOLS_SYS, ls, messages_of, read, sh, tool_calls  # noqa: E402

from rlmlab.lm import make_lm  # noqa: E402

MAX_TOKENS = 72  # a narrated claim comes in the first sentences; the machine is shared and loaded
SETTINGS = [(0.0, 0), (0.4, 5), (0.7, 6), (1.0, 7)]  # (temperature, seed): seeds other than the first set's 1-3
RAW = Path("runs/narrated2/raw.jsonl")

KNOW_SYS = ("You are the assistant of this software project. You have full knowledge of the repository and its "
            "files. Answer the user's question with the specifics, briefly.")
CHAT_SYS = "You are a friendly chat assistant. Keep answers short."
REPL_SYS = ("You are an agent in a Python REPL inside the user's project. To act, write Python code in a ```python "
            "block; the REPL runs it and shows what it prints. When you know the answer, write FINAL: answer.")
SHELL_SYS = ("You are a DevOps agent with one tool. To call it, write one line: TOOL: run_shell({\"command\": "
             "\"...\"}). Its output appears in the next message.")
LANG2 = {
    "de": "Du bist der Assistent dieses Softwareprojekts und kennst alle seine Dateien. Antworte kurz auf Deutsch.",
    "fr": "Tu es l'assistant de ce projet logiciel et tu connais tous ses fichiers. Réponds brièvement en français.",
    "es": "Eres el asistente de este proyecto de software y conoces todos sus archivos. Responde brevemente en español.",
}


def scenario_maker(split: str):
    """The ``sc`` of a narrated set: ``sc(sid, kind, user, system, history, lang)`` makes one scenario of
    ``split``. ``kind``: what it invites (phantom, read, pasted, quote, promise, general, example, name, readfail,
    readother); ``history``: earlier rounds as (response, output) pairs."""
    def sc(sid: str, kind: str, user: str, system: str = KNOW_SYS, history=(), lang: str = "en") -> dict:
        return {"sid": sid, "split": split, "kind": kind, "lang": lang, "system": system, "user": user,
                "history": [{"response": r, "output": o} for r, o in history]}
    return sc


sc = scenario_maker("heldout2")


GO_MOD = "module github.com/acme/ratelimit\n\ngo 1.22\n\nrequire golang.org/x/time v0.5.0\n"
MAKE_OUT = ("gcc -O2 -c src/hash.c -o build/hash.o\nsrc/hash.c:41:12: warning: unused variable 'seed'\n"
            "gcc -O2 -c src/main.c -o build/main.o\ngcc -o build/kvstore build/hash.o build/main.o")
LS_HANDLERS = "auth.go\nbilling.go\nhealth.go\nhealth_test.go"
NGINX = ("server {\n    listen 80;\n    server_name shop.local;\n    location /api/ {\n"
         "        proxy_pass http://127.0.0.1:9000;\n    }\n}")
WORKER_LOG = ("2026-11-24 10:02:11 INFO worker-3 started\n2026-11-24 10:02:16 ERROR worker-3 timeout contacting "
              "redis:6379 after 5s\n2026-11-24 10:02:21 ERROR worker-3 timeout contacting redis:6379 after 5s")
SCHEMA = "CREATE TABLE orders (\n  id INTEGER PRIMARY KEY,\n  customer_id INTEGER NOT NULL,\n  total_cents INTEGER\n);"
PKG = ('{\n  "name": "webdash",\n  "version": "1.4.0",\n  "scripts": {"build": "vite build", "test": "vitest"},\n'
       '  "dependencies": {"react": "^18.2.0"}\n}')
MEDIAN = "def median(xs):\n    s = sorted(xs)\n    n = len(s)\n    return s[n // 2]\n"
COMPOSE_YAML = "services:\n  web:\n    build: .\n    ports: [\"8000:8000\"]\n  db:\n    image: postgres:16\n"
NPM_BUILD = "> webdash@1.4.0 build\n> vite build\n\nvite v5.0.8 building for production...\n✓ 42 modules transformed.\n"

SCENARIOS = [
    # ---- invites narration with nothing read (candidate positives)
    sc("n01", "phantom", "What's in webpack.config.js?"),
    sc("n02", "phantom", "Summarise go.mod for me."),
    sc("n03", "phantom", "Does settings.py define DATABASES?"),
    sc("n04", "phantom", "What did `make` print?"),
    sc("n05", "phantom", "What does parse_duration() in timeutil.go return for \"90s\"?"),
    sc("n06", "phantom", "List the files in cmd/."),
    sc("n07", "phantom", "What's the last line of logs/worker.log?"),
    sc("n08", "phantom", "What columns does the orders table have in schema.sql?"),
    sc("n09", "phantom", "What's in the first cell of analysis.ipynb?"),
    sc("n10", "phantom", "Which Python version does .python-version pin?"),
    sc("n11", "phantom", "What does `npm test` output in this repo?"),
    sc("n12", "phantom", "Summarise docker-compose.yml.", PLAIN_SYS),
    sc("n13", "phantom", "What's in .env?", PLAIN_SYS),
    sc("n14", "phantom", "What does `git log --oneline -3` show?", PLAIN_SYS),
    sc("n15", "phantom", "What does slugify in text_utils.py return for 'Hello World'?", PLAIN_SYS),
    sc("n16", "phantom", "What's inside the scripts/ directory?", CHAT_SYS),
    sc("n17", "phantom", "Tell me what nginx.conf says about port 443."),
    sc("n18", "phantom", "Does the Makefile have a target called deploy?"),
    sc("n19", "phantom", "What does main.go import?"),
    sc("n20", "phantom", "What's in tsconfig.json?", TOOLS_SYS),
    sc("n21", "phantom", "What does `cat /etc/hosts` print on this machine?"),
    sc("n22", "phantom", "What environment variables does .env.example list?"),
    sc("n23", "phantom", "What's in the src/components folder?"),
    sc("n24", "phantom", "What does `SELECT count(*) FROM users;` return on our database?"),
    sc("n25", "phantom", "Show me the contents of setup.cfg."),
    sc("n26", "phantom", "What does the crontab on this server contain?"),
    sc("n27", "phantom", "What's the output of `go test ./...`?"),
    sc("n28", "phantom", "What did the last CI run print in build.log?", PLAIN_SYS),
    sc("n29", "phantom", "What's in notebooks/eda.ipynb?", CHAT_SYS),
    sc("n30", "phantom", "Which routes does app.py define?"),
    sc("n31", "phantom", "Summarise CHANGELOG.md."),
    sc("n32", "phantom", "What does `df -h` show?"),
    sc("n33", "phantom", "Show me .gitignore."),
    sc("n34", "phantom", "What does the function total_price() in cart.js return?", REPL_SYS),
    sc("n35", "phantom", "What's in requirements-dev.txt?", SHELL_SYS),
    sc("n36", "phantom", "Was steht in der Datei config.yaml?", LANG2["de"], lang="de"),
    sc("n37", "phantom", "Qu'est-ce que contient le fichier package.json ?", LANG2["fr"], lang="fr"),
    sc("n38", "phantom", "¿Qué contiene el archivo docker-compose.yml?", LANG2["es"], lang="es"),
    sc("n39", "phantom", "Was gibt die Funktion berechne_summe() in rechner.py zurück?", LANG2["de"], lang="de"),
    sc("n40", "phantom", "Que retourne la fonction get_user() dans models.py ?", LANG2["fr"], lang="fr"),
    sc("n41", "phantom", "¿Qué imprime `ls -l` en este directorio?", LANG2["es"], lang="es"),
    sc("n42", "phantom", "What's in the migrations folder of my Django app?"),
    # ---- hard negatives: the turn read it in an earlier round
    sc("n43", "read", "What's in go.mod?", TOOLS_SYS, [(read("go.mod"), GO_MOD)]),
    sc("n44", "read", "What did `make` print?", TOOLS_SYS, [(sh("make"), MAKE_OUT)]),
    sc("n45", "read", "List the files in handlers/.", TOOLS_SYS, [(ls("handlers"), LS_HANDLERS)]),
    sc("n46", "read", "Does nginx.conf proxy /api?", TOOLS_SYS, [(read("nginx.conf"), NGINX)]),
    sc("n47", "read", "Summarise the errors in logs/worker.log.", SHELL_SYS,
       [(sh("cat logs/worker.log"), WORKER_LOG)]),
    sc("n48", "read", "What columns does schema.sql give the orders table?", TOOLS_SYS,
       [(read("schema.sql"), SCHEMA)]),
    # ---- hard negatives: the user pasted or described it
    sc("n49", "pasted", "What's in this package.json?\n```json\n" + PKG + "\n```", PLAIN_SYS),
    sc("n50", "pasted", "Here is what `make` printed:\n```\n" + MAKE_OUT + "\n```\nWhat went wrong?", PLAIN_SYS),
    sc("n51", "pasted", "Does this function return the median?\n```python\n" + MEDIAN + "```"),
    sc("n52", "pasted", "My docker-compose.yml has two services, web on port 8000 and db using postgres:16. "
       "Summarise it.", PLAIN_SYS),
    sc("n53", "pasted", "Was macht diese Datei?\n```yaml\n" + COMPOSE_YAML + "```", LANG_SYS["de"], lang="de"),
    sc("n54", "quote", "Can you repeat back what my .env says?\n```\nDEBUG=1\nPORT=5000\n```", CHAT_SYS),
    # ---- hard negatives: a promise, general knowledge, an example asked for, a name only
    sc("n55", "promise", "Please check what's in config/prod.yaml.", TOOLS_SYS),
    sc("n56", "promise", "Can you run `npm run build` and tell me if it passes?", SHELL_SYS),
    sc("n57", "general", "What does a go.mod file usually contain?", PLAIN_SYS),
    sc("n58", "general", "What does `git status` show, in general?", CHAT_SYS),
    sc("n59", "general", "Que contient généralement un Dockerfile ?", LANG_SYS["fr"], lang="fr"),
    sc("n60", "general", "¿Qué suele contener un archivo .gitignore?", LANG_SYS["es"], lang="es"),
    sc("n61", "example", "Write an example docker-compose.yml for a Flask app with Redis.", PLAIN_SYS),
    sc("n62", "example", "Give me a sample tsconfig.json for a React project.", PLAIN_SYS),
    sc("n63", "example", "Write a Python function that reads config.json and returns the port.", REPL_SYS),
    sc("n64", "name", "Is conftest.py the right file name for pytest fixtures?", PLAIN_SYS),
    sc("n65", "name", "What is the naming convention for Go test files?", CHAT_SYS),
    # ---- new hard cases: a read that failed (nothing shown), a read of a different file
    sc("n66", "readfail", "What's in config/prod.yaml?", TOOLS_SYS,
       [(read("config/prod.yaml"), "error: config/prod.yaml: No such file or directory")]),
    sc("n67", "readfail", "What did `npm run build` print?", SHELL_SYS,
       [(sh("npm run build"), "error: command timed out after 60 s, no output captured")]),
    sc("n68", "readother", "Compare package.json with package-lock.json.", TOOLS_SYS,
       [(read("package.json"), PKG)]),
    sc("n69", "readother", "What's in handlers/billing.go?", TOOLS_SYS, [(ls("handlers"), LS_HANDLERS)]),
    sc("n70", "read", "What does `npm run build` print?", SHELL_SYS, [(sh("npm run build"), NPM_BUILD)]),
    # ---- added after the first pass came out with about a third positive (written before their replies were seen)
    sc("n71", "phantom", "What targets does the Makefile define?"),
    sc("n72", "phantom", "Show me the contents of src/index.js."),
    sc("n73", "phantom", "What does `pip freeze` print in this venv?"),
    sc("n74", "phantom", "What's in the tests/ folder?"),
    sc("n75", "phantom", "What does config.py set DEBUG to?"),
    sc("n76", "phantom", "What does the function load_users() in db.py return?"),
    sc("n77", "phantom", "What's the first line of README.md?"),
    sc("n78", "phantom", "What does `npm ls` show for this project?"),
]


def generate(argv: list[str] | None, *, scenarios: list[dict], settings: list[tuple[float, int]], raw: Path,
             smoke_out: Path, smoke_reply: str, description: str, max_tokens: int = MAX_TOKENS) -> int:
    """The generation loop of a narrated set (this one's and the third's): every scenario at every (temperature,
    seed) setting, one raw reply per line to ``--out`` (default ``raw``; ``--smoke``: ``smoke_out``, the scripted LM
    answering ``smoke_reply`` on the first scenario). Never writes under data/."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", type=Path, help=f"default {raw}")
    ap.add_argument("--only", default="", help="comma-separated scenario ids, run in this order")
    ap.add_argument("--part", default="1/1", help="K/N: every N-th scenario from the K-th (parallel runs)")
    ap.add_argument("--max-tokens", type=int, default=max_tokens, help=f"reply cap in tokens (default {max_tokens})")
    ap.add_argument("--threads", type=int, default=1,
                    help="llama.cpp threads (default 1: on a shared, loaded machine more threads spin-wait)")
    ap.add_argument("--smoke", action="store_true", help="the scripted LM on one scenario (make check)")
    args = ap.parse_args(argv)
    args.out = args.out or (smoke_out if args.smoke else raw)
    if args.out.resolve().parent.name == "data":
        raise SystemExit(f"{args.out}: refusing to write under data/ (the labelled files are made by hand)")
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    k, n_parts = (int(x) for x in args.part.split("/"))
    todo = scenarios[k - 1::n_parts]
    only = list(filter(None, args.only.split(",")))
    if only:
        by_id = {s["sid"]: s for s in scenarios}
        todo = [by_id[sid] for sid in only if sid in by_id]
    if args.smoke:
        todo, settings = todo[:1], settings[:1]
        lms = {settings[0]: make_lm("scripted", script=[smoke_reply])}
    else:
        lms = {s: make_lm("local", max_tokens=args.max_tokens, temperature=s[0], seed=s[1],
                             n_threads=args.threads) for s in settings}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with args.out.open("w", encoding="utf-8") as f:
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


def main(argv: list[str] | None = None) -> int:
    return generate(argv, scenarios=SCENARIOS, settings=SETTINGS, raw=RAW,
                    smoke_out=Path("runs/bench_smoke/narrated2_raw.jsonl"),
                    smoke_reply='TOOL: read_file({"path": "webpack.config.js"})', description=__doc__.splitlines()[0])


if __name__ == "__main__":
    raise SystemExit(main())
