#!/usr/bin/env python3
"""Generate the six text documents for paraphrase writer B (suite: text).

Deterministic: every generator uses its own random.Random seeded with a fixed
integer, no set/dict-hash ordering is relied upon, and files are written with
'\n' newlines in UTF-8.  Run:  python3 make_docs.py [outdir]
"""
import os
import random
import sys
from datetime import datetime, timedelta, timezone

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "docs")


def write(name, text):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


# ---------------------------------------------------------------------------
# 1. JSON-lines application log
# ---------------------------------------------------------------------------
def make_app_log():
    rng = random.Random(20240521)
    services = ["api-gateway", "auth", "billing", "search", "notifier", "catalog", "scheduler"]
    sweights = [30, 17, 12, 19, 8, 11, 3]
    hosts = {
        "api-gateway": ["gw-01", "gw-02"],
        "auth": ["auth-01", "auth-02"],
        "billing": ["bill-01"],
        "search": ["srch-01", "srch-02", "srch-03"],
        "notifier": ["ntf-01"],
        "catalog": ["cat-01", "cat-02"],
        "scheduler": ["sched-01"],
    }
    users = ["u%d" % n for n in rng.sample(range(1000, 9999), 36)]
    paths = [("GET", "/api/v2/orders"), ("GET", "/api/v2/products"), ("POST", "/api/v2/cart"),
             ("GET", "/api/v2/cart"), ("POST", "/api/v2/checkout"), ("GET", "/api/v2/search"),
             ("DELETE", "/api/v2/cart/items"), ("GET", "/api/v2/account")]
    lat_base = {"api-gateway": 60, "auth": 35, "billing": 180, "search": 120, "notifier": 90,
                "catalog": 25, "scheduler": 400}

    def lat(svc, slow=False):
        b = lat_base[svc]
        v = rng.lognormvariate(0, 0.55) * b
        if slow:
            v *= rng.uniform(6, 20)
        return int(round(v))

    msgs = {
        "api-gateway": {
            "INFO": ["request completed"],
            "WARN": ["slow upstream response", "rate limit threshold at 80%", "client closed connection early"],
            "ERROR": ["upstream timeout", "bad gateway from upstream"],
            "DEBUG": ["route matched", "headers normalized"],
        },
        "auth": {
            "INFO": ["login succeeded", "token refreshed", "logout"],
            "WARN": ["login failed: bad password", "token close to expiry", "mfa challenge skipped"],
            "ERROR": ["ldap connection refused", "jwks fetch failed"],
            "DEBUG": ["session cache lookup", "password hash verified"],
        },
        "billing": {
            "INFO": ["invoice created", "payment captured", "refund issued"],
            "WARN": ["card declined", "retrying payment provider", "currency rate stale"],
            "ERROR": ["payment provider timeout", "ledger write failed"],
            "DEBUG": ["tax rules loaded", "fx cache lookup"],
        },
        "search": {
            "INFO": ["query served", "query served", "suggestions served"],
            "WARN": ["slow query", "partial results: shard lagging"],
            "ERROR": ["index shard unavailable", "query parse error"],
            "DEBUG": ["analyzer chain built", "cache lookup"],
        },
        "notifier": {
            "INFO": ["email queued", "push sent", "sms sent"],
            "WARN": ["smtp deferred", "push token invalid"],
            "ERROR": ["smtp connection reset", "template render failed"],
            "DEBUG": ["batch flushed", "cache lookup"],
        },
        "catalog": {
            "INFO": ["product fetched", "cache hit", "price list refreshed"],
            "WARN": ["cache miss storm", "stale price list"],
            "ERROR": ["db deadlock detected", "db connection pool exhausted"],
            "DEBUG": ["cache lookup", "query plan reused"],
        },
        "scheduler": {
            "INFO": ["job started", "job finished"],
            "WARN": ["job overran its slot"],
            "ERROR": ["job crashed"],
            "DEBUG": ["tick"],
        },
    }
    jobs = ["reindex-products", "expire-sessions", "send-digest", "rollup-metrics"]

    t = datetime(2024, 5, 21, 8, 58, 3, 412000, tzinfo=timezone.utc)
    out = []
    # incident window: billing + api errors spike around 09:41-09:47
    for i in range(1140):
        t += timedelta(milliseconds=rng.randint(40, 7600))
        in_spike = datetime(2024, 5, 21, 9, 41, tzinfo=timezone.utc) <= t < datetime(2024, 5, 21, 9, 47, tzinfo=timezone.utc)
        sw = list(sweights)
        if in_spike:
            sw[2] *= 3
        svc = rng.choices(services, sw)[0]
        lw = [9, 70, 13, 8]
        if in_spike and svc in ("billing", "api-gateway"):
            lw = [3, 35, 20, 42]
        level = rng.choices(["DEBUG", "INFO", "WARN", "ERROR"], lw)[0]
        msg = rng.choice(msgs[svc][level])
        rec = {"ts": t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000),
               "level": level, "service": svc, "host": rng.choice(hosts[svc])}
        rec["msg"] = msg
        if level != "DEBUG":
            if svc == "scheduler":
                rec["job"] = rng.choice(jobs)
                if msg != "job started":
                    rec["latency_ms"] = lat(svc, slow=(level != "INFO"))
            else:
                slow = level == "WARN" and ("slow" in msg or "timeout" in msg) or (level == "ERROR" and "timeout" in msg)
                r = rng.random()
                if r < 0.035:
                    rec["latency_ms"] = None
                elif not (svc == "notifier" and msg == "email queued"):
                    rec["latency_ms"] = lat(svc, slow=slow)
        if svc not in ("scheduler",):
            if level == "DEBUG" and rng.random() < 0.5:
                pass
            elif rng.random() < 0.06:
                rec["user"] = None
            else:
                rec["user"] = rng.choice(users)
        if svc == "api-gateway" and level != "DEBUG":
            m, p = rng.choice(paths)
            rec["method"] = m
            rec["path"] = p
            if level == "ERROR":
                rec["status"] = 504 if "timeout" in msg else 502
            elif level == "WARN" and "closed" in msg:
                rec["status"] = 499
            else:
                rec["status"] = rng.choices([200, 201, 204, 304, 400, 401, 404, 429], [60, 8, 5, 6, 4, 3, 4, 2])[0]
                if m == "POST" and rec["status"] == 200:
                    rec["status"] = 201
        if svc == "billing" and msg in ("invoice created", "payment captured", "refund issued", "card declined"):
            rec["amount_cents"] = rng.choice([499, 999, 1299, 1999, 2499, 4999, 8900, 12900, 15000, 23999])
            rec["currency"] = rng.choices(["USD", "EUR", "GBP"], [70, 20, 10])[0]
        if svc == "search" and msg in ("query served", "slow query", "suggestions served"):
            rec["hits"] = rng.randint(0, 480) if rng.random() > 0.08 else 0
        if level == "ERROR":
            if rng.random() < 0.7:
                rec["error"] = {
                    "upstream timeout": "context deadline exceeded",
                    "bad gateway from upstream": "connection reset by peer",
                    "payment provider timeout": "POST https://api.paygate.example/v3/charges: i/o timeout",
                    "ledger write failed": "pq: could not serialize access due to concurrent update",
                    "db deadlock detected": "pq: deadlock detected",
                    "db connection pool exhausted": "pool: timed out waiting for connection",
                }.get(msg, msg.replace(" ", "_"))
            if rng.random() < 0.5:
                rec["retry"] = rng.randint(1, 3)
        if rng.random() < 0.9 and level != "DEBUG":
            rec["request_id"] = "%016x" % rng.getrandbits(64)
        out.append(rec)

    import json
    lines = [json.dumps(r, separators=(",", ":")) for r in out]
    # a couple of realistic oddities: log rotation marker objects with different shape
    lines.insert(0, json.dumps({"ts": "2024-05-21T08:58:03.001Z", "level": "INFO", "service": "logshipper",
                                "msg": "file opened", "file": "/var/log/shop/app.jsonl", "rotated": True},
                               separators=(",", ":")))
    write("app.jsonl", "\n".join(lines) + "\n")


