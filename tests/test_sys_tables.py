"""The sys.* tables against known workloads: a stream fed by INSERT and a
continuous query over it, read back through sys.streams, sys.queries and
sys.state while the query runs, pauses, resumes and fails; sys.settings
against the server's options; sys.connections against open sessions.
Everything polls with a generous deadline (a loaded CI machine is slow).
"""

import time

import psycopg

WAIT = 60   # seconds a batch may take to show up


def connect(server, **kw):
    return psycopg.connect(server.dsn, autocommit=True, connect_timeout=10, **kw)


def wait_for(fn, check, timeout=WAIT):
    """Polls fn() until check(value) holds; returns the last value."""
    deadline = time.monotonic() + timeout
    got = fn()
    while not check(got) and time.monotonic() < deadline:
        time.sleep(0.1)
        got = fn()
    return got


def one(c, sql, *args):
    return c.execute(sql, args).fetchone()


def test_queries_and_state_follow_a_running_query(server):
    with connect(server) as c:
        c.execute("CREATE STREAM ev (k INT, x INT)")
        c.execute("CREATE CONTINUOUS QUERY per_k WITH (trigger = '0', output_mode = 'update') "
                  "AS SELECT k, count(*) AS n, sum(100 / x) AS s FROM ev GROUP BY k")
        assert one(c, "SELECT status, trigger, output_mode, last_batch_id, last_error "
                      "FROM sys.queries WHERE name = 'per_k'") == \
            ("running", "0", "update", None, None)
        c.execute("INSERT INTO ev SELECT g % 7, 1 FROM generate_series(1, 700) g")
        # the batch commits: last_batch_id, input rows, and 7 groups of state
        got = wait_for(lambda: one(c, "SELECT q.last_batch_id, q.input_rows, s.state_rows "
                                      "FROM sys.queries q JOIN sys.state s "
                                      "ON s.query_oid = q.oid WHERE q.name = 'per_k'"),
                       lambda r: r[1] == 700 and r[2] == 7)
        assert got[0] is not None and got[0] >= 0 and got[1:] == (700, 7), got
        assert one(c, "SELECT row_count, next_offset FROM sys.streams WHERE name = 'ev'") == \
            (700, 700)
        # the result table agrees with the state count
        assert one(c, "SELECT count(*) FROM per_k") == (7,)
        assert one(c, "SELECT started_at >= created_at, started_at <= now() "
                      "FROM sys.queries WHERE name = 'per_k'") == (True, True)

        c.execute("ALTER CONTINUOUS QUERY per_k PAUSE")
        assert one(c, "SELECT status FROM sys.queries WHERE name = 'per_k'") == ("paused",)
        c.execute("ALTER CONTINUOUS QUERY per_k RESUME")
        assert one(c, "SELECT status FROM sys.queries WHERE name = 'per_k'") == ("running",)

        # a row that makes the batch fail: the query fails with its error
        c.execute("INSERT INTO ev VALUES (1, 0)")
        got = wait_for(lambda: one(c, "SELECT status, last_error FROM sys.queries "
                                      "WHERE name = 'per_k'"),
                       lambda r: r[0] == "failed")
        assert got[0] == "failed" and "division by zero" in got[1], got
        # the other relations are unaffected, and the failure is filterable
        assert one(c, "SELECT count(*) FROM sys.queries WHERE status = 'failed'") == (1,)


def test_settings_show_the_server_options(server):
    with connect(server) as c:
        got = dict(c.execute("SELECT name, setting FROM sys.settings").fetchall())
        assert got["port"] == str(server.port)
        assert got["listen"] == "127.0.0.1"
        assert int(got["max_connections"]) > 0
        # pg_settings shows them too, with PostgreSQL's own
        assert one(c, "SELECT setting FROM pg_settings WHERE name = 'port'") == \
            (str(server.port),)
        assert one(c, "SELECT setting FROM pg_settings WHERE name = 'server_encoding'") == \
            ("UTF8",)


