#!/usr/bin/env python3
"""tools/pg_slt.py -- fill a sqllogictest file's expectations from PostgreSQL 15.

    tools/pg_slt.py sql-tests/datetime.slt          rewrite the file in place

For a file marked "# postgres: checked" (tools/pg_check_slt.py, which checks
the files without rewriting them; ./tools/test runs it).  Every record but
those marked "# sluice only" runs, in order, in one session of the same
private PostgreSQL 15 the check uses (pg_check_slt.Cluster, pg_check_slt.run).

A record that already expects what PostgreSQL answers is left as it is.
Otherwise:

  query ...        its expected lines are replaced by PostgreSQL's rows, as
                   the check compares them (sorted for rowsort / valuesort);
                   a query that fails in PostgreSQL is reported and left alone;
  statement ok     checked to succeed (reported when it does not);
  statement count  its count set to the rows PostgreSQL's command affected;
  statement error  / query error: the expected error is set from
                   PostgreSQL's: "(SQLSTATE)" stays a SQLSTATE match, any
                   other text becomes the message as an escaped regex.  A
                   pair of records with the same SQL, one "(SQLSTATE)" and
                   one message, is the way to check both.

Comments, blank lines, conditions and the order of records are kept.  Run
the new expectations against sluice, and review the diff, before committing.
"""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pg_check_slt as pgc  # noqa: E402


def regex_escape(msg):
    return re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", msg)


def fill(rec, got, path):
    """The record's new lines from PostgreSQL's answer GOT (its old ones when
    PostgreSQL's answer cannot be its expectation, which is reported)."""
    lines = [" ".join(rec["head"])] + rec["sql"].split("\n")
    old = lines + (["----"] + rec["expected"] if rec["expected"] is not None else [])
    head = rec["head"]
    where = f"{path}:{rec['line']}"
    if pgc.compare(rec, got) is None:
        return old
    if "error" in head[1:2]:
        if "error" not in got:
            print(f"{where}: PostgreSQL succeeds, the file expects an error")
            return old
        message = got["error"].split("\n")[0].removeprefix("db error: ERROR: ")
        want = pgc.expected_error(head)
        k = head.index("error")
        if re.fullmatch(r"\([0-9A-Z]{5}\)", want):
            lines[0] = " ".join(head[:k + 1] + [f"({got['state']})"])
        else:
            lines[0] = " ".join(head[:k + 1] + [regex_escape(message)])
        return lines
    if "error" in got:
        print(f"{where}: PostgreSQL fails ({got['state']}): {got['error']}")
        return old
    if rec["kind"] == "statement":
        if head[1:2] == ["count"]:
            lines[0] = f"statement count {got['count']}"
            return lines
        return old
    return lines + ["----"] + pgc.result_lines(head, got["rows"], norm=str)


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    path = argv[0]
    mark, records = pgc.parse(path)
    if mark != "checked":
        sys.exit(f"{path}: not marked '# postgres: checked'")
    lines = Path(path).read_text().split("\n")
    out, pos, changed = [], 0, 0
    with pgc.Cluster() as cluster:
        conn = cluster.fresh_database()
        try:
            for rec in records:
                start = rec["line"] - 1
                out.extend(lines[pos:start])
                pos = rec["end"]
                if rec["excluded"]:
                    out.extend(lines[start:pos])
                    continue
                new = fill(rec, pgc.run(conn, rec["sql"]), path)
                changed += new != lines[start:pos]
                out.extend(new)
        finally:
            conn.finish()
    out.extend(lines[pos:])
    Path(path).write_text("\n".join(out))
    print(f"{path}: {len(records)} record(s), {changed} updated from PostgreSQL 15")


if __name__ == "__main__":
    main(sys.argv[1:])
