#!/usr/bin/env python3
"""Write questions.jsonl and MANIFEST.json for writer A (text suite).
Expected values come from compute_refs.py (a parser of the documents, not the generator)."""
import hashlib
import json
import os

import compute_refs

A = compute_refs.A
HERE = os.path.dirname(os.path.abspath(__file__))

Q = []


def q(key, level, query, checker, source, kind, targets, rules, method, check):
    Q.append(dict(key=key, level=level, query=query, checker=checker, expected=A[key], source=source,
                  kind=kind, targets=targets, rules=rules, method=method, check=check))


SVC, ORD, RD, INI, ACC, GIT = "service.log", "orders.csv", "README.md", "settings.ini", "access.log", "git_log.txt"

# ----------------------------------------------------------------- level 1
q("S1", 1, "In service.log, how long did job id 4425 take according to its 'finished' line? Answer in seconds.",
  "numeric", SVC, "lookup", ["4425"], "",
  "compute_refs.py: syslog regex, line with id=4425 and 'finished', duration=([\\d.]+)s",
  "grep 'id=4425 ' | grep -o duration=... -> 243.0, agrees")
q("O1", 1, "What's the status of order 100405 in orders.csv?",
  "exact", ORD, "lookup", ["100405"], "",
  "csv.DictReader, row with order_id == 100405, status column",
  "sqlite3 .import --csv, select status where order_id='100405' -> returned, agrees")
q("R1", 1, "According to the changelog in the README, on what date was version 3.1.1 released? Give it as YYYY-MM-DD.",
  "exact", RD, "lookup", ["3.1.1"], "",
  "regex '^## \\[(x.y.z)\\] - (date)' over README lines, pick 3.1.1",
  "grep -n '^## \\[3.1.1\\]' README.md -> 2023-12-14, agrees")
q("R2", 1, "what is the default poll_interval listed in the configuration table of README.md?",
  "numeric", RD, "lookup", ["poll_interval"], "",
  "table row starting '| `poll_interval`', third backticked cell",
  "grep poll_interval README.md, read Default column by eye -> 0.5, agrees")
q("I1", 1, "Which port is set in the [server.admin] section of settings.ini?",
  "numeric", INI, "lookup", ["server.admin", "port"], "",
  "own INI parser (skip ;/# comment lines, section headers, split on first '=')",
  "configparser.ConfigParser(interpolation=None)['server.admin']['port'] -> 9443, agrees")
q("I2", 1, "settings.ini: what's the timeout under [worker:exports]?",
  "numeric", INI, "lookup", ["worker:exports", "timeout"], "",
  "own INI parser, sd['worker:exports']['timeout']",
  "configparser -> 3600, agrees")
q("A1", 1, "In access.log, what HTTP status code did the request from 10.0.4.11 at 10:14:01 receive?",
  "numeric", ACC, "lookup", ["10.0.4.11"], "",
  "combined-log regex, ip == 10.0.4.11 and time 10:14:01 (exactly one line), status field",
  "grep '^10.0.4.11 .*12/Mar/2024:10:14:01' | awk '{print $9}' -> 422, agrees")
q("G1", 1, "Who is the author of commit 766738d?",
  "exact", GIT, "lookup", ["766738d"], "",
  "parse git_log.txt into commits, sha prefix 766738d, Author name without email",
  "grep -A2 '^commit 766738d' | grep Author -> Jonas Weber, agrees")

# ----------------------------------------------------------------- level 2
q("S2", 2, "How many ERROR-level lines in service.log contain the word \"disk\"? Match case-insensitively.",
  "numeric", SVC, "count", ["ERROR", "disk"], "case-insensitive; level ERROR",
  "syslog regex with optional level group; level == ERROR and 'disk' in line.lower()",
  "grep -E '^... +N hh:mm:ss host prog: ERROR ' | grep -ic disk -> 48, agrees (all are diskmon lines)")
