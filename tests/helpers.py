"""What the integration tests share besides conftest.py's fixtures: small
helpers that each file used to copy.

    wait_for(fn, want, timeout, every)  poll fn() until it returns want
    sqlstate(conn, sql)                 the SQLSTATE sql fails with, or None
    wait_read_through(conn, query)      wait until a continuous query has
                                        committed every row its sources hold

Importable from every folder of tests/ (pytest puts tests/, conftest.py's
folder, on sys.path).
"""

import time

import psycopg


def wait_for(fn, want, timeout=30, every=0.1):
    """Polls fn() every `every` seconds until it returns want or timeout
    seconds have passed; returns the last value (the caller asserts)."""
    deadline = time.monotonic() + timeout
    got = None
    while time.monotonic() < deadline:
        got = fn()
        if got == want:
            return got
        time.sleep(every)
    return got


def sqlstate(conn, sql):
    """The SQLSTATE sql fails with, or None when it succeeds."""
    try:
        conn.execute(sql)
    except psycopg.Error as e:
        return e.sqlstate
    return None


def wait_read_through(conn, query, timeout=30):
    """Waits until the continuous query `query` has committed a batch that
    read every row its sources held when this was called (sys.source_lag:
    committed_offset, the next offset to read, moved only after a batch's
    commit, at or past each partition's latest_offset of now), and asserts
    it.  The positive event that a check that nothing came out waits on,
    instead of a sleep.  For internal streams, whose latest_offset is the
    stream's end as it is now."""
    ends = conn.execute("SELECT source, partition, latest_offset FROM sys.source_lag "
                        "WHERE query = %s", (query,)).fetchall()
    assert ends, f"continuous query {query} is not running (no sys.source_lag rows)"

    def behind():
        return [(src, part, end) for src, part, end in ends
                if conn.execute("SELECT committed_offset FROM sys.source_lag WHERE query = %s "
                                "AND source = %s AND partition = %s",
                                (query, src, part)).fetchone()[0] < end]
    left = wait_for(behind, [], timeout)
    assert left == [], f"{query} did not read through {left} within {timeout} s"
