"""Generate the fifth held-out narrated-contents split of issue 29 (``turing_narrated_heldout5.jsonl``): real
SmolLM2-135M-Instruct replies to new prompts, written and labelled by a helper that never saw the detector.

Same turn shape and chat as the four earlier generators (system prompt, user message, earlier ``TOOL:`` rounds shown
as an assistant call and a ``Tool output:`` user message; ``TOOL:`` lines of the reply parsed into ``tool_calls``).
What is new in this set:

- other ecosystems and file kinds: Ruby (Gemfile, Gemfile.lock, Rakefile), PHP (composer.json), Elixir (mix.exs),
  Kotlin/Gradle (build.gradle.kts), C/CMake (CMakeLists.txt), .NET (.csproj), Swift (Package.swift), Helm
  values.yaml, Ansible playbooks and inventories, systemd units, Prometheus alert rules, OpenAPI specs, .proto and
  GraphQL schemas, i18n locale files, pre-commit/tox/editorconfig, Procfile, fly.toml, conda environment.yml, dvc
  and ML params/metrics files, training logs, ~/.ssh/config, /etc/fstab, CODEOWNERS, LICENSE;
- other commands: ``ss -tlnp``, ``journalctl -u``, ``du -sh``, ``ps aux``, ``npm audit``, ``mypy``, ``ruff check``,
  ``go test -cover``, ``git branch -a``, ``git stash list``, ``git blame``, ``terraform output``, ``aws s3 ls``,
  ``pip list --outdated``, ``kubectl logs``, ``redis-cli INFO``, ``wc -l``;
- other question forms: answers that would be a number ("how many", "what's the loss at epoch 10"), a list, a
  snippet ("paste the body of"), a yes/no with a detail ("does X pin Y, and to what?"), indirect asks ("remind me
  ..."), multi-part questions, and questions embedded in a task ("before I upgrade, tell me ...");
- two new system prompts: an editor assistant that "sees the files open in the editor" (``EDITOR_SYS``) and an
  ML-platform assistant with "the experiment runs, metrics and training logs" (``ML_SYS``); Dutch and Polish
  questions besides German, French, Spanish and Italian;
- the hard-negative kinds of the earlier sets (read, pasted, quote, promise, general, example, name, readfail,
  readother).

Scenario ids are ``q01``... (``h``, ``n``, ``m`` and ``p`` were taken by the earlier sets); the scenario kind is in
each record. Made in two passes: ``q01``-``q85`` (all kinds) came out with about a third positive among the kept
replies, so thirty more inviting English prompts (``q86``-``q115``, written before their replies were seen) were run
with ``--only q86,...,q115 --out runs/narrated5/raw_pass2.jsonl`` and appended to ``runs/narrated5/raw.jsonl``. The
replies go, unlabelled, to ``runs/narrated5/raw.jsonl``. Labels were written by hand, not here. This script never
writes ``data/``. Replies are capped at 80 tokens (``MAX_TOKENS``).

``--smoke`` replays a canned reply with the scripted LM for one scenario into runs/bench_smoke/narrated5_raw.jsonl.

Run:  .venv/bin/python benchmarks/make_narrated_eval5.py [--only ID,ID] [--part K/N] [--out PATH] [--threads 1]
"""
# smoke-marks: slow

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the earlier sets' helpers, when run from anywhere
from make_narrated_eval import PLAIN_SYS, TOOLS_SYS, ls, read, sh  # noqa: E402
from make_narrated_eval2 import CHAT_SYS, SHELL_SYS, generate, scenario_maker  # noqa: E402
from make_narrated_eval3 import CI_SYS, DATA_SYS, MAINT_SYS  # noqa: E402
from make_narrated_eval4 import LANG4, OPS_SYS  # noqa: E402

# (temperature, seed): the earlier sets' temperatures, seeds other than the earlier sets' 1-13
SETTINGS = [(0.0, 0), (0.4, 21), (0.7, 22), (1.0, 23)]
RAW = Path("runs/narrated5/raw.jsonl")
MAX_TOKENS = 80

EDITOR_SYS = ("You are the assistant built into the user's code editor. You see the files open in the editor and "
              "the project tree. Answer the user's question precisely and briefly.")
