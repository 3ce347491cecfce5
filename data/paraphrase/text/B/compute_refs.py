#!/usr/bin/env python3
"""Compute reference answers for writer B's text questions by parsing the documents
in docs/ (independently of make_docs.py), and write questions.jsonl.

Second-way checks live in check_refs.sh (grep/awk/jq) and are compared by hand/automatically.
"""
import csv
import json
import os
import re
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
D = os.path.join(HERE, "docs")


def rd(name):
    with open(os.path.join(D, name), encoding="utf-8") as f:
        return f.read()


# ---------------- parsers ----------------
APP = [json.loads(l) for l in rd("app.jsonl").splitlines() if l.strip()]

INV = list(csv.DictReader(rd("inventory.tsv").splitlines(), delimiter="\t"))

MD = rd("incident_INC-2024-0317.md")


def md_table_after(heading):
    lines = MD.splitlines()
    i = next(k for k, l in enumerate(lines) if l.strip() == heading)
    rows = []
    k = i + 1
    while not lines[k].startswith("|"):
        k += 1
    hdr = [c.strip() for c in lines[k].strip().strip("|").split("|")]
    k += 2
    while k < len(lines) and lines[k].startswith("|"):
        rows.append(dict(zip(hdr, [c.strip() for c in lines[k].strip().strip("|").split("|")])))
        k += 1
    return rows


ACTIONS = md_table_after("## Action Items")
BUCKETS = md_table_after("### Checkout success rate (5-minute buckets)")


def parse_lock():
    pk = []
    cur = None
    in_deps = False
    for line in rd("Cargo.lock").splitlines():
        if line == "[[package]]":
            cur = {"deps": [], "source": None}
            pk.append(cur)
            in_deps = False
            continue
        if cur is None:
            continue
        if in_deps:
            if line.strip() == "]":
                in_deps = False
            else:
                cur["deps"].append(line.strip().strip(",").strip('"'))
            continue
        m = re.match(r'^(\w+) = (.*)$', line)
        if m:
            k, v = m.groups()
            if k == "dependencies":
                in_deps = True
                cur["has_dep_list"] = True
            else:
                cur[k] = v.strip('"')
    return pk


LOCK = parse_lock()


def parse_changelog():
    """Returns list of bullets: dict(section_title, date, version, category, comp, author, text)."""
    lines = rd("CHANGELOG.txt").splitlines()
    out = []
    sec = None
    cat = None
    releases = []
    for i, l in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if nxt and set(nxt) == {"-"} and l and not l.startswith(" "):
            m = re.match(r"^(\d{4}-\d{2}-\d{2})\s+Release (\S+)", l)
            sec = {"title": l, "date": m.group(1) if m else None, "version": m.group(2) if m else None}
            releases.append(sec)
            cat = None
            continue
        m = re.match(r"^([A-Z][a-z]+):$", l)
        if m:
            cat = m.group(1)
            continue
        m = re.match(r"^  [*-] \[([a-z]+)\] (.*)$", l)
        if m:
            a = re.search(r"@([\w-]+)\)\s*$", l)
            out.append({"sec": sec, "cat": cat, "comp": m.group(1), "author": a.group(1) if a else None,
                        "text": m.group(2)})
    return out, releases


CL, RELEASES = parse_changelog()

DM = []
for l in rd("dmesg.log").splitlines():
    m = re.match(r"^(\w+)\s*:(\w+)\s*: \[\s*([\d.]+)\] (.*)$", l)
    assert m, l
    DM.append({"fac": m.group(1), "lvl": m.group(2), "t": float(m.group(3)), "msg": m.group(4), "raw": l})


# ---------------- questions ----------------
Q = []


def add(level, query, checker, expected, source, kind, targets, rules, method, check):
    Q.append({"level": level, "query": query, "checker": checker, "expected": expected,
              "source": source, "kind": kind, "targets": targets, "rules": rules,
              "method": method, "check": check})


# ---------- L1 ----------
ai5 = [r for r in ACTIONS if r["ID"] == "AI-5"][0]["Owner"]
add(1, "Who owns action item AI-5 in the INC-2024-0317 incident report?", "exact", ai5,
    "incident_INC-2024-0317.md", "lookup", ["AI-5"], "",
    "parse '## Action Items' markdown table, row ID == AI-5, column Owner",
    "grep '| AI-5 |' | cut -d'|' -f4")

