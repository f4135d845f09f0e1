#!/usr/bin/env python3
"""Check a sqllogictest file's expectations against PostgreSQL 15.

    tools/slt_pg_check.py sql-tests/joins.slt          report differences
    tools/slt_pg_check.py --emit sql-tests/joins.slt   print the file with
                                                       PostgreSQL's results

Runs every record of the file, in order, through tools/pg_oracle.sh (a
throwaway PostgreSQL 15) and compares: `statement ok` must succeed,
`statement error RE` must fail with an error whose text -- formatted as
sqllogictest-rs shows sluice's ("db error: ERROR: msg" then DETAIL/HINT
lines) -- matches RE, and `query` records must give the same rows (sorted
first for rowsort / valuesort).  Values are written as sqllogictest-rs
writes them: NULL, (empty) for the empty string, booleans t/f.

Records that PostgreSQL does not have (streams, windows, EXPLAIN's logical
plans, sluice's own messages) are marked with a comment line
"# sluice only" right above them (the comment block before a record) and
are skipped.  Exit status 1 when something differs.
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parse(text):
    """The file's records: dicts with kind, header, sql, expected, lines."""
    lines = text.split("\n")
    records, i, comments = [], 0, []
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            comments = []
            i += 1
            continue
        if line.startswith("#"):
            comments.append(line)
            i += 1
            continue
        start = i
        header = line.split()
        kind = header[0]
        i += 1
        sql = []
        while i < len(lines) and lines[i].strip() and lines[i] != "----":
            sql.append(lines[i])
            i += 1
        expected = None
        if i < len(lines) and lines[i] == "----":
            i += 1
            expected = []
            while i < len(lines) and lines[i].strip():
                expected.append(lines[i])
                i += 1
        records.append({
            "kind": kind, "header": header, "sql": "\n".join(sql),
            "expected": expected, "start": start, "end": i,
            "skip": any("sluice only" in c for c in comments),
        })
        comments = []
    return records


def run_pg(records):
    script = ["\\pset null NULL", "\\pset fieldsep '|'"]
    for n, r in enumerate(records):
        script.append(f"\\echo @@{n}@@")
        if not r["skip"] and r["kind"] in ("statement", "query"):
            sql = r["sql"].rstrip().rstrip(";")
            script.append(sql + ";")
    script.append("\\echo @@end@@")
    out = subprocess.run([str(ROOT / "tools/pg_oracle.sh"), "-"], input="\n".join(script),
                         capture_output=True, text=True).stdout
    results, cur, buf = {}, None, []
    for line in out.split("\n"):
        m = re.fullmatch(r"@@(\d+|end)@@", line)
        if m:
            if cur is not None:
                results[cur] = buf
            cur = None if m.group(1) == "end" else int(m.group(1))
            buf = []
        elif cur is not None and not line.startswith("Null display") \
                and not line.startswith("Field separator"):
            buf.append(line)
    return results


def pg_error(out):
    """PostgreSQL's error as sqllogictest-rs prints sluice's, or None."""
    text, state = None, None
    for line in out:
        m = re.match(r"psql:.*?: ERROR:  (\w{5}): (.*)", line)
        if m:
            state, text = m.group(1), "db error: ERROR: " + m.group(2)
        elif text and re.match(r"(DETAIL|HINT):  ", line):
            text += "\n" + line.replace(":  ", ": ", 1)
    return state, text


def value(v):
    if v == "":
        return "(empty)"
    return v


def pg_rows(out):
    rows = []
    for line in out:
        if re.match(r"(psql:|DETAIL:|HINT:|LOCATION:|LINE \d+:|\s*\^$)", line) or not line:
            continue
        rows.append(" ".join(value(v) for v in line.split("|")))
    return rows


def main():
    args = sys.argv[1:]
    emit = "--emit" in args
    files = [a for a in args if a != "--emit"]
    if len(files) != 1:
        sys.exit(__doc__)
    text = Path(files[0]).read_text()
    records = parse(text)
    results = run_pg(records)
    lines = text.split("\n")
    bad = 0
    report = sys.stderr if emit else sys.stdout
    replace = {}
    for n, r in enumerate(records):
        if r["skip"] or r["kind"] not in ("statement", "query"):
            continue
        out = results.get(n, [])
        state, err = pg_error(out)
        where = f"{files[0]}:{r['start'] + 1}"
        if r["kind"] == "statement":
            want = r["header"][1]
            if want == "ok" and err:
                print(f"{where}: PostgreSQL fails ({state}): {err}", file=report)
                bad += 1
            elif want == "error":
                regex = " ".join(r["header"][2:])
                if not err:
                    print(f"{where}: PostgreSQL succeeds", file=report)
                    bad += 1
                elif regex and not re.search(regex, err):
                    print(f"{where}: PostgreSQL's error ({state}) does not match:\n  {err}", file=report)
                    bad += 1
            continue
        if err:
            print(f"{where}: PostgreSQL fails ({state}): {err}", file=report)
            bad += 1
            continue
        rows = pg_rows(out)
        # psql prints the command tag after DML ... RETURNING rows
        if rows and re.match(r"\s*(INSERT|UPDATE|DELETE)\b", r["sql"], re.I) \
                and re.fullmatch(r"(INSERT 0|UPDATE|DELETE) \d+", rows[-1]):
            rows.pop()
        header = r["header"]
        sort = "rowsort" in header or "valuesort" in header
        got = sorted(rows) if sort else rows
        expected = r["expected"] or []
        want = sorted(expected) if sort else expected
        if got != want:
            bad += 1
            print(f"{where}: rows differ\n  PostgreSQL: {got}\n  file:       {want}", file=report)
        replace[r["start"]] = (r, got)
    if emit:
        out, i = [], 0
        by_start = {r["start"]: r for r in records}
        while i < len(lines):
            if i in replace:
                r, got = replace[i]
                out.extend(lines[r["start"]:r["start"] + 1 + len(r["sql"].split("\n"))])
                out.append("----")
                out.extend(got)
                i = r["end"]
                continue
            out.append(lines[i])
            i += 1
        sys.stdout.write("\n".join(out))
        return
    print(f"{len(records)} records, {bad} differ from PostgreSQL")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
