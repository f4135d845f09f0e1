"""Worker pools (docs/architecture.md, "Threads"): continuous queries and
ingestion run on the engine's workers, which client statements never
occupy; statements run on a bounded pool (statement_workers) and the ones
beyond it wait in a queue, where statement_timeout and CancelRequest reach
them too.

The timing assertions are one-sided and generous: each bound is one the
old code (one shared pool of four threads) could not meet by seconds."""

import queue
import threading
import time

import psycopg
import pytest

from test_http import get, http_port, parse_metrics, value
from test_session_cancel import run_in_thread as in_thread

SLEEP = 8           # seconds each sleeping client holds a worker
SLEEPERS = 6


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def sleeper(server, seconds):
    with connect(server) as c:
        return c.execute("SELECT pg_sleep(%s)" % seconds).fetchall()


def test_slow_statements_do_not_delay_a_continuous_query(server):
    """Six clients in pg_sleep(8) -- more than the statement workers -- and a
    row COPYed into a stream meanwhile: the trigger-'0' query's result has
    it (SUBSCRIBE, which runs on the loop) while the sleeps still run."""
    with connect(server) as c:
        c.execute("CREATE STREAM s (a int)")
        c.execute("CREATE CONTINUOUS QUERY q WITH (trigger = '0') AS "
                  "SELECT a, count(*) AS n FROM s GROUP BY a")
    sub = connect(server)
    rows, ended = queue.Queue(), []

    def subscribe():
        try:
            for row in sub.cursor().stream("SUBSCRIBE q"):
                rows.put(tuple(row))
        except Exception as e:      # noqa: BLE001 -- handed to the test
            ended.append(e)

    threading.Thread(target=subscribe, daemon=True).start()
    sleepers = []
    try:
        deadline = time.monotonic() + 30
        while 'msg="subscribe started"' not in server.log_text():
            assert time.monotonic() < deadline, "SUBSCRIBE did not start"
            time.sleep(0.05)
        started = time.monotonic()
        sleepers = [in_thread(lambda: sleeper(server, SLEEP)) for _ in range(SLEEPERS)]
        time.sleep(1.0)     # every sleeper connected and sent its statement
        with connect(server) as c:
            with c.cursor().copy("COPY s FROM STDIN") as cp:
                cp.write_row((42,))
        copied = time.monotonic()
        try:
            row = rows.get(timeout=started + SLEEP - 1.5 - time.monotonic())
        except queue.Empty:
            row = None
        seen = time.monotonic()
        assert row is not None, (
            "no result %.1f s after the COPY: the batch waited for the sleeping "
            "statements (%r)" % (seen - copied, ended))
        assert row[2:] == (42, 1), row
        assert all(t.is_alive() for t, _ in sleepers), "the sleeps ended first"
    finally:
        for t, _ in sleepers:
            t.join(SLEEP + 30)
        sub.cancel()
        sub.close()
    for _, out in sleepers:
        assert out.get("value") == [("",)], out


def pools(server):
    """{(family, pool): value} of the sluice_pool_* gauges in /metrics."""
    status, _, text = get(http_port(server), "/metrics")
    assert status == 200
    fams = parse_metrics(text)
    return {(f, p): value(fams, "sluice_pool_" + f, pool=p)
            for f in ("threads", "running", "queued") for p in ("engine", "statement")}


def test_statements_beyond_the_workers_wait_their_turn(sluiced):
    """statement_workers = 1: a second statement waits for the first (the
    pool's gauges show one running, one queued), and both complete."""
    server = sluiced("--statement-workers=1", "--http-port=0")
    with connect(server) as c:
        assert c.execute("SELECT setting FROM sys.settings WHERE name = 'statement_workers'"
                         ).fetchone() == ("1",)
    began = time.monotonic()
    a = in_thread(lambda: sleeper(server, 3))
    time.sleep(0.5)
    b = in_thread(lambda: sleeper(server, 3))
    deadline = time.monotonic() + 2.0
    got = pools(server)
    while got[("queued", "statement")] != 1 and time.monotonic() < deadline:
        time.sleep(0.1)
        got = pools(server)
    assert got[("threads", "statement")] == 1 and got[("running", "statement")] == 1, got
    assert got[("queued", "statement")] == 1, got
    assert got[("threads", "engine")] >= 4 and got[("queued", "engine")] == 0, got
    for t, _ in (a, b):
        t.join(60)
    took = time.monotonic() - began
    assert a[1].get("value") == [("",)] and b[1].get("value") == [("",)], (a[1], b[1])
    assert took >= 6.0, "both ran at once on one worker (%.1f s)" % took
    assert pools(server)[("running", "statement")] == 0


@pytest.mark.parametrize("how", ["timeout", "cancel"])
def test_a_queued_statement_ends_at_its_timeout_or_cancel(sluiced, how):
    """statement_workers = 1 and one client in pg_sleep(20): another
    client's statement waits in the queue; its statement_timeout (or a
    CancelRequest) ends it with 57014 at once, not when the worker frees."""
    server = sluiced("--statement-workers=1")
    busy = in_thread(lambda: sleeper(server, 20))
    try:
        time.sleep(0.5)
        with connect(server) as c:
            if how == "timeout":
                c.execute("SET statement_timeout = '1s'")
                began = time.monotonic()
                with pytest.raises(psycopg.errors.QueryCanceled,
                                   match="statement timeout"):
                    c.execute("SELECT 1").fetchall()
            else:
                began = time.monotonic()
                t, out = in_thread(lambda: c.execute("SELECT 1").fetchall())
                time.sleep(1.0)
                while t.is_alive() and time.monotonic() - began < 15:
                    c.cancel()
                    t.join(0.5)
                assert isinstance(out.get("error"), psycopg.errors.QueryCanceled), out
                assert "user request" in str(out["error"])
            took = time.monotonic() - began
            assert took < 10, "the queued statement ended after %.1f s" % took
    finally:
        busy[0].join(60)
    assert busy[1].get("value") == [("",)], busy[1]
