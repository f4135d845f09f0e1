"""SIGTERM with statements in flight (issue 19, item 23).

The server stops accepting, lets a statement that is running finish and
sends its answer (CommandComplete, and ReadyForQuery for a Sync that
waited), then ends the session with FATAL 57P01 admin_shutdown; idle
sessions get that FATAL at once.  A statement still running after
shutdown_timeout seconds is cancelled: its client gets one FATAL 57P01
(no ERROR first, no ReadyForQuery after) and nothing of it is written.  Either way what the client was told agrees with the
rows found after a restart, so a client never retries a write that was
done.  The rest of a multi-statement query string is not run.

The slow INSERT is an INSERT ... SELECT over pg_sleep, so that it is
surely in flight when the signal comes.
"""

import signal
import time

import psycopg
import pytest

from pgwire_raw import Raw, bind, error_fields, execute, parse, query, sync
from test_continuous_queries import connect
from helpers import wait_for
from test_session_cancel import run_in_thread

SLOW_INSERT = ("INSERT INTO s SELECT g, %s FROM generate_series(1, 100) g "
               "CROSS JOIN (SELECT pg_sleep({secs})) z")


def slow_insert_then_sigterm(server, secs):
    """Creates stream s, starts SLOW_INSERT in a thread over the extended
    protocol, and sends SIGTERM a second later: (connection, thread,
    result dict: 'value' or 'error')."""
    with connect(server) as c:
        c.execute("CREATE STREAM s (a bigint, b text)")
    slow = connect(server)
    t, out = run_in_thread(
        lambda: slow.execute(SLOW_INSERT.format(secs=secs), ("x",)).statusmessage)
    time.sleep(1)
    server.proc.send_signal(signal.SIGTERM)
    return slow, t, out


def exited_cleanly(server):
    code = server.proc.wait(30)
    server.proc = None
    return code == 0


def count_after_restart(server):
    server.start()
    with connect(server) as c:
        return c.execute("SELECT count(*) FROM s").fetchone()[0]


def test_statement_in_flight_finishes_and_is_answered(sluiced):
    server = sluiced("--shutdown-timeout", "60")
    idle = Raw(server.port, timeout=30)
    idle.startup()
    slow, t, out = slow_insert_then_sigterm(server, 3)
    # The idle session ends at once, with the reason.
    kind, body = idle.recv_msg()
    assert kind == b"E"
    fields = error_fields(body)
    assert (fields["S"], fields["C"]) == ("FATAL", "57P01")
    assert fields["M"] == "terminating connection due to administrator command"
    assert idle.recv_msg() is None
    idle.close()
    t.join(30)
    assert out == {"value": "INSERT 0 100"}
    # Then that session ends too; nothing new is accepted meanwhile.
    with pytest.raises(psycopg.OperationalError):
        slow.execute("SELECT 1")
    slow.close()
    assert exited_cleanly(server)
    assert count_after_restart(server) == 100


def test_statement_past_the_timeout_is_cancelled_and_not_written(sluiced):
    server = sluiced("--shutdown-timeout", "1")
    started = time.monotonic()
    slow, t, out = slow_insert_then_sigterm(server, 60)
    t.join(30)
    assert isinstance(out.get("error"), psycopg.errors.AdminShutdown), out
    # as in PostgreSQL the cancelled statement's answer is the session's end
    assert out["error"].diag.severity_nonlocalized == "FATAL", out
    assert slow.closed or slow.broken, "the session outlived its FATAL"
    assert time.monotonic() - started < 20
    slow.close()
    assert exited_cleanly(server)
    assert count_after_restart(server) == 0


@pytest.mark.parametrize("protocol", ["simple", "extended"])
def test_cancelled_statement_gets_one_fatal(sluiced, protocol):
    """A statement cancelled by shutdown is answered with one ErrorResponse,
    FATAL 57P01 admin_shutdown (PostgreSQL's answer), then the connection
    closes: no ERROR before it, no ReadyForQuery after it."""
    server = sluiced("--shutdown-timeout", "1")
    with connect(server) as c:
        c.execute("CREATE STREAM s (a bigint, b text)")
    raw = Raw(server.port, timeout=30)
    raw.startup()
    sql = SLOW_INSERT.format(secs=60).replace("%s", "'x'")
    if protocol == "simple":
        raw.send(query(sql))
    else:
        raw.send(parse(sql) + bind() + execute() + sync())
    time.sleep(1)
    server.proc.send_signal(signal.SIGTERM)
    msgs = []
    while (m := raw.recv_msg()) is not None:
        msgs.append(m)
    raw.close()
    kinds = [k for k, _ in msgs if k not in (b"1", b"2")]
    assert kinds == [b"E"], msgs
    fields = error_fields(msgs[-1][1])
    assert (fields["S"], fields["V"], fields["C"]) == ("FATAL", "FATAL", "57P01"), fields
    assert exited_cleanly(server)