ML_SYS = ("You are the ML-platform assistant for this team. You have the experiment runs, metrics files and "
          "training logs of the project. Answer with the numbers, briefly.")
LANG5 = {
    **LANG4,
    "nl": "Je bent de assistent van dit softwareproject en kent al zijn bestanden. Antwoord kort in het Nederlands.",
    "pl": "Jesteś asystentem tego projektu programistycznego i znasz wszystkie jego pliki. Odpowiadaj krótko po "
          "polsku.",
}


sc = scenario_maker("heldout5")


GEMFILE_LOCK = ("GEM\n  remote: https://rubygems.org/\n  specs:\n    rails (7.1.3)\n      actionpack (= 7.1.3)\n"
                "    puma (6.4.2)\n    sidekiq (7.2.1)\n\nRUBY VERSION\n   ruby 3.2.2p53\n\nBUNDLED WITH\n   2.5.6\n")
SS_OUT = ("State  Recv-Q Send-Q Local Address:Port  Peer Address:Port Process\n"
          "LISTEN 0      511          0.0.0.0:80         0.0.0.0:*     users:((\"nginx\",pid=812))\n"
          "LISTEN 0      128        127.0.0.1:5432       0.0.0.0:*     users:((\"postgres\",pid=640))\n"
          "LISTEN 0      4096       127.0.0.1:6379       0.0.0.0:*     users:((\"redis-server\",pid=655))")
TRAIN_LOG = ("epoch 1/12  train_loss=2.314  val_loss=2.201  val_acc=0.212\n"
             "epoch 6/12  train_loss=0.982  val_loss=1.044  val_acc=0.641\n"
             "epoch 12/12 train_loss=0.411  val_loss=0.733  val_acc=0.782\nbest checkpoint: epoch 11 (val_acc=0.786)")
OPENAPI = ("openapi: 3.0.3\ninfo:\n  title: Parcel Tracker API\n  version: 0.7.0\npaths:\n  /parcels:\n"
           "    get: {summary: List parcels}\n    post: {summary: Register a parcel}\n  /parcels/{id}/events:\n"
           "    get: {summary: Tracking events of a parcel}\n")
JOURNAL = ("Dec 02 03:11:40 web1 systemd[1]: Started Parcel worker.\n"
           "Dec 02 03:14:02 web1 parcel-worker[2231]: ERROR amqp: connection refused (rabbitmq:5672)\n"
           "Dec 02 03:14:02 web1 systemd[1]: parcel-worker.service: Main process exited, code=exited, status=1/FAILURE\n"
           "Dec 02 03:14:07 web1 systemd[1]: parcel-worker.service: Scheduled restart job, restart counter is at 3.")
MYPY_OUT = ("tracker/geo.py:21: error: Argument 1 to \"haversine\" has incompatible type \"str\"; expected \"float\"  "
            "[arg-type]\ntracker/api.py:88: error: Item \"None\" of \"Optional[Parcel]\" has no attribute \"id\"  "
            "[union-attr]\nFound 2 errors in 2 files (checked 14 source files)")
HELM_VALUES = ("replicaCount: 2\nimage:\n  repository: ghcr.io/acme/parcel-api\n  tag: \"0.7.0\"\n"
               "resources:\n  limits:\n    memory: 512Mi\ningress:\n  enabled: true\n  host: parcels.acme.dev\n")
LS_PLAYBOOKS = "site.yml\nwebservers.yml\ndbservers.yml\nroles\ngroup_vars\ninventory.ini"
SYSTEMD_UNIT = ("[Unit]\nDescription=Parcel worker\nAfter=network.target\n\n[Service]\nUser=parcel\n"
                "ExecStart=/opt/parcel/bin/worker --queue events\nRestart=on-failure\nRestartSec=5\n\n"
                "[Install]\nWantedBy=multi-user.target\n")
NPM_AUDIT = ("# npm audit report\n\nsemver  <5.7.2\nSeverity: moderate\nsemver vulnerable to Regular Expression "
             "Denial of Service\nfix available via `npm audit fix`\n\nnode-fetch  <2.6.7\nSeverity: high\n"
             "2 vulnerabilities (1 moderate, 1 high)")
