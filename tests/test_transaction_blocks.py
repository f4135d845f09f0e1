"""Atomic transaction blocks (issue 22, deliverable 1): the writes of
BEGIN ... COMMIT are buffered per session (src/state/txbuf.c) and written in
one durable write at COMMIT (src/runtime/append.c's rt_xact_commit).

Checked as PostgreSQL 15 behaves (READ COMMITTED): other sessions never see
uncommitted rows; ROLLBACK, an error inside the block (COMMIT then rolls
back), a disconnect and a crash discard the block; the block reads its own
writes.  Where sluice differs, as docs/sql-reference.md ("Transactions")
says: a key conflict with a row another session committed meanwhile fails
the later COMMIT (23505 for a key both inserted, 40001 for a row changed
under the block), DDL and COPY FROM are refused inside a block.

Each case runs over the simple protocol (psycopg's ClientCursor) and the
extended one (its default cursor), on one server shared by the module; the
crash cases start their own.
"""

import signal
import time

import psycopg
import pytest

from pgwire_raw import Raw, bind, data_row, execute, parse, sync

PROTOCOLS = ["simple", "extended"]


@pytest.fixture(scope="module")
def srv(sluiced_module):
    return sluiced_module()


def connect(server, protocol, autocommit=True):
    kw = {"cursor_factory": psycopg.ClientCursor} if protocol == "simple" else {}
    return psycopg.connect(server.dsn, autocommit=autocommit, **kw)


def rows(c, sql):
    return c.execute(sql).fetchall()


def fresh_table(c, name, pk=True):
    c.execute(f"DROP TABLE IF EXISTS {name}")
    key = " PRIMARY KEY" if pk else ""
    c.execute(f"CREATE TABLE {name} (id int{key}, t text)")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_rollback_discards_the_block(srv, protocol):
    with connect(srv, protocol) as c:
        fresh_table(c, f"rb_{protocol}")
        c.execute(f"INSERT INTO rb_{protocol} VALUES (1, 'a')")
        c.execute("BEGIN")
        c.execute(f"INSERT INTO rb_{protocol} VALUES (99, 'x')")
        c.execute(f"UPDATE rb_{protocol} SET t = 'changed' WHERE id = 1")
        c.execute(f"DELETE FROM rb_{protocol} WHERE id = 1")
        c.execute("ROLLBACK")
        assert rows(c, f"SELECT * FROM rb_{protocol}") == [(1, "a")]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_uncommitted_rows_are_invisible_to_other_sessions(srv, protocol):
    table = f"iso_{protocol}"
    with connect(srv, protocol) as a, connect(srv, protocol) as b:
        fresh_table(a, table)
        a.execute(f"INSERT INTO {table} VALUES (1, 'old')")
        a.execute("BEGIN")
        a.execute(f"INSERT INTO {table} VALUES (2, 'new')")
        a.execute(f"UPDATE {table} SET t = 'upd' WHERE id = 1")
        assert rows(b, f"SELECT * FROM {table} ORDER BY id") == [(1, "old")]
        assert rows(a, f"SELECT * FROM {table} ORDER BY id") == [(1, "upd"), (2, "new")]
        a.execute("COMMIT")
        assert rows(b, f"SELECT * FROM {table} ORDER BY id") == [(1, "upd"), (2, "new")]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_error_inside_the_block_discards_earlier_writes(srv, protocol):
    table = f"err_{protocol}"
    with connect(srv, protocol) as c:
        fresh_table(c, table)
        c.execute(f"INSERT INTO {table} VALUES (1, 'a')")
        c.execute("BEGIN")
        c.execute(f"INSERT INTO {table} VALUES (2, 'b')")
        with pytest.raises(psycopg.errors.UniqueViolation):
            c.execute(f"INSERT INTO {table} VALUES (1, 'dup')")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            c.execute(f"INSERT INTO {table} VALUES (3, 'c')")
        c.execute("COMMIT")     # a failed block's COMMIT rolls back
        assert rows(c, f"SELECT * FROM {table}") == [(1, "a")]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_block_reads_its_own_writes(srv, protocol):
    table = f"ryw_{protocol}"
    with connect(srv, protocol) as c:
        fresh_table(c, table)
        c.execute(f"INSERT INTO {table} VALUES (1, 'a'), (3, 'c')")
        c.execute("BEGIN")
        c.execute(f"INSERT INTO {table} VALUES (2, 'b'), (4, 'd')")
        # key order, committed and buffered rows merged
        assert rows(c, f"SELECT id, t FROM {table}") == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
        assert rows(c, f"UPDATE {table} SET t = t || '!' WHERE id % 2 = 0 RETURNING id, t") \
            == [(2, "b!"), (4, "d!")]
        assert rows(c, f"DELETE FROM {table} WHERE id = 4 RETURNING t") == [("d!",)]
        # a key the block deleted may be inserted again; one it inserted may not
        c.execute(f"DELETE FROM {table} WHERE id = 1")
        c.execute(f"INSERT INTO {table} VALUES (1, 'again')")
        with pytest.raises(psycopg.errors.UniqueViolation):
            c.execute(f"INSERT INTO {table} VALUES (2, 'dup')")
        c.execute("ROLLBACK")
        c.execute("BEGIN")
        c.execute(f"INSERT INTO {table} VALUES (2, 'b')")
        c.execute(f"UPDATE {table} SET id = id + 10")
        assert rows(c, f"SELECT count(*), sum(id) FROM {table}") == [(3, 36)]
        c.execute(f"INSERT INTO {table} VALUES (1, 'new') ON CONFLICT (id) DO NOTHING")
        c.execute("COMMIT")
        assert rows(c, f"SELECT * FROM {table}") == [(1, "new"), (11, "a"), (12, "b"), (13, "c")]


