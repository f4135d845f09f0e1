#!/usr/bin/env python3
"""tools/pg_slt.py -- fill a sqllogictest file's expectations from PostgreSQL 15.

    tools/pg_slt.py sql-tests/datetime.slt          rewrite the file in place
    tools/pg_slt.py --check sql-tests/datetime.slt  only report the differences

Every record of the file runs, in order, in one session of a throwaway
PostgreSQL 15 (tools/pg_oracle.sh starts and stops it).  Then:

  query ...        its result rows are replaced by what PostgreSQL printed
                   (values joined by spaces, NULL as NULL, '' as (empty), as
                   sqllogictest-rs's postgres engine prints them); a query
                   that fails in PostgreSQL is reported and left alone;
  statement ok     checked to succeed;
  statement error  / query error: the expected error is set from
                   PostgreSQL's: "(SQLSTATE)" stays a SQLSTATE match, any
                   other text becomes the message as an escaped regex.  A
                   pair of records with the same SQL, one "(SQLSTATE)" and
                   one message, is the way to check both.

Comments, blank lines and the order of records are kept.  The file's own
SQL must end each statement with the record (one statement per record).
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MARK = "@@slt-record "


def parse(lines):
    """Splits an slt file into items: ('raw', [lines]) or ('rec', dict)."""
    items = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        head = line.split()
        if head and head[0] in ("query", "statement"):
            rec = {"head": line, "sql": [], "results": None}
            i += 1
            while i < n and lines[i].strip() != "" and lines[i].strip() != "----":
                rec["sql"].append(lines[i])
                i += 1
            if i < n and lines[i].strip() == "----":
                i += 1
                res = []
                while i < n and lines[i].strip() != "":
                    res.append(lines[i])
                    i += 1
                rec["results"] = res
            items.append(("rec", rec))
        else:
            items.append(("raw", [line]))
            i += 1
    return items


def regex_escape(msg):
    return re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", msg)


def run_pg(recs):
    script = ["\\pset null NULL", "\\pset fieldsep '\\t'", "\\pset footer off"]
    for k, rec in enumerate(recs):
        script.append("\\echo '%s%d'" % (MARK, k))
        sql = "\n".join(rec["sql"]).rstrip()
        if not sql.endswith(";"):
            sql += ";"
        script.append(sql)
    script.append("\\echo '%send'" % MARK)
    out = subprocess.run([os.path.join(HERE, "pg_oracle.sh"), "-"],
                         input="\n".join(script) + "\n", capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        sys.exit("pg_oracle.sh failed:\n" + out.stderr + out.stdout)
    chunks = {}
    cur = None
    for line in out.stdout.split("\n"):
        if line.startswith(MARK):
            tag = line[len(MARK):]
            cur = None if tag == "end" else int(tag)
            if cur is not None:
                chunks[cur] = []
            continue
        if cur is not None:
            chunks[cur].append(line)
    return chunks


ERR_RE = re.compile(r"^psql:[^:]*:\d+: ERROR:  ([0-9A-Z]{5}): (.*)$")


def outcome(chunk):
    """(error_state, error_message) or (None, rows)."""
    for line in chunk:
        m = ERR_RE.match(line)
        if m:
            return m.group(1), m.group(2)
    rows = []
    for line in chunk:
        if line.startswith("psql:"):
            continue
        vals = ["(empty)" if v == "" else v for v in line.split("\t")]
        rows.append(vals)
    return None, rows


def main():
    args = sys.argv[1:]
    check = False
    if args and args[0] == "--check":
        check = True
        args = args[1:]
    if len(args) != 1:
        sys.exit(__doc__)
    path = args[0]
    with open(path) as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    items = parse(lines)
    recs = [it[1] for it in items if it[0] == "rec"]
    chunks = run_pg(recs)
    problems = 0
    for k, rec in enumerate(recs):
        head = rec["head"].split()
        state, res = outcome(chunks.get(k, []))
        sql = " ".join(s.strip() for s in rec["sql"])
        is_error = len(head) > 1 and head[1] == "error"
        if state is not None:
            if not is_error:
                print("%s: PostgreSQL fails (%s %s): %s" % (path, state, res, sql))
                problems += 1
                continue
            expect = " ".join(head[2:])
            if re.fullmatch(r"\(([0-9A-Z]{5})\)", expect):
                new = "%s error (%s)" % (head[0], state)
            else:
                new = "%s error %s" % (head[0], regex_escape(res))
            if new != rec["head"]:
                if check:
                    print("%s: %s\n  expected: %s\n  postgres: %s" % (path, sql, rec["head"], new))
                problems += rec["head"] != new
                rec["head"] = new
            rec["results"] = None
            continue
        if is_error:
            print("%s: PostgreSQL succeeds, the file expects an error: %s" % (path, sql))
            problems += 1
            continue
        if head[0] == "statement":
            continue
        if not res:
            ncols = len(head[1]) if len(head) > 1 else 1
        else:
            ncols = len(res[0])
        rows = [" ".join(r) for r in res]
        types = head[1] if len(head) > 1 and len(head[1]) == ncols else "T" * ncols
        newhead = " ".join(["query", types] + head[2:])
        if rec["results"] != rows or newhead != rec["head"]:
            if check:
                print("%s: %s\n  file:     %s\n  postgres: %s" % (path, sql, rec["results"], rows))
            problems += 1
        rec["head"] = newhead
        rec["results"] = rows
    if check:
        sys.exit(1 if problems else 0)
    out = []
    for kind, it in items:
        if kind == "raw":
            out.extend(it)
            continue
        out.append(it["head"])
        out.extend(it["sql"])
        if it["results"] is not None:
            out.append("----")
            out.extend(it["results"])
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print("%s: %d record(s), %d updated from PostgreSQL 15" % (path, len(recs), problems))


if __name__ == "__main__":
    main()
