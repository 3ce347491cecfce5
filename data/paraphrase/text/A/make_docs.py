#!/usr/bin/env python3
"""Regenerate the six text documents for paraphrase writer A, byte for byte.

Usage: python3 make_docs.py [outdir]   (default: ./docs next to this script)
Every document uses its own random.Random(seed), so the output is deterministic.
"""
import csv
import hashlib
import io
import os
import random
import sys
from datetime import datetime, timedelta, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "docs")


def write(name, text):
    path = os.path.join(OUT, name)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    print(name, len(text.splitlines()), "lines", hashlib.sha256(text.encode()).hexdigest()[:12])


# ---------------------------------------------------------------------------
# 1. service.log  (syslog style)
# ---------------------------------------------------------------------------
def make_service_log():
    r = random.Random(1101)
    hosts = ["web-01", "web-02", "db-01", "db-02", "cache-01", "batch-01"]
    host_w = [18, 17, 16, 12, 9, 14]
    pids = {}

    def pid(host, prog):
        key = (host, prog)
        if key not in pids:
            pids[key] = r.randint(300, 32000)
        return pids[key]

    users = ["deploy", "alice", "bob", "backup", "root", "carol", "admin", "test", "oracle"]
    bad_ips = ["45.133.1.22", "185.220.101.9", "92.118.39.14", "61.177.172.60", "103.99.0.122"]
    good_ips = ["10.0.4.11", "10.0.4.12", "10.0.9.3", "192.168.50.21"]
    disks = ["/dev/sda1", "/dev/sdb1", "/dev/nvme0n1p2", "/dev/sdc1"]
    mounts = {"/dev/sda1": "/", "/dev/sdb1": "/var/lib/data", "/dev/nvme0n1p2": "/srv", "/dev/sdc1": "/backup"}
    ifaces = ["eth0", "eth1", "bond0"]
    jobs = ["nightly-backup", "report-gen", "log-rotate", "index-rebuild", "cache-warmup", "invoice-export"]
    peers = ["10.0.2.15:5432", "10.0.2.16:5432", "10.0.3.7:6379", "api.payments.example.net:443", "smtp.example.net:587"]

    lines = []
    t = datetime(2024, 3, 9, 0, 0, 3)
    end = datetime(2024, 3, 10, 23, 58, 0)
    job_seq = 4410

    def stamp(dt):
        return dt.strftime("%b ") + ("%2d" % dt.day) + dt.strftime(" %H:%M:%S")

    while t < end:
        host = r.choices(hosts, host_w)[0]
        roll = r.random()
        ts = stamp(t)
        # hour-dependent intensity: busier 09-12 on the 10th
        if roll < 0.22:
            # disk
            d = r.choice(disks)
            pct = r.randint(40, 99)
            if pct >= 95:
                lvl, msg = "ERROR", f"disk {d} ({mounts[d]}) usage critical: {pct}% used, {r.randint(200, 900)}MB free"
            elif pct >= 85:
                lvl, msg = "WARN", f"disk {d} ({mounts[d]}) usage at {pct}%"
            else:
                if r.random() < 0.3:
                    lvl, msg = "DEBUG", f"disk check {d} ok usage={pct}% inodes={r.randint(5, 60)}%"
                else:
                    lvl, msg = "INFO", f"disk {d} ({mounts[d]}) usage {pct}%"
            if r.random() < 0.06:
                lvl, msg = "ERROR", f"I/O error on {d}, sector {r.randint(100000, 9999999)}, retrying"
            if r.random() < 0.04:
                lvl, msg = "WARN", f"SMART attribute Reallocated_Sector_Ct on {d} increased to {r.randint(1, 40)}"
            lines.append(f"{ts} {host} diskmon[{pid(host, 'diskmon')}]: {lvl} {msg}")
        elif roll < 0.44:
            # network
            k = r.random()
            ifc = r.choice(ifaces)
            if k < 0.25:
                p = r.choice(peers)
                lvl, msg = "ERROR", f"connection to {p} timed out after {r.choice([5, 10, 30])}s"
            elif k < 0.40:
                lvl, msg = "WARN", f"{ifc}: packet loss {r.randint(2, 35)}% to gateway 10.0.0.1"
            elif k < 0.48:
                lvl, msg = "WARN", f"{ifc} link down"
            elif k < 0.56:
                lvl, msg = "INFO", f"{ifc} link up, speed {r.choice(['1000', '10000'])}Mb/s full duplex"
            elif k < 0.66:
                p = r.choice(peers)
                lvl, msg = "WARN", f"retrying connection to {p} (attempt {r.randint(2, 5)}/5), timeout exceeded"
            elif k < 0.74:
                lvl, msg = "ERROR", f"DNS resolution failed for {r.choice(['api.payments.example.net', 'smtp.example.net', 'registry.internal'])}: SERVFAIL"
            else:
                lvl, msg = "DEBUG", f"{ifc} rx={r.randint(10**6, 10**9)} tx={r.randint(10**6, 10**9)} errors=0"
            lines.append(f"{ts} {host} netd[{pid(host, 'netd')}]: {lvl} {msg}")
        elif roll < 0.66:
            # auth
            k = r.random()
            sp = r.randint(30000, 65000)
            if k < 0.45:
                u = r.choice(users[3:] + ["root", "admin"])
                ip = r.choice(bad_ips)
                lvl, msg = "WARN", f"Failed password for {u} from {ip} port {sp} ssh2"
                if r.random() < 0.25:
                    lvl, msg = "WARN", f"Failed password for invalid user {r.choice(['ubnt', 'pi', 'git', 'ftpuser', 'guest'])} from {ip} port {sp} ssh2"
            elif k < 0.75:
                u = r.choice(["deploy", "alice", "bob", "backup", "carol"])
                lvl, msg = "INFO", f"Accepted publickey for {u} from {r.choice(good_ips)} port {sp} ssh2"
            elif k < 0.85:
                ip = r.choice(bad_ips)
                lvl, msg = "ERROR", f"maximum authentication attempts exceeded for root from {ip} port {sp} ssh2"
            elif k < 0.93:
                u = r.choice(["deploy", "alice", "bob", "backup", "carol"])
                lvl, msg = "INFO", f"session closed for user {u}"
            else:
                lvl, msg = "DEBUG", f"auth: pam_unix(sshd:session) checked {r.randint(1, 4)} modules"
            lines.append(f"{ts} {host} sshd[{r.randint(1000, 60000)}]: {lvl} {msg}")
        elif roll < 0.84:
            # jobs (mostly batch-01)
            if r.random() < 0.7:
                host = "batch-01"
            j = r.choice(jobs)
            job_seq += 1
            jid = job_seq
            k = r.random()
            if k < 0.38:
                lvl, msg = "INFO", f"job={j} id={jid} started"
            elif k < 0.78:
                dur = round(r.uniform(2, 900), 1)
                lvl, msg = "INFO", f"job={j} id={jid} finished status=ok duration={dur}s"
            elif k < 0.92:
                dur = round(r.uniform(1, 400), 1)
                code = r.choice([1, 2, 137, 143])
                lvl, msg = "ERROR", f"job={j} id={jid} failed exit_code={code} duration={dur}s"
            else:
                lvl, msg = "WARN", f"job={j} id={jid} running longer than expected ({r.randint(16, 90)} min)"
            lines.append(f"{ts} {host} jobrunner[{pid(host, 'jobrunner')}]: {lvl} {msg}")
            if lvl == "ERROR" and r.random() < 0.45:
                lines.append("\tTraceback (most recent call last):")
                lines.append(f"\t  File \"/opt/jobs/{j.replace('-', '_')}.py\", line {r.randint(20, 400)}, in run")
                lines.append(f"\t{r.choice(['TimeoutError: operation timed out', 'OSError: [Errno 28] No space left on device', 'ConnectionResetError: [Errno 104] Connection reset by peer', 'KeyError: customer_id'])}")
        elif roll < 0.92:
            # database
            if host not in ("db-01", "db-02"):
                host = r.choice(["db-01", "db-02"])
            k = r.random()
            if k < 0.3:
                lvl, msg = "WARN", f"slow query ({r.randint(1200, 9800)} ms): SELECT * FROM {r.choice(['orders', 'invoices', 'events', 'sessions'])} WHERE ..."
            elif k < 0.45:
                lvl, msg = "ERROR", f"could not write to file \"pg_wal/0000000100000{r.randint(10, 99)}\": No space left on device"
            elif k < 0.6:
                lvl, msg = "WARN", f"replication lag {r.randint(3, 120)}s on standby db-02"
            elif k < 0.8:
                lvl, msg = "INFO", f"checkpoint complete: wrote {r.randint(100, 9000)} buffers"
            else:
                lvl, msg = "DEBUG", f"autovacuum: processing table \"public.{r.choice(['orders', 'events', 'sessions'])}\""
            lines.append(f"{ts} {host} postgres[{pid(host, 'postgres')}]: {lvl} {msg}")
        elif roll < 0.95:
            # kernel lines: no level
            up = (t - datetime(2024, 3, 1)).total_seconds() + r.random()
            msg = r.choice([
                f"EXT4-fs warning (device {r.choice(['sda1', 'sdb1'])}): ext4_dx_add_entry: Directory index full!",
                f"TCP: request_sock_TCP: Possible SYN flooding on port 443. Sending cookies.",
                f"{r.choice(ifaces)}: NIC Link is Up 1000 Mbps Full Duplex",
                f"Out of memory: Killed process {r.randint(1000, 30000)} (java) total-vm:{r.randint(2, 9)}000000kB",
                f"blk_update_request: I/O error, dev {r.choice(['sdb', 'sdc'])}, sector {r.randint(10**5, 10**7)}",
            ])
            lines.append(f"{ts} {host} kernel: [{up:12.6f}] {msg}")
        elif roll < 0.975:
            lvl = r.choice(["INFO", "DEBUG"])
            msg = r.choice([
                "cache hit ratio 0.93 over last 5m",
                f"evicted {r.randint(10, 5000)} keys (maxmemory policy allkeys-lru)",
                "config reloaded from /etc/redis/redis.conf",
                f"connected clients: {r.randint(20, 400)}",
            ])
            lines.append(f"{ts} {r.choice(['cache-01', 'cache-01', 'web-01'])} redis[{pid('cache-01', 'redis')}]: {lvl} {msg}")
        else:
            n = r.randint(2, 9)
            lines.append(f"{ts} {host} syslog-ng[{pid(host, 'syslog')}]: last message repeated {n} times")
        # advance time; more traffic during day hours
        hour = t.hour
        base = 100 if 8 <= hour < 19 else 300
        if t.day == 10 and 9 <= hour < 12:
            base = 40
        t += timedelta(seconds=r.randint(1, base * 2))
    # a boot marker early on for realism
    lines.insert(0, "Mar  9 00:00:01 batch-01 rsyslogd: [origin software=\"rsyslogd\" swVersion=\"8.2112.0\" x-pid=\"611\"] rsyslogd was HUPed")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# 2. orders.csv