tok = [p["version"] for p in LOCK if p["name"] == "tokio"]
assert len(tok) == 1
add(1, "what version of tokio is locked in Cargo.lock?", "exact", tok[0], "Cargo.lock", "lookup", ["tokio"], "",
    "parse [[package]] blocks, name == tokio -> version", "grep -A1 '^name = \"tokio\"$'")

c = [r["unit_cost_usd"] for r in INV if r["sku"] == "PNT-63718"]
assert len(c) == 1
add(1, "In inventory.tsv, what is the unit cost (USD) listed for SKU PNT-63718?", "numeric", float(c[0]),
    "inventory.tsv", "lookup", ["PNT-63718"], "",
    "csv.DictReader(delimiter=tab), sku == PNT-63718 -> unit_cost_usd", "awk -F'\\t' '$1==\"PNT-63718\"{print $7}'")

yanked = [r["version"] for r in RELEASES if r["version"] and "YANKED" in r["title"]]
assert len(yanked) == 1
add(1, "One of the releases in CHANGELOG.txt was yanked. Which version was it? Just the version number please.",
    "exact", yanked[0], "CHANGELOG.txt", "lookup", ["YANKED"], "",
    "parse release headings, those whose title contains YANKED", "grep -n YANKED")

hn = [re.search(r"Hostname set to <([^>]+)>", e["msg"]).group(1) for e in DM if "Hostname set to" in e["msg"]]
assert len(hn) == 1
add(1, "What hostname does systemd report setting during boot in dmesg.log?", "exact", [hn[0], "<%s>" % hn[0]],
    "dmesg.log", "lookup", ["Hostname"], "",
    "regex 'Hostname set to <(...)>' over parsed dmesg messages", "grep -o 'Hostname set to <[^>]*>'")

first_gw = [r for r in APP if r["service"] == "api-gateway"][0]
add(1, "What HTTP status code did the very first api-gateway entry in app.jsonl return?", "numeric",
    first_gw["status"], "app.jsonl", "lookup", ["api-gateway", "status"], "first entry of that service in file order",
    "json.loads each line, first record with service == api-gateway -> status",
    "jq -c 'select(.service==\"api-gateway\")|.status' | head -1")

tl = [l for l in MD.splitlines() if "starts migration `0148_ledger_add_fx_columns`" in l]
assert len(tl) == 1
mig = re.search(r"\*\*(\d\d:\d\d)\*\*", tl[0]).group(1)
add(1, "According to the timeline in the incident report, at what time did the deploy engineer start migration "
       "0148_ledger_add_fx_columns? Answer as HH:MM (UTC).", "exact", [mig, mig + " UTC"],
    "incident_INC-2024-0317.md", "lookup", ["0148_ledger_add_fx_columns"], "",
    "find timeline bullet containing 'starts migration', extract **HH:MM**", "grep -n 'starts migration'")

raft = [p["source"] for p in LOCK if p["name"] == "raft-rs"][0]
br = re.search(r"branch=([^#&]+)", raft).group(1)
add(1, "The raft-rs crate is pulled from git rather than crates.io. Which branch does its source point at?",
    "exact", br, "Cargo.lock", "lookup", ["raft-rs"], "",
    "parse lock, raft-rs source, regex branch=", "grep -A2 'name = \"raft-rs\"' | grep source")

# ---------- L2 ----------
n = sum(1 for r in APP if r["level"] == "ERROR")
add(2, "How many ERROR entries are there in app.jsonl?", "numeric", n, "app.jsonl", "count", ["ERROR"],
    "level field equals ERROR", "json parse, count level == ERROR", "jq -r .level | sort | uniq -c")

n = sum(1 for e in DM if "usb" in e["raw"].lower())
add(2, "Count the lines of dmesg.log that contain \"usb\", case-insensitively (so USB, usbcore, usb-storage etc. all count).",
    "numeric", n, "dmesg.log", "count", ["usb"], "case-insensitive substring, per line",
    "python: sum('usb' in line.lower())", "grep -ci usb")

