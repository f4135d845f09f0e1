"""SUBSCRIBE while its query is replaced or dropped: the subscription and the
connection under it are detached safely (issue 19, item 9).

A snapshot that waited for the query's first batch is of that batch (batch
id 0): it once went out with batch id -1, which the server read as "the
query is gone", so the client got 57P01 while its subscriber entry stayed
with the query, pointing at a connection that the client then closed; the
next batch, DROP or CREATE OR REPLACE delivered to freed memory (ASan:
heap-use-after-free in subscribe.c's deliver).

The first batch is held in its middle (SLUICE_FAULT=batch_middle:1:hold)
so that the snapshot must wait for it.  The stress test is the review's
reproduction: three clients subscribing WITH (snapshot) in a loop while
another replaces the query with reset = true, or drops and creates it.
Both rely on the fixture, which fails the test on a sanitizer report.
"""

import random
import threading
import time

import psycopg

from pgwire_raw import Raw, data_row, error_fields, query
from test_continuous_queries import WAIT, connect, wait_for
from test_subscribe import wait_subscribed

CQ = "SELECT k, count(*) AS n FROM ev GROUP BY k"


def read_rows(raw, n):
    """n DataRows from a subscription (fails on anything else)."""
    rows = []
    while len(rows) < n:
        kind, body = raw.recv_msg()
        assert kind == b"D", (kind, body)
        rows.append([v.decode() for v in data_row(body)])
    return rows


def first_batch_held(sluiced, tmp_path, rows):
    """A server whose query q's first batch (over rows) is held in its
    middle until the returned hold file is removed: (server, hold)."""
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced(env={"SLUICE_FAULT": "batch_middle:1:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k TEXT)")
        c.execute(f"CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS {CQ}")
        c.execute("INSERT INTO ev VALUES " + ", ".join(f"('{k}')" for k in rows))
    assert wait_for(lambda: "fault point batch_middle reached, holding"
                    in server.log_text(), True), "the first batch was not held"
    return server, hold


def test_snapshot_after_the_first_batch_then_disconnect(sluiced, tmp_path):
    server, hold = first_batch_held(sluiced, tmp_path, "aba")
    with connect(server) as c:
        raw = Raw(server.port, timeout=WAIT)
        raw.startup()
        raw.send(query("SUBSCRIBE q WITH (snapshot)"))
        assert raw.recv_msg()[0] == b"T"
        wait_subscribed(server)
        hold.unlink()       # the batch commits; the snapshot follows it
        snap = sorted(read_rows(raw, 2), key=lambda r: r[2])
        assert snap == [["0", "insert", "a", "2"], ["0", "insert", "b", "1"]]
        c.execute("INSERT INTO ev VALUES ('b')")
        assert read_rows(raw, 1) == [["1", "update", "b", "2"]]
        # The client goes away: its subscriber entry goes with it.
        raw.close()
        assert wait_for(lambda: 'msg="subscribe ended"' in server.log_text(), True)
        c.execute("INSERT INTO ev VALUES ('c')")
        want = [("a", 2), ("b", 2), ("c", 1)]
        assert wait_for(lambda: sorted(c.execute("SELECT * FROM q").fetchall()), want) == want
        c.execute(f"CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0', reset = true) "
                  f"AS {CQ}")
        c.execute("INSERT INTO ev VALUES ('d')")
        c.execute("DROP CONTINUOUS QUERY q")
        assert c.execute("SELECT 1").fetchone() == (1,)


def test_subscribers_while_the_query_is_replaced_and_dropped(server):
    stop = threading.Event()
    problems = []

    def subscriber():
        while not stop.is_set():
            try:
                with Raw(server.port, timeout=WAIT) as raw:
                    raw.startup()
                    raw.send(query("SUBSCRIBE q WITH (snapshot)"))
                    for _ in range(random.randint(1, 40)):
                        kind, body = raw.recv_msg()
                        if kind == b"E":
                            # The query went away (57P01) or was not there (42704).
                            code = error_fields(body)["C"]
                            if code not in ("57P01", "42704"):
                                problems.append(code)
                            break
                        if kind not in (b"T", b"D"):
                            problems.append(kind)
                            break
                # Leaves mid-stream or after the error: the socket closes.
            except (OSError, TypeError) as e:
                if not stop.is_set():
                    problems.append(repr(e))
                return

    with connect(server) as c:
        c.execute("CREATE STREAM ev (k TEXT)")
        c.execute(f"CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS {CQ}")
        threads = [threading.Thread(target=subscriber, daemon=True) for _ in range(3)]
        for t in threads:
            t.start()
        try:
            for i in range(12):
                c.execute("INSERT INTO ev SELECT (g % 20)::text FROM generate_series(1, 500) g")
                time.sleep(0.1)
                if i % 2 == 0:
                    c.execute("CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0', "
                              f"reset = true) AS {CQ}")
                else:
                    c.execute("DROP CONTINUOUS QUERY q")
                    c.execute(f"CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS {CQ}")
        finally:
            stop.set()
            # Ends the subscriptions that wait for rows (57P01).
            c.execute("CREATE OR REPLACE CONTINUOUS QUERY q WITH (trigger = '0', "
                      f"reset = true) AS {CQ}")
            for t in threads:
                t.join(WAIT)
        assert problems == []
        c.execute("INSERT INTO ev VALUES ('z')")
        assert wait_for(lambda: c.execute("SELECT n FROM q WHERE k = 'z'").fetchall(),
                        [(1,)]) == [(1,)]
        assert server.alive()


def test_psycopg_subscriber_gets_the_first_batch_snapshot(sluiced, tmp_path):
    """The same through psycopg (extended protocol): no DatabaseError."""
    server, hold = first_batch_held(sluiced, tmp_path, "a")

    def later():
        wait_subscribed(server)
        hold.unlink()
    got = []
    with psycopg.connect(server.dsn, autocommit=True) as s:
        t = threading.Thread(target=later, daemon=True)
        t.start()
        for row in s.cursor().stream("SUBSCRIBE q WITH (snapshot)"):
            got.append(tuple(row))
            break
        t.join(WAIT)
    assert got == [(0, "insert", "a", 1)]
