"""The Nexmark query files (tools/nexmark/queries) for scripts that run them:
tests/test_nexmark.py and the benchmarks.

    queries_of(sql)             the continuous queries a file creates, in order:
                                [(name, trigger)]
    wait_done(conn, names, timeout)
                                waits until a run of those queries is over:
                                the 'available_now' / 'once' ones finished,
                                the others (later stages of a pipeline, trigger
                                '0') have read everything their streams hold

A file is one Nexmark query: one continuous query, or a pipeline of them
chained through internal streams (q4, q5, q7), whose last query has the
file's name and holds the result.
"""

import re
import time

QUERY_RE = re.compile(
    r"CREATE\s+CONTINUOUS\s+QUERY\s+(\w+)(?:\s+INTO\s+\w+)?\s*(?:WITH\s*\((.*?)\))?\s*AS\b",
    re.IGNORECASE | re.DOTALL)
TRIGGER_RE = re.compile(r"trigger\s*=\s*'([^']*)'", re.IGNORECASE)


def queries_of(sql):
    """[(name, trigger)] of the CREATE CONTINUOUS QUERY statements in sql
    (comment lines skipped); trigger is None when the query sets none."""
    text = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    out = []
    for m in QUERY_RE.finditer(text):
        t = TRIGGER_RE.search(m.group(2) or "")
        out.append((m.group(1), t.group(1) if t else None))
    return out


def wait_done(conn, queries, timeout, poll=1.0):
    """Waits until every query of queries ([(name, trigger)]) is done: those
    with trigger 'available_now' or 'once' finished, the others running with
    no lag on any input (sys.source_lag), seen twice in a row `poll` seconds
    apart (a stage's last batch may add rows for the next just as we look).
    Raises AssertionError when one failed or on timeout."""
    deadline = time.monotonic() + timeout
    quiet = 0
    status, lag = {}, {}
    while time.monotonic() < deadline:
        rows = conn.execute("SELECT name, status, last_error FROM sys.queries").fetchall()
        failed = [r for r in rows if r[1] == "failed"]
        assert failed == [], failed
        status = {r[0]: r[1] for r in rows}
        lag = {}
        for q, n in conn.execute("SELECT query, lag FROM sys.source_lag").fetchall():
            lag[q] = lag.get(q, 0) + n
        done = all(status.get(q) == "finished" if t in ("available_now", "once")
                   else status.get(q) == "running" and lag.get(q, 1) == 0
                   for q, t in queries)
        quiet = quiet + 1 if done else 0
        if quiet >= 2:
            return
        time.sleep(poll)
    raise AssertionError(f"the queries did not finish in {timeout} s: {status} {lag}")