# ---------------------------------------------------------------------------
# 2. TSV inventory table
# ---------------------------------------------------------------------------
def make_inventory():
    rng = random.Random(77031)
    cats = {
        "Fasteners": ("FST", [("Hex bolt M{} x {}mm", [6, 8, 10, 12], [20, 30, 40, 50, 60, 80]),
                              ("Wood screw #{} x {} in", [6, 8, 10], ["1", "1-1/4", "2", "2-1/2", "3"]),
                              ("Lock washer M{} ({} pk)", [6, 8, 10, 12], [25, 50, 100]),
                              ("Carriage bolt M{} x {}mm", [8, 10, 12], [50, 75, 100, 150]),
                              ("Drywall anchor #{} ({} pk)", [6, 8, 10], [10, 25, 50])]),
        "Electrical": ("ELC", [("THHN wire {} AWG {} ft", [10, 12, 14], [50, 100, 500]),
                               ("Duplex outlet {}A ({} pk)", [15, 20], [1, 10]),
                               ("Wire nut size {} ({} pk)", ["yellow", "red", "orange", "blue"], [25, 100]),
                               ("Breaker {}A {}-pole", [15, 20, 30, 50], [1, 2])]),
        "Plumbing": ("PLB", [("PVC elbow {} in {}", ["1/2", "3/4", "1", "1-1/2"], ["45 deg", "90 deg"]),
                             ("Copper pipe {} in x {} ft", ["1/2", "3/4", "1"], [2, 5, 10]),
                             ("Ball valve {} in {}", ["1/2", "3/4", "1"], ["sweat", "threaded", "PEX"]),
                             ("PEX crimp ring {} in ({} pk)", ["1/2", "3/4"], [25, 50, 100])]),
        "Tools": ("TL", [("Socket set {} pc {} drive", [20, 40, 65], ["1/4 in", "3/8 in", "1/2 in"]),
                         ("Hex key set {} pc {}", [9, 13, 26], ["metric", "SAE"]),
                         ("Utility blade {} pk {}", [5, 10, 50, 100], ["standard", "heavy duty"]),
                         ("Drill bit {} in {}", ["1/8", "3/16", "1/4", "3/8", "1/2"], ["HSS", "cobalt", "masonry"])]),
        "Safety": ("SAF", [("Nitrile gloves size {} ({} ct)", ["S", "M", "L", "XL"], [50, 100]),
                           ("Safety glasses {} lens {}", ["clear", "smoke", "amber"], ["anti-fog", "standard"]),
                           ("Ear plugs NRR {} ({} pr)", [29, 32, 33], [50, 200]),
                           ("Dust mask N95 ({} ct) {}", [10, 20, 50], ["valved", "unvalved"])]),
        "Adhesives": ("ADH", [("Epoxy {} min {} oz", [5, 30], [1, 8]),
                              ("Construction adhesive {} oz {}", [10, 28], ["standard", "heavy duty"]),
                              ("Wood glue {} oz {}", [8, 16, 32], ["interior", "exterior"])]),
        "Paint": ("PNT", [("Interior latex {} gal {}", [1, 5], ["eggshell", "satin", "semi-gloss", "flat"]),
                          ("Primer {} {}", ["1 qt", "1 gal"], ["oil-based", "water-based", "shellac"]),
                          ("Spray enamel {} oz {}", [12], ["gloss black", "flat white", "safety yellow", "red"])]),
    }
    cat_names = list(cats.keys())
    cat_w = [22, 16, 15, 14, 12, 9, 12]
    warehouses = ["RNO-1", "PDX-2", "SLC-1", "BOI-3"]
    suppliers = ["Acme Industrial", "Bolt & Nut Co", "Cascade Supply", "Great Basin Dist.", "NorthPeak",
                 "Sierra Hardware", "Tri-State Wholesale"]
    header = ["sku", "item", "category", "warehouse", "qty_on_hand", "reorder_point", "unit_cost_usd",
              "supplier", "last_counted"]
    rows = []
    used = []
    for i in range(286):
        cat = rng.choices(cat_names, cat_w)[0]
        pre, tmpl = cats[cat]
        while True:
            sku = "%s-%05d" % (pre, rng.randint(10000, 99999))
            if sku not in used:
                used.append(sku)
                break
        fmt, aa, bb = rng.choice(tmpl)
        item = fmt.format(rng.choice(aa), rng.choice(bb))
        wh = rng.choices(warehouses, [35, 28, 22, 15])[0]
        reorder = rng.choice([10, 20, 25, 40, 50, 75, 100, 150])
        qty = int(rng.lognormvariate(0, 0.9) * reorder * 1.3)
        if rng.random() < 0.05:
            qty = 0
        base = {"Fasteners": 0.6, "Electrical": 9, "Plumbing": 6, "Tools": 24, "Safety": 11,
                "Adhesives": 7, "Paint": 18}[cat]
        cost = round(base * rng.uniform(0.4, 3.2), 2)
        supplier = rng.choice(suppliers)
        d = datetime(2024, 1, 8) + timedelta(days=rng.randint(0, 150))
        row = [sku, item, cat, wh, str(qty), str(reorder), "%.2f" % cost, supplier, d.strftime("%Y-%m-%d")]
        # missing values
        if rng.random() < 0.045:
            row[6] = ""
        if rng.random() < 0.06:
            row[7] = ""
        if rng.random() < 0.025:
            row[4] = ""
        if rng.random() < 0.05:
            row[8] = ""
        rows.append(row)
    rows.sort(key=lambda r: (r[3], r[0]))
    lines = ["\t".join(header)] + ["\t".join(r) for r in rows]
    write("inventory.tsv", "\n".join(lines) + "\n")


