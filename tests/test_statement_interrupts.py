"""statement_timeout and CancelRequest stop every long wait of a statement
(issue 19, item 11): a SELECT on a Kafka stream whose broker does not
answer, a large ORDER BY (the sort itself, not only the reading of its
input), a nested-loop join whose pairs all fail its condition, repeat()
and lpad() building huge strings, a regular expression with back
references (glibc's regexec backtracks exponentially and cannot be
stopped; such patterns now run on PCRE2 with a bound on each match,
src/functions/regex.c).  Each ends with 57014 within a generous
multiple of its timeout; before, each ran on for tens of seconds past it
(the sort, the join's probe and the string functions never looked at the
interrupt flag, the Kafka SELECT waited 30 s for a first answer).
count(DISTINCT ...)'s sort of its set has the same check as ORDER BY's,
but its hashing, checked per batch, dominates its run: no case here.

No test asserts a lower bound or an exact duration."""

import socket
import time

import psycopg
import pytest

from test_session_cancel import keep_cancelling, run_in_thread


def connect(server):
    return psycopg.connect(server.dsn, autocommit=True)


def closed_port():
    """A loopback port nothing listens on (bound, then let go)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# (setup statements, the long statement, its statement_timeout, the bound on
# its run in seconds: 3x the timeout, or 6 s)
CASES = {
    # the source's close waits for the poller's metadata request (1 s
    # before a first answer)
    "kafka_unreachable": (
        ["CREATE STREAM k (a int) WITH (connector = 'kafka', topic = 't', "
         "bootstrap_servers = '127.0.0.1:{port}')"],
        "SELECT * FROM k", 2, 6),
    # about 15 s of merging under ASan after ~2 s of reading the input
    "order_by": ([], "SELECT count(*) FROM (SELECT g FROM generate_series(1, 3000000) g "
                     "ORDER BY g DESC) s", 5, 15),
    # 400 M candidate pairs of a nested loop, none of which passes
    "nested_loop": ([], "SELECT count(*) FROM generate_series(1, 20000) a "
                        "JOIN generate_series(1, 20000) b ON a + b < 0", 2, 6),
    # one value of 500 MB: half a billion one-byte copies before
    "repeat": ([], "SELECT octet_length(repeat('x', 500000000))", 1, 6),
    "lpad": ([], "SELECT octet_length(lpad('', 250000000, 'x'))", 1, 6),
    # glibc's regexec: about 15 s for 12 a's, hours for 20 (true, as PostgreSQL)
    "regex_backref": ([], r"SELECT repeat('a', 12) || 'c' ~ '(a*)*(a*)*(a*)*(a*)*\1\2\3\4c'",
                      1, 6),
}


def setup(c, case):
    for sql in CASES[case][0]:
        c.execute(sql.format(port=closed_port()))


@pytest.mark.parametrize("case", sorted(CASES))
def test_statement_timeout_stops_it(server, case):
    _, sql, timeout, bound = CASES[case]
    with connect(server) as c:
        setup(c, case)
        c.execute("SET statement_timeout = '%ds'" % timeout)
        began = time.monotonic()
        try:
            c.execute(sql).fetchall()
            ended = "a result"
        except psycopg.errors.QueryCanceled as e:
            assert "statement timeout" in str(e), e
            ended = "57014"
        took = time.monotonic() - began
        # The result is allowed (a fast machine), a long run past the timeout is not.
        assert took < bound, "%s after %.1f s (timeout %d s)" % (ended, took, timeout)
        c.execute("SET statement_timeout = 0")
        assert c.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("case", ["kafka_unreachable", "order_by", "repeat", "regex_backref"])
def test_cancel_request_stops_it(server, case):
    _, sql, _, bound = CASES[case]
    with connect(server) as c:
        setup(c, case)
        began = time.monotonic()
        t, out = run_in_thread(lambda: c.execute(sql).fetchall())
        time.sleep(3.0)     # ORDER BY: past the reading of its input, into the sort
        keep_cancelling(t, c.cancel)
        took = time.monotonic() - began
        if "error" in out:
            assert isinstance(out["error"], psycopg.errors.QueryCanceled), out
            assert "user request" in str(out["error"])
        assert took < bound + 3, "ended after %.1f s" % took
        assert c.execute("SELECT 1").fetchone() == (1,)


def test_a_write_waiting_for_another_ends_at_its_timeout(server):
    """INSERTs into tables run one at a time; one waiting for another that
    runs long ends at its own statement_timeout, not when the other ends."""
    with connect(server) as c:
        c.execute("CREATE TABLE t (a int PRIMARY KEY)")
    def slow_insert():
        with connect(server) as c:
            c.execute("INSERT INTO t SELECT 1 FROM (SELECT pg_sleep(8)) s")

    slow = run_in_thread(slow_insert)
    try:
        time.sleep(1.0)     # the slow INSERT holds the writers' lock
        with connect(server) as c:
            c.execute("SET statement_timeout = '1s'")
            began = time.monotonic()
            with pytest.raises(psycopg.errors.QueryCanceled, match="statement timeout"):
                c.execute("INSERT INTO t VALUES (2)")
            took = time.monotonic() - began
            assert took < 4, "the waiting INSERT ended after %.1f s" % took
    finally:
        slow[0].join(60)
    assert "error" not in slow[1], slow[1]
    with connect(server) as c:
        assert c.execute("SELECT a FROM t ORDER BY a").fetchall() == [(1,)]


def test_six_stuck_kafka_selects_do_not_stall_other_clients(server):
    """The issue's case: six SELECTs on a Kafka stream whose broker does not
    answer, each with statement_timeout = 2s, more than the statement
    workers; another client's SELECT 1 is answered once their timeouts end
    them, not after their 30 s wait for the broker."""
    with connect(server) as c:
        setup(c, "kafka_unreachable")

    def stuck():
        with connect(server) as c:
            c.execute("SET statement_timeout = '2s'")
            c.execute("SELECT * FROM k").fetchall()

    selects = [run_in_thread(stuck) for _ in range(6)]
    try:
        time.sleep(0.5)
        began = time.monotonic()
        with connect(server) as c:
            assert c.execute("SELECT 1").fetchone() == (1,)
        took = time.monotonic() - began
        assert took < 10, "SELECT 1 answered after %.1f s" % took
    finally:
        for t, _ in selects:
            t.join(60)
    for _, out in selects:
        assert isinstance(out.get("error"), psycopg.errors.QueryCanceled), out