q("S3", 2, "Count the lines in the service log that contain \"Failed password\".",
  "numeric", SVC, "count", ["Failed password"], "",
  "count parsed lines containing 'Failed password'",
  "grep -c 'Failed password' service.log -> 124, agrees")
q("O2", 2, "How many orders have Berlin in the city column?",
  "numeric", ORD, "count", ["Berlin"], "city column only",
  "csv.DictReader, city == 'Berlin'",
  "sqlite3 select count(*) where city='Berlin' -> 73, agrees")
q("O3", 2, "In orders.csv, how many orders have no discount_pct value (the cell is empty)?",
  "numeric", ORD, "count", ["discount_pct"], "empty cell only; 0 is not empty",
  "csv.DictReader, discount_pct == ''",
  "sqlite3 select count(*) where discount_pct='' -> 146, agrees")
q("R3", 2, "How many released versions does the changelog section of the README list? Leave out [Unreleased] but count the yanked release.",
  "numeric", RD, "count", [], "exclude Unreleased; include yanked",
  "count '## [x.y.z] - date' headings",
  "grep -cE '^## \\[[0-9]' README.md -> 19, agrees")
q("I3", 2, "How many sections in settings.ini have enabled = false?",
  "numeric", INI, "count", ["enabled"], "",
  "own INI parser, sections whose enabled value == 'false'",
  "configparser count + grep -c '^enabled = false' -> 3, agrees")
q("A2", 2, "How many requests in access.log returned 404?",
  "numeric", ACC, "count", ["404"], "",
  "combined-log regex, status == 404",
  "awk -F'\" ' split of the status field | sort | uniq -c -> 103, agrees")
q("A3", 2, "Count the POST requests in the access log.",
  "numeric", ACC, "count", ["POST"], "",
  "regex, request method == POST",
  "awk -F'\"' method of the request field | grep -c '^POST$' -> 64, agrees")
q("G2", 2, "How many merge commits are there in git_log.txt?",
  "numeric", GIT, "count", ["Merge"], "",
  "parser flags commits having a 'Merge:' line",
  "grep -c '^Merge: ' git_log.txt -> 14, agrees")
q("G3", 2, "How many commits have a subject line that starts with `fix` (either `fix:` or with a scope such as `fix(worker):`)?",
  "numeric", GIT, "count", ["fix"], "subject line only",
  "first message line matches ^fix[(:]",
  "grep -A8 '^commit ' | grep -cE '^    fix[(:]' -> 27, agrees")

# ----------------------------------------------------------------- level 3
q("S4", 3, "On Mar 10, how many ERROR lines were logged by the database hosts db-01 and db-02 together? Just the number please.",
  "numeric", SVC, "count", ["ERROR", "db-01", "db-02"], "day Mar 10; hosts db-01, db-02",
  "parsed records: day == 10, host in (db-01, db-02), level == ERROR",
  "grep -E '^Mar 10 hh:mm:ss db-0[12] prog: ERROR ' | wc -l -> 43, agrees")
q("S5", 3, "List the distinct source IP addresses that appear in \"Failed password for invalid user\" lines in service.log, one per line.",
  "set", SVC, "list", ["Failed password for invalid user"], "distinct",
  "regex 'from (\\S+) port' over matching lines, set",
  "grep ... | grep -oE 'from [0-9.]+' | sort -u -> same 5 IPs")
q("O4", 3, "How many orders placed in December 2023 ended up cancelled?",
  "numeric", ORD, "count", ["cancelled"], "order_date in 2023-12; status cancelled",
  "csv.DictReader, status == cancelled and order_date startswith 2023-12",
  "sqlite3 where status='cancelled' and order_date like '2023-12-%' -> 12, agrees")
q("O5", 3, "Which products did customers in Spain order in a quantity of 5 or more? Give each product once.",
  "set", ORD, "list", ["Spain"], "country Spain; quantity >= 5; distinct",
  "csv.DictReader, country == Spain and int(quantity) >= 5, set of product",
  "sqlite3 select distinct product ... -> same 4 products")
