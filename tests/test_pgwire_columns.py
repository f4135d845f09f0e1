"""The column count of a result (issue 19, item 24).

A SELECT with no columns (`SELECT`, `SELECT --x`, `SELECT FROM t`) returns
rows of zero fields: RowDescription with 0 fields comes first, as from
PostgreSQL, never a DataRow without one (psycopg raised DatabaseError).
Describe of such a statement or portal gives that RowDescription, and a
statement that returns no rows still gives NoData.

RowDescription counts its fields in 16 bits: a select list (after *
expansion) or a VALUES row past PostgreSQL's 1,664 entries is refused with
54011 too_many_columns, as is a table or stream of more than 1,600
columns, instead of an overflowing count.
"""

import struct

import psycopg
import pytest

from pgwire_raw import Raw, bind, describe, error_fields, execute, parse, query, sync
from test_continuous_queries import connect


def field_count(body):
    return struct.unpack("!h", body[:2])[0]


@pytest.mark.parametrize("sql,n", [("SELECT", 1), ("SELECT --x", 1), ("SELECT;", 1),
                                   ("SELECT FROM generate_series(1, 3)", 3),
                                   ("SELECT WHERE false", 0)])
def test_select_without_columns_psycopg(server, sql, n):
    with connect(server) as c:
        cur = c.execute(sql)
        assert cur.description == []
        assert cur.fetchall() == [()] * n
        assert cur.statusmessage == f"SELECT {n}"


def test_select_without_columns_simple_and_extended(server):
    with Raw(server.port) as raw:
        raw.startup()
        raw.send(query("SELECT"))
        msgs = raw.until_ready()
        assert [m[0] for m in msgs] == [b"T", b"D", b"C", b"Z"]
        assert field_count(msgs[0][1]) == 0 and field_count(msgs[1][1]) == 0
        assert msgs[2][1] == b"SELECT 1\x00"
        # Extended: Describe of the statement and of the portal.
        raw.send(parse("SELECT FROM generate_series(1, 2)", "s0"), describe(b"S", "s0"),
                 bind(stmt="s0"), describe(b"P"), execute(), sync())
        msgs = raw.until_ready()
        assert [m[0] for m in msgs] == [b"1", b"t", b"T", b"2", b"T", b"D", b"D", b"C", b"Z"]
        assert field_count(msgs[2][1]) == 0 and field_count(msgs[4][1]) == 0
        # A statement without rows still answers Describe with NoData.
        raw.send(query("CREATE TABLE t (a int PRIMARY KEY)"))
        assert raw.until_ready()[-1][0] == b"Z"
        raw.send(parse("INSERT INTO t VALUES (1)", "s1"), describe(b"S", "s1"),
                 bind(stmt="s1"), describe(b"P"), execute(), sync())
        assert [m[0] for m in raw.until_ready()] == [b"1", b"t", b"n", b"2", b"n", b"C", b"Z"]


def select_list(n):
    return "SELECT " + ", ".join(f"{i} AS c{i}" for i in range(n))


def test_result_of_1664_columns_and_no_more(server):
    with connect(server) as c:
        cur = c.execute(select_list(1664))
        assert len(cur.description) == 1664 and cur.fetchone() == tuple(range(1664))
        for sql in (select_list(1665), select_list(100_000),
                    "VALUES (" + ", ".join(["1"] * 1665) + ")",
                    "SELECT * FROM (VALUES (" + ", ".join(["1"] * 100_000) + ")) v"):
            with pytest.raises(psycopg.errors.TooManyColumns) as e:
                c.execute(sql)
            assert e.value.diag.message_primary == \
                "target lists can have at most 1664 entries"
        # * expanded past the limit: two copies of an 833-column table.
        c.execute("CREATE TABLE w (" + ", ".join(f"c{i} int" for i in range(833)) +
                  ", PRIMARY KEY (c0))")
        assert len(c.execute("SELECT * FROM w").description) == 833
        with pytest.raises(psycopg.errors.TooManyColumns):
            c.execute("SELECT *, * FROM w")
        with pytest.raises(psycopg.errors.TooManyColumns):
            c.execute("SELECT * FROM w a, w b")
        assert c.execute("SELECT 1").fetchone() == (1,)


def test_relations_of_1600_columns_and_no_more(server):
    with connect(server) as c:
        c.execute("CREATE STREAM s1600 (" + ", ".join(f"c{i} int" for i in range(1600)) + ")")
        with pytest.raises(psycopg.errors.TooManyColumns) as e:
            c.execute("CREATE STREAM s1601 (" +
                      ", ".join(f"c{i} int" for i in range(1601)) + ")")
        assert e.value.diag.message_primary == "streams can have at most 1600 columns"
        with pytest.raises(psycopg.errors.TooManyColumns) as e:
            c.execute("CREATE TABLE t40k (" +
                      ", ".join(f"c{i} int" for i in range(40_000)) + ", PRIMARY KEY (c0))")
        assert e.value.diag.message_primary == "tables can have at most 1600 columns"


def test_too_many_columns_over_the_simple_protocol(server):
    with Raw(server.port) as raw:
        raw.startup()
        raw.send(query(select_list(100_000)))
        msgs = raw.until_ready()
        assert [m[0] for m in msgs] == [b"E", b"Z"]
        assert error_fields(msgs[0][1])["C"] == "54011"
