"""Transaction statements and DEALLOCATE on the wire: the grammar parses them
(grammar/sql.y) and the session runs them from the parse tree
(src/server/session.c), over the simple and the extended protocol alike.

The status byte of ReadyForQuery through COMMIT / ROLLBACK AND CHAIN,
PostgreSQL's warnings (25001 BEGIN in a block, 25P01 COMMIT outside one),
DEALLOCATE of a protocol-level statement by an Execute (what an extended-
protocol client sends for it), and READ ONLY blocks refusing writes, COPY
FROM included.
"""

import psycopg
import pytest

from pgwire_raw import bind, error_fields, execute, parse, query, sync
from test_pgwire_extended import conn  # noqa: F401 (the raw connection fixture)


def run(conn, *msgs):
    """Sends msgs; returns (status byte, messages up to ReadyForQuery)."""
    conn.send(*msgs)
    out = conn.until_ready()
    return out[-1][1], out


def extended(sql, name=""):
    return (parse(sql, name=name), bind(stmt=name), execute(), sync())


def codes(out, kind):
    return [error_fields(body)["C"] for k, body in out if k == kind]


def tags(out):
    return [body.rstrip(b"\x00").decode() for k, body in out if k == b"C"]


@pytest.mark.parametrize("protocol", ["simple", "extended"])
def test_commit_and_chain_keeps_the_block_open(conn, protocol):
    def stmt(sql):
        return (query(sql),) if protocol == "simple" else extended(sql)

    assert run(conn, *stmt("BEGIN"))[0] == b"T"
    status, out = run(conn, *stmt("COMMIT AND CHAIN"))
    assert status == b"T" and tags(out) == ["COMMIT"]
    status, out = run(conn, *stmt("END WORK AND CHAIN"))
    assert status == b"T" and tags(out) == ["COMMIT"]
    # An error fails the block; ROLLBACK AND CHAIN starts a fresh one.
    assert run(conn, *stmt("SELECT 1/0"))[0] == b"E"
    status, out = run(conn, *stmt("ROLLBACK AND CHAIN"))
    assert status == b"T" and tags(out) == ["ROLLBACK"]
    # COMMIT AND CHAIN of a failed block is a ROLLBACK, and chains too.
    assert run(conn, *stmt("SELECT 1/0"))[0] == b"E"
    status, out = run(conn, *stmt("COMMIT AND CHAIN"))
    assert status == b"T" and tags(out) == ["ROLLBACK"]
    status, out = run(conn, *stmt("commit /* no chain */ and no chain"))
    assert status == b"I" and tags(out) == ["COMMIT"]
    # Outside a block AND CHAIN is an error (25P01), and no block starts.
    status, out = run(conn, *stmt("ABORT AND CHAIN"))
    assert status == b"I" and codes(out, b"E") == ["25P01"]


def test_chain_inside_one_simple_query(conn):
    status, out = run(conn, query("BEGIN; SELECT 1; COMMIT AND CHAIN; SELECT 2"))
    assert status == b"T"
    assert tags(out) == ["BEGIN", "SELECT 1", "COMMIT", "SELECT 1"]
    status, out = run(conn, query("ROLLBACK"))
    assert status == b"I"


def test_warnings_of_misplaced_begin_and_commit(conn):
    status, out = run(conn, query("COMMIT"))
    assert status == b"I" and codes(out, b"N") == ["25P01"] and tags(out) == ["COMMIT"]
    status, out = run(conn, query("ROLLBACK"))
    assert status == b"I" and codes(out, b"N") == ["25P01"] and tags(out) == ["ROLLBACK"]
    assert run(conn, query("BEGIN"))[0] == b"T"
    status, out = run(conn, query("START TRANSACTION"))
    assert status == b"T" and codes(out, b"N") == ["25001"]
    status, out = run(conn, query("COMMIT"))
    assert status == b"I" and codes(out, b"N") == []
    status, out = run(conn, query("SET TRANSACTION READ ONLY"))
    assert status == b"I" and codes(out, b"N") == ["25P01"] and tags(out) == ["SET"]


def test_deallocate_of_a_protocol_statement_by_execute(conn):
    status, out = run(conn, parse("SELECT 1", name="stmt1"), sync())
    assert status == b"I" and codes(out, b"E") == []
    status, out = run(conn, *extended("DEALLOCATE PREPARE stmt1"))
    assert codes(out, b"E") == [] and tags(out) == ["DEALLOCATE"]
    # It is gone: a Bind to it fails with 26000.
    status, out = run(conn, bind(stmt="stmt1"), execute(), sync())
    assert codes(out, b"E") == ["26000"]
    run(conn, parse("SELECT 2", name="stmt2"), sync())
    status, out = run(conn, *extended("DEALLOCATE ALL", name="dealloc"))
    assert codes(out, b"E") == [] and tags(out) == ["DEALLOCATE ALL"]
    status, out = run(conn, bind(stmt="stmt2"), execute(), sync())
    assert codes(out, b"E") == ["26000"]
    status, out = run(conn, *extended("DEALLOCATE stmt2"))
    assert codes(out, b"E") == ["26000"]


def test_deallocate_in_a_failed_block_is_refused(conn):
    run(conn, parse("SELECT 1", name="keep"), sync())
    run(conn, query("BEGIN; SELECT 1/0"))
    status, out = run(conn, query("DEALLOCATE keep"))
    assert status == b"E" and codes(out, b"E") == ["25P02"]
    assert run(conn, query("ROLLBACK"))[0] == b"I"
    status, out = run(conn, bind(stmt="keep"), execute(), sync())
    assert codes(out, b"E") == [] and tags(out) == ["SELECT 1"]


def test_read_only_block_refuses_writes(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE ro (a int)")
        c.execute("BEGIN READ ONLY")
        assert c.execute("SELECT count(*) FROM ro").fetchone() == (0,)
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            with c.cursor().copy("COPY ro FROM STDIN") as cp:
                cp.write_row((1,))
        c.execute("ROLLBACK")
        with c.transaction():
            c.execute("SET TRANSACTION READ ONLY")
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                c.execute("INSERT INTO ro VALUES (1)")
            raise psycopg.Rollback()
        # The next block writes again.
        with c.transaction():
            c.execute("INSERT INTO ro VALUES (2)")
        assert c.execute("SELECT a FROM ro").fetchall() == [(2,)]


def test_psycopg_isolation_levels(server):
    with psycopg.connect(server.dsn) as c:
        c.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        c.read_only = True
        assert c.execute("SELECT 1").fetchone() == (1,)
        c.rollback()
    with psycopg.connect(server.dsn) as c:
        c.isolation_level = psycopg.IsolationLevel.SERIALIZABLE
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            c.execute("SELECT 1")
        assert "SERIALIZABLE" in str(e.value)