q("R4", 3, "Across all 2.x releases in the changelog, how many bullet points sit under \"Fixed\" headings?",
  "numeric", RD, "count", ["Fixed"], "versions 2.x.y only; Fixed subsections only",
  "README parser: per version per ### section count '- ' bullets; sum Fixed for versions starting '2.'",
  "awk state machine over README.md (in 2.x version, section Fixed, line ^- ) -> 9, agrees")
q("I4", 3, "Give me the names of all sections in settings.ini that define a `host` key (names without the brackets).",
  "set", INI, "list", ["host"], "",
  "own INI parser, sections with key 'host'",
  "configparser: sections with 'host' -> same 9")
q("I7", 3, "Which sections of settings.ini have a timeout setting but no enabled setting?",
  "set", INI, "list", ["timeout", "enabled"], "",
  "own INI parser: 'timeout' in keys and 'enabled' not in keys",
  "configparser, same filter -> auth, payments")
q("A4", 3, "Which client IPs requested /.env? List each address once.",
  "set", ACC, "list", ["/.env"], "distinct",
  "regex, path == '/.env', set of ip",
  "grep '\"[A-Z]* /\\.env ' | cut -d' ' -f1 | sort -u -> same 2 IPs")
q("A5", 3, "Between 14:00:00 and 14:59:59, how many requests to paths under /api/ came back with status 200?",
  "numeric", ACC, "count", ["/api/", "200"], "hour 14 only; path starts with /api/; status 200",
  "regex: hour == 14, path startswith /api/, status == 200",
  "grep ':14:mm:ss +0000] \"METHOD /api/' | awk status==200 -> 51, agrees")
q("G4", 3, "Going by the Date lines, how many non-merge commits did Maren Keller make in January 2024?",
  "numeric", GIT, "count", ["Maren Keller"], "non-merge only; January 2024",
  "parser: author == Maren Keller, no Merge: line, Date month Jan and year 2024",
  "awk state over commit/Merge/Author/Date lines -> 12, agrees")

# ----------------------------------------------------------------- level 4
q("S6", 4, "Which host logged the most ERROR lines in service.log?",
  "exact", SVC, "argmax", ["ERROR"], "level ERROR",
  "Counter of host over level == ERROR records (batch-01 58, web-02 41, ...)",
  "awk '$6==\"ERROR\"{print $4}' | sort | uniq -c | sort -rn -> batch-01 58, agrees")
q("S7", 4, "Break service.log down by severity: give one 'LEVEL: count' line for each of INFO, WARN, ERROR and DEBUG. Lines with no level (kernel messages, 'last message repeated', the rsyslogd line, indented traceback lines) are not counted.",
  "set", SVC, "distribution", ["INFO", "WARN", "ERROR", "DEBUG"], "only lines with a level",
  "Counter of level group of the syslog regex, continuation lines skipped",
  "awk '$6 ~ /^(INFO|WARN|ERROR|DEBUG)$/' | sort | uniq -c -> same counts")
q("O6", 4, "Looking only at returned orders, which product category appears most often?",
  "exact", ORD, "argmax", ["returned"], "status returned",
  "Counter of category over status == returned (Peripherals 10, Accessories 7, ...)",
  "sqlite3 group by category where status='returned' -> Peripherals 10, agrees")
q("O7", 4, "Tally the orders by status. One line per status, formatted `status: count`.",
  "set", ORD, "distribution", ["status"], "",
  "Counter of status column over csv.DictReader records (430 records; 2 notes span two lines)",
  "sqlite3 select status, count(*) group by 1 -> same")
q("R6", 4, "How many releases happened in each calendar year according to the changelog? Count every released version including the yanked one, skip Unreleased, and answer with 'YYYY: count' lines.",
  "set", RD, "distribution", [], "exclude Unreleased; include yanked",
  "Counter of year of version heading dates",
  "grep -oE '^## \\[[0-9.]+\\] - [0-9]{4}' | awk '{print $NF}' | sort | uniq -c -> same")