KOTLIN_FN = ("fun shippingCost(weightKg: Double): Int {\n    if (weightKg <= 1.0) return 499\n"
             "    return 499 + ((weightKg - 1.0) * 150).toInt()\n}")
PROM_RULE = ("groups:\n- name: parcel\n  rules:\n  - alert: WorkerDown\n    expr: up{job=\"parcel-worker\"} == 0\n"
             "    for: 5m\n    labels: {severity: page}\n")
EDITORCONFIG = "root = true\n\n[*]\nindent_style = space\nindent_size = 2\nend_of_line = lf\n"
GO_COVER = ("ok  \tgithub.com/acme/parcel/geo\t0.412s\tcoverage: 81.3% of statements\n"
            "ok  \tgithub.com/acme/parcel/api\t1.067s\tcoverage: 54.9% of statements\n"
            "?   \tgithub.com/acme/parcel/cmd\t[no test files]")
COMPOSER = ('{\n  "name": "acme/invoicer",\n  "require": {\n    "php": "^8.2",\n    "laravel/framework": "^10.10",\n'
            '    "guzzlehttp/guzzle": "^7.2"\n  }\n}')
METRICS_JSON = '{"accuracy": 0.914, "f1_macro": 0.872, "auc": 0.951, "n_test": 4210}'
BRANCHES = "* main\n  feature/eta-estimates\n  fix/timezone-parsing\n  remotes/origin/main\n  remotes/origin/release-0.7"

