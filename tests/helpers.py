"""What the integration tests share besides conftest.py's fixtures: small
helpers that each file used to copy.

    wait_for(fn, want, timeout, every)  poll fn() until it returns want
    sqlstate(conn, sql)                 the SQLSTATE sql fails with, or None

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
