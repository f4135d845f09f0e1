"""Real PostgreSQL clients against sluiced: psql, psycopg 3 and psycopg2.

Each test connects the way a user would, runs constant queries, and checks what
the client shows: results, a syntax error with its SQLSTATE and position, an
empty query, and many connections at once.
"""

import threading

import psycopg
import psycopg2
import pytest
from psycopg import pq


def connect(server, **kwargs):
    return psycopg.connect(server.dsn, connect_timeout=10, autocommit=True,
                           **kwargs)


def test_psql_select_1(server, psql):
    rc, out, err = psql(server, "SELECT 1", "-At")
    assert rc == 0, err
    assert out.strip() == "1"


def test_psql_select_1_aligned(server, psql):
    rc, out, err = psql(server, "SELECT 1")
    assert rc == 0, err
    lines = [line.strip() for line in out.splitlines()]
    assert "1" in lines
    assert "(1 row)" in lines


def test_psql_syntax_error_points_at_token(server, psql):
    rc, out, err = psql(server, "SELEC 1")
    assert rc != 0
    lines = err.splitlines()
    assert 'ERROR:  syntax error at or near "SELEC"' in lines, err
    # psql quotes the statement and puts a caret under the position the server sent.
    assert "LINE 1: SELEC 1" in lines, err
    caret = lines[lines.index("LINE 1: SELEC 1") + 1]
    assert caret == "        ^", err


def test_psql_syntax_error_verbose_shows_sqlstate(server, psql):
    rc, out, err = psql(server, "SELEC 1", "-v", "VERBOSITY=verbose")
    assert rc != 0
    assert 'ERROR:  42601: syntax error at or near "SELEC"' in err.splitlines(), err


def test_psql_error_position_mid_statement(server, psql):
    rc, out, err = psql(server, "SELECT 1 +")
    assert rc != 0
    assert "ERROR:  syntax error" in err, err
    assert "LINE 1: SELECT 1 +" in err.splitlines(), err


def test_psycopg_select_constants(server):
    with connect(server) as conn:
        assert conn.execute("SELECT 1").fetchall() == [(1,)]
        assert conn.execute("SELECT 'a'").fetchall() == [("a",)]
        cur = conn.execute("SELECT 1+2 AS x")
        assert cur.fetchall() == [(3,)]
        assert [col.name for col in cur.description] == ["x"]


def test_psycopg_syntax_error(server):
    with connect(server) as conn:
        with pytest.raises(psycopg.errors.SyntaxError) as exc:
            conn.execute("SELEC 1")
        assert exc.value.diag.sqlstate == "42601"
        assert exc.value.diag.statement_position == "1"
        # The connection is still usable after the error.
        assert conn.execute("SELECT 1").fetchall() == [(1,)]


def test_psycopg_default_transaction_mode(server):
    """psycopg's default (not autocommit) wraps statements in BEGIN ... COMMIT."""
    with psycopg.connect(server.dsn, connect_timeout=10) as conn:
        assert conn.execute("SELECT 1").fetchall() == [(1,)]
        conn.commit()


def test_psycopg_empty_query(server):
    with connect(server) as conn:
        cur = conn.cursor()
        cur.execute("")
        assert cur.pgresult.status == pq.ExecStatus.EMPTY_QUERY
        assert cur.description is None
        assert conn.execute("SELECT 1").fetchall() == [(1,)]
    assert server.alive()


def test_psycopg2_select_1(server):
    conn = psycopg2.connect(server.dsn, connect_timeout=10)
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("SELECT 1")
            assert cur.fetchall() == [(1,)]
    finally:
        conn.close()


def test_50_concurrent_connections(server):
    clients = 50
    barrier = threading.Barrier(clients, timeout=60)
    results = [None] * clients

    def client(i):
        try:
            with connect(server) as conn:
                barrier.wait()   # all 50 connected at once
                results[i] = conn.execute(f"SELECT {i}").fetchall()
        except Exception as exc:  # reported below, per client
            results[i] = exc
            barrier.abort()      # the others stop waiting for this one

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert not any(t.is_alive() for t in threads), "a client hung"
    failed = {i: r for i, r in enumerate(results) if r != [(i,)]}
    assert not failed, failed
    assert server.alive()