# ---------------------------------------------------------------------------
# 3. Incident report (Markdown)
# ---------------------------------------------------------------------------
INCIDENT = """# Incident Report: INC-2024-0317 — Checkout failures caused by payment ledger lock contention

| Field | Value |
|---|---|
| Incident ID | INC-2024-0317 |
| Severity | SEV-1 |
| Status | Resolved |
| Date | 2024-05-21 |
| Detected | 09:41 UTC |
| Mitigated | 10:52 UTC |
| Resolved | 11:38 UTC |
| Incident Commander | Priya Natarajan |
| Communications Lead | Tomás Ferreira |
| Scribe | Hannah Olsen |
| Services affected | billing, api-gateway, notifier |
| Report author | Priya Natarajan |
| Review meeting | 2024-05-23 15:00 UTC |

## Summary

Between 09:38 and 10:52 UTC on 2024-05-21, a large share of checkout attempts on the web
storefront and the mobile apps failed with HTTP 502/504 errors. The billing service was unable
to write to the payment ledger because a schema migration (`0148_ledger_add_fx_columns`) took an
`ACCESS EXCLUSIVE` lock on the `ledger_entries` table while a long-running reconciliation query
held a conflicting lock. Billing requests queued behind the lock, exhausted the billing database
connection pool, and the API gateway timed out waiting for billing.

Payments that were captured by the payment provider but not recorded in the ledger were
reconciled manually afterwards; no customer was charged twice.

## Impact

- Duration of customer impact: 74 minutes (09:38 – 10:52 UTC).
- Checkout success rate dropped from a baseline of 98.7% to a low of 31.2% at 09:56 UTC.
- 4,812 checkout attempts failed; 1,937 unique customers saw at least one failure.
- 212 payments were captured by the provider without a matching ledger entry ("orphan
  captures"); all 212 were reconciled by 14:05 UTC.
- Estimated lost revenue: USD 86,400 (orders abandoned and not retried within 24 hours).
- Order confirmation emails were delayed by up to 47 minutes for 3,106 orders because the
  notifier backlog grew while billing retried.
- No data loss. No security impact.

## Detection

The incident was detected by the `CheckoutSuccessRateLow` alert (threshold: below 90% for
3 minutes), which paged the on-call billing engineer at 09:41 UTC. Customer support received
the first ticket about failed checkouts at 09:44 UTC.

The migration had been started manually at 09:36 UTC and did not trigger any alert on its own.

## Timeline

All times are UTC on 2024-05-21 unless noted.

- **09:12** — Nightly reconciliation job `recon-daily` starts late (normally 06:00) after being
  held by a failed dependency check; it opens a long transaction on `ledger_entries`.
- **09:36** — Deploy engineer (Marek Kowalski) starts migration `0148_ledger_add_fx_columns`
  from the release runbook for billing v4.12.0.
- **09:37** — Migration waits for `ACCESS EXCLUSIVE` lock on `ledger_entries`; all new
  ledger writes start queuing behind it.
- **09:38** — First billing requests exceed the 5 s timeout; api-gateway starts returning 504.
- **09:41** — `CheckoutSuccessRateLow` pages on-call (Lena Vogt).
- **09:44** — First customer support ticket about failed checkouts.
- **09:46** — Lena Vogt acknowledges the page and opens #inc-0317.
- **09:49** — Billing DB connection pool exhausted (`pool: timed out waiting for connection`).
- **09:51** — Priya Natarajan takes Incident Commander role; SEV-2 declared.
- **09:53** — Status page updated: "Some customers may be unable to complete checkout."
- **09:56** — Checkout success rate bottoms out at 31.2%.
- **09:58** — Incident upgraded to SEV-1.
- **10:02** — Hypothesis 1: payment provider outage. Provider status page shows all green.
- **10:07** — Provider latency confirmed normal from synthetic probes; hypothesis 1 rejected.
- **10:11** — Hannah Olsen notices lock waits on `ledger_entries` in the DB dashboard.
- **10:14** — Marek Kowalski reports the migration still running in the deploy terminal.
- **10:17** — Decision: do not kill the migration yet (fear of partial DDL); investigate blocker.
- **10:23** — Blocking PID identified as the `recon-daily` reconciliation transaction.
- **10:26** — Attempt to cancel reconciliation query with `pg_cancel_backend`; no effect
  (query was in a client-side wait).
- **10:31** — Billing scaled from 6 to 12 replicas to drain the queue; made things worse by
  opening more connections.
- **10:35** — Billing scaled back to 6 replicas.
- **10:38** — `pg_terminate_backend` on the reconciliation session.
- **10:39** — Migration acquires its lock and completes in 41 seconds.
- **10:41** — Ledger writes resume; billing queue starts draining.
- **10:44** — api-gateway 5xx rate back under 5%.
- **10:47** — Notifier backlog peaks at 9,870 messages.
- **10:52** — Checkout success rate back above 97%. Customer impact ends.
- **10:55** — Status page updated to "Monitoring".
- **11:10** — Notifier backlog cleared.
- **11:20** — Orphan capture report started by Finance Engineering (Ifeoma Obi).
- **11:38** — Incident declared resolved; status page set to "Resolved".
- **14:05** — All 212 orphan captures reconciled.

## Root Cause

The direct cause was lock contention on `ledger_entries`:

1. The reconciliation job `recon-daily` normally runs at 06:00 UTC, when traffic is low. On
   2024-05-21 it was delayed by three hours because its upstream dependency check
   (`fx-rates-ready`) failed and was retried with back-off. The scheduler has no cut-off
   time for this job, so it started at 09:12 UTC during business hours.
2. The reconciliation job holds one transaction open for the whole run (typically 40–70
   minutes) and takes a `SHARE` lock on `ledger_entries`.
3. Migration `0148_ledger_add_fx_columns` issues `ALTER TABLE ... ADD COLUMN ... DEFAULT`
   which needs an `ACCESS EXCLUSIVE` lock. PostgreSQL queues every later lock request
   behind a waiting `ACCESS EXCLUSIVE` request, so ordinary `INSERT`s from billing queued too.
4. The migration was run without a `lock_timeout`, against the release checklist, which
   requires `SET lock_timeout = '3s'` for all DDL on hot tables.

Contributing factors:

- Billing's connection pool has no queue limit; requests waited until the gateway timed out,
  so the failure was slow rather than fast.
- Scaling billing up increased connection pressure on an already saturated database.
- The DB dashboard does not show lock waits on the front page; it took 30 minutes to look
  at lock state.
- The release runbook for billing v4.12.0 did not mention that migration 0148 touches a hot table.

## What went well

- The checkout success alert fired within 3 minutes of customer impact.
- The payment provider's idempotency keys prevented double charges.
- Finance Engineering had a tested procedure for orphan captures.

## What went poorly

- It took 42 minutes from the page to identifying the blocking session.
- Scaling up billing was tried without checking database connection headroom.
- Status page updates lagged the SEV-1 declaration by more than 20 minutes at one point.

## Action Items

| ID | Action | Owner | Due | Status |
|---|---|---|---|---|
| AI-1 | Enforce `lock_timeout` in the migration runner for all DDL (fail closed) | Marek Kowalski | 2024-05-31 | Done |
| AI-2 | Add a cut-off time to `recon-daily`; skip the run if it cannot start before 07:30 UTC | Ifeoma Obi | 2024-06-07 | In progress |
| AI-3 | Split reconciliation into batches with short transactions | Ifeoma Obi | 2024-06-28 | Open |
| AI-4 | Add lock-wait panel to the front page of the billing DB dashboard | Hannah Olsen | 2024-05-29 | Done |
| AI-5 | Alert on `pg_locks` waits longer than 60 s on `ledger_entries` | Hannah Olsen | 2024-06-05 | In progress |
| AI-6 | Bound the billing connection pool queue and fail fast with 503 | Lena Vogt | 2024-06-14 | Open |
| AI-7 | Document "do not scale up when the DB pool is saturated" in the billing runbook | Lena Vogt | 2024-05-28 | Done |
| AI-8 | Release checklist: flag migrations touching hot tables in the release notes | Marek Kowalski | 2024-06-07 | Open |
| AI-9 | Status page: template for SEV-1 checkout incidents, update every 15 minutes | Tomás Ferreira | 2024-06-03 | Done |
| AI-10 | Automate orphan capture detection as a nightly job | Ifeoma Obi | 2024-07-12 | Open |
| AI-11 | Gateway: shorter timeout for checkout calls to billing (5 s → 3 s) with retry budget | Dmitri Sokolov | 2024-06-21 | Open |
| AI-12 | Game day: simulate ledger lock contention in staging | Priya Natarajan | 2024-07-19 | Open |
| AI-13 | Notifier: prioritise order confirmations over marketing mail in the queue | Dmitri Sokolov | 2024-06-28 | Won't do |

Note: AI-13 was closed as "Won't do" at the review meeting; the notifier queue redesign in
Q3 (tracked separately as PLAT-2291) covers it.

## Supporting data

### Checkout success rate (5-minute buckets)

| Window (UTC) | Attempts | Succeeded | Success rate |
|---|---|---|---|
| 09:30–09:35 | 1,204 | 1,189 | 98.8% |
| 09:35–09:40 | 1,187 | 1,051 | 88.5% |
| 09:40–09:45 | 1,233 | 604 | 49.0% |
| 09:45–09:50 | 1,310 | 469 | 35.8% |
| 09:50–09:55 | 1,298 | 431 | 33.2% |
| 09:55–10:00 | 1,276 | 398 | 31.2% |
| 10:00–10:05 | 1,241 | 417 | 33.6% |
| 10:05–10:10 | 1,222 | 455 | 37.2% |
| 10:10–10:15 | 1,190 | 470 | 39.5% |
| 10:15–10:20 | 1,175 | 489 | 41.6% |
| 10:20–10:25 | 1,168 | 502 | 43.0% |
| 10:25–10:30 | 1,149 | 517 | 45.0% |
| 10:30–10:35 | 1,160 | 371 | 32.0% |
| 10:35–10:40 | 1,139 | 542 | 47.6% |
| 10:40–10:45 | 1,152 | 934 | 81.1% |
| 10:45–10:50 | 1,171 | 1,098 | 93.8% |
| 10:50–10:55 | 1,180 | 1,147 | 97.2% |

### Relevant log excerpts

```
2024-05-21T09:37:02.118Z billing-db LOG:  process 48211 still waiting for AccessExclusiveLock on relation 16502 of database 16384 after 1000.121 ms
2024-05-21T09:37:02.118Z billing-db DETAIL:  Process holding the lock: 47102. Wait queue: 48211.
2024-05-21T09:49:13.554Z billing ERROR ledger write failed: pool: timed out waiting for connection
2024-05-21T10:38:40.007Z billing-db FATAL:  terminating connection due to administrator command
2024-05-21T10:39:21.940Z billing-db LOG:  duration: 41022.371 ms  statement: ALTER TABLE ledger_entries ADD COLUMN fx_rate numeric(18,8) DEFAULT 1
```

### People involved

- Priya Natarajan — Incident Commander (SRE)
- Tomás Ferreira — Communications Lead (Support Operations)
- Hannah Olsen — Scribe, database investigation (Data Platform)
- Lena Vogt — On-call, billing (Payments team)
- Marek Kowalski — Deploy engineer (Payments team)
- Ifeoma Obi — Finance Engineering
- Dmitri Sokolov — API gateway owner (Edge team)

## Glossary

- **Orphan capture**: a payment captured at the provider with no ledger entry on our side.
- **Hot table**: a table written by a customer-facing request path at more than 10 writes/s.
- **recon-daily**: the nightly reconciliation job comparing provider settlements with the ledger.

_Last edited 2024-05-24 by Priya Natarajan. Reviewed by: Dmitri Sokolov, Lena Vogt._
"""


def make_incident():
    write("incident_INC-2024-0317.md", INCIDENT)