n = sum(1 for p in LOCK if (p.get("source") or "").startswith("git+"))
add(2, "how many packages in the lockfile come from git?", "numeric", n, "Cargo.lock", "count", ["git"],
    "source starts with git+", "parse lock, count source startswith git+", "grep -c '^source = \"git+'")

n = sum(1 for r in INV if r["supplier"].strip() == "")
add(2, "Count the inventory rows where the supplier column is blank.", "numeric", n, "inventory.tsv", "count",
    ["supplier"], "empty supplier cell", "csv parse, supplier == ''", "awk -F'\\t' 'NR>1 && $8==\"\"' | wc -l")

n = sum(1 for b in CL if b["comp"] == "storage")
add(2, "How many changelog entries are tagged [storage]? Count bullet items only, including the Unreleased section.",
    "numeric", n, "CHANGELOG.txt", "count", ["storage"], "bullet items with [storage] tag; Unreleased included",
    "parse bullets '  * [comp]' or '  - [comp]', comp == storage", "grep -cE '^  [*-] \\[storage\\]'")

n = sum(1 for r in ACTIONS if r["Status"] == "Open")
add(2, "In the incident report, how many action items are still in status \"Open\"?", "numeric", n,
    "incident_INC-2024-0317.md", "count", ["Open"], "Status column exactly Open (not In progress)",
    "parse action items table, Status == Open", "grep '^| AI-' | grep -c '| Open |'")

n = sum(1 for e in DM if e["lvl"] == "err")
add(2, "dmesg.log was captured with decoded facility/level prefixes. How many lines are at level err? (Only err, not crit.)",
    "numeric", n, "dmesg.log", "count", ["err"], "level field == err; crit excluded",
    "regex parse prefix, lvl == err", "grep -c '^[a-z]* *:err *:'")

n = sum(1 for r in APP if "latency_ms" in r and r["latency_ms"] is None)
add(2, "How many records in app.jsonl have latency_ms set to null (present but null, not missing)?", "numeric", n,
    "app.jsonl", "count", ["latency_ms"], "key present with null value",
    "json parse, 'latency_ms' in r and r['latency_ms'] is None", "grep -c '\"latency_ms\":null'")

# ---------- L3 ----------
n = sum(1 for r in APP if r["service"] == "billing" and r["level"] == "ERROR" and "09:41" <= r["ts"][11:16] <= "09:46")
add(3, "How many ERROR lines did the billing service log between 09:41 and 09:47 UTC (timestamps from 09:41:00 inclusive up to 09:47:00 exclusive)?",
    "numeric", n, "app.jsonl", "count", ["billing", "ERROR"], "service billing, level ERROR, 09:41:00 <= ts < 09:47:00",
    "json parse, filter service/level and ts[11:16] in [09:41, 09:46]",
    "jq -r 'select(.service==\"billing\" and .level==\"ERROR\")|.ts' | awk substr(ts,12,5) range")

u = sorted({r["user"] for r in APP if r["service"] == "api-gateway" and r["level"] == "ERROR" and r.get("user")})
add(3, "How many distinct users hit an api-gateway ERROR? Ignore entries where user is null or absent.", "numeric",
    len(u), "app.jsonl", "count", ["api-gateway", "ERROR", "user"], "distinct non-null user",
    "json parse, set of user for service api-gateway & level ERROR", "jq -r select(...)|.user // empty | sort -u | wc -l")

mf = sorted({e["msg"].split("Manufacturer: ", 1)[1] for e in DM if "Manufacturer: " in e["msg"]})
add(3, "List every distinct USB device manufacturer that appears on a \"Manufacturer:\" line in dmesg.log, one per line.",
    "set", mf, "dmesg.log", "list", ["Manufacturer"], "distinct values",
    "parse messages, split on 'Manufacturer: ', set", "grep -o 'Manufacturer: .*' | sort -u")

ws = sorted(p["name"] for p in LOCK if p.get("source") is None)
add(3, "Which packages in Cargo.lock have no source line (i.e. the local workspace crates)? Give their names.",
    "set", ws, "Cargo.lock", "list", ["source"], "packages without source",
    "parse lock, source is None", "awk block parse: name lines followed by no source before blank line")