def test_connections_list_sessions_and_their_state(server):
    with connect(server, application_name="watcher") as a, \
            connect(server, application_name="other") as b:
        b.execute("BEGIN")
        rows = a.execute("SELECT application_name, state, usename, datname, "
                         "client_addr, client_port > 0, connected_at <= now() "
                         "FROM sys.connections ORDER BY application_name").fetchall()
        assert ("other", "idle in transaction", "sluice", "sluice", "127.0.0.1", True, True) \
            in rows
        assert ("watcher", "active", "sluice", "sluice", "127.0.0.1", True, True) in rows
        pid = one(b, "SELECT pg_backend_pid()")[0]
        b.execute("COMMIT")
        assert one(a, "SELECT application_name, state FROM sys.connections WHERE pid = %s",
                   pid) == ("other", "idle")
    with connect(server) as c:
        # closed sessions are gone
        assert wait_for(lambda: one(c, "SELECT count(*) FROM sys.connections"),
                        lambda r: r == (1,)) == (1,)


def test_query_with_trigger_once_finishes(server):
    with connect(server) as c:
        c.execute("CREATE STREAM once_in (k INT)")
        c.execute("INSERT INTO once_in VALUES (1), (2), (2)")
        c.execute("CREATE CONTINUOUS QUERY once_q WITH (trigger = 'once', output_mode = 'update') "
                  "AS SELECT k, count(*) AS n FROM once_in GROUP BY k")
        got = wait_for(lambda: one(c, "SELECT status, trigger, last_batch_id, input_rows "
                                      "FROM sys.queries WHERE name = 'once_q'"),
                       lambda r: r[0] == "finished")
        assert got == ("finished", "once", 0, 3), got
        assert one(c, "SELECT state_rows FROM sys.state WHERE query = 'once_q'") == (2,)


def test_source_lag_of_an_internal_stream(server):
    """sys.source_lag: one row per running query and source partition (an
    internal stream is one partition, 0, without a topic, also with
    partitions = N); the lag grows while the query is paused and drains when
    it resumes.  tests/kafka/test_kafka_source.py has the Kafka side."""
    with connect(server) as c:
        c.execute("CREATE STREAM lag_in (k INT, ts TIMESTAMP, "
                  "WATERMARK FOR ts AS ts - INTERVAL '1 second') "
                  "WITH (partitions = 4, partition_key = 'k')")
        c.execute("CREATE CONTINUOUS QUERY lag_q WITH (trigger = '0') AS "
                  "SELECT k, ts FROM lag_in WHERE k >= 0")
        lag = "SELECT source, topic, partition, committed_offset, latest_offset, lag, " \
              "last_poll IS NOT NULL FROM sys.source_lag WHERE query = 'lag_q'"
        c.execute("INSERT INTO lag_in SELECT g, '2026-01-01'::timestamp "
                  "FROM generate_series(1, 100) g")
        got = wait_for(lambda: c.execute(lag).fetchall(),
                       lambda r: r == [("lag_in", None, 0, 100, 100, 0, True)])
        assert got == [("lag_in", None, 0, 100, 100, 0, True)], got

        c.execute("ALTER CONTINUOUS QUERY lag_q PAUSE")
        c.execute("INSERT INTO lag_in SELECT g, '2026-01-01'::timestamp "
                  "FROM generate_series(1, 50) g")
        got = c.execute(lag).fetchall()
        assert got == [("lag_in", None, 0, 100, 150, 50, True)], got
        c.execute("ALTER CONTINUOUS QUERY lag_q RESUME")
        got = wait_for(lambda: c.execute(lag).fetchall(),
                       lambda r: r == [("lag_in", None, 0, 150, 150, 0, True)])
        assert got == [("lag_in", None, 0, 150, 150, 0, True)], got
        # a dropped query has no rows
        c.execute("DROP CONTINUOUS QUERY lag_q")
        assert c.execute(lag).fetchall() == []


def test_system_relations_in_copy_and_folded_casts(server):
    """A COPY (query) TO STDOUT reads system relations and calls catalog
    functions with the statement's system catalog, as a SELECT does; a
    regclass literal folded at analysis finds its relation through the
    analyzer's."""
    with connect(server) as c:
        c.execute("CREATE TABLE t (a INT)")
        with c.cursor().copy("COPY (SELECT s.setting, current_database(), "
                             "'t'::regclass::text, 'sys.settings'::regclass::text, "
                             "obj_description('sys.settings'::regclass, 'pg_class') "
                             "FROM sys.settings s WHERE s.name = 'port') TO STDOUT") as cp:
            data = b"".join(bytes(chunk) for chunk in cp).decode()
        assert data == f"{server.port}\tsluice\tt\tsys.settings\tthe server's settings\n"
        assert one(c, "SELECT 'pg_class'::regclass = 1259, to_regclass('t') IS NOT NULL") == \
            (True, True)
