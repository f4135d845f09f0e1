"""Slow and long work is visible: pg_stat_activity and sys.connections show
each session's state and current (or last) statement to its own role and to
superusers, '<insufficient privilege>' to other roles, with passwords and
secret options masked; the log records DDL, statements slower than
log_min_duration_statement and each session's end.  Two sessions: one runs
while the other reads.  Every wait polls for a state, never a time.
"""

import re
import threading
import time

import psycopg
import pytest

WAIT = 60   # seconds a state may take to show up on a loaded machine


def connect(server, user="sluice", **kw):
    dsn = (f"host={server.host} port={server.port} user={user} dbname=sluice "
           f"sslmode=disable")
    return psycopg.connect(dsn, autocommit=True, connect_timeout=10, **kw)


def wait_for(fn, check, timeout=WAIT):
    """Polls fn() until check(value) holds; returns the last value."""
    deadline = time.monotonic() + timeout
    got = fn()
    while not check(got) and time.monotonic() < deadline:
        time.sleep(0.05)
        got = fn()
    return got


def activity(c, pid):
    return c.execute("SELECT state, query, query_start IS NOT NULL, xact_start IS NOT NULL, "
                     "backend_type, usename, datname FROM pg_stat_activity WHERE pid = %s",
                     (pid,)).fetchone()


def test_columns_are_postgresql_15s(server):
    with connect(server) as c:
        cols = c.execute("SELECT column_name, data_type FROM information_schema.columns "
                         "WHERE table_name = 'pg_stat_activity' "
                         "ORDER BY ordinal_position").fetchall()
        names = [n for n, _ in cols]
        # PostgreSQL 15's \d pg_stat_activity, in its order
        assert names == ["datid", "datname", "pid", "leader_pid", "usesysid", "usename",
                         "application_name", "client_addr", "client_hostname", "client_port",
                         "backend_start", "xact_start", "query_start", "state_change",
                         "wait_event_type", "wait_event", "state", "backend_xid",
                         "backend_xmin", "query_id", "query", "backend_type"]
        types = dict(cols)
        assert types["pid"] == "integer" and types["query_id"] == "bigint"
        assert types["backend_start"] == "timestamp with time zone"
        assert types["query"] == "text" and types["state"] == "text"
        # this session sees itself running this statement
        row = c.execute("SELECT state, query, backend_type, usename, datname, "
                        "query_start <= now(), backend_start <= query_start "
                        "FROM pg_stat_activity WHERE pid = pg_backend_pid()").fetchone()
        assert row == ("active", "SELECT state, query, backend_type, usename, datname, "
                       "query_start <= now(), backend_start <= query_start "
                       "FROM pg_stat_activity WHERE pid = pg_backend_pid()",
                       "client backend", "sluice", "sluice", True, True)


def test_running_statement_is_active_with_its_text(server):
    with connect(server) as watcher, connect(server, application_name="sleeper") as sleeper:
        pid = sleeper.info.backend_pid
        done = threading.Event()

        def run():
            try:
                sleeper.execute("SELECT pg_sleep(2)")
            finally:
                done.set()

        t = threading.Thread(target=run)
        t.start()
        try:
            got = wait_for(lambda: activity(watcher, pid),
                           lambda r: r[0] == "active" or done.is_set())
            assert got == ("active", "SELECT pg_sleep(2)", True, True, "client backend",
                           "sluice", "sluice"), got
            assert watcher.execute("SELECT state, query FROM sys.connections WHERE pid = %s",
                                   (pid,)).fetchone() == ("active", "SELECT pg_sleep(2)")
        finally:
            t.join()
        # idle: the last statement stays, the transaction is over
        got = wait_for(lambda: activity(watcher, pid), lambda r: r[0] == "idle")
        assert got == ("idle", "SELECT pg_sleep(2)", True, False, "client backend",
                       "sluice", "sluice"), got
        assert watcher.execute("SELECT state_change >= query_start, application_name "
                               "FROM pg_stat_activity WHERE pid = %s",
                               (pid,)).fetchone() == (True, "sleeper")