def test_a_table_without_a_primary_key(srv):
    with connect(srv, "extended") as c:
        fresh_table(c, "nopk", pk=False)
        c.execute("INSERT INTO nopk VALUES (1, 'a'), (1, 'a')")
        c.execute("BEGIN")
        c.execute("INSERT INTO nopk VALUES (1, 'a')")
        c.execute("DELETE FROM nopk WHERE t = 'a' AND id = 1")
        assert rows(c, "SELECT count(*) FROM nopk") == [(0,)]
        c.execute("INSERT INTO nopk VALUES (2, 'b')")
        c.execute("COMMIT")
        assert rows(c, "SELECT * FROM nopk") == [(2, "b")]
        c.execute("BEGIN")
        c.execute("UPDATE nopk SET id = 3")
        c.execute("INSERT INTO nopk VALUES (4, 'd')")
        assert rows(c, "SELECT * FROM nopk ORDER BY id") == [(3, "b"), (4, "d")]
        c.execute("ROLLBACK")
        assert rows(c, "SELECT * FROM nopk") == [(2, "b")]


def test_first_committer_wins(srv):
    with connect(srv, "extended") as a, connect(srv, "extended") as b:
        fresh_table(a, "fcw")
        a.execute("INSERT INTO fcw VALUES (1, 'a')")
        # Both insert key 5: the later COMMIT is 23505, as PostgreSQL's
        # READ COMMITTED reports once the first inserter commits.
        a.execute("BEGIN")
        b.execute("BEGIN")
        a.execute("INSERT INTO fcw VALUES (5, 'from a')")
        b.execute("INSERT INTO fcw VALUES (5, 'from b')")
        a.execute("COMMIT")
        with pytest.raises(psycopg.errors.UniqueViolation) as e:
            b.execute("COMMIT")
        assert e.value.diag.message_detail == "Key (id)=(5) already exists."
        assert b.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        # Both change row 1: the later COMMIT is 40001, nothing of it stays.
        a.execute("BEGIN")
        b.execute("BEGIN")
        a.execute("UPDATE fcw SET t = 'by a' WHERE id = 1")
        b.execute("UPDATE fcw SET t = 'by b' WHERE id = 1")
        b.execute("INSERT INTO fcw VALUES (6, 'from b')")
        a.execute("COMMIT")
        with pytest.raises(psycopg.errors.SerializationFailure):
            b.execute("COMMIT")
        # A key committed before the block's INSERT fails at the statement.
        b.execute("BEGIN")
        with pytest.raises(psycopg.errors.UniqueViolation):
            b.execute("INSERT INTO fcw VALUES (5, 'late')")
        b.execute("ROLLBACK")
        assert rows(a, "SELECT * FROM fcw") == [(1, "by a"), (5, "from a")]


