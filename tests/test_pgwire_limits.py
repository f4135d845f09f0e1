"""Limits a client cannot push past: max_message_size, max_connections, the
output buffer (backpressure on a client that stops reading), and
CancelRequest (matched, but nothing runs long enough to cancel yet).
"""

import socket
import struct
import threading
import time

import psycopg
import pytest

from pgwire_raw import (CANCEL_REQUEST, Raw, data_row, error_fields, message, query,
                        startup_packet)


def session(server):
    raw = Raw(server.port)
    msgs = raw.startup()
    assert msgs[-1] == (b"Z", b"I"), msgs
    return raw


def backend_key(msgs):
    (body,) = [b for k, b in msgs if k == b"K"]
    return struct.unpack("!ii", body)


def select_1(raw):
    raw.send(query("SELECT 1"))
    out = raw.until_ready()
    return [data_row(b) for k, b in out if k == b"D"] == [[b"1"]]


@pytest.mark.parametrize("length", [4097, 1 << 20, 0x7FFFFFFF, 0xFFFFFFFF, 3])
def test_oversized_message_closes_only_that_connection(sluiced, length):
    server = sluiced("--max-message-size", "4096")
    other = session(server)
    with session(server) as bad:
        bad.send(b"Q" + struct.pack("!I", length) + b"SELECT 1")
        kind, body = bad.recv_msg()
        assert kind == b"E"
        fields = error_fields(body)
        assert (fields["S"], fields["C"]) == ("FATAL", "08P01")
        assert fields["M"] == "invalid message length"
        assert bad.closed_by_server()
    with other:
        assert select_1(other)
    assert server.alive()


def test_message_at_the_limit_is_accepted(sluiced):
    server = sluiced("--max-message-size", "4096")
    with session(server) as raw:
        sql = "SELECT '" + "a" * (4096 - 4 - 1 - len("SELECT ''")) + "'"
        raw.send(query(sql))
        out = raw.until_ready()
        assert out[-1] == (b"Z", b"I")
        assert any(k == b"D" for k, _ in out)


def test_max_connections(sluiced):
    server = sluiced("--max-connections", "3")
    held = [session(server) for _ in range(3)]
    try:
        with Raw(server.port) as extra:
            msgs = extra.startup()
            fields = error_fields(msgs[-1][1])
            assert (fields["S"], fields["C"]) == ("FATAL", "53300")
            assert fields["M"] == "sorry, too many clients already"
        with pytest.raises(psycopg.OperationalError, match="too many clients"):
            psycopg.connect(server.dsn, connect_timeout=10)
        for raw in held:
            assert select_1(raw)
    finally:
        for raw in held:
            raw.close()
    # The slots come back once those clients have gone.
    deadline = time.monotonic() + 10
    while True:
        try:
            with psycopg.connect(server.dsn, connect_timeout=10) as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
            break
        except psycopg.OperationalError:
            assert time.monotonic() < deadline
            time.sleep(0.1)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


@pytest.mark.timeout(180)
def test_client_that_stops_reading_is_not_buffered_without_bound(sluiced):
    """Pipeline queries whose results add up to 128 MiB and never read them.

    With max_output_buffer = 1 MiB the server stops reading from this client
    once 1 MiB waits for it, so the client's writes stall long before all the
    queries are sent, the server's memory stays flat, and other clients are
    served meanwhile.  (Without FROM in the SQL yet, big results come from
    big literals: each 1 MiB query returns its 1 MiB string.)"""
    server = sluiced("--max-output-buffer", str(1 << 20))
    big = query("SELECT '" + "z" * (1 << 20) + "'")
    total_queries = 128
    slow = session(server)
    slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    time.sleep(0.2)
    base = rss_kib(server.proc.pid)

    sent = 0
    slow.sock.setblocking(False)
    deadline = time.monotonic() + 20
    stalled_since = None
    payload = big * total_queries
    while sent < len(payload) and time.monotonic() < deadline:
        try:
            sent += slow.sock.send(payload[sent:sent + (1 << 20)])
            stalled_since = None
        except BlockingIOError:
            stalled_since = stalled_since or time.monotonic()
            if time.monotonic() - stalled_since > 2:
                break       # the server has stopped reading us
            time.sleep(0.01)
    assert sent < len(payload) // 4, f"server read {sent >> 20} MiB without a reader"

    # Others are served while the slow client is stuck.
    with session(server) as other:
        started = time.monotonic()
        for _ in range(20):
            assert select_1(other)
        assert time.monotonic() - started < 10
    grown = rss_kib(server.proc.pid) - base
    assert grown < 150 * 1024, f"server grew by {grown >> 10} MiB"

    # When the client reads again, everything it sent is answered, in order.
    slow.sock.setblocking(True)
    slow.sock.settimeout(30)
    done = threading.Event()

    def send_rest():
        try:
            slow.sock.sendall(payload[sent:])
        finally:
            done.set()

    sender = threading.Thread(target=send_rest, daemon=True)
    sender.start()
    rows = 0
    for _ in range(total_queries):
        out = slow.until_ready()
        rows += sum(1 for k, b in out if k == b"D" and len(b) > (1 << 20))
    assert rows == total_queries
    sender.join(30)
    slow.close()
    assert server.alive()


