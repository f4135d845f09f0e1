"""DEALLOCATE [PREPARE] name | ALL over the simple protocol: the server drops
the session's named prepared statements, as PostgreSQL does (psycopg 3 sends
DEALLOCATE ALL to reset its cache of prepared statements)."""

import psycopg
import pytest

from pgwire_raw import Raw, error_fields, parse, query, sync


def test_psycopg_prepared_statements_and_deallocate_all(server):
    with psycopg.connect(server.dsn, autocommit=True) as c:
        for i in range(3):
            assert c.execute("SELECT %s::int + 1", (i,), prepare=True).fetchone() == (i + 1,)
        c.execute("DEALLOCATE ALL")
        with pytest.raises(psycopg.errors.InvalidSqlStatementName):
            c.execute("DEALLOCATE nope")
        c.execute("  deallocate  prepare   ALL ;")
        with pytest.raises(psycopg.errors.SyntaxError):
            c.execute("DEALLOCATE")


def test_deallocate_by_name_drops_the_protocol_statement(server):
    with Raw(server.port) as cl:
        cl.startup()
        cl.send(parse("SELECT 1", name="stmt1"), sync())
        assert [m[0] for m in cl.until_ready()] == [b"1", b"Z"]
        cl.send(query("DEALLOCATE stmt1"))
        msgs = cl.until_ready()
        assert (b"C", b"DEALLOCATE\x00") in msgs
        cl.send(query("DEALLOCATE stmt1"))
        errors = [m for m in cl.until_ready() if m[0] == b"E"]
        assert errors and error_fields(errors[0][1])["C"] == "26000"
