#!/usr/bin/env python3
"""tools/pg_check_slt.py -- check the PostgreSQL-derived expectations of
sql-tests/*.slt against a real PostgreSQL 15, so that none drifts unnoticed.

    .venv/bin/python tools/pg_check_slt.py                  every sql-tests/*.slt
    .venv/bin/python tools/pg_check_slt.py sql-tests/expr.slt ...
    .venv/bin/python tools/pg_check_slt.py --audit [FILE...] the "sluice only"
                                                          marks PostgreSQL agrees with

Every .slt file says what its expectations are on a comment line of its
own (FILE_MARK; by custom in its header, anywhere in the file counts):

    # postgres: checked -- ...       PostgreSQL 15's: every record is run here
    # postgres: not checked -- ...   sluice's own SQL (streams, continuous
                                     queries, ...), expectations from its docs
    # postgres: golden -- ...        written from sluice's own output, rewritten
                                     only by tools/golden.sh

A file with none of them fails the check.  In a "checked" file, a record
whose comment block (the comment lines right above it, up to a blank line)
has a line starting "# sluice only" is not run: it is SQL that PostgreSQL
does not have or answers otherwise on purpose; the reason is in that line or
the comments beside it.  Every other record runs, in file order, in one
session of a PRIVATE cluster (initdb into a temporary directory, a free port
on 127.0.0.1, its unix socket in that directory; stopped and removed when the
check ends, fails or is interrupted), as user sluice in a fresh database
sluice (UTF8; collation C, character classes C.UTF-8; TimeZone UTC,
DateStyle ISO, MDY, IntervalStyle postgres), as sqllogictest-rs's postgres
engine runs it against sluice: the
simple query protocol, NULL as NULL, '' as (empty), the first statement's
rows.  Its answer is compared with the record as sqllogictest-rs compares
sluice's:

  statement count N      PostgreSQL must succeed on N rows;
  statement ok / query   PostgreSQL must succeed; a query's rows, sorted for
                         rowsort / valuesort, each value's whitespace
                         collapsed, must equal the expected lines;
  ... error (SQLSTATE)   PostgreSQL must fail with that SQLSTATE;
  ... error REGEX        PostgreSQL must fail with an error whose text, as
                         tokio-postgres prints it ("db error: ERROR: message",
                         then "DETAIL: ..." and "HINT: ..." lines), matches;
  ... error              PostgreSQL must fail.

skipif / onlyif conditions are ignored: the records of both engines run.
Each difference prints FILE:LINE, the expectation and PostgreSQL's answer.
--audit runs the "sluice only" records too, and lists those whose
expectation PostgreSQL's answer meets (their mark can go; a record after a
sluice-only one may then see another state, so nothing else is reported).
The last line is "N passed, N failed" (files); exit status 1 when a file
differs, declares nothing, or PostgreSQL cannot be started (PGBIN, default
/usr/lib/postgresql/15/bin: Debian's postgresql-15, which tools/deps.sh
installs).  Run as root, PostgreSQL runs as the user postgres.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
try:
    from psycopg import pq
except ImportError:     # a python without psycopg: the tests' venv has it
    VENV = ROOT / ".venv" / "bin" / "python"
    if VENV.exists() and "PG_CHECK_SLT_VENV" not in os.environ:
        os.environ["PG_CHECK_SLT_VENV"] = "1"
        os.execv(VENV, [str(VENV)] + sys.argv)
    raise
PGBIN = Path(os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin"))
FILE_MARK = re.compile(r"^# postgres: (checked|not checked|golden)\b")
EXCLUDE_MARK = "# sluice only"
SORT_MODES = ("nosort", "rowsort", "valuesort")
SERVER_SETTINGS = {
    "listen_addresses": "127.0.0.1", "fsync": "off", "timezone": "UTC",
    "datestyle": "ISO, MDY", "intervalstyle": "postgres", "lc_messages": "C",
    "max_connections": "10",
}


class CheckError(Exception):
    """PostgreSQL could not be started or reached."""


# ------------------------------------------------------------------ the file

def parse(path):
    """(mark, records) of the .slt file PATH: mark is "checked", "not
    checked", "golden" or None; each record a dict with line (1-based),
    end (the index of the line after it), kind, head (the header's words),
    sql, expected (lines or None) and excluded (the "# sluice only" line or
    None)."""
    lines = Path(path).read_text().split("\n")
    mark, records, comments, i = None, [], [], 0
    while i < len(lines):
        line = lines[i]
        m = FILE_MARK.match(line)
        if m and mark is None:
            mark = m.group(1)
        if not line.strip():
            comments = []
            i += 1
            continue
        words = line.split()
        if line.startswith("#") or words[0] in ("skipif", "onlyif"):
            if line.startswith("#"):
                comments.append(line)
            i += 1
            continue
        if words[0] not in ("statement", "query"):
            raise CheckError(f"{path}:{i + 1}: a record this check cannot read: {line}")
        start = i
        i += 1
        sql = []
        while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
            sql.append(lines[i])
            i += 1
        expected = None
        if i < len(lines) and lines[i].strip() == "----":
            i += 1
            expected = []
            while i < len(lines) and lines[i].strip():
                expected.append(lines[i])
                i += 1
        excluded = next((c for c in comments if c.startswith(EXCLUDE_MARK)), None)
        records.append({"line": start + 1, "end": i, "kind": words[0], "head": words,
                        "sql": "\n".join(sql), "expected": expected,
                        "excluded": excluded})
        comments = []
    return mark, records


# ----------------------------------------------------------- the private cluster

def as_postgres(cmd):
    """CMD run as the user postgres when we are root (PostgreSQL refuses root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--"] + cmd
    return cmd


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A PostgreSQL 15 of our own: initdb into a temporary directory, started
    on a free loopback port with its socket in that directory; __exit__ stops
    it (immediate shutdown) and removes the directory, also after SIGTERM or
    SIGINT, which raise SystemExit / KeyboardInterrupt here."""

    def __init__(self):
        self.dir = None
        self.port = None

    def __enter__(self):
        if not (PGBIN / "postgres").exists():
            raise CheckError(f"PostgreSQL 15 not found in {PGBIN} (tools/deps.sh installs "
                             "Debian's postgresql-15)")
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        self.dir = Path(tempfile.mkdtemp(prefix="sluice-pgcheck."))
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _run(self, cmd):
        out = subprocess.run(as_postgres(cmd), capture_output=True, text=True,
                             timeout=120, check=False)
        if out.returncode != 0:
            raise CheckError(f"{' '.join(cmd[:1])} failed ({out.returncode}):\n"
                             f"{out.stdout}{out.stderr}")

    def _start(self):
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
        data = self.dir / "data"
        self._run([str(PGBIN / "initdb"), "-D", str(data), "-U", "sluice", "-A", "trust",
                   "-E", "UTF8", "--locale=C", "--lc-ctype=C.UTF-8", "--no-sync"])
        opts = " ".join(f"-c {k}='{v}'" for k, v in SERVER_SETTINGS.items())
        # Another process may take the free port before the server binds it.
        for attempt in range(3):
            self.port = free_port()
            try:
                self._run([str(PGBIN / "pg_ctl"), "-D", str(data), "-l",
                           str(self.dir / "postgres.log"), "-w", "-t", "60", "-o",
                           f"{opts} -p {self.port} -k '{self.dir}'", "start"])
                return
            except CheckError:
                if attempt == 2:
                    log = self.dir / "postgres.log"
                    raise CheckError("PostgreSQL did not start:\n" +
                                     (log.read_text() if log.exists() else ""))

    def __exit__(self, *exc):
        # started, or interrupted after pg_ctl had the server running
        if self.dir is not None and (self.dir / "data" / "postmaster.pid").exists():
            subprocess.run(as_postgres([str(PGBIN / "pg_ctl"), "-D", str(self.dir / "data"),
                                        "-m", "immediate", "stop"]),
                           capture_output=True, timeout=60, check=False)
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def connect(self, dbname):
        conn = pq.PGconn.connect(
            f"host=127.0.0.1 port={self.port} user=sluice dbname={dbname} "
            "connect_timeout=30 application_name=pg_check_slt".encode())
        if conn.status != pq.ConnStatus.OK:
            raise CheckError("cannot connect: " + str(conn.get_error_message()))
        return conn

    def fresh_database(self):
        """A new, empty database sluice, no role but sluice, and a session in it."""
        admin = self.connect("postgres")
        try:
            roles = run(admin, "SELECT quote_ident(rolname) FROM pg_roles "
                               "WHERE rolname !~ '^pg_' AND rolname <> 'sluice'")
            stmts = ["DROP DATABASE IF EXISTS sluice WITH (FORCE)",
                     "CREATE DATABASE sluice"]
            stmts += [f"DROP ROLE {r[0]}" for r in roles.get("rows", [])]
            for stmt in stmts:
                res = run(admin, stmt)
                if "error" in res:
                    raise CheckError(f"{stmt}: {res['error']}")
        finally:
            admin.finish()
        return self.connect("sluice")


# ------------------------------------------------------------- one record

def field(res, name):
    v = res.error_field(getattr(pq.DiagnosticField, name))
    return v.decode(errors="replace") if v is not None else None


def run(conn, sql):
    """Runs SQL as sqllogictest-rs's postgres engine does (simple query
    protocol): {"error": text, "state": SQLSTATE} when a statement failed,
    else {"rows": [[value, ...], ...], "count": rows affected} of the first
    result (values as PostgreSQL's text, NULL as NULL, '' as (empty))."""
    try:
        conn.send_query(sql.encode())
    except Exception as e:      # psycopg.OperationalError: the server is gone
        raise CheckError(f"lost the connection: {e}") from e
    out = None
    while True:
        res = conn.get_result()
        if res is None:
            break
        if res.status == pq.ExecStatus.FATAL_ERROR:
            if out is None or "error" not in out:
                text = f"db error: {field(res, 'SEVERITY')}: {field(res, 'MESSAGE_PRIMARY')}"
                for label, name in (("DETAIL", "MESSAGE_DETAIL"), ("HINT", "MESSAGE_HINT")):
                    if field(res, name) is not None:
                        text += f"\n{label}: {field(res, name)}"
                out = {"error": text, "state": field(res, "SQLSTATE")}
            continue
        if out is not None:
            continue
        rows = []
        count = res.command_tuples
        if res.status == pq.ExecStatus.TUPLES_OK:
            for r in range(res.ntuples):
                row = []
                for c in range(res.nfields):
                    v = res.get_value(r, c)
                    if v is None:
                        row.append("NULL")
                    else:
                        row.append(v.decode() if v else "(empty)")
                rows.append(row)
        out = {"rows": rows, "count": count}
    if conn.status != pq.ConnStatus.OK:
        raise CheckError("lost the connection: " + str(conn.get_error_message()))
    return out or {"rows": [], "count": None}


def normalize(s):
    return " ".join(s.split())


def result_lines(head, rows, norm=normalize):
    """ROWS as the lines sqllogictest-rs compares with a query's expected
    ones: sorted for the header's rowsort / valuesort, each value's
    whitespace collapsed (norm), the values of a row joined by a space."""
    sort = next((w for w in head[2:] if w in SORT_MODES), "nosort")
    if sort == "rowsort":
        rows = sorted(rows)
    elif sort == "valuesort":
        rows = sorted([v] for row in rows for v in row)
    return [" ".join(norm(v) for v in row) for row in rows]


def expected_error(head):
    """The words after "error" in a record's header, joined."""
    k = head.index("error")
    return " ".join(head[k + 1:])


def compare(rec, got):
    """None when PostgreSQL's answer GOT is what the record expects, else
    (expected, PostgreSQL's) as text."""
    head = rec["head"]
    if "error" in head[1:2]:
        want = expected_error(head)
        m = re.fullmatch(r"\(([0-9A-Z]{5})\)", want)
        shown = (f"an error with SQLSTATE {m.group(1)}" if m else
                 f"an error matching {want!r}" if want else "an error")
        if "error" not in got:
            return shown, f"no error, rows {got['rows']!r}"
        if m:
            ok = got["state"] == m.group(1)
        else:
            try:
                ok = not want or re.search(want, got["error"]) is not None
            except re.error as e:
                return shown, f"(the expected regex does not compile here: {e})"
        return None if ok else (shown, f"{got['state']}: {got['error']!r}")
    if "error" in got:
        return f"{head[0]} ok", f"{got['state']}: {got['error']!r}"
    if rec["kind"] == "statement":
        if head[1:2] == ["count"]:
            want = int(head[2])
            if got["count"] != want:
                return f"statement count {want}", f"{got['count']} rows"
        return None
    have = result_lines(head, got["rows"])
    want = [normalize(line) for line in rec["expected"] or []]
    return None if have == want else ("\n    ".join(want), "\n    ".join(have))


# ------------------------------------------------------------------- main

def audit_file(cluster, path, records):
    """Runs every record of a checked file, the "sluice only" ones too, and
    prints those of them whose expectation PostgreSQL meets."""
    conn = cluster.fresh_database()
    try:
        for rec in records:
            got = run(conn, rec["sql"])
            if rec["excluded"] and compare(rec, got) is None:
                print(f"{path}:{rec['line']}: marked sluice only, but PostgreSQL 15 "
                      f"gives what it expects: {rec['sql'].splitlines()[0]}")
    finally:
        conn.finish()


def check_file(cluster, path, mark, records):
    """Runs the records of one checked file; prints each difference; returns
    the number of differences."""
    conn = cluster.fresh_database()
    bad = 0
    try:
        for rec in records:
            if rec["excluded"]:
                continue
            got = run(conn, rec["sql"])
            diff = compare(rec, got)
            if diff:
                bad += 1
                print(f"{path}:{rec['line']}: {' '.join(rec['head'])}\n"
                      f"  {rec['sql'].strip()}\n"
                      f"  expected:\n    {diff[0]}\n  PostgreSQL 15:\n    {diff[1]}")
    finally:
        conn.finish()
    return bad


def main(argv):
    audit = "--audit" in argv
    argv = [a for a in argv if a != "--audit"]
    files = argv or sorted(str(p.relative_to(ROOT)) for p in (ROOT / "sql-tests").glob("*.slt"))
    if not files:
        sys.exit(__doc__)
    passed = failed = 0
    parsed = []
    for path in files:
        try:
            mark, records = parse(path)
        except (OSError, CheckError) as e:
            print(e)
            failed += 1
            continue
        if mark is None:
            print(f"{path}:1: no '# postgres: checked | not checked | golden' line in its header")
            failed += 1
        elif mark == "checked":
            parsed.append((path, mark, records))
        else:
            print(f"{path}: postgres: {mark} (not run against PostgreSQL)")
    done = 0
    if parsed:
        try:
            with Cluster() as cluster:
                for path, mark, records in parsed:
                    done += 1
                    if audit:
                        audit_file(cluster, path, records)
                        continue
                    excluded = sum(1 for r in records if r["excluded"])
                    bad = check_file(cluster, path, mark, records)
                    print(f"{path}: {len(records) - excluded} records checked, "
                          f"{excluded} sluice only, {bad} differ from PostgreSQL 15")
                    if bad:
                        failed += 1
                    else:
                        passed += 1
        except CheckError as e:
            # The file it stopped in and those after it were not checked.
            print(f"cannot check against PostgreSQL 15: {e}")
            failed += len(parsed) - done + 1 if done else len(parsed)
    if audit:
        return 0
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