# ---------------------------------------------------------------------------
# 4. Cargo.lock
# ---------------------------------------------------------------------------
CRATES = [
    # (name, version, tier)  tier 0 = leaf-ish
    ("libc", "0.2.153", 0), ("cfg-if", "1.0.0", 0), ("autocfg", "1.1.0", 0), ("once_cell", "1.19.0", 0),
    ("memchr", "2.7.1", 0), ("itoa", "1.0.10", 0), ("ryu", "1.0.17", 0), ("unicode-ident", "1.0.12", 0),
    ("bitflags", "1.3.2", 0), ("bitflags", "2.4.2", 0), ("bytes", "1.5.0", 0), ("fnv", "1.0.7", 0),
    ("lazy_static", "1.4.0", 0), ("log", "0.4.21", 0), ("pin-project-lite", "0.2.13", 0),
    ("pin-utils", "0.1.0", 0), ("scopeguard", "1.2.0", 0), ("smallvec", "1.13.1", 0),
    ("static_assertions", "1.1.0", 0), ("typenum", "1.17.0", 0), ("version_check", "0.9.4", 0),
    ("hex", "0.4.3", 0), ("base64", "0.21.7", 0), ("base64", "0.13.1", 0), ("percent-encoding", "2.3.1", 0),
    ("equivalent", "1.0.1", 0), ("adler", "1.0.2", 0), ("byteorder", "1.5.0", 0), ("either", "1.10.0", 0),
    ("futures-core", "0.3.30", 0), ("futures-sink", "0.3.30", 0), ("futures-io", "0.3.30", 0),
    ("futures-task", "0.3.30", 0), ("tinyvec_macros", "0.1.1", 0), ("windows_x86_64_msvc", "0.52.0", 0),
    ("windows_x86_64_gnu", "0.52.0", 0), ("windows_x86_64_msvc", "0.48.5", 0), ("windows_x86_64_gnu", "0.48.5", 0),
    ("heck", "0.4.1", 0), ("strsim", "0.11.0", 0), ("anstyle", "1.0.6", 0), ("utf8parse", "0.2.1", 0),
    ("colorchoice", "1.0.0", 0), ("httparse", "1.8.0", 0), ("try-lock", "0.2.5", 0), ("tower-service", "0.3.2", 0),
    ("tower-layer", "0.3.2", 0), ("sync_wrapper", "0.1.2", 0), ("mime", "0.3.17", 0), ("hashbrown", "0.12.3", 0),
    ("crc32fast", "1.4.0", 1), ("proc-macro2", "1.0.78", 1), ("windows-targets", "0.52.0", 1),
    ("windows-targets", "0.48.5", 1), ("tinyvec", "1.6.0", 1), ("lock_api", "0.4.11", 1), ("num-traits", "0.2.18", 1),
    ("getrandom", "0.2.12", 1), ("socket2", "0.5.6", 1), ("tracing-core", "0.1.32", 1), ("slab", "0.4.9", 1),
    ("miniz_oxide", "0.7.2", 1), ("anstyle-parse", "0.2.3", 1), ("anstyle-query", "1.0.2", 1),
    ("generic-array", "0.14.7", 1), ("hashbrown", "0.14.3", 1), ("form_urlencoded", "1.2.1", 1),
    ("http", "0.2.11", 1), ("http", "1.0.0", 1), ("futures-channel", "0.3.30", 1), ("want", "0.3.1", 1),
    ("memoffset", "0.9.0", 1), ("signal-hook-registry", "1.4.1", 1), ("num_cpus", "1.16.0", 1),
    ("windows-sys", "0.52.0", 2), ("windows-sys", "0.48.0", 2), ("quote", "1.0.35", 2), ("parking_lot_core", "0.9.9", 2),
    ("rand_core", "0.6.4", 2), ("unicode-normalization", "0.1.23", 2), ("indexmap", "2.2.3", 2),
    ("indexmap", "1.9.3", 2), ("http-body", "0.4.6", 2), ("flate2", "1.0.28", 2), ("crypto-common", "0.1.6", 2),
    ("block-buffer", "0.10.4", 2), ("mio", "0.8.10", 2), ("anstream", "0.6.13", 2), ("num-integer", "0.1.46", 2),
    ("syn", "2.0.48", 3), ("syn", "1.0.109", 3), ("parking_lot", "0.12.1", 3), ("rand_chacha", "0.3.1", 3),
    ("idna", "0.5.0", 3), ("digest", "0.10.7", 3), ("clap_lex", "0.7.0", 3), ("tempfile", "3.10.0", 3),
    ("rustix", "0.38.31", 3), ("linux-raw-sys", "0.4.13", 0), ("errno", "0.3.8", 2), ("fastrand", "2.0.1", 0),
    ("serde_derive", "1.0.197", 4), ("thiserror-impl", "1.0.57", 4), ("tokio-macros", "2.2.0", 4),
    ("futures-macro", "0.3.30", 4), ("pin-project-internal", "1.1.4", 4), ("tracing-attributes", "0.1.27", 4),
    ("clap_derive", "4.5.0", 4), ("async-trait", "0.1.77", 4), ("prost-derive", "0.12.3", 4),
    ("sha2", "0.10.8", 4), ("rand", "0.8.5", 4), ("url", "2.5.0", 4), ("clap_builder", "4.5.1", 4),
    ("serde", "1.0.197", 5), ("thiserror", "1.0.57", 5), ("tokio", "1.36.0", 5), ("futures-util", "0.3.30", 5),
    ("pin-project", "1.1.4", 5), ("tracing", "0.1.40", 5), ("clap", "4.5.1", 5), ("prost", "0.12.3", 5),
    ("chrono", "0.4.34", 5), ("uuid", "1.7.0", 5), ("anyhow", "1.0.80", 0),
    ("serde_json", "1.0.114", 6), ("tokio-util", "0.7.10", 6), ("futures", "0.3.30", 6), ("h2", "0.3.24", 6),
    ("tracing-subscriber", "0.3.18", 6), ("toml", "0.8.10", 6), ("bincode", "1.3.3", 6),
    ("tokio-stream", "0.1.14", 6), ("hyper", "0.14.28", 7), ("tower", "0.4.13", 7), ("axum-core", "0.3.4", 7),
    ("tonic", "0.11.0", 8), ("axum", "0.6.20", 8), ("reqwest", "0.11.24", 8), ("sqlx-core", "0.7.3", 8),
    ("metrics", "0.22.1", 6), ("metrics-exporter-prometheus", "0.13.1", 8),
]
GIT_CRATES = [
    ("raft-rs", "0.7.0", "git+https://github.com/tikv/raft-rs?branch=master#2357cb22760719bcd107a90d1e64ef505bdb1e15", 7),
    ("rocksdb", "0.22.0", "git+https://github.com/rust-rocksdb/rust-rocksdb?rev=1cf906dc4087f06631820f13855e6b27bd21b972#1cf906dc4087f06631820f13855e6b27bd21b972", 7),
    ("librocksdb-sys", "0.16.0+8.10.0", "git+https://github.com/rust-rocksdb/rust-rocksdb?rev=1cf906dc4087f06631820f13855e6b27bd21b972#1cf906dc4087f06631820f13855e6b27bd21b972", 3),
    ("sqlx-postgres", "0.7.3", "git+https://github.com/launchbadge/sqlx?tag=v0.7.3#c55aba0dc14f33b8a26cab6af565fcc4c8af0962", 9),
    ("opentelemetry-otlp", "0.15.0", "git+https://github.com/open-telemetry/opentelemetry-rust?branch=main#6a8b41fd2c2d8bcbd3f46a5dc3f1e6a2d5f8c21a", 9),
]
WORKSPACE = [("ledger-proto", 10), ("ledger-core", 11), ("ledger-testkit", 12), ("ledger-cli", 12), ("ledgerd", 13)]


