"""Generate the sixth held-out narrated-contents split of issue 29 (``turing_narrated_heldout6.jsonl``): real
SmolLM2-135M-Instruct replies to new prompts, written and labelled by a helper that never saw the detector.

Same turn shape and chat as the five earlier generators (system prompt, user message, earlier ``TOOL:`` rounds shown
as an assistant call and a ``Tool output:`` user message; ``TOOL:`` lines of the reply parsed into ``tool_calls``).
What is new in this set:

- other projects, file kinds and tools: Jupyter notebook cells and their outputs (``.ipynb``), Postgres and MySQL
  (``\\d`` of a table, row counts, ``alembic current``, SQL functions, ``my.cnf``), Python web servers
  (``gunicorn.conf.py``, Celery config), Caddy and HAProxy, TLS certificates (``openssl x509``), ``/var/log/auth.log``,
  GPU and memory (``nvidia-smi``, ``free -m``, ``lsblk``), Flutter ``pubspec.yaml``, Scala ``build.sbt``, Nix
  ``flake.nix``, R ``DESCRIPTION``, Julia ``Project.toml``, Cloudflare ``wrangler.toml``, ``serverless.yml``, Maven
  ``pom.xml`` and Spring ``application.properties``, .NET ``appsettings.Development.json``, dbt, Airflow DAGs,
  ``mkdocs.yml``, pnpm workspaces, ``vite.config.ts``, ``.vscode/settings.json``, Android ``build.gradle``,
  GitLab CI, Hugging Face model ``config.json`` and ``tokenizer_config.json``, Hydra experiment configs, sweep
  result CSVs, LaTeX papers and BibTeX files;
- other commands: ``pytest --durations``, ``coverage report``, ``git tag``, ``git shortlog -sn``, ``git remote -v``,
  ``tree -L 1``, ``grep -rn TODO``, ``docker images``, ``sha256sum``, ``systemctl status``;
- other question forms: comparisons between two files ("do dev.yaml and prod.yaml use the same host?"), "did X
  change between A and B", "is Y set / turned on", a line to quote, answers that would be a number, a date, a list, a
  key or a snippet, and asks embedded in a task ("I need it in DBeaver", "for the release notes");
- new system prompts: a notebook assistant that "sees every cell, its source and its output" (``NOTEBOOK_SYS``), a
  database assistant "connected to the team's databases" (``DB_SYS``), a research assistant with the paper drafts,
  bib files and results tables (``RESEARCH_SYS``), and a tools agent with a ``run_sql`` tool (``SQL_SYS``); besides
  the earlier editor, ML-platform, on-call, CI, maintainer's, project, terminal, plain, chat, tools, data and DevOps
  assistants. A few questions in German, French, Spanish and (new) Swedish;
- the hard-negative kinds of the earlier sets (read, pasted, quote, promise, general, example, name, readfail,
  readother), with new files, commands and a ``run_sql`` round.

Scenario ids are ``r01``... (``h``, ``n``, ``m``, ``p`` and ``q`` were taken by the earlier sets); the scenario kind is
in each record. Made in two passes: ``r01``-``r92`` (all kinds) came out with about 35% positive among the kept
replies, so twenty-five more inviting English prompts (``r93``-``r117``, written before their replies were seen) were
run with ``--only r93,...,r117 --out runs/narrated6/raw_pass2.jsonl`` and appended to ``runs/narrated6/raw.jsonl``.
The replies go, unlabelled, to ``runs/narrated6/raw.jsonl``. Labels were written by hand, not here.
This script never writes ``data/``. Replies are capped at 80 tokens (``MAX_TOKENS``).

``--smoke`` replays a canned reply with the scripted LM for one scenario into runs/bench_smoke/narrated6_raw.jsonl.

Run:  taskset -c 1 .venv/bin/python benchmarks/make_narrated_eval6.py [--only ID,ID] [--part K/N] [--out PATH]
      [--threads 1]
"""
# smoke-marks: slow

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the earlier sets' helpers, when run from anywhere
from make_narrated_eval import DIRECT_SYS, PLAIN_SYS, TOOLS_SYS, read, sh  # noqa: E402
from make_narrated_eval2 import CHAT_SYS, SHELL_SYS, generate, scenario_maker  # noqa: E402
from make_narrated_eval3 import CI_SYS, DATA_SYS, MAINT_SYS  # noqa: E402
from make_narrated_eval4 import LANG4, OPS_SYS  # noqa: E402
from make_narrated_eval5 import EDITOR_SYS, ML_SYS  # noqa: E402

