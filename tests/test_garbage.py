"""Garbage on the wire: sluiced must survive anything a socket can send.

The acceptance test sends 10,000 byte strings to the server's port, from 8 threads
at once: pure random bytes, StartupMessages with absurd lengths, a valid startup
followed by garbage typed messages with huge lengths, truncated messages,
SSLRequest followed by garbage, valid sessions cut off mid-message, and valid
message sequences with random bytes changed. Afterwards the server must still be
running and psql and psycopg must still connect and run SELECT 1; the fixture then
checks that it exits cleanly, without a sanitizer report.

Every case comes from its own seeded generator (make_case(i)), so a case that
breaks the server can be replayed alone: SLUICE_GARBAGE_CASES=17,4242 runs only
those cases.
"""

import os
import random
import socket
import struct
import threading
import time

import psycopg
import pytest

SEED = 0x5106CE
CASES = 10_000
THREADS = 8
BUDGET = 300          # seconds for all cases together
IO_TIMEOUT = 0.5      # seconds a socket waits for the server to answer or close

PROTOCOL_3_0 = 196608
SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CANCEL_REQUEST = 80877102
HUGE_LENGTHS = [0xFFFFFFF0, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x40000000,
                1 << 24, 1 << 20, 10001, 65536]
SMALL_LENGTHS = [0, 1, 2, 3, 4, 5, 7, 8, 9]
MSG_TYPES = b"QPBEDSCHXFfdcp" + b"\x00\xff!Zz"


def be32(n):
    return struct.pack("!I", n & 0xFFFFFFFF)


def cstr(s):
    return s + b"\x00"


def message(kind, body):
    return kind + be32(len(body) + 4) + body


def startup(params=((b"user", b"sluice"), (b"database", b"sluice"))):
    body = be32(PROTOCOL_3_0)
    for key, value in params:
        body += cstr(key) + cstr(value)
    body += b"\x00"
    return be32(len(body) + 4) + body


def query(sql):
    return message(b"Q", cstr(sql))


def extended(sql):
    """Parse, Bind, Describe, Execute, Sync of one unnamed statement."""
    return (message(b"P", cstr(b"") + cstr(sql) + struct.pack("!H", 0))
            + message(b"B", cstr(b"") + cstr(b"") + struct.pack("!HHH", 0, 0, 0))
            + message(b"D", b"P" + cstr(b""))
            + message(b"E", cstr(b"") + be32(0))
            + message(b"S", b""))


def random_bytes(rng, top=None):
    top = top or rng.choice([16, 256, 4096])
    return rng.randbytes(rng.randint(0, top))


def random_length(rng, body_len):
    pick = rng.random()
    if pick < 0.4:
        return rng.choice(HUGE_LENGTHS)
    if pick < 0.6:
        return rng.choice(SMALL_LENGTHS)
    if pick < 0.8:
        return body_len + 4                      # correct
    return rng.randint(0, 1 << 32)               # anything


# Each case returns (name, list of steps). A step is bytes to send, "wait_ready"
# (read until ReadyForQuery or error) or "read1" (read the 1-byte SSL answer).

def case_random(rng):
    return "random", [random_bytes(rng)]


def case_startup_length(rng):
    length = rng.choice(HUGE_LENGTHS + SMALL_LENGTHS + [rng.randint(0, 1 << 32)])
    version = rng.choice([PROTOCOL_3_0, PROTOCOL_3_0 + 2, 0x20000, 0x30063,
                          rng.randint(0, 1 << 32)])
    tail = rng.choice([b"", b"user\x00sluice\x00\x00", random_bytes(rng, 64)])
    return "startup-length", [be32(length) + be32(version) + tail]


def case_startup_params(rng):
    junk = [(b"user", b"sluice"), (b"database", b"sluice"),
            (b"user", b""), (b"", b""), (b"options", b"-c " + random_bytes(rng, 32)),
            (b"application_name", b"x" * rng.randint(0, 100000)),
            (random_bytes(rng, 32).replace(b"\x00", b""), b"v")]
    params = [rng.choice(junk) for _ in range(rng.randint(0, 6))]
    body = b"".join(cstr(key) + cstr(value) for key, value in params) + b"\x00"
    if rng.random() < 0.5:                          # drop some terminators
        body = body.replace(b"\x00", b"\x01", rng.randint(1, 4))
    body = be32(PROTOCOL_3_0) + body
    return "startup-params", [be32(len(body) + 4) + body]


def garbage_messages(rng):
    data = b""
    for _ in range(rng.randint(1, 5)):
        body = random_bytes(rng, 256)
        data += (bytes([rng.choice(MSG_TYPES)])
                 + be32(random_length(rng, len(body))) + body)
    return data


def case_startup_then_garbage(rng):
    steps = [startup()]
    if rng.random() < 0.5:
        steps.append("wait_ready")
    steps.append(garbage_messages(rng))
    return "startup-then-garbage", steps


def case_truncated(rng):
    whole = startup() + query(b"SELECT 1") + extended(b"SELECT 1") + message(b"X", b"")
    return "truncated", [whole[:rng.randint(1, len(whole) - 1)]]