q("R8", 4, "Which version has the largest number of changelog bullet points in total (all of its subsections added together)?",
  "exact", RD, "argmax", [], "all subsections",
  "README parser, sum bullets per version (3.0.0 8, 3.2.0 7, 3.1.0 5)",
  "awk counting '^- ' lines under each version heading | sort -rn -> 3.0.0 8, agrees")
q("I5", 4, "For the keys timeout, enabled, host and port, in how many sections of settings.ini does each one appear? Commented-out lines don't count. Reply as 'key: count', one per line.",
  "set", INI, "distribution", ["timeout", "enabled", "host", "port"], "ignore comments",
  "own INI parser, Counter of key per section",
  "configparser: count sections containing each key -> same (timeout 15, enabled 15, host 9, port 9)")
q("A7", 4, "Group all requests in access.log by status class and give the count for each class, as lines like '2xx: N'.",
  "set", ACC, "distribution", [], "all lines, including malformed requests",
  "regex status // 100, Counter",
  "awk -F'\" ' first char of status | sort | uniq -c -> same")
q("G6", 4, "Which file path shows up in the --stat file lists of the most commits?",
  "exact", GIT, "argmax", [], "",
  "parser collects ' path | ...' stat lines per commit, Counter (pyproject.toml 23, CHANGELOG.md 18)",
  "grep -E '^ \\S.* \\| ' | awk '{print $1}' | sort | uniq -c | sort -rn -> pyproject.toml 23, agrees")
q("G7", 4, "Give the number of commits per author, merge commits included. Format: `Author Name: count`, one per line.",
  "set", GIT, "distribution", [], "merges included",
  "parser Counter of Author name (email stripped)",
  "grep '^Author:' | sed strip email | sort | uniq -c -> same")

# ----------------------------------------------------------------- level 5
q("S8", 5, "What's the average duration of the nightly-backup job runs that finished with status=ok? Give seconds, rounded to one decimal place.",
  "numeric", SVC, "other", ["nightly-backup", "status=ok"], "status=ok only; round to 1 decimal",
  "mean of duration= over 'job=nightly-backup ' lines with status=ok: 15 runs, 6078.0 s total",
  "grep | grep status=ok | grep -oE 'duration=...' | awk sum/n -> 15, 6078.0, 405.2, agrees")
q("S9", 5, "On March 10, during which hour of the day were the most WARN and ERROR lines (combined) written? Answer with the two-digit hour, e.g. 07 for 07:00-07:59.",
  "exact", SVC, "argmax", ["WARN", "ERROR"], "day Mar 10; WARN or ERROR",
  "Counter of hour over day 10 and level in (WARN, ERROR): 10 -> 45, 11 -> 41",
  "awk '$1==\"Mar\" && $2==\"10\" && ($6==\"WARN\"||$6==\"ERROR\")' hour | sort | uniq -c -> 10 (45), agrees")
q("O8", 5, "What is the total net value of all delivered orders? Per order, net = quantity * unit_price * (1 - discount_pct/100); treat a blank discount as 0, and skip delivered orders whose unit_price is blank. Round to 2 decimal places.",
  "numeric", ORD, "other", ["delivered"], "status delivered; blank discount = 0; skip blank unit_price; round 2",
  "csv.DictReader, sum over delivered rows with unit_price -> 36002.0695",
  "sqlite3 sum(quantity*unit_price*(1-coalesce(nullif(discount_pct,''),0)/100.0)) -> 36002.0695, agrees")
q("R7", 5, "How many days passed between the 3.0.0 release and the 3.2.0 release?",
  "numeric", RD, "other", ["3.0.0", "3.2.0"], "",
  "datetime.date difference of the two heading dates (2023-09-04, 2024-02-19)",
  "grep the two headings, python date subtraction -> 168, agrees")