SCENARIOS = [
    # ---- invites narration with nothing read (candidate positives)
    sc("q01", "phantom", "Which version of rails is locked in Gemfile.lock?"),
    sc("q02", "phantom", "How many lines does tracker/api.py have?", EDITOR_SYS),
    sc("q03", "phantom", "Paste the body of the shippingCost function from Shipping.kt.", EDITOR_SYS),
    sc("q04", "phantom", "Does composer.json pin laravel/framework, and to which version?", MAINT_SYS),
    sc("q05", "phantom", "What was the validation loss at epoch 10 of the last training run?", ML_SYS),
    sc("q06", "phantom", "Which ports are open on web1 according to `ss -tlnp`?", OPS_SYS),
    sc("q07", "phantom", "Why did parcel-worker.service crash? Check what `journalctl -u parcel-worker` says.",
       OPS_SYS),
    sc("q08", "phantom", "I forgot what I called the staging bucket. What does `terraform output` show?", MAINT_SYS),
    sc("q09", "phantom", "Before I bump PHP, tell me which PHP version composer.json requires and what else it "
       "depends on."),
    sc("q10", "phantom", "What paths does openapi.yaml define?"),
    sc("q11", "phantom", "Which fields does the Parcel message in proto/parcel.proto have?"),
    sc("q12", "phantom", "How big is the node_modules folder? What did `du -sh node_modules` say?", OPS_SYS),
    sc("q13", "phantom", "Which hosts are in the [webservers] group of ansible/inventory.ini?", OPS_SYS),
    sc("q14", "phantom", "What does the ExecStart line of /etc/systemd/system/parcel-worker.service say?", OPS_SYS),
    sc("q15", "phantom", "Which alerts are defined in prometheus/rules.yml, and what are their thresholds?",
       OPS_SYS),
    sc("q16", "phantom", "How many vulnerabilities did `npm audit` find, and which packages?", CI_SYS),
    sc("q17", "phantom", "What errors does mypy report for the tracker package?", CI_SYS),
    sc("q18", "phantom", "What's the test coverage of the geo package according to `go test -cover ./...`?",
       CI_SYS),
    sc("q19", "phantom", "Which branches exist in this repo? Give me the output of `git branch -a`.", CI_SYS),
    sc("q20", "phantom", "Is there anything in my git stash?", EDITOR_SYS),
    sc("q21", "phantom", "Who last changed line 42 of tracker/geo.py, according to git blame?", CI_SYS),
    sc("q22", "phantom", "What's the replicaCount in charts/parcel-api/values.yaml?", MAINT_SYS),
    sc("q23", "phantom", "Which dependencies does mix.exs declare?"),
    sc("q24", "phantom", "What's the minimum CMake version in CMakeLists.txt, and which targets does it add?"),
    sc("q25", "phantom", "What TargetFramework does Invoicer.csproj use?", EDITOR_SYS),
    sc("q26", "phantom", "What does the function haversine() in tracker/geo.py return for two identical points?",
       EDITOR_SYS),
    sc("q27", "phantom", "What's the accuracy in metrics.json from the latest run?", ML_SYS),
    sc("q28", "phantom", "What learning rate does params.yaml set?", ML_SYS),
    sc("q29", "phantom", "Which stages does dvc.yaml define?", ML_SYS),
    sc("q30", "phantom", "Which channels and Python version does environment.yml list?", ML_SYS),
    sc("q31", "phantom", "Remind me which host alias I set up for the bastion in ~/.ssh/config.", OPS_SYS),
    sc("q32", "phantom", "Which processes are eating the most memory in `ps aux` right now?", OPS_SYS),
    sc("q33", "phantom", "What does the Procfile start?", MAINT_SYS),
    sc("q34", "phantom", "Which region and app name does fly.toml configure?", MAINT_SYS),
    sc("q35", "phantom", "Which hooks run in .pre-commit-config.yaml?"),
    sc("q36", "phantom", "What are the translation keys in locales/en.json?", EDITOR_SYS),
    sc("q37", "phantom", "Who owns the src/billing/ directory in CODEOWNERS?"),
    sc("q38", "phantom", "Which license is in the LICENSE file?", EDITOR_SYS),
    sc("q39", "phantom", "What does `redis-cli INFO memory` report for used_memory?", OPS_SYS),
    sc("q40", "phantom", "Which packages does `pip list --outdated` show as outdated here?", CI_SYS),
    sc("q41", "phantom", "What did `kubectl logs deploy/parcel-api --tail=5` print?", OPS_SYS),
    sc("q42", "phantom", "Which tasks does `rake -T` list for this project?", MAINT_SYS),
    sc("q43", "phantom", "List the queries in schema.graphql.", EDITOR_SYS),
    sc("q44", "phantom", "What does `wc -l data/events.csv` give?", DATA_SYS),
    sc("q45", "phantom", "Welche Abhängigkeiten stehen in der build.gradle.kts?", LANG5["de"], lang="de"),
    sc("q46", "phantom", "Combien d'erreurs `ruff check .` a-t-il trouvées, et dans quels fichiers ?",
       LANG5["fr"], lang="fr"),
    sc("q47", "phantom", "¿Qué puertos expone el fly.toml de este proyecto?", LANG5["es"], lang="es"),
    sc("q48", "phantom", "Welke packages staan er in de Gemfile?", LANG5["nl"], lang="nl"),
    sc("q49", "phantom", "Jakie zależności zawiera plik Package.swift?", LANG5["pl"], lang="pl"),
    sc("q50", "phantom", "Quali sono le regole in .editorconfig?", LANG5["it"], lang="it"),
    # ---- hard negatives: the turn read it in an earlier round
    sc("q51", "read", "Which version of rails is locked?", TOOLS_SYS, [(read("Gemfile.lock"), GEMFILE_LOCK)]),
    sc("q52", "read", "Which ports are open on this box?", SHELL_SYS, [(sh("ss -tlnp"), SS_OUT)]),
    sc("q53", "read", "What was the validation loss at the last epoch, and which checkpoint is best?", DATA_SYS,
       [(sh("tail -n 4 logs/train.log"), TRAIN_LOG)]),
    sc("q54", "read", "Which endpoints does the spec define?", TOOLS_SYS, [(read("openapi.yaml"), OPENAPI)]),
    sc("q55", "read", "Why does the worker keep restarting?", SHELL_SYS,
       [(sh("journalctl -u parcel-worker -n 4"), JOURNAL)]),
    sc("q56", "read", "How many mypy errors are there, and where?", SHELL_SYS, [(sh("mypy tracker"), MYPY_OUT)]),
    sc("q57", "read", "What image tag and memory limit does the chart use?", TOOLS_SYS,
       [(read("charts/parcel-api/values.yaml"), HELM_VALUES)]),
    sc("q58", "read", "Which playbooks do we have?", TOOLS_SYS, [(ls("ansible"), LS_PLAYBOOKS)]),
    sc("q59", "read", "Welche Branches gibt es?", LANG5["de"], [(sh("git branch -a"), BRANCHES)], lang="de"),
    # ---- hard negatives: the user pasted or described it
    sc("q60", "pasted", "This is the unit file:\n```ini\n" + SYSTEMD_UNIT + "```\nWhat user does the worker run as, "
       "and how long does systemd wait before restarting it?", PLAIN_SYS),
    sc("q61", "pasted", "npm audit gave me this:\n```\n" + NPM_AUDIT + "\n```\nWhich one should I fix first?",
       PLAIN_SYS),
    sc("q62", "pasted", "What does this return for 3 kg?\n```kotlin\n" + KOTLIN_FN + "\n```", EDITOR_SYS),
    sc("q63", "pasted", "Our rules.yml has one alert, WorkerDown, firing when up{job=\"parcel-worker\"} is 0 for 5 "
       "minutes. After how long does it page?", CHAT_SYS),
    sc("q64", "pasted", "go test -cover printed:\n```\n" + GO_COVER + "\n```\nWhich package has the lowest coverage?",
       CI_SYS),
    sc("q65", "pasted", "Our composer.json:\n```json\n" + COMPOSER + "\n```\nCan I run this on PHP 8.1?"),
    sc("q66", "pasted", "¿Qué significa esta regla de Prometheus?\n```yaml\n" + PROM_RULE + "```", LANG5["es"],
       lang="es"),
    sc("q67", "quote", "Echo this .editorconfig back exactly as I wrote it:\n```\n" + EDITORCONFIG + "```",
       CHAT_SYS),
    sc("q68", "quote", "Give me back just the JSON I pasted, unchanged: " + METRICS_JSON, CHAT_SYS),
    # ---- hard negatives: a promise, general knowledge, an example asked for, a name only
    sc("q69", "promise", "Open Gemfile.lock and tell me the bundler version.", TOOLS_SYS),
    sc("q70", "promise", "Run `ss -tlnp` and tell me what's listening on 5432.", SHELL_SYS),
    sc("q71", "promise", "Could you check metrics.json and report the F1 score?", DATA_SYS),
    sc("q72", "promise", "Take a look at the ansible/ folder and tell me which playbooks exist.", TOOLS_SYS),
    sc("q73", "general", "What sections does a systemd service unit usually have?", PLAIN_SYS),
    sc("q74", "general", "What does `ss -tlnp` show, in general?", CHAT_SYS),
    sc("q75", "general", "Typically, what goes in a Helm chart's values.yaml?", PLAIN_SYS),
    sc("q76", "general", "Cosa contiene di solito un file Gemfile.lock?", LANG5["it"], lang="it"),
    sc("q77", "example", "Write an example Prometheus alert rule that fires when a job is down.", PLAIN_SYS),
    sc("q78", "example", "Give me a sample .pre-commit-config.yaml with black and ruff.", PLAIN_SYS),
    sc("q79", "example", "Write a Kotlin function that converts kilograms to pounds.", PLAIN_SYS),
    sc("q80", "name", "Should the OpenAPI spec be called openapi.yaml or swagger.yaml?", CHAT_SYS),
    sc("q81", "name", "Where do systemd unit files for my own services usually go, /etc/systemd/system or "
       "/lib/systemd/system?", CHAT_SYS),
    # ---- hard cases: a read that failed (nothing shown), a read of a different file
    sc("q82", "readfail", "Which version of rails does Gemfile.lock pin?", TOOLS_SYS,
       [(read("Gemfile.lock"), "error: Gemfile.lock: No such file or directory")]),
    sc("q83", "readfail", "What does `terraform output` show?", SHELL_SYS,
       [(sh("terraform output"), "error: terraform: No state file was found!")]),
    sc("q84", "readother", "What image tag does charts/parcel-worker/values.yaml use?", TOOLS_SYS,
       [(read("charts/parcel-api/values.yaml"), HELM_VALUES)]),
    sc("q85", "readother", "What's the F1 score in metrics.json?", DATA_SYS,
       [(sh("tail -n 4 logs/train.log"), TRAIN_LOG)]),
    # ---- added after the first pass (q01-q85) came out with about a third positive among kept replies, to bring it
    # nearer 45%: more inviting English prompts (a value, a count or a line of a named file, log or command), written
    # before their replies were seen
    sc("q86", "phantom", "What's the `timeout_ms` value in config/http-client.yaml?", EDITOR_SYS),
    sc("q87", "phantom", "How many tests are in tests/test_geo.py?", EDITOR_SYS),
    sc("q88", "phantom", "What's the `name` in charts/parcel-api/Chart.yaml, and its appVersion?", MAINT_SYS),
    sc("q89", "phantom", "What were the precision and recall on the test split in eval/report.txt?", ML_SYS),
    sc("q90", "phantom", "What are the keys under `logging:` in config/base.yaml?"),
    sc("q91", "phantom", "How many rows did `SELECT count(*) FROM parcels;` return on staging?", OPS_SYS),
    sc("q92", "phantom", "What's the throughput figure at the end of bench/results.txt?", MAINT_SYS),
    sc("q93", "phantom", "Which Ruby version does .ruby-version pin?"),
    sc("q94", "phantom", "What's the `maxmemory` setting in /etc/redis/redis.conf?", OPS_SYS),
    sc("q95", "phantom", "What are the first three lines of data/events.csv?"),
    sc("q96", "phantom", "What's the batch size in configs/train.yaml, and for how many epochs does it train?", ML_SYS),
    sc("q97", "phantom", "How many routes does routes/web.php register?", EDITOR_SYS),
    sc("q98", "phantom", "What's the value of `retries` in ansible/group_vars/all.yml?", OPS_SYS),
    sc("q99", "phantom", "What does the function eta_minutes() in tracker/eta.py return when the distance is 0?",
       EDITOR_SYS),
    sc("q100", "phantom", "What did the last `bundle install` print at the end?", CI_SYS),
    sc("q101", "phantom", "What was the peak GPU memory in the training log of run 42?", ML_SYS),
    sc("q102", "phantom", "Which Node version does .nvmrc pin?"),
    sc("q103", "phantom", "What are the column types of the events table in db/structure.sql?", MAINT_SYS),
    sc("q104", "phantom", "What's the cron schedule in .github/workflows/nightly.yml?", CI_SYS),
    sc("q105", "phantom", "How many errors did `tsc --noEmit` report on the last run?", CI_SYS),
    sc("q106", "phantom", "What's in the [tool.ruff] section of pyproject.toml?", EDITOR_SYS),
    sc("q107", "phantom", "What's the default locale set in config/i18n.yml?"),
    sc("q108", "phantom", "On which port does Procfile.dev start the web process?", MAINT_SYS),
    sc("q109", "phantom", "What does `uname -a` print on web1?", OPS_SYS),
    sc("q110", "phantom", "What's the newest entry in CHANGELOG.md: which version, and what date?"),
    sc("q111", "phantom", "Give me the exact error line from last night's backup job in /var/log/backup.log.", OPS_SYS),
    sc("q112", "phantom", "What's the AUC of the baseline model in results/baseline.json?", ML_SYS),
    sc("q113", "phantom", "How many lines does tracker/geo.py have, and how many functions does it define?", EDITOR_SYS),
    sc("q114", "phantom", "What's the `image:` line for the worker service in docker-compose.override.yml?", MAINT_SYS),
    sc("q115", "phantom", "What value does MAX_RETRIES have in tracker/settings.py?", EDITOR_SYS),
]


def main(argv: list[str] | None = None) -> int:
    return generate(argv, scenarios=SCENARIOS, settings=SETTINGS, raw=RAW, max_tokens=MAX_TOKENS,
                    smoke_out=Path("runs/bench_smoke/narrated5_raw.jsonl"),
                    smoke_reply='TOOL: read_file({"path": "Gemfile.lock"})', description=__doc__.splitlines()[0])


if __name__ == "__main__":
    raise SystemExit(main())