def test_transaction_states(server):
    with connect(server) as watcher, connect(server) as s:
        pid = s.info.backend_pid
        s.execute("BEGIN")
        s.execute("SELECT 1")
        assert activity(watcher, pid)[:4] == ("idle in transaction", "SELECT 1", True, True)
        with pytest.raises(psycopg.errors.DivisionByZero):
            s.execute("SELECT 1 / 0")
        assert activity(watcher, pid)[:4] == ("idle in transaction (aborted)", "SELECT 1 / 0",
                                              True, True)
        s.execute("ROLLBACK")
        assert activity(watcher, pid)[:4] == ("idle", "ROLLBACK", True, False)
        # the extended protocol: the prepared statement's text
        assert s.execute("SELECT %s::int + 1", (41,)).fetchone() == (42,)
        assert activity(watcher, pid)[:2] == ("idle", "SELECT $1::int + 1")
        # a long text: its first 1024 bytes (track_activity_query_size), and
        # a multi-MB INSERT is not lexed whole to find them
        s.execute("CREATE TABLE wide (k INT PRIMARY KEY, v TEXT)")
        rows = ", ".join(f"({i}, 'é{i}')" for i in range(200000))
        s.execute("INSERT INTO wide VALUES " + rows)
        q = activity(watcher, pid)[1]
        want = ("INSERT INTO wide VALUES " + rows).encode()[:1024]
        assert q == want.decode(errors="ignore"), q
        assert s.execute("SELECT count(*) FROM wide").fetchone() == (200000,)


def test_other_roles_see_insufficient_privilege(server):
    with connect(server) as su:
        su.execute("CREATE ROLE plain_a LOGIN")
        su.execute("CREATE ROLE plain_b LOGIN")
        su_pid = su.info.backend_pid
        with connect(server, user="plain_a") as a, connect(server, user="plain_b") as b:
            b.execute("SELECT 'b secret data'")
            b_pid = b.info.backend_pid
            rows = a.execute("SELECT pid, usename, datname, query, state, client_addr, "
                             "client_port, backend_start, query_start, state_change, "
                             "xact_start, backend_type FROM pg_stat_activity "
                             "ORDER BY pid").fetchall()
            by_pid = {r[0]: r for r in rows}
            # PostgreSQL 15's pg_stat_get_activity for a session it may not see
            hidden = ("<insufficient privilege>", None, None, None, None, None, None, None,
                      None)
            assert by_pid[su_pid][1:3] == ("sluice", "sluice")
            assert by_pid[su_pid][3:] == hidden
            assert by_pid[b_pid][1:3] == ("plain_b", "sluice")
            assert by_pid[b_pid][3:] == hidden
            own = by_pid[a.info.backend_pid]
            assert own[1] == "plain_a" and own[3].startswith("SELECT pid, usename")
            assert own[4] == "active" and own[5] == "127.0.0.1" and own[6] > 0
            assert a.execute("SELECT query, state, client_addr FROM sys.connections "
                             "WHERE pid = %s", (b_pid,)).fetchone() == \
                ("<insufficient privilege>", None, None)
            # a superuser sees everyone's
            assert su.execute("SELECT query, state FROM pg_stat_activity WHERE pid = %s",
                              (b_pid,)).fetchone() == ("SELECT 'b secret data'", "idle")
            assert su.execute("SELECT query FROM sys.connections WHERE pid = %s",
                              (b_pid,)).fetchone() == ("SELECT 'b secret data'",)


def test_passwords_never_show(server):
    with connect(server) as su, connect(server) as watcher:
        pid = su.info.backend_pid
        su.execute("CREATE ROLE carol LOGIN PASSWORD 'hunter2-create'")
        q = watcher.execute("SELECT query FROM pg_stat_activity WHERE pid = %s",
                            (pid,)).fetchone()[0]
        assert q == "CREATE ROLE carol LOGIN PASSWORD '********'"
        su.execute("ALTER ROLE carol WITH ENCRYPTED PASSWORD 'hunter2-alter'")
        q = watcher.execute("SELECT query FROM sys.connections WHERE pid = %s",
                            (pid,)).fetchone()[0]
        assert q == "ALTER ROLE carol WITH ENCRYPTED PASSWORD '********'"
        su.execute("CREATE STREAM k1 (x INT) WITH (connector = 'kafka', topic = 't', "
                   "bootstrap_servers = '127.0.0.1:1', format = 'json', "
                   "\"kafka.sasl.password\" = 'hunter2-kafka')")
        q = watcher.execute("SELECT query FROM pg_stat_activity WHERE pid = %s",
                            (pid,)).fetchone()[0]
        assert "hunter2" not in q and "'********'" in q, q
        su.execute("SET log_min_duration_statement = 0")
        su.execute("ALTER ROLE carol PASSWORD 'hunter2-logged'")
    log = wait_for(lambda: server.log_text(), lambda t: "ALTER ROLE carol PASSWORD" in t)
    assert "ALTER ROLE carol PASSWORD '********'" in log
    assert "hunter2" not in log


def log_lines(server, msg):
    return [ln for ln in server.log_text().splitlines() if f'msg="{msg}"' in ln]


