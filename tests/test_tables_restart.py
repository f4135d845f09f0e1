"""Tables and streams survive a restart of sluiced.

Tables live in the SQLite catalog (their definition) and RocksDB (their rows,
relstore.h); internal streams too.  Each test writes through psycopg, restarts
the server on the same data directory, and reads back: every committed row is
there, nothing of a failed statement is, and appends and key changes go on
where they stopped (row ids and stream offsets are recovered from disk).
"""

import psycopg
import pytest


def connect(server):
    return psycopg.connect(server.dsn, connect_timeout=10, autocommit=True)


def rows(server, sql, params=None):
    with connect(server) as conn:
        return conn.execute(sql, params).fetchall()


def test_table_rows_persist_across_restart(sluiced):
    server = sluiced()
    with connect(server) as conn:
        conn.execute("CREATE TABLE users (user_id BIGINT PRIMARY KEY, country TEXT NOT NULL, "
                     "score DOUBLE PRECISION)")
        conn.execute("INSERT INTO users VALUES (1, 'de', 1.5), (2, 'fr', NULL), (3, 'us', 2)")
        conn.execute("UPDATE users SET score = 9 WHERE user_id = 3")
        conn.execute("DELETE FROM users WHERE user_id = 2")
        # a failed statement writes nothing, before or after the restart
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("INSERT INTO users VALUES (4, 'it', 1), (1, 'xx', 0)")
        conn.execute("CREATE TABLE bag (x int)")
        conn.execute("INSERT INTO bag VALUES (1), (1), (2)")
    server.restart()
    assert rows(server, "SELECT * FROM users ORDER BY user_id") == [(1, "de", 1.5),
                                                                     (3, "us", 9.0)]
    assert rows(server, "SELECT x, count(*) FROM bag GROUP BY x ORDER BY x") == [(1, 2), (2, 1)]
    # the primary key still holds, and new rows go on after the old ones
    with connect(server) as conn:
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("INSERT INTO users VALUES (1, 'xx', 0)")
        conn.execute("INSERT INTO users VALUES (5, 'es', 3) ON CONFLICT (user_id) DO NOTHING")
        conn.execute("INSERT INTO bag VALUES (3)")
    server.restart()
    assert rows(server, "SELECT user_id FROM users ORDER BY 1") == [(1,), (3,), (5,)]
    assert rows(server, "SELECT count(*), sum(x) FROM bag") == [(4, 7)]


def test_stream_rows_persist_across_restart(sluiced):
    server = sluiced()
    with connect(server) as conn:
        conn.execute("CREATE STREAM clicks (user_id BIGINT, url TEXT, ts TIMESTAMP, "
                     "WATERMARK FOR ts AS ts - INTERVAL '10 seconds') WITH (retention = '1 day')")
        conn.execute("INSERT INTO clicks VALUES (1, '/a', '2024-01-01 00:00:01'), "
                     "(2, '/b', '2024-01-01 00:00:07')")
        conn.execute("INSERT INTO clicks VALUES (1, '/c', '2024-01-01 00:00:12')")
    server.restart()
    with connect(server) as conn:
        assert conn.execute("SELECT user_id, url FROM clicks").fetchall() == [
            (1, "/a"), (2, "/b"), (1, "/c")]
        # appends continue at the end offset found on disk
        conn.execute("INSERT INTO clicks VALUES (3, '/d', '2024-01-01 00:00:15')")
        got = conn.execute("SELECT window_start, count(*) FROM clicks GROUP BY "
                           "WINDOW(ts, INTERVAL '10 seconds') ORDER BY 1").fetchall()
        assert [str(w) for w, _ in got] == ["2024-01-01 00:00:00", "2024-01-01 00:00:10"]
        assert [n for _, n in got] == [2, 2]
    server.restart()
    assert rows(server, "SELECT count(*) FROM clicks") == [(4,)]
    # a dropped stream's rows do not come back under a new one of that name
    with connect(server) as conn:
        conn.execute("DROP STREAM clicks")
        conn.execute("CREATE STREAM clicks (user_id BIGINT, url TEXT, ts TIMESTAMP)")
    server.restart()
    assert rows(server, "SELECT count(*) FROM clicks") == [(0,)]


def test_dropped_table_stays_dropped(sluiced):
    server = sluiced()
    with connect(server) as conn:
        conn.execute("CREATE TABLE t (a int PRIMARY KEY)")
        conn.execute("INSERT INTO t VALUES (1), (2)")
        conn.execute("DROP TABLE t")
        conn.execute("CREATE TABLE t (a int PRIMARY KEY)")
        conn.execute("INSERT INTO t VALUES (3)")
    server.restart()
    assert rows(server, "SELECT a FROM t") == [(3,)]