def test_a_relation_dropped_under_the_block_fails_its_commit(srv):
    with connect(srv, "extended") as a, connect(srv, "extended") as b:
        fresh_table(a, "dropped")
        a.execute("BEGIN")
        a.execute("INSERT INTO dropped VALUES (1, 'a')")
        b.execute("DROP TABLE dropped")
        b.execute("CREATE TABLE dropped (id int PRIMARY KEY, t text)")
        with pytest.raises(psycopg.errors.SerializationFailure):
            a.execute("COMMIT")
        assert rows(b, "SELECT count(*) FROM dropped") == [(0,)]


def test_a_portal_suspended_in_a_block_reads_committed_rows_after_it(srv):
    """A portal suspended inside a block and run on after its COMMIT (in
    the same pipeline, the block's buffer gone) gives the block's rows,
    committed by then."""
    with connect(srv, "extended") as c:
        fresh_table(c, "susp")
    with Raw(srv.port) as raw:
        assert raw.startup()[-1] == (b"Z", b"I")
        raw.send(parse("BEGIN"), bind(), execute(),
                 parse("INSERT INTO susp VALUES (1, 'a'), (2, 'b')"), bind(), execute(),
                 parse("SELECT (SELECT count(*) FROM susp WHERE susp.id <= g.i) "
                       "FROM generate_series(1, 4) AS g(i)", name="q"),
                 bind(portal="p", stmt="q"), execute("p", maxrows=1),
                 parse("COMMIT"), bind(), execute(),
                 execute("p"), sync())
        out = raw.until_ready()
        got = [data_row(body)[0] for kind, body in out if kind == b"D"]
        assert got == [b"1", b"2", b"2", b"2"], out
        assert out[-1] == (b"Z", b"I")
    with connect(srv, "extended") as c:
        assert rows(c, "SELECT count(*) FROM susp") == [(2,)]