def cancel_packet(pid, key):
    return struct.pack("!IIii", 16, CANCEL_REQUEST, pid, key)


def test_cancel_request_with_wrong_key_or_pid_is_ignored(server):
    """A CancelRequest is matched against BackendKeyData (a wrong key or pid
    does nothing) and the connection that carried it is closed without an
    answer, as in PostgreSQL.  That a matching one cancels a running
    statement is tests/test_session_cancel.py's."""
    target = Raw(server.port)
    msgs = target.startup()
    pid, key = backend_key(msgs)
    with target:
        for bad_pid, bad_key in [(pid, key ^ 1), (pid + 1000, key), (0, 0), (-1, -1)]:
            with Raw(server.port) as c:
                c.send(cancel_packet(bad_pid, bad_key))
                assert c.closed_by_server()
        assert select_1(target)
        assert "cancel request" not in server.log_text()
        # The right key is matched (and logged), and nothing breaks.
        with Raw(server.port) as c:
            c.send(cancel_packet(pid, key))
            assert c.closed_by_server()
        assert select_1(target)
    deadline = time.monotonic() + 5
    while f"cancel request\" pid={pid}" not in server.log_text():
        assert time.monotonic() < deadline, server.log_text()
        time.sleep(0.05)


def test_psycopg_cancel_does_not_break_the_session(server):
    with psycopg.connect(server.dsn, connect_timeout=10, autocommit=True) as conn:
        conn.cancel()
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_bad_cancel_request_length(server):
    with Raw(server.port) as c:
        c.send(struct.pack("!II", 12, CANCEL_REQUEST) + b"\x00" * 4)
        kind, body = c.recv_msg()
        assert kind == b"E" and error_fields(body)["C"] == "08P01"
    assert server.alive()


def test_startup_packet_too_long(server):
    with Raw(server.port) as c:
        c.send(struct.pack("!I", 10001) + b"\x00" * 100)
        kind, body = c.recv_msg()
        assert kind == b"E"
        assert error_fields(body)["M"] == "invalid length of startup packet"


def test_terminate_closes_quietly(server):
    with Raw(server.port) as c:
        c.send(startup_packet({"user": "sluice", "database": "sluice"}))
        c.until_ready()
        c.send(message(b"X"))
        assert c.closed_by_server()


@pytest.mark.parametrize("stage", ["nothing", "half a startup packet", "password exchange",
                                   "tls handshake"])
def test_authentication_timeout(sluiced, tls_certs, stage):
    """A client that stops before it is through authentication is closed
    after --authentication-timeout seconds (60 by default)."""
    server = sluiced("--authentication-timeout", "1", config=(
        f"ssl = on\nssl_cert_file = '{tls_certs.cert}'\nssl_key_file = '{tls_certs.key}'\n"
        "user.u.password = 'pw'\nhba = 'host all u 127.0.0.1/32 password'\n"
        "hba = 'host all all 127.0.0.1/32 trust'\n"))
    with Raw(server.port, timeout=10) as raw:
        started = time.monotonic()
        if stage == "half a startup packet":
            raw.send(startup_packet({"user": "u", "database": "d"})[:10])
        elif stage == "password exchange":
            raw.send(startup_packet({"user": "u", "database": "d"}))
            assert raw.recv_msg()[0] == b"R"
        elif stage == "tls handshake":
            raw.send(struct.pack("!II", 8, 80877103))
            assert raw.sock.recv(1) == b"S"
        if stage != "tls handshake":
            msg = raw.recv_msg()
            assert msg is not None and msg[0] == b"E", msg
            fields = error_fields(msg[1])
            assert (fields["S"], fields["C"]) == ("FATAL", "57014")
            assert fields["M"] == "canceling authentication due to timeout"
        assert raw.closed_by_server()
        assert 0.9 < time.monotonic() - started < 5
    if stage == "nothing":
        # A session that got through is not affected.
        with session(server) as ok:
            time.sleep(2.2)
            assert select_1(ok)