def test_log_ddl_slow_statements_and_session_end(sluiced):
    server = sluiced("--log-min-duration-statement=1500")
    with connect(server) as c:
        pid = c.info.backend_pid
        assert c.execute("SHOW log_min_duration_statement").fetchone() == ("1500ms",)
        c.execute("SELECT pg_sleep(0.01)")
        c.execute("SELECT pg_sleep(1.6)")
        c.execute("CREATE STREAM logged_s (x INT)")
        c.execute("SELECT count(*) FROM logged_s")
        c.execute("CREATE ROLE dave LOGIN")
        # a plain role may not change it (PostgreSQL's PGC_SUSET)
        with connect(server, user="dave") as d:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                d.execute("SET log_min_duration_statement = 0")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                d.execute("SELECT set_config('log_min_duration_statement', '-1', false)")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                d.execute("RESET log_min_duration_statement")
            assert d.execute("SHOW log_min_duration_statement").fetchone() == ("1500ms",)
            d_pid = d.info.backend_pid
        c.execute("SET log_min_duration_statement = -1")
        c.execute("SELECT pg_sleep(1.6) AS not_logged")
        c.execute("SET log_min_duration_statement = 0")
        c.execute("SELECT 'every statement'")
    ends = wait_for(lambda: log_lines(server, "session ended"),
                    lambda ls: any(f"pid={pid} " in ln for ln in ls))
    mine = [ln for ln in ends if f"pid={pid} " in ln]
    assert len(mine) == 1 and re.search(r'user="sluice" database="sluice" .*'
                                        r"duration=\d+:\d\d:\d\d\.\d\d\d", mine[0]), mine
    assert any(f"pid={d_pid} " in ln and 'user="dave"' in ln for ln in ends), ends

    slow = [ln for ln in log_lines(server, "duration") if f"pid={pid} " in ln]
    texts = [re.search(r'statement="(.*)"$', ln).group(1) for ln in slow]
    # the SET that turns it on is logged too (it ends under the new value,
    # as in PostgreSQL)
    assert texts == ["SELECT pg_sleep(1.6)", "SET log_min_duration_statement = 0",
                     "SELECT 'every statement'"], slow
    ms = float(re.search(r"duration_ms=([0-9.]+)", slow[0]).group(1))
    assert ms >= 1500, slow[0]

    ddl = [ln for ln in log_lines(server, "statement") if "kind=ddl" in ln]
    texts = [re.search(r'statement="(.*)"$', ln).group(1) for ln in ddl]
    assert texts == ["CREATE STREAM logged_s (x INT)", "CREATE ROLE dave LOGIN"], ddl
    assert all('user="sluice"' in ln for ln in ddl)


def test_log_min_duration_statement_off_by_default(server):
    with connect(server) as c:
        assert c.execute("SHOW log_min_duration_statement").fetchone() == ("-1",)
        c.execute("SELECT pg_sleep(0.2)")
        c.execute("SET log_min_duration_statement = '100ms'")
        assert c.execute("SHOW log_min_duration_statement").fetchone() == ("100ms",)
        c.execute("SELECT pg_sleep(0.2) AS logged")
        c.execute("RESET log_min_duration_statement")
        assert c.execute("SHOW log_min_duration_statement").fetchone() == ("-1",)
    lines = wait_for(lambda: log_lines(server, "duration"), lambda ls: len(ls) >= 1)
    texts = [re.search(r'statement="(.*)"$', ln).group(1) for ln in lines]
    assert texts[0] == "SELECT pg_sleep(0.2) AS logged", lines
    assert "SELECT pg_sleep(0.2)" not in texts