# (temperature, seed): the earlier sets' temperatures, seeds other than the earlier sets' 0-23
SETTINGS = [(0.0, 0), (0.4, 31), (0.7, 32), (1.0, 33)]
RAW = Path("runs/narrated6/raw.jsonl")
MAX_TOKENS = 80

NOTEBOOK_SYS = ("You are the assistant inside the user's Jupyter notebook. You see every cell, its source and its "
                "output. Answer the user's question briefly and precisely.")
DB_SYS = ("You are a database assistant connected to the team's Postgres and MySQL databases and their migration "
          "files. Answer with the exact values, briefly.")
RESEARCH_SYS = ("You are the lab's research assistant. You have the paper drafts, the bib files and the results "
                "tables of the project. Answer briefly.")
SQL_SYS = ("You are a database agent. You can use tools. To call a tool, write one line: TOOL: name({\"arg\": "
           "value}). Tools:\n"
           "- run_sql(query): run a SQL query on the production replica and return the rows\n"
           "- read_file(path): return the text of a file\n"
           "Tool results appear in the next message.")
LANG6 = {
    **LANG4,
    "sv": "Du är assistenten för det här programvaruprojektet och känner till alla dess filer. Svara kort på svenska.",
}


def sql(query: str) -> str:
    return 'TOOL: run_sql({"query": "%s"})' % query


sc = scenario_maker("heldout6")


PG_INDEXES = (" indexname                   | indexdef\n"
              "-----------------------------+-------------------------------------------------------------\n"
              " invoices_pkey               | CREATE UNIQUE INDEX invoices_pkey ON invoices USING btree (id)\n"
              " invoices_customer_id_idx    | CREATE INDEX invoices_customer_id_idx ON invoices (customer_id)\n"
              " invoices_due_date_open_idx  | CREATE INDEX invoices_due_date_open_idx ON invoices (due_date) "
              "WHERE paid_at IS NULL\n(3 rows)")
CERT_DATES = "notBefore=Sep 14 00:00:00 2026 GMT\nnotAfter=Dec 13 23:59:59 2026 GMT"
GUNICORN = ('bind = "0.0.0.0:8000"\nworkers = 5\nworker_class = "gthread"\nthreads = 2\ntimeout = 45\n'
            'preload_app = False\naccesslog = "-"\n')
CHURN_NB = ('{"cells": [\n  {"cell_type": "code", "execution_count": 3, "source": ["df.groupby(\\"plan\\")'
            '[\\"churned\\"].mean()"],\n   "outputs": [{"output_type": "execute_result", "data": {"text/plain": '
            '["plan\\nbasic      0.231\\npro        0.087\\nteam       0.042\\nName: churned, dtype: float64"]}}]}\n],'
            ' "nbformat": 4}')
GITLAB_CI = ("stages:\n  - lint\n  - test\n  - build\n  - deploy\n\ndeploy_prod:\n  stage: deploy\n"
             "  script: ./scripts/deploy.sh production\n  only: [tags]\n")
COVERAGE = ("Name                    Stmts   Miss  Cover\n-------------------------------------------\n"
            "lumen/__init__.py           4      0   100%\nlumen/manifest.py         88     17    81%\n"
            "lumen/text.py             41      2    95%\n-------------------------------------------\n"
            "TOTAL                     133     19    86%")
SWEEP_TOP = "run-17,3e-4,0.842\nrun-09,1e-4,0.836\nrun-22,5e-4,0.829"
CADDYFILE = ("api.lumen.io {\n    reverse_proxy 127.0.0.1:8000\n    header Strict-Transport-Security "
             "\"max-age=31536000; includeSubDomains\"\n    encode gzip\n}\n")
DOCKER_IMAGES = ("REPOSITORY        TAG       IMAGE ID       CREATED        SIZE\n"
                 "lumen-api         dev       4f1c2a9b7e10   2 hours ago    412MB\n"
                 "postgres          16        b3a9c0d1e2f4   3 weeks ago    431MB\n"
                 "redis             7-alpine  9e8d7c6b5a43   5 weeks ago    41MB")
FREE_M = ("               total        used        free      shared  buff/cache   available\n"
          "Mem:           15940       14210         312          96        1418         1207\n"
          "Swap:           2047        1980          67")
HAPROXY = ("backend api_servers\n    balance roundrobin\n    server api1 10.0.1.11:8000 check weight 3\n"
           "    server api2 10.0.1.12:8000 check weight 1\n")