# ---------------------------------------------------------------------------
def make_orders_csv():
    r = random.Random(2202)
    cities = [("Berlin", "Germany"), ("Munich", "Germany"), ("Hamburg", "Germany"), ("Paris", "France"),
              ("Lyon", "France"), ("Madrid", "Spain"), ("Barcelona", "Spain"), ("Vienna", "Austria"),
              ("Zurich", "Switzerland"), ("Amsterdam", "Netherlands"), ("Rotterdam", "Netherlands"), ("Milan", "Italy")]
    city_w = [14, 8, 7, 11, 5, 7, 6, 6, 4, 8, 3, 6]
    first = ["Anna", "Lukas", "Marie", "Jonas", "Sophie", "Elias", "Léa", "Hugo", "Lucía", "Pablo", "Giulia",
             "Marco", "Sanne", "Daan", "Emma", "Noah", "Clara", "Felix", "Inès", "Matteo"]
    last = ["Müller", "Schmidt", "Dubois", "Martin", "García", "López", "Rossi", "Bianchi", "de Vries", "Jansen",
            "Huber", "Bauer", "Moreau", "Fernández", "Weber", "Keller", "Bakker", "Conti"]
    products = [
        ("USB-C Hub 7-in-1", "Accessories", 39.90), ("Mechanical Keyboard", "Peripherals", 89.00),
        ("Wireless Mouse", "Peripherals", 24.50), ("27\" Monitor", "Displays", 249.00),
        ("Laptop Stand", "Accessories", 34.99), ("Noise-Cancelling Headphones", "Audio", 179.00),
        ("Webcam 1080p", "Peripherals", 59.90), ("Portable SSD 1TB", "Storage", 109.00),
        ("HDMI Cable 2m", "Cables", 9.99), ("Desk Lamp LED", "Accessories", 42.00),
        ("Bluetooth Speaker", "Audio", 69.00), ("microSD 128GB", "Storage", 18.90),
    ]
    prod_w = [9, 6, 10, 4, 7, 4, 6, 6, 10, 5, 5, 8]
    statuses = ["delivered", "shipped", "pending", "cancelled", "returned"]
    status_w = [52, 18, 10, 12, 8]
    notes_pool = ["", "", "", "", "", "", "gift wrap", "leave at reception, 2nd floor", "call before delivery",
                  "invoice to company, VAT ID on file", "express", "customer said \"urgent\"",
                  "replacement for order returned earlier", "B2B"]
    customers = []
    for i in range(95):
        fn, ln = r.choice(first), r.choice(last)
        em = f"{fn.lower()}.{ln.lower().replace(' ', '')}@example.{r.choice(['com', 'de', 'fr', 'nl'])}"
        em = em.replace("é", "e").replace("è", "e").replace("ü", "u").replace("í", "i").replace("á", "a")
        c = r.choices(cities, city_w)[0]
        if r.random() < 0.12:
            name = f"{ln}, {fn}"            # "Last, First" style -> quoted
        elif r.random() < 0.06:
            name = f"{ln} & Co. KG, Einkauf"  # company with a comma
        else:
            name = f"{fn} {ln}"
        customers.append((name, em, c))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["order_id", "order_date", "customer", "email", "city", "country", "product", "category",
                "quantity", "unit_price", "discount_pct", "status", "notes"])
    d = datetime(2023, 10, 2)
    oid = 100231
    for i in range(430):
        name, em, (city, country) = r.choice(customers)
        prod, cat, price = r.choices(products, prod_w)[0]
        qty = r.choices([1, 2, 3, 4, 5, 10], [55, 20, 10, 6, 5, 4])[0]
        disc = r.choices(["", "0", "5", "10", "15", "20"], [35, 25, 15, 13, 7, 5])[0]
        st = r.choices(statuses, status_w)[0]
        note = r.choice(notes_pool)
        if i in (117, 301):
            note = "deliver to side entrance\nring twice"
        email = em if r.random() > 0.05 else ""
        city_out = city if r.random() > 0.03 else ""
        qty_out = str(qty)
        price_out = f"{price:.2f}"
        if r.random() < 0.02:
            price_out = ""
        w.writerow([str(oid), d.strftime("%Y-%m-%d"), name, email, city_out, country, prod, cat, qty_out,
                    price_out, disc, st, note])
        oid += r.choice([1, 1, 1, 2])
        if r.random() < 0.55:
            d += timedelta(days=1)
    return buf.getvalue()


