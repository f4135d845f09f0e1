"""A Query string's later statements run as its own connection.

The role a statement runs as, the session's settings and its session (what
current_user and pg_backend_pid() read) are the loop thread's state, set when
a connection's message is dispatched.  A simple-query string goes on after a
statement that ran on the statement pool (pg_sleep) or after a deferred
append (--commit-mode=group): meanwhile other connections' messages run, and
the rest of the string must still be checked and run as the connection that
sent it, with its settings.  Here the plain role u sends such strings while
the superuser keeps sending messages with other settings; u's DROP of the
superuser's table is refused (42501) and the table stays.
"""

import threading

from pgwire_raw import Raw, error_fields, query
from test_roles import su


def admin_busy(server, stop):
    """The superuser sends messages (other settings) until stop is set."""
    with su(server) as admin:
        while not stop.is_set():
            admin.execute("SET statement_mem = '128MB'")
            admin.execute("SET TimeZone = 'America/New_York'")
            admin.execute("SELECT 1")


def run_as_u(server, sql, setup=None):
    """u sends sql as one Query while the superuser is busy: the messages up
    to ReadyForQuery."""
    stop = threading.Event()
    busy = threading.Thread(target=admin_busy, args=(server, stop))
    with Raw(server.port, timeout=30) as raw:
        msgs = raw.startup(user="u")
        assert msgs[-1][0] == b"Z", msgs
        for s in setup or ():
            raw.send(query(s))
            got = raw.until_ready()
            assert not [m for m in got if m[0] == b"E"], got
        busy.start()
        try:
            raw.send(query(sql))
            return raw.until_ready()
        finally:
            stop.set()
            busy.join(30)


def errors(msgs):
    return [error_fields(body) for kind, body in msgs if kind == b"E"]


def texts(msgs):
    """The first column of each DataRow, as text."""
    out = []
    for kind, body in msgs:
        if kind == b"D":
            n = int.from_bytes(body[2:6], "big")
            out.append(body[6:6 + n].decode())
    return out


def setup_roles(server):
    with su(server) as admin:
        admin.execute("CREATE ROLE u LOGIN")
        admin.execute("CREATE TABLE owned (k INT PRIMARY KEY)")
        admin.execute("INSERT INTO owned VALUES (1)")


def owned_rows(server):
    with su(server) as admin:
        return admin.execute("SELECT k FROM owned").fetchall()


def test_statements_after_a_pool_job_run_as_their_connection(sluiced):
    server = sluiced()
    setup_roles(server)
    msgs = run_as_u(server, "SELECT pg_sleep(1); DROP TABLE owned")
    errs = errors(msgs)
    assert len(errs) == 1 and errs[0]["C"] == "42501", errs
    assert owned_rows(server) == [(1,)]
    msgs = run_as_u(server, "SELECT pg_sleep(1); SELECT current_user; "
                            "SELECT current_setting('statement_mem')",
                    setup=["SET statement_mem = '64MB'"])
    assert not errors(msgs), msgs
    assert texts(msgs) == ["", "u", "64MB"], msgs


def test_statements_after_a_deferred_append_run_as_their_connection(sluiced):
    # the 0.5 s window keeps u's append in flight while the superuser's
    # messages run
    server = sluiced("--commit-mode=group", "--group-commit-window=500000")
    setup_roles(server)
    msgs = run_as_u(server, "INSERT INTO us VALUES (1, NULL); DROP TABLE owned",
                    setup=["CREATE STREAM us (x INT, t TIMESTAMPTZ)"])
    errs = errors(msgs)
    assert len(errs) == 1 and errs[0]["C"] == "42501", errs
    assert owned_rows(server) == [(1,)]
    # u's TimeZone reads the second INSERT's literal (encoded on the loop)
    msgs = run_as_u(server, "INSERT INTO us VALUES (2, NULL); "
                            "INSERT INTO us VALUES (3, '2020-01-01 00:00:00'); "
                            "SELECT current_user",
                    setup=["SET TimeZone = 'Asia/Tokyo'"])
    assert not errors(msgs), msgs
    assert texts(msgs) == ["u"], msgs
    with su(server) as admin:
        assert admin.execute("SELECT x FROM us WHERE t = '2019-12-31 15:00:00+00'").fetchall() \
            == [(3,)]