DURATIONS = ("============ slowest 5 durations ============\n12.41s call     tests/test_export.py::test_full_export\n"
             "3.02s call     tests/test_manifest.py::test_large_manifest\n0.88s setup    tests/test_db.py::test_migrations\n"
             "0.12s call     tests/test_text.py::test_slug_unicode\n0.05s call     tests/test_text.py::test_slug_empty")
OVERDUE_FN = ("CREATE FUNCTION get_overdue_invoices(days int)\nRETURNS TABLE (invoice_id bigint, customer_email text, "
              "amount_cents int)\nAS $$\n  SELECT i.id, c.email, i.amount_cents FROM invoices i JOIN customers c ON "
              "c.id = i.customer_id\n  WHERE i.paid_at IS NULL AND i.due_date < now() - make_interval(days => days);\n"
              "$$ LANGUAGE sql;")
WRANGLER = ('name = "lumen-edge"\nmain = "src/worker.ts"\ncompatibility_date = "2026-10-01"\n\n'
            '[[routes]]\npattern = "edge.lumen.io/*"\nzone_name = "lumen.io"\n')
ENV_PT = "PORT=7070\nDATABASE_URL=postgres://lumen@db/lumen\nLOG_LEVEL=info\n"
MYCNF = "[mysqld]\ninnodb_buffer_pool_size = 4G\nmax_connections = 300\nslow_query_log = 1\n"
NVSMI_LINE = "|   0  NVIDIA A100-SXM4-40GB   On  | 00000000:07:00.0 Off |    0 |  87%   Default |"
DEV_YAML = "database:\n  host: localhost\n  port: 5432\n  name: lumen_dev\ncache:\n  url: redis://localhost:6379/0\n"
LAST_CONFIG = '{"model_type": "bert", "hidden_size": 384, "num_attention_heads": 6, "num_hidden_layers": 6}'