q("I6", 5, "Take every timeout value set in settings.ini (ignore commented lines) and give their mean, rounded to 2 decimal places.",
  "numeric", INI, "other", ["timeout"], "ignore comments; round 2",
  "own INI parser: 15 timeout values, sum 5514, mean 367.6",
  "awk '/^timeout *=/' sum/n -> 15, 5514, 367.6; configparser same")
q("A8", 5, "What percentage of the requests in access.log received a 5xx status? Use every line in the file as the denominator and round to 2 decimals.",
  "numeric", ACC, "other", ["5xx"], "all lines as denominator; round 2",
  "regex: 53 of 1830 lines have status 500-599 -> 2.896 -> 2.90",
  "awk -F'\" ' status >= 500 -> 53/1830 = 2.8962, agrees")
q("A9", 5, "Which hour of the day was busiest in access.log, by number of requests? Answer with the two-digit hour.",
  "exact", ACC, "argmax", [], "",
  "Counter of hour field over regex records (14 -> 297, next 08 -> 99)",
  "cut -d: -f2 access.log | sort | uniq -c | sort -rn -> 14 297, agrees")
q("A10", 5, "Sum up the response bytes of all requests under /static/js/ that got a 200. Answer as a plain integer number of bytes.",
  "numeric", ACC, "other", ["/static/js/", "200"], "status 200 only",
  "regex: path startswith /static/js/ and status 200, sum of size",
  "grep '\"GET /static/js/' | awk status==200 sum of size -> 13714002, agrees")
q("G8", 5, "How many lines did Tobias Brandt insert in total across his commits? Add up the 'insertions(+)' numbers from the stat summaries.",
  "numeric", GIT, "other", ["Tobias Brandt"], "",
  "parser: sum of insertions in summary line for commits by Tobias Brandt",
  "awk remembering last Author, summing the number before 'insertion' -> 1166, agrees")
q("G9", 5, "What is the average number of files changed per non-merge commit? Round to 2 decimals.",
  "numeric", GIT, "other", [], "non-merge only; round 2",
  "parser: 232 stat file lines over 104 non-merge commits -> 2.2308",
  "sum of N in ' N files changed' lines = 232 over 104 such lines -> 2.23, agrees")


def main():
    out = []
    for i, d in enumerate(Q, 1):
        obj = {
            "id": f"pc-A-{i:03d}",
            "suite": "text",
            "level": d["level"],
            "query": d["query"],
            "checker": d["checker"],
            "expected": d["expected"],
            "domain": f"doc:{d['source']}",
            "source": d["source"],
            "kind": d["kind"],
            "scope": "document",
            "targets": d["targets"],
            "rules": d["rules"],
            "writer": "A",
            "method": d["method"],
            "check": d["check"],
        }
        if obj["checker"] == "numeric":
            assert isinstance(obj["expected"], (int, float)), d["key"]
        elif obj["checker"] == "set":
            assert isinstance(obj["expected"], list), d["key"]
        else:
            assert isinstance(obj["expected"], str), d["key"]
        out.append(json.dumps(obj, ensure_ascii=False))
    path = os.path.join(HERE, "questions.jsonl")
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\n".join(out) + "\n")
    files = {}
    for name in sorted(os.listdir(os.path.join(HERE, "docs"))):
        files[f"docs/{name}"] = hashlib.sha256(open(os.path.join(HERE, "docs", name), "rb").read()).hexdigest()
    man = {"writer": "A", "files": files,
           "questions": hashlib.sha256(open(path, "rb").read()).hexdigest(), "count": len(out)}
    with open(os.path.join(HERE, "MANIFEST.json"), "w", encoding="utf-8") as fh:
        json.dump(man, fh, indent=2)
        fh.write("\n")
    print(len(out), "questions")


if __name__ == "__main__":
    main()
