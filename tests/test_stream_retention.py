"""Retention of internal streams: whole old chunks deleted by a periodic task.

WITH (retention = '1 second') deletes chunks appended more than a second ago,
WITH (retention_bytes = N) deletes the oldest chunks while the stream holds more
than N bytes; the newest chunk always stays (offsets go on from it).  A
continuous query that had not read deleted rows yet never sees them: it reads
what is still there.  Polls with generous deadlines; never asserts timing.
"""

import time

import psycopg
import pytest

DEADLINE = 60


def connect(server):
    return psycopg.connect(server.dsn, connect_timeout=10, autocommit=True)


def one(server, sql):
    with connect(server) as conn:
        return conn.execute(sql).fetchone()


def wait_for(server, sql, want):
    end = time.monotonic() + DEADLINE
    got = None
    while time.monotonic() < end:
        got = one(server, sql)
        if got == want:
            return
        time.sleep(0.1)
    pytest.fail(f"{sql!r}: waited {DEADLINE} s for {want!r}, last got {got!r}")


def test_retention_by_size(sluiced):
    server = sluiced()
    with connect(server) as conn:
        conn.execute("CREATE STREAM s (n INT, pad TEXT) WITH (retention_bytes = 3000)")
        for i in range(10):    # ten appends of 10 rows, about 1,000 bytes each
            conn.execute("INSERT INTO s VALUES " + ", ".join(
                f"({n}, '{'x' * 90}')" for n in range(i * 10, i * 10 + 10)))
    # at most 3,000 bytes stay: the last two chunks (never fewer than one)
    wait_for(server, "SELECT count(*), min(n), max(n) FROM s", (20, 80, 99))
    assert one(server, "SELECT sluice_stream_stat('s', 'retained_rows'), "
                       "sluice_stream_stat('s', 'retained_chunks')") == (80, 8)
    # appends go on at the next offset after a restart
    server.restart()
    with connect(server) as conn:
        conn.execute("INSERT INTO s VALUES (100, 'y')")
    wait_for(server, "SELECT count(*), max(n) FROM s", (21, 100))


def test_retention_by_time_and_a_late_continuous_query(sluiced):
    server = sluiced()
    with connect(server) as conn:
        conn.execute("CREATE STREAM t (n INT) WITH (retention = '1 second')")
        conn.execute("INSERT INTO t VALUES " + ", ".join(f"({n})" for n in range(1, 51)))
        conn.execute("INSERT INTO t VALUES " + ", ".join(f"({n})" for n in range(51, 61)))
    # the older chunk goes after a second; the newest stays however old
    wait_for(server, "SELECT count(*), min(n) FROM t", (10, 51))
    # a continuous query created now reads from offset 0 but finds only what
    # retention kept
    with connect(server) as conn:
        conn.execute("CREATE CONTINUOUS QUERY c WITH (trigger = '100 ms') AS "
                     "SELECT count(*) AS rows, sum(n) AS total FROM t")
        conn.execute("INSERT INTO t VALUES (61)")
    wait_for(server, "SELECT rows, total FROM c", (11, sum(range(51, 62))))
    with connect(server) as conn:
        conn.execute("DROP STREAM t CASCADE")


def test_bad_retention_options(sluiced):
    server = sluiced()
    with connect(server) as conn:
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            conn.execute("CREATE STREAM a (n INT) WITH (retention = 'soon')")
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            conn.execute("CREATE STREAM a (n INT) WITH (retention_bytes = -5)")
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("SELECT * FROM a")