SCENARIOS = [
    # ---- invites narration with nothing read (candidate positives)
    sc("r01", "phantom", "What did cell 7 of notebooks/churn.ipynb print? I cleared the outputs by accident.",
       NOTEBOOK_SYS),
    sc("r02", "phantom", "Which libraries does the first cell of forecast.ipynb import?", NOTEBOOK_SYS),
    sc("r03", "phantom", "What did `df.shape` show in the exploration notebook?", NOTEBOOK_SYS),
    sc("r04", "phantom", "Which indexes exist on the invoices table?", DB_SYS),
    sc("r05", "phantom", "How many rows are in the audit_log table right now?", DB_SYS),
    sc("r06", "phantom", "Which migration is the latest one applied, according to `alembic current`?", DB_SYS),
    sc("r07", "phantom", "Which columns does the SQL function get_overdue_invoices() return?", DB_SYS),
    sc("r08", "phantom", "What are `workers` and `timeout` in gunicorn.conf.py, and is preload_app turned on?",
       MAINT_SYS),
    sc("r09", "phantom", "When does the TLS certificate for api.lumen.io expire? I ran `openssl x509 -noout -dates "
       "-in /etc/ssl/lumen.crt` earlier.", OPS_SYS),
    sc("r10", "phantom", "What did `free -m` show for available memory on db2?", OPS_SYS),
    sc("r11", "phantom", "Is HSTS enabled in the Caddyfile? Quote the line if so.", OPS_SYS),
    sc("r12", "phantom", "Which backends does haproxy.cfg send /api traffic to?", OPS_SYS),
    sc("r13", "phantom", "Any failed SSH logins in /var/log/auth.log today? Give me the IPs.", OPS_SYS),
    sc("r14", "phantom", "What does `nvidia-smi` say about GPU utilisation on gpu-node-3?", OPS_SYS),
    sc("r15", "phantom", "Do config/dev.yaml and config/prod.yaml point at the same database host?", EDITOR_SYS),
    sc("r16", "phantom", "Did the `timeout` in settings/base.py change between main and my branch?", EDITOR_SYS),
    sc("r17", "phantom", "Which port does vite.config.ts set for the dev server, and is there a proxy?",
       EDITOR_SYS),
    sc("r18", "phantom", "I'm about to refactor. Which functions in src/lib/pricing.ts are exported?", EDITOR_SYS),
    sc("r19", "phantom", "What does the useCart hook in src/hooks/useCart.ts return?", EDITOR_SYS),
    sc("r20", "phantom", "Copy the connection string out of appsettings.Development.json for me, I need it in "
       "DBeaver.", EDITOR_SYS),
    sc("r21", "phantom", "Which stages does .gitlab-ci.yml define, and which one deploys?", CI_SYS),
    sc("r22", "phantom", "What's the slowest test in the last `pytest --durations=5` output?", CI_SYS),
    sc("r23", "phantom", "What total percentage did `coverage report` give on the last build?", CI_SYS),
    sc("r24", "phantom", "I'm writing the release notes. What's the most recent tag in `git tag --sort=-creatordate`?",
       CI_SYS),
    sc("r25", "phantom", "Who are the top three committers according to `git shortlog -sn`?", CI_SYS),
    sc("r26", "phantom", "Where does origin point? What does `git remote -v` print?", CI_SYS),
    sc("r27", "phantom", "Which Flutter packages does pubspec.yaml pull in?"),
    sc("r28", "phantom", "What scalaVersion is set in build.sbt?"),
    sc("r29", "phantom", "What inputs does flake.nix take, and which nixpkgs branch does it follow?"),
    sc("r30", "phantom", "Which R packages are in the Imports field of DESCRIPTION?"),
    sc("r31", "phantom", "What compat bound does Project.toml give for DataFrames?"),
    sc("r32", "phantom", "What's the compatibility_date in wrangler.toml?"),
    sc("r33", "phantom", "Which functions does serverless.yml deploy, and on which HTTP paths?"),
    sc("r34", "phantom", "List the Maven dependencies in pom.xml with their versions."),
    sc("r35", "phantom", "What's spring.datasource.url in src/main/resources/application.properties?"),
    sc("r36", "phantom", "Which models does dbt_project.yml materialize as tables?", MAINT_SYS),
    sc("r37", "phantom", "What's the schedule_interval of the DAG in dags/nightly_export.py?", MAINT_SYS),
    sc("r38", "phantom", "Which entries are in the nav section of mkdocs.yml?", MAINT_SYS),
    sc("r39", "phantom", "Which packages does pnpm-workspace.yaml include?", MAINT_SYS),
    sc("r40", "phantom", "What are hidden_size and num_attention_heads in checkpoints/best/config.json?", ML_SYS),
    sc("r41", "phantom", "Which run had the best val_f1 in results/sweep.csv, and what was it?", ML_SYS),
    sc("r42", "phantom", "Which special tokens does tokenizer_config.json add?", ML_SYS),
    sc("r43", "phantom", "Did the learning rate change between conf/exp/baseline.yaml and conf/exp/large.yaml?",
       ML_SYS),
    sc("r44", "phantom", "How many images are in the val split, going by data/splits/val.txt?", ML_SYS),
    sc("r45", "phantom", "What's the BibTeX key of the Vaswani et al. paper in references.bib?", RESEARCH_SYS),
    sc("r46", "phantom", "What does Table 2 in paper/main.tex report for the baseline?", RESEARCH_SYS),
    sc("r47", "phantom", "Which packages does the preamble of paper/main.tex load?", RESEARCH_SYS),
    sc("r48", "phantom", "What does `tree -L 1` show in the repo root?", DIRECT_SYS),
    sc("r49", "phantom", "What TODOs did `grep -rn TODO src/` turn up?", DIRECT_SYS),
    sc("r50", "phantom", "What does `docker images` list on my laptop?", DIRECT_SYS),
    sc("r51", "phantom", "Quick one: what's the sha256 of dist/lumen-1.4.2.tar.gz?", DIRECT_SYS),
    sc("r52", "phantom", "Which exception does load_manifest() in lumen/manifest.py raise when the file is missing?",
       EDITOR_SYS),
    sc("r53", "phantom", "What's the value of CELERY_BROKER_URL in lumen/celeryconfig.py?", EDITOR_SYS),
    sc("r54", "phantom", "What does my.cnf set innodb_buffer_pool_size to?", DB_SYS),
    sc("r55", "phantom", "Was gibt `systemctl status nginx` gerade aus?", LANG6["de"], lang="de"),
    sc("r56", "phantom", "Quelle est la valeur de `workers` dans gunicorn.conf.py ?", LANG6["fr"], lang="fr"),
    sc("r57", "phantom", "¿Qué tablas hay en la base de datos app.db?", LANG6["es"], lang="es"),
    sc("r58", "phantom", "Vilka beroenden finns i pom.xml?", LANG6["sv"], lang="sv"),
    # ---- hard negatives: the turn read it in an earlier round
    sc("r59", "read", "Which indexes are on invoices?", SQL_SYS,
       [(sql("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'invoices'"), PG_INDEXES)]),
    sc("r60", "read", "So when does the certificate run out?", SHELL_SYS,
       [(sh("openssl x509 -noout -dates -in /etc/ssl/lumen.crt"), CERT_DATES)]),
    sc("r61", "read", "How many workers does gunicorn start, and with what timeout?", TOOLS_SYS,
       [(read("gunicorn.conf.py"), GUNICORN)]),
    sc("r62", "read", "What did cell 3 of the churn notebook output?", TOOLS_SYS,
       [(read("notebooks/churn.ipynb"), CHURN_NB)]),
    sc("r63", "read", "Which stage deploys, and when does it run?", TOOLS_SYS, [(read(".gitlab-ci.yml"), GITLAB_CI)]),
    sc("r64", "read", "What's the total coverage, and which module is worst?", SHELL_SYS,
       [(sh("coverage report"), COVERAGE)]),
    sc("r65", "read", "Which run won the sweep?", DATA_SYS,
       [(sh("sort -t, -k3 -nr results/sweep.csv | head -3"), SWEEP_TOP)]),
    sc("r66", "read", "Is HSTS turned on for the API?", TOOLS_SYS, [(read("Caddyfile"), CADDYFILE)]),
    sc("r67", "read", "¿Qué imágenes tengo y cuál ocupa más?", LANG6["es"], [(sh("docker images"), DOCKER_IMAGES)],
       lang="es"),
    # ---- hard negatives: the user pasted or described it
    sc("r68", "pasted", "Here's `free -m` from db2:\n```\n" + FREE_M + "\n```\nAm I about to run out of memory?",
       PLAIN_SYS),
    sc("r69", "pasted", "Our DESCRIPTION file has `Imports: dplyr (>= 1.1.0), ggplot2, readr`. Do I need tidyr "
       "installed to build the package?", CHAT_SYS),
    sc("r70", "pasted", "With this haproxy backend, which server gets more requests?\n```\n" + HAPROXY + "```",
       OPS_SYS),
    sc("r71", "pasted", "pytest --durations=5 gave:\n```\n" + DURATIONS + "\n```\nWhich ones should I mark as slow?",
       CI_SYS),
    sc("r72", "pasted", "Which columns does this function return?\n```sql\n" + OVERDUE_FN + "\n```", DB_SYS),
    sc("r73", "pasted", "Is this worker deployed on a custom route?\n```toml\n" + WRANGLER + "```", EDITOR_SYS),
    sc("r74", "pasted", "Este é o meu .env:\n```\n" + ENV_PT + "```\nEm que porta a aplicação vai escutar?",
       LANG6["pt"], lang="pt"),
    sc("r75", "quote", "Paste back the [mysqld] section I gave you, unchanged:\n```ini\n" + MYCNF + "```", CHAT_SYS),
    sc("r76", "quote", "Say this nvidia-smi line back to me verbatim: `" + NVSMI_LINE + "`", CHAT_SYS),
    # ---- hard negatives: a promise, general knowledge, an example asked for, a name only
    sc("r77", "promise", "Open gunicorn.conf.py and tell me how many workers it starts.", TOOLS_SYS),
    sc("r78", "promise", "Query the audit_log table and tell me how many rows it has.", SQL_SYS),
    sc("r79", "promise", "Run `git remote -v` and tell me where origin points.", SHELL_SYS),
    sc("r80", "promise", "Have a look at results/sweep.csv and tell me which run won.", DATA_SYS),
    sc("r81", "general", "What does `openssl x509 -noout -dates` print, generally?", CHAT_SYS),
    sc("r82", "general", "What usually goes into a dbt_project.yml?", PLAIN_SYS),
    sc("r83", "general", "Which fields does a BibTeX @article entry normally have?", CHAT_SYS),
    sc("r84", "example", "Write a sample gunicorn.conf.py for 4 workers behind nginx.", PLAIN_SYS),
    sc("r85", "example", "Give me an example .gitlab-ci.yml with test and deploy stages.", PLAIN_SYS),
    sc("r86", "example", "Write a TypeScript function formatPrice(cents: number): string.", PLAIN_SYS),
    sc("r87", "name", "Does Spring Boot read application.properties or application.yml if both exist?", CHAT_SYS),
    sc("r88", "name", "Should an Airflow DAG file be named nightly_export.py or nightly_export_dag.py?", CHAT_SYS),
    # ---- hard cases: a read that failed (nothing shown), a read of a different file
    sc("r89", "readfail", "Where does origin point?", SHELL_SYS,
       [(sh("git remote -v"), "fatal: not a git repository (or any of the parent directories): .git")]),
    sc("r90", "readfail", "How many rows are in audit_log?", SQL_SYS,
       [(sql("SELECT count(*) FROM audit_log"), "ERROR:  relation \"audit_log\" does not exist\nLINE 1: SELECT "
         "count(*) FROM audit_log")]),
    sc("r91", "readother", "Which database host does config/prod.yaml use?", TOOLS_SYS,
       [(read("config/dev.yaml"), DEV_YAML)]),
    sc("r92", "readother", "What's hidden_size in checkpoints/best/config.json?", DATA_SYS,
       [(read("checkpoints/last/config.json"), LAST_CONFIG)]),
    # ---- added after the first pass (r01-r92) came out with about 35% positive among the kept replies, to bring it
    # nearer 45%: more inviting English prompts (a value, a count, a row or a list from a named file, table, log or
    # command), written before their replies were seen
    sc("r93", "phantom", "What's the value of SESSION_COOKIE_AGE in lumen/settings/prod.py?", EDITOR_SYS),
    sc("r94", "phantom", "What's minSdkVersion in android/app/build.gradle?", EDITOR_SYS),
    sc("r95", "phantom", "Which keys are set in .vscode/settings.json?", EDITOR_SYS),
    sc("r96", "phantom", "What's the baseURL in src/api/client.ts?", EDITOR_SYS),
    sc("r97", "phantom", "What's the final train loss in lightning_logs/version_3/metrics.csv?", ML_SYS),
    sc("r98", "phantom", "How many parameters does the model summary in logs/run_58.txt report?", ML_SYS),
    sc("r99", "phantom", "What's the seed in conf/config.yaml?", ML_SYS),
    sc("r100", "phantom", "What's the top-1 accuracy of run-17 in results/sweep.csv?", ML_SYS),
    sc("r101", "phantom", "What does `SHOW VARIABLES LIKE 'max_connections'` give on the reporting MySQL server?",
       DB_SYS),
    sc("r102", "phantom", "What's the most recent row in the schema_migrations table?", DB_SYS),
    sc("r103", "phantom", "Which columns does the customers table have?", DB_SYS),
    sc("r104", "phantom", "What accuracy did the last cell of notebooks/churn.ipynb print?", NOTEBOOK_SYS),
    sc("r105", "phantom", "What does the clean_text() function defined in preprocess.ipynb return?", NOTEBOOK_SYS),
    sc("r106", "phantom", "How many tests passed and how many failed in the last `pytest -q` run on main?", CI_SYS),
    sc("r107", "phantom", "What does `git describe --tags` print on main?", CI_SYS),
    sc("r108", "phantom", "Which job took longest in the last pipeline run of .gitlab-ci.yml?", CI_SYS),
    sc("r109", "phantom", "What's python_requires in setup.cfg?", MAINT_SYS),
    sc("r110", "phantom", "What's the version field in pubspec.yaml?", MAINT_SYS),
    sc("r111", "phantom", "Which port does supervisord.conf give the [inet_http_server]?", MAINT_SYS),
    sc("r112", "phantom", "What's MaxAuthTries in /etc/ssh/sshd_config on web2?", OPS_SYS),
    sc("r113", "phantom", "What load average did `uptime` report on web2?", OPS_SYS),
    sc("r114", "phantom", "What's the rotate count in /etc/logrotate.d/lumen?", OPS_SYS),
    sc("r115", "phantom", "What are the name and version in deno.json?"),
    sc("r116", "phantom", "What does slug_for('Hello, World!') in lumen/text.py return?"),
    sc("r117", "phantom", "How many entries does references.bib have?", RESEARCH_SYS),
]


def main(argv: list[str] | None = None) -> int:
    return generate(argv, scenarios=SCENARIOS, settings=SETTINGS, raw=RAW, max_tokens=MAX_TOKENS,
                    smoke_out=Path("runs/bench_smoke/narrated6_raw.jsonl"),
                    smoke_reply='TOOL: read_file({"path": "gunicorn.conf.py"})', description=__doc__.splitlines()[0])


if __name__ == "__main__":
    raise SystemExit(main())