def make_cargo_lock():
    rng = random.Random(90210)
    pk = []  # list of dicts: name, version, source, checksum, tier
    for n, v, t in CRATES:
        pk.append({"name": n, "version": v, "tier": t,
                   "source": "registry+https://github.com/rust-lang/crates.io-index",
                   "checksum": "%064x" % rng.getrandbits(256)})
    for n, v, s, t in GIT_CRATES:
        pk.append({"name": n, "version": v, "tier": t, "source": s, "checksum": None})
    for n, t in WORKSPACE:
        pk.append({"name": n, "version": "0.9.3", "tier": t, "source": None, "checksum": None})
    namecount = {}
    for p in pk:
        namecount[p["name"]] = namecount.get(p["name"], 0) + 1
    # fixed, realistic-ish edges for a few well-known crates, random for the rest
    fixed = {
        "serde": ["serde_derive"], "thiserror": ["thiserror-impl"],
        "tokio": ["bytes", "libc", "mio", "num_cpus", "parking_lot", "pin-project-lite", "signal-hook-registry",
                  "socket2", "tokio-macros", "windows-sys 0.48.0"],
        "syn 2.0.48": ["proc-macro2", "quote", "unicode-ident"],
        "syn 1.0.109": ["proc-macro2", "quote", "unicode-ident"],
        "quote": ["proc-macro2"], "proc-macro2": ["unicode-ident"],
        "serde_derive": ["proc-macro2", "quote", "syn 2.0.48"],
        "serde_json": ["itoa", "ryu", "serde"],
        "cfg-if": [], "libc": [],
        "ledgerd": ["anyhow", "axum", "clap", "ledger-core", "ledger-proto", "metrics",
                    "metrics-exporter-prometheus", "opentelemetry-otlp", "serde", "serde_json", "tokio",
                    "tonic", "tracing", "tracing-subscriber"],
        "ledger-cli": ["anyhow", "clap", "ledger-proto", "reqwest", "serde_json", "tokio"],
        "ledger-core": ["async-trait", "bincode", "bytes", "chrono", "futures", "ledger-proto", "raft-rs",
                        "rocksdb", "serde", "sha2", "sqlx-postgres", "thiserror", "tokio", "tracing", "uuid"],
        "ledger-proto": ["prost", "serde", "tonic", "uuid"],
        "ledger-testkit": ["ledger-core", "rand", "tempfile", "tokio"],
    }

    def ref(p):
        return p["name"] + " " + p["version"] if namecount[p["name"]] > 1 else p["name"]

    def key(p):
        return p["name"] + " " + p["version"] if namecount[p["name"]] > 1 else p["name"]

    for p in pk:
        k = key(p)
        if k in fixed:
            p["deps"] = sorted(fixed[k])
            continue
        if p["tier"] == 0 and p["name"] not in ("windows_x86_64_msvc",):
            if rng.random() < 0.8:
                p["deps"] = []
                continue
        lower = [q for q in pk if q["tier"] < p["tier"] and q["source"] is not None
                 and q["name"] != p["name"]]
        if not lower:
            p["deps"] = []
            continue
        n = min(len(lower), max(0, int(rng.triangular(0, 9, 2 + p["tier"] * 0.6))))
        chosen = rng.sample(lower, n)
        names = []
        seen = []
        for q in chosen:
            if q["name"] in seen:
                continue
            seen.append(q["name"])
            names.append(ref(q))
        p["deps"] = sorted(names)
    pk.sort(key=lambda p: (p["name"], [int(x) if x.isdigit() else x for x in p["version"].replace("+", ".").split(".")]))
    out = ["# This file is automatically @generated by Cargo.", "# It is not intended for manual editing.",
           "version = 3", ""]
    for p in pk:
        out.append("[[package]]")
        out.append('name = "%s"' % p["name"])
        out.append('version = "%s"' % p["version"])
        if p["source"]:
            out.append('source = "%s"' % p["source"])
        if p["checksum"]:
            out.append('checksum = "%s"' % p["checksum"])
        if p["deps"]:
            out.append("dependencies = [")
            for d in p["deps"]:
                out.append(' "%s",' % d)
            out.append("]")
        out.append("")
    write("Cargo.lock", "\n".join(out).rstrip("\n") + "\n")


# ---------------------------------------------------------------------------
# 5. Plain-text changelog
# ---------------------------------------------------------------------------
def make_changelog():
    rng = random.Random(4412)
    comps = ["api", "cli", "storage", "replication", "auth", "metrics", "docs", "build"]
    cw = [20, 12, 18, 14, 9, 8, 7, 6]
    authors = ["mkowalski", "lvogt", "hanna-o", "dsokolov", "pnatarajan", "ifeoma", "tferreira", "jbaptiste",
               "kchen", "rgupta"]
    aw = [14, 12, 10, 9, 6, 5, 3, 8, 11, 7]
    verbs = {
        "Added": ["Add %s", "Support %s", "Introduce %s", "New: %s"],
        "Changed": ["Change %s", "Rework %s", "Bump %s", "Make %s configurable"],
        "Fixed": ["Fix %s", "Fix crash in %s", "Handle %s correctly", "Fix race in %s"],
        "Security": ["Harden %s", "Patch %s (CVE-%d-%d)"],
        "Deprecated": ["Deprecate %s"],
        "Removed": ["Remove %s"],
    }
    things = {
        "api": ["pagination tokens in /v1/entries", "the /v1/accounts/{id}/balance endpoint", "gRPC reflection",
                "request size limits", "ETag headers on GET responses", "bulk import endpoint",
                "error codes for conflict responses", "the legacy /v0 routes"],
        "cli": ["`ledger-cli export --format csv`", "shell completions", "progress bars for long imports",
                "the `--dry-run` flag", "colored output on Windows terminals", "`ledger-cli verify`"],
        "storage": ["compaction scheduling", "RocksDB block cache sizing", "WAL fsync batching",
                    "snapshot restore", "checksum verification on read", "column family for fx rates",
                    "tombstone cleanup"],
        "replication": ["raft log truncation", "leader transfer on shutdown", "learner nodes",
                        "snapshot streaming", "heartbeat timeouts", "joint consensus membership changes"],
        "auth": ["mTLS between nodes", "token expiry handling", "API key rotation", "OIDC discovery caching"],
        "metrics": ["Prometheus histogram buckets", "per-tenant request counters", "OTLP trace export",
                    "the /metrics endpoint"],
        "docs": ["the operator guide", "upgrade notes for 2.x", "the API reference", "backup and restore docs"],
        "build": ["MSRV to 1.74", "tokio to 1.36", "Docker base image to debian bookworm", "release binaries for aarch64"],
    }
    cats = ["Added", "Changed", "Fixed", "Security", "Deprecated", "Removed"]
    catw = [30, 22, 40, 5, 3, 3]
    # versions newest first
    seq = []
    # build ascending list of versions
    cur = [1, 4, 0]
    ds = datetime(2022, 3, 14)
    for i in range(38):
        seq.append(("%d.%d.%d" % tuple(cur), ds))
        ds += timedelta(days=rng.randint(9, 35))
        r = rng.random()
        if i == 17:
            cur = [2, 0, 0]
        elif r < 0.35:
            cur = [cur[0], cur[1] + 1, 0]
        else:
            cur = [cur[0], cur[1], cur[2] + 1]
    seq.reverse()
    out = ["ledgerd — CHANGELOG", "====================", "",
           "All notable changes to ledgerd are listed here, newest first.",
           "Entries are tagged with the component in [brackets], then the PR number and author.",
           "Dates are release dates (UTC).", ""]
    prnum = 2207

    ver_is_1x = False
    cur_year = 2024

    def bullet(cat, comp, marker="*"):
        nonlocal prnum
        v = rng.choice(verbs[cat])
        th = rng.choice(things[comp])
        if "%d" in v:
            text = v % (th, cur_year, rng.randint(20000, 39999))
        else:
            text = v % th
        a = rng.choices(authors, aw)[0]
        pr = prnum
        prnum -= rng.randint(1, 9)
        if rng.random() < 0.07:
            ref = ""
        else:
            ref = " (#%d, @%s)" % (pr, a)
        line = "  %s [%s] %s%s" % (marker, comp, text, ref)
        extra = []
        if rng.random() < 0.09 and not ver_is_1x:
            extra.append("    Operators upgrading from an earlier 2.x release should read the notes in")
            extra.append("    docs/upgrading.md before rolling this out.")
        return [line] + extra

    # Unreleased section
    out += ["Unreleased", "----------", "Added:"]
    for _ in range(3):
        out += bullet("Added", rng.choices(comps, cw)[0])
    out += ["Fixed:"]
    for _ in range(2):
        out += bullet("Fixed", rng.choices(comps, cw)[0])
    out.append("")
    for idx, (ver, date) in enumerate(seq):
        ver_is_1x = ver.startswith("1.")
        cur_year = date.year
        title = "%s  Release %s" % (date.strftime("%Y-%m-%d"), ver)
        if ver == "2.3.1":
            title += "  (YANKED: data corruption on restore, use 2.3.2)"
        out.append(title)
        out.append("-" * len(title))
        ncat = rng.choices([1, 2, 3, 4], [25, 40, 25, 10])[0]
        chosen = []
        while len(chosen) < ncat:
            c = rng.choices(cats, catw)[0]
            if c not in chosen:
                chosen.append(c)
        chosen.sort(key=cats.index)
        marker = "-" if date.year == 2022 else "*"
        for c in chosen:
            out.append("%s:" % c)
            for _ in range(rng.randint(1, 6 if c in ("Fixed", "Added") else 3)):
                out += bullet(c, rng.choices(comps, cw)[0], marker)
        if ver.endswith(".0") and ver.split(".")[1] != "0" and rng.random() < 0.4:
            out.append("Notes:")
            out.append("  This release changes the on-disk format of the fx rates column family. Downgrading")
            out.append("  requires restoring from a backup taken with the previous version.")
        out.append("")
    write("CHANGELOG.txt", "\n".join(out).rstrip("\n") + "\n")


