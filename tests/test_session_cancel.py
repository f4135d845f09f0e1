"""Statements on the thread pool: CancelRequest cancels a running statement
(57014 "canceling statement due to user request") from psql (SIGINT),
psycopg 3, psycopg2, asyncpg and a raw socket; a wrong secret does nothing;
statement_timeout and idle_session_timeout; the loop stays responsive while
a statement runs; messages sent meanwhile wait their turn.

A cancel can reach the server before the statement it aims at has started,
and then (as in PostgreSQL) it does nothing; so the tests send it again
until the statement ends, within a generous deadline.  No test asserts a
duration."""

import asyncio
import signal
import struct
import subprocess
import threading
import time

import asyncpg
import psycopg
import psycopg2
import psycopg2.errors
import pytest

from pgwire_raw import CANCEL_REQUEST, Raw, data_row, error_fields, message, query

LONG = "SELECT pg_sleep(60)"
DEADLINE = 30


def cancel_packet(pid, key):
    return struct.pack("!IIii", 16, CANCEL_REQUEST, pid, key)


def run_in_thread(fn):
    """Runs fn in a thread; returns (thread, result dict: 'value' or 'error')."""
    out = {}

    def body():
        try:
            out["value"] = fn()
        except Exception as e:      # noqa: BLE001 -- handed to the test
            out["error"] = e

    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t, out


def keep_cancelling(thread, cancel):
    deadline = time.monotonic() + DEADLINE
    while thread.is_alive():
        assert time.monotonic() < deadline, "the statement was not cancelled"
        cancel()
        thread.join(0.5)