def case_ssl_then_garbage(rng):
    steps = [be32(8) + be32(rng.choice([SSL_REQUEST, GSSENC_REQUEST]))]
    if rng.random() < 0.5:
        steps.append("read1")
    steps.append(rng.choice([random_bytes(rng), startup()[:rng.randint(1, 20)],
                             be32(rng.choice(HUGE_LENGTHS)) + be32(PROTOCOL_3_0),
                             b"\x16\x03\x01" + random_bytes(rng, 512)]))
    return "ssl-then-garbage", steps


def case_cancel(rng):
    length = rng.choice([16, 16, 8, 12, 20, 0xFFFFFFF0])
    body = be32(CANCEL_REQUEST) + rng.randbytes(rng.choice([0, 4, 8, 12, 200]))
    return "cancel", [be32(length) + body]


def case_cut_mid_message(rng):
    whole = rng.choice([query(b"SELECT 1"), extended(b"SELECT 1+2 AS x"),
                        query(b"SELECT '" + b"a" * 5000 + b"'")])
    return "cut-mid-message", [startup(), "wait_ready",
                               whole[:rng.randint(1, len(whole) - 1)]]


def case_mutated(rng):
    valid = bytearray(query(b"SELECT 1") + extended(b"SELECT 'a'")
                      + query(b"SELECT 1+2 AS x; SELECT 2") + message(b"X", b""))
    for _ in range(rng.randint(1, 8)):
        pos = rng.randrange(len(valid))
        if rng.random() < 0.7:
            valid[pos] = rng.randrange(256)
        else:
            valid[pos:pos] = rng.randbytes(rng.randint(1, 8))
    steps = [startup()]
    if rng.random() < 0.5:
        steps.append("wait_ready")
    return "mutated", steps + [bytes(valid)]


CASE_KINDS = [
    (case_random, 3), (case_startup_length, 2), (case_startup_params, 1),
    (case_startup_then_garbage, 3), (case_truncated, 1), (case_ssl_then_garbage, 1),
    (case_cancel, 1), (case_cut_mid_message, 1), (case_mutated, 3),
]


def make_case(i):
    """Case i: (name, steps, how it ends), the same on every run."""
    rng = random.Random(SEED * 100_003 + i)
    make = rng.choices([k for k, _ in CASE_KINDS], [w for _, w in CASE_KINDS])[0]
    name, steps = make(rng)
    # How the client leaves: close at once, reset (RST), or half-close and read
    # until the server closes.
    ending = rng.choice(["close", "reset", "drain"])
    return name, steps, ending


def read_until_ready(sock):
    """Read server messages until ReadyForQuery or ErrorResponse, or a timeout."""
    buf = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return
        buf += chunk
        while len(buf) >= 5:
            kind, length = buf[:1], struct.unpack("!I", buf[1:5])[0]
            if len(buf) < 1 + length:
                break
            if kind in (b"Z", b"E"):
                return
            buf = buf[1 + length:]


def run_case(port, i):
    """Send case i. Returns False only when the connection was refused."""
    name, steps, ending = make_case(i)
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    except ConnectionRefusedError:
        return False
    try:
        sock.settimeout(IO_TIMEOUT)
        for step in steps:
            if step == "wait_ready":
                read_until_ready(sock)
            elif step == "read1":
                sock.recv(1)
            else:
                sock.sendall(step)
        if ending == "drain":
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
        elif ending == "reset":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                            struct.pack("ii", 1, 0))
    except OSError:          # reset, broken pipe, timeout: all fine here
        pass
    finally:
        sock.close()
    return True


@pytest.mark.timeout(BUDGET + 120)
def test_garbage_does_not_kill_the_server(server, psql):
    only = os.environ.get("SLUICE_GARBAGE_CASES")
    cases = [int(c) for c in only.split(",")] if only else list(range(CASES))
    next_case = iter(cases)
    lock = threading.Lock()
    done = []                 # cases sent, in the order they finished
    inflight = {}             # thread -> the case it is sending
    refused = []              # cases whose connection was refused
    suspects = []             # cases that were in flight or just done then
    deadline = time.monotonic() + BUDGET

    def worker():
        while time.monotonic() < deadline and not refused:
            with lock:
                i = next(next_case, None)
                inflight[threading.get_ident()] = i
            if i is None:
                return
            if run_case(server.port, i):
                done.append(i)
            else:
                with lock:
                    if not refused:
                        suspects.extend(done[-2 * THREADS:])
                        suspects.extend(c for c in inflight.values() if c is not None)
                    refused.append(i)

    started = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    print(f"{len(done)} garbage cases in {elapsed:.1f} s")

    assert server.alive() and not refused, (
        f"sluiced died or refused connections after {len(done)} cases; suspects: "
        f"SLUICE_GARBAGE_CASES={','.join(map(str, sorted(set(suspects))))}")
    assert len(done) == len(cases), (
        f"only {len(done)} of {len(cases)} cases in {BUDGET} s")

    with psycopg.connect(server.dsn, connect_timeout=10, autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchall() == [(1,)]
    rc, out, err = psql(server, "SELECT 1", "-At")
    assert rc == 0, err
    assert out.strip() == "1"
    assert server.alive()