def test_rest_of_a_query_string_is_not_run(sluiced):
    server = sluiced("--shutdown-timeout", "60")
    with connect(server) as c:
        c.execute("CREATE STREAM s (a bigint, b text)")
    raw = Raw(server.port, timeout=30)
    raw.startup()
    raw.send(query(SLOW_INSERT.format(secs=2).replace("%s", "'x'") +
                   "; INSERT INTO s VALUES (-1, 'after')"))
    time.sleep(1)
    server.proc.send_signal(signal.SIGTERM)
    msgs = raw.until_ready()
    assert msgs[0] == (b"C", b"INSERT 0 100\x00")
    assert [m[0] for m in msgs[1:]] == [b"E"]
    assert error_fields(msgs[1][1])["C"] == "57P01"
    raw.close()
    assert exited_cleanly(server)
    server.start()
    with connect(server) as c:
        assert c.execute("SELECT count(*), min(a) FROM s").fetchone() == (100, 1)


def test_statement_that_cannot_be_interrupted_does_not_keep_the_process_up(sluiced, tmp_path):
    # The INSERT's worker is held at a fault point, which no cancel reaches:
    # the statement outlives the cancel and the close of its connection.
    hold = tmp_path / "hold"
    hold.write_text("")
    server = sluiced("--shutdown-timeout", "1",
                     env={"SLUICE_FAULT": "stream_append_before_write:hold",
                          "SLUICE_FAULT_HOLD": str(hold)})
    try:
        with connect(server) as c:
            c.execute("CREATE STREAM s (a bigint, b text)")
        raw = Raw(server.port, timeout=30)
        raw.startup()
        raw.send(query("INSERT INTO s VALUES (1, 'x')"))
        deadline = time.monotonic() + 30
        while "fault point stream_append_before_write reached, holding" not in server.log_text():
            assert time.monotonic() < deadline, "the INSERT never reached its write"
            time.sleep(0.05)
        started = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        # 1 s to the cancel, 2 s to the close, 5 s to the exit.
        code = server.proc.wait(20)
        server.proc = None
        assert code == 1
        assert 7 < time.monotonic() - started < 15
        assert "shutdown: deadline passed, exiting with statements still running" \
            in server.log_text()
        raw.close()
    finally:
        hold.unlink()


@pytest.mark.parametrize("mode", [("--commit-mode", "sync"),
                                  ("--commit-mode", "group", "--group-commit-window", "200000")],
                         ids=["sync", "group"])
def test_inserts_in_flight_at_sigterm_are_answered_and_agree(sluiced, mode):
    """Clients inserting into a stream back to back (Parse, Bind, Execute,
    Sync, as drivers do) when SIGTERM comes -- in group commit mode, many
    of them waiting for a shared fsync: each INSERT's client gets its
    CommandComplete or FATAL 57P01 (then the close), never a close without
    a word, and the rows found after a restart are exactly those
    acknowledged (issue 23, item 6)."""
    server = sluiced(*mode)
    with connect(server) as c:
        c.execute("CREATE STREAM s (a bigint, b text)")
    acked, endings = [], []

    def client(k):
        try:
            insert_until_the_end(k)
        except OSError as e:    # a reset that lost the FATAL
            endings.append(repr(e))

    def insert_until_the_end(k):
        raw = Raw(server.port, timeout=60)
        raw.startup()
        n = 0
        while True:
            raw.send(parse(f"INSERT INTO s VALUES ({k * 1000000 + n}, 'x')"), bind(), execute(),
                     sync())
            while True:
                msg = raw.recv_msg()
                if msg is None:
                    endings.append("closed without a word")
                    return
                if msg[0] == b"C":
                    acked.append(k * 1000000 + n)
                if msg[0] == b"E":
                    fields = error_fields(msg[1])
                    endings.append((fields["S"], fields["C"], raw.recv_msg()))
                    raw.close()
                    return
                if msg[0] == b"Z":
                    break
            n += 1

    threads = [run_in_thread(lambda k=k: client(k))[0] for k in range(6)]
    assert wait_for(lambda: len(acked) >= 30, True)
    server.proc.send_signal(signal.SIGTERM)
    for t in threads:
        t.join(60)
        assert not t.is_alive()
    assert exited_cleanly(server)
    assert endings == [("FATAL", "57P01", None)] * 6
    server.start()
    with connect(server) as c:
        found = sorted(r[0] for r in c.execute("SELECT a FROM s").fetchall())
    assert found == sorted(acked)