def test_psycopg3_cancel(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        t, out = run_in_thread(lambda: c.execute(LONG).fetchall())
        keep_cancelling(t, c.cancel)
        assert isinstance(out.get("error"), psycopg.errors.QueryCanceled), out
        assert str(out["error"]).startswith("canceling statement due to user request")
        # the session goes on
        assert c.execute("SELECT 1").fetchone() == (1,)


def test_psycopg3_cancel_in_the_extended_protocol(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        t, out = run_in_thread(
            lambda: c.execute("SELECT pg_sleep(%s)", (60,), prepare=True).fetchall())
        keep_cancelling(t, c.cancel)
        assert isinstance(out.get("error"), psycopg.errors.QueryCanceled), out
        assert c.execute("SELECT %s::int", (7,)).fetchone() == (7,)


def test_psycopg2_cancel(server):
    conn = psycopg2.connect(server.dsn)
    try:
        conn.autocommit = True
        cur = conn.cursor()
        t, out = run_in_thread(lambda: cur.execute(LONG))
        keep_cancelling(t, conn.cancel)
        assert isinstance(out.get("error"), psycopg2.errors.QueryCanceled), out
        cur.execute("SELECT 2")
        assert cur.fetchone() == (2,)
    finally:
        conn.close()


def test_asyncpg_timeout_cancels_the_statement(server):
    async def main():
        conn = await asyncpg.connect(host=server.host, port=server.port, user="sluice",
                                     database="sluice")
        try:
            # asyncpg's timeout sends a CancelRequest and waits for the answer
            with pytest.raises(asyncio.TimeoutError):
                await conn.fetch(LONG, timeout=1)
            assert await conn.fetchval("SELECT 3") == 3
            # and an explicit cancel of a task
            task = asyncio.ensure_future(conn.fetch(LONG))
            await asyncio.sleep(0.5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await conn.fetchval("SELECT 4") == 4
        finally:
            await conn.close()
    asyncio.run(asyncio.wait_for(main(), 60))


def test_psql_sigint_cancels(server):
    proc = subprocess.Popen(
        ["psql", "-X", "-h", server.host, "-p", str(server.port), "-U", "sluice",
         "-c", LONG],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + DEADLINE
        # psql's first SIGINT only once it has connected: before psql has set
        # up its handler, SIGINT ends psql itself.
        with psycopg.connect(server.dsn, autocommit=True) as c:
            while c.execute("SELECT count(*) FROM sys.connections WHERE "
                            "application_name = 'psql'").fetchone()[0] == 0:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "psql never connected"
                time.sleep(0.05)
        while proc.poll() is None:
            assert time.monotonic() < deadline, "psql's statement was not cancelled"
            proc.send_signal(signal.SIGINT)
            time.sleep(0.5)
        out, err = proc.stdout.read(), proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert "canceling statement due to user request" in err, (out, err)


def test_cancel_with_a_wrong_secret_does_not_cancel(server):
    with Raw(server.port, timeout=30) as cl:
        msgs = cl.startup()
        (body,) = [b for k, b in msgs if k == b"K"]
        pid, key = struct.unpack("!ii", body)
        cl.send(query("SELECT pg_sleep(1.5), 'done'"))
        time.sleep(0.3)
        for bad in (key ^ 1, key + 7):
            with Raw(server.port) as other:
                other.send(cancel_packet(pid, bad))
                assert other.closed_by_server()
        out = cl.until_ready()
        assert [data_row(b) for k, b in out if k == b"D"] == [[b"", b"done"]]
        assert not [m for m in out if m[0] == b"E"]
        # the right secret cancels
        cl.send(query(LONG))
        deadline = time.monotonic() + DEADLINE
        cl.sock.settimeout(0.5)
        got = []
        while not any(k == b"Z" for k, _ in got):
            assert time.monotonic() < deadline
            with Raw(server.port) as other:
                other.send(cancel_packet(pid, key))
                other.closed_by_server()
            try:
                while True:
                    m = cl.recv_msg()
                    got.append(m)
                    if m[0] == b"Z":
                        break
            except (TimeoutError, OSError):
                pass
        errs = [error_fields(b) for k, b in got if k == b"E"]
        assert errs and errs[0]["C"] == "57014"
        assert errs[0]["M"] == "canceling statement due to user request"


def test_statement_timeout(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("SET statement_timeout = '2s'")
        with pytest.raises(psycopg.errors.QueryCanceled) as e:
            c.execute(LONG)
        assert str(e.value).startswith("canceling statement due to statement timeout")
        # statements within the limit run as before
        assert c.execute("SELECT pg_sleep(0.01), 5").fetchone() == ("", 5)
        c.execute("SET statement_timeout = 0")
        assert c.execute("SELECT 6").fetchone() == (6,)


def test_idle_session_timeout_closes_with_57P05(server):
    with Raw(server.port, timeout=30) as cl:
        cl.startup()
        cl.send(query("SET idle_session_timeout = '300ms'"))
        cl.until_ready()
        m = cl.recv_msg()       # nothing sent: the server ends the session
        assert m[0] == b"E"
        f = error_fields(m[1])
        assert (f["S"], f["C"], f["M"]) == (
            "FATAL", "57P05", "terminating connection due to idle-session timeout")
        assert cl.recv_msg() is None


def test_idle_in_transaction_timeout_closes_with_25P03(server):
    with Raw(server.port, timeout=30) as cl:
        cl.startup()
        cl.send(query("SET idle_in_transaction_session_timeout = '300ms'; BEGIN"))
        cl.until_ready()
        m = cl.recv_msg()
        f = error_fields(m[1])
        assert (f["S"], f["C"]) == ("FATAL", "25P03")


def test_a_long_statement_does_not_block_other_sessions(server):
    """While one session sleeps on a worker, another's queries are answered:
    the loop is not held (before, it would wait for the sleep)."""
    with psycopg.connect(server.dsn, autocommit=True) as slow, \
            psycopg.connect(server.dsn, autocommit=True) as fast:
        t, out = run_in_thread(lambda: slow.execute("SELECT pg_sleep(20)").fetchall())
        time.sleep(0.3)
        for i in range(20):
            assert fast.execute("SELECT %s::int", (i,)).fetchone() == (i,)
        assert t.is_alive(), "the other session's queries waited for the sleep"
        keep_cancelling(t, slow.cancel)
        assert isinstance(out.get("error"), psycopg.errors.QueryCanceled)


def test_messages_sent_while_a_statement_runs_wait_their_turn(server):
    with Raw(server.port, timeout=30) as cl:
        cl.startup()
        cl.send(query("SELECT pg_sleep(0.3), 1"), query("SELECT 2"), query("SELECT 3; SELECT 4"))
        rows = []
        for _ in range(3):
            rows += [data_row(b)[-1] for k, b in cl.until_ready() if k == b"D"]
        assert rows == [b"1", b"2", b"3", b"4"]


def test_cancel_during_copy_in_writes_nothing(server):
    with Raw(server.port, timeout=30) as cl:
        msgs = cl.startup()
        (body,) = [b for k, b in msgs if k == b"K"]
        pid, key = struct.unpack("!ii", body)
        cl.send(query("CREATE TABLE t (id INT PRIMARY KEY)"))
        cl.until_ready()
        cl.send(query("COPY t FROM STDIN"))
        assert cl.recv_msg()[0] == b"G"
        cl.send(message(b"d", b"1\n2\n"))
        with Raw(server.port) as other:
            other.send(cancel_packet(pid, key))
            assert other.closed_by_server()
        msgs = cl.until_ready()
        errs = [error_fields(b) for k, b in msgs if k == b"E"]
        assert errs and errs[0]["C"] == "57014"
        # what the client still sends for that COPY is dropped
        cl.send(message(b"d", b"3\n"), message(b"c"))
        cl.send(query("SELECT count(*) FROM t"))
        assert [data_row(b) for k, b in cl.until_ready() if k == b"D"] == [[b"0"]]