def test_a_disconnect_discards_the_block(srv):
    with connect(srv, "simple") as c:
        fresh_table(c, "disc")
    c = connect(srv, "simple")
    c.execute("BEGIN")
    c.execute("INSERT INTO disc VALUES (1, 'gone')")
    c.close()
    with connect(srv, "simple") as c:
        assert rows(c, "SELECT count(*) FROM disc") == [(0,)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_statements_that_cannot_take_part_are_refused(srv, protocol):
    with connect(srv, protocol) as c:
        fresh_table(c, f"ddl_{protocol}")
        c.execute(f"CREATE STREAM IF NOT EXISTS ddl_s_{protocol} (x int)")
        for sql in (f"CREATE TABLE ddl_new_{protocol} (a int)",
                    f"DROP TABLE ddl_{protocol}",
                    f"CREATE CONTINUOUS QUERY ddl_q_{protocol} AS SELECT x FROM ddl_s_{protocol}",
                    f"CREATE ROLE ddl_r_{protocol}",
                    f"GRANT SELECT ON ddl_{protocol} TO PUBLIC"):
            c.execute("BEGIN")
            c.execute(f"INSERT INTO ddl_{protocol} VALUES (1, 'a')")
            with pytest.raises(psycopg.errors.ActiveSqlTransaction) as e:
                c.execute(sql)
            assert "cannot run inside a transaction block" in str(e.value)
            c.execute("ROLLBACK")
        c.execute("BEGIN")
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            with c.cursor().copy(f"COPY ddl_{protocol} FROM STDIN") as cp:
                cp.write_row((2, "b"))
        c.execute("ROLLBACK")
        # a savepoint is kept, but the block's writes after it cannot be
        # undone alone (sql-tests/savepoints.slt)
        c.execute("BEGIN")
        c.execute("SAVEPOINT s1")
        c.execute(f"INSERT INTO ddl_{protocol} VALUES (3, 'c')")
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            c.execute("ROLLBACK TO SAVEPOINT s1")
        c.execute("ROLLBACK")
        assert rows(c, f"SELECT count(*) FROM ddl_{protocol}") == [(0,)]
        assert rows(c, "SELECT count(*) FROM pg_catalog.pg_class "
                       f"WHERE relname = 'ddl_new_{protocol}'") == [(0,)]


def test_buffered_writes_count_against_statement_mem(srv):
    with connect(srv, "extended") as c:
        fresh_table(c, "mem")
        c.execute("SET statement_mem = '1MB'")
        c.execute("BEGIN")
        # each statement is well under 1 MB; together they pass it
        with pytest.raises(psycopg.errors.OutOfMemory) as e:
            for i in range(8):
                c.execute("INSERT INTO mem SELECT g, repeat('x', 1000) "
                          "FROM generate_series(%s::int, %s::int) g", (i * 200, i * 200 + 199))
        assert "statement_mem" in str(e.value)
        c.execute("ROLLBACK")
        c.execute("RESET statement_mem")
        assert rows(c, "SELECT count(*) FROM mem") == [(0,)]


def wait_for(fn, want, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        got = fn()
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_stream_appends_reach_a_query_only_after_commit_once(srv, protocol):
    s, q = f"xs_{protocol}", f"xq_{protocol}"
    with connect(srv, protocol) as c:
        c.execute(f"CREATE STREAM {s} (k int, v int)")
        c.execute(f"CREATE CONTINUOUS QUERY {q} WITH (trigger = '0', output_mode = 'append') "
                  f"AS SELECT k, v FROM {s}")
        c.execute("BEGIN")
        c.execute(f"INSERT INTO {s} VALUES (1, 10), (1, 11)")
        c.execute(f"INSERT INTO {s} VALUES (1, 12)")
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            c.execute(f"SELECT count(*) FROM {s}")
        c.execute("ROLLBACK")
        c.execute("BEGIN")
        c.execute(f"INSERT INTO {s} VALUES (2, 20), (2, 21)")
        with connect(srv, protocol) as other:
            # a row committed after the block's: once the query has it,
            # it has read everything committed before
            other.execute(f"INSERT INTO {s} VALUES (0, 0)")
            assert wait_for(lambda: rows(other, f"SELECT k, v FROM {q} ORDER BY v"),
                            [(0, 0)]) == [(0, 0)]
        c.execute(f"INSERT INTO {s} VALUES (2, 22)")
        c.execute("COMMIT")
        want = [(0, 0), (2, 20), (2, 21), (2, 22)]
        assert wait_for(lambda: rows(c, f"SELECT k, v FROM {q} ORDER BY v"), want) == want
        assert rows(c, f"SELECT count(*) FROM {s}") == [(4,)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_copy_into_a_stream_is_part_of_the_block(srv, protocol):
    s = f"cs_{protocol}"
    with connect(srv, protocol) as c:
        c.execute(f"CREATE STREAM {s} (k int, t text)")
        # 8 MB: parts of 1 MB, so this COPY of 2.5 MB fills parts, which
        # go to the block, not to the stream
        c.execute("SET statement_mem = '8MB'")
        c.execute("BEGIN")
        with c.cursor().copy(f"COPY {s} FROM STDIN") as cp:
            for i in range(50000):
                cp.write_row((i, "x" * 40))
        with connect(srv, protocol) as other:
            assert rows(other, f"SELECT count(*) FROM {s}") == [(0,)]
        c.execute("ROLLBACK")
        c.execute("RESET statement_mem")
        assert rows(c, f"SELECT count(*) FROM {s}") == [(0,)]
        c.execute("BEGIN")
        with c.cursor().copy(f"COPY {s} (t, k) FROM STDIN") as cp:
            cp.write_row(("a", 1))
        with c.cursor().copy(f"COPY {s} FROM STDIN") as cp:
            for i in range(3000):
                cp.write_row((i, "y"))
        with connect(srv, protocol) as other:
            assert rows(other, f"SELECT count(*) FROM {s}") == [(0,)]
        c.execute("COMMIT")
        assert rows(c, f"SELECT count(*), sum(k) FROM {s}") == [(3001, 1 + 2999 * 3000 // 2)]


def test_a_block_over_a_table_and_a_stream_commits_as_one(srv):
    with connect(srv, "extended") as c:
        fresh_table(c, "both_t")
        c.execute("CREATE STREAM both_s (x int)")
        c.execute("BEGIN")
        c.execute("INSERT INTO both_s VALUES (1)")
        c.execute("INSERT INTO both_t VALUES (1, 'a')")
        assert rows(c, "INSERT INTO both_s VALUES (2) RETURNING x") == [(2,)]
        c.execute("COMMIT")
        assert rows(c, "SELECT x FROM both_s ORDER BY x") == [(1,), (2,)]
        assert rows(c, "SELECT * FROM both_t") == [(1, "a")]
        # a failing statement takes the stream's rows of the block with it
        c.execute("BEGIN")
        c.execute("INSERT INTO both_s VALUES (3)")
        c.execute("INSERT INTO both_t VALUES (2, 'b')")
        with pytest.raises(psycopg.errors.UniqueViolation):
            c.execute("INSERT INTO both_t VALUES (1, 'dup')")
        c.execute("COMMIT")
        assert rows(c, "SELECT x FROM both_s ORDER BY x") == [(1,), (2,)]
        assert rows(c, "SELECT * FROM both_t") == [(1, "a")]


def test_sigkill_or_shutdown_inside_a_block_and_after_commit(sluiced):
    server = sluiced()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE k (id int PRIMARY KEY, t text)")
        c.execute("CREATE STREAM ks (x int)")
        c.execute("INSERT INTO k VALUES (1, 'committed')")
    # Killed between statements of an open block: nothing of it survives.
    c = psycopg.connect(server.dsn, autocommit=True)
    c.execute("BEGIN")
    c.execute("INSERT INTO k VALUES (2, 'open')")
    c.execute("INSERT INTO ks VALUES (1)")
    c.execute("UPDATE k SET t = 'open' WHERE id = 1")
    server.kill()
    c.close()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert rows(c, "SELECT * FROM k") == [(1, "committed")]
        assert rows(c, "SELECT count(*) FROM ks") == [(0,)]
        # Killed right after COMMIT's acknowledgement: all of it survives.
        c.execute("BEGIN")
        c.execute("INSERT INTO k VALUES (2, 'in block')")
        c.execute("INSERT INTO ks VALUES (1), (2)")
        c.execute("DELETE FROM k WHERE id = 1")
        c.execute("COMMIT")
        server.proc.send_signal(signal.SIGKILL)
    server.kill()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert rows(c, "SELECT * FROM k") == [(2, "in block")]
        assert rows(c, "SELECT x FROM ks ORDER BY x") == [(1,), (2,)]
    # A shutdown (SIGTERM) with a block open: discarded too.
    c = psycopg.connect(server.dsn, autocommit=True)
    c.execute("BEGIN")
    c.execute("INSERT INTO k VALUES (3, 'open at shutdown')")
    c.execute("INSERT INTO ks VALUES (3)")
    assert server.stop() == 0
    c.close()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as c:
        assert rows(c, "SELECT * FROM k") == [(2, "in block")]
        assert rows(c, "SELECT count(*) FROM ks") == [(2,)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_plain_roles_block_is_checked_statement_by_statement(srv, protocol):
    """A block of a plain (non-superuser) role: each statement is checked for
    its privileges as it runs (42501 fails the block, nothing of it is
    written), and a granted role's block commits as one."""
    role, table = f"txu_{protocol}", f"txr_{protocol}"
    with connect(srv, protocol) as su:
        fresh_table(su, table)
        su.execute(f"DROP ROLE IF EXISTS {role}")
        su.execute(f"CREATE ROLE {role} LOGIN")
        su.execute(f"GRANT SELECT ON {table} TO {role}")
        dsn = f"host={srv.host} port={srv.port} user={role} dbname=sluice sslmode=disable"
        kw = {"cursor_factory": psycopg.ClientCursor} if protocol == "simple" else {}
        with psycopg.connect(dsn, autocommit=True, **kw) as u:
            u.execute("BEGIN")
            assert rows(u, f"SELECT count(*) FROM {table}") == [(0,)]
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                u.execute(f"INSERT INTO {table} VALUES (1, 'no')")
            u.execute("ROLLBACK")
            su.execute(f"GRANT INSERT ON {table} TO {role}")
            u.execute("BEGIN")
            u.execute(f"INSERT INTO {table} VALUES (2, 'a'), (3, 'b')")
            assert rows(su, f"SELECT count(*) FROM {table}") == [(0,)]
            u.execute("COMMIT")
        assert rows(su, f"SELECT id, t FROM {table} ORDER BY id") == [(2, "a"), (3, "b")]