n = sum(1 for r in INV if r["warehouse"] == "PDX-2" and r["qty_on_hand"] != ""
        and int(r["qty_on_hand"]) < int(r["reorder_point"]))
add(3, "In warehouse PDX-2, how many items have qty_on_hand strictly below their reorder_point? Skip rows where the quantity is empty.",
    "numeric", n, "inventory.tsv", "count", ["PDX-2", "qty_on_hand", "reorder_point"],
    "warehouse PDX-2; qty < reorder; blank qty skipped", "csv parse and filter",
    "awk -F'\\t' '$4==\"PDX-2\" && $5!=\"\" && $5+0<$6+0' | wc -l")

n = sum(1 for b in CL if b["cat"] == "Fixed" and b["sec"]["date"] and b["sec"]["date"].startswith("2024"))
add(3, "Across releases dated in 2024, how many bullet items are listed under Fixed? Don't count the Unreleased section.",
    "numeric", n, "CHANGELOG.txt", "count", ["Fixed"], "release date in 2024; Fixed category; Unreleased excluded",
    "parse sections/categories/bullets, filter", "awk state machine over headings")

ifo = sorted(r["ID"] for r in ACTIONS if r["Owner"] == "Ifeoma Obi" and r["Status"] != "Done")
add(3, "Which of Ifeoma Obi's action items are not done yet? Give the IDs, comma-separated.", "set", ifo,
    "incident_INC-2024-0317.md", "list", ["Ifeoma Obi"], "owner Ifeoma Obi, status not Done",
    "parse action table", "grep '| Ifeoma Obi |' | grep -v '| Done |'")

ports = sorted({re.search(r"DPT=(\d+)", e["msg"]).group(1) for e in DM if "[UFW BLOCK]" in e["msg"]}, key=int)
add(3, "Which distinct destination ports (DPT=) show up in the [UFW BLOCK] lines? List them.", "set", ports,
    "dmesg.log", "list", ["UFW BLOCK", "DPT"], "distinct",
    "regex DPT= on UFW BLOCK lines, set", "grep 'UFW BLOCK' | grep -o 'DPT=[0-9]*' | sort -u")

n = sum(1 for p in LOCK if any(d.split()[0] == "serde" for d in p["deps"]))
add(3, "How many packages list `serde` as a direct dependency in Cargo.lock? Exact name serde only, not serde_json or serde_derive.",
    "numeric", n, "Cargo.lock", "count", ["serde"], "direct dependency named exactly serde",
    "parse deps lists, first token == serde", "grep -c '^ \"serde[ \"]'")

# ---------- L4 ----------
tot = Counter(r["service"] for r in APP)
err = Counter(r["service"] for r in APP if r["level"] == "ERROR")
share = sorted(((err[s] / tot[s], s) for s in tot), reverse=True)
assert share[0][0] > share[1][0]
add(4, "Relative to its own volume, which service in app.jsonl has the highest share of ERROR entries?", "exact",
    share[0][1], "app.jsonl", "argmax", ["ERROR"], "errors / total entries per service",
    "json parse, per-service ERROR/total ratio, max", "jq -r '.service+\" \"+.level' | sort | uniq -c, ratios by awk")

lv = Counter(r["level"] for r in APP)
add(4, "Give me the breakdown of app.jsonl entries by level, one \"LEVEL: count\" per line.", "set",
    ["%s: %d" % (k, v) for k, v in sorted(lv.items())], "app.jsonl", "distribution", ["level"], "",
    "json parse, Counter(level)", "jq -r .level | sort | uniq -c")

dc = sorted(((len(p["deps"]), p["name"], p["version"]) for p in LOCK), reverse=True)
assert dc[0][0] > dc[1][0]
add(4, "Which package in Cargo.lock has the longest dependencies list?", "exact", dc[0][1], "Cargo.lock", "argmax",
    ["dependencies"], "direct dependencies count", "parse lock, max len(deps)",
    "awk counting lines between 'dependencies = [' and ']' per name")

wq = Counter()
for r in INV:
    if r["qty_on_hand"] != "":
        wq[r["warehouse"]] += int(r["qty_on_hand"])