def test_copy_to_progress_while_it_runs(server):
    """A COPY ... TO STDOUT of about 40 MB read slowly: while the client
    holds off, another session sees its pg_stat_progress_copy row (COPY TO,
    PIPE, the stream's oid, bytes and rows sent so far, fewer than all),
    the bytes grow as the client reads on, the row is gone after the end,
    and every row arrived once.  COPY (query) shows relid 0.  Meanwhile the
    loop is free: the watcher's statements are answered."""
    n, pad = 300_000, "y" * 120
    with connect(server) as watcher, connect(server) as loader:
        loader.execute("CREATE STREAM big (i INT8, s TEXT)")
        with loader.cursor().copy("COPY big FROM STDIN (FORMAT csv)") as cp:
            for first in range(0, n, 50_000):
                cp.write("".join(f"{i},{pad}\n" for i in range(first, first + 50_000)))
        relid = watcher.execute("SELECT oid FROM pg_class WHERE relname = 'big'").fetchone()[0]
        pid = loader.info.backend_pid
        progress = ("SELECT relid, command, type, bytes_processed, bytes_total, "
                    "tuples_processed, tuples_excluded FROM pg_stat_progress_copy "
                    "WHERE pid = %s")
        lines, seen = 0, []
        with loader.cursor().copy("COPY big TO STDOUT") as cp:
            chunks = iter(cp)
            got = 0
            for rounds in range(3):
                row = wait_for(lambda: watcher.execute(progress, (pid,)).fetchone(),
                               lambda r: r is not None and r[3] > got)
                assert row is not None and row[:3] == (relid, "COPY TO", "PIPE"), row
                assert row[4] == 0 and row[6] == 0 and 0 < row[5] < n, row
                assert got < row[3] < n * (len(pad) + 8), row
                seen.append(row[3])
                got = row[3]
                act = watcher.execute("SELECT state, query FROM pg_stat_activity "
                                      "WHERE pid = %s", (pid,)).fetchone()
                assert act == ("active", "COPY big TO STDOUT")
                # the client reads 4 MB more
                read = 0
                while read < 4 * 1024 * 1024:
                    chunk = bytes(next(chunks))
                    read += len(chunk)
                    lines += chunk.count(b"\n")
            for chunk in chunks:
                lines += bytes(chunk).count(b"\n")
        assert lines == n
        assert seen == sorted(seen) and len(set(seen)) == 3, seen
        assert watcher.execute("SELECT count(*) FROM pg_stat_progress_copy WHERE pid = %s",
                               (pid,)).fetchone() == (0,)
        # 35 MB: more than the output buffer, so it waits for the client
        with loader.cursor().copy("COPY (SELECT i, s FROM big WHERE i < 270000) TO STDOUT") \
                as cp:
            chunks = iter(cp)
            first = bytes(next(chunks))
            row = wait_for(lambda: watcher.execute(progress, (pid,)).fetchone(),
                           lambda r: r is not None)
            assert row is not None and row[:3] == (0, "COPY TO", "PIPE"), row
            rest = b"".join(bytes(c) for c in chunks)
        assert (first + rest).count(b"\n") == 270_000


def test_copy_progress_while_it_runs(server):
    """A COPY FROM STDIN of a few MB sent in pieces with pauses: between
    pieces another session reads pg_stat_progress_copy and sees the bytes
    and rows grow; afterwards the row is gone and the rows are all there."""
    with connect(server) as watcher, connect(server) as loader:
        loader.execute("CREATE STREAM bulk (i INT8, s TEXT)")
        relid = watcher.execute("SELECT oid FROM pg_class WHERE relname = 'bulk'").fetchone()[0]
        pid = loader.info.backend_pid
        pad = "x" * 90
        piece_rows = 10000
        sent_bytes = sent_rows = 0
        seen = []
        with loader.cursor().copy("COPY bulk FROM STDIN (FORMAT csv)") as cp:
            for piece in range(4):
                data = "".join(f"{piece * piece_rows + i},{pad}\n"
                               for i in range(piece_rows)).encode()
                cp.write(data)
                loader.pgconn.flush()
                sent_bytes += len(data)
                sent_rows += piece_rows
                # psycopg and libpq may hold the piece's last few kB back
                row = wait_for(
                    lambda: watcher.execute(
                        "SELECT relid, command, type, bytes_processed, bytes_total, "
                        "tuples_processed, tuples_excluded, datname "
                        "FROM pg_stat_progress_copy WHERE pid = %s", (pid,)).fetchone(),
                    lambda r: r is not None and r[3] >= sent_bytes - 256 * 1024)
                assert row is not None and row[3] >= sent_bytes - 256 * 1024, (piece, row)
                assert row[:3] == (relid, "COPY FROM", "PIPE") and row[4] == 0
                assert row[6] == 0 and row[7] == "sluice"
                assert row[3] <= sent_bytes and 0 < row[5] <= sent_rows, (piece, row)
                seen.append(row[3])
                act = watcher.execute("SELECT state, query FROM pg_stat_activity "
                                      "WHERE pid = %s", (pid,)).fetchone()
                assert act == ("active", "COPY bulk FROM STDIN (FORMAT csv)")
        assert seen == sorted(seen) and len(set(seen)) == 4, seen
        assert watcher.execute("SELECT count(*) FROM pg_stat_progress_copy WHERE pid = %s",
                               (pid,)).fetchone() == (0,)
        assert watcher.execute("SELECT count(*), count(DISTINCT i) FROM bulk").fetchone() == \
            (sent_rows, sent_rows)
        assert sent_bytes > 3 * 1024 * 1024
        # another role sees the row but not what it copies
        watcher.execute("CREATE ROLE plain_c LOGIN")
        with connect(server, user="plain_c") as p, loader.cursor().copy(
                "COPY bulk FROM STDIN (FORMAT csv)") as cp:
            cp.write(b"1,a\n2,b\n")
            loader.pgconn.flush()
            row = wait_for(lambda: p.execute("SELECT pid, datname, relid, command, "
                                             "bytes_processed FROM pg_stat_progress_copy"
                                             ).fetchone(),
                           lambda r: r is not None)
            assert row == (pid, "sluice", None, None, None)
