"""SIGKILL during COPY, 20 times: no acknowledged row lost, no partial COPY visible.

One data directory, 20 rounds.  In each round a client runs COPY FROM STDIN
into an internal stream, one COPY after another (each of ROWS rows tagged with
its copy number), while the test kills the server with SIGKILL at a random
moment; then the server is started again on the same data.  After each restart:

- every COPY the server acknowledged (CommandComplete reached the client) is
  there, whole;
- every COPY is there whole or not at all: no partial COPY, no partial row;
- nothing is there twice, and the stream takes new rows at the next offset.

The client's errors are classified: a connection lost by the kill is
expected, anything else fails the test; and at least half the kills must
have cut a COPY in flight (sent, not acknowledged), or the test proved
nothing about partial COPYs.

Half the rounds run with --commit-mode=group, so the group-commit path is held
to the same rule.  The random moments come from a fixed seed; no timing is
asserted.
"""

import random
import threading
import time

import psycopg

ROUNDS = 20
ROWS = 2000


def connect(server):
    return psycopg.connect(server.dsn, connect_timeout=10, autocommit=True)


def lost_connection(e):
    """True for the errors a client gets when the server dies under it: the
    connection refused, reset or closed, with no SQLSTATE from the server
    (psycopg's OperationalError)."""
    return isinstance(e, psycopg.OperationalError) and e.sqlstate is None


def copy_loop(server, start, acked, stop, out):
    """COPY after COPY until the connection breaks; acked gets each copy id
    the server confirmed.  out["interrupted"]: the connection broke while a
    COPY was sent and not yet acknowledged; out["error"]: any other error."""
    copy_id = start
    in_copy = False
    try:
        with connect(server) as conn, conn.cursor() as cur:
            while not stop.is_set():
                in_copy = True
                with cur.copy("COPY events (copy_id, seq, payload) FROM STDIN "
                              "WITH (FORMAT csv)") as cp:
                    for seq in range(ROWS):
                        cp.write(f"{copy_id},{seq},\"p-{copy_id}-{seq},{'z' * (seq % 40)}\"\n")
                in_copy = False
                acked.append(copy_id)
                copy_id += 1
    except psycopg.Error as e:
        if lost_connection(e):
            out["interrupted"] = in_copy    # the server was killed under us
        else:
            out["error"] = e


def check(server, acked_all):
    with connect(server) as conn:
        got = conn.execute("SELECT copy_id, count(*), count(DISTINCT seq), min(seq), max(seq) "
                           "FROM events WHERE copy_id >= 0 GROUP BY copy_id").fetchall()
        bad_payload = conn.execute(
            "SELECT count(*) FROM events WHERE payload NOT LIKE 'p-%'").fetchone()[0]
    present = {}
    for copy_id, n, distinct, lo, hi in got:
        assert (n, distinct, lo, hi) == (ROWS, ROWS, 0, ROWS - 1), \
            f"copy {copy_id} is partial or doubled: {n} rows, {distinct} distinct"
        present[copy_id] = n
    lost = sorted(set(acked_all) - set(present))
    assert not lost, f"acknowledged copies lost: {lost}"
    assert bad_payload == 0
    return present


def test_sigkill_during_copy(sluiced):
    rnd = random.Random(20261130)
    server = sluiced()
    with connect(server) as conn:
        conn.execute("CREATE STREAM events (copy_id INT, seq INT, payload TEXT)")
    acked_all = []
    next_id = 0
    interrupted = 0
    for round_ in range(ROUNDS):
        acked, stop, out = [], threading.Event(), {}
        t = threading.Thread(target=copy_loop, args=(server, next_id, acked, stop, out))
        t.start()
        time.sleep(rnd.uniform(0.05, 0.6))
        assert server.kill() == -9
        stop.set()
        t.join(60)
        assert not t.is_alive()
        assert "error" not in out, f"round {round_}: {out['error']!r}"
        interrupted += out.get("interrupted", False)
        acked_all += acked
        server.extra_args = ["--commit-mode=group"] if round_ % 2 == 0 else []
        server.start()
        present = check(server, acked_all)
        # the round's copies: the acknowledged ones and at most the one in flight
        in_flight = [c for c in present if c >= next_id and c not in acked]
        assert len(in_flight) <= 1, in_flight
        next_id = max([next_id, *present, *acked]) + 1
    # the stream goes on: a new row lands after the others, readable
    with connect(server) as conn:
        before = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        conn.execute("INSERT INTO events VALUES (-1, 0, 'p-last')")
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == before + 1
    check(server, acked_all)
    assert len(acked_all) > 0
    # the kills landed mid-COPY: most rounds cut a COPY the server had not
    # acknowledged (a kill before the connection, or between two COPYs,
    # interrupts none)
    print(f"{interrupted} of {ROUNDS} kills interrupted a COPY")
    assert interrupted >= ROUNDS // 2, f"{interrupted} of {ROUNDS} kills interrupted a COPY"
