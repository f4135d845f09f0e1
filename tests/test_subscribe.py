"""SUBSCRIBE name: each committed batch's changes of a continuous query's
result pushed to the client (batch id, kind, columns) from the moment of
subscribing, until the client cancels (57014) or disconnects; over the
extended protocol (psycopg's cursor.stream) and the simple one (raw
socket); other clients are served meanwhile; a subscriber that stops
reading fails with 54000 once max_output_buffer bytes wait for it.
"""

import queue
import socket
import threading
import time

import psycopg
import pytest

from pgwire_raw import Raw, data_row, error_fields, query
from helpers import wait_read_through
from test_continuous_queries import WAIT, connect, wait_for


def start_stream(dsn, sql, copy=False):
    """Runs cursor.stream(sql) -- or, with copy, cursor.copy(sql), its rows
    as tuples of text -- in a thread: (connection, queue of rows, the
    exception it ended with in a one-item list)."""
    conn = psycopg.connect(dsn, autocommit=True)
    rows, ended = queue.Queue(), []

    def run():
        try:
            if copy:
                with conn.cursor().copy(sql) as cp:
                    for row in cp.rows():
                        rows.put(tuple(row))
            else:
                for row in conn.cursor().stream(sql):
                    rows.put(tuple(row))
        except Exception as e:     # noqa: BLE001 -- handed to the test
            ended.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return conn, rows, ended, t


def take(rows, n, timeout=WAIT):
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        try:
            out.append(rows.get(timeout=0.1))
        except queue.Empty:
            pass
    return out


def wait_subscribed(server, n=1):
    """Waits until the server logged n started subscriptions."""
    assert wait_for(lambda: server.log_text().count('msg="subscribe started"') >= n,
                    True), "no subscription started"


def test_subscribe_streams_changes_then_cancel(server):
    with connect(server) as c:
        c.execute("CREATE STREAM clicks (user_id BIGINT, url TEXT)")
        c.execute("CREATE CONTINUOUS QUERY per_user WITH (trigger = '0') AS "
                  "SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id")
        c.execute("INSERT INTO clicks VALUES (1, 'a')")     # before subscribing
        assert wait_for(lambda: c.execute("SELECT * FROM per_user").fetchall(),
                        [(1, 1)]) == [(1, 1)]
        sub, rows, ended, t = start_stream(server.dsn, "SUBSCRIBE per_user")
        wait_subscribed(server)
        c.execute("INSERT INTO clicks VALUES (1, 'b'), (2, 'c')")
        first = sorted(take(rows, 2), key=lambda r: r[2])
        assert [r[1:] for r in first] == [("update", 1, 2), ("insert", 2, 1)]
        assert first[0][0] == first[1][0] and first[0][0] >= 1     # one batch id
        # Other clients are served while the subscription runs.
        assert c.execute("SELECT count(*) FROM per_user").fetchone() == (2,)
        c.execute("INSERT INTO clicks VALUES (3, 'd')")
        nxt = take(rows, 1)
        assert [r[1:] for r in nxt] == [("insert", 3, 1)] and nxt[0][0] > first[0][0]
        sub.cancel()
        t.join(WAIT)
        assert not t.is_alive()
        assert len(ended) == 1 and isinstance(ended[0], psycopg.errors.QueryCanceled)
        # The connection is usable again.
        assert sub.execute("SELECT 1").fetchone() == (1,)
        sub.close()
        with pytest.raises(psycopg.errors.UndefinedObject):
            c.execute("SUBSCRIBE nope")


def test_subscribe_simple_protocol_and_disconnect(server):
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k TEXT)")
        c.execute("CREATE CONTINUOUS QUERY upper_ev WITH (trigger = '0') AS "
                  "SELECT upper(k) AS k FROM ev")
        raw = Raw(server.port)
        raw.startup()
        raw.send(query("SUBSCRIBE upper_ev"))
        kind, body = raw.recv_msg()
        assert kind == b"T"
        c.execute("INSERT INTO ev VALUES ('a'), ('b')")
        got = []
        for _ in range(2):
            kind, body = raw.recv_msg()
            assert kind == b"D"
            got.append(data_row(body))
        assert sorted(r[1:] for r in got) == [[b"insert", b"A"], [b"insert", b"B"]]
        # Disconnect: the subscription goes away, the server goes on.
        raw.close()
        assert wait_for(lambda: 'msg="subscribe ended"' in server.log_text(), True)
        c.execute("INSERT INTO ev VALUES ('c')")
        assert wait_for(lambda: len(c.execute("SELECT * FROM upper_ev").fetchall()), 3) == 3
        # Dropping the query ends its subscriptions with an error.
        raw = Raw(server.port)
        raw.startup()
        raw.send(query("SUBSCRIBE upper_ev"))
        assert raw.recv_msg()[0] == b"T"
        c.execute("DROP CONTINUOUS QUERY upper_ev")
        msgs = raw.until_ready()
        assert [m[0] for m in msgs] == [b"E", b"Z"]
        assert error_fields(msgs[0][1])["C"] == "57P01"
        raw.close()


def slow_subscriber(server, c, sql):
    """Makes stream big and query copy_big (its rows as they come) over c,
    then a raw client with a small receive buffer runs sql (a SUBSCRIBE to
    copy_big) and reads nothing; returns that client."""
    c.execute("CREATE STREAM big (s TEXT)")
    c.execute("CREATE CONTINUOUS QUERY copy_big WITH (trigger = '0') AS SELECT s FROM big")
    raw = Raw(server.port)
    raw.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    raw.startup()
    raw.send(query(sql))
    wait_subscribed(server)
    return raw


