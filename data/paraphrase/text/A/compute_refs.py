#!/usr/bin/env python3
"""Compute reference answers by parsing the documents in ./docs (independent of make_docs.py).
Prints one line per question id: id <TAB> json(expected)."""
import csv
import json
import os
import re
import sys
from collections import Counter, defaultdict
from datetime import date

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "docs")
A = {}

# ---------------------------------------------------------------- service.log
SYS = re.compile(r'^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\S+) ([\w.-]+)(?:\[(\d+)\])?: '
                 r'(?:(INFO|WARN|ERROR|DEBUG) )?(.*)$')
svc = []
raw_lines = open(os.path.join(D, "service.log"), encoding="utf-8").read().split("\n")[:-1]
for ln in raw_lines:
    if ln.startswith("\t"):
        continue
    m = SYS.match(ln)
    assert m, ln
    mon, day, hh, mm, ss, host, prog, pid, lvl, msg = m.groups()
    svc.append(dict(day=int(day), hour=hh, host=host, prog=prog, lvl=lvl, msg=msg, line=ln))

# S1 duration of job 4425 finished line
fin = [r for r in svc if re.search(r'\bid=4425\b', r["msg"]) and "finished" in r["msg"]]
assert len(fin) == 1
A["S1"] = float(re.search(r'duration=([\d.]+)s', fin[0]["msg"]).group(1))
# S2 ERROR lines containing 'disk' (anywhere in the line, case-insensitive)
A["S2"] = sum(1 for r in svc if r["lvl"] == "ERROR" and "disk" in r["line"].lower())
# S3 'Failed password' lines
A["S3"] = sum(1 for r in svc if "Failed password" in r["line"])
# S4 ERROR from db-01/db-02 on Mar 10
A["S4"] = sum(1 for r in svc if r["lvl"] == "ERROR" and r["host"] in ("db-01", "db-02") and r["day"] == 10)
# S5 distinct IPs in 'Failed password for invalid user'
A["S5"] = sorted({re.search(r'from (\S+) port', r["msg"]).group(1) for r in svc
                  if "Failed password for invalid user" in r["msg"]})
# S6 host with most ERROR lines
c = Counter(r["host"] for r in svc if r["lvl"] == "ERROR")
top = c.most_common(2)
assert top[0][1] > top[1][1]
A["S6"] = top[0][0]
A["S6_counts"] = dict(c)
# S7 level distribution
c = Counter(r["lvl"] for r in svc if r["lvl"])
A["S7"] = sorted(f"{k}: {v}" for k, v in c.items())
# S8 mean duration of ok nightly-backup runs
durs = [float(re.search(r'duration=([\d.]+)s', r["msg"]).group(1)) for r in svc
        if "job=nightly-backup " in r["msg"] and "status=ok" in r["msg"]]
A["S8"] = round(sum(durs) / len(durs), 1)
A["S8_n"] = (len(durs), sum(durs))
# S9 hour on Mar 10 with most WARN+ERROR
c = Counter(r["hour"] for r in svc if r["day"] == 10 and r["lvl"] in ("WARN", "ERROR"))
top = c.most_common(2)
assert top[0][1] > top[1][1], top
A["S9"] = top[0][0]
A["S9_top"] = top

# ---------------------------------------------------------------- orders.csv
with open(os.path.join(D, "orders.csv"), newline="", encoding="utf-8") as fh:
    rows = list(csv.DictReader(fh))
A["O1"] = [r["status"] for r in rows if r["order_id"] == "100405"][0]
A["O2"] = sum(1 for r in rows if r["city"] == "Berlin")
A["O3"] = sum(1 for r in rows if r["discount_pct"] == "")
A["O4"] = sum(1 for r in rows if r["status"] == "cancelled" and r["order_date"].startswith("2023-12"))
A["O5"] = sorted({r["product"] for r in rows if r["country"] == "Spain" and int(r["quantity"]) >= 5})
c = Counter(r["category"] for r in rows if r["status"] == "returned")
top = c.most_common(2)
assert top[0][1] > top[1][1], top
A["O6"] = top[0][0]
A["O6_counts"] = dict(c)
A["O7"] = sorted(f"{k}: {v}" for k, v in Counter(r["status"] for r in rows).items())
tot = 0.0
for r in rows:
    if r["status"] != "delivered" or r["unit_price"] == "":
        continue
    disc = float(r["discount_pct"]) if r["discount_pct"] else 0.0
    tot += int(r["quantity"]) * float(r["unit_price"]) * (1 - disc / 100)