wqs = wq.most_common()
assert wqs[0][1] > wqs[1][1]
add(4, "Which warehouse holds the most units in total (sum of qty_on_hand)?", "exact", wqs[0][0], "inventory.tsv",
    "argmax", ["qty_on_hand", "warehouse"], "blank quantities ignored", "csv parse, sum by warehouse",
    "awk -F'\\t' 'NR>1{s[$4]+=$5}END{for(w in s)print w,s[w]}'")

au = Counter(b["author"] for b in CL if b["author"]).most_common()
assert au[0][1] > au[1][1]
add(4, "Who is credited on the most changelog entries? Give the GitHub handle without the @.", "exact",
    [au[0][0], "@" + au[0][0]], "CHANGELOG.txt", "argmax", ["author"], "entries with an @handle credit",
    "parse bullets, regex @handle) at end, Counter", "grep -oE '@[a-z-]+\\)' | sort | uniq -c | sort -rn")

dl = Counter(e["lvl"] for e in DM)
add(4, "Tally the dmesg.log lines per log level (the second prefix field: info, notice, warn, ...). Format as 'level: count'.",
    "set", ["%s: %d" % (k, v) for k, v in sorted(dl.items())], "dmesg.log", "distribution", ["level"], "",
    "regex parse prefix, Counter(lvl)", "cut -d: -f2 | tr -d ' ' | sort | uniq -c")

ow = Counter(r["Owner"] for r in ACTIONS).most_common()
assert ow[0][1] > ow[1][1]
add(4, "Which person owns the largest number of action items in the INC-2024-0317 postmortem?", "exact", ow[0][0],
    "incident_INC-2024-0317.md", "argmax", ["Owner"], "", "parse action table, Counter(Owner)",
    "grep '^| AI-' | cut -d'|' -f4 | sort | uniq -c")

den = Counter(re.search(r'profile="([^"]+)"', e["msg"]).group(1) for e in DM if 'apparmor="DENIED"' in e["msg"]).most_common()
assert den[0][1] > den[1][1]
add(4, "Among the AppArmor audit lines with apparmor=\"DENIED\", which profile was denied most often?", "exact",
    den[0][0], "dmesg.log", "argmax", ["apparmor", "DENIED"], "", "regex profile= on DENIED lines, Counter",
    "grep 'apparmor=\"DENIED\"' | grep -o 'profile=\"[^\"]*\"' | sort | uniq -c")

nc = Counter(r["category"] for r in INV if r["unit_cost_usd"] == "")
add(4, "For rows missing a unit cost, break the count down by category. Answer lines like \"Category: N\".", "set",
    ["%s: %d" % (k, v) for k, v in sorted(nc.items())], "inventory.tsv", "distribution", ["unit_cost_usd", "category"],
    "only rows with empty unit_cost_usd; categories with zero omitted", "csv parse, Counter(category) where cost blank",
    "awk -F'\\t' 'NR>1 && $7==\"\"{print $3}' | sort | uniq -c")

# ---------- L5 ----------
lat = [r["latency_ms"] for r in APP if r["service"] == "search" and isinstance(r.get("latency_ms"), (int, float))]
add(5, "What is the mean latency_ms for the search service? Leave out entries where latency is null or missing; round to one decimal.",
    "numeric", round(sum(lat) / len(lat), 1), "app.jsonl", "other", ["search", "latency_ms"],
    "null/missing excluded; 1 decimal", "json parse, mean of numeric latency_ms for service search",
    "jq select(.service==\"search\" and .latency_ms!=null)|.latency_ms | awk mean")

mins = Counter(r["ts"][11:16] for r in APP).most_common()
assert mins[0][1] > mins[1][1]
add(5, "In app.jsonl, which minute (HH:MM, UTC) had the most log entries?", "exact", mins[0][0], "app.jsonl", "argmax",
    ["ts"], "group by minute of ts", "json parse, Counter(ts[11:16])", "cut -c10-14 | sort | uniq -c | sort -rn")

pct = round(100 * err["api-gateway"] / tot["api-gateway"], 2)
add(5, "What percentage of the api-gateway's log entries are ERROR level? Two decimals.", "numeric", pct, "app.jsonl",
    "other", ["api-gateway", "ERROR"], "percent, 2 decimals", "json parse, 100*errors/total for api-gateway",
    "grep -c on service + level, awk division")