# ---------------------------------------------------------------------------
# 3. README.md
# ---------------------------------------------------------------------------
def make_readme():
    r = random.Random(3303)
    out = []
    out += [
        "# tidepool",
        "",
        "[![build](https://ci.example.org/tidepool/badge.svg)](https://ci.example.org/tidepool) "
        "[![pypi](https://img.shields.io/pypi/v/tidepool.svg)](https://pypi.org/project/tidepool/) "
        "![license](https://img.shields.io/badge/license-Apache--2.0-blue)",
        "",
        "**tidepool** is a small, dependency-light job queue for Python services. It keeps jobs in",
        "PostgreSQL or SQLite, runs them in worker processes, and retries failures with exponential",
        "backoff. It was extracted from the billing service at Harbour Labs in 2021.",
        "",
        "> **Note**",
        "> Version 3.0 dropped support for Python 3.7 and the legacy `tidepool.compat` module.",
        "> See the [changelog](#changelog) before upgrading from 2.x.",
        "",
        "## Contents",
        "",
        "- [Features](#features)",
        "- [Installation](#installation)",
        "- [Quick start](#quick-start)",
        "- [Configuration](#configuration)",
        "- [Running workers](#running-workers)",
        "- [Development](#development)",
        "- [Changelog](#changelog)",
        "- [License](#license)",
        "",
        "## Features",
        "",
        "* Durable queues backed by PostgreSQL (`SKIP LOCKED`) or SQLite (WAL mode)",
        "* Per-queue concurrency limits and rate limits",
        "* Retries with exponential backoff and jitter; dead-letter queue after `max_attempts`",
        "* Scheduled and periodic jobs (cron syntax)",
        "* Prometheus metrics endpoint and structured JSON logs",
        "* Graceful shutdown on `SIGTERM` (finishes running jobs, up to `shutdown_grace`)",
        "",
        "## Installation",
        "",
        "tidepool requires **Python 3.9 or newer**. PostgreSQL 12+ is recommended for production;",
        "SQLite 3.35+ works for development and small deployments.",
        "",
        "### From PyPI",
        "",
        "```bash",
        "pip install tidepool",
        "# with the PostgreSQL driver",
        "pip install \"tidepool[postgres]\"",
        "# everything, including the metrics exporter",
        "pip install \"tidepool[postgres,metrics]\"",
        "```",
        "",
        "### From source",
        "",
        "```bash",
        "git clone https://git.example.org/harbour/tidepool.git",
        "cd tidepool",
        "python -m venv .venv && source .venv/bin/activate",
        "pip install -e \".[dev]\"",
        "```",
        "",
        "### With Docker",
        "",
        "An image is published for every release:",
        "",
        "```bash",
        "docker pull ghcr.io/harbour/tidepool:3.2.0",
        "docker run --rm -e TIDEPOOL_DSN=postgresql://tp:secret@db/tp ghcr.io/harbour/tidepool:3.2.0 worker",
        "```",
        "",
        "After installing, create the schema once:",
        "",
        "```bash",
        "tidepool migrate --dsn \"$TIDEPOOL_DSN\"",
        "```",
        "",
        "## Quick start",
        "",
        "```python",
        "from tidepool import Queue, job",
        "",
        "q = Queue(\"emails\", dsn=\"sqlite:///jobs.db\")",
        "",
        "@job(queue=q, max_attempts=5)",
        "def send_welcome(user_id: int) -> None:",
        "    ...",
        "",
        "send_welcome.enqueue(user_id=42)",
        "```",
        "",
        "Then start a worker in another terminal:",
        "",
        "```bash",
        "tidepool worker --queue emails --concurrency 4",
        "```",
        "",
        "## Configuration",
        "",
        "Settings can be given on the command line, in `tidepool.toml`, or as environment variables",
        "prefixed with `TIDEPOOL_`. Command-line flags win over environment variables, which win over",
        "the file.",
        "",
        "| Setting | Env variable | Default | Description |",
        "|---------|--------------|---------|-------------|",
        "| `dsn` | `TIDEPOOL_DSN` | `sqlite:///tidepool.db` | Database connection string |",
        "| `concurrency` | `TIDEPOOL_CONCURRENCY` | `2` | Worker processes per queue |",
        "| `max_attempts` | `TIDEPOOL_MAX_ATTEMPTS` | `3` | Attempts before a job is dead-lettered |",
        "| `backoff_base` | `TIDEPOOL_BACKOFF_BASE` | `2.0` | Base (seconds) for exponential backoff |",
        "| `poll_interval` | `TIDEPOOL_POLL_INTERVAL` | `0.5` | Seconds between polls when idle |",
        "| `shutdown_grace` | `TIDEPOOL_SHUTDOWN_GRACE` | `30` | Seconds to wait for running jobs on shutdown |",
        "| `metrics_port` | `TIDEPOOL_METRICS_PORT` | `9187` | Port for the Prometheus exporter (0 disables) |",
        "| `log_format` | `TIDEPOOL_LOG_FORMAT` | `text` | `text` or `json` |",
        "",
        "Example `tidepool.toml`:",
        "",
        "```toml",
        "dsn = \"postgresql://tp@localhost/tp\"",
        "concurrency = 8",
        "max_attempts = 5",
        "",
        "[queues.reports]",
        "concurrency = 1",
        "rate_limit = \"10/m\"",
        "```",
        "",
        "## Running workers",
        "",
        "Use a process supervisor (systemd, supervisord, Kubernetes) to keep workers running. A sample",
        "systemd unit is in `contrib/tidepool-worker.service`. Workers exit with status 0 on `SIGTERM`",
        "once running jobs have finished, and with status 75 if `shutdown_grace` expired.",
        "",
        "## Development",
        "",
        "```bash",
        "make test        # pytest, SQLite and PostgreSQL (needs docker)",
        "make lint        # ruff + mypy",
        "make docs        # builds the Sphinx site into docs/_build",
        "```",
        "",
        "Please open an issue before starting on large changes.",
        "",
        "## Changelog",
        "",
        "All notable changes to this project are documented here. The format follows",
        "[Keep a Changelog](https://keepachangelog.com/en/1.1.0/) and the project uses",
        "[Semantic Versioning](https://semver.org/).",
        "",
        "## [Unreleased]",
        "",
        "### Added",
        "- `tidepool queues --json` prints queue depths as JSON.",
        "",
        "### Fixed",
        "- Worker no longer logs a spurious warning when `metrics_port = 0`.",
        "",
    ]
    # versions newest first: (version, date, {section: [entries]})
    versions = [
        ("3.2.0", "2024-02-19", {
            "Added": ["Rate limits per queue (`rate_limit = \"10/m\"`).",
                      "`tidepool retry --dead` re-enqueues every dead-lettered job of a queue.",
                      "Python 3.12 support."],
            "Changed": ["Default `poll_interval` lowered from 1.0 to 0.5 seconds.",
                        "Metrics now use the `tidepool_` prefix consistently."],
            "Fixed": ["Periodic jobs scheduled twice after a daylight-saving change (#412).",
                      "`SKIP LOCKED` query ignored the queue priority column (#418)."],
        }),
        ("3.1.2", "2024-01-08", {
            "Fixed": ["Crash on SQLite when a job payload was larger than 1 MB (#401).",
                      "Wrong exit status (1 instead of 75) when the shutdown grace period expired."],
        }),
        ("3.1.1", "2023-12-14", {
            "Fixed": ["`tidepool migrate` failed on PostgreSQL 16 because of a reserved word (#395)."],
            "Security": ["Redact passwords from DSNs in log output (CVE-2023-49102)."],
        }),
        ("3.1.0", "2023-11-27", {
            "Added": ["Structured JSON logging (`log_format = \"json\"`).",
                      "`@job(timeout=...)` kills jobs that run too long.",
                      "Health-check endpoint `/healthz` on the metrics port."],
            "Changed": ["Retries now add full jitter to the backoff delay."],
            "Deprecated": ["`Queue.push()`; use `Queue.enqueue()` instead."],
        }),
        ("3.0.0", "2023-09-04", {
            "Added": ["Prometheus metrics exporter (`pip install \"tidepool[metrics]\"`).",
                      "Dead-letter queue after `max_attempts` failures."],
            "Changed": ["Minimum Python version is now 3.9.",
                        "Jobs table renamed from `tp_jobs` to `tidepool_jobs`; run `tidepool migrate`.",
                        "`concurrency` now counts processes, not threads."],
            "Removed": ["Python 3.7 and 3.8 support.",
                        "The `tidepool.compat` module.",
                        "The `--threads` command-line flag."],
        }),
        ("2.6.1", "2023-06-30", {
            "Fixed": ["Worker hung on `SIGTERM` while waiting for a database connection (#342).",
                      "Typo in the `tidepool --help` output."],
        }),
        ("2.6.0", "2023-05-15", {
            "Added": ["Cron-style periodic jobs (`@job(cron=\"*/5 * * * *\")`).",
                      "`tidepool queues` command lists queues with pending counts."],
            "Fixed": ["Backoff delay overflowed after 30 attempts (#330)."],
        }),
        ("2.5.3", "2023-03-02", {
            "Fixed": ["SQLite database locked errors under high concurrency; WAL mode is now enabled by default.",
                      "Job arguments with `datetime` values were serialised in local time (#311)."],
        }),
        ("2.5.2", "2023-01-19", {
            "Security": ["Pin `psycopg2` to a version that fixes a libpq TLS issue."],
        }),
        ("2.5.1", "2022-12-05", {
            "Fixed": ["`enqueue()` ignored the `delay` argument on PostgreSQL (#297)."],
        }),
        ("2.5.0", "2022-10-24", {
            "Added": ["Scheduled jobs: `enqueue(..., run_at=datetime)`.",
                      "Per-queue concurrency limits."],
            "Changed": ["Workers now poll with a randomised interval to avoid thundering herds."],
        }),
        ("2.4.0", "2022-07-11", {
            "Added": ["`max_attempts` can be set per job."],
            "Fixed": ["Memory leak in long-running workers that processed many small jobs (#260).",
                      "Worker did not reconnect after a PostgreSQL failover (#266)."],
        }),
        ("2.3.0", "2022-04-04", {
            "Added": ["Docker image on ghcr.io."],
            "Changed": ["Log lines include the job id."],
        }),
        ("2.2.0", "2022-01-17", {
            "Added": ["SQLite backend."],
        }),
        ("2.1.0", "2021-11-02", {
            "Added": ["`tidepool migrate` command."],
            "Fixed": ["Jobs with unicode arguments failed to enqueue (#201)."],
        }),
        ("2.0.0", "2021-08-23", {
            "Changed": ["Complete rewrite around PostgreSQL `SKIP LOCKED`; the Redis backend is gone."],
            "Removed": ["Redis backend."],
        }),
        ("1.4.2", "2021-05-10", {
            "Fixed": ["Retry counter reset after worker restart."],
        }),
        ("1.4.0", "2021-03-29", {
            "Added": ["Exponential backoff for retries."],
        }),
        ("1.0.0", "2021-01-12", {
            "Added": ["First public release, extracted from the Harbour Labs billing service."],
        }),
    ]
    order = ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"]
    for ver, date, secs in versions:
        if ver == "2.5.2":
            out.append(f"## [{ver}] - {date} [YANKED]")
        else:
            out.append(f"## [{ver}] - {date}")
        out.append("")
        if ver == "3.0.0":
            out.append("This release contains breaking changes; read the upgrade notes in `docs/upgrading.md`.")
            out.append("")
        for s in order:
            if s in secs:
                out.append(f"### {s}")
                for e in secs[s]:
                    out.append(f"- {e}")
                out.append("")
    out += [
        "## License",
        "",
        "Apache License 2.0. See [LICENSE](LICENSE).",
        "",
        "[Unreleased]: https://git.example.org/harbour/tidepool/compare/v3.2.0...HEAD",
    ]
    prev = None
    vlist = [v[0] for v in versions]
    for i, v in enumerate(vlist):
        if i + 1 < len(vlist):
            out.append(f"[{v}]: https://git.example.org/harbour/tidepool/compare/v{vlist[i + 1]}...v{v}")
        else:
            out.append(f"[{v}]: https://git.example.org/harbour/tidepool/releases/tag/v{v}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# 4. settings.ini
# ---------------------------------------------------------------------------
def make_ini():
    text = """; ---------------------------------------------------------------
; billing-gateway configuration
; managed by ops -- edits outside the template are overwritten
; last reviewed: 2024-02-28 (mkeller)
; ---------------------------------------------------------------

[general]
app_name = billing-gateway
environment = production
region = eu-central-1
timezone = Europe/Berlin
debug = false
; secret is injected by the deploy pipeline, do not commit
secret_key =
admin_email = ops@harbour.example

[server]
host = 0.0.0.0
port = 8443
workers = 12
; keepalive in seconds
keepalive = 75
timeout = 30
max_body_size = 10M
enabled = true
tls_cert = /etc/ssl/billing/fullchain.pem
tls_key  = /etc/ssl/billing/privkey.pem
#port = 8080   (old plain-http port, kept for reference)

[server.admin]
host = 127.0.0.1
port = 9443
workers = 2
timeout = 120
enabled = true
allowed_networks = 10.0.0.0/8, 192.168.50.0/24

[database]
driver = postgresql
host = db-01.internal
port = 5432
name = billing
user = billing_app
password = ${DB_PASSWORD}
pool_size = 20
pool_max_overflow = 10
timeout = 15
sslmode = verify-full
enabled = true

[database.replica]
driver = postgresql
host = db-02.internal
port = 5432
name = billing
user = billing_ro
password = ${DB_RO_PASSWORD}
pool_size = 10
timeout = 10
; replica is read-only; writes go to [database]
read_only = true
enabled = true

[database.analytics]
driver = clickhouse
host = ch-01.internal
port = 9000
name = billing_events
user = analytics
pool_size = 4
timeout = 60
enabled = false

[cache]
backend = redis
host = cache-01.internal
port = 6379
db = 3
ttl = 300
max_connections = 50
timeout = 2
enabled = true

[cache.sessions]
backend = redis
host = cache-01.internal
port = 6379
db = 4
ttl = 1800
timeout = 2
enabled = true

[queue]
backend = tidepool
dsn = postgresql://tp@db-01.internal/tp
concurrency = 8
max_attempts = 5
backoff_base = 2.0
enabled = true

[worker:invoices]
queue = invoices
concurrency = 4
timeout = 600
schedule = 0 2 * * *
enabled = true

[worker:reminders]
queue = reminders
concurrency = 2
timeout = 120
schedule = */15 * * * *
enabled = true

[worker:exports]
queue = exports
concurrency = 1
timeout = 3600
schedule = 30 3 * * 1
; disabled until the S3 bucket policy is fixed (OPS-2281)
enabled = false

[worker:cleanup]
queue = maintenance
concurrency = 1
timeout = 900
schedule = 0 4 * * *
enabled = true

[payments]
provider = stripe
api_base = https://api.payments.example.net/v1
api_key = ${PAYMENTS_API_KEY}
webhook_secret = ${PAYMENTS_WEBHOOK_SECRET}
timeout = 20
retries = 3
currency = EUR
; amounts below this are batched into one transfer
min_transfer_cents = 500

[payments.sandbox]
provider = stripe
api_base = https://sandbox.payments.example.net/v1
api_key = ${PAYMENTS_SANDBOX_KEY}
timeout = 20
retries = 0
currency = EUR
enabled = false

[mail]
host = smtp.example.net
port = 587
starttls = yes
user = billing-noreply
password = ${SMTP_PASSWORD}
from = Harbour Billing <billing-noreply@harbour.example>
timeout = 10
enabled = true

[logging]
level = INFO
format = json
file = /var/log/billing/gateway.log
max_size = 100M
backups = 14
# per-module overrides
level.sqlalchemy = WARNING
level.payments = DEBUG
level.urllib3 = ERROR

[metrics]
enabled = true
host = 0.0.0.0
port = 9187
path = /metrics
; push gateway is only used by batch jobs
pushgateway = http://pushgw.internal:9091

[rate_limits]
; requests per minute, per API key
default = 600
invoices = 120
refunds = 30
webhooks = 3000

[feature_flags]
new_invoice_layout = true
async_refunds = true
legacy_xml_export = false
sepa_instant = false
multi_currency = true
; beta, only for tenants listed in the admin UI
partial_captures = true

[auth]
provider = oidc
issuer = https://sso.harbour.example/realms/staff
client_id = billing-gateway
client_secret = ${OIDC_CLIENT_SECRET}
session_ttl = 28800
timeout = 5
mfa_required = true
allowed_groups = finance, ops, billing-admins
"""
    return text


# ---------------------------------------------------------------------------
# 5. access.log (combined log format)
# ---------------------------------------------------------------------------
def make_access_log():
    r = random.Random(5505)
    clients = ["203.0.113.7", "203.0.113.45", "198.51.100.23", "198.51.100.88", "192.0.2.14", "192.0.2.201",
               "66.249.66.1", "66.249.66.94", "40.77.167.12", "10.0.4.11", "172.16.8.30", "85.214.132.117",
               "91.198.174.192", "5.9.155.77", "45.133.1.22", "185.220.101.9"]
    client_w = [14, 9, 11, 6, 8, 5, 7, 4, 4, 10, 6, 5, 3, 4, 3, 2]
    uas = {
        "chrome": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36",
        "firefox": "Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0",
        "safari": "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_3) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3 Safari/605.1.15",
        "iphone": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_3_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3 Mobile/15E148 Safari/604.1",
        "googlebot": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "bingbot": "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
        "curl": "curl/8.5.0",
        "python": "python-requests/2.31.0",
        "scanner": "Mozilla/5.0 zgrab/0.x",
    }
    ip_ua = {"66.249.66.1": "googlebot", "66.249.66.94": "googlebot", "40.77.167.12": "bingbot",
             "10.0.4.11": "python", "172.16.8.30": "curl", "45.133.1.22": "scanner", "185.220.101.9": "scanner"}
    pages = ["/", "/pricing", "/docs/", "/docs/getting-started", "/docs/api", "/blog/", "/blog/2024/02/release-3-2",
             "/about", "/contact", "/login", "/signup"]
    assets = ["/static/css/app.3f9a1c.css", "/static/js/app.8b2e44.js", "/static/img/logo.svg", "/favicon.ico",
              "/static/fonts/inter.woff2"]
    api = ["/api/v1/items", "/api/v1/items/{id}", "/api/v1/orders", "/api/v1/orders/{id}", "/api/v1/search",
           "/api/v1/health"]
    probes = ["/wp-login.php", "/.env", "/phpmyadmin/index.php", "/admin/config.php", "/.git/config",
              "/cgi-bin/luci", "/xmlrpc.php"]
    lines = []
    t = datetime(2024, 3, 12, 0, 0, 4, tzinfo=timezone.utc)
    end = datetime(2024, 3, 12, 23, 59, 50, tzinfo=timezone.utc)
    while t < end:
        ip = r.choices(clients, client_w)[0]
        ua_key = ip_ua.get(ip) or r.choice(["chrome", "chrome", "chrome", "firefox", "safari", "iphone"])
        user = "-"
        k = r.random()
        method = "GET"
        proto = "HTTP/1.1" if r.random() < 0.7 else "HTTP/2.0"
        if ua_key == "scanner":
            path = r.choice(probes)
            status = r.choice([404, 404, 404, 403, 400])
            if r.random() < 0.2:
                method = "POST"
        elif ua_key in ("googlebot", "bingbot"):
            path = r.choice(pages + ["/robots.txt", "/sitemap.xml", "/old-page.html"])
            status = 301 if path == "/old-page.html" else r.choices([200, 304, 404], [85, 10, 5])[0]
        elif ua_key in ("python", "curl"):
            path = r.choice(api)
            if path == "/api/v1/health":
                status = 200
            else:
                status = r.choices([200, 201, 400, 401, 404, 429, 500, 502, 503], [60, 6, 4, 5, 5, 6, 5, 4, 3])[0]
            if path in ("/api/v1/orders",) and r.random() < 0.4:
                method = "POST"
                status = r.choice([201, 201, 201, 400, 422, 500])
            if "{id}" in path and r.random() < 0.15:
                method = r.choice(["PUT", "DELETE"])
            user = "svc-sync" if ip == "10.0.4.11" and r.random() < 0.8 else "-"
        else:
            if k < 0.45:
                path = r.choice(assets)
                status = r.choices([200, 304], [60, 40])[0]
            elif k < 0.85:
                path = r.choice(pages)
                status = r.choices([200, 304, 404, 500], [88, 6, 4, 2])[0]
                if path == "/login" and r.random() < 0.35:
                    method = "POST"
                    status = r.choice([302, 302, 401, 200])
            else:
                path = r.choice(api)
                status = r.choices([200, 401, 404, 500, 502, 504], [78, 6, 6, 4, 3, 3])[0]
        if "{id}" in path:
            path = path.replace("{id}", str(r.randint(1, 9999)))
        if path in ("/api/v1/items", "/api/v1/search") and r.random() < 0.5:
            path += "?" + r.choice([f"page={r.randint(1, 20)}", f"q={r.choice(['lamp', 'ssd', 'usb+c', 'monitor'])}",
                                    f"page={r.randint(1, 5)}&per_page=50"])
        # size
        if status in (304, 204) or method == "DELETE":
            size = "-" if status == 304 else "0"
        elif status >= 500:
            size = str(r.choice([0, 157, 173, 571]))
        elif status == 404:
            size = str(r.choice([153, 555, 1245]))
        elif status in (301, 302):
            size = str(r.choice([162, 178]))
        elif path.startswith("/static/js"):
            size = str(r.randint(180000, 240000))
        elif path.startswith("/static/css"):
            size = str(r.randint(40000, 52000))
        elif path.startswith("/static/fonts"):
            size = "98304"
        elif path.startswith("/api"):
            size = str(r.randint(80, 24000))
        else:
            size = str(r.randint(2000, 38000))
        ref = "-"
        if ua_key in ("chrome", "firefox", "safari", "iphone") and r.random() < 0.6:
            ref = "https://www.example.org" + r.choice(pages)
        ts = t.strftime("%d/%b/%Y:%H:%M:%S +0000")
        req = f"{method} {path} {proto}"
        lines.append(f'{ip} - {user} [{ts}] "{req}" {status} {size} "{ref}" "{uas[ua_key]}"')
        # irregular lines
        if r.random() < 0.004:
            bip = r.choice(["45.133.1.22", "185.220.101.9", "5.9.155.77"])
            lines.append(f'{bip} - - [{ts}] "\\x16\\x03\\x01\\x02\\x00\\x01\\x00\\x01\\xfc\\x03\\x03" 400 157 "-" "-"')
        if r.random() < 0.003:
            lines.append(f'{r.choice(["5.9.155.77", "85.214.132.117"])} - - [{ts}] "-" 408 0 "-" "-"')
        h = t.hour
        gap = 200 if h < 7 else (80 if h < 18 else 120)
        if h == 14:
            gap = 25
        t += timedelta(seconds=r.randint(1, gap))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# 6. git_log.txt (git log --stat)
# ---------------------------------------------------------------------------
def make_git_log():
    r = random.Random(6606)
    authors = [("Maren Keller", "maren.keller@harbour.example"), ("Tobias Brandt", "tobias@brandt.dev"),
               ("Priya Natarajan", "priya.n@harbour.example"), ("Jonas Weber", "jweber@users.noreply.github.com"),
               ("Sofia Almeida", "sofia.almeida@harbour.example"), ("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com")]
    author_w = [30, 22, 18, 10, 12, 8]
    tzs = {"Maren Keller": "+0100", "Tobias Brandt": "+0100", "Priya Natarajan": "+0530", "Jonas Weber": "+0100",
           "Sofia Almeida": "+0000", "dependabot[bot]": "+0000"}
    files = ["tidepool/__init__.py", "tidepool/queue.py", "tidepool/worker.py", "tidepool/backends/postgres.py",
             "tidepool/backends/sqlite.py", "tidepool/cli.py", "tidepool/metrics.py", "tidepool/retry.py",
             "tidepool/schedule.py", "tests/test_queue.py", "tests/test_worker.py", "tests/test_retry.py",
             "tests/test_cli.py", "tests/conftest.py", "docs/index.rst", "docs/configuration.rst", "README.md",
             "CHANGELOG.md", "pyproject.toml", ".github/workflows/ci.yml", "Makefile"]
    subjects = {
        "feat": ["add rate limits per queue", "support Python 3.12", "add `retry --dead` command",
                 "expose queue depth metric", "add /healthz endpoint", "allow per-job timeout",
                 "add JSON log format", "cron schedule for periodic jobs", "queues --json output"],
        "fix": ["periodic jobs scheduled twice after DST change", "honour priority in SKIP LOCKED query",
                "exit 75 when shutdown grace expires", "large payloads crash SQLite backend",
                "redact DSN passwords in logs", "reserved word in migration on PG16",
                "spurious warning when metrics disabled", "reconnect after failover",
                "timeout not applied to retried jobs", "off-by-one in backoff cap"],
        "docs": ["document rate_limit option", "fix typo in quick start", "update changelog for 3.2.0",
                 "explain exit codes", "add upgrading guide"],
        "test": ["cover DST edge cases", "flaky worker shutdown test", "add PG16 to matrix"],
        "refactor": ["split backends into package", "simplify retry scheduler", "move CLI parsing to cli.py"],
        "chore": ["bump version to 3.2.0", "bump version to 3.1.2", "update ruff config", "release 3.1.1"],
        "ci": ["cache pip downloads", "run tests on 3.12", "pin actions to SHAs"],
    }
    n = 118
    t = datetime(2024, 3, 8, 17, 42, 10)
    commits = []
    for i in range(n):
        name, email = r.choices(authors, author_w)[0]
        is_merge = (name != "dependabot[bot]") and r.random() < 0.12
        if name == "dependabot[bot]":
            pkg, a, b = r.choice([("pytest", "7.4.4", "8.0.2"), ("ruff", "0.1.14", "0.2.2"), ("mypy", "1.7.1", "1.8.0"),
                                  ("psycopg2-binary", "2.9.7", "2.9.9"), ("actions/checkout", "3", "4"),
                                  ("prometheus-client", "0.19.0", "0.20.0")])
            subj = f"build(deps): bump {pkg} from {a} to {b}"
            body = [f"Bumps [{pkg}](https://github.com/{pkg}) from {a} to {b}.", "", "Signed-off-by: dependabot[bot] <support@github.com>"]
            fl = [".github/workflows/ci.yml"] if pkg.startswith("actions") else ["pyproject.toml"]
        elif is_merge:
            pr = r.randint(380, 440)
            br = r.choice(["feature/rate-limits", "fix/dst", "fix/sqlite-payload", "docs/upgrading", "ci/py312", "feature/healthz"])
            subj = f"Merge pull request #{pr} from harbour/{br}"
            body = [r.choice(subjects["fix"] + subjects["feat"]).capitalize()]
            fl = []
        else:
            typ = r.choices(list(subjects.keys()), [20, 26, 10, 8, 7, 6, 5])[0]
            scope = ""
            if typ in ("feat", "fix", "refactor") and r.random() < 0.6:
                scope = "(" + r.choice(["worker", "queue", "cli", "sqlite", "postgres", "metrics"]) + ")"
            subj = f"{typ}{scope}: {r.choice(subjects[typ])}"
            body = []
            if r.random() < 0.5:
                body = [r.choice(["The previous behaviour surprised users running several workers.",
                                  "Found while investigating a production incident.",
                                  "No functional change intended.",
                                  "This matches what the docs already promised."])]
                if r.random() < 0.4:
                    body += ["", f"Closes #{r.randint(380, 440)}"]
            pool = files[:]
            if typ == "docs":
                pool = [f for f in files if f.startswith("docs/") or f.endswith(".md")]
            elif typ == "test":
                pool = [f for f in files if f.startswith("tests/")]
            elif typ == "ci":
                pool = [".github/workflows/ci.yml", "Makefile", "pyproject.toml"]
            elif typ == "chore":
                pool = ["pyproject.toml", "tidepool/__init__.py", "CHANGELOG.md", "Makefile"]
            k = min(len(pool), r.choices([1, 2, 3, 4, 6], [35, 30, 18, 10, 7])[0])
            fl = sorted(r.sample(pool, k))
            if typ == "docs" and r.random() < 0.3:
                fl = sorted(fl + ["docs/_static/architecture.png"])
        stats = []
        for f in fl:
            if f.endswith(".png"):
                stats.append((f, None, None, (r.randint(0, 1) * r.randint(20000, 40000), r.randint(20000, 60000))))
            elif name == "dependabot[bot]":
                stats.append((f, 1, 1, None))
            else:
                ins = r.choices([0, r.randint(1, 12), r.randint(10, 80), r.randint(80, 300)], [10, 50, 30, 10])[0]
                dels = r.choices([0, r.randint(1, 10), r.randint(10, 60)], [35, 45, 20])[0]
                if ins == 0 and dels == 0:
                    ins = 1
                stats.append((f, ins, dels, None))
        sha = hashlib.sha1(f"{i}-{subj}-{t.isoformat()}".encode()).hexdigest()
        parents = None
        if is_merge:
            parents = (hashlib.sha1(f"p1-{i}".encode()).hexdigest()[:7], hashlib.sha1(f"p2-{i}".encode()).hexdigest()[:7])
        commits.append(dict(sha=sha, name=name, email=email, t=t, tz=tzs[name], subj=subj, body=body,
                            stats=stats, merge=parents))
        t -= timedelta(minutes=r.randint(20, 60 * 40))
    out = []
    for c in commits:
        out.append(f"commit {c['sha']}")
        if c["merge"]:
            out.append(f"Merge: {c['merge'][0]} {c['merge'][1]}")
        out.append(f"Author: {c['name']} <{c['email']}>")
        # git default date format: Fri Mar 8 17:42:10 2024 +0100
        d = c["t"]
        out.append(f"Date:   {d.strftime('%a %b')} {d.day} {d.strftime('%H:%M:%S %Y')} {c['tz']}")
        out.append("")
        out.append(f"    {c['subj']}")
        if c["body"]:
            out.append("")
            for b in c["body"]:
                out.append(("    " + b) if b else "")
        out.append("")
        if c["stats"]:
            width = max(len(s[0]) for s in c["stats"])
            maxchg = max((s[1] + s[2]) for s in c["stats"] if s[1] is not None) if any(s[1] is not None for s in c["stats"]) else 0
            cw = max(len(str(s[1] + s[2])) for s in c["stats"] if s[1] is not None) if maxchg else 3
            tot_i = tot_d = 0
            for f, ins, dels, binsz in c["stats"]:
                if binsz is not None:
                    out.append(f" {f.ljust(width)} | {'Bin'.rjust(cw)} {binsz[0]} -> {binsz[1]} bytes")
                    continue
                tot_i += ins
                tot_d += dels
                total = ins + dels
                scale = 1.0 if maxchg <= 50 else 50.0 / maxchg
                p = int(round(ins * scale)) if ins else 0
                m = int(round(dels * scale)) if dels else 0
                if ins and p == 0:
                    p = 1
                if dels and m == 0:
                    m = 1
                out.append(f" {f.ljust(width)} | {str(total).rjust(cw)} {'+' * p}{'-' * m}")
            nf = len(c["stats"])
            parts = [f"{nf} file{'s' if nf != 1 else ''} changed"]
            if tot_i:
                parts.append(f"{tot_i} insertion{'s' if tot_i != 1 else ''}(+)")
            if tot_d:
                parts.append(f"{tot_d} deletion{'s' if tot_d != 1 else ''}(-)")
            out.append(" " + ", ".join(parts))
            out.append("")
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def main():
    os.makedirs(OUT, exist_ok=True)
    write("service.log", make_service_log())
    write("orders.csv", make_orders_csv())
    write("README.md", make_readme())
    write("settings.ini", make_ini())
    write("access.log", make_access_log())
    write("git_log.txt", make_git_log())


if __name__ == "__main__":
    main()