A["O8"] = round(tot, 2)
A["O8_raw"] = tot

# ---------------------------------------------------------------- README.md
md = open(os.path.join(D, "README.md"), encoding="utf-8").read().split("\n")
vers = []  # (version, date, {section: n_entries})
cur = None
sec = None
for ln in md:
    m = re.match(r'^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d\d-\d\d)', ln)
    if m:
        cur = dict(v=m.group(1), d=m.group(2), secs=defaultdict(int))
        vers.append(cur)
        sec = None
        continue
    if ln.startswith("## "):
        cur = None
        continue
    m = re.match(r'^### (\w+)', ln)
    if m and cur is not None:
        sec = m.group(1)
        continue
    if ln.startswith("- ") and cur is not None and sec:
        cur["secs"][sec] += 1
A["R1"] = [v["d"] for v in vers if v["v"] == "3.1.1"][0]
tbl = [ln for ln in md if ln.startswith("| `poll_interval`")]
A["R2"] = float(re.findall(r'`([^`]*)`', tbl[0])[2])
A["R3"] = len(vers)
A["R4"] = sum(v["secs"].get("Fixed", 0) for v in vers if v["v"].startswith("2."))
A["R6"] = sorted(f"{k}: {n}" for k, n in Counter(v["d"][:4] for v in vers).items())
tot = {v["v"]: sum(v["secs"].values()) for v in vers}
srt = sorted(tot.items(), key=lambda kv: -kv[1])
assert srt[0][1] > srt[1][1]
A["R8"] = srt[0][0]
A["R8_top"] = srt[:3]
dd = {v["v"]: date.fromisoformat(v["d"]) for v in vers}
A["R7"] = (dd["3.2.0"] - dd["3.0.0"]).days

# ---------------------------------------------------------------- settings.ini
sections = []  # (name, [(key, value)])
for ln in open(os.path.join(D, "settings.ini"), encoding="utf-8").read().split("\n"):
    s = ln.strip()
    if not s or s[0] in ";#":
        continue
    m = re.match(r'^\[(.+)\]$', s)
    if m:
        sections.append((m.group(1), []))
        continue
    k, v = s.split("=", 1)
    sections[-1][1].append((k.strip(), v.strip()))
sd = {n: dict(kv) for n, kv in sections}
A["I1"] = int(sd["server.admin"]["port"])
A["I2"] = int(sd["worker:exports"]["timeout"])
A["I3"] = sum(1 for n, kv in sections if dict(kv).get("enabled") == "false")
A["I4"] = sorted(n for n, kv in sections if "host" in dict(kv))
c = Counter(k for n, kv in sections for k in set(dict(kv)))
A["I5"] = sorted(f"{k}: {c[k]}" for k in ("timeout", "enabled", "host", "port"))
A["I7"] = sorted(n for n, kv in sections if "timeout" in dict(kv) and "enabled" not in dict(kv))
tos = [int(dict(kv)["timeout"]) for n, kv in sections if "timeout" in dict(kv)]
A["I6"] = round(sum(tos) / len(tos), 2)
A["I6_raw"] = (len(tos), sum(tos))

# ---------------------------------------------------------------- access.log
ACC = re.compile(r'^(\S+) (\S+) (\S+) \[(\d\d)/(\w{3})/(\d{4}):(\d\d):(\d\d):(\d\d) ([+-]\d{4})\] '
                 r'"((?:[^"\\]|\\.)*)" (\d{3}) (\S+) "([^"]*)" "([^"]*)"$')
acc = []
for ln in open(os.path.join(D, "access.log"), encoding="utf-8").read().split("\n")[:-1]:
    m = ACC.match(ln)
    assert m, ln
    g = m.groups()
    parts = g[10].split(" ")
    method, path = (parts[0], parts[1]) if len(parts) == 3 else (None, None)
    acc.append(dict(ip=g[0], user=g[2], hh=g[6], mm=g[7], ss=g[8], method=method, path=path,
                    status=int(g[11]), size=g[12], req=g[10]))