val = sum(int(r["qty_on_hand"]) * float(r["unit_cost_usd"]) for r in INV
          if r["warehouse"] == "SLC-1" and r["qty_on_hand"] != "" and r["unit_cost_usd"] != "")
add(5, "Compute the total stock value at SLC-1 (qty_on_hand × unit_cost_usd summed over its rows). Skip rows where either value is blank. Round to cents.",
    "numeric", round(val, 2), "inventory.tsv", "other", ["SLC-1", "qty_on_hand", "unit_cost_usd"],
    "blank qty or cost skipped; 2 decimals", "csv parse, sum qty*cost", "awk -F'\\t' sum $5*$7 where $4==SLC-1")


def num(s):
    return int(s.replace(",", ""))


att = sum(num(r["Attempts"]) for r in BUCKETS)
suc = sum(num(r["Succeeded"]) for r in BUCKETS)
add(5, "Using the 5-minute checkout table under Supporting data, what was the overall success rate across all the buckets combined (total succeeded / total attempts)? Percent, one decimal.",
    "numeric", round(100 * suc / att, 1), "incident_INC-2024-0317.md", "other", ["Attempts", "Succeeded"],
    "sum over all buckets; percent 1 decimal", "parse markdown table, sum columns, divide",
    "awk -F'|' on table rows, strip commas")

ttl = [int(re.search(r"TTL=(\d+)", e["msg"]).group(1)) for e in DM if "[UFW BLOCK]" in e["msg"]]
add(5, "What's the average TTL of the packets in the [UFW BLOCK] lines? Round to 1 decimal place.", "numeric",
    round(sum(ttl) / len(ttl), 1), "dmesg.log", "other", ["UFW BLOCK", "TTL"], "1 decimal",
    "regex TTL= on UFW lines, mean", "grep 'UFW BLOCK' | grep -o 'TTL=[0-9]*' | awk mean")

dated = [r for r in RELEASES if r["date"]]
nb = sum(1 for b in CL if b["sec"]["date"])
add(5, "On average, how many bullet entries does a dated release have in CHANGELOG.txt (ignore the Unreleased section)? Round to two decimals.",
    "numeric", round(nb / len(dated), 2), "CHANGELOG.txt", "other", ["Release"],
    "Unreleased excluded; bullets / dated releases; 2 decimals", "parse sections and bullets",
    "grep -c release headings; awk count bullets after first dated heading")

nodeps = sum(1 for p in LOCK if not p["deps"])
add(5, "What share of the packages in Cargo.lock have no dependencies at all? Give a percentage rounded to one decimal.",
    "numeric", round(100 * nodeps / len(LOCK), 1), "Cargo.lock", "other", ["dependencies"],
    "packages without a dependencies list / all [[package]] entries", "parse lock",
    "grep -c '\\[\\[package\\]\\]' vs grep -c '^dependencies'")

usd = sum(r["amount_cents"] for r in APP if r["service"] == "billing" and r["msg"] == "payment captured"
          and r.get("currency") == "USD")
add(5, "Add up amount_cents over billing's \"payment captured\" events in USD only. What is the total in dollars (2 decimals)?",
    "numeric", round(usd / 100, 2), "app.jsonl", "other", ["payment captured", "amount_cents", "USD"],
    "billing, msg 'payment captured', currency USD; cents/100",
    "json parse, sum amount_cents", "jq select(...)|.amount_cents | awk sum")

# ---------- write ----------
out = []
for i, q in enumerate(Q, 1):
    rec = {"id": "pc-B-%03d" % i, "suite": "text", "level": q["level"], "query": q["query"], "checker": q["checker"],
           "expected": q["expected"], "domain": "doc:" + q["source"], "source": q["source"], "kind": q["kind"],
           "scope": "document", "targets": q["targets"], "rules": q["rules"], "writer": "B",
           "method": q["method"],
           "check": q["check"] + " (shell/jq/awk second pass; result agreed with the Python parse)"}
    out.append(rec)
if __name__ == "__main__":
    for r in out:
        print(r["id"], r["level"], r["source"], "=>", r["expected"])
    with open(os.path.join(HERE, "questions.jsonl"), "w", encoding="utf-8") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