# ---------------------------------------------------------------------------
# 6. dmesg log (dmesg -x --time-format=raw style: facility:level : [secs] msg)
# ---------------------------------------------------------------------------
def make_dmesg():
    rng = random.Random(6502)
    lines = []
    t = 0.0

    def emit(fac, lvl, msg, dt=None):
        nonlocal t
        if dt is None:
            dt = rng.uniform(0.00001, 0.004)
        t += dt
        lines.append("%-6s:%-6s: [%12.6f] %s" % (fac, lvl, t, msg))

    boot = [
        ("info", "Linux version 6.5.0-35-generic (buildd@lcy02-amd64-079) (x86_64-linux-gnu-gcc-12 (Ubuntu 12.3.0-1ubuntu1~22.04) 12.3.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #35~22.04.1-Ubuntu SMP PREEMPT_DYNAMIC Tue May  7 09:00:52 UTC 2"),
        ("info", "Command line: BOOT_IMAGE=/boot/vmlinuz-6.5.0-35-generic root=UUID=7b1c3e0a-52f4-4d0b-9a8e-2f1d6c0e9b41 ro quiet splash nvme_core.default_ps_max_latency_us=0 vt.handoff=7"),
        ("info", "KERNEL supported cpus:"),
        ("info", "  Intel GenuineIntel"),
        ("info", "  AMD AuthenticAMD"),
        ("info", "BIOS-provided physical RAM map:"),
    ]
    t = 0.0
    for lvl, m in boot:
        lines.append("%-6s:%-6s: [%12.6f] %s" % ("kern", lvl, 0.0, m))
    ranges = [("0000000000000000", "000000000009efff", "usable"), ("000000000009f000", "00000000000fffff", "reserved"),
              ("0000000000100000", "0000000009afefff", "usable"), ("0000000009aff000", "0000000009ffffff", "reserved"),
              ("000000000a000000", "000000000a1fffff", "usable"), ("000000000a200000", "000000000a20efff", "ACPI NVS"),
              ("000000000a20f000", "00000000bb3fdfff", "usable"), ("00000000bb3fe000", "00000000bd5fdfff", "reserved"),
              ("00000000bd5fe000", "00000000bd7fdfff", "ACPI data"), ("0000000100000000", "000000083e2fffff", "usable")]
    for a, b, k in ranges:
        lines.append("%-6s:%-6s: [%12.6f] BIOS-e820: [mem 0x%s-0x%s] %s" % ("kern", "info", 0.0, a, b, k))
    for m in ["NX (Execute Disable) protection: active", "efi: EFI v2.7 by American Megatrends",
              "SMBIOS 3.3.0 present.", "DMI: Micro-Star International Co., Ltd. MS-7C56/B550-A PRO (MS-7C56), BIOS A.E0 11/12/2023",
              "tsc: Fast TSC calibration using PIT", "tsc: Detected 3693.060 MHz processor"]:
        lines.append("%-6s:%-6s: [%12.6f] %s" % ("kern", "info", 0.0, m))
    t = 0.000001
    early = [
        ("info", "e820: update [mem 0x00000000-0x00000fff] usable ==> reserved"),
        ("info", "last_pfn = 0x83e300 max_arch_pfn = 0x400000000"),
        ("info", "x86/PAT: Configuration [0-7]: WB  WC  UC- UC  WB  WP  UC- WT  "),
        ("info", "ACPI: Early table checksum verification disabled"),
        ("info", "ACPI: RSDP 0x00000000BD5E4014 000024 (v02 ALASKA)"),
        ("info", "ACPI: XSDT 0x00000000BD5E3728 0000CC (v01 ALASKA A M I    01072009 AMI  01000013)"),
        ("info", "ACPI: FACP 0x00000000BD5D5000 000114 (v06 ALASKA A M I    01072009 AMI  00010013)"),
        ("info", "ACPI: DSDT 0x00000000BD5CA000 00A6BE (v02 ALASKA A M I    01072009 INTL 20120913)"),
        ("info", "ACPI: MCFG 0x00000000BD5D4000 00003C (v01 ALASKA A M I    01072009 MSFT 00010013)"),
        ("info", "Zone ranges:"),
        ("info", "  DMA      [mem 0x0000000000001000-0x0000000000ffffff]"),
        ("info", "  DMA32    [mem 0x0000000001000000-0x00000000ffffffff]"),
        ("info", "  Normal   [mem 0x0000000100000000-0x000000083e2fffff]"),
        ("info", "smpboot: Allowing 16 CPUs, 0 hotplug CPUs"),
        ("info", "Memory: 32516872K/33409540K available (20480K kernel code, 4153K rwdata, 14336K rodata, 4780K init, 17468K bss, 892408K reserved, 0K cma-reserved)"),
        ("info", "SLUB: HWalign=64, Order=0-3, MinObjects=0, CPUs=16, Nodes=1"),
        ("info", "rcu: Preemptible hierarchical RCU implementation."),
        ("notice", "Kernel command line: BOOT_IMAGE=/boot/vmlinuz-6.5.0-35-generic root=UUID=7b1c3e0a-52f4-4d0b-9a8e-2f1d6c0e9b41 ro quiet splash nvme_core.default_ps_max_latency_us=0 vt.handoff=7"),
        ("info", "Console: colour dummy device 80x25"),
        ("info", "printk: console [tty0] enabled"),
        ("info", "Calibrating delay loop (skipped), value calculated using timer frequency.. 7386.12 BogoMIPS (lpj=14772240)"),
        ("info", "smpboot: CPU0: AMD Ryzen 7 5800X 8-Core Processor (family: 0x19, model: 0x21, stepping: 0x2)"),
        ("info", "Performance Events: Fam17h+ core perfctr, AMD PMU driver."),
        ("info", "smp: Brought up 1 node, 16 CPUs"),
        ("info", "devtmpfs: initialized"),
        ("info", "ACPI: Added _OSI(Module Device)"),
        ("info", "ACPI: 8 ACPI AML tables successfully acquired and loaded"),
        ("err", "ACPI BIOS Error (bug): Could not resolve symbol [\\_SB.PCI0.GPP0.SWUS], AE_NOT_FOUND (20230331/dswload2-162)"),
        ("err", "ACPI Error: AE_NOT_FOUND, During name lookup/catalog (20230331/psobject-220)"),
        ("info", "ACPI: Skipping parse of AML opcode: Scope (0x0010)"),
        ("err", "ACPI BIOS Error (bug): Could not resolve symbol [\\_SB.PCI0.GPP0.SWUS.SWDS], AE_NOT_FOUND (20230331/dswload2-162)"),
        ("err", "ACPI Error: AE_NOT_FOUND, During name lookup/catalog (20230331/psobject-220)"),
        ("info", "ACPI: Interpreter enabled"),
        ("info", "ACPI: PM: (supports S0 S3 S4 S5)"),
        ("info", "PCI: Using host bridge windows from ACPI; if necessary, use \"pci=nocrs\" and report a bug"),
        ("info", "ACPI: PCI Root Bridge [PCI0] (domain 0000 [bus 00-ff])"),
        ("info", "pci 0000:00:00.0: [1022:1480] type 00 class 0x060000"),
        ("info", "pci 0000:00:01.0: [1022:1482] type 00 class 0x060000"),
        ("info", "pci 0000:00:01.2: [1022:1483] type 01 class 0x060400"),
        ("info", "pci 0000:00:03.0: [1022:1482] type 00 class 0x060000"),
        ("info", "pci 0000:00:03.1: [1022:1483] type 01 class 0x060400"),
        ("info", "pci 0000:01:00.0: [144d:a80a] type 00 class 0x010802"),
        ("info", "pci 0000:01:00.0: reg 0x10: [mem 0xfcf00000-0xfcf03fff 64bit]"),
        ("info", "pci 0000:2b:00.0: [10de:2487] type 00 class 0x030000"),
        ("info", "pci 0000:2a:00.0: [8086:15f3] type 00 class 0x020000"),
        ("info", "pci 0000:2a:00.0: PME# supported from D0 D3hot D3cold"),
        ("info", "pci 0000:03:00.0: [8086:2723] type 00 class 0x028000"),
        ("warn", "pci 0000:00:01.2: can't claim BAR 13 [io  0xf000-0xffff]: address conflict with PCI Bus 0000:00 [io  0x0000-0x03af window]"),
        ("info", "iommu: Default domain type: Translated"),
        ("info", "SCSI subsystem initialized"),
        ("info", "usbcore: registered new interface driver usbfs"),
        ("info", "usbcore: registered new interface driver hub"),
        ("info", "usbcore: registered new device driver usb"),
        ("info", "NetLabel: Initializing"),
        ("info", "clocksource: Switched to clocksource tsc-early"),
        ("info", "NET: Registered PF_INET protocol family"),
        ("info", "Trying to unpack rootfs image as initramfs..."),
        ("info", "Freeing initrd memory: 73164K"),
        ("info", "Initialise system trusted keyrings"),
        ("notice", "Key type asymmetric registered"),
        ("info", "Block layer SCSI generic (bsg) driver version 0.4 loaded (major 243)"),
        ("info", "Serial: 8250/16550 driver, 32 ports, IRQ sharing enabled"),
        ("info", "i8042: PNP: No PS/2 controller found."),
        ("info", "rtc_cmos 00:01: RTC can wake from S4"),
        ("info", "NET: Registered PF_INET6 protocol family"),
        ("notice", "Loading compiled-in X.509 certificates"),
        ("info", "Freeing unused kernel image (initmem) memory: 4780K"),
        ("info", "Write protecting the kernel read-only data: 36864k"),
        ("info", "Run /init as init process"),
        ("info", "nvme nvme0: pci function 0000:01:00.0"),
        ("info", "xhci_hcd 0000:2c:00.3: xHCI Host Controller"),
        ("info", "xhci_hcd 0000:2c:00.3: new USB bus registered, assigned bus number 1"),
        ("info", "xhci_hcd 0000:2c:00.3: hcc params 0x0268ffe5 hci version 0x110 quirks 0x0000020000000410"),
        ("info", "usb usb1: New USB device found, idVendor=1d6b, idProduct=0002, bcdDevice= 6.05"),
        ("info", "usb usb1: Product: xHCI Host Controller"),
        ("info", "hub 1-0:1.0: USB hub found"),
        ("info", "hub 1-0:1.0: 4 ports detected"),
        ("info", "usb usb2: New USB device found, idVendor=1d6b, idProduct=0003, bcdDevice= 6.05"),
        ("info", "hub 2-0:1.0: USB hub found"),
        ("info", "nvme nvme0: 16/0/0 default/read/poll queues"),
        ("info", " nvme0n1: p1 p2 p3"),
        ("info", "e1000e: Intel(R) PRO/1000 Network Driver"),
        ("info", "igc 0000:2a:00.0: PTM enabled, 4ns granularity"),
        ("info", "igc 0000:2a:00.0 (unnamed net_device) (uninitialized): PHC added"),
        ("info", "igc 0000:2a:00.0: Intel(R) 2.5G Ethernet Linux Driver"),
        ("info", "igc 0000:2a:00.0 enp42s0: renamed from eth0"),
        ("info", "usb 1-2: new full-speed USB device number 2 using xhci_hcd"),
        ("info", "usb 1-2: New USB device found, idVendor=046d, idProduct=c52b, bcdDevice=24.11"),
        ("info", "usb 1-2: Product: USB Receiver"),
        ("info", "usb 1-2: Manufacturer: Logitech"),
        ("info", "hid-generic 0003:046D:C52B.0001: input,hidraw0: USB HID v1.11 Keyboard [Logitech USB Receiver] on usb-0000:2c:00.3-2/input0"),
        ("info", "EXT4-fs (nvme0n1p2): mounted filesystem 5d0a7c2e-66a1-4c4f-8d0b-3e4f1a2b9c7d ro with ordered data mode. Quota mode: none."),
    ]
    for lvl, m in early:
        emit("kern", lvl, m)
    t += 1.2
    sysd = [
        ("info", "systemd[1]: Inserted module 'autofs4'"),
        ("info", "systemd[1]: systemd 249.11-0ubuntu3.12 running in system mode (+PAM +AUDIT +SELINUX +APPARMOR +IMA +SMACK +SECCOMP +GCRYPT +GNUTLS +OPENSSL +ACL +BLKID +CURL +ELFUTILS +FIDO2 +IDN2 -IDN +IPTC +KMOD +LIBCRYPTSETUP +LIBFDISK +PCRE2 -PWQUALITY -P11KIT -QRENCODE +BZIP2 +LZ4 +XZ +ZLIB +ZSTD -XKBCOMMON +UTMP +SYSVINIT default-hierarchy=unified)"),
        ("info", "systemd[1]: Detected architecture x86-64."),
        ("info", "systemd[1]: Hostname set to <ledger-db-03>."),
        ("notice", "systemd[1]: Queued start job for default target Graphical Interface."),
        ("info", "systemd[1]: Created slice Slice /system/modprobe."),
        ("info", "systemd[1]: Started Journal Service."),
    ]
    for lvl, m in sysd:
        emit("daemon", lvl, m)
    emit("kern", "info", "EXT4-fs (nvme0n1p2): re-mounted 5d0a7c2e-66a1-4c4f-8d0b-3e4f1a2b9c7d r/w. Quota mode: none.")
    emit("kern", "info", "lp: driver loaded but no devices found")
    emit("kern", "info", "nvidia: loading out-of-tree module taints kernel.")
    emit("kern", "info", "nvidia: module license 'NVIDIA' taints kernel.")
    emit("kern", "warn", "Disabling lock debugging due to kernel taint")
    emit("kern", "info", "nvidia-nvlink: Nvlink Core is being initialized, major device number 508")
    emit("kern", "info", "iwlwifi 0000:03:00.0: loaded firmware version 77.ad46c98b.0 cc-a0-77.ucode op_mode iwlmvm")
    emit("kern", "info", "iwlwifi 0000:03:00.0: Detected Intel(R) Wi-Fi 6 AX200 160MHz, REV=0x340")
    emit("kern", "info", "EXT4-fs (nvme0n1p3): mounted filesystem 0e7c1f3a-1b2d-4a5e-9c8f-7d6e5b4a3c21 r/w with ordered data mode. Quota mode: none.")
    emit("kern", "info", "EXT4-fs (sda1): mounted filesystem 9f8e7d6c-5b4a-4392-8170-a1b2c3d4e5f6 r/w with ordered data mode. Quota mode: none.")
    emit("kern", "notice", "audit: type=1400 audit(1716281891.112:2): apparmor=\"STATUS\" operation=\"profile_load\" profile=\"unconfined\" name=\"/usr/bin/man\" pid=812 comm=\"apparmor_parser\"")
    emit("kern", "info", "igc 0000:2a:00.0 enp42s0: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: RX/TX")
    emit("kern", "info", "IPv6: ADDRCONF(NETDEV_CHANGE): enp42s0: link becomes ready")
    emit("kern", "info", "Bluetooth: Core ver 2.22")
    emit("kern", "info", "Bluetooth: hci0: Firmware revision 0.0 build 249 week 22 2023")

    # runtime events
    usb_devs = [("1-3", "0781", "5583", "Ultra Fit", "SanDisk"), ("2-1", "0bc2", "ab9a", "Expansion HDD", "Seagate"),
                ("1-4", "05ac", "12a8", "iPhone", "Apple Inc."), ("2-2", "152d", "0583", "USB to PCIE Bridge", "JMicron")]
    usbnum = 3
    pid = 1200
    t += 8.0

    def run_event():
        nonlocal usbnum, pid, t
        kind = rng.choices(
            ["usb_plug", "usb_err", "ext4", "nvme", "net", "audit", "oom", "segfault", "thermal", "wifi",
             "blk", "hung", "ufw", "mce"],
            [10, 7, 6, 5, 6, 14, 2, 5, 4, 7, 3, 1, 20, 1])[0]
        t += rng.uniform(0.5, 240.0)
        if kind == "usb_plug":
            port, vid, pidd, prod, man = rng.choice(usb_devs)
            bus = port.split("-")[0]
            speed = "SuperSpeed" if bus == "2" else "high-speed"
            emit("kern", "info", "usb %s: new %s USB device number %d using xhci_hcd" % (port, speed, usbnum))
            emit("kern", "info", "usb %s: New USB device found, idVendor=%s, idProduct=%s, bcdDevice= 1.00" % (port, vid, pidd))
            emit("kern", "info", "usb %s: Product: %s" % (port, prod))
            emit("kern", "info", "usb %s: Manufacturer: %s" % (port, man))
            if vid in ("0781", "0bc2", "152d"):
                emit("kern", "info", "usb-storage %s:1.0: USB Mass Storage device detected" % port)
                emit("kern", "info", "scsi host%d: usb-storage %s:1.0" % (rng.randint(6, 9), port))
                emit("kern", "notice", "sd 6:0:0:0: [sdb] %d 512-byte logical blocks" % rng.choice([60063744, 3907029167, 1953525168]))
                emit("kern", "notice", "sd 6:0:0:0: [sdb] Attached SCSI removable disk")
            t += rng.uniform(5, 200)
            emit("kern", "info", "usb %s: USB disconnect, device number %d" % (port, usbnum))
            usbnum += 1
        elif kind == "usb_err":
            port = rng.choice(["1-3", "2-1", "1-4", "2-2"])
            m = rng.choice(["usb %s: device descriptor read/64, error -71" % port,
                            "usb %s: device not accepting address %d, error -62" % (port, usbnum),
                            "usb %s: Device not responding to setup address." % port,
                            "usb %s: unable to enumerate USB device" % port,
                            "xhci_hcd 0000:2c:00.3: WARN Set TR Deq Ptr cmd failed due to incorrect slot or ep state."])
            lvl = "warn" if "WARN" in m else "err"
            emit("kern", lvl, m)
            if rng.random() < 0.4:
                emit("kern", "err", "usb %s: device descriptor read/64, error -110" % port)
        elif kind == "ext4":
            dev = rng.choice(["sda1", "sda1", "nvme0n1p3"])
            m = rng.choice([
                ("warn", "EXT4-fs warning (device %s): ext4_dx_add_entry:2507: Directory (ino: 1180418) index full, reach max htree level :2" % dev),
                ("err", "EXT4-fs error (device %s): ext4_find_entry:1683: inode #2: comm ls: reading directory lblock 0" % dev),
                ("info", "EXT4-fs (%s): orphan cleanup on readonly fs" % dev) if dev != "nvme0n1p3" else ("info", "EXT4-fs (nvme0n1p3): resizing filesystem from 209715200 to 262144000 blocks"),
                ("warn", "EXT4-fs (%s): warning: mounting fs with errors, running e2fsck is recommended" % dev),
            ])
            emit("kern", m[0], m[1])
        elif kind == "nvme":
            q = rng.randint(1, 16)
            m = rng.choice([
                ("warn", "nvme nvme0: I/O %d QID %d timeout, aborting" % (rng.randint(100, 1000), q)),
                ("warn", "nvme nvme0: Abort status: 0x0"),
                ("err", "nvme nvme0: I/O %d QID %d timeout, reset controller" % (rng.randint(100, 1000), q)),
                ("info", "nvme nvme0: 16/0/0 default/read/poll queues"),
            ])
            emit("kern", m[0], m[1])
        elif kind == "net":
            m = rng.choice([
                ("info", "igc 0000:2a:00.0 enp42s0: NIC Link is Down"),
                ("info", "igc 0000:2a:00.0 enp42s0: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: RX/TX"),
                ("warn", "igc 0000:2a:00.0 enp42s0: Detected Tx Unit Hang"),
                ("err", "igc 0000:2a:00.0 enp42s0: PCIe link lost, device now detached"),
                ("info", "br-7f3a1c: port 1(veth3c2e1a0) entered forwarding state"),
                ("info", "docker0: port 2(veth9b1d4e2) entered disabled state"),
            ])
            emit("kern", m[0], m[1])
        elif kind == "audit":
            prof = rng.choice(["/usr/sbin/cupsd", "snap.firefox.firefox", "/usr/bin/evince", "docker-default",
                               "/usr/sbin/tcpdump"])
            op = rng.choice(["open", "file_mmap", "capable", "exec"])
            ac = rng.choice(["DENIED", "DENIED", "ALLOWED"])
            emit("kern", "notice", "audit: type=1400 audit(17162%05d.%03d:%d): apparmor=\"%s\" operation=\"%s\" profile=\"%s\" pid=%d comm=\"%s\"" % (
                rng.randint(82000, 99999), rng.randint(0, 999), rng.randint(100, 999), ac, op, prof, rng.randint(900, 40000),
                prof.split("/")[-1].split(".")[-1][:15]))
        elif kind == "oom":
            pid += rng.randint(100, 3000)
            proc = rng.choice(["postgres", "java", "ledgerd", "chrome"])
            emit("kern", "warn", "%s invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0" % proc)
            emit("kern", "info", "Mem-Info:")
            emit("kern", "info", "active_anon:6123448 inactive_anon:1204432 isolated_anon:0")
            emit("kern", "err", "Out of memory: Killed process %d (%s) total-vm:%dkB, anon-rss:%dkB, file-rss:0kB, shmem-rss:0kB, UID:%d pgtables:%dkB oom_score_adj:0" % (
                pid, proc, rng.randint(9000000, 30000000), rng.randint(7000000, 20000000), rng.choice([0, 113, 1000]), rng.randint(10000, 60000)))
            emit("kern", "info", "oom_reaper: reaped process %d (%s), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB" % (pid, proc))
        elif kind == "segfault":
            pid += rng.randint(10, 900)
            proc = rng.choice(["python3", "node", "ledger-cli", "gnome-shell", "chrome"])
            emit("kern", "info", "%s[%d]: segfault at %x ip %012x sp %012x error %d in libc.so.6[7f3c1a228000+195000] likely on CPU %d (core %d, socket 0)" % (
                proc, pid, rng.getrandbits(16), rng.getrandbits(44), rng.getrandbits(44), rng.choice([4, 6, 14]),
                rng.randint(0, 15), rng.randint(0, 7)))
        elif kind == "thermal":
            cpu = rng.randint(0, 15)
            emit("kern", "warn", "mce: CPU%d: Core temperature above threshold, cpu clock throttled (total events = %d)" % (cpu, rng.randint(1, 400)))
            emit("kern", "info", "mce: CPU%d: Core temperature/speed normal" % cpu)
        elif kind == "wifi":
            m = rng.choice([
                ("info", "wlp3s0: authenticate with 3c:84:6a:2f:91:0e"),
                ("info", "wlp3s0: associated"),
                ("info", "wlp3s0: deauthenticating from 3c:84:6a:2f:91:0e by local choice (Reason: 3=DEAUTH_LEAVING)"),
                ("err", "iwlwifi 0000:03:00.0: Microcode SW error detected. Restarting 0x0."),
                ("warn", "iwlwifi 0000:03:00.0: missed beacons exceeds threshold, but receiving data. Stay connected, Expect bugs."),
            ])
            emit("kern", m[0], m[1])
        elif kind == "blk":
            sec = rng.randint(100000, 900000000)
            emit("kern", "err", "blk_update_request: I/O error, dev sda, sector %d op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 2" % sec)
            emit("kern", "err", "Buffer I/O error on dev sda1, logical block %d, async page read" % (sec // 8))
        elif kind == "hung":
            emit("kern", "err", "INFO: task kworker/u32:3:%d blocked for more than 122 seconds." % rng.randint(200, 900))
            emit("kern", "err", "      Tainted: P           OE      6.5.0-35-generic #35~22.04.1-Ubuntu")
            emit("kern", "err", "\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.")
        elif kind == "ufw":
            src = "%d.%d.%d.%d" % (rng.choice([45, 89, 141, 185, 193, 203]), rng.randint(0, 255), rng.randint(0, 255), rng.randint(1, 254))
            port = rng.choice([22, 23, 445, 3389, 5432, 6379, 8080, 9200])
            emit("kern", "info", "[UFW BLOCK] IN=enp42s0 OUT= MAC=a8:a1:59:3c:0e:71:3c:84:6a:2f:91:0e:08:00 SRC=%s DST=10.20.0.13 LEN=44 TOS=0x00 PREC=0x00 TTL=%d ID=%d PROTO=TCP SPT=%d DPT=%d WINDOW=1024 RES=0x00 SYN URGP=0" % (
                src, rng.randint(40, 250), rng.randint(1, 65535), rng.randint(1024, 65535), port))
        elif kind == "mce":
            emit("kern", "crit", "mce: [Hardware Error]: Machine check events logged")
            emit("kern", "crit", "mce: [Hardware Error]: CPU 5: Machine Check: 0 Bank 5: bea0000000000108")
            emit("kern", "crit", "mce: [Hardware Error]: TSC 0 ADDR 1ffffc0a2c8c0 MISC d012000100000000 SYND 4d000000 IPID 500b000000000")

    for _ in range(330):
        run_event()
    write("dmesg.log", "\n".join(lines) + "\n")


def main():
    make_app_log()
    make_inventory()
    make_incident()
    make_cargo_lock()
    make_changelog()
    make_dmesg()


if __name__ == "__main__":
    main()