def read_to_ready(raw):
    """Reads raw's messages up to ReadyForQuery: (their types, the fields of
    the ErrorResponse among them or None)."""
    raw.sock.settimeout(WAIT)
    kinds, fields = [], None
    while True:
        msg = raw.recv_msg()
        assert msg is not None
        kinds.append(msg[0])
        if msg[0] == b"E":
            fields = error_fields(msg[1])
        if msg[0] == b"Z":
            return kinds, fields


def test_slow_subscriber_fails_instead_of_buffering(sluiced):
    server = sluiced("--max-output-buffer", str(1 << 20))
    with connect(server) as c:
        raw = slow_subscriber(server, c, "SUBSCRIBE copy_big")
        # 40 batches of 1 MiB that the subscriber does not read.
        row = "x" * 1000
        for _ in range(40):
            c.execute("INSERT INTO big SELECT %s FROM (VALUES " +
                      ", ".join(["(1)"] * 1000) + ") v", (row,))
            if "fell behind" in server.log_text() or 'sqlstate=54000' in server.log_text():
                break
        assert wait_for(lambda: "sqlstate=54000" in server.log_text(), True)
        # Reading now: the rows that were queued, then the error, then ready.
        kinds, fields = read_to_ready(raw)
        assert fields["C"] == "54000" and "fell behind" in fields["M"]
        assert b"E" in kinds and kinds.count(b"D") >= 1000
        # Other clients were served throughout; the subscriber can go on.
        raw.send(query("SELECT 1"))
        assert [m[0] for m in raw.until_ready()] == [b"T", b"D", b"C", b"Z"]
        raw.close()


def test_subscribe_kinds_with_having(server):
    """A group that HAVING drops leaves the result table: a delete with the
    row it had; back in, an insert; changed while in, an update."""
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k TEXT, v BIGINT)")
        c.execute("CREATE CONTINUOUS QUERY pos WITH (trigger = '0') AS "
                  "SELECT k, sum(v) AS s FROM ev GROUP BY k HAVING sum(v) > 0")
        sub, rows, ended, t = start_stream(server.dsn, "SUBSCRIBE pos")
        wait_subscribed(server)
        steps = [(5, ("insert", "a", 5)), (2, ("update", "a", 7)), (-10, ("delete", "a", 7)),
                 (-1, None), (9, ("insert", "a", 5))]
        for v, change in steps:
            c.execute("INSERT INTO ev VALUES ('a', %s)", (v,))
            if change is None:
                # Its own batch, committed: the group stays out (sum -4), so
                # no change is pushed.  The changes come in batch order, so
                # the next step's change arriving first (below) shows that
                # none came for this batch.
                wait_read_through(c, "pos")
                assert c.execute("SELECT * FROM pos").fetchall() == []
                continue
            got = take(rows, 1)
            assert [r[1:] for r in got] == [change]
        assert rows.empty()
        sub.cancel()
        t.join(WAIT)
        sub.close()


def test_subscribe_graph_changes(server):
    """A query on the operator graph (an aggregate over an aggregate): each
    batch's retractions are deletes with the row they take back, its
    insertions inserts (docs/engine.md, "Queries on the operator graph")."""
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k TEXT)")
        c.execute("CREATE CONTINUOUS QUERY hist WITH (trigger = '0') AS SELECT n, count(*) AS"
                  " keys FROM (SELECT k, count(*) AS n FROM ev GROUP BY k) x GROUP BY n")
        sub, rows, ended, t = start_stream(server.dsn, "SUBSCRIBE hist")
        wait_subscribed(server)
        # (key inserted, the changes of its batch): how many keys have each count
        steps = [("a", [("insert", 1, 1)]),
                 ("b", [("delete", 1, 1), ("insert", 1, 2)]),
                 ("a", [("delete", 1, 2), ("insert", 1, 1), ("insert", 2, 1)])]
        for k, changes in steps:
            c.execute("INSERT INTO ev VALUES (%s)", (k,))
            got = take(rows, len(changes))
            assert len({r[0] for r in got}) == 1, got      # one batch
            assert sorted(r[1:] for r in got) == sorted(changes)
        time.sleep(0.5)
        assert rows.empty()
        assert sorted(c.execute("SELECT n, keys FROM hist").fetchall()) == [(1, 1), (2, 1)]
        sub.cancel()
        t.join(WAIT)
        sub.close()


def test_subscribe_with_snapshot(server):
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k TEXT)")
        c.execute("CREATE CONTINUOUS QUERY per_k WITH (trigger = '0') AS "
                  "SELECT k, count(*) AS n FROM ev GROUP BY k")
        c.execute("INSERT INTO ev VALUES ('a'), ('b'), ('a')")
        want = [("a", 2), ("b", 1)]
        assert wait_for(lambda: sorted(c.execute("SELECT * FROM per_k").fetchall()), want) == want
        sub, rows, ended, t = start_stream(server.dsn, "SUBSCRIBE per_k WITH (snapshot)")
        snap = sorted(take(rows, 2), key=lambda r: r[2])
        assert [r[1:] for r in snap] == [("insert", "a", 2), ("insert", "b", 1)]
        c.execute("INSERT INTO ev VALUES ('b')")
        nxt = take(rows, 1)
        assert [r[1:] for r in nxt] == [("update", "b", 2)] and nxt[0][0] > snap[0][0]
        sub.cancel()
        t.join(WAIT)
        sub.close()
        with pytest.raises(psycopg.errors.SyntaxError):
            c.execute("SUBSCRIBE per_k WITH (snapshots)")
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            c.execute("SUBSCRIBE per_k WITH (snapshot = 3)")