hit = [a for a in acc if a["ip"] == "10.0.4.11" and (a["hh"], a["mm"], a["ss"]) == ("10", "14", "01")]
assert len(hit) == 1
A["A1"] = hit[0]["status"]
A["A2"] = sum(1 for a in acc if a["status"] == 404)
A["A3"] = sum(1 for a in acc if a["method"] == "POST")
A["A4"] = sorted({a["ip"] for a in acc if a["path"] == "/.env"})
A["A5"] = sum(1 for a in acc if a["hh"] == "14" and a["path"] and a["path"].startswith("/api/") and a["status"] == 200)
c = Counter(a["ip"] for a in acc)
top = c.most_common(2)
assert top[0][1] > top[1][1]
A["A6"] = top[0][0]
A["A7"] = sorted(f"{k}xx: {v}" for k, v in Counter(a["status"] // 100 for a in acc).items())
n5 = sum(1 for a in acc if 500 <= a["status"] <= 599)
A["A8"] = round(100 * n5 / len(acc), 2)
A["A8_raw"] = (n5, len(acc))
c = Counter(a["hh"] for a in acc)
top = c.most_common(2)
assert top[0][1] > top[1][1]
A["A9"] = top[0][0]
A["A10"] = sum(int(a["size"]) for a in acc if a["path"] and a["path"].startswith("/static/js/") and a["status"] == 200)

# ---------------------------------------------------------------- git_log.txt
txt = open(os.path.join(D, "git_log.txt"), encoding="utf-8").read()
commits = []
cur = None
for ln in txt.split("\n"):
    if re.match(r'^commit [0-9a-f]{40}$', ln):
        cur = dict(sha=ln.split()[1], merge=False, files=[], ins=0, dels=0, msg=[])
        commits.append(cur)
    elif ln.startswith("Merge: "):
        cur["merge"] = True
    elif ln.startswith("Author: "):
        cur["author"] = re.match(r'^Author: (.*) <[^>]*>$', ln).group(1)
    elif ln.startswith("Date:"):
        cur["date"] = ln[5:].strip()
    elif ln.startswith("    "):
        cur["msg"].append(ln[4:])
    elif re.match(r'^ \S.* \| ', ln):
        cur["files"].append(ln.split("|")[0].strip())
    elif re.match(r'^ \d+ files? changed', ln):
        m1 = re.search(r'(\d+) insertions?\(\+\)', ln)
        m2 = re.search(r'(\d+) deletions?\(-\)', ln)
        cur["ins"] = int(m1.group(1)) if m1 else 0
        cur["dels"] = int(m2.group(1)) if m2 else 0
for cm in commits:
    p = cm["date"].split()  # Dow Mon D HH:MM:SS YYYY tz
    cm["mon"], cm["year"] = p[1], p[4]
A["G1"] = [cm["author"] for cm in commits if cm["sha"].startswith("766738d")][0]
A["G2"] = sum(1 for cm in commits if cm["merge"])
A["G3"] = sum(1 for cm in commits if re.match(r'^fix[(:]', cm["msg"][0]))
A["G4"] = sum(1 for cm in commits if cm["author"] == "Maren Keller" and not cm["merge"]
              and cm["mon"] == "Jan" and cm["year"] == "2024")
c = Counter(f for cm in commits for f in cm["files"])
top = c.most_common(2)
assert top[0][1] > top[1][1]
A["G6"] = top[0][0]
A["G6_top"] = c.most_common(3)
A["G7"] = sorted(f"{k}: {v}" for k, v in Counter(cm["author"] for cm in commits).items())
A["G8"] = sum(cm["ins"] for cm in commits if cm["author"] == "Tobias Brandt")
nm = [cm for cm in commits if not cm["merge"]]
A["G9"] = round(sum(len(cm["files"]) for cm in nm) / len(nm), 2)
A["G9_raw"] = (sum(len(cm["files"]) for cm in nm), len(nm))

if __name__ == "__main__":
    for k, v in A.items():
        print(k, json.dumps(v, ensure_ascii=False), sep="\t")
